"""Tables that paste into a paper: LaTeX that compiles, Markdown, bold, units, other protocols."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import arcadebench
from arcadebench.errors import InvalidArgument

RUNS = {
    "agent_a": {"pong": [1.0, 5.0, -3.0], "qbert": [300.0, 250.0, 900.0]},
    "b & c": {"pong": [2.0, -20.0], "qbert": [1000.0, 1200.0]},  # a name LaTeX must escape
}
DOCUMENT = r"""\documentclass{article}
\usepackage{booktabs}
\usepackage{graphicx}
\begin{document}
%s
\end{document}
"""


@pytest.fixture(scope="module")
def results():
    return arcadebench.score("atari5", RUNS, reps=200)


def _rows(latex: str, label: str) -> list[list[str]]:
    """The body rows of the table labelled ``label``: cells split on unescaped ``&``."""
    table = latex.split(f"\\label{{tab:arcadebench-atari5-{label}}}")[1].split("\\end{table}")[0]
    body = table.split("\\midrule")[1].split("\\bottomrule")[0]
    return [re.split(r"(?<!\\)&", line.removesuffix("\\\\")) for line in body.strip().splitlines()]


def compile_latex(latex: str, tmp_path) -> None:
    """pdflatex the tables in a minimal article where TeX Live is installed (by .ci/run)."""
    if shutil.which("pdflatex") is None:
        return  # the structure checks of the tests stand alone
    (tmp_path / "tables.tex").write_text(DOCUMENT % latex)
    done = subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "tables.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:]
    assert "Overfull \\hbox" not in done.stdout, done.stdout[-3000:]
    assert (tmp_path / "tables.pdf").stat().st_size > 1000


def test_the_latex_tables_compile_and_name_the_protocol_and_its_hash(results, tmp_path):
    latex = results.to_latex()
    spec = arcadebench.load_spec("atari5")
    assert latex.startswith(
        f"% arcadebench: atari5 v1 (spec sha256:{spec.short_hash}), {spec.hash}"
    )
    assert latex.count("\\begin{table}") == latex.count("\\end{table}") == 3
    captions = re.findall(r"\\caption\{(.*)\}", latex)
    assert all(f"atari5 v1 (spec sha256:{spec.short_hash})" in c for c in captions)
    assert "95\\% stratified-bootstrap confidence intervals (200 repetitions)" in captions[0]
    for label in ("aggregates", "games", "improvement"):
        rows = _rows(latex, label)
        assert len({len(r) for r in rows}) == 1, label  # every row has every column
    assert "b \\& c" in latex and "agent\\_a" in latex  # names escaped
    compile_latex(latex, tmp_path)


def test_units_intervals_and_the_best_of_each_row_in_bold(results):
    rows = {r[0].strip(): r[1:] for r in _rows(results.to_latex(), "aggregates")}
    # HNS mean over games: agent_a (61.5 + 2.4) / 2 = 32.0 %, b & c (33.2 + 7.0) / 2 = 20.1 %;
    # the optimality gap, where lower is better: 68.1 % and 79.9 %
    mean, gap = rows["HNS mean (\\%)"], rows["HNS optimality gap (\\%)"]
    assert mean[0].strip().startswith("\\textbf{31.9}") and "\\textbf" not in mean[1]
    assert "{\\scriptsize [" in mean[0]  # the interval beside the number
    assert gap[0].strip().startswith("\\textbf{68.1}") and "\\textbf" not in gap[1]
    assert rows["games"][:3] == [" 2 ", " 2 ", " -- "]  # Table 3 printed no count
    games = {r[0].strip(): r[1:] for r in _rows(results.to_latex(), "games")}
    assert games["pong"][1].strip() == "$-$9.0"  # raw points: (2 - 20) / 2, a proper minus
    markdown = results.to_markdown()
    assert "| HNS mean (%) | " in markdown and "| b & c \\" not in markdown
    assert "**" in markdown.split("| HNS mean (%) |")[1].splitlines()[0]


def test_the_published_references_of_the_same_protocol_only_unless_asked(tmp_path):
    results = arcadebench.score("machado2018", {"me": {"pong": [0.0, 5.0]}}, reps=50)
    latex = results.to_latex()
    assert "DQN (Dopamine)" not in latex  # obtained under Dopamine's protocol, not this one
    both = results.to_latex(other_protocols=True)
    other = both.split("tab:arcadebench-machado2018-other-protocols")[0].rsplit("\\caption{", 1)[1]
    assert other.startswith("Published results obtained under 4 other protocols than machado2018")
    assert "DQN (Dopamine)" in both.split("other-protocols}")[1]
    assert "frame skip 4 instead of 5" in both.split("other-protocols}")[1]  # how: in the note
    compile_latex(both, tmp_path)


def test_printed_aggregates_are_beside_ours_but_not_ranked_with_them(results):
    rows = {r[0].strip(): r[1:] for r in _rows(results.to_latex(), "aggregates")}
    median = rows["HNS median (\\%)"]  # Atari-5 Table 3 prints MuZero's 57-game median
    assert median[2].strip() == "2,041" and "\\textbf" not in median[2]


def test_results_of_another_spec_come_in_tables_headed_by_the_differences(results, tmp_path):
    saber = arcadebench.score("saber", {"theirs": {"pong": [3.0, 4.0]}}, reps=50)
    latex = results.to_latex(others=[saber])
    head = "Results under saber v2"
    assert latex.count(head) == 2  # its aggregates and per-game tables
    assert (
        "differences between atari5 and saber change scores (arcadebench diff atari5 saber)"
        in latex
    )
    assert (
        latex.count(  # each difference, in the note under its tables
            "episode cap: 108,000 frames (30 min) (atari5) vs 21,600,000 frames (100 h) (saber)."
        )
        == 2
    )
    assert "frame skip" not in latex.split(head)[1]  # the same in both: no difference
    markdown = results.to_markdown(others=[saber])
    assert markdown.count("**Table ") == 5
    compile_latex(latex, tmp_path)


def test_digits_are_checked(results):
    with pytest.raises(InvalidArgument, match="`digits` must be an integer from 0 to 6, got 9"):
        results.to_latex(digits=9)
