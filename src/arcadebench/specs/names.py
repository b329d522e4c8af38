"""Spelling-insensitive game names: ``Battle Zone``, ``BattleZone``, ``battle_zone`` are one game.

Papers, score tables and ale-py spell the same game differently. A *name key* drops case and
every character that is not a letter or digit, so most spellings meet; the few that still differ
(an apostrophe-s, "and" for "n") are listed as aliases of the ale-py id.

Example:
    >>> name_key("Ms. Pac-Man") == name_key("ms_pacman")
    True
    >>> name_key("Montezuma's Revenge")
    'montezumarevenge'
"""

from __future__ import annotations

import re

__all__ = ["name_key", "subset_key"]

_NON_ALNUM = re.compile(r"[^0-9a-z]")

# name key of a spelling -> name key of the ale-py id, for spellings the key alone cannot join.
_ALIASES = {
    "montezumasrevenge": "montezumarevenge",
    "upanddown": "upndown",
    "updown": "upndown",
    "jamesbond007": "jamesbond",
    "sinvaders": "spaceinvaders",
    "pitfall2600": "pitfall",
}


def name_key(name: str) -> str:
    """Lower-case ``name`` and keep only letters and digits, then apply the known aliases."""
    key = _NON_ALNUM.sub("", str(name).lower())
    return _ALIASES.get(key, key)


def subset_key(name: str) -> str:
    """JSON key of a subset's estimate (``Atari-5`` -> ``atari5``).

    Example:
        >>> subset_key("Atari-3-Val")
        'atari3_val'
    """
    return re.sub(r"-(?=\d)", "", name.lower()).replace("-", "_")
