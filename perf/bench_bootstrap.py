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

import itertools
from collections.abc import Callable

import numpy as np
from _timing import interleave, median, parser, ratio, table, timed, write_json

from arcadebench.benchmarks.scoring.bootstrap import bootstrap_distribution, percentile_interval
from arcadebench.benchmarks.scoring.metrics import (
    aggregate_iqm,
    aggregate_mean,
    aggregate_median,
    aggregate_optimality_gap,
)


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

    def func(x: np.ndarray) -> np.ndarray:
        return np.array(
            [
                metrics.aggregate_mean(x),
                metrics.aggregate_median(x),
                metrics.aggregate_iqm(x),
                metrics.aggregate_optimality_gap(x),
            ]
        )

    np.random.seed(seed)  # rliable draws from the global RNG whatever its random_state
    return np.asarray(library.get_interval_estimates({"a": scores}, func, reps=reps)[1]["a"])


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--games", type=int, default=57)
    cli.add_argument("--runs", type=int, default=10)
    cli.add_argument("--reps", type=int, default=2000)
    cli.add_argument("--repeat", type=int, default=5, help="interleaved rounds")
    args = cli.parse_args()

    rng = np.random.default_rng(0)
    # human-normalised-like scores (fraction of human): a per-game level times run noise
    scores = rng.lognormal(0.0, 1.0, size=args.games) * rng.gamma(
        4.0, 0.25, size=(args.runs, args.games)
    )

    seeds = itertools.count(100)
    results: dict[str, np.ndarray] = {}

    def case(
        function: Callable[[np.ndarray, int, int], np.ndarray], name: str
    ) -> Callable[[], float]:
        def compute() -> None:
            results[name] = function(scores, args.reps, next(seeds))

        return lambda: timed(compute)

    samples = interleave(
        {"arcadebench": case(ours, "arcadebench"), "rliable": case(theirs, "rliable")}, args.repeat
    )
    ci_ours, ci_theirs = results["arcadebench"], results["rliable"]
    t_ours, t_theirs = median(samples["arcadebench"]), median(samples["rliable"])
    all_ours, all_theirs = samples["arcadebench"], samples["rliable"]
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
        table(
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
            f"{args.games} games x {args.runs} runs x {args.reps} reps"
            " (w = width of a 100k-rep reference CI)",
            digits=3,
        )
    )
    print()
    speedup = ratio(samples, "arcadebench", "rliable")
    print(
        table(
            ["", "median s", "all runs s"],
            [
                ["arcadebench", t_ours, ", ".join(f"{t:.4f}" for t in all_ours)],
                ["rliable 1.2.0", t_theirs, ", ".join(f"{t:.3f}" for t in all_theirs)],
                ["speed-up", speedup, ""],
            ],
            f"time for the four aggregates' CIs ({args.repeat} interleaved rounds, medians)",
            digits=4,
        )
    )

    import rliable

    report = {
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
        "rliable": getattr(rliable, "__version__", "1.2.0"),
    }
    write_json("bench_bootstrap", report)


if __name__ == "__main__":
    main()
