"""Test helpers for the Sonic benchmark: the Sonic protocol on the bundled Airstriker ROM.

``write_sonic_airstriker(root)`` copies ``tests/data/specs/sonic_airstriker.yaml`` to ``root``
and writes, next to it, the integration directories it names: the contest integration on
Airstriker of :mod:`wrapper_helpers` (Sonic 1's contest scenario and RAM variables in free RAM),
with ``x`` moved to Airstriker's score and ``lives`` to its lives, and one save state per level
whose free RAM holds the level's zone and act. Everything then runs through the same code path
as the real Sonic levels (``make_retro_env``), in this process or in workers.
"""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from wrapper_helpers import contest_airstriker

from arcadebench.benchmarks.envs.roms import rom_status
from arcadebench.specs import load_spec

SPEC_TEMPLATE = Path(__file__).parent / "data" / "specs" / "sonic_airstriker.yaml"
AIRSTRIKER_SHA1 = "a8be7b0ca850119b167f9644e6a4a22e983d61a4"
SCORE, LIVES = 16712270, 16712282  # Airstriker's own RAM variables (its data.json)
TEST_LEVELS = ("AirstrikerA-Zone2", "AirstrikerB-Zone3")  # the playable test levels
NOROM_LEVEL = "NoRom-Zone0"
SONIC = load_spec("sonic")
IMPORT = "`python -m stable_retro.import <dir with the ROM>`"
SONIC1_MISSING = (
    "the ROM of SonicTheHedgehog-Genesis-v0 is not imported (expected SHA-1 "
    "69e102855d4389c3fd1a8f3dc7d193f8eee5fe5b); ROMs are not redistributable: import your copy "
    f"with {IMPORT} (then `arcadebench doctor` shows what is playable)"
)
NOROM_MISSING = (
    "the ROM of NoRom-Genesis-v0 is not imported (expected SHA-1 "
    "0123456789abcdef0123456789abcdef01234567); ROMs are not redistributable: import your copy "
    f"with {IMPORT} (then `arcadebench doctor` shows what is playable)"
)


def sonic_rom(game: str = "SonicTheHedgehog-Genesis") -> bool:
    """Whether the ROM of a Sonic game is imported here (the expected dump)."""
    return rom_status(SONIC, game).playable


def write_sonic_airstriker(root: Path) -> Path:
    """Write the test spec and its integrations under ``root``; returns the spec path.

    Creates (and closes) one emulator in this process.
    """
    root.mkdir(parents=True, exist_ok=True)
    spec_path = root / SPEC_TEMPLATE.name
    shutil.copy(SPEC_TEMPLATE, spec_path)
    spec = load_spec(str(spec_path))
    game_dirs = {game: root / info.integration for game, info in spec.retro_games.items()}
    states: dict[str, bytes] = {}
    first = game_dirs["AirstrikerA-Genesis"]
    env = contest_airstriker("SonicTheHedgehog-Genesis", first, {})
    try:
        retro = env.unwrapped
        for level in spec.levels.values():
            if level.game == "NoRom-Genesis":
                continue
            retro.em.set_state(retro.initial_state)
            retro.data.update_ram()
            retro.data.set_value("zone", level.zone)
            retro.data.set_value("act", level.act)
            states[level.name] = retro.em.get_state()
    finally:
        env.close()
    data = json.loads((first / "data.json").read_text())
    data["info"]["x"] = {"address": SCORE, "type": ">u4"}
    data["info"]["lives"] = {"address": LIVES, "type": ">u2"}
    for game, directory in game_dirs.items():
        directory.mkdir(parents=True, exist_ok=True)
        if game == "NoRom-Genesis":
            (directory / "rom.sha").write_text(spec.retro_games[game].rom_sha1[0] + "\n")
            (directory / "data.json").write_text(json.dumps(data))
            continue
        if directory != first:
            for name in ("contest.json", "script.lua"):
                shutil.copy(first / name, directory / name)
        (directory / "data.json").write_text(json.dumps(data))
        for level in spec.levels.values():
            if level.game == game:
                with gzip.open(directory / f"{level.state}.state", "wb") as handle:
                    handle.write(states[level.name])
    return spec_path
