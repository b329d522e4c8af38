"""Probability of improvement and IQM sample-efficiency bands: arcadebench against rliable.

Two statistics of Agarwal et al. (2021), on the same score matrices in both:

- P(X > Y) with its stratified-bootstrap interval, X and Y resampled independently: rliable's
  ``get_interval_estimates({"x,y": [x, y]}, probability_of_improvement)`` (a Mann-Whitney test
  per game and repetition) against ``improvement_interval`` (one matrix product per game for a
  batch of repetitions, ``scoring/bootstrap.py``);
- the IQM sample-efficiency curve with its bands at every point: rliable's recipe on a
  ``(runs, games, points)`` array (``lambda s: [aggregate_iqm(s[..., k]) for k in points]``)
  against ``stratified_interval(matrix_at_point, aggregate_iqm)`` at each point, as
  ``arcadebench score --curve`` bootstraps each point.

Reports the time of each (interleaved rounds, medians), the speed-up (median of the per-round
ratios), and how far the interval endpoints of the two are apart in units of the interval's
width, next to rliable's own Monte-Carlo noise (rliable with another global seed).

    .venv/bin/python perf/bench_statistics.py [--games 26] [--runs 10] [--points 20]
                                               [--reps 2000] [--rounds 3]

Needs rliable (``pip install rliable "pandas<3"``, in the test extra). Writes
perf/results/bench_statistics.json.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
from _timing import (
    Target,
    interleave,
    median,
    parser,
    ratio,
    report_targets,
    table,
    timed,
    write_json,
)

from arcadebench.benchmarks.scoring.bootstrap import improvement_interval, stratified_interval
from arcadebench.benchmarks.scoring.metrics import aggregate_iqm

Intervals = np.ndarray  # (2, k): lower bounds, then upper bounds


def scores(rng: np.random.Generator, runs: int, games: int, shift: float = 0.0) -> np.ndarray:
    """Human-normalised-like scores (fractions of human): a per-game level times run noise."""
    level = rng.lognormal(0.0, 1.0, size=games)
    return level * rng.gamma(4.0, 0.25, size=(runs, games)) + shift


def ours_improvement(x: np.ndarray, y: np.ndarray, reps: int, seed: int) -> Intervals:
    _, interval = improvement_interval(x, y, reps=reps, seed=seed)
    return interval[:, None]


def theirs_improvement(x: np.ndarray, y: np.ndarray, reps: int, seed: int) -> Intervals:
    from rliable import library, metrics

    np.random.seed(seed)  # rliable draws from the global RNG whatever its random_state
    cis = library.get_interval_estimates(
        {"x,y": [x, y]}, metrics.probability_of_improvement, reps=reps
    )[1]
    return np.asarray(cis["x,y"]).reshape(2, 1)


def ours_curve(curve: np.ndarray, reps: int, seed: int) -> Intervals:
    bounds = [
        stratified_interval(curve[..., k], aggregate_iqm, reps=reps, seed=seed + k)[1][:, 0]
        for k in range(curve.shape[-1])
    ]
    return np.stack(bounds, axis=1)


def theirs_curve(curve: np.ndarray, reps: int, seed: int) -> Intervals:
    from rliable import library, metrics

    def iqm(s: np.ndarray) -> np.ndarray:
        return np.array([metrics.aggregate_iqm(s[..., k]) for k in range(s.shape[-1])])

    np.random.seed(seed)
    return np.asarray(library.get_interval_estimates({"a": curve}, iqm, reps=reps)[1]["a"])


def compare(
    name: str,
    ours: Callable[[int, int], Intervals],
    theirs: Callable[[int, int], Intervals],
    reps: int,
    rounds: int,
) -> dict[str, Any]:
    """Time both in interleaved rounds; how far their intervals are apart, in widths."""
    seeds = itertools.count(100)
    kept: dict[str, Intervals] = {}

    def case(function: Callable[[int, int], Intervals], key: str) -> Callable[[], float]:
        def compute() -> None:
            kept[key] = function(reps, next(seeds))

        return lambda: timed(compute)

    samples = interleave(
        {"arcadebench": case(ours, "arcadebench"), "rliable": case(theirs, "rliable")}, rounds
    )
    again = theirs(reps, 999)  # rliable against itself: its Monte-Carlo noise
    reference = ours(50 * reps, 12345)  # a near-exact bootstrap distribution
    width = reference[1] - reference[0]
    gaps = {
        "ours_vs_rliable": float((np.abs(kept["arcadebench"] - kept["rliable"]) / width).max()),
        "rliable_vs_rliable": float((np.abs(again - kept["rliable"]) / width).max()),
        "ours_vs_reference": float((np.abs(kept["arcadebench"] - reference) / width).max()),
        "rliable_vs_reference": float((np.abs(kept["rliable"] - reference) / width).max()),
    }
    return {
        "name": name,
        "seconds": {
            "arcadebench": median(samples["arcadebench"]),
            "rliable": median(samples["rliable"]),
            "arcadebench_all": samples["arcadebench"],
            "rliable_all": samples["rliable"],
        },
        "speedup": ratio(samples, "arcadebench", "rliable"),
        "max_endpoint_gap_over_width": gaps,
    }


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--games", type=int, default=26)
    cli.add_argument("--runs", type=int, default=10)
    cli.add_argument("--points", type=int, default=20, help="points of the curve")
    cli.add_argument("--reps", type=int, default=2000)
    cli.add_argument("--rounds", type=int, default=3, help="interleaved rounds")
    args = cli.parse_args()

    rng = np.random.default_rng(0)
    x = scores(rng, args.runs, args.games)
    y = scores(rng, args.runs, args.games, shift=0.1)
    # a learning curve: each run's score grows with training towards its final score
    final = scores(rng, args.runs, args.games)
    progress = np.linspace(0.05, 1.0, args.points) ** 0.5
    curve = final[..., None] * progress * rng.gamma(20.0, 0.05, size=(*final.shape, args.points))

    results = [
        compare(
            f"P(X > Y), {args.games} games x {args.runs} runs each",
            lambda reps, seed: ours_improvement(x, y, reps, seed),
            lambda reps, seed: theirs_improvement(x, y, reps, seed),
            args.reps,
            args.rounds,
        ),
        compare(
            f"IQM curve, {args.points} points x {args.games} games x {args.runs} runs",
            lambda reps, seed: ours_curve(curve, reps, seed),
            lambda reps, seed: theirs_curve(curve, reps, seed),
            args.reps,
            args.rounds,
        ),
    ]
    print(
        table(
            ["", "arcadebench s", "rliable 1.2.0 s", "speed-up"],
            [
                [r["name"], r["seconds"]["arcadebench"], r["seconds"]["rliable"], r["speedup"]]
                for r in results
            ],
            f"{args.reps} bootstrap repetitions ({args.rounds} interleaved rounds, medians)",
            digits=4,
        )
    )
    print()
    print(
        table(
            ["", "|ours-rliable|/w", "|rliable-rliable|/w", "|ours-ref|/w", "|rliable-ref|/w"],
            [[r["name"], *r["max_endpoint_gap_over_width"].values()] for r in results],
            "largest endpoint gap in interval widths (w: a reference interval of "
            f"{50 * args.reps:,} repetitions)",
            digits=3,
        )
    )
    print()
    targets = [
        Target("P(X > Y) interval, arcadebench / rliable", results[0]["speedup"], ">=", 20.0),
        Target("IQM curve bands, arcadebench / rliable", results[1]["speedup"], ">=", 5.0),
    ]
    import rliable

    write_json(
        "bench_statistics",
        {
            "shape": {
                "games": args.games,
                "runs": args.runs,
                "points": args.points,
                "reps": args.reps,
            },
            "rounds": args.rounds,
            "cases": results,
            "targets": report_targets(targets),
            "rliable": getattr(rliable, "__version__", "1.2.0"),
        },
    )


if __name__ == "__main__":
    main()
