"""Build a "MySuite-3" benchmark for a suite that is not Atari, then score a new agent with it.

The Atari-5 method (Aitchison et al. 2023, Algorithm 1) works for any suite with published
per-task scores: find the few tasks whose log-normalised scores best predict the median over all
tasks, write them as a spec, and from then on evaluate new agents on those tasks only.

Here the "published results" are simulated: 60 algorithms on 12 tasks of a made-up robotics
suite, drawn from a seeded generator (a general skill factor, an exploration factor and noise),
with 5% of the results missing. Run it:

    python examples/custom_suite_subset.py [--out DIR]
"""

from __future__ import annotations

import argparse
import csv
import tempfile
from pathlib import Path

import numpy as np

import arcadebench
from arcadebench.benchmarks.scoring.normalise import log_normalise, subset_estimate
from arcadebench.benchmarks.subset import (
    fit_predictions,
    nested_selection,
    prepare,
    read_scores,
    to_yaml,
)

TASKS = [
    "reach",
    "push",
    "pick",
    "place",
    "stack",
    "slide",
    "open_drawer",
    "close_drawer",
    "turn_knob",
    "press_button",
    "insert_peg",
    "find_key",
]


def simulate(
    rng: np.random.Generator, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Raw scores of ``n`` algorithms on TASKS, and the tasks' random/expert constants."""
    loading = np.linspace(0.6, 1.4, len(TASKS))  # how much each task rewards general skill
    exploration = np.where(np.isin(TASKS, ["insert_peg", "find_key", "stack"]), 1.0, 0.15)
    difficulty = rng.uniform(-0.5, 0.8, len(TASKS))
    random = rng.uniform(0.0, 50.0, len(TASKS)).round(1)
    expert = (random + rng.uniform(100.0, 1000.0, len(TASKS))).round(1)
    skill = rng.normal(0.0, 0.6, (n, 1))
    explore = rng.normal(0.0, 0.6, (n, 1))
    log_score = (
        2.0
        + loading * skill
        + exploration * explore
        - difficulty
        + rng.normal(0.0, 0.12, (n, len(TASKS)))
    )
    normalised = 10.0 ** np.maximum(log_score, 0.0) - 1.0  # percent of the expert score
    raw = random + (expert - random) * normalised / 100.0
    return raw, normalised, random, expert


def human_normalised(spec: arcadebench.Spec, task: str, raw: float) -> float:
    """100 (raw - random) / (human - random), from the constants the spec was written with."""
    constants = spec.constants[task]
    if constants.random is None or constants.human is None:  # NA in a spec; not in this one
        raise ValueError(f"{task} has no random or human score in spec {spec.name!r}")
    return 100.0 * (raw - constants.random) / (constants.human - constants.random)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, help="directory for scores.csv and mysuite.yaml (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="mysuite-"))
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(2023)

    # 1. The published results: a long table (algorithm, task, score, random, human).
    raw, _, random, expert = simulate(rng, 60)
    missing = rng.random(raw.shape) < 0.05
    scores_csv = out / "scores.csv"
    with open(scores_csv, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["algorithm", "task", "score", "random", "human"])
        for i, row in enumerate(raw):
            for j, task in enumerate(TASKS):
                if not missing[i, j]:
                    writer.writerow([f"algo{i:02d}", task, f"{row[j]:.2f}", random[j], expert[j]])

    # 2. Algorithm 1 with the paper's nesting: MySuite-3 > MySuite-1, a disjoint validation
    #    triple, and MySuite-6 = MySuite-3 + three more tasks.
    data = prepare(read_scores(scores_csv), min_games=10, min_algorithms=40)
    subsets = nested_selection(data, prefix="MySuite", sizes=(3, 1), validation=(3,), extended=6)
    for name, fit in subsets.items():
        print(
            f"{name:<14} {', '.join(fit.games)}  (weights "
            f"{', '.join(f'{c:.3f}' for c in fit.coefficients)}; "
            f"CV R2 {fit.cv_r2:.3f}, ~rel. err. {fit.cv_relative_error:.1f}%)"
        )
    predictions = fit_predictions(data, subsets["MySuite-3"])

    # 3. The spec: constants, subsets and per-task models, loadable like a built-in protocol.
    spec_path = out / "mysuite.yaml"
    spec_path.write_text(
        to_yaml(
            data,
            subsets,
            [predictions],
            name="mysuite",
            title="MySuite: 12 simulated manipulation tasks and their 3-task subset",
            citation="arcadebench examples/custom_suite_subset.py (simulated data)",
        )
    )
    spec = arcadebench.load_spec(str(spec_path))
    print(
        f"\nwrote {spec_path}: spec {spec.name!r}, {len(spec.games)} tasks, subsets "
        f"{', '.join(spec.subsets)}"
    )

    # 4. A new agent plays only the three MySuite-3 tasks; score it with the spec.
    new_raw, new_normalised, _, _ = simulate(np.random.default_rng(7), 1)
    played = {
        task: float(new_raw[0, TASKS.index(task)]) for task in spec.subsets["MySuite-3"].games
    }
    results = arcadebench.score(spec, {"new-agent": played}, reps=0)
    estimate = results.algorithms["new-agent"]["aggregates"]["mysuite3"]
    # the same number by hand: Eq. 1 on the log-normalised scores (Eqs. 3, 10-11)
    hns = [human_normalised(spec, t, played[t]) for t in spec.subsets["MySuite-3"].games]
    by_hand = float(subset_estimate(log_normalise(hns), spec.subsets["MySuite-3"].coefficients))
    true_median = float(np.median(new_normalised))
    print(
        f"new agent: MySuite-3 estimate of the 12-task median {estimate:.1f}% "
        f"(true median {true_median:.1f}%, by hand {by_hand:.1f}%)"
    )
    predicted = predictions.predict(dict(zip(spec.subsets["MySuite-3"].games, hns, strict=True)))
    worst = max(
        TASKS,
        key=lambda t: abs(
            np.log10(1 + predicted[t]) - np.log10(1 + new_normalised[0, TASKS.index(t)])
        ),
    )
    print(
        "per-task predictions (Section 4.4): explained variance "
        f"{100 * predictions.explained_variance:.1f}%, "
        f"worst-predicted task {worst}"
    )
    return {"estimate": estimate, "by_hand": by_hand, "true_median": true_median}


if __name__ == "__main__":
    main()
