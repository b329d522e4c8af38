"""Runner throughput: the same jobs with 1 and 2 workers (frames/s, wall time).

Two workloads with the random agent and compliant settings, each once per worker count (fresh
log directories): a balanced one (Phoenix, 4 seeds, equal-sized jobs: the speed-up the backend
can give) and the README's main job (the five Atari-5 games, whose wall time is set by the
longest game, Name This Game, at 2 workers). Reports emulator frames per second of wall time.
Each episode starts with ``reset(seed=...)`` (the determinism and resume
scheme), which makes ale-py reload the ROM; its cost is measured separately.

    .venv/bin/python perf/bench_runner.py [--episodes 2]

Writes perf/results/bench_runner.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from pathlib import Path

import gymnasium as gym

import arcadebench
from arcadebench._table import render_table

RESULTS = Path(__file__).parent / "results"


def reset_cost(n: int = 10) -> tuple[float, float]:
    """Seconds of one reset with a seed (ROM reload) and without."""
    env = gym.make("arcadebench/Atari5-Qbert-v0")
    env.reset(seed=0)
    start = time.perf_counter()
    for i in range(n):
        env.reset(seed=i)
    seeded = (time.perf_counter() - start) / n
    start = time.perf_counter()
    for _ in range(n):
        env.reset()
    plain = (time.perf_counter() - start) / n
    env.close()
    return seeded, plain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=2)
    args = parser.parse_args()
    rows, report = [], {}
    workloads = {"phoenix x 4 seeds": (["phoenix"], [0, 1, 2, 3]), "atari5 (main job)": (None, [0])}
    for (label, (games, seeds)), workers in [(w, n) for w in workloads.items() for n in (1, 2)]:
        frames = 0

        def count(event: tuple) -> None:
            nonlocal frames
            if event[0] == "episode":
                frames += event[2]["frames"]

        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            arcadebench.evaluate(
                "random",
                "atari5",
                games,
                episodes=args.episodes,
                seeds=seeds,
                workers=workers,
                log_dir=tmp,
                progress="off",
                on_event=count,
                reps=0,
            )
            wall = time.perf_counter() - start
        report[f"{label}, {workers} worker(s)"] = {
            "wall_s": wall,
            "frames": frames,
            "frames_per_s": frames / wall,
        }
        rows.append([label, workers, wall, frames, frames / wall])
    print(
        render_table(
            ["workload", "workers", "wall s", "frames", "frames/s"],
            rows,
            title=f"random agent, {args.episodes} episode(s) per job",
        )
    )
    seeded, plain = reset_cost()
    print(f"\nreset with a seed (ROM reload) {1000 * seeded:.0f} ms, without {1000 * plain:.0f} ms")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_runner.json").write_text(
        json.dumps(
            {
                "episodes": args.episodes,
                "runs": report,
                "reset_seeded_s": seeded,
                "reset_plain_s": plain,
                "machine": platform.processor() or platform.machine(),
                "python": platform.python_version(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
