"""Episode-monitor overhead: stepping the protocol env with and without its monitor (target <= 2 %).

First the monitor's own per-step cost, exactly: stepping a no-op environment through it (the
difference from stepping the no-op env directly, in microseconds), set against the time of one
protocol step. Then end to end: the protocol stack of arcadebench/SABER-Pong-v0 is stepped
through (a) the wrapper just below the
monitor, (b) the monitor without a log, and (c) the monitor writing a log, with the same seeded
actions; each case plays the same number of steps (episodes end and restart as they come), the
cases interleave, and the median of several repeats is reported with the overhead against (a).

    .venv/bin/python perf/bench_monitor.py [--steps 20000] [--repeat 7]

Writes perf/results/bench_monitor.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
import timeit
from pathlib import Path

import gymnasium as gym
import numpy as np

import arcadebench  # noqa: F401 - registers the ids
from arcadebench._table import render_table
from arcadebench.wrappers.monitor import EpisodeMonitor, find_monitor, monitor

RESULTS = Path(__file__).parent / "results"
ENV_ID = "arcadebench/SABER-Pong-v0"


def play(env: gym.Env, actions: np.ndarray) -> float:
    env.reset(seed=0)
    step = env.step
    start = time.perf_counter()
    for action in actions:
        _, _, terminated, truncated, _ = step(action)
        if terminated or truncated:
            env.reset()
    return time.perf_counter() - start


class NullEnv(gym.Env):
    """Steps in no time, with a protocol-like ``info`` (frame counter, ``info["arcadebench"]``)."""

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(18)

    def __init__(self) -> None:
        self.info = {"episode_frame_number": 0, "arcadebench": {"stuck_frames": 0}}

    def reset(self, *, seed=None, options=None):  # noqa: ANN001, ANN201
        return 0, self.info

    def step(self, action):  # noqa: ANN001, ANN201
        return 0, 0.0, False, False, self.info


def per_step_cost_us(n: int = 500_000) -> float:
    """Microseconds the monitor adds to one step (best of 5)."""
    bare, watched = NullEnv(), EpisodeMonitor(NullEnv(), "saber", "pong")
    watched.reset(seed=0)
    bare_t = min(timeit.repeat(lambda: bare.step(0), number=n, repeat=5))
    watched_t = min(timeit.repeat(lambda: watched.step(0), number=n, repeat=5))
    return (watched_t - bare_t) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    actions = np.random.default_rng(0).integers(18, size=args.steps).tolist()
    with tempfile.TemporaryDirectory() as tmp:
        bare_env = gym.make(ENV_ID, disable_env_checker=True)
        below = find_monitor(bare_env).env  # the stack without the monitor
        quiet = find_monitor(gym.make(ENV_ID, disable_env_checker=True))
        logged = find_monitor(monitor(gym.make(ENV_ID, disable_env_checker=True), log_dir=tmp))
        cases = {"without monitor": below, "monitor, no log": quiet, "monitor, logging": logged}
        times: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.repeat):
            for name, env in cases.items():
                times[name].append(play(env, actions))
        episodes = logged.episode
        for env in cases.values():
            env.close()
    base = statistics.median(times["without monitor"])
    cost = per_step_cost_us()
    step_us = 1e6 * base / args.steps
    print(
        f"monitor cost per step: {cost:.2f} us = {100 * cost / step_us:.3f} % of a protocol step "
        f"({step_us:.0f} us)\n"
    )
    rows, report = [], {}
    for name, samples in times.items():
        median = statistics.median(samples)
        report[name] = {
            "seconds": median,
            "steps_per_s": args.steps / median,
            "overhead_pct": 100 * (median / base - 1),
        }
        rows.append([name, args.steps / median, 100 * (median / base - 1)])
    print(
        render_table(
            ["case", "steps/s", "overhead %"],
            rows,
            title=f"{ENV_ID}: {args.steps:,} steps x {args.repeat} repeats (median), "
            f"{episodes // args.repeat} episodes logged per repeat",
        )
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_monitor.json").write_text(
        json.dumps(
            {
                "env": ENV_ID,
                "steps": args.steps,
                "repeat": args.repeat,
                "cases": report,
                "monitor_us_per_step": cost,
                "monitor_pct_of_step": 100 * cost / step_us,
                "machine": platform.processor() or platform.machine(),
                "python": platform.python_version(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
