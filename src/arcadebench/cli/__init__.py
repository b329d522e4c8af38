"""The ``arcadebench`` command: one sub-command per ``<command>_command.py`` module here.

Each such module defines ``register(subparsers)``, which adds its sub-command and sets
``handler``; modules are discovered, not listed. ``arcadebench --help`` lists the sub-commands
in the order of the work, under the headings of :data:`GROUPS`; the options several of them share
are declared once, in ``options.py``. Any :class:`ArcadebenchError` becomes one line on stderr
and exit status 2; Ctrl-C exits with 130.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import re
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from arcadebench._version import __version__
from arcadebench.errors import ArcadebenchError, InputError

__all__ = [
    "GROUPS",
    "in_cli_words",
    "main",
    "print_report",
    "warnings_printed",
    "write_file",
    "write_json",
]


GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the protocols", ("specs", "show", "diff")),
    ("this machine and your environments", ("doctor", "check", "audit")),
    ("running agents", ("run",)),
    ("scoring and reporting", ("score", "report", "subset")),
    ("checking results", ("verify", "replay", "leaderboard")),
)
"""The sub-commands in the order of the work, under the headings ``arcadebench --help`` gives.

Read a protocol, make sure this machine (and an environment of your own) plays it, run an agent,
score and report the results, and let anyone check them. A new sub-command takes its place
here; ``tests/cli/test_options.py`` fails while one is in no group.
"""


class _GroupedHelp(argparse.ArgumentParser):
    """The top-level parser: its ``--help`` lists the sub-commands under :data:`GROUPS`."""

    def format_help(self) -> str:
        """Usage, description, each group of sub-commands under its heading, options, epilog."""
        formatter = self._get_formatter()
        formatter.add_usage(self.usage, self._actions, self._mutually_exclusive_groups)
        formatter.add_text(self.description)
        commands = {
            action.dest: action
            for sub in self._actions
            if isinstance(sub, argparse._SubParsersAction)
            for action in sub._get_subactions()
        }
        grouped = {name for _, names in GROUPS for name in names}
        others = tuple(name for name in commands if name not in grouped)
        for title, names in (*GROUPS, *((("other commands", others),) if others else ())):
            formatter.start_section(title)
            formatter.add_arguments([commands[name] for name in names if name in commands])
            formatter.end_section()
        for group in self._action_groups:
            actions = [
                a for a in group._group_actions if not isinstance(a, argparse._SubParsersAction)
            ]
            if actions:
                formatter.start_section(group.title)
                formatter.add_arguments(actions)
                formatter.end_section()
        formatter.add_text(self.epilog)
        return formatter.format_help()


def _build_parser() -> argparse.ArgumentParser:
    parser = _GroupedHelp(
        prog="arcadebench",
        description="Published Atari and Sonic evaluation protocols: run, score and report.",
        epilog="`arcadebench <command> --help` describes a command, its options and an example.",
    )
    parser.add_argument("--version", action="version", version=f"arcadebench {__version__}")
    subparsers = parser.add_subparsers(
        dest="command",
        metavar="<command>",
        required=True,
        parser_class=argparse.ArgumentParser,
    )
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if module.name.endswith("_command"):
            importlib.import_module(f"{__name__}.{module.name}").register(subparsers)
    _in_order_of_the_work(subparsers)
    return parser


def _in_order_of_the_work(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Order the sub-commands as :data:`GROUPS` does (the choices an error lists, the docs)."""
    order = {name: i for i, name in enumerate(n for _, names in GROUPS for n in names)}
    place = {name: order.get(name, len(order)) for name in subparsers.choices}
    subparsers._choices_actions.sort(key=lambda action: place[action.dest])
    parsers = sorted(subparsers.choices.items(), key=lambda item: place[item[0]])
    subparsers.choices.clear()  # the same mapping argparse holds, in the new order
    subparsers.choices.update(parsers)


def in_cli_words(message: str, words: Mapping[str, str]) -> str:
    """``message`` with the Python parameter names a sub-command maps to options replaced.

    The library's errors name its parameters (``resume=True``, ``log_dir`` in backquotes); on
    the command line the same error names the options that set them.

    Example:
        >>> in_cli_words("`episodes` must be given, e.g. episodes=3; or resume=True", {
        ...     "episodes": "--episodes", "resume": "--resume"})
        '`--episodes` must be given, e.g. --episodes 3; or --resume'
    """

    def option(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        if name not in words:
            return match.group(0)
        return words[name] if value in (None, "True") else f"{words[name]} {value}"

    message = re.sub(r"`(\w+)`", lambda m: f"`{words.get(m.group(1), m.group(1))}`", message)
    return re.sub(r"\b(\w+)=([^\s,;)]+)", option, message)


def write_json(report: Any, path: str) -> None:
    """Write ``report.to_json(path)`` (``--json FILE``) and say so on stderr."""
    write_file(report.to_json, path, "the report")


def write_file(write: Callable[[str], object], path: str, what: str) -> None:
    """``write(path)``, then say so on stderr.

    Raises:
        InputError: ``path`` cannot be written (one line naming it, ``what`` and why).
    """
    try:
        write(path)
    except OSError as error:
        raise InputError(path, None, f"cannot write {what}: {error.strerror or error}") from None
    print(f"wrote {path}", file=sys.stderr)


def print_report(report: Any, path: str | None) -> int:
    """Print ``report.table()`` and write it to ``path`` (``--json FILE``); its exit status."""
    print(report.table())
    if path:
        write_json(report, path)
    return int(report.exit_status)


@contextlib.contextmanager
def warnings_printed(once: bool = False) -> Iterator[None]:
    """Print each warning raised inside on stderr (``once``: each message once), even on error."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            yield
        finally:
            messages = [str(warning.message) for warning in caught]
            for message in dict.fromkeys(messages) if once else messages:
                print(f"arcadebench: warning: {message}", file=sys.stderr)


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
