"""Replayable episodes: what a run's recording costs on disk, and verifying it.

A SABER run of ``--frames`` emulator frames (10M by default) is played with random actions on
``arcadebench.make_vec`` (8 environments, the protocol's settings, logged and recorded, seeded
once: each env's later episodes continue its stream), and a second run of ``--single-frames``
frames on one ``gym.make`` environment reset without a seed (each episode's start is a
snapshot of the emulator, the most a recording stores). For each: the steps, episodes, the size
of ``<run>.replay`` (in all, a step; its actions a step, compressed and in base64, against
the target of "at most 1 byte per agent step plus one start state per episode"; the rest of each
line an episode: its start, reward trail and fields) and of the log itself, then ``verify``
re-simulating every episode on every core, its wall time set against the raw emulator's for the
same steps split over the cores (ale-py's ``AtariEnv`` with SABER's settings, timed apart in
this process: "emulator speed on every core" is a ratio of 1).

    .venv/bin/python perf/bench_replay.py [--frames 10000000] [--single-frames 1000000]

Writes perf/results/bench_replay.json.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from _timing import Target, parser, report_targets, step_player, table, write_json
from ale_py.env import AtariEnv

import arcadebench
from arcadebench.benchmarks.replay import verify
from arcadebench.records import replay_path

FRAMESKIP = 4


def raw_us_per_step(steps: int = 20_000) -> float:
    """Microseconds a raw ale-py step takes with SABER's emulator settings."""
    env = AtariEnv(
        "pong", frameskip=FRAMESKIP, repeat_action_probability=0.25, full_action_space=True
    )
    actions = np.random.default_rng(0).integers(18, size=steps).tolist()
    seconds = step_player(env, actions)()
    env.close()
    return 1e6 * seconds / steps


def batched_run(folder: Path, frames: int) -> tuple[int, float]:
    """A recorded SABER Pong run on 8 batched envs; its steps and seconds."""
    envs = arcadebench.make_vec("saber", "pong", 8, log_dir=folder, run="batched")
    rng = np.random.default_rng(0)
    envs.reset(seed=0)
    steps = 0
    start = time.perf_counter()
    while steps * FRAMESKIP < frames:
        envs.step(rng.integers(18, size=8))
        steps += 8
    envs.close()
    return steps, time.perf_counter() - start


def single_run(folder: Path, frames: int) -> tuple[int, float]:
    """A recorded SABER Pong run on one env reset without seeds; its steps and seconds."""
    env: Any = gym.make("arcadebench/SABER-Pong-v0", log_dir=folder, run="single")
    rng = np.random.default_rng(0)
    env.reset()
    steps = 0
    start = time.perf_counter()
    while steps * FRAMESKIP < frames:
        *_, terminated, truncated, _ = env.step(int(rng.integers(18)))
        steps += 1
        if terminated or truncated:
            env.reset()
    env.close()
    return steps, time.perf_counter() - start


def measure(folder: Path, run: str, steps: int, raw_us: float, cores: int) -> dict[str, Any]:
    """Sizes and the verification of one run."""
    log = next(folder.rglob(f"{run}.jsonl"))
    replay = replay_path(log)
    start = time.perf_counter()
    found = verify(log)
    seconds = time.perf_counter() - start
    (checked,) = found.runs
    episodes = len(checked.episodes)
    raw = raw_us * 1e-6 * steps / cores
    lines = replay.read_text(encoding="utf-8").splitlines()
    return {
        "steps": steps,
        "episodes": episodes,
        "replay_bytes": replay.stat().st_size,
        "action_bytes": sum(len(json.loads(line)["actions"]) for line in lines),
        "log_bytes": log.stat().st_size,
        "verified": checked.tally("verified"),
        "verify_s": seconds,
        "raw_emulator_s": raw,
        "verify_over_raw": seconds / raw,
    }


def main() -> None:
    """Play both runs, measure, print and save."""
    cli = parser(__doc__)
    cli.add_argument("--frames", type=int, default=10_000_000)
    cli.add_argument("--single-frames", type=int, default=1_000_000)
    args = cli.parse_args()
    cores = len(os.sched_getaffinity(0))
    raw_us = raw_us_per_step()
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        folder = Path(tmp)
        steps, played = batched_run(folder, args.frames)
        batched = measure(folder, "batched", steps, raw_us, cores) | {"play_s": played}
        steps, played = single_run(folder, args.single_frames)
        single = measure(folder, "single", steps, raw_us, cores) | {"play_s": played}
    runs = {
        f"make_vec, 8 envs, {args.frames:,} frames": batched,
        f"gym.make, unseeded resets, {args.single_frames:,} frames": single,
    }
    rows = [
        [
            name,
            r["steps"],
            r["episodes"],
            r["replay_bytes"] / 1e6,
            r["replay_bytes"] / r["steps"],
            r["action_bytes"] / r["steps"],
            (r["replay_bytes"] - r["action_bytes"]) / max(1, r["episodes"]),
            r["log_bytes"] / 1e6,
            f"{r['verified']:,} of {r['episodes']:,}",
            r["verify_s"],
            r["verify_over_raw"],
        ]
        for name, r in runs.items()
    ]
    print(
        table(
            [
                "SABER Pong run, random actions",
                "steps",
                "episodes",
                "replay MB",
                "bytes/step",
                "actions B/step",
                "rest B/episode",
                "log MB",
                "verified",
                "verify s",
                "x raw emulator",
            ],
            rows,
            f"recordings and their verification on {cores} cores (raw ale-py: {raw_us:.0f} us a "
            "step)",
        )
    )
    print()
    targets = report_targets(
        [
            Target(
                "recording of a seeded batched run, actions' bytes a step on disk",
                batched["action_bytes"] / batched["steps"],
                "<=",
                1.0,
                " B",
            ),
            Target(
                "recording of a seeded batched run, all its bytes a step on disk (state digests "
                "included)",
                batched["replay_bytes"] / batched["steps"],
                "<=",
                1.5,
                " B",
            ),
            Target(
                "verification of a 10M-frame run / raw emulator on every core",
                batched["verify_over_raw"],
                "<=",
                1.5,
            ),
        ]
    )
    write_json(
        "bench_replay",
        {
            "frames": args.frames,
            "single_frames": args.single_frames,
            "runs": runs,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    main()
