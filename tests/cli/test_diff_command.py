"""`arcadebench diff`: the table, --format json, and an exit status a script tests (0, 1, 2)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import arcadebench.specs
from arcadebench.cli import main

SPEC_DIR = Path(arcadebench.specs.__file__).parent


def test_saber_against_atari100k_names_what_changes_scores_and_exits_1(capsys):
    assert main(["diff", "saber", "atari100k"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("saber v2 vs atari100k v1: 19 of 25 settings differ, 13 of them")
    lines = out.splitlines()
    for setting in ("sticky actions", "life information", "budget", "scored phase"):
        line = next(line for line in lines if f" {setting} " in line)
        assert "changes scores [" in line, line
    assert "evaluation   scored phase" in out  # the evaluation section
    assert "[1] Machado et al. 2018 Section 5.2" in out


def test_the_same_protocol_exits_0(capsys):
    assert main(["diff", "atari5", "atari5"]) == 0
    assert capsys.readouterr().out.startswith("atari5 v1 vs atari5 v1: the same protocol")


def test_a_difference_in_reporting_only_exits_0(tmp_path, capsys):
    text = (SPEC_DIR / "atari100k.yaml").read_text(encoding="utf-8")
    assert "  episodes: 100\n" in text
    variant = tmp_path / "iris.yaml"
    variant.write_text(text.replace("  episodes: 100\n", "  episodes: 16\n"), encoding="utf-8")
    assert main(["diff", "atari100k", str(variant)]) == 0
    out = capsys.readouterr().out
    assert "1 of 21 settings differ, in reporting only" in out
    assert re.search(r"  evaluation episodes +100 +16 +reporting only \[1\]\n", out)


def test_json_is_the_same_comparison(capsys):
    assert main(["diff", "dqn2015", "atari5", "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["a"]["name"] == "dqn2015" and data["b"]["name"] == "atari5"
    assert data["comparable"] is False
    human = next(r for r in data["rows"] if r["setting"] == "human scores")
    assert human["detail"] == "34 of 49 games differ"
    assert "dqn_zoo issue #28" in human["evidence"]


def test_an_unknown_spec_is_one_line_and_exits_2(capsys):
    assert main(["diff", "saber", "atari99k"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcadebench: error: 'atari99k' is neither a built-in spec")
    assert err.count("\n") == 1


def test_exit_status_in_a_real_process(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "arcadebench", "diff", "saber", "atari100k"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and done.stderr == ""
    assert "sticky actions" in done.stdout
