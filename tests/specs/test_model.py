"""The typed spec (`specs/model.py`): what a `Spec` shows when printed, how it names games."""

from __future__ import annotations

import pytest

from arcadebench.errors import UnknownGame
from arcadebench.specs import list_specs, load_spec, parse_spec
from arcadebench.specs.loader import SPEC_DIR


def test_a_spec_prints_as_one_line_naming_it_by_version_and_hash():
    saber = load_spec("saber")
    assert repr(saber) == str(saber) == "Spec('saber' v2, sha256:e8f835bcbf3b, atari, 61 games)"
    assert saber.short_hash == "e8f835bcbf3b"
    assert repr(load_spec("sonic")).endswith(", retro, 58 levels)")


@pytest.mark.parametrize("name", list_specs())
def test_every_spec_and_a_list_of_them_print_short(name):
    spec = load_spec(name)
    text = repr([spec, spec])  # print(report.closest) and the like print lists of them
    assert "\n" not in text and len(text) < 2 * 70


def test_games_resolve_as_papers_print_them():
    atari100k = load_spec("atari100k")
    for printed, game in [
        ("ChopperCmd", "chopper_command"),  # SPR's, DrQ's, CURL's, EfficientZero's tables
        ("Chopper Cmd", "chopper_command"),
        ("Ms Pacman", "ms_pacman"),
        ("MsPacman", "ms_pacman"),
        ("Kung-Fu Master", "kung_fu_master"),
        ("Private Eye", "private_eye"),
        ("Up N Down", "up_n_down"),
    ]:
        assert atari100k.resolve_game(printed) == game, printed
    assert load_spec("saber").resolve_game("Montezuma") == "montezuma_revenge"


def test_a_name_of_two_ale_games_is_refused_with_both():
    atari100k = load_spec("atari100k")
    for spelling in ("Pacman", "Pac-Man"):
        with pytest.raises(UnknownGame) as refused:
            atari100k.resolve_game(spelling)
        message = str(refused.value)
        assert message.startswith(f"{spelling!r} could name 2 ALE games: pacman (")
        assert ") or ms_pacman (" in message and "\n" not in message
        assert message.endswith(
            "write the game's ale-py id (pacman or ms_pacman); the 'atari100k' spec has ms_pacman"
        )
    assert atari100k.resolve_game("ms_pacman") == "ms_pacman"


def test_in_a_spec_with_pac_man_its_own_name_is_pac_man():
    """ale-py names the ROM `Pacman` (gym ids use it): a spec that has it resolves it so."""
    text = (SPEC_DIR / "atari5.yaml").read_text()
    row = "    ms_pacman:         [307.3, 6951.6]\n"
    spec = parse_spec(text.replace(row, row + "    pacman:            [1.0, 2.0]\n"))
    assert spec.resolve_game("Pacman") == spec.resolve_game("pacman") == "pacman"
    assert spec.resolve_game("Ms. Pac-Man") == "ms_pacman"
