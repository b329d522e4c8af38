"""The command line as one tool: the real parser walked, sub-command by sub-command.

An option's name means the same thing on every sub-command (one shape, one help, or declared once
in ``arcadebench.cli.options``); an old spelling is hidden from ``--help``, warns in one line and
does what the new one does; every sub-command has a one-line help, a description and an example
that parses; and ``arcadebench --help`` lists the sub-commands under headings, in the order of
the work.
"""

from __future__ import annotations

import argparse
import shlex
from collections import defaultdict

import pytest

from arcadebench.cli import GROUPS, _build_parser, main
from arcadebench.cli.options import Deprecated, declared

PARSER = _build_parser()
(SUBPARSERS,) = (a for a in PARSER._actions if isinstance(a, argparse._SubParsersAction))
COMMANDS: dict[str, argparse.ArgumentParser] = dict(SUBPARSERS.choices)
HELPS = {action.dest: action.help for action in SUBPARSERS._choices_actions}
WIDTH = 64  # a help beside its command in `arcadebench --help` on an 80-column terminal


def visible(parser):
    """Each action ``--help`` shows, by the names it goes by (``<spec>`` for a positional)."""
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or "-h" in action.option_strings:
            continue
        yield (action.option_strings or [f"<{action.dest}>"]), action


def shape(action):
    return type(action).__name__, action.nargs, action.type, action.metavar, action.const


def test_each_option_name_has_one_meaning_on_every_sub_command():
    uses = defaultdict(list)
    for command, parser in COMMANDS.items():
        for names, action in visible(parser):
            for name in names:
                uses[name].append((command, action))
    differ = []
    for name, found in sorted(uses.items()):
        actions = [action for _, action in found]
        one_help = len({action.help for action in actions}) == 1
        shared = {declared(action) for action in actions} == {name.strip("<>")}
        if len({shape(action) for action in actions}) > 1 or not (one_help or shared):
            differ.append(
                f"{name}: " + "; ".join(f"{command}: {shape(a)} {a.help!r}" for command, a in found)
            )
    assert not differ, "\n".join(differ)


def test_the_names_the_issue_found_keep_one_meaning():
    """`--json FILE` writes a file; `--episodes N` is a count; `--workers N` the processes."""
    for name, metavar in (("--json", "FILE"), ("--episodes", "N"), ("--workers", "N")):
        for command, parser in COMMANDS.items():
            action = parser._option_string_actions.get(name)
            if action is not None and not isinstance(action, Deprecated):
                assert action.metavar == metavar and action.nargs is None, (command, name)
    assert isinstance(COMMANDS["diff"]._option_string_actions["--json"], Deprecated)
    assert COMMANDS["score"]._option_string_actions["--compare"].nargs == 2  # a pair, X and Y


def deprecated():
    return [
        (command, action)
        for command, parser in COMMANDS.items()
        for action in parser._actions
        if isinstance(action, Deprecated)
    ]


def test_every_hidden_option_is_a_deprecated_spelling():
    hidden = [
        (command, action.option_strings)
        for command, parser in COMMANDS.items()
        for action in parser._actions
        if action.help == argparse.SUPPRESS and not isinstance(action, Deprecated)
    ]
    assert hidden == []
    assert {(command, a.option_strings[0]) for command, a in deprecated()} >= {
        ("report", "--compare"),
        ("report", "--episodes"),
        ("diff", "--json"),
        ("subset", "--processes"),
    }


@pytest.mark.parametrize(
    ("command", "action"),
    deprecated(),
    ids=lambda x: x if isinstance(x, str) else x.option_strings[0],
)
def test_a_deprecated_spelling_is_hidden_warns_and_does_what_the_new_one_does(
    command, action, capsys
):
    (old,) = action.option_strings
    parser = COMMANDS[command]
    assert old not in parser.format_help() and old not in parser.format_usage()
    new = action.new.split()
    values = [] if action.nargs == 0 else ["1"]
    if len(new) == 1 and action.target.nargs != 0:
        new += values
    example = shlex.split(parser.epilog.removeprefix("Example: "))[1:]
    with_old = PARSER.parse_args([*example, old, *values])
    assert capsys.readouterr().err == (
        f"arcadebench: warning: {old} is deprecated: use {action.new}\n"
    )
    assert vars(with_old) == vars(PARSER.parse_args([*example, *new]))
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_sub_command_has_a_one_line_help_a_description_and_an_example(command):
    parser = COMMANDS[command]
    assert HELPS[command] and "\n" not in HELPS[command] and len(HELPS[command]) <= WIDTH
    assert parser.description and len(parser.description) > len(HELPS[command])
    assert parser.epilog and parser.epilog.startswith(f"Example: arcadebench {command} ")
    args = PARSER.parse_args(shlex.split(parser.epilog.removeprefix("Example: "))[1:])
    assert args.command == command  # the example parses, options and all


def test_help_lists_the_sub_commands_under_headings_in_the_order_of_the_work():
    text = PARSER.format_help()
    grouped = [name for _, names in GROUPS for name in names]
    assert sorted(grouped) == sorted(COMMANDS), "each sub-command in exactly one group"
    assert "other commands" not in text
    at = 0
    for title, names in GROUPS:
        at = text.index(f"\n{title}:\n", at)
        for name in names:
            line = next(line for line in text[at:].splitlines() if line.startswith(f"  {name} "))
            assert HELPS[name] in line  # one line each, beside its name
            at = text.index(line, at)
    assert list(COMMANDS) == grouped  # the choices an error lists, in the same order
    assert text.index("\noptions:\n") > at and "--version" in text


def test_a_sub_command_help_still_works(capsys):
    with pytest.raises(SystemExit) as done:
        main(["run", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: arcadebench run ") and "Example: arcadebench run" in out
