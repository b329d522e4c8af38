"""examples/make_report.py runs as a new user runs it: an evaluation, a report, a figure copy."""

from __future__ import annotations

import subprocess
import sys

from report_helpers import png_size
from testdata import REPO

EXAMPLE = REPO / "examples" / "make_report.py"


def test_make_report_with_a_small_budget(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--games",
            "qbert",
            "--out",
            "r",
            "--figure",
            "per_game",
            "--figure-to",
            "docs/figure.png",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = tmp_path / "r" / "report"
    html = (report / "report.html").read_text()
    assert "qbert" in html and "Rainbow (noop)" in html and "DQN (noop)" in html
    for name in ("per_game", "aggregates", "profile"):
        assert (report / f"{name}.png").exists(), name
    assert not (report / "learning_curves.png").exists()  # a few evaluation episodes: no curve
    copied = tmp_path / "docs" / "figure.png"
    assert copied.read_bytes() == (report / "per_game.png").read_bytes()
    assert png_size(copied)[0] >= 400
    assert "copied per_game.png to docs/figure.png" in done.stdout
