"""Tables that paste into a paper: LaTeX that compiles, Markdown, bold, units, references."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import arcadebench
from arcadebench.benchmarks.scoring.paper_tables import MAX_ROWS, PACKAGES
from arcadebench.errors import InvalidArgument, UnknownReference
from arcadebench.specs import parse_spec
from arcadebench.specs.loader import SPEC_DIR

RUNS = {
    "agent_a": {"pong": [1.0, 5.0, -3.0], "qbert": [300.0, 250.0, 900.0]},
    "b & c": {"pong": [2.0, -20.0], "qbert": [1000.0, 1200.0]},  # a name LaTeX must escape
}
# a two-column paper as ICML's template sets it (3.25 in columns, 6.75 in page), and the
# packages the tables name in their first lines: nothing else
DOCUMENT = r"""\documentclass[twocolumn]{article}
\setlength{\textwidth}{6.75in}
\setlength{\columnsep}{0.25in}
\setlength{\oddsidemargin}{-0.125in}
%s
\begin{document}
%s
\end{document}
"""
SPR_100 = "SPR (Agarwal et al. 2021, 100 runs)"


@pytest.fixture(scope="module")
def results():
    return arcadebench.score("atari5", RUNS, reps=200)


@pytest.fixture(scope="module")
def atari100k():
    return arcadebench.load_spec("atari100k")


def _table(latex: str, label: str) -> str:
    """The float labelled ``label``, from its label to its end."""
    return latex.split(f"\\label{{tab:{label}}}")[1].split("\\end{table")[0]


def _rows(latex: str, label: str) -> list[list[str]]:
    """The body rows of the table labelled ``label``: cells split on unescaped ``&``."""
    body = _table(latex, label).split("\\midrule")[1].split("\\bottomrule")[0]
    return [re.split(r"(?<!\\)&", line.removesuffix("\\\\")) for line in body.strip().splitlines()]


def _by_label(latex: str, label: str) -> dict[str, list[str]]:
    return {row[0].strip(): [c.strip() for c in row[1:]] for row in _rows(latex, label)}


def _heads(latex: str, label: str) -> list[str]:
    """The column headers of a table, their wrapped lines joined."""
    line = _table(latex, label).split("\\midrule")[0].strip().splitlines()[-1]
    cells = re.split(r"(?<!\\)&", line.removesuffix("\\\\"))
    return [
        re.sub(r"\\begin\{tabular\}\[b\]\{@\{\}[lrc]@\{\}\}|\\end\{tabular\}", "", c)
        .replace("\\\\", " ")
        .strip()
        for c in cells
    ]


def _number(cell: str) -> str:
    """A cell's number as printed, without its bold, its interval or the stacking around it."""
    cell = re.sub(r"\\begin\{tabular\}\[t\]\{@\{\}r@\{\}\}", "", cell)
    cell = re.sub(r"(\\\\)?\{\\scriptsize \[.*?\]\}|\\end\{tabular\}", "", cell)
    return re.sub(r"\\textbf\{(.*)\}", r"\1", cell).strip()


def compile_latex(latex: str, tmp_path) -> None:
    """pdflatex the tables with the packages they name, in a two-column paper.

    Where TeX Live is installed (by .ci/run); a table wider than its float is an error here
    (an overfull box), not a warning.
    """
    needs = latex.splitlines()[1]
    packages = re.findall(r"\\usepackage\{(\w+)\}", needs)
    assert needs.startswith("% needs ") and tuple(packages) == PACKAGES == ("booktabs",)
    if shutil.which("pdflatex") is None:
        return  # the structure checks of the tests stand alone
    preamble = "\n".join(f"\\usepackage{{{p}}}" for p in packages)
    (tmp_path / "tables.tex").write_text(DOCUMENT % (preamble, latex), encoding="utf-8")
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
        f"% arcadebench: atari5 v1 (spec sha256:{spec.short_hash}), {spec.hash}\n"
        "% needs \\usepackage{booktabs}\n"
    )
    assert "resizebox" not in latex and "graphicx" not in latex
    assert len(re.findall(r"\\begin\{table\*?\}", latex)) == 3
    assert len(re.findall(r"\\end\{table\*?\}", latex)) == 3
    captions = re.findall(r"\\caption\{(.*)\}", latex)
    assert all(f"atari5 v1 (spec sha256:{spec.short_hash})" in c for c in captions)
    assert "95\\% stratified-bootstrap confidence intervals (200 repetitions)" in captions[0]
    for label in ("aggregates", "games", "improvement"):
        rows = _rows(latex, f"arcadebench-atari5-{label}")
        assert len({len(r) for r in rows}) == 1, label  # every row has every column
    assert "b \\& c" in latex and "agent\\_a" in latex  # names escaped
    compile_latex(latex, tmp_path)


def test_units_intervals_and_the_best_of_each_row_in_bold(results):
    latex = results.to_latex()
    rows = _by_label(latex, "arcadebench-atari5-aggregates")
    # HNS mean over games: agent_a (61.5 + 2.4) / 2 = 32.0 %, b & c (33.2 + 7.0) / 2 = 20.1 %;
    # the optimality gap, where lower is better: 68.1 % and 79.9 %
    mean, gap = rows["HNS mean (\\%)"], rows["HNS optimality gap (\\%)"]
    assert "\\textbf{31.9}" in mean[0] and "\\textbf" not in mean[1]
    assert "{\\scriptsize [" in mean[0]  # the interval with the number
    assert "\\textbf{68.1}" in gap[0] and "\\textbf" not in gap[1]
    assert rows["games"][:3] == ["2", "2", "57"]  # Table 3's median is over the 57 games
    games = _by_label(latex, "arcadebench-atari5-games")
    assert games["Pong"][1] == "$-$9.0"  # raw points: (2 - 20) / 2, a proper minus
    markdown = results.to_markdown()
    assert "| HNS mean (%) | " in markdown and "| b & c \\" not in markdown
    assert "**" in markdown.split("| HNS mean (%) |")[1].splitlines()[0]


def test_the_published_references_of_the_same_protocol_only_unless_asked(tmp_path):
    results = arcadebench.score("machado2018", {"me": {"pong": [0.0, 5.0]}}, reps=50)
    latex = results.to_latex()
    assert "DQN (Dopamine)" not in latex  # obtained under Dopamine's protocol, not this one
    both = results.to_latex(other_protocols=True)
    other = both.split("tab:arcadebench-machado2018-other-protocols}")[0].rsplit("\\caption{", 1)
    assert other[1].startswith(
        "Published results obtained under 4 other protocols than machado2018"
    )
    assert "DQN (Dopamine)" in both.split("other-protocols}")[1]
    assert "frame skip 4 instead of 5" in both.split("other-protocols}")[1]  # how: in the note
    # 24 references are wider than a page: column parts, each with the row labels, none scaled
    assert "tab:arcadebench-machado2018-other-protocols-2}" in both
    assert "Published results obtained under 4 other protocols" in both.split("protocols-2}")[0]
    compile_latex(both, tmp_path)


def test_printed_aggregates_are_apart_and_never_ranked(results):
    latex = results.to_latex()
    rows = _by_label(latex, "arcadebench-atari5-aggregates")
    median = rows["HNS median (\\%)"]  # Atari-5 Table 3 prints MuZero's 57-game median
    assert median[2] == "2,041" and "\\textbf" not in median[2]
    table = _table(latex, "arcadebench-atari5-aggregates")
    assert "\\multicolumn{2}{c}{2 games} & \\multicolumn{4}{c}{printed, 57 games}" in table
    assert _heads(latex, "arcadebench-atari5-aggregates")[3] == "MuZero (Table 3)"
    markdown = results.to_markdown()
    assert "| MuZero (Table 3) (printed, 57 games) |" in markdown


def _without_runs(spec, name):
    """The spec with the reference ``name``'s per-run scores not shipped: its means only."""
    text = (SPEC_DIR / f"{spec.name}.yaml").read_text(encoding="utf-8")
    block = text.split(f"    {name}:\n")[1].split("\n    ", 1)
    entry = re.sub(r"      per_run: [^\n]*\n", "", block[0] + "\n    " + block[1], count=1)
    return parse_spec(text.split(f"    {name}:\n")[0] + f"    {name}:\n" + entry)


def test_a_reference_of_means_has_no_iqm_or_gap_beside_ours(atari100k, tmp_path):
    """On the same 100 runs of SPR: IQM 33.7 % over the runs; from their means it would be 41.5."""
    spr = atari100k.published_scores[SPR_100]
    ours = arcadebench.score(atari100k, {"the runs": spr.score_input()}, reps=0)
    latex = ours.to_latex(references=[SPR_100])
    rows = _by_label(latex, "arcadebench-atari100k-aggregates")
    assert _heads(latex, "arcadebench-atari100k-aggregates")[1:] == [
        "the runs",
        f"{SPR_100} \\ddag{{}}",
    ]
    assert [_number(c) for c in rows["HNS IQM (\\%)"]] == ["33.7", "33.7"]
    assert all("\\textbf{33.7}" in c for c in rows["HNS IQM (\\%)"])  # equal: equally bold
    notes = _table(latex, "arcadebench-atari100k-aggregates")
    assert "\\ddag{}: the published per-run scores (100 per game), scored" in notes
    # the same reference with its means only: the statistics over games, never an IQM of means
    means = _without_runs(atari100k, SPR_100)
    assert not means.published_scores[SPR_100].per_run and means.published_scores["DER"]
    ours = arcadebench.score(means, {"the runs": spr.score_input()}, reps=0)
    latex = ours.to_latex(references=[SPR_100])
    rows = _by_label(latex, "arcadebench-atari100k-aggregates")
    assert _heads(latex, "arcadebench-atari100k-aggregates")[2] == (f"{SPR_100} \\dag{{}}")
    iqm, gap = rows["HNS IQM (\\%)"], rows["HNS optimality gap (\\%)"]
    assert [_number(c) for c in iqm] == ["33.7", "--"]  # never 41.5, the IQM of the means
    assert [_number(c) for c in gap] == ["57.7", "--"]
    assert [_number(c) for c in rows["HNS median (\\%)"]] == ["39.6", "39.6"]  # over games
    assert "41.5" not in latex
    notes = _table(latex, "arcadebench-atari100k-aggregates")
    assert (
        "\\dag{}: over per-game means: the published per-run scores are not "
        "shipped: no IQM or optimality gap, which are over all runs"
    ) in notes
    # the plain-text table alike: no IQM of means
    text = ours.table(references=[SPR_100])
    assert "runs: per-game means only, without the IQM and optimality gap" in text
    assert "41.5" not in text
    compile_latex(latex, tmp_path)


def test_a_reference_with_runs_has_the_intervals_of_its_runs(atari100k):
    ours = arcadebench.score(atari100k, {"me": {"pong": [0.0, 1.0], "breakout": [2.0, 3.0]}})
    rows = _by_label(ours.to_latex(references=["drq(eps)"]), "arcadebench-atari100k-aggregates")
    assert "{\\scriptsize [" in rows["HNS IQM (\\%)"][1]  # DrQ(eps): 100 runs, bootstrapped
    assert rows["games"] == ["2", "2"]  # scored on our games


def test_bold_only_among_columns_over_the_same_games(tmp_path):
    spec = arcadebench.load_spec("saber")
    mine = {"asterix": [100.0, 200.0], "ms_pacman": [300.0, 500.0], "pong": [0.0, 1.0]}
    mine |= {"space_invaders": [150.0, 160.0]}
    results = arcadebench.score(spec, {"me": mine}, reps=0)
    latex = results.to_latex()
    single = "Rainbow-IQN (single actor, Table 4)"  # 3 of our 4 games
    assert spec.default_references() == (
        'Rainbow (Table 3, "No limit (SABER)")',
        'Rainbow-IQN (Table 3, "No limit (SABER)")',
        single,
    )
    table = _table(latex, "arcadebench-saber-aggregates")
    assert (
        "\\multicolumn{1}{c}{4 games} & \\multicolumn{1}{c}{3 other games} & "
        "\\multicolumn{2}{c}{printed, 61 games}"
    ) in table
    rows = _by_label(latex, "arcadebench-saber-aggregates")
    assert not any("\\textbf" in c for row in rows.values() for c in row)  # one column a set
    assert rows["games"] == ["4", "3", "61", "61"]
    markdown = results.to_markdown()
    assert f"| me | {single} † (3 other games) |" in markdown
    # with a second algorithm over the same 4 games, the two are ranked, the reference apart
    two = arcadebench.score(spec, {"me": mine, "you": {g: [0.0] for g in mine}}, reps=0)
    rows = _by_label(two.to_latex(), "arcadebench-saber-aggregates")
    assert (
        "\\textbf" in rows["HWRNS mean (\\%)"][0] and "\\textbf" not in rows["HWRNS mean (\\%)"][2]
    )
    compile_latex(latex, tmp_path)


def test_references_none_named_and_unknown(atari100k):
    results = arcadebench.score(atari100k, {"me": {"pong": [0.0, 1.0]}}, reps=0)
    default = _heads(results.to_latex(), "arcadebench-atari100k-aggregates")[2:]
    assert [re.sub(r" \\d+ag\{\}$", "", h) for h in default] == list(atari100k.default_references())
    assert atari100k.default_references() == (
        "DrQ(eps)",
        SPR_100,
        "CURL (Agarwal et al. 2021, 100 runs)",
        "SimPLe",
    )
    assert _heads(results.to_latex(references="none"), "arcadebench-atari100k-aggregates") == [
        "",
        "me",
    ]
    markdown = results.to_markdown(references=["der", "simple"])
    assert "| me | DER † | SimPLe ‡ |" in markdown
    with pytest.raises(UnknownReference) as caught:
        results.to_latex(references=["SPRR"])
    message = str(caught.value)
    assert message.startswith("'SPRR' is not a reference of the 'atari100k' spec. Did you mean: ")
    assert "'SPR'" in message and "\n" not in message
    with pytest.raises(InvalidArgument, match="'none' alone"):
        results.to_latex(references=["none", "DER"])


def test_names_with_any_unicode_compile(tmp_path):
    names = {
        "DrQ(\u03b5)": {"pong": [1.0, 2.0]},
        "\u201ctuned\u201d agent \u00b1 1 \u00d7 2": {"pong": [2.0, 3.0]},
        "\"quoted\" rock'n'roll": {"pong": [0.0, 4.0]},
        "na\u00efve caf\u00e9 \u00c5ngstr\u00f6m \u2192 \u03a9 \u667a\u80fd\u4f53 ~^\\": {
            "pong": [5.0, 1.0]
        },
    }
    results = arcadebench.score("atari5", names, reps=20)
    latex = results.to_latex()
    heads = " ".join(_heads(latex, "arcadebench-atari5-aggregates"))
    assert "DrQ($\\varepsilon$)" in heads and "``tuned'' agent $\\pm$ 1 $\\times$ 2" in heads
    assert "``quoted'' rock'n'roll" in heads
    assert 'na\\"{\\i}ve caf\\\'{e} \\r{A}ngstr\\"{o}m $\\rightarrow$ $\\Omega$' in heads
    assert "{[}U+667A{]}" in heads  # no glyph in pdflatex's fonts: its code point
    assert not re.search(r"[^\x00-\x7f]", latex.split("\n", 2)[2])  # ASCII below the comments
    compile_latex(latex, tmp_path)


def test_a_57_game_table_is_in_parts_with_their_header_and_papers_names(tmp_path):
    spec = arcadebench.load_spec("atari5")
    scores = {
        "ours": {g: [float(k), float(k + 2)] for k, g in enumerate(spec.games)},
        "theirs": {g: [float(k + 1)] for k, g in enumerate(spec.games)},
    }
    results = arcadebench.score(spec, scores, reps=0)
    latex = results.to_latex(references="none")
    first, second = (
        _table(latex, "arcadebench-atari5-games"),
        _table(latex, "arcadebench-atari5-games-2"),
    )
    assert "tab:arcadebench-atari5-games-3" not in latex
    rows = _rows(latex, "arcadebench-atari5-games") + _rows(latex, "arcadebench-atari5-games-2")
    assert len(rows) == 57 and max(len(_rows(latex, "arcadebench-atari5-games")), 29) <= MAX_ROWS
    labels = [r[0].strip() for r in rows]
    assert labels[:3] == ["Alien", "Amidar", "Assault"] and "Bank Heist" in labels
    assert {"Ms. Pac-Man", "Q*bert", "Montezuma's Revenge", "Yars' Revenge"} <= set(labels)
    for part in (first, second):  # each part repeats the header
        assert "game & ours & theirs & ours & theirs \\\\" in part
        assert "\\multicolumn{2}{c}{" in part
    caption = re.findall(r"\\caption\{(.*)\}", latex.split("arcadebench-atari5-games-2}")[0])[-1]
    assert caption.endswith("Bold: the best of each row and score. (continued)")
    assert "longtable" not in latex
    markdown = results.to_markdown(references="none")
    assert "| Q\\*bert |" in markdown and "| Bank Heist |" in markdown
    compile_latex(latex, tmp_path)


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
