"""The Sonic evaluation protocol through the runner (Section 3.9): each test level gets a fresh
learning agent for the step budget (here JERK for 2,000 steps on the Airstriker test levels),
every episode is logged, and levels and the aggregate are scored next to Table 1; without the
ROMs, ``arcadebench run sonic`` stops at once with the import instructions (exit status 2).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from sonic_helpers import (
    IMPORT,
    NOROM_MISSING,
    SONIC,
    TEST_LEVELS,
    sonic_rom,
    write_sonic_airstriker,
)
from testdata import PYTHONPATH_WITH_TESTS

import arcadebench
from arcadebench.cli import main
from arcadebench.errors import RomNotFound

ENV = {**os.environ, "PYTHONPATH": PYTHONPATH_WITH_TESTS}


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory):
    return str(write_sonic_airstriker(tmp_path_factory.mktemp("sonic-airstriker")))


@pytest.mark.skipif(
    sonic_rom()
    and sonic_rom("SonicTheHedgehog2-Genesis")
    and sonic_rom("SonicAndKnuckles3-Genesis"),
    reason="all Sonic ROMs are imported",
)
def test_run_sonic_without_roms_prints_the_import_instructions_and_exits_2(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arcadebench",
            "run",
            "sonic",
            "--split",
            "test",
            "--out",
            str(tmp_path / "out"),
        ],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("arcadebench: error: ")
    assert IMPORT in lines[0]
    missing = [s for s in SONIC.retro_games if not sonic_rom(s)]
    for game in missing:
        assert f"{game}-v0" in lines[0] and SONIC.retro_games[game].rom_sha1[0] in lines[0]
    assert not (tmp_path / "out").exists()  # nothing started


def test_run_of_a_split_with_a_missing_rom_exits_2_before_any_worker(spec_path, tmp_path, capsys):
    assert main(["run", spec_path, "--split", "test", "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"arcadebench: error: {NOROM_MISSING}\n"
    assert not (tmp_path / "out").exists()
    with pytest.raises(RomNotFound, match=re.escape(NOROM_MISSING)):
        arcadebench.evaluate("random", spec_path, split="test", steps=10, log_dir=tmp_path / "x")


# -- a learning agent per test level ----------------------------------------------------


def test_each_test_level_gets_a_fresh_jerk_for_the_step_budget(spec_path, tmp_path, capsys):
    out = tmp_path / "out"
    status = main(
        [
            "run",
            spec_path,
            "--games",
            *TEST_LEVELS,
            "--agent",
            "jerk",
            "--steps",
            "2000",
            "--workers",
            "2",
            "--out",
            str(out),
            "--progress",
            "off",
            "--reps",
            "50",
        ]
    )
    assert status == 0, capsys.readouterr().err
    table = capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())["algorithms"]["jerk"]
    means = []
    for level in TEST_LEVELS:
        lines = (out / "jerk" / "sonic-airstriker" / level / "0.jsonl").read_text().splitlines()
        records = [json.loads(line) for line in lines]
        assert records[0]["kind"] == "header" and records[0]["algorithm"] == "jerk"
        assert records[0]["settings"]["action_set"] == "buttons"  # what JERK asks for
        episodes = [r for r in records if r["kind"] == "episode"]
        assert episodes[-1]["total_steps"] == 2000  # the budget, enforced by the monitor
        assert all(e["complete"] for e in episodes[:-1])
        assert all(e["frames"] <= 4 * e["steps"] for e in episodes)
        assert {e["end_reason"] for e in episodes[:-1]} <= {"life_lost", "level_complete"}
        returns = [e["return"] for e in episodes if e["complete"]]
        assert len(returns) >= 3
        # Section 3.9: a level's score is the mean return of all its episodes
        assert results["games"][level]["raw"] == pytest.approx(np.mean(returns))
        means.append(np.mean(returns))
    assert results["aggregates"]["raw"]["mean"] == pytest.approx(np.mean(means))
    assert "published results (Table 1)" in table
    assert re.search(r"jerk \(this run\)\s+[\d,.]+", table) and "1,904.00" in table


def test_a_retro_protocol_plays_one_environment_per_worker(spec_path, tmp_path):
    """stable-retro runs one emulator per process: lanes of several are refused at once."""
    with pytest.raises(arcadebench.ArcadebenchError, match="`num_envs` must be 1 for the"):
        arcadebench.evaluate(
            "random", spec_path, [TEST_LEVELS[0]], episodes=1, num_envs=2, log_dir=tmp_path
        )
    assert not list(tmp_path.iterdir())
