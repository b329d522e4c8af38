"""Stratified bootstrap CIs: arcadebench's vectorised bootstrap against rliable on the same data.

57 games x 10 runs x 2,000 repetitions; the statistic is the four rliable aggregates (mean,
median, IQM, optimality gap) at once, as one `get_interval_estimates` call in rliable. Reports
the time of each (median of several runs), the speed-up, and how far the two sets of interval
endpoints are apart, in units of the interval width, next to the Monte-Carlo noise of rliable
itself (two rliable runs with different global seeds).

    .venv/bin/python perf/bench_bootstrap.py [--reps 2000] [--repeat 5]

Needs rliable (``pip install rliable "pandas<3"``). Writes perf/results/bench_bootstrap.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from arcadebench._table import render_table
from arcadebench.benchmarks.bootstrap import bootstrap_distribution, percentile_interval
from arcadebench.benchmarks.scoring import (
    aggregate_iqm,
    aggregate_mean,
    aggregate_median,
    aggregate_optimality_gap,
)

RESULTS = Path(__file__).parent / "results"


def ours_statistic(x: np.ndarray) -> np.ndarray:
    return np.stack(
        [
            aggregate_mean(x),
            aggregate_median(x),
            aggregate_iqm(x),
            aggregate_optimality_gap(x, 1.0),
        ],
        axis=-1,
    )


def ours(scores: np.ndarray, reps: int, seed: int) -> np.ndarray:
    samples = bootstrap_distribution(scores, ours_statistic, reps=reps, seed=seed)
    return percentile_interval(samples, 0.95)


def theirs(scores: np.ndarray, reps: int, seed: int) -> np.ndarray:
    from rliable import library, metrics

    def func(x):
        return np.array(
            [
                metrics.aggregate_mean(x),
                metrics.aggregate_median(x),
                metrics.aggregate_iqm(x),
                metrics.aggregate_optimality_gap(x),
            ]
        )

    np.random.seed(seed)  # rliable draws from the global RNG whatever its random_state
    return library.get_interval_estimates({"a": scores}, func, reps=reps)[1]["a"]


def timed(function, *args, repeat: int) -> tuple[float, list[float], np.ndarray]:
    times, result = [], None
    for i in range(repeat):
        start = time.perf_counter()
        result = function(*args[:-1], args[-1] + i)
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=57)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    # human-normalised-like scores (fraction of human): a per-game level times run noise
    scores = rng.lognormal(0.0, 1.0, size=args.games) * rng.gamma(
        4.0, 0.25, size=(args.runs, args.games)
    )

    ours(scores, 50, 0)  # warm-up (imports, first allocation)
    t_ours, all_ours, ci_ours = timed(ours, scores, args.reps, 100, repeat=args.repeat)
    theirs(scores, 10, 0)
    t_theirs, all_theirs, ci_theirs = timed(
        theirs, scores, args.reps, 100, repeat=max(1, args.repeat // 2 + 1)
    )
    ci_theirs_2 = theirs(scores, args.reps, 999)
    ci_reference = ours(scores, 100_000, 12345)  # a near-exact bootstrap distribution

    width = ci_reference[1] - ci_reference[0]
    apart = np.abs(ci_ours - ci_theirs) / width
    noise = np.abs(ci_theirs_2 - ci_theirs) / width
    ours_err = np.abs(ci_ours - ci_reference) / width
    theirs_err = np.abs(ci_theirs - ci_reference) / width
    names = ["mean", "median", "iqm", "optimality_gap"]

    rows = [
        [
            name,
            f"[{ci_ours[0, i]:.4f}, {ci_ours[1, i]:.4f}]",
            f"[{ci_theirs[0, i]:.4f}, {ci_theirs[1, i]:.4f}]",
            float(apart[:, i].max()),
            float(noise[:, i].max()),
            float(ours_err[:, i].max()),
            float(theirs_err[:, i].max()),
        ]
        for i, name in enumerate(names)
    ]
    print(
        render_table(
            [
                "aggregate",
                "arcadebench 95% CI",
                "rliable 95% CI",
                "|ours-rliable|/w",
                "|rliable-rliable|/w",
                "|ours-ref|/w",
                "|rliable-ref|/w",
            ],
            rows,
            title=f"{args.games} games x {args.runs} runs x {args.reps} reps"
            " (w = width of a 100k-rep reference CI)",
            digits=3,
        )
    )
    print()
    speedup = t_theirs / t_ours
    print(
        render_table(
            ["", "median s", "all runs s"],
            [
                ["arcadebench", t_ours, ", ".join(f"{t:.4f}" for t in all_ours)],
                ["rliable 1.2.0", t_theirs, ", ".join(f"{t:.3f}" for t in all_theirs)],
                ["speed-up", speedup, ""],
            ],
            title="time for the four aggregates' CIs",
            digits=4,
        )
    )

    RESULTS.mkdir(exist_ok=True)
    import rliable

    report = {
        "benchmark": "bootstrap",
        "shape": {"games": args.games, "runs": args.runs, "reps": args.reps},
        "seconds": {
            "arcadebench": t_ours,
            "rliable": t_theirs,
            "arcadebench_all": all_ours,
            "rliable_all": all_theirs,
        },
        "speedup": speedup,
        "intervals": {
            name: {
                "arcadebench": ci_ours[:, i].tolist(),
                "rliable": ci_theirs[:, i].tolist(),
                "reference_100k": ci_reference[:, i].tolist(),
            }
            for i, name in enumerate(names)
        },
        "max_endpoint_gap_over_width": {
            "ours_vs_rliable": float(apart.max()),
            "rliable_vs_rliable": float(noise.max()),
            "ours_vs_reference": float(ours_err.max()),
            "rliable_vs_reference": float(theirs_err.max()),
        },
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "rliable": getattr(rliable, "__version__", "1.2.0"),
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
        },
    }
    out = RESULTS / "bench_bootstrap.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
