"""Scoring a synthetic 100,000-episode SABER log: time and peak memory (target: < 2 s, < 300 MB).

Two layouts of 100,000 episodes over the 57 games of SABER with a world record (one log file
per run, as the monitor writes them, each run reaching 200M frames so every checkpoint is
scored):

- ``1 run``: 57 games x 1 run x ~1,754 episodes (about 114k frames each);
- ``5 runs``: 57 games x 5 runs x ~351 episodes, so every block also gets bootstrap CIs
  (2,000 repetitions, at each of the 4 checkpoints and the end).

Each case is scored in fresh processes (``arcadebench.score``, ``--rounds`` of them, the cases
interleaved), each reporting the wall time of the call, its peak traced Python allocation
(tracemalloc, a second call) and the process's peak resident memory (ru_maxrss, including the
interpreter and numpy, about 70 MB of it before scoring); the table has the median time and
the largest peaks.

    .venv/bin/python perf/bench_score_log.py [--episodes 100000] [--rounds 3]

Writes perf/results/bench_score_log.json.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _timing import Target, interleave, median, parser, report_targets, table, write_json

import arcadebench

CHILD = r"""
import json, resource, sys, time, tracemalloc
import arcadebench
folder, reps = sys.argv[1], int(sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
results = arcadebench.score("saber", folder, reps=reps)
seconds = time.perf_counter() - start
peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
arcadebench.score("saber", folder, reps=reps)
traced = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
algo = results.algorithms["synthetic"]
print(json.dumps({"seconds": seconds, "rss_before_mb": before / 1024,
                  "rss_peak_mb": peak_rss / 1024,
                  "traced_peak_mb": traced / 2**20, "games": len(algo["games"]),
                  "episodes": sum(g["episodes"] for g in algo["games"].values()),
                  "checkpoints": sorted(algo.get("checkpoints", {})),
                  "has_ci": "ci" in algo["aggregates"],
                  "saber_median_end": algo["aggregates"]["saber"]["median"]}))
"""


def write_logs(folder: Path, episodes: int, runs: int) -> tuple[int, int]:
    """Write ``episodes`` episodes over 57 games x ``runs`` runs; returns (episodes, bytes)."""
    spec = arcadebench.load_spec("saber")
    games = [g for g, c in spec.constants.items() if c.world_record is not None][:57]
    per_run = episodes // (len(games) * runs)
    extra = episodes - per_run * len(games) * runs
    frames = 200_000_000 // per_run
    written, size = 0, 0
    for gi, game in enumerate(games):
        for run in range(runs):
            n = per_run + (1 if extra > 0 else 0)
            extra -= 1
            path = folder / "synthetic" / "saber" / game / f"{run}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            lines = [
                json.dumps(
                    {
                        "kind": "header",
                        "format": "arcadebench-log/1",
                        "spec": "saber",
                        "algorithm": "synthetic",
                    }
                )
            ]
            for i in range(n):
                lines.append(
                    json.dumps(
                        {
                            "kind": "episode",
                            "spec": "saber",
                            "spec_version": spec.version,
                            "spec_hash": spec.hash,
                            "env_id": f"arcadebench/SABER-{game}-v0",
                            "game": game,
                            "run": str(run),
                            "seed": run,
                            "episode": i,
                            "return": float((i * 37 + gi * 11 + run * 5) % 1000),
                            "steps": frames // 4,
                            "frames": frames,
                            "total_steps": (i + 1) * (frames // 4),
                            "total_frames": (i + 1) * frames,
                            "end_reason": "game_over",
                            "complete": True,
                            "rollover_rewards": [],
                            "deviations": {},
                            "wall_time": 12.5,
                            "time": 1764100000.0 + i,
                        }
                    )
                )
            text = "\n".join(lines) + "\n"
            path.write_text(text)
            written += n
            size += len(text)
    return written, size


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--episodes", type=int, default=100_000)
    cli.add_argument("--reps", type=int, default=2000)
    cli.add_argument("--rounds", type=int, default=3, help="fresh processes per case")
    args = cli.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        layouts: dict[str, dict[str, float]] = {}
        results: dict[str, list[dict[str, Any]]] = {}
        for runs in (1, 5):
            name = f"{runs} run{'s' if runs > 1 else ''}"
            folder = Path(tmp) / name.replace(" ", "_")
            written, size = write_logs(folder, args.episodes, runs)
            layouts[name] = {
                "runs_per_game": runs,
                "episodes_written": written,
                "log_mb": size / 2**20,
            }
            results[name] = []

        def child(name: str) -> Callable[[], float]:
            folder = Path(tmp) / name.replace(" ", "_")

            def run() -> float:
                done = subprocess.run(
                    [sys.executable, "-c", CHILD, str(folder), str(args.reps)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                result = json.loads(done.stdout.strip().splitlines()[-1])
                results[name].append(result)
                return float(result["seconds"])

            return run

        samples = interleave({name: child(name) for name in layouts}, args.rounds, warmup=0)
    cases = []
    for name, layout in layouts.items():
        found = results[name]
        cases.append(
            {
                "case": name,
                **layout,
                "seconds": median(samples[name]),
                "seconds_all": samples[name],
                "rss_before_mb": median([r["rss_before_mb"] for r in found]),
                "rss_peak_mb": max(r["rss_peak_mb"] for r in found),
                "traced_peak_mb": max(r["traced_peak_mb"] for r in found),
                **{k: found[-1][k] for k in ("games", "episodes", "checkpoints", "has_ci")},
            }
        )
    rows = [
        [
            c["case"],
            c["episodes_written"],
            c["log_mb"],
            c["seconds"],
            c["traced_peak_mb"],
            c["rss_before_mb"],
            c["rss_peak_mb"],
            "yes" if c["has_ci"] else "no",
            len(c["checkpoints"]),
        ]
        for c in cases
    ]
    print(
        table(
            [
                "case",
                "episodes in logs",
                "log MB",
                "score s",
                "traced peak MB",
                "RSS before MB",
                "RSS peak MB",
                "CIs",
                "checkpoints",
            ],
            rows,
            f"arcadebench.score('saber', <logs>) on {args.episodes:,} episodes over 57 games "
            f"(median of {args.rounds} fresh processes per case; peaks: the largest)",
        )
    )
    print()
    targets = report_targets(
        [
            Target(f"score {args.episodes:,} episodes, {c['case']}", c["seconds"], "<", 2.0, " s")
            for c in cases
        ]
        + [Target(f"peak memory, {c['case']}", c["rss_peak_mb"], "<", 300, " MB") for c in cases]
    )
    write_json(
        "bench_score_log",
        {
            "episodes": args.episodes,
            "reps": args.reps,
            "rounds": args.rounds,
            "cases": cases,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    main()
