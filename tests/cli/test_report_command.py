"""``arcadebench report``: outputs, the reference list, one-line errors, matplotlib missing."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest
from report_helpers import atari5_csv, atari5_runs, saber_logs, write_results

from arcadebench.benchmarks.report import list_references
from arcadebench.cli import main
from arcadebench.specs import load_spec


def test_report_writes_the_html_and_figures(tmp_path, capsys):
    results = write_results(tmp_path / "r.json", "atari5", atari5_runs())
    out = tmp_path / "out"
    assert (
        main(
            [
                "report",
                str(results),
                "--out",
                str(out),
                "--references",
                "random",
                "MuZero",
                "--reps",
                "100",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert (
        f"wrote {out / 'report.html'} (4 figures: per_game.png, aggregates.png, profile.png, "
        "improvement.png)" in printed
    )
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")


def test_inputs_after_references_are_inputs(tmp_path, capsys):
    results = write_results(tmp_path / "r.json", "atari5", {"x": {"pong": 1.0}}, reps=0)
    out = str(tmp_path / "o")
    assert main(["report", "--out", out, "--references", "human", str(results)]) == 0
    html = (tmp_path / "o" / "report.html").read_text()
    assert "human (Table 12)" in html and "r.json" in html


def test_logs_name_their_spec_and_score_files_need_one(tmp_path, capsys):
    logs = saber_logs(tmp_path / "logs")
    assert main(["report", str(logs / "dqn"), "--out", str(tmp_path / "a"), "--reps", "0"]) == 0
    assert (tmp_path / "a" / "learning_curves.png").exists()
    csv = atari5_csv(tmp_path / "s.csv")
    assert main(["report", str(csv), "--out", str(tmp_path / "b")]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "--spec" in error
    assert main(["report", str(csv), "--spec", "atari5", "--out", str(tmp_path / "b")]) == 0


def test_list_references(capsys):
    assert main(["report", "--list-references", "atari5"]) == 0
    out = capsys.readouterr().out
    for name in ("random (Table 12)", "human (Table 12)", "MuZero (Table 3)", "Rainbow (noop)"):
        assert name in out
    assert "dataset" in out and "published" in out and "constants" in out
    lines = out.splitlines()
    assert lines[1].split()[:5] == ["reference", "kind", "games", "protocol", "source"]
    rainbow = next(line for line in lines if line.startswith("Rainbow (noop) "))
    assert "the paper's own, with no-op starts" in rainbow
    human = next(line for line in lines if line.startswith("human (Table 12) "))
    assert "this spec's" in human
    dqn = next(line for line in lines if line.startswith("DQN hs "))
    assert "the paper's own, with human starts" in dqn
    # protocols and sources wrap within their columns: no 600-character lines
    assert max(len(line) for line in lines) < 160


def test_list_references_cites_each_work_once(capsys):
    assert main(["report", "--list-references", "saber"]) == 0
    out = capsys.readouterr().out
    table, cited = out.split("\nworks cited\n")
    lines = table.splitlines()
    rainbow = next(line for line in lines if line.startswith("Rainbow (Table 3, 30 minutes) "))
    assert rainbow.endswith("[1] Table 3, 30 minutes")  # the table, its work numbered
    assert next(line for line in lines if line.startswith("random (Table 5) ")).endswith(
        "[1] saber spec constants, Table 5"
    )
    reactor = next(line for line in lines if line.startswith("Reactor "))
    assert reactor.endswith("[2] source: REACTOR")  # a row of the Atari-5 data set
    assert "Toromanoff" not in table and "Aitchison" not in table
    assert cited.startswith("[1] Toromanoff, M., Wirbel, E. and Moutarde, F. (2019).")
    assert cited.count("Toromanoff") == 1 and cited.count("[2] Aitchison, M.") == 1
    # each reference a line or two (the full citation on every row made 458 lines)
    references = [line for line in lines[3:] if not line.startswith(" ")]
    assert len(references) == len(list_references(load_spec("saber"))) == 74
    assert len(lines) < 2 * 74


def test_results_of_two_protocols_are_reported_apart(tmp_path, capsys):
    saber = write_results(tmp_path / "s.json", "saber", {"x": {"pong": [1.0, 2.0]}}, reps=0)
    atari100k = write_results(tmp_path / "a.json", "atari100k", {"y": {"pong": [3.0]}}, reps=0)
    out = tmp_path / "out"
    assert main(["report", str(saber), str(atari100k), "--out", str(out), "--reps", "0"]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[-1] == (
        "results under atari100k are in a section of their own, not ranked with saber's: 13 of "
        "the protocols' differences change scores (arcadebench diff saber atari100k)"
    )
    html = (out / "report.html").read_text()
    assert "Results under atari100k (a different protocol)" in html
    assert main(["report", str(saber), "--spec", "atari100k", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "`spec` must be the protocol of at least one input, got 'atari100k'" in err


def test_errors_are_one_line(tmp_path, capsys):
    results = write_results(tmp_path / "r.json", "atari5", {"x": {"pong": 1.0}}, reps=0)
    assert (
        main(["report", str(results), "--out", str(tmp_path / "o"), "--references", "Rainbow-IQN"])
        == 2
    )
    error = capsys.readouterr().err.strip()
    assert error.startswith("arcadebench: error: 'Rainbow-IQN' is not a reference")
    assert "Did you mean" in error and "--list-references atari5" in error and "\n" not in error
    assert main(["report", "--out", str(tmp_path / "o")]) == 2
    assert "at least one" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_without_matplotlib_report_says_how_to_install_it(tmp_path):
    results = write_results(tmp_path / "r.json", "atari5", {"x": {"pong": 1.0}}, reps=0)
    script = textwrap.dedent(f"""
        import sys
        sys.modules["matplotlib"] = None  # as if it were not installed
        from arcadebench.cli import main
        sys.exit(main(["report", {str(results)!r}, "--out", {str(tmp_path / "out")!r}]))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "pip install matplotlib (in a clone of arcadebench: pip install -e '.[report]')" in (
        done.stderr
    )
    assert not (tmp_path / "out").exists()


def test_an_empty_directory_says_there_are_no_logs(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert main(["report", str(tmp_path / "empty"), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "empty: has no episode logs (*.jsonl) and no results.json" in err
    assert "\n" not in err.strip()


def test_paper_writes_the_figure_set_instead_of_the_page(tmp_path, capsys):
    logs = saber_logs(tmp_path / "logs")
    paper = tmp_path / "paper"
    args = ["report", str(logs / "dqn"), str(logs / "ppo"), "--paper", str(paper), "--reps", "0"]
    assert main([*args, "--out", str(tmp_path / "html")]) == 0
    assert capsys.readouterr().out == (
        f"wrote {paper}: 5 figures as PDF and PNG (aggregates, profile, improvement, "
        "sample_efficiency, per_game_table), tables.tex, tables.md\n"
    )
    assert (paper / "improvement.pdf").exists() and not (tmp_path / "html").exists()


def test_the_deprecated_compare_warns_in_one_line_and_still_works(tmp_path, capsys):
    results = write_results(tmp_path / "r.json", "atari5", {"x": {"pong": 1.0}}, reps=0)
    assert main(["report", "--out", str(tmp_path / "o"), "--compare", "human", str(results)]) == 0
    err = capsys.readouterr().err
    assert err == "arcadebench: warning: --compare is deprecated: use --references\n"
    html = (tmp_path / "o" / "report.html").read_text()
    assert "human (Table 12)" in html and "r.json" in html  # the reference, and the input


def test_references_default_none_and_named_in_the_page_and_the_paper_tables(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    spec = load_spec("atari100k")
    results = write_results(
        tmp_path / "r.json", spec, {"me": {"pong": [-20.0, -19.0], "breakout": [2.0, 3.0]}}, reps=0
    )
    default = tmp_path / "default"
    assert main(["report", str(results), "--out", str(default), "--reps", "0"]) == 0
    html = (default / "report.html").read_text()
    entries = set(re.findall(r'<td class="ref">([^<]*)</td><td>published reference</td>', html))
    assert entries == set(spec.default_references())  # the first four of its protocol
    assert main(["report", str(results), "--out", str(tmp_path / "n"), "--references", "none"]) == 0
    html = (tmp_path / "n" / "report.html").read_text()
    assert "published reference</td>" not in html
    paper = tmp_path / "paper"
    args = ["report", str(results), "--paper", str(paper), "--reps", "0"]
    human = "human (Agarwal et al. 2021 (rliable) constants)"  # the spec's constants
    assert main([*args, "--references", "DER", human]) == 0
    latex = (paper / "tables.tex").read_text()
    assert "DER \\dag{}" in latex  # a spec reference: in the tables
    assert "human" not in latex.split("\\begin{tabular}")[1]  # constants: the figures' only
    assert "DrQ(eps)" not in latex and "| DER † |" in (paper / "tables.md").read_text()
    assert main([*args, "--references", "none"]) == 0
    assert "\\dag" not in (paper / "tables.tex").read_text()
    assert main([*args]) == 0  # the default: the first four of its protocol
    assert "DrQ(eps) \\ddag{}" in (paper / "tables.tex").read_text()


def test_figure_width_and_font_size_size_the_paper_figures(tmp_path, capsys):
    logs = saber_logs(tmp_path / "logs")
    paper = tmp_path / "paper"
    args = ["report", str(logs / "dqn"), "--paper", str(paper), "--reps", "0"]
    assert main([*args, "--figure-width", "6.75", "--font-size", "9"]) == 0
    pdf = (paper / "aggregates.pdf").read_bytes()
    width = float(re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ", pdf).group(1))
    assert width == pytest.approx(6.75 * 72)  # points
    capsys.readouterr()
    assert main([*args, "--figure-width", "13.8"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "`figure_width` must be between 2 and 8 inches" in line, line
    html = ["report", str(logs / "dqn"), "--out", str(tmp_path / "html"), "--font-size", "8"]
    assert main(html) == 2
    assert "add --paper DIR" in capsys.readouterr().err
