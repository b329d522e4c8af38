"""Time the full Atari-5 subset search on the authors' data set.

Runs, on all 56 candidate games (Surround dropped by the 40-algorithm rule):
  * size 5 with 10-fold CV, 1 process and all available processes (C(56, 5) = 3,819,816 subsets);
  * the paper's whole nested selection (Atari-5/3/1, Atari-3/5-Val, Atari-10: ~5.2 M subsets).
The paper's own search "took approximately 1-hour on a 12-core machine" (Section 4.3). Each run
also checks that it selects the paper's subsets. Prints a table and writes
perf/results/bench_subset.json.

    .venv/bin/python perf/bench_subset.py [--quick]   # --quick: size 5 on all processes only
"""

from __future__ import annotations

import time

from _timing import machine, parser, table, write_json

import arcadebench
from arcadebench.benchmarks.subset import (
    ATARI5_DATASET,
    best_subsets,
    nested_selection,
    prepare,
    read_scores,
)


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--quick", action="store_true", help="only size 5 on all processes")
    args = cli.parse_args()
    host = machine()
    spec = arcadebench.load_spec("atari5")
    started = time.perf_counter()
    data = prepare(read_scores(ATARI5_DATASET))
    load_seconds = time.perf_counter() - started
    runs = []
    process_counts = [host["cpus"]] if args.quick else sorted({1, host["cpus"]})
    for processes in process_counts:
        search = best_subsets(data, 5, processes=processes)
        runs.append(
            {
                "run": "size 5, 10-fold CV",
                "processes": search.processes,
                "subsets": search.n_subsets,
                "non_negative": search.n_nonnegative,
                "seconds": round(search.seconds, 2),
                "subsets_per_second": round(search.n_subsets / search.seconds),
                "selected": list(search.best.games),
                "matches_paper": search.best.games == spec.subsets["Atari-5"].games,
            }
        )
    if not args.quick:
        started = time.perf_counter()
        found = nested_selection(data, processes=host["cpus"])
        seconds = time.perf_counter() - started
        matches = all(
            found[name].games == spec.subsets[name].games
            and tuple(round(c, 4) for c in found[name].coefficients)
            == spec.subsets[name].coefficients
            for name in spec.subsets
        )
        runs.append(
            {
                "run": "nested selection (Table 2)",
                "processes": host["cpus"],
                "subsets": None,
                "non_negative": None,
                "seconds": round(seconds, 2),
                "subsets_per_second": None,
                "selected": {name: list(fit.games) for name, fit in found.items()},
                "matches_paper": matches,
            }
        )
    rows = [
        [
            r["run"],
            r["processes"],
            r["subsets"],
            r["non_negative"],
            r["seconds"],
            r["subsets_per_second"],
            r["matches_paper"],
        ]
        for r in runs
    ]
    print(
        table(
            [
                "run",
                "processes",
                "subsets",
                "non-negative",
                "seconds",
                "subsets/s",
                "paper's subsets",
            ],
            rows,
            f"Atari-5 subset search on {host['cpu']} ({host['cpus']} CPUs available); data loaded "
            f"in {load_seconds:.2f} s",
        )
    )
    write_json("bench_subset", {"load_seconds": round(load_seconds, 3), "runs": runs})


if __name__ == "__main__":
    main()
