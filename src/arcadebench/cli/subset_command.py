"""``arcadebench subset``: choose the few games that best predict a suite's summary score.

The Atari-5 method (Aitchison, Sweetser & Hutter 2023, Algorithm 1 and Section 4.3) on any long
table of scores; ``arcadebench subset atari5-dataset --nested`` reproduces the paper's Table 2
from the authors' data set, and ``--yaml`` writes the result in the ``atari5.yaml`` format.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arcadebench._table import render_table
from arcadebench.benchmarks.subset import (
    ATARI5_DATASET,
    DEFAULT_MIN_GAMES,
    DEFAULT_SEED,
    PredictionFit,
    SubsetData,
    SubsetError,
    SubsetFit,
    best_subsets,
    fit_predictions,
    nested_selection,
    prepare,
    read_scores,
    to_yaml,
)
from arcadebench.cli import options

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``subset`` sub-command."""
    parser = options.add_command(
        subparsers,
        "subset",
        help="choose the games that best predict a suite's score (Atari-5)",
        description=(
            "Search all subsets of --size games for the one whose log-normalised scores best "
            "predict log10(1 + the median normalised score) over all games: least squares "
            "without intercept, non-negative weights, ranked by k-fold cross-validated error "
            "(Atari-5 paper, Algorithm 1)."
        ),
        example="arcadebench subset atari5-dataset --size 3",
    )
    parser.add_argument(
        "scores",
        help=f"CSV with algorithm, game and score (+ random, human) columns, or "
        f"{ATARI5_DATASET!r} for the Atari-5 paper's data set",
    )
    parser.add_argument("--size", type=int, default=5, help="games per subset (default 5)")
    parser.add_argument(
        "--target",
        choices=("median", "mean"),
        default="median",
        help="summary score to predict (default: median, as the paper)",
    )
    parser.add_argument(
        "--folds", type=int, default=10, help="k of the k-fold cross-validation (default 10)"
    )
    options.add_seed(parser, "the folds' permutation (the authors' seed by default)", DEFAULT_SEED)
    parser.add_argument(
        "--exclude", nargs="+", default=[], metavar="GAME", help="games no subset may use"
    )
    parser.add_argument("--within", nargs="+", metavar="GAME", help="search only these games")
    parser.add_argument(
        "--always", nargs="+", default=[], metavar="GAME", help="games every subset includes"
    )
    parser.add_argument(
        "--min-games",
        type=int,
        default=DEFAULT_MIN_GAMES,
        help=f"drop algorithms with fewer games (default {DEFAULT_MIN_GAMES}, Section 4.1)",
    )
    parser.add_argument(
        "--min-algorithms",
        type=int,
        help="drop games scored by fewer of the remaining algorithms (default: --min-games)",
    )
    parser.add_argument(
        "--min-target",
        type=float,
        help="drop algorithms whose summary score is not above this (the authors' code: 40)",
    )
    parser.add_argument(
        "--intercept", action="store_true", help="also fit an intercept (not for a spec)"
    )
    parser.add_argument("--top", type=int, default=10, help="subsets to list (default 10)")
    parser.add_argument(
        "--nested",
        action="store_true",
        help="the paper's nested selection: PREFIX-5 > -3 > -1, -3-Val < -5-Val, -10 "
        "(sizes follow --size)",
    )
    parser.add_argument(
        "--prefix", help="name of the subsets (default: Atari for the Atari-5 data, else Subset)"
    )
    parser.add_argument(
        "--predictions",
        action="store_true",
        help="also list the per-game prediction models and their R2 (Tables 10-11)",
    )
    parser.add_argument(
        "--yaml",
        metavar="FILE",
        help="also write the constants, subsets and per-game models to FILE as YAML",
    )
    parser.add_argument(
        "--spec-name", metavar="NAME", help="make the --yaml output a complete spec named NAME"
    )
    options.add_spec(
        parser,
        "whose game names (and constants, if the CSV has none) to use",
        "none; atari5 for the Atari-5 data set",
    )
    options.add_workers(parser, "each fitting subsets")
    options.add_deprecated(parser, "--processes", "--workers")
    parser.set_defaults(handler=_subset, python_words={"processes": "--workers"})


def _subset(args: argparse.Namespace) -> int:
    if args.spec_name and not args.yaml:
        raise SubsetError("`--spec-name` needs `--yaml FILE` (the file the spec is written to)")
    table = read_scores(args.scores, spec=args.spec)
    data = prepare(
        table, **options.keywords(args, "target", "min_games", "min_algorithms", "min_target")
    )
    prefix = args.prefix or ("Atari" if args.scores == ATARI5_DATASET else "Subset")
    print(_describe(data))
    print()
    if args.nested:
        if args.intercept or args.always:
            raise SubsetError(
                "`--nested` takes no --intercept or --always (the paper's layout fixes them)"
            )
        fits = _nested(data, args, prefix)
        models_for = [
            name for name in (f"{prefix}-{args.size}", f"{prefix}-{2 * args.size}") if name in fits
        ]
    else:
        search = best_subsets(
            data,
            args.size,
            processes=args.workers,
            **options.keywords(
                args, "exclude", "within", "always", "intercept", "top", "folds", "seed"
            ),
        )
        _print_search(search.fits, args.intercept)
        print(
            f"\nsearched {search.n_subsets:,} subsets of "
            f"{len(search.pool) + len(search.always)} games: {search.n_fitted:,} with enough "
            f"algorithms, {search.n_nonnegative:,} with non-negative weights (cross-validated); "
            f"{search.seconds:.1f} s on {search.processes} process"
            f"{'es' if search.processes > 1 else ''}"
        )
        fits = {f"{prefix}-{args.size}": search.best.renamed(f"{prefix}-{args.size}")}
        models_for = [f"{prefix}-{args.size}"]
    predictions = [fit_predictions(data, fits[name]) for name in dict.fromkeys(models_for)]
    if args.predictions:
        for pred in predictions:
            print()
            _print_predictions(pred)
    if args.yaml:
        text = to_yaml(data, fits, predictions, name=args.spec_name)
        out = Path(args.yaml)
        try:
            out.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise SubsetError(
                f"`--yaml` must be a writable file, got {args.yaml!r} ({exc.strerror or exc})"
            ) from None
        kind = f"spec {args.spec_name!r}" if args.spec_name else "spec fragment"
        print(f"\nwrote the {kind} ({', '.join(fits)}) to {out}")
    return 0


def _describe(data: SubsetData) -> str:
    table = data.table
    lines = [
        f"{table.source}: {len(table.algorithms)} algorithms with >= {data.min_games} games"
        + (f" ({len(data.dropped_algorithms)} dropped)" if data.dropped_algorithms else ""),
        f"{len(data.candidates)} candidate games scored by >= {data.min_algorithms} of them"
        + (f" (dropped: {', '.join(data.dropped_games)})" if data.dropped_games else ""),
        f"target: log10(1 + the {data.target} normalised score of each algorithm over all of its "
        "games)",
    ]
    return "\n".join(lines)


def _nested(data: SubsetData, args: argparse.Namespace, prefix: str) -> dict[str, SubsetFit]:
    sizes = tuple(sorted({s for s in (args.size, 3, 1) if s <= args.size}, reverse=True))
    universe = set(data.resolve(args.within)) if args.within else set(data.candidates)
    excluded = set(data.resolve(args.exclude))
    available = len([g for g in data.candidates if g in universe and g not in excluded])
    validation = tuple(sorted({s for s in (3, args.size) if s <= args.size}))
    notes = []
    while validation and args.size + validation[-1] > available:
        notes.append(
            f"skipped {prefix}-{validation[-1]}-Val: needs {args.size + validation[-1]} games, "
            f"{available} available"
        )
        validation = validation[:-1]
    wanted: int = 2 * args.size
    largest_val = validation[-1] if validation else 0
    extended = wanted if available - largest_val >= wanted else None
    if extended is None:
        notes.append(
            f"skipped {prefix}-{wanted}: needs {wanted + largest_val} games, {available} available"
        )
    fits = nested_selection(
        data,
        prefix,
        sizes,
        validation,
        extended,
        processes=args.workers,
        **options.keywords(args, "exclude", "within", "folds", "seed"),
    )
    title = (
        "Nested selection (Atari-5 Section 4.3; figures as Table 2: "
        f"{args.folds}-fold cross-validated)"
    )
    columns = ("games", "weights", "algorithms", "CV R2", "rel. err. %")
    print(_fits_table("subset", fits, columns, title=title, digits=3))
    for note in notes:
        print(note)
    return fits


_FIGURES: dict[str, Callable[[SubsetFit], object]] = {
    "games": lambda fit: ", ".join(fit.games),
    "weights": lambda fit: ", ".join(f"{c:.4f}" for c in fit.coefficients),
    "intercept": lambda fit: fit.intercept,
    "algorithms": lambda fit: fit.n_algorithms,
    "R2": lambda fit: fit.r2,
    "CV R2": lambda fit: fit.cv_r2,
    "rel. err. %": lambda fit: fit.cv_relative_error,
    "CV MSE": lambda fit: fit.cv_mse,
}
"""A fit's figures, under the column that shows them."""


def _fits_table(
    first: str, fits: Mapping[Any, SubsetFit], columns: Sequence[str], **style: Any
) -> str:
    """One row per fit, headed by its key in ``fits`` (column ``first``), then ``columns``."""
    rows = [[key, *(_FIGURES[c](fit) for c in columns)] for key, fit in fits.items()]
    return render_table([first, *columns], rows, **style)


def _print_search(fits: tuple[SubsetFit, ...], intercept: bool) -> None:
    columns = [c for c in _FIGURES if intercept or c != "intercept"]
    size = len(fits[0].games)
    title = (
        f"Best subsets of {size} game{'s' if size > 1 else ''} (Algorithm 1: lowest k-fold MSE "
        "in log space; rel. err. = ln 10 x mean |log10 error|, cross-validated)"
    )
    print(_fits_table("rank", dict(enumerate(fits, start=1)), columns, digits=4, title=title))


def _print_predictions(pred: PredictionFit) -> None:
    ranked = sorted(pred.models.items(), key=lambda i: -i[1].r2 if math.isfinite(i[1].r2) else 1)
    rows = [
        [game, m.r2 if math.isfinite(m.r2) else None, m.n_algorithms, *m.coefficients]
        for game, m in ranked
    ]
    columns = ["game", "R2", "algorithms", "c", *(f"x{i + 1}" for i in range(len(pred.inputs)))]
    title = f"Per-game models from {pred.name} (Section 4.4; x = {', '.join(pred.inputs)})"
    print(render_table(columns, rows, digits=3, title=title))
    print(f"variance in log-scores explained: {100 * pred.explained_variance:.1f}% (Section 5.5)")
