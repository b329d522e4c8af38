"""``arcadebench diff A B``: two protocols side by side, and which differences change scores.

The exit status follows diff(1) and cmp(1), so a script can ask "may I rank these together?":
0 when no difference changes scores (the same protocol, or one that differs in what it reports
only), 1 when some difference changes scores, 2 on an error (an unknown spec, a bad YAML file).
``--format json`` prints the comparison as JSON (``--json``, its old name, still works with a
warning: every other command's ``--json FILE`` writes a file).
"""

from __future__ import annotations

import argparse
import json

from arcadebench.cli import options
from arcadebench.specs import load_spec
from arcadebench.specs.diff import diff

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``diff`` sub-command."""
    parser = options.add_command(
        subparsers,
        "diff",
        help="compare two protocols and say which differences change scores",
        description=(
            "Compare two protocols side by side: the environment (frame skip, sticky actions, "
            "action set, life information, no-op starts, caps, stuck time, rollover guard), the "
            "scoring (normalised scores and, game by game, their constants; aggregates), the "
            "evaluation (scored episodes, budget, evaluation episodes and policy) and the games. "
            "Each difference is marked by whether it changes scores, with the evidence. Exit "
            "status: 0 when no difference changes scores, 1 when some does (results of the two "
            "cannot be ranked together), 2 on an error."
        ),
        example="arcadebench diff saber atari100k",
    )
    options.add_spec_argument(parser, "a")
    parser.add_argument("b", help="the other spec: a built-in name or a YAML file")
    options.add_format(
        parser, {"table": "the comparison as a table", "json": "the comparison as JSON"}
    )
    options.add_deprecated(parser, "--json", "--format", "json")
    parser.set_defaults(handler=_diff)


def _diff(args: argparse.Namespace) -> int:
    compared = diff(load_spec(args.a), load_spec(args.b))
    if args.format == "json":
        print(json.dumps(compared.to_dict(), indent=2, ensure_ascii=False))
    else:
        print(compared.table())
    return 0 if compared.comparable else 1
