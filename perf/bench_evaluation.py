"""Evaluating a trained agent: ``arcadebench run`` against stable-baselines3's ``evaluate_policy``.

Every paper ends by playing its trained agent under the protocol, so arcadebench's runner is held to
SB3's own loop (a runner with a process per job, torch imported and the model loaded in each, one
``predict`` per step, is 13x slower than it). Here the same saved PPO ``CnnPolicy`` (trained as the
README's SB3 block trains it) plays the same number of SABER Pong episodes, in interleaved rounds,
each case a fresh process timed from its start to its exit:

- ``arcadebench run saber --games Pong --agent sb3:PPO:<model> --episodes E`` (the whole
  command: workers started, the model loaded once in each, the episodes played in lanes of
  ``--envs`` environments with one ``predict`` per step, the logs, scoring, ``results.json``
  and the table), with the default 8 environments per worker and with 1 (batch-1 inference);
- SB3 as its users run it: a script that imports SB3, loads the model with ``PPO.load``, makes
  ``make_sb3_vec_env("saber", "Pong", 8)`` (ale-py's batched emulator, 8 envs) and calls
  ``evaluate_policy(model, env, n_eval_episodes=E)``.

Throughput is agent steps per second: the episodes' steps (the logs', SB3's lengths) over the
wall time. Two views: *whole command* (each process from start to exit, which is what a user
waits for) and *in-run* (the playing loop only: SB3's ``evaluate_policy`` call; arcadebench's
from the first episode's start to the last one's end, read from the logs' time stamps). The
ratios are medians of per-round ratios.

    .venv/bin/python perf/bench_evaluation.py [--episodes 8 32] [--rounds 5] [--model PATH]

Writes perf/results/bench_evaluation.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _timing import Target, interleave, median, parser, report_targets, table, write_json

PYTHON = sys.executable
TRAIN = """
import sys
import torch
from stable_baselines3 import PPO
from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env
torch.set_num_threads(1)
envs = make_sb3_vec_env("saber", "Pong", 4, log_dir=False)
model = PPO("CnnPolicy", envs, n_steps=32, batch_size=64, device="cpu", seed=0)
model.learn(256)
model.save(sys.argv[1])
envs.close()
"""
SB3_EVALUATION = """
import json, sys, time
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env
model = PPO.load(sys.argv[1], device="cpu")
env = make_sb3_vec_env("saber", "Pong", 8, log_dir=False)
start = time.perf_counter()
_, lengths = evaluate_policy(model, env, n_eval_episodes=int(sys.argv[2]),
                             return_episode_rewards=True)
played = time.perf_counter() - start
env.close()
print(json.dumps({"steps": int(sum(lengths)), "in_run": played}))
"""


def arcadebench_case(
    model: Path, episodes: int, envs: int, found: dict[str, list[float]], name: str
) -> Callable[[], float]:
    """A fresh ``arcadebench run``; records its steps and in-run seconds, returns its wall time."""

    def run() -> float:
        with tempfile.TemporaryDirectory() as out:
            command = [
                PYTHON, "-m", "arcadebench", "run", "saber", "--games", "Pong",
                "--agent", f"sb3:PPO:{model}", "--episodes", str(episodes),
                "--envs", str(envs), "--out", out, "--progress", "off", "--reps", "0",
            ]  # fmt: skip
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True)
            wall = time.perf_counter() - start
            steps, span = _played(Path(out))
        found[f"{name} steps"].append(steps)
        found[f"{name} in-run"].append(span)
        return wall

    return run


def _played(out: Path) -> tuple[int, float]:
    """Steps, and seconds from the first episode's start to the last one's end, of the logs."""
    starts, ends, steps = [], [], 0
    for log in out.rglob("*.jsonl"):
        for line in log.read_text().splitlines():
            record = json.loads(line)
            if record["kind"] == "episode":
                steps += record["steps"]
                ends.append(record["time"])
                starts.append(record["time"] - record["wall_time"])
    return steps, max(ends) - min(starts)


def sb3_case(model: Path, episodes: int, found: dict[str, list[float]]) -> Callable[[], float]:
    """SB3's script in a fresh process; records its steps and in-run seconds."""

    def run() -> float:
        start = time.perf_counter()
        done = subprocess.run(
            [PYTHON, "-c", SB3_EVALUATION, str(model), str(episodes)],
            check=True,
            capture_output=True,
            text=True,
        )
        wall = time.perf_counter() - start
        result = json.loads(done.stdout.strip().splitlines()[-1])
        found["sb3 steps"].append(result["steps"])
        found["sb3 in-run"].append(result["in_run"])
        return wall

    return run


def measure(model: Path, episodes: int, rounds: int) -> dict[str, Any]:
    """One episode count: the cases in interleaved rounds; prints its tables, returns its data."""
    found: dict[str, list[float]] = {
        f"{name} {what}": []
        for name in ("arcadebench", "arcadebench --envs 1", "sb3")
        for what in ("steps", "in-run")
    }
    cases = {
        "arcadebench": arcadebench_case(model, episodes, 8, found, "arcadebench"),
        "arcadebench --envs 1": arcadebench_case(model, episodes, 1, found, "arcadebench --envs 1"),
        "sb3": sb3_case(model, episodes, found),
    }
    walls = interleave(cases, rounds)
    found = {key: values[-rounds:] for key, values in found.items()}  # not the warm-up
    rates = {
        name: {
            "whole": [s / w for s, w in zip(found[f"{name} steps"], walls[name], strict=True)],
            "in-run": [
                s / t for s, t in zip(found[f"{name} steps"], found[f"{name} in-run"], strict=True)
            ],
        }
        for name in cases
    }

    def paired(case: str, view: str, base_view: str) -> float:
        return median(
            [a / b for a, b in zip(rates[case][view], rates["sb3"][base_view], strict=True)]
        )

    rows = [
        [
            name,
            int(median(found[f"{name} steps"])),
            median(walls[name]),
            median(rates[name]["whole"]),
            median(found[f"{name} in-run"]),
            median(rates[name]["in-run"]),
        ]
        for name in cases
    ]
    print(
        table(
            ["case", "steps", "wall s", "steps/s (whole)", "in-run s", "steps/s (in-run)"],
            rows,
            f"SABER Pong, {episodes} episodes of a saved PPO CnnPolicy, {rounds} interleaved "
            "rounds (medians)",
        )
    )
    ratios = {
        "whole command / SB3 whole script": paired("arcadebench", "whole", "whole"),
        "whole command / SB3 evaluate_policy (in-run)": paired("arcadebench", "whole", "in-run"),
        "in-run, 8 envs / SB3 evaluate_policy (in-run)": paired("arcadebench", "in-run", "in-run"),
        "in-run, 1 env / SB3 evaluate_policy (in-run)": paired(
            "arcadebench --envs 1", "in-run", "in-run"
        ),
    }
    print()
    print(
        table(
            ["ratio (steps/s)", "median"],
            [[k, v] for k, v in ratios.items()],
            f"ratios, {episodes} episodes",
        )
    )
    print()
    return {"episodes": episodes, "walls": walls, "found": found, "ratios": ratios}


def main() -> None:
    """Train (or take) a model, time the cases for each episode count, print and save."""
    args = parser(__doc__)
    args.add_argument("--episodes", type=int, nargs="+", default=[8, 32])
    args.add_argument("--rounds", type=int, default=5)
    args.add_argument("--model", type=Path, help="a saved SB3 PPO CnnPolicy of SABER Pong")
    options = args.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = options.model
        if model is None:
            model = Path(tmp) / "ppo_pong.zip"
            subprocess.run([PYTHON, "-c", TRAIN, str(model)], check=True, capture_output=True)
        runs = [measure(model, episodes, options.rounds) for episodes in options.episodes]
    targets = []
    for run in runs:
        ratios, episodes = run["ratios"], run["episodes"]
        targets += [
            Target(
                f"arcadebench run / SB3 script, steps/s, {episodes} episodes (whole commands)",
                ratios["whole command / SB3 whole script"],
                ">=",
                1.3,
            ),
            Target(
                f"arcadebench run (whole command) / SB3 evaluate_policy call, {episodes} episodes",
                ratios["whole command / SB3 evaluate_policy (in-run)"],
                ">=",
                1.0,
            ),
            Target(
                f"batched loop, 8 envs / SB3 evaluate_policy call, {episodes} episodes (in-run)",
                ratios["in-run, 8 envs / SB3 evaluate_policy (in-run)"],
                ">=",
                0.95,
            ),
        ]
    write_json(
        "bench_evaluation",
        {"rounds": options.rounds, "runs": runs, "targets": report_targets(targets)},
    )


if __name__ == "__main__":
    main()
