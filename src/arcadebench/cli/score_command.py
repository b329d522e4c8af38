"""``arcadebench score <spec> <file>...``: score results or episode logs, print and save them."""

from __future__ import annotations

import argparse
import shlex
import sys
import warnings

from arcadebench.benchmarks.scoring.results import score
from arcadebench.errors import InputError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``score`` sub-command."""
    parser = subparsers.add_parser(
        "score",
        help="score raw results (CSV/JSON) or episode logs (JSONL) against a protocol",
        description=(
            "Score raw per-game results or episode logs against a protocol: normalised scores, "
            "aggregates, Atari-X estimates and stratified bootstrap confidence intervals. Inputs: "
            "CSV `game,score[,algorithm][,run][,frames]`, "
            "JSON {algorithm: {game: score | [runs]}}, "
            "episode logs (.jsonl) or directories of them, or a results JSON to re-score."
        ),
    )
    parser.add_argument("spec", help="built-in spec name (see `arcadebench specs`) or a YAML file")
    parser.add_argument(
        "files", nargs="+", metavar="file", help="score files, episode logs or log directories"
    )
    parser.add_argument("--json", metavar="OUT", help="write the results JSON here")
    parser.add_argument("--csv", metavar="OUT", help="write the results as a tidy CSV here")
    parser.add_argument(
        "--ci", type=float, default=0.95, help="confidence level of the intervals (default 0.95)"
    )
    parser.add_argument(
        "--reps",
        type=int,
        default=2000,
        help="bootstrap repetitions; 0 = no intervals (default 2000)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    parser.set_defaults(handler=_score)


def _score(args: argparse.Namespace) -> int:
    words = ["arcadebench", "score", args.spec, *args.files]
    for option in ("json", "csv", "ci", "reps", "seed"):
        if getattr(args, option) is not None:
            words += [f"--{option}", str(getattr(args, option))]
    command = " ".join(shlex.quote(w) for w in words)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            results = score(
                args.spec, args.files, ci=args.ci, reps=args.reps, seed=args.seed, command=command
            )
        finally:  # warnings first, also when an error follows (e.g. a log without episodes)
            for warning in caught:
                print(f"arcadebench: warning: {warning.message}", file=sys.stderr)
    print(results.table())
    for path, write in ((args.json, results.to_json), (args.csv, results.to_csv)):
        if path:
            try:
                write(path)
            except OSError as error:
                raise InputError(
                    path, None, f"cannot write the results: {error.strerror or error}"
                ) from None
            print(f"wrote {path}", file=sys.stderr)
    return 0
