"""Shared fixtures: real emulators only, and the Sonic-ROM gate.

- ``retro_env``: stable-retro's bundled Airstriker-Genesis-v0 (headless), closed after the test;
  stable-retro allows one emulator per process, so never hold two.
- ``@pytest.mark.sonic_rom``: the test needs a Sonic ROM imported into stable-retro; it runs
  whenever the ROM is present and is skipped (with the import command) otherwise.
- ``@pytest.mark.long``: runs only with ARCADEBENCH_LONG=1 (soak tests, extended fuzzing).
"""

from __future__ import annotations

import os

import pytest


def _sonic_rom_present() -> bool:
    import stable_retro

    try:
        stable_retro.data.get_romfile_path("SonicTheHedgehog-Genesis-v0")
    except FileNotFoundError:
        return False
    return True


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    long_mode = os.environ.get("ARCADEBENCH_LONG") == "1"
    has_rom = None
    for item in items:
        if "long" in item.keywords and not long_mode:
            item.add_marker(pytest.mark.skip(reason="long mode: run with ARCADEBENCH_LONG=1"))
        if "sonic_rom" in item.keywords:
            if has_rom is None:
                has_rom = _sonic_rom_present()
            if not has_rom:
                item.add_marker(
                    pytest.mark.skip(
                        reason="Sonic ROM not imported: "
                        "python -m stable_retro.import <dir with the ROM>"
                    )
                )


@pytest.fixture
def retro_env():
    """A headless Airstriker-Genesis-v0 RetroEnv (one emulator frame per step)."""
    import stable_retro

    env = stable_retro.make("Airstriker-Genesis-v0", render_mode=None)
    try:
        yield env
    finally:
        env.close()
