"""The ``arcadebench`` command: one sub-command per ``<command>_command.py`` module here.

Each such module defines ``register(subparsers)``, which adds its sub-command and sets
``handler``; modules are discovered, not listed. Any :class:`ArcadebenchError` becomes one line
on stderr and exit status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from arcadebench._version import __version__
from arcadebench.errors import ArcadebenchError, InputError

__all__ = ["in_cli_words", "main", "write_json"]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arcadebench",
        description="Published Atari and Sonic evaluation protocols: run, score and report.",
    )
    parser.add_argument("--version", action="version", version=f"arcadebench {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="<command>", required=True)
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.endswith("_command"):
            importlib.import_module(f"{__name__}.{module.name}").register(subparsers)
    return parser


def in_cli_words(message: str, words: Mapping[str, str]) -> str:
    """``message`` with the Python parameter names a sub-command maps to options replaced.

    The library's errors name its parameters (``resume=True``, `` `log_dir` ``); on the command
    line the same error names the options that set them.

    Example:
        >>> in_cli_words("`episodes` must be given, e.g. episodes=3; or resume=True", {
        ...     "episodes": "--episodes", "resume": "--resume"})
        '`--episodes` must be given, e.g. --episodes 3; or --resume'
    """
    if not words:
        return message

    def option(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        if name not in words:
            return match.group(0)
        return words[name] if value in (None, "True") else f"{words[name]} {value}"

    message = re.sub(r"`(\w+)`", lambda m: f"`{words.get(m.group(1), m.group(1))}`", message)
    return re.sub(r"\b(\w+)=([^\s,;)]+)", option, message)


def write_json(report: Any, path: str) -> None:
    """Write ``report.to_json(path)`` (``--json OUT``) and say so on stderr.

    Raises:
        InputError: ``path`` cannot be written (one line naming it and why).
    """
    try:
        report.to_json(path)
    except OSError as error:
        raise InputError(
            path, None, f"cannot write the report: {error.strerror or error}"
        ) from None
    print(f"wrote {path}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _build_parser().parse_args(argv)
    try:
        return args.handler(args) or 0
    except ArcadebenchError as error:
        words = getattr(args, "python_words", {})
        print(f"arcadebench: error: {in_cli_words(str(error), words)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("arcadebench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `arcadebench show saber | head`: the reader has what it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # no second error when Python flushes at exit
        return 141


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
