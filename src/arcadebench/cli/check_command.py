"""``arcadebench check <spec>``: play every game of an Atari spec and verify each declared rule.

Prints one row per game with what was observed (actions, the sticky-action probability measured
in the emulator, frame skip, observation, lives, the max stuck time and frame cap firing,
rewards, determinism) and saves the JSON document with ``--json``.

Exit status: 0 when no rule failed (flags and known exceptions included), 1 when a rule failed,
2 on bad input (an unknown spec or game, a bad ``--frames``, a spec that is not an Atari spec).
"""

from __future__ import annotations

import argparse

from arcadebench.benchmarks.conformance import check
from arcadebench.benchmarks.conformance.suite import DEFAULT_FRAMES
from arcadebench.cli import write_json

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` sub-command."""
    parser = subparsers.add_parser(
        "check",
        help="play every game of an Atari spec in the emulator and verify each rule it declares",
        description=(
            "Play every game of an Atari spec with seeded random and NOOP agents and verify, per "
            "game, each rule the spec declares: the action set, sticky actions (measured in the "
            "emulator), frame skip, observation, no life information and game-over-only "
            "termination, the max stuck time and frame cap firing on the exact step (scaled down "
            "to fit --frames when larger), rewards and determinism. Exit status 1 when a rule "
            "failed. Example: arcadebench check saber --games Pong Skiing --frames 4000"
        ),
    )
    parser.add_argument("spec", help="built-in Atari spec name (see `arcadebench specs`) or YAML")
    parser.add_argument(
        "--games", nargs="+", metavar="GAME", help="these games, any spelling (default: all)"
    )
    parser.add_argument(
        "--frames",
        type=int,
        default=DEFAULT_FRAMES,
        metavar="N",
        help=f"emulator frames each agent plays per game (default {DEFAULT_FRAMES:,}); limits "
        "larger than half of it are checked scaled down",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the agents (default 0)")
    parser.add_argument(
        "--workers", type=int, default=2, help="games played at once, one process each (default 2)"
    )
    parser.add_argument("--json", metavar="OUT", help="write the JSON report here")
    parser.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    report = check(args.spec, args.games, frames=args.frames, seed=args.seed, workers=args.workers)
    print(report.table())
    if args.json:
        write_json(report, args.json)
    return report.exit_status
