"""Gymnasium ids: ``arcadebench/<Protocol>-<Game>-v<N>``, and their inverse.

One grammar for every protocol (Gymnasium's ``namespace/name-vN``): the spec's ``id_prefix``,
the game's display name (ale-py's ``BattleZone`` for Atari, the level name for Sonic) and the
spec's ``env_version``.

Functions: env_id, parse_env_id.
"""

from __future__ import annotations

import re

from ale_py.registration import rom_id_to_name

from arcadebench.errors import UnknownGame
from arcadebench.specs import Spec, load_spec

__all__ = ["NAMESPACE", "env_id", "parse_env_id"]

NAMESPACE = "arcadebench"
_ID_RE = re.compile(
    rf"^{NAMESPACE}/(?P<prefix>[A-Za-z][A-Za-z0-9]*)-(?P<game>.+)-v(?P<version>\d+)$"
)


def env_id(spec: Spec | str, game: str) -> str:
    """The Gymnasium id of ``game`` under ``spec``, e.g. ``arcadebench/Atari5-BattleZone-v0``.

    Example:
        >>> env_id("saber", "battle_zone")
        'arcadebench/SABER-BattleZone-v0'
    """
    spec = load_spec(spec)
    game = spec.resolve_game(game)
    name = rom_id_to_name(game) if spec.platform == "atari" else game
    return f"{NAMESPACE}/{spec.id_prefix}-{name}-v{spec.env_version}"


def parse_env_id(id: str) -> tuple[str, str, int]:
    """Split an id into ``(id_prefix, game display name, version)``: :func:`env_id` inverted.

    Example:
        >>> parse_env_id("arcadebench/SABER-BattleZone-v0")
        ('SABER', 'BattleZone', 0)
    """
    match = _ID_RE.fullmatch(id)
    if not match:
        raise UnknownGame(f"{id!r} is not an arcadebench id (arcadebench/<Protocol>-<Game>-v<N>).")
    return match["prefix"], match["game"], int(match["version"])
