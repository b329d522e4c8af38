"""``arcadebench verify LOGDIR|results.json``: re-simulate every recorded episode, check its log.

Exit status: 0 when every episode checked was re-simulated and matched its log line and every
results file's numbers were recomputed equal, 1 when something failed (the table names the log,
the episode, the line and the step, or the results' field), 2 when some input could not be read
(a path that holds no log, an unreadable log, a results file whose inputs are not beside it).
"""

from __future__ import annotations

import argparse

from arcadebench.benchmarks.replay import verify
from arcadebench.cli import options, print_report

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` sub-command."""
    parser = options.add_command(
        subparsers,
        "verify",
        help="replay logged episodes in the emulator and check their logs",
        description=(
            "Play every recorded episode of the logs again in the spec's emulator, with the "
            "settings each log's header names, and check its rewards and emulator states "
            "against its recording, its return, length, frames and end against its log line, "
            "the header against the spec, every line against the header, and that the log holds "
            "every episode once, each from its seed; for a results file, also recompute every "
            "number in it from its logs. Verifying proves that the episodes reproduce under the "
            "protocol the logs declare and that the results follow from them, not which agent "
            "played them (re-run the agent for that). Exit status: 0 when all was verified, 1 "
            "when something failed, 2 when some input could not be read."
        ),
        example="arcadebench verify results/results.json --sample 5",
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="logs (.jsonl), directories of logs, results.json"
    )
    parser.add_argument(
        "--sample",
        type=int,
        metavar="K",
        help="replay K episodes of each log, drawn afresh each time (default: all); the "
        "completeness checks and a results file's numbers still cover every episode",
    )
    parser.add_argument(
        "--sample-seed",
        type=int,
        metavar="S",
        help="draw --sample's episodes with this seed (the table prints the one it used)",
    )
    options.add_workers(parser, "each replaying episodes")
    options.add_spec(
        parser,
        "the logs were written under, needed only for a spec of your own",
        "the built-in spec the logs name",
    )
    options.add_backend(parser, "the cluster of RAY_ADDRESS, else a local one")
    options.add_json(parser, "the verdicts")
    parser.set_defaults(
        handler=_verify,
        python_words=options.python_words("sample", "sample_seed", "workers"),
    )


def _verify(args: argparse.Namespace) -> int:
    passed = ("sample", "sample_seed", "workers", "spec", "backend")
    found = verify(args.paths, **options.keywords(args, *passed))
    return print_report(found, args.json)
