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
from arcadebench.cli import options, print_report

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``check`` sub-command."""
    parser = options.add_command(
        subparsers,
        "check",
        help="verify in the emulator every rule an Atari spec declares",
        description=(
            "Play every game of an Atari spec with seeded random and NOOP agents and verify, per "
            "game, each rule the spec declares: the action set, sticky actions (measured in the "
            "emulator), frame skip, observation, no life information and game-over-only "
            "termination, the max stuck time and frame cap firing on the exact step (scaled down "
            "to fit --frames when larger), rewards and determinism. Exit status 1 when a rule "
            "failed."
        ),
        example="arcadebench check saber --games Pong Skiing --frames 4000",
    )
    options.add_spec_argument(parser)
    options.add_games(parser, "all of the spec's")
    options.add_frames(
        parser,
        "each agent, per game; limits larger than half of it are checked scaled down",
        DEFAULT_FRAMES,
    )
    options.add_seed(parser, "the agents'")
    options.add_workers(parser, "each playing one game", default=2)
    options.add_json(parser, "the report")
    parser.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    report = check(args.spec, args.games, frames=args.frames, seed=args.seed, workers=args.workers)
    return print_report(report, args.json)
