"""``arcadebench verify LOGDIR|results.json``: re-simulate every recorded episode, check its log.

Exit status: 0 when every episode checked was re-simulated and matched its log line and every
results file's numbers were recomputed equal, 1 when something failed (the table names the log,
the episode, the line and the step, or the results' field), 2 when some input could not be read
(a path that holds no log, an unreadable log, a results file whose inputs are not beside it).
"""

from __future__ import annotations

import argparse

from arcadebench.benchmarks.replay import verify
from arcadebench.cli import write_json

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``verify`` sub-command."""
    parser = subparsers.add_parser(
        "verify",
        help="re-simulate logged episodes from their recordings and check them against the log",
        description=(
            "Play every recorded episode of the logs again in the spec's emulator, with the "
            "settings each log's header names, and check its rewards and emulator states "
            "against its recording, its return, length, frames and end against its log line, "
            "the header against the spec, every line against the header, and that the log holds "
            "every episode once, each from its seed; for a results file, also recompute every "
            "number in it from its logs. Verifying proves that the episodes reproduce under the "
            "protocol the logs declare and that the results follow from them, not which agent "
            "played them (re-run the agent for that). Exit status: 0 when all was verified, 1 "
            "when something failed, 2 when some input could not be read. Example: arcadebench "
            "verify results/results.json"
        ),
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
    parser.add_argument(
        "--workers", type=int, help="processes replaying at once (default: one per CPU core)"
    )
    parser.add_argument("--spec", help="the YAML file of logs written under a spec of your own")
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local processes, or Ray tasks on the cluster of RAY_ADDRESS (a local instance)",
    )
    parser.add_argument("--json", metavar="OUT", help="also write the verdicts as JSON here")
    parser.set_defaults(
        handler=_verify,
        python_words={
            "sample": "--sample",
            "sample_seed": "--sample-seed",
            "workers": "--workers",
        },
    )


def _verify(args: argparse.Namespace) -> int:
    found = verify(
        args.paths,
        sample=args.sample,
        sample_seed=args.sample_seed,
        workers=args.workers,
        spec=args.spec,
        backend=args.backend,
    )
    print(found.table())
    if args.json:
        write_json(found, args.json)
    return found.exit_status
