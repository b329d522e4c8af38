"""``arcadebench verify LOGDIR|results.json``: re-simulate every recorded episode, check its log.

Exit status: 0 when every episode checked was re-simulated and matched its log line, 1 when one
diverged or could not be replayed (the table names the episode, the line and the step), 2 on bad
input (a path that holds no log, an unreadable log).
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
            "settings each log's header names, and check its return, length, frames and end "
            "reason against its log line, the header against the spec and every line against "
            "the header. Exit status: 0 when all were verified, 1 when one diverged or could not "
            "be replayed, 2 on bad input. Example: arcadebench verify results/"
        ),
    )
    parser.add_argument(
        "paths", nargs="+", metavar="PATH", help="logs (.jsonl), directories of logs, results.json"
    )
    parser.add_argument(
        "--sample", type=int, metavar="K", help="check K episodes of each log (default: all)"
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
        handler=_verify, python_words={"sample": "--sample", "workers": "--workers"}
    )


def _verify(args: argparse.Namespace) -> int:
    found = verify(
        args.paths,
        sample=args.sample,
        workers=args.workers,
        spec=args.spec,
        backend=args.backend,
    )
    print(found.table())
    if args.json:
        write_json(found, args.json)
    return found.exit_status
