"""``report --paper`` in a two-column paper: compiled by pdflatex, no text below 7 points.

The paper is ``\\documentclass[twocolumn]{article}`` set as ICML's template sets it (3.25 in
columns), holding what ``report --paper`` wrote: the aggregate and per-game tables (``\\input``
with only the packages they name, and graphicx for the figures) and the four figures of
Agarwal et al. at ``\\columnwidth``. Every character's size is read back from the PDF with
pdfminer (the figures' text included: they are embedded PDF with TrueType fonts), so a table
scaled down or a figure drawn too wide fails here, as it would in print.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from report_helpers import write_log

from arcadebench.cli import main

pytestmark = pytest.mark.skipif(
    shutil.which("pdflatex") is None,
    reason="needs TeX Live's pdflatex: apt-get install texlive-latex-recommended",
)

GAMES = ("pong", "breakout", "qbert", "seaquest", "enduro", "boxing", "freeway", "asterix")
FIGURES = ("aggregates", "profile", "improvement", "sample_efficiency")
SMALLEST = 7.0  # points: conference templates' footnote size; anything smaller is unreadable
PAPER = r"""\documentclass[twocolumn]{article}
\setlength{\textwidth}{6.75in}
\setlength{\columnsep}{0.25in}
\setlength{\oddsidemargin}{-0.125in}
\usepackage{graphicx}
%(packages)s
\begin{document}
\section{Results}
\input{tables.tex}
%(figures)s
\end{document}
"""


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    """``report --paper`` of two SABER learners (8 games, 2 runs, 30 episodes past 10M frames)."""
    root = tmp_path_factory.mktemp("paper")
    for algorithm, slope in (("DQN", 0.5), ("PPO (ε=0.1)", 1.0)):
        for g, game in enumerate(GAMES):
            for run in ("0", "1"):
                returns = [slope * i * (g + 1) + 3.0 * int(run) for i in range(30)]
                write_log(root / algorithm, "saber", algorithm, game, run, returns, 500_000)
    out = root / "out"
    inputs = [str(root / "DQN"), str(root / "PPO (ε=0.1)")]
    assert main(["report", *inputs, "--paper", str(out), "--reps", "200"]) == 0
    figures = "\n".join(
        "\\begin{figure}[t]\\centering\n"
        f"\\includegraphics[width=\\columnwidth]{{{name}.pdf}}\n"
        f"\\caption{{{name.replace('_', ' ')}}}\n\\end{{figure}}"
        for name in FIGURES
    )
    latex = (out / "tables.tex").read_text(encoding="utf-8")
    needs = re.findall(r"\\usepackage\{(\w+)\}", latex.splitlines()[1])
    packages = "\n".join(f"\\usepackage{{{p}}}" for p in needs)
    (out / "paper.tex").write_text(
        PAPER % {"packages": packages, "figures": figures}, encoding="utf-8"
    )
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=out,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return out, done


def test_the_paper_compiles_with_the_packages_the_tables_name(paper):
    out, done = paper
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Overfull \\hbox" not in done.stdout, done.stdout[-3000:]
    assert all((out / f"{name}.pdf").exists() for name in FIGURES)
    assert "\\resizebox" not in (out / "tables.tex").read_text(encoding="utf-8")


def test_no_text_of_the_paper_is_smaller_than_7_points(paper):
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTContainer

    out, done = paper
    assert done.returncode == 0, done.stdout[-3000:]
    sizes: dict[str, list[float]] = {}

    def walk(item, page: int) -> None:
        if isinstance(item, LTChar) and item.get_text().strip():
            a, b = item.matrix[:2]
            size = item.width if abs(b) > abs(a) else item.height  # a rotated axis label
            sizes.setdefault(f"page {page}", []).append(size)
            if size < SMALLEST - 0.05:
                small.append((page, item.get_text(), round(size, 2), item.fontname))
        if isinstance(item, LTContainer):
            for child in item:
                walk(child, page)

    small: list[tuple[int, str, float, str]] = []
    for number, layout in enumerate(extract_pages(out / "paper.pdf"), 1):
        walk(layout, number)
    assert sum(len(v) for v in sizes.values()) > 2000  # the figures' text is read too
    assert not small, f"{len(small)} characters below {SMALLEST} pt, e.g. {small[:10]}"
