"""Retro ROMs: is a game of a retro protocol playable here, and if not, what to do about it.

The Sonic ROMs are not redistributable, so every machine starts without them. stable-retro
reports a missing ROM only when an emulator is created, with ``FileNotFoundError: Game not
found ... Did you make sure to import the ROM?`` and nothing about which dump it wants. The
protocol needs one exact dump per game (the RAM addresses and the level ends of
``sonic.yaml`` belong to it), so arcadebench checks first, and fails at once with one line that
names the game, the expected SHA-1 and the import command (Nichol et al. 2018, Section 3.1:
a game is a ROM plus save states, a data file and scenarios; stable-retro ships all but the ROM).

A spec's ``retro_games.<game>.integration`` is a stable-retro game id
(``SonicTheHedgehog-Genesis-v0``), or a directory (absolute, or relative to the spec file)
named after one: its ``data.json``, scenarios and ``.state`` files replace stable-retro's, and
the ROM is the one imported for the game of that name. The tests use such a directory to run
the Sonic code path on the bundled Airstriker ROM.

Classes: RomStatus.
Functions: rom_status, require_rom, require_roms, integration_of, state_file, IMPORT_COMMAND.
"""

from __future__ import annotations

import functools
import hashlib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from arcadebench.errors import InvalidArgument, RomNotFound, UnknownGame
from arcadebench.specs import Spec

__all__ = [
    "IMPORT_COMMAND",
    "Integration",
    "RomStatus",
    "integration_of",
    "require_rom",
    "require_roms",
    "rom_status",
    "state_file",
]

IMPORT_COMMAND = "python -m stable_retro.import <dir with the ROM>"


@dataclass(frozen=True)
class Integration:
    """Where a retro game's files come from.

    Attributes:
        game_id: the stable-retro game id (``SonicTheHedgehog-Genesis-v0``).
        directory: a directory whose files replace stable-retro's (``None``: stable-retro's own).
    """

    game_id: str
    directory: Path | None = None

    def file(self, name: str) -> Path | None:
        """The file ``name`` of this game: the directory's if it has one, else stable-retro's."""
        if self.directory is not None and (self.directory / name).is_file():
            return self.directory / name
        import stable_retro.data

        found = stable_retro.data.get_file_path(
            self.game_id, name, stable_retro.data.Integrations.DEFAULT
        )
        return Path(found) if found else None


def integration_of(spec: Spec, game: str) -> Integration:
    """The :class:`Integration` of retro ``game`` (a key of ``spec.retro_games``).

    Raises:
        InvalidArgument: ``game`` is not a retro game of ``spec``, or its directory is missing.
    """
    if game not in spec.retro_games:
        raise InvalidArgument(
            f"`game` must be a retro game of the {spec.name!r} spec "
            f"({', '.join(spec.retro_games)}), got {game!r}"
        )
    name = spec.retro_games[game].integration
    if "/" not in name and "\\" not in name:
        return Integration(name)
    path = Path(name).expanduser()
    if not path.is_absolute():
        source = Path(spec.source)
        path = (source.parent if source.is_absolute() else Path.cwd()) / path
    if not path.is_dir():
        raise InvalidArgument(
            f"`retro_games.{game}.integration` of {spec.source} must be a stable-retro game id or "
            f"an existing directory, got {name!r} (no directory {path})"
        )
    return Integration(path.name, path.resolve())


@functools.lru_cache(maxsize=16)
def _sha1(path: str, _size: int, _mtime_ns: int) -> str:
    digest = hashlib.sha1()  # noqa: S324 - stable-retro identifies ROMs by SHA-1
    with open(path, "rb") as rom:
        for block in iter(lambda: rom.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RomStatus:
    """Whether the ROM of one retro game is installed, and the right dump.

    Attributes:
        game: the spec's name of the game (``SonicTheHedgehog-Genesis``).
        game_id: the stable-retro game id (``SonicTheHedgehog-Genesis-v0``).
        expected_sha1: the SHA-1s of the dumps the protocol accepts (``rom_sha1`` in the spec).
        path: the installed ROM file, or ``None``.
        sha1: its SHA-1, or ``None``.
        known: whether stable-retro has an integration of ``game_id`` at all.
    """

    game: str
    game_id: str
    expected_sha1: tuple[str, ...]
    path: str | None = None
    sha1: str | None = None
    known: bool = True

    @property
    def playable(self) -> bool:
        """The ROM is installed and is one of the expected dumps."""
        return self.sha1 is not None and self.sha1 in self.expected_sha1

    @property
    def state(self) -> str:
        """``"ok"``, ``"missing"``, ``"sha1 mismatch"`` or ``"unknown game"`` (for tables)."""
        if not self.known:
            return "unknown game"
        if self.path is None:
            return "missing"
        return "ok" if self.playable else "sha1 mismatch"

    def problem(self) -> str | None:
        """One line saying what is wrong and how to fix it; ``None`` when playable."""
        expected = " or ".join(self.expected_sha1)
        if not self.known:
            import stable_retro

            return (
                f"stable-retro {stable_retro.__version__.strip()} has no game {self.game_id!r} "
                f"(the integration of {self.game}); stable-retro >= 1.0 names games with a -v0 "
                "suffix: upgrade it (pip install -U stable-retro) or fix the spec's integration"
            )
        if self.path is None:
            return (
                f"the ROM of {self.game_id} is not imported (expected SHA-1 {expected}); ROMs are "
                f"not redistributable: import your copy with `{IMPORT_COMMAND}` "
                "(then `arcadebench doctor` shows what is playable)"
            )
        if not self.playable:
            return (
                f"the ROM of {self.game_id} at {self.path} has SHA-1 {self.sha1}, not the "
                f"expected {expected}; the protocol's RAM addresses and level ends belong to that "
                f"dump: import a matching one with `{IMPORT_COMMAND}`"
            )
        return None


def rom_status(spec: Spec, game: str) -> RomStatus:
    """Look up the ROM of retro ``game`` of ``spec`` (hashes it; cached per file and mtime).

    Example:
        >>> from arcadebench.specs import load_spec
        >>> status = rom_status(load_spec("sonic"), "SonicTheHedgehog-Genesis")
        >>> status.game_id, status.expected_sha1
        ('SonicTheHedgehog-Genesis-v0', ('69e102855d4389c3fd1a8f3dc7d193f8eee5fe5b',))
    """
    import stable_retro.data

    integration = integration_of(spec, game)
    base = RomStatus(game, integration.game_id, spec.retro_games[game].rom_sha1)
    inttype = stable_retro.data.Integrations.DEFAULT
    try:
        path = stable_retro.data.get_romfile_path(integration.game_id, inttype)
    except FileNotFoundError:
        known = integration.file("rom.sha") is not None or integration.file("data.json") is not None
        return RomStatus(base.game, base.game_id, base.expected_sha1, known=known)
    stat = os.stat(path)
    sha1 = _sha1(path, stat.st_size, stat.st_mtime_ns)
    return RomStatus(base.game, base.game_id, base.expected_sha1, path=path, sha1=sha1)


def require_rom(spec: Spec, game: str) -> RomStatus:
    """The status of retro ``game``'s ROM, which must be playable.

    Raises:
        RomNotFound: the ROM is missing or another dump (one line: game, SHA-1, import command).
        UnknownGame: stable-retro has no such game.
    """
    status = rom_status(spec, game)
    problem = status.problem()
    if problem is None:
        return status
    if not status.known:
        raise UnknownGame(problem)
    raise RomNotFound(problem)


def require_roms(spec: Spec, levels: Iterable[str]) -> None:
    """Check, before anything starts, that every level in ``levels`` can be played here.

    One :class:`~arcadebench.errors.RomNotFound` names every missing game at once, so a user
    importing ROMs learns the whole list from one run.

    Raises:
        RomNotFound: some ROMs are missing or wrong dumps.
        UnknownGame: a level is not one of the spec's, or stable-retro lacks a game.
    """
    games: dict[str, None] = {}
    for name in levels:
        level = spec.levels.get(spec.resolve_game(name))
        if level is None:
            raise UnknownGame(f"{name!r} is not a level of the {spec.name!r} spec")
        games[level.game] = None
    statuses = [rom_status(spec, game) for game in games]
    for status in statuses:
        if not status.known:
            raise UnknownGame(status.problem())
    bad = [s for s in statuses if not s.playable]
    if len(bad) == 1:
        raise RomNotFound(bad[0].problem())
    if bad:
        missing = "; ".join(_short(status) for status in bad)
        raise RomNotFound(
            f"{len(bad)} ROMs of the {spec.name!r} levels are not imported or are other dumps: "
            f"{missing}; ROMs are not redistributable: import your copies with `{IMPORT_COMMAND}` "
            "(then `arcadebench doctor` shows what is playable)"
        )


def _short(status: RomStatus) -> str:
    expected = " or ".join(status.expected_sha1)
    if status.path is None:
        return f"{status.game_id} (SHA-1 {expected})"
    return f"{status.game_id} ({status.path} has SHA-1 {status.sha1}, expected {expected})"


def state_file(spec: Spec, level: str) -> Path:
    """The save state file of ``level`` (a level name of ``spec``).

    Raises:
        UnknownGame: not a level of ``spec``, or its state file is missing.
    """
    record = spec.levels.get(spec.resolve_game(level))
    if record is None:
        raise UnknownGame(f"{level!r} is not a level of the {spec.name!r} spec")
    integration = integration_of(spec, record.game)
    path = integration.file(f"{record.state}.state")
    if path is None:
        raise UnknownGame(
            f"the save state {record.state!r} of {integration.game_id} (level {record.name}) is "
            "missing from stable-retro's data; reinstall stable-retro "
            "(pip install --force-reinstall stable-retro)"
        )
    return path
