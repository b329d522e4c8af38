"""examples/paper_page.py as a new user runs it: published runs set in a two-column paper."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest
from report_helpers import png_size
from testdata import REPO

EXAMPLE = REPO / "examples" / "paper_page.py"


@pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="needs TeX Live's pdflatex: apt-get install texlive-latex-recommended",
)
def test_the_paper_pages_are_set_and_rendered(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--out", "p", "--to", "docs/pages.png", "--dpi", "50"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    latex = (tmp_path / "p" / "tables.tex").read_text(encoding="utf-8")
    assert "& SPR & CURL &" in latex and "\\resizebox" not in latex  # named as a paper names them
    width, height = png_size(tmp_path / "docs" / "pages.png")
    assert (width, height) == (2 * 425 + 50 // 8, 550)  # two US-letter pages at 50 dpi, a gap
