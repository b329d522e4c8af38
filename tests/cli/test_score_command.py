"""`arcadebench score`: end to end from a shell, files written, one-line errors, exit status 2."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from testdata import DATA

from arcadebench import load_spec
from arcadebench.cli import main

SCORES = DATA / "scores"

MY_CSV = """\
game,score,run
Pong,21,0
Pong,19,1
Breakout,400,0
Breakout,infinite,1
Montezuma's Revenge,0,0
Double Dunk,NA,0
"""


def test_score_saber_csv_to_json_end_to_end_in_a_real_process(tmp_path):
    (tmp_path / "my.csv").write_text(MY_CSV)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arcadebench",
            "score",
            "saber",
            "my.csv",
            "--json",
            "out.json",
            "--reps",
            "500",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "saber v2" in done.stdout and "hwrns" in done.stdout and "my 95% CI" in done.stdout
    assert "wrote out.json" in done.stderr
    data = json.loads((tmp_path / "out.json").read_text())
    assert (
        data["format"] == "arcadebench-results/2"
        and data["spec"]["hash"] == load_spec("saber").hash
    )
    my = data["algorithms"]["my"]
    assert my["games"]["pong"]["runs"] == [21.0, 19.0] and my["games"]["breakout"]["runs"] == [
        400.0,
        "inf",
    ]
    assert my["games"]["breakout"]["saber"] == pytest.approx(
        (100 * (400 - 1.5) / (864 - 1.5) + 200) / 2
    )
    assert (
        my["aggregates"]["hwrns"]["n_games"] == 3 and "double_dunk" in my["aggregates"]["missing"]
    )
    assert data["provenance"]["command"].startswith(
        "arcadebench score saber my.csv --json out.json"
    )


def test_csv_output_and_several_inputs(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("game,score\npong,1\n")
    (tmp_path / "b.json").write_text('{"b": {"pong": [2, 3]}}')
    status = main(
        [
            "score",
            "saber",
            str(tmp_path / "a.csv"),
            str(tmp_path / "b.json"),
            "--csv",
            str(tmp_path / "out.csv"),
            "--reps",
            "50",
            "--seed",
            "3",
            "--ci",
            "0.9",
        ]
    )
    assert status == 0
    out = capsys.readouterr().out
    header = out.splitlines()[1]
    assert "a" in header.split() and "b" in header.split() and "b 90% CI" in header
    rows = list(csv.DictReader((tmp_path / "out.csv").open()))
    assert {r["algorithm"] for r in rows} == {"a", "b"}


def test_reps_zero_prints_no_intervals(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("game,score,run\npong,1,0\npong,2,1\n")
    assert main(["score", "saber", str(tmp_path / "a.csv"), "--reps", "0"]) == 0
    assert "CI" not in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "args", "expected"),
    [
        (
            "game,score\npong,1\nqbret,2\n",
            [],
            "bad.csv:3: unknown game: 'qbret' is not a game of the 'saber' spec. "
            "Did you mean: 'qbert'",
        ),
        ("game,score\npong,lots\n", [], "bad.csv:2: score 'lots' of pong is not a number"),
        (  # SPR's ChopperCmd is Chopper Command; Pacman is Pac-Man's name and Ms. Pac-Man's
            "game,score\nChopperCmd,974.8\nPacman,1313.2\n",
            [],
            "bad.csv:3: unknown game: 'Pacman' could name 2 ALE games: pacman (",
        ),
        (
            "game,score\npong,1\n",
            ["--ci", "95"],
            "`ci` must be a number strictly between 0 and 1, got 95.0",
        ),
        ("game,score\npong,1\n", ["--reps", "-5"], "`reps` must be a non-negative integer"),
    ],
)
def test_errors_are_one_line_with_exit_status_2(tmp_path, capsys, content, args, expected):
    (tmp_path / "bad.csv").write_text(content)
    assert main(["score", "saber", str(tmp_path / "bad.csv"), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcadebench: error: ") and expected in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_unwritable_output_is_an_error(tmp_path, capsys):
    (tmp_path / "a.csv").write_text("game,score\npong,1\n")
    assert (
        main(
            [
                "score",
                "saber",
                str(tmp_path / "a.csv"),
                "--json",
                str(tmp_path / "no" / "dir" / "o.json"),
            ]
        )
        == 2
    )
    assert "cannot write the results" in capsys.readouterr().err


def test_log_warnings_are_printed_and_scoring_goes_on(tmp_path, capsys):
    spec = load_spec("saber")
    record = {
        "kind": "episode",
        "spec": "saber",
        "spec_hash": spec.hash,
        "game": "pong",
        "run": "0",
        "episode": 0,
        "return": 5.0,
        "total_frames": 1000,
        "total_steps": 250,
        "complete": True,
    }
    cut = json.dumps({**record, "episode": 1, "total_frames": 2000})[:30]
    (tmp_path / "run.jsonl").write_text(json.dumps(record) + "\n" + cut)
    assert main(["score", "saber", str(tmp_path / "run.jsonl")]) == 0
    captured = capsys.readouterr()
    assert "arcadebench: warning: " in captured.err and "the last line is cut off" in captured.err
    # each warning one line (the cut line, the missing header): no Python source line under it
    assert all(line.startswith("arcadebench: warning: ") for line in captured.err.splitlines())
    assert "pong" in captured.out


def test_a_log_under_an_edited_copy_of_the_spec_is_refused_in_one_line(tmp_path, capsys):
    """Its header carries another hash of saber v2 (its episodes were edited to match ours)."""
    spec = load_spec("saber")
    edited = {
        "kind": "header",
        "spec": "saber",
        "spec_version": 2,
        "spec_hash": "sha256:" + "1" * 64,
    }
    record = {"kind": "episode", "spec": "saber", "spec_hash": spec.hash, "game": "pong"}
    record |= {"run": "0", "episode": 0, "return": 5.0, "total_frames": 1000}
    record |= {"total_steps": 250, "complete": True}
    (tmp_path / "run.jsonl").write_text(json.dumps(edited) + "\n" + json.dumps(record) + "\n")
    assert main(["score", "saber", str(tmp_path / "run.jsonl")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "run.jsonl:1: was written with a different version of the 'saber' spec" in captured.err


def test_published_table_3_scores_from_the_command_line(capsys):
    assert main(["score", "atari5", str(SCORES / "atari5_table3.csv"), "--reps", "0"]) == 0
    out = capsys.readouterr().out
    assert "published results (Table 3)" in out and "2,091.46" in out
    assert "MuZero (score table)" in out and "(this run)" not in out  # a score file is no run


def test_one_run_per_game_says_why_it_has_no_intervals(tmp_path, capsys):
    (tmp_path / "rainbow.csv").write_text("game,score\nBattle Zone,62010\nQ*bert,33817.5\n")
    assert main(["score", "atari5", str(tmp_path / "rainbow.csv"), "--ci", "0.9"]) == 0
    out = capsys.readouterr().out
    assert "- no 90% confidence intervals: the bootstrap resamples runs, and every game" in out
    assert main(["score", "atari5", str(tmp_path / "rainbow.csv"), "--reps", "0"]) == 0
    assert "confidence intervals" not in capsys.readouterr().out  # none asked for


def test_small_numbers_keep_their_digits_and_percentages_say_so(tmp_path, capsys):
    """HWR's learning efficiency is a fraction per frame (Eq. 7): about 1e-08, never 0.00."""
    (tmp_path / "hwr.csv").write_text(
        "game,score,frames\npong,10,200000000\nbreakout,30,200000000\nqbert,5000,200000000\n"
    )
    assert main(["score", "hwr", str(tmp_path / "hwr.csv"), "--reps", "0"]) == 0
    rows = {
        tuple(line.split()[:-1]): line.split()[-1]
        for line in capsys.readouterr().out.splitlines()
        if line.strip()
    }
    assert rows[("hns", "per", "frame", "(fraction)", "mean")] == "3.69e-09"
    assert rows[("hwrns", "per", "frame", "(fraction)", "median")] == "1.64e-10"
    assert rows[("hns", "median")] == "86.97%" and rows[("hns", "n_games")] == "3"
    assert rows[("game", "time", "(days)")] == "38.58"
    assert rows[("frames",)] == "200,000,000"
    (tmp_path / "short.csv").write_text("game,score,frames\npong,10,100000\n")
    assert main(["score", "hwr", str(tmp_path / "short.csv"), "--reps", "0"]) == 0
    (days,) = [line for line in capsys.readouterr().out.splitlines() if "game time" in line]
    assert days.split()[-1] == "0.0193"  # 100,000 frames: 0.0193 days, not 0.00


TWO = '{"a": {"pong": [1, 5, -3], "qbert": [300, 250]}, "b": {"pong": [2, -20], "qbert": [1000]}}'


def test_compare_and_a_latex_table_to_paste(tmp_path, capsys):
    (tmp_path / "two.json").write_text(TWO)
    args = ["score", "atari5", str(tmp_path / "two.json"), "--reps", "100"]
    assert (
        main([*args, "--compare", "b", "a", "--format", "latex", "--json", str(tmp_path / "o")])
        == 0
    )
    printed = capsys.readouterr().out
    assert printed.startswith("% arcadebench: atari5 v1 (spec sha256:")
    assert "b \\textgreater{} a" in printed and "\\begin{tabular}" in printed
    (comparison,) = json.loads((tmp_path / "o").read_text())["comparisons"]
    assert (comparison["x"], comparison["y"]) == ("b", "a")
    assert main([*args, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert markdown.startswith("**Table 1.** Aggregate scores, protocol atari5 v1")
    assert "| a \\> b | " in markdown  # every pair by default
    assert main([*args, "--compare", "a", "bb"]) == 2
    assert capsys.readouterr().err.strip() == (
        "arcadebench: error: `--compare` must name algorithms of the results (a, b), got 'bb'. "
        "Did you mean: 'b'?"
    )
    assert main([*args, "--other-protocols"]) == 2
    assert "`--other-protocols` must go with --format latex or markdown" in capsys.readouterr().err


def test_curves_from_logs(tmp_path, capsys):
    from report_helpers import saber_logs

    logs = saber_logs(tmp_path / "logs")
    args = ["score", "saber", str(logs), "--reps", "50", "--curve", "5M", "12M"]
    assert main([*args, "--json", str(tmp_path / "o.json")]) == 0
    printed = capsys.readouterr().out
    assert "sample-efficiency curve: hwrns iqm by training frames" in printed
    curve = json.loads((tmp_path / "o.json").read_text())["algorithms"]["dqn"]["curve"]
    assert list(curve) == ["5000000", "10000000", "12000000"]  # the 10M checkpoint joins
    assert main(["score", "atari100k", str(logs), "--curve"]) == 2
    assert "`--curve` must be off for 'atari100k', got True" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_:
        main([*args[:-2], "10Q"])
    assert exit_.value.code == 2
    assert "got '10Q'" in capsys.readouterr().err


def test_references_none_named_or_unknown(tmp_path, capsys):
    (tmp_path / "me.json").write_text('{"me": {"Pong": [-20, -19], "Breakout": [2, 3]}}')
    args = ["score", "atari100k", str(tmp_path / "me.json"), "--reps", "0", "--format", "latex"]
    assert main(args) == 0
    default = capsys.readouterr().out
    assert "DrQ(eps) \\ddag{}" in default  # the first four of its protocol
    assert "BBF" not in default and "SimPLe (SPR" not in default
    assert main([*args, "--references", "none"]) == 0
    alone = capsys.readouterr().out
    assert "DrQ(eps)" not in alone and "\\dag" not in alone
    assert main([*args, "--references", "der", "simple"]) == 0
    named = capsys.readouterr().out
    assert "DER \\dag{}" in named and "SimPLe \\ddag{}" in named
    assert "DrQ(eps)" not in named
    assert main([*args, "--references", "SPRR"]) == 2
    error = capsys.readouterr().err
    assert error.startswith(
        "arcadebench: error: 'SPRR' is not a reference of the 'atari100k' spec. Did you mean: "
    )
    assert error.count("\n") == 1
    table = ["score", "atari100k", str(tmp_path / "me.json"), "--reps", "0"]
    assert main([*table, "--references", "DER"]) == 0
    printed = capsys.readouterr().out
    assert "\nDER " in printed and "BBF" not in printed
