"""``arcadebench audit ENV``: which protocol does an Atari env you already train on run? Measured.

ENV is a Gymnasium id (``ALE/Pong-v5``, made with ``--kwargs``) or a ``module:callable``
returning an env, a vector env or a thunk (``stable_baselines3.common.env_util:make_atari_env``,
``envpool:make``, a CleanRL ``make_env``), called with ``--kwargs``. The env is played with
seeded agents and every rule is measured in its emulator (or a reference emulator kept in step)
and judged against every Atari spec; one table, the closest spec, ``--json``.

Exit status: 0 when the env matches the spec named with ``--spec`` (none named: the closest
spec), 1 when it differs, 2 on bad input (an unknown id, bad ``--kwargs`` JSON, a callable that
fails, an env that is no Atari env).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from arcadebench.benchmarks.audit import DEFAULT_CAP_FRAMES, DEFAULT_FRAMES, audit
from arcadebench.cli import options, print_report
from arcadebench.errors import InvalidArgument

__all__ = ["register"]

_PASSED = ("game", "spec", "frames", "cap_frames", "seed")
"""The options ``audit()`` is given as its parameters of the same names."""
PYTHON_WORDS = options.python_words("kwargs", *_PASSED)
"""The library's parameter names, as this command's options (in its one-line errors)."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``audit`` sub-command."""
    parser = options.add_command(
        subparsers,
        "audit",
        help="measure which protocol an Atari env of yours runs",
        description=(
            "Play an Atari env with seeded agents and measure, in its emulator (or a reference "
            "emulator kept in step with it), the frame skip, sticky actions, action set, life "
            "information, no-op starts, FIRE on reset, reward clipping, episode cap and stuck "
            "time, observation and info; judge them against every Atari spec and name the "
            "closest. Exit status 1 when the env differs from --spec (or the closest spec)."
        ),
        example="arcadebench audit ALE/Pong-v5 --kwargs '{\"frameskip\": 1}'",
    )
    parser.add_argument(
        "env",
        metavar="ENV",
        help="a Gymnasium id (ALE/Pong-v5) or module:callable returning an env",
    )
    parser.add_argument(
        "--kwargs", metavar="JSON", help="keyword arguments of gym.make or the callable, as JSON"
    )
    parser.add_argument("--game", help="the ale-py ROM, where the env does not say which")
    options.add_spec(parser, "the exit status is about", "the closest")
    options.add_frames(parser, "the random agent", DEFAULT_FRAMES)
    parser.add_argument(
        "--cap-frames",
        type=int,
        default=DEFAULT_CAP_FRAMES,
        metavar="N",
        help="the most frames the NOOP agent plays to find a cap; 110000 reaches a 30-minute cap "
        f"(default: {DEFAULT_CAP_FRAMES:,})",
    )
    options.add_seed(parser, "the agents'")
    options.add_json(parser, "the report")
    parser.set_defaults(handler=_audit, python_words=PYTHON_WORDS)


def _kwargs(text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        value, why = json.loads(text), ""
    except json.JSONDecodeError as error:
        value, why = None, f" ({error.msg} at character {error.pos})"
    if not isinstance(value, dict):
        raise InvalidArgument(
            f"`kwargs` must be a JSON object such as '{{\"frameskip\": 1}}', got {text!r}{why}"
        )
    return value


def _audit(args: argparse.Namespace) -> int:
    report = audit(args.env, _kwargs(args.kwargs), **options.keywords(args, *_PASSED))
    return print_report(report, args.json)
