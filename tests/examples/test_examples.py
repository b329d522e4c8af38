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
    assert (tmp_path / "r" / "random" / "atari5" / "qbert" / "0.jsonl").exists()


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


def test_a_training_example_too_short_for_an_episode_says_so_in_one_line(tmp_path):
    out = run_example("train_and_score.py", "--total-steps", "10", "--log-dir", "l", cwd=tmp_path)
    assert out.strip() == "no episode ended in 10 steps: nothing to score yet"


SPEC = str(REPO / "tests" / "data" / "specs" / "run_budget.yaml")  # 20k-frame budget, 8k/16k


def test_sb3_ppo_trains_on_one_run_is_scored_evaluated_and_reported(tmp_path):
    out = run_example(
        "sb3_ppo.py",
        *("--spec", SPEC, "--game", "breakout", "--num-envs", "4", "--n-steps", "64"),
        *("--timesteps", "2560", "--out", "o"),
        cwd=tmp_path,
    )
    # the callback's view in SB3's logger: the run's frames and the 8,000-frame checkpoint
    assert "arcadebench/" in out and "run_frames" in out and "checkpoint_8000/" in out
    (train,) = (tmp_path / "o" / "train").rglob("*.jsonl")
    records = [json.loads(line) for line in train.read_text().splitlines()]
    assert records[0]["algorithm"] == "ppo" and {r["env"] for r in records[1:]} == {0, 1, 2, 3}
    assert all(r["deviations"] == {} for r in records[1:])  # compliant
    # evaluated greedily by the runner under the model's name, then reported
    assert "ppo_breakout" in out
    assert (
        tmp_path / "o" / "eval" / "ppo_breakout" / "runbudget" / "breakout" / "1.jsonl"
    ).exists()
    assert (tmp_path / "o" / "report" / "report.html").exists()


SHORT_EPISODES = str(REPO / "tests" / "data" / "specs" / "short_episodes.yaml")  # 100 steps


def test_cleanrl_ppo_on_both_vector_paths(tmp_path):
    for vector in ("gym", "arcadebench"):
        out = run_example(
            "cleanrl_ppo.py",
            *("--vector", vector, "--spec", SHORT_EPISODES, "--num-envs", "4"),
            *("--num-steps", "32", "--total-steps", "512", "--out", vector),  # 128 steps each
            cwd=tmp_path,
        )
        assert "run frames" in out and "per game" in out
        (log,) = (tmp_path / vector).rglob("*.jsonl")
        episodes = [json.loads(line) for line in log.read_text().splitlines()][1:]
        assert {r["env"] for r in episodes} == {0, 1, 2, 3}  # every env ended an episode
        # the run's frames when an episode ended: every env's, the episodes in flight included
        assert episodes[-1]["total_frames"] >= sum(r["frames"] for r in episodes)
