"""Game names (`specs/names.py`, `data/game_names.csv`, `data/game_display_names.csv`)."""

from __future__ import annotations

import re

import ale_py.roms
from ale_py.registration import rom_id_to_name
from testdata import DATA

from arcadebench.specs import list_specs, load_spec
from arcadebench.specs.names import (
    aliases,
    candidates,
    display_name,
    display_names,
    name_key,
    subset_key,
)

ROMS = set(ale_py.roms.get_all_rom_ids())


def raw_key(name: str) -> str:
    """The name key without the table: case, spaces and punctuation dropped."""
    return re.sub(r"[^0-9a-z]", "", name.lower())


def own_keys(rom: str) -> set[str]:
    """The keys a ROM answers to without the table: its id and ale-py's display name."""
    return {raw_key(rom), raw_key(rom_id_to_name(rom))}


def test_every_row_names_an_ale_rom_and_says_where_it_is_printed():
    rows = aliases()
    assert len(rows) >= 11
    for row in rows:
        assert row.game in ROMS, row
        assert row.spelling.strip() == row.spelling and row.source.strip(), row


def test_a_one_game_row_joins_what_the_key_alone_does_not():
    for row in aliases():
        if not candidates(row.spelling):
            assert raw_key(row.spelling) not in own_keys(row.game), row  # else no row needed
            assert name_key(row.spelling) == name_key(row.game), row


def test_no_spelling_hides_the_ale_game_whose_own_name_it_is():
    """`Pacman` is ale-py's name of Pac-Man: a row giving it to Ms. Pac-Man lists both."""
    for row in aliases():
        named = {game for game, _ in candidates(row.spelling)} or {row.game}
        for rom in ROMS:
            if raw_key(row.spelling) in own_keys(rom):
                assert rom in named, (row, rom)


def test_papers_spellings_join_their_game():
    assert name_key("ChopperCmd") == name_key("Chopper Cmd") == name_key("chopper_command")
    assert name_key("Montezuma") == name_key("Montezuma's Revenge") == "montezumarevenge"
    assert name_key("S. Invaders") == name_key("SpaceInvaders")
    for spelling, rom in [
        ("MsPacman", "ms_pacman"),
        ("Ms Pacman", "ms_pacman"),
        ("Private Eye", "private_eye"),
        ("Kung-Fu Master", "kung_fu_master"),
        ("Up N Down", "up_n_down"),
    ]:
        assert name_key(spelling) == name_key(rom), spelling  # the key alone joins these


def test_a_spelling_of_two_ale_games_joins_neither_and_lists_both():
    assert [game for game, _ in candidates("Pacman")] == ["pacman", "ms_pacman"]
    assert candidates("Pac-Man") == candidates("PACMAN") == candidates("Pacman")
    assert "Pac-Man" in candidates("Pacman")[0][1] and "Ms. Pac-Man" in candidates("Pacman")[1][1]
    assert name_key("Pac-Man") == "pacman" != name_key("Ms. Pac-Man")
    assert candidates("ChopperCmd") == [] and candidates("Battle Zone") == []


def test_subset_keys():
    assert subset_key("Atari-5") == "atari5" and subset_key("Atari-3-Val") == "atari3_val"


# -- printed names --------------------------------------------------------------------------------

ATARI5_TABLE_2 = DATA / "paper" / "atari5_table_2.txt"


def test_every_game_of_the_atari_specs_has_its_printed_name_and_a_source():
    rows = display_names()
    games = {g for name in list_specs() for g in load_spec(name).games if g in ROMS}
    assert set(rows) == games  # every Atari game of a built-in spec, and no other
    for game, row in rows.items():
        assert row.game == game and row.name.strip() == row.name and row.source.strip(), row
        assert name_key(row.name) == name_key(game), row  # the printed name joins its game
        assert display_name(game) == row.name


def test_the_names_atari5_table_2_prints_are_its_text():
    table = ATARI5_TABLE_2.read_text(encoding="utf-8")
    printed = {n.strip() for line in table.splitlines()[3:] for n in line.split("\t")[1].split(",")}
    cited = [r for r in display_names().values() if r.source.startswith("Atari-5 Table 2")]
    assert len(cited) == 17
    for row in cited:
        assert row.name in printed, row
    # where the table prints another spelling, the row says which
    for game, spelling in (("ms_pacman", "Ms. Pacman"), ("qbert", "Q*Bert")):
        assert spelling in printed and spelling in display_names()[game].source


def test_papers_names_as_the_tables_print_them():
    assert [display_name(g) for g in ("bank_heist", "montezuma_revenge", "ms_pacman", "qbert")] == [
        "Bank Heist",
        "Montezuma's Revenge",
        "Ms. Pac-Man",
        "Q*bert",
    ]
    assert display_name("SonicTheHedgehog-GreenHillZone.Act1") == (
        "SonicTheHedgehog-GreenHillZone.Act1"  # no printed name: as it is
    )
