"""``arcadebench specs`` / ``show`` and the protocol card they print."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from testdata import DATA

from arcadebench.cli import main
from arcadebench.specs import load_spec
from arcadebench.specs.card import frames_to_time, protocol_card

MINIMAL = str(DATA / "specs" / "minimal_atari.yaml")


def test_specs_lists_every_protocol_with_version_and_hash(capsys):
    assert main(["specs"]) == 0
    out = capsys.readouterr().out
    for name in ("atari5", "hwr", "saber", "sonic"):
        assert name in out and load_spec(name).short_hash in out
    assert "arcadebench/Atari5-BattleZone-v0" in out


def test_specs_ids_lists_every_environment_id(capsys):
    assert main(["specs", "--ids", "saber"]) == 0
    out = capsys.readouterr().out
    assert out.count("arcadebench/SABER-") == 61 + 1  # 61 games, plus the example column


def test_show_prints_settings_constants_and_rules(capsys):
    assert main(["show", "saber"]) == 0
    out = capsys.readouterr().out
    assert "18,000 frames (5 min) without reward" in out
    assert "21,600,000 frames (100 h)" in out
    assert "failing < 1 %" in out and "superhuman >= 100 %" in out
    assert "1,000,000.00" in out  # Asterix's world record in the constants table
    assert "Toromanoff" in out
    assert "a reward < -900,000 is a score-counter wrap: 1,000,000 is added back" in out
    assert "full, 18 actions (emulator exceptions: skiing 9)" in out
    # Table 5's * (boxing, enduro, pong, skiing) has its legend under the table
    lines = out.splitlines()
    marked = [line.split()[0] for line in lines if line.endswith(" *")]
    assert marked == ["boxing", "enduro", "pong", "skiing"]
    legend = "* extrapolated: Table 5 marks the world record as extrapolated from the reported one"
    assert lines[lines.index(next(line for line in lines if line.startswith("zaxxon "))) + 1] == (
        legend
    )
    assert main(["show", "atari5"]) == 0
    assert "* extrapolated" not in capsys.readouterr().out  # no game marked: no legend


def test_show_says_where_the_spec_chose_between_printed_values(capsys):
    assert main(["show", "hwr", "--brief"]) == 0
    notes = capsys.readouterr().out.split("== Notes")[1]
    prose = " ".join(notes.split())  # the notes are wrapped prose
    assert "Battle Zone random score The paper prints Battle Zone's random score as 236" in prose
    assert "this spec uses 2,360" in prose and "-38.8" in prose and "-38.7" in prose
    assert "4.70E-07" in prose and "a misprint" in prose
    assert max(len(line) for line in notes.splitlines()) <= 100
    assert main(["show", "saber", "--brief"]) == 0
    prose = " ".join(capsys.readouterr().out.split("== Notes")[1].split())
    assert "valeoai/rainbow-iqn-apex" in prose and "adds 1,000,000 back" in prose
    assert "bowling 160.7 and boxing 12.1" in prose


def test_show_of_atari5_has_the_subsets_models_and_table_3(capsys):
    assert main(["show", "atari5"]) == 0
    out = capsys.readouterr().out
    assert "battle_zone 0.382, double_dunk 0.0679" in out
    assert re.search(r"Default selection +Atari-5\n", out)
    assert "10^(sum c_g log10(1 + max(0, HNS_g))) - 1" in out
    assert "Atari-10 per-game models (Table 11)" in out
    assert "MuZero" in out and "2,091" in out


def test_show_of_sonic_lists_levels_with_their_end_x(capsys):
    assert main(["show", "sonic"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"SonicTheHedgehog-GreenHillZone.Act2 +test +SonicTheHedgehog-Genesis-v0", out)
    assert re.search(r"Default selection +test\n", out)
    assert "8,032" in out  # 0x1F60, Green Hill Act 2's end
    assert "Human" in out and "7,438.2" in out


def test_show_accepts_a_yaml_file(capsys):
    assert main(["show", MINIMAL, "--brief"]) == 0
    assert "Minimal protocol" in capsys.readouterr().out


def test_show_of_an_unknown_spec_is_one_line_and_exit_2(capsys):
    assert main(["show", "sabre"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Did you mean: 'saber'?" in err


def test_console_script_runs():
    done = subprocess.run(
        [sys.executable, "-m", "arcadebench", "show", "hwr", "--brief"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "108,000 frames (30 min)" in done.stdout


@pytest.mark.parametrize(
    "frames,text", [(108_000, "30 min"), (18_000, "5 min"), (21_600_000, "100 h"), (30, "0.5 s")]
)
def test_frames_to_time(frames, text):
    assert frames_to_time(frames) == text


def test_card_sections():
    card = protocol_card(load_spec("sonic"))
    assert list(card) == ["Protocol", "Environment", "Scoring", "Games"]
    assert dict(card["Games"])["Test levels"] == "11"
    assert dict(card["Environment"])["Action set"] == "essential8 (Discrete(8))"
