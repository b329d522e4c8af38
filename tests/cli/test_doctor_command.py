"""``arcadebench doctor``: versions, the headless check, ROM status per retro game, the level
table, and one fix per problem; exit status 1 when something is not playable."""

from __future__ import annotations

import re

import pytest
from sonic_helpers import AIRSTRIKER_SHA1, NOROM_MISSING, SONIC, sonic_rom, write_sonic_airstriker

from arcadebench.benchmarks.envs.roms import rom_status
from arcadebench.cli import main


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory):
    return str(write_sonic_airstriker(tmp_path_factory.mktemp("sonic-airstriker")))


def test_the_builtin_specs_with_the_headless_probe(capsys):
    status = main(["doctor"])
    out = capsys.readouterr().out
    all_roms = all(sonic_rom(game) for game in SONIC.retro_games)
    assert status == 0  # every Atari protocol runs; Sonic's ROMs are the user's to import
    for component in ("python", "gymnasium", "ale-py", "stable-retro"):
        assert f"\n{component} " in out
    assert (
        "stable-retro  ok        Airstriker-Genesis-v0 reset and stepped without a display" in out
    )
    assert "ale-py        ok        pong reset and stepped without a display" in out
    for game, (train, test) in {
        "SonicTheHedgehog-Genesis": (13, 4),
        "SonicTheHedgehog2-Genesis": (15, 3),
        "SonicAndKnuckles3-Genesis": (19, 4),
    }.items():
        row = next(line for line in out.splitlines() if line.startswith(game + " "))
        status = rom_status(SONIC, game)
        assert row.split()[1] == f"{game}-v0" and f"  {status.state}  " in row
        assert re.search(rf"\s{train}\s+{test}\s", row)
        if not sonic_rom(game):
            assert f"- {rom_status(SONIC, game).problem()}" in out
    playable = sum(sonic_rom(SONIC.levels[name].game) for name in SONIC.games)
    assert f"playable: {playable} of 58 levels" in out
    for spec, games in (("atari100k", 26), ("atari5", 57), ("machado2018", 60), ("saber", 61)):
        assert re.search(rf"^{spec} +{games} +{games}  -$", out, re.M), spec
    if not all_roms:
        assert "`pytest -m sonic_rom`" in out
        assert main(["doctor", "sonic", "--no-probe"]) == 1  # asked about Sonic by name


def test_a_spec_with_a_missing_rom_lists_levels_and_the_fix(spec_path, capsys):
    assert main(["doctor", spec_path, "--levels", "--no-probe"]) == 1
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if "-Genesis " in line}
    assert rows["AirstrikerA-Genesis"][1:6] == [
        "Airstriker-Genesis-v0",
        "ok",
        AIRSTRIKER_SHA1[:12],
        "2",
        "1",
    ]
    assert rows["NoRom-Genesis"][1:6] == ["NoRom-Genesis-v0", "missing", "-", "0", "1"]
    assert "playable: 5 of 6 levels, 2 of 3 test levels" in out
    assert (
        "NoRom-Zone0        test   Zone0        no  arcadebench/SonicAirstriker-NoRom-Zone0-v0"
        in out
    )
    assert out.count("\n- ") == 1 and f"- {NOROM_MISSING}\n" in out
    assert "headless" not in out


def test_everything_playable_exits_0(tmp_path, capsys):
    spec = tmp_path / "playable.yaml"
    path = write_sonic_airstriker(tmp_path / "data")
    text = path.read_text()
    text = text[: text.index("  NoRom-Genesis:")] + text[text.index("levels:") :]
    text = text.replace("  - [NoRom-Genesis,       Zone0, test,  0, 0]\n", "")
    spec.write_text(text.replace("integration: retro/", f"integration: {path.parent}/retro/"))
    assert main(["doctor", str(spec), "--no-probe"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("everything is playable.\n")
    assert "playable: 5 of 5 levels, 2 of 2 test levels" in out


def test_an_unknown_spec_is_bad_input(capsys):
    assert main(["doctor", "sonik"]) == 2
    assert "Did you mean: 'sonic'?" in capsys.readouterr().err
