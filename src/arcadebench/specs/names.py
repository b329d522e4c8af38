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

Classes: Alias. Functions: name_key, candidates, aliases, subset_key.
"""

from __future__ import annotations

import csv
import functools
import importlib.resources
import io
import re
from typing import NamedTuple

__all__ = ["GAME_NAME", "Alias", "aliases", "candidates", "name_key", "subset_key"]

GAME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
"""A game name a spec accepts as a key (its files, env ids and logs use it as is)."""
_NON_ALNUM = re.compile(r"[^0-9a-z]")


class Alias(NamedTuple):
    """One row of ``data/game_names.csv``: a printed spelling, the ale-py id it names, where."""

    spelling: str
    game: str
    source: str


def _key(name: str) -> str:
    return _NON_ALNUM.sub("", str(name).lower())


@functools.cache
def aliases() -> tuple[Alias, ...]:
    """Every row of ``data/game_names.csv`` (its ``#`` comment lines skipped)."""
    path = importlib.resources.files("arcadebench") / "data" / "game_names.csv"
    text = path.read_text(encoding="utf-8")
    rows = csv.DictReader(
        io.StringIO(
            "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
        )
    )
    return tuple(Alias(r["spelling"], r["game"], r["source"]) for r in rows)


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
