"""Runner throughput: the same jobs with 1 and 2 workers (frames/s, wall time), and the main job.

Plays the Atari-5 games with the random agent, compliant settings, ``--episodes`` per game, once
with each worker count (fresh log directories), and reports emulator frames per second of wall
time and the speed-up. Each episode starts with ``reset(seed=...)`` (the determinism and resume
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
    for workers in (1, 2):
        frames = 0

        def count(event: tuple) -> None:
            nonlocal frames
            if event[0] == "episode":
                frames += event[2]["frames"]

        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            arcadebench.evaluate("random", "atari5", episodes=args.episodes, workers=workers, log_dir=tmp,
                                 progress="off", on_event=count)
            wall = time.perf_counter() - start
        report[workers] = {"wall_s": wall, "frames": frames, "frames_per_s": frames / wall}
        rows.append([workers, wall, frames, frames / wall])
    speedup = report[2]["frames_per_s"] / report[1]["frames_per_s"]
    print(render_table(["workers", "wall s", "frames", "frames/s"], rows,
                       title=f"atari5, random agent, {args.episodes} episode(s) per game"))
    seeded, plain = reset_cost()
    print(f"\nspeed-up with 2 workers: {speedup:.2f}x; reset with a seed {1000 * seeded:.0f} ms, "
          f"without {1000 * plain:.0f} ms")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "bench_runner.json").write_text(json.dumps(
        {"episodes": args.episodes, "workers": report, "speedup": speedup, "reset_seeded_s": seeded,
         "reset_plain_s": plain, "machine": platform.processor() or platform.machine(),
         "python": platform.python_version()}, indent=2))


if __name__ == "__main__":
    main()
