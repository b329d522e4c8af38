"""The examples run as a new user runs them (each in seconds with a small budget)."""

from __future__ import annotations

import json
import subprocess
import sys

from testdata import REPO

EXAMPLES = REPO / "examples"


def run_example(name, *args, cwd):
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_evaluate_random(tmp_path):
    out = run_example(
        "evaluate_random.py", "--games", "qbert", "phoenix", "--out", "r", cwd=tmp_path
    )
    assert "per game" in out and "qbert" in out and "phoenix" in out
    assert (tmp_path / "r" / "results.json").exists()
    assert (tmp_path / "r" / "atari5" / "qbert" / "0.jsonl").exists()


def test_learning_agent(tmp_path):
    out = run_example(
        "learning_agent.py", "--games", "breakout", "--episodes", "2", "--out", "r", cwd=tmp_path
    )
    assert "learning_agent.BanditAgent" in out
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["algorithms"]["learning_agent.BanditAgent"]["games"]["breakout"]["episodes"] == 2


def test_train_and_score(tmp_path):
    out = run_example(
        "train_and_score.py", "--total-steps", "1500", "--log-dir", "logs", cwd=tmp_path
    )
    assert "episode ended (game_over)" in out
    assert "reinforce-linear" in out and "breakout" in out
    (log,) = (tmp_path / "logs").rglob("*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[0]["kind"] == "header" and records[0]["algorithm"] == "reinforce-linear"
    assert all(r["spec"] == "saber" and r["deviations"] == {} for r in records[1:])  # compliant
