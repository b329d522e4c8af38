"""The options several sub-commands share, each declared once: one name, one meaning, one help.

An option's name means the same thing on every sub-command that has it (DEVELOPING.md, "Command
line", says which meaning each name keeps and why). A sub-command adds a shared option with the
function named after it here, and gives only what differs from one command to another: what the
option applies to there and its default. The function fixes the rest (the value's type, how
many values, the metavar, the first words of the help), and :func:`declared` says which shared
option an action is, so ``tests/cli/test_options.py`` can walk the real parser and check that
every option string keeps one meaning.

A renamed option keeps its old spelling for a release: :func:`add_deprecated` adds it hidden from
``--help``, doing what the new spelling does after one line on stderr,
``arcadebench: warning: --old is deprecated: use --new``.

Functions: add_command, add_spec_argument, add_spec, add_games, add_out, add_json, add_format,
add_references, add_ci, add_reps, add_seed, add_workers, add_backend, add_frames,
add_deprecated, declared; keywords and python_words, from the options to the parameters
they set.
Classes: Deprecated.
"""

from __future__ import annotations

import argparse
import sys
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "Deprecated",
    "add_backend",
    "add_ci",
    "add_command",
    "add_deprecated",
    "add_format",
    "add_frames",
    "add_games",
    "add_json",
    "add_out",
    "add_references",
    "add_reps",
    "add_seed",
    "add_spec",
    "add_spec_argument",
    "add_workers",
    "declared",
    "keywords",
    "python_words",
]

Container = argparse._ActionsContainer
"""A parser, or a group of one (a mutually exclusive group)."""

SPEC_HELP = "built-in spec name (see `arcadebench specs`) or a YAML file"

_DECLARED: weakref.WeakKeyDictionary[argparse.Action, str] = weakref.WeakKeyDictionary()


def declared(action: argparse.Action) -> str | None:
    """The shared option ``action`` was added as (``"--json"``), or ``None`` if none."""
    return _DECLARED.get(action)


def _add(container: Container, *names: str, **kwargs: Any) -> argparse.Action:
    """``container.add_argument(*names, **kwargs)``, declared as the shared option it is."""
    action = container.add_argument(*names, **kwargs)
    _DECLARED[action] = action.option_strings[0] if action.option_strings else action.dest
    return action


def _default(text: str | None) -> str:
    return f" (default: {text})" if text else ""


def add_command(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    *,
    help: str,
    description: str,
    example: str,
) -> argparse.ArgumentParser:
    """Add the sub-command ``name``: its one-line ``help``, its ``description``, an example.

    The example is the epilog, ``Example: <example>``, shown last by ``arcadebench name --help``.
    """
    return subparsers.add_parser(
        name, help=help, description=description, epilog=f"Example: {example}"
    )


def add_spec_argument(parser: argparse.ArgumentParser, name: str = "spec") -> argparse.Action:
    """The positional spec a command works under: a built-in name or a YAML file."""
    return _add(parser, name, help=SPEC_HELP)


def add_spec(container: Container, what: str, default: str) -> argparse.Action:
    """``--spec SPEC``: the protocol ``what`` (e.g. "to score the inputs under")."""
    return _add(
        container,
        "--spec",
        metavar="SPEC",
        help=f"the spec {what}: a {SPEC_HELP}{_default(default)}",
    )


def add_games(container: Container, default: str) -> argparse.Action:
    """``--games GAME...``: only these games or levels."""
    return _add(
        container,
        "--games",
        nargs="+",
        metavar="GAME",
        help=f"only these games or levels, any spelling{_default(default)}",
    )


def add_out(container: Container, what: str, default: str) -> argparse.Action:
    """``--out DIR``: the directory a command writes its files to (``what``: which files)."""
    return _add(
        container,
        "--out",
        metavar="DIR",
        default=default,
        help=f"the output directory: {what}{_default(default)}",
    )


def add_json(container: Container, what: str) -> argparse.Action:
    """``--json FILE``: also write ``what`` (e.g. "the results") to FILE as JSON."""
    return _add(container, "--json", metavar="FILE", help=f"also write {what} to FILE as JSON")


def add_format(container: Container, choices: Mapping[str, str]) -> argparse.Action:
    """``--format``: what to print, ``{choice: what it prints}``; the first is the default."""
    listed = "; ".join(f"{name}: {what}" for name, what in choices.items())
    return _add(
        container,
        "--format",
        choices=tuple(choices),
        default=next(iter(choices)),
        help=f"what to print on standard output: {listed} (default: {next(iter(choices))})",
    )


def add_references(container: Container, default: str, note: str = "") -> argparse.Action:
    """``--references NAME... | none``: the spec's published references shown beside ours."""
    return _add(
        container,
        "--references",
        nargs="+",
        metavar="NAME",
        help="the spec's published references to show beside the results, by name (any "
        "case and punctuation; `arcadebench report --list-references SPEC` lists them), or "
        f"`none`{note}{_default(default)}",
    )


def add_ci(container: Container) -> argparse.Action:
    """``--ci LEVEL``: the confidence level of the bootstrap intervals."""
    return _add(
        container,
        "--ci",
        type=float,
        default=0.95,
        metavar="LEVEL",
        help="the confidence level of the bootstrap intervals (default: 0.95)",
    )


def add_reps(container: Container) -> argparse.Action:
    """``--reps N``: bootstrap repetitions; 0, no intervals."""
    return _add(
        container,
        "--reps",
        type=int,
        default=2000,
        metavar="N",
        help="bootstrap repetitions for the intervals; 0: no intervals (default: 2000)",
    )


def add_seed(container: Container, what: str, default: int = 0) -> argparse.Action:
    """``--seed S``: the seed of the command's one source of randomness (``what``)."""
    return _add(
        container,
        "--seed",
        type=int,
        default=default,
        metavar="S",
        help=f"the seed of the command's random draws: {what}{_default(str(default))}",
    )


def add_workers(container: Container, what: str, default: int | None = None) -> argparse.Action:
    """``--workers N``: how many workers at once (``what``: what each does)."""
    text = "one per CPU core" if default is None else str(default)
    return _add(
        container,
        "--workers",
        type=int,
        default=default,
        metavar="N",
        help=f"worker processes at once, {what}{_default(text)}",
    )


def add_backend(container: Container, ray: str) -> argparse.Action:
    """``--backend local|ray``: where the workers run (``ray``: which Ray cluster)."""
    return _add(
        container,
        "--backend",
        choices=("local", "ray"),
        default="local",
        help=f"where the workers run: local processes, or Ray tasks on {ray} (default: local)",
    )


def add_frames(container: Container, what: str, default: int) -> argparse.Action:
    """``--frames N``: emulator frames the command's seeded agents play (``what``: how)."""
    return _add(
        container,
        "--frames",
        type=int,
        default=default,
        metavar="N",
        help=f"emulator frames the seeded agents play: {what}{_default(f'{default:,}')}",
    )


def keywords(args: argparse.Namespace, *names: str) -> dict[str, Any]:
    """The parsed options ``names`` as keyword arguments: each option is the parameter it sets.

    Example:
        >>> keywords(argparse.Namespace(seed=1, frames=400, json=None), "frames", "seed")
        {'frames': 400, 'seed': 1}
    """
    return {name: getattr(args, name) for name in names}


def python_words(*names: str, **renamed: str) -> dict[str, str]:
    """The words :func:`in_cli_words` maps: each parameter in ``names`` to ``--its-name``.

    Example:
        >>> python_words("cap_frames", log_dir="--out")
        {'cap_frames': '--cap-frames', 'log_dir': '--out'}
    """
    return {**{name: f"--{name.replace('_', '-')}" for name in names}, **renamed}


class Deprecated(argparse.Action):
    """An old spelling of an option: hidden from ``--help``; warns, then acts as the new one.

    Attributes:
        new: the spelling to use instead, as the warning gives it (``--format json``).
    """

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        *,
        target: argparse.Action,
        new: str,
        value: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(option_strings, argparse.SUPPRESS, default=argparse.SUPPRESS, **kwargs)
        self.target, self.new, self.value = target, new, value

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        """Warn in one line, then do what the new spelling does with the same values."""
        print(
            f"arcadebench: warning: {option_string} is deprecated: use {self.new}", file=sys.stderr
        )
        if self.value is not None:
            values = self.value
        self.target(parser, namespace, values, self.target.option_strings[0])


def add_deprecated(
    parser: argparse.ArgumentParser, old: str, new: str, value: str | None = None
) -> argparse.Action:
    """Keep ``old``, the former spelling of ``new``, working for a release, hidden and warning.

    Add it after ``new``. ``value``: the new option's value an old switch stands for
    (``add_deprecated(parser, "--json", "--format", "json")``: ``--json`` is ``--format json``).
    """
    target = parser._option_string_actions[new]
    if value is not None or target.nargs == 0:
        shape: dict[str, Any] = {"nargs": 0}
    else:
        shape = {"nargs": target.nargs, "type": target.type, "metavar": target.metavar}
    return parser.add_argument(
        old,
        action=Deprecated,
        target=target,
        new=f"{new} {value}" if value is not None else new,
        value=value,
        help=argparse.SUPPRESS,
        **shape,
    )
