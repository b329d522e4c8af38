"""Spelling-insensitive game names: ``Battle Zone``, ``BattleZone``, ``battle_zone`` are one game.

Papers, score tables and ale-py spell the same game differently. A *name key* drops case and
every character that is not a letter or digit, so most spellings meet; the ones that still differ
(SPR's ``ChopperCmd``, an apostrophe-s, "and" for "n") are data, each with where it is printed:
``arcadebench/data/game_names.csv``. A spelling there that could name two ALE games (``Pacman``:
ale-py's Pac-Man, and papers' short form of Ms. Pac-Man) joins neither: :func:`candidates` lists
them, and :meth:`~arcadebench.specs.model.Spec.resolve_game` refuses it with both.

Example:
    >>> name_key("Ms. Pac-Man") == name_key("ms_pacman")
    True
    >>> name_key("Montezuma's Revenge"), name_key("ChopperCmd")
    ('montezumarevenge', 'choppercommand')
    >>> [game for game, _ in candidates("Pac-Man")]
    ['pacman', 'ms_pacman']

Tables print a game as papers do (``Bank Heist``, ``Q*bert``), not as its key: each game's
printed name, with where it is so printed, is data too (``arcadebench/data/
game_display_names.csv``), read by :func:`display_name`.

Classes: Alias, DisplayName. Functions: name_key, candidates, aliases, subset_key,
display_name, display_names.
"""

from __future__ import annotations

import csv
import functools
import importlib.resources
import io
import re
from typing import NamedTuple

__all__ = [
    "GAME_NAME",
    "Alias",
    "DisplayName",
    "aliases",
    "candidates",
    "display_name",
    "display_names",
    "name_key",
    "subset_key",
]

GAME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""A game name a spec accepts as a key (its files, env ids and logs use it as is)."""
_NON_ALNUM = re.compile(r"[^0-9a-z]")


class Alias(NamedTuple):
    """One row of ``data/game_names.csv``: a printed spelling, the ale-py id it names, where."""

    spelling: str
    game: str
    source: str


class DisplayName(NamedTuple):
    """One row of ``data/game_display_names.csv``: a game, how papers print it, and where."""

    game: str
    name: str
    source: str


def _key(name: str) -> str:
    return _NON_ALNUM.sub("", str(name).lower())


def _data_rows(file: str) -> list[dict[str, str]]:
    """The rows of a CSV file of ``arcadebench/data``, its ``#`` comment lines skipped."""
    path = importlib.resources.files("arcadebench") / "data" / file
    text = path.read_text(encoding="utf-8")
    lines = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    return list(csv.DictReader(io.StringIO(lines)))


@functools.cache
def aliases() -> tuple[Alias, ...]:
    """Every row of ``data/game_names.csv`` (its ``#`` comment lines skipped)."""
    return tuple(Alias(r["spelling"], r["game"], r["source"]) for r in _data_rows("game_names.csv"))


@functools.cache
def display_names() -> dict[str, DisplayName]:
    """Every row of ``data/game_display_names.csv``, by game."""
    rows = _data_rows("game_display_names.csv")
    return {r["game"]: DisplayName(r["game"], r["name"], r["source"]) for r in rows}


def display_name(game: str) -> str:
    """``game`` as papers print it in their tables; a game without a printed name as it is.

    Example:
        >>> [display_name(g) for g in ("bank_heist", "ms_pacman", "qbert", "montezuma_revenge")]
        ['Bank Heist', 'Ms. Pac-Man', 'Q*bert', "Montezuma's Revenge"]
        >>> display_name("SonicTheHedgehog-GreenHillZone.Act1")
        'SonicTheHedgehog-GreenHillZone.Act1'
    """
    row = display_names().get(game)
    return row.name if row is not None else game


@functools.cache
def _table() -> tuple[dict[str, str], dict[str, tuple[Alias, ...]]]:
    """``(name key -> key of the one game it names, name key -> the rows of two or more)``."""
    by_key: dict[str, dict[str, Alias]] = {}
    for alias in aliases():
        by_key.setdefault(_key(alias.spelling), {}).setdefault(alias.game, alias)
    joined = {k: _key(next(iter(rows))) for k, rows in by_key.items() if len(rows) == 1}
    several = {k: tuple(rows.values()) for k, rows in by_key.items() if len(rows) > 1}
    return joined, several


def name_key(name: str) -> str:
    """Lower-case ``name`` and keep only letters and digits, then apply the one-game aliases."""
    key = _key(name)
    return _table()[0].get(key, key)


def candidates(name: str) -> list[tuple[str, str]]:
    """``[(game, where it is so spelled)]`` when ``name`` could name several ALE games, else ``[]``.

    Example:
        >>> candidates("Battle Zone")
        []
    """
    return [(alias.game, alias.source) for alias in _table()[1].get(_key(name), ())]


def subset_key(name: str) -> str:
    """JSON key of a subset's estimate (``Atari-5`` -> ``atari5``).

    Example:
        >>> subset_key("Atari-3-Val")
        'atari3_val'
    """
    return re.sub(r"-(?=\d)", "", name.lower()).replace("-", "_")
