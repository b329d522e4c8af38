"""The shipped specs against their sources, and the loader against a corpus of broken specs.

A wrong constant is a wrong benchmark: every number in the YAML files is compared here with the
extracted data (tests/data/paper/games.csv, the Sonic CSVs) and with the paper tables as text.
"""

from __future__ import annotations

import csv
import math
import re
import time

import pytest
from testdata import DATA

import arcadebench
from arcadebench.errors import SpecError, UnknownGame, UnknownSpec
from arcadebench.specs import list_specs, load_spec, parse_spec
from arcadebench.specs.names import name_key

PAPER = DATA / "paper"
BROKEN = sorted((DATA / "broken_specs").glob("*.yaml"))


def _csv_rows(name: str) -> list[dict[str, str]]:
    with open(PAPER / name, newline="") as f:
        return list(csv.DictReader(f))


def _num(text: str) -> float | None:
    return None if text in ("", "NA") else float(text)


GAMES = {row["game"]: row for row in _csv_rows("games.csv")}


def test_builtin_specs_are_found_by_globbing():
    assert list_specs() == [
        "atari100k",
        "atari5",
        "dqn2015",
        "hwr",
        "machado2018",
        "saber",
        "sonic",
    ]


@pytest.mark.parametrize("name", list_specs())
def test_every_spec_has_version_hash_and_citation(name):
    spec = load_spec(name)
    assert spec.version >= 1
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", spec.hash)
    assert spec.citation and spec.url.startswith("https://")


# -- constants against the extracted data --------------------------------------------------------


def test_atari5_constants_equal_table_12_columns_of_games_csv():
    spec = load_spec("atari5")
    expected = {g: row for g, row in GAMES.items() if row["random"]}
    assert set(spec.constants) == set(expected) and len(expected) == 57
    for game, row in expected.items():
        assert spec.constants[game].random == float(row["random"]), game
        assert spec.constants[game].human == float(row["human_average"]), game
        assert spec.constants[game].world_record is None


def test_hwr_constants_equal_games_csv():
    spec = load_spec("hwr")
    expected = {g: row for g, row in GAMES.items() if row["random"]}
    assert set(spec.constants) == set(expected)
    for game, row in expected.items():
        c = spec.constants[game]
        assert (c.random, c.human, c.world_record) == (
            float(row["random"]),
            float(row["human_average"]),
            float(row["world_record"]),
        ), game


def test_saber_constants_equal_table_5_columns_of_games_csv():
    spec = load_spec("saber")
    expected = {g: row for g, row in GAMES.items() if row["saber_random"]}
    assert set(spec.constants) == set(expected) and len(expected) == 61
    for game, row in expected.items():
        c = spec.constants[game]
        assert c.random == float(row["saber_random"]), game
        assert c.human == _num(row["saber_human"]), game
        assert c.world_record == _num(row["saber_world_record"]), game
        assert c.extrapolated == (row["saber_world_record_extrapolated"] == "True"), game
    with_record = [g for g, c in spec.constants.items() if c.world_record is not None]
    assert len(with_record) == 58  # Section 2.3: records exist for 58 of the 61 games
    assert {g for g in spec.constants if g not in with_record} == {
        "double_dunk",
        "elevator_action",
        "tennis",
    }


# -- constants and coefficients against the paper text -------------------------------------------


def _paper_table(text: str, start: str, end: str) -> dict[str, list[float]]:
    block = text[text.index(start) : text.index(end, text.index(start))]
    rows = {}
    for line in block.splitlines():
        parts = [p.strip() for p in line.split("\t")]
        try:
            values = [float(p) for p in parts[1:] if p]
        except ValueError:
            continue
        if values:
            rows[parts[0]] = values
    return rows


ATARI5_TEXT = (PAPER / "atari5_tables_9_12.txt").read_text()


def test_atari5_constants_equal_table_12_text():
    table = _paper_table(ATARI5_TEXT + "\nEND", "Table 12.", "END")
    spec = load_spec("atari5")
    assert len(table) == 57
    for name, (random, human) in table.items():
        game = spec.resolve_game(name)
        assert (spec.constants[game].random, spec.constants[game].human) == (random, human), name


def test_atari5_per_game_models_equal_tables_10_and_11_text():
    spec = load_spec("atari5")
    for subset, start, end in (
        ("Atari-5", "Table 10.", "Table 11."),
        ("Atari-10", "Table 11.", "Table 12."),
    ):
        table = _paper_table(ATARI5_TEXT, start, end)
        models = spec.predictions[subset].models
        assert len(table) == len(models) == 57
        for name, row in table.items():
            assert models[spec.resolve_game(name)] == tuple(row), name


def test_per_game_model_inputs_are_the_identity_rows_of_the_tables():
    # Each input game predicts itself with coefficient 1 in its own column (Tables 10-11).
    spec = load_spec("atari5")
    for pred in spec.predictions.values():
        for i, game in enumerate(pred.inputs):
            row = pred.models[game]
            assert row[0] == 0.0 and row[1 + i] == 1.0 and sum(row) == 1.0


def test_atari5_subsets_equal_table_9_text():
    block = ATARI5_TEXT[ATARI5_TEXT.index("Table 9.") : ATARI5_TEXT.index("Table 10.")]
    parsed: dict[str, tuple[list[str], list[float]]] = {}
    current = None
    for line in block.splitlines()[2:]:
        parts = [p.strip() for p in line.split("\t") if p.strip()]
        if len(parts) == 3 and parts[0] != "Dataset":
            current = parts[0]
            parsed[current] = ([], [])
            parts = parts[1:]
        if current and len(parts) == 2:
            parsed[current][0].extend(g.strip() for g in parts[0].split(","))
            parsed[current][1].extend(float(c) for c in parts[1].split(",") if c.strip())
    spec = load_spec("atari5")
    assert (
        set(parsed)
        == set(spec.subsets)
        == {"Atari-1", "Atari-3", "Atari-5", "Atari-10", "Atari-3-Val", "Atari-5-Val"}
    )
    for name, (games, coefficients) in parsed.items():
        subset = spec.subsets[name]
        assert [spec.resolve_game(g) for g in games] == list(subset.games), name
        assert list(subset.coefficients) == coefficients, name


def test_atari5_r2_and_relative_error_equal_table_2_text():
    spec = load_spec("atari5")
    lines = (PAPER / "atari5_table_2.txt").read_text().splitlines()
    seen = 0
    for line in lines:
        parts = line.split("\t")
        if parts[0] in spec.subsets:
            subset = spec.subsets[parts[0]]
            assert subset.r2 == float(parts[2]), parts[0]
            assert subset.relative_error == float(parts[3].rstrip("%")), parts[0]
            seen += 1
    assert seen == 6


def test_saber_constants_equal_table_5_text_where_the_extraction_is_clean():
    spec = load_spec("saber")
    text = (PAPER / "saber_table_5.txt").read_text().splitlines()[2:]
    clean = 0
    for line in text:
        cells = [c.strip() for c in line.split("\t") if c.strip()]
        if len(cells) != 4 or any(" " in c for c in cells[1:]):
            continue  # merged rows: checked below
        game = spec.resolve_game(cells[0])
        random, human, record = (_num(c.rstrip("*")) for c in cells[1:])
        c = spec.constants[game]
        assert (c.random, c.human, c.world_record) == (random, human, record), game
        assert c.extrapolated == cells[3].endswith("*"), game
        clean += 1
    assert clean >= 50
    # Rows the PDF extraction merged: every number printed in them appears in the spec.
    merged = {
        "berzerk": "165.6 2630.4 160.7 1057940.0",
        "bowling boxing": "23.48 -0.69 300.0 100.0",
        "ice hockey": "-10.03 0.9 302.8 36.0 45550.0",
        "jamesbond journey escape": "27.0 -19977.0 302.8 4317804.0",
        "seaquest skiing": "88.2 -16267.91 42054.7 999999.0 -3272.0",
        "solaris": "2346.6 -4336.9 12326.7 111420.0",
    }
    values = {
        v
        for c in spec.constants.values()
        for v in (c.random, c.human, c.world_record)
        if v is not None
    }
    for row, numbers in merged.items():
        assert row in "\n".join(text)
        for number in numbers.split():
            assert float(number) in values, (row, number)


def test_saber_table_1_parameters():
    env = load_spec("saber").environment
    assert env.repeat_action_probability == 0.25
    assert env.full_action_space and not env.life_information
    assert env.max_stuck_frames == 5 * 60 * 60
    assert env.max_episode_frames == 100 * 3600 * 60
    # Appendix C as the authors' code ran it: below -900,000 is a wrap of the 1M counter
    assert (env.rollover_threshold, env.rollover_correction) == (-900_000, 1_000_000)
    evaluation = load_spec("saber").evaluation
    assert (evaluation.episode_aggregate, evaluation.k) == ("last_k", 100)
    assert evaluation.checkpoints == (10_000_000, 50_000_000, 100_000_000, 200_000_000)


def test_saber_classes_and_cap():
    scoring = load_spec("saber").scoring
    assert scoring.classes == (
        ("failing", 1.0),
        ("poor", 10.0),
        ("medium", 50.0),
        ("fair", 100.0),
        ("superhuman", None),
    )
    assert {n.name: n.cap for n in scoring.normalised} == {
        "hwrns": None,
        "saber": 200.0,
        "hns": None,
    }


def test_hwr_metrics_and_game_time():
    spec = load_spec("hwr")
    assert {n.name for n in spec.scoring.normalised} == {"hns", "chns", "hwrns", "saber"}
    assert spec.scoring.game_time_frames_per_day == 108_000 * 2 * 24
    assert (
        spec.environment.max_episode_frames == 108_000
        and spec.evaluation.budget_frames == 200_000_000
    )


def test_atari5_environment_is_the_30_minute_machado_protocol():
    env = load_spec("atari5").environment
    assert (
        env.frameskip,
        env.repeat_action_probability,
        env.full_action_space,
        env.life_information,
        env.max_episode_frames,
    ) == (4, 0.25, True, False, 108_000)
    assert load_spec("atari5").default_games == (
        "battle_zone",
        "double_dunk",
        "name_this_game",
        "phoenix",
        "qbert",
    )


# -- Sonic ---------------------------------------------------------------------------------------


def test_sonic_levels_equal_the_contest_csvs_in_order():
    spec = load_spec("sonic")
    for split, name in (("train", "sonic-train.csv"), ("test", "sonic-validation.csv")):
        expected = [(r["game"], r["state"]) for r in _csv_rows(name)]
        got = [(lv.game, lv.state) for lv in spec.levels.values() if lv.split == split]
        assert got == expected
    assert (
        len(spec.levels) == 58
        and len(spec.games_of("test")) == 11
        and len(spec.games_of("train")) == 47
    )


def test_sonic_settings_and_baselines_equal_the_paper():
    spec = load_spec("sonic")
    env = spec.environment
    assert (env.frameskip, env.sticky_probability, env.max_episode_timesteps) == (4, 0.25, 4500)
    assert (env.progress_scale, env.completion_bonus, env.bonus_horizon_frames) == (
        9000,
        1000,
        18000,
    )
    assert env.bonus_horizon_frames == env.max_episode_timesteps * env.frameskip
    assert spec.evaluation.budget_steps == 1_000_000
    table = (PAPER / "sonic_table_1.txt").read_text()
    published = {
        name: (score, err)
        for name, score, err in re.findall(
            r"(Rainbow \(joint\)|PPO \(joint\)|Rainbow|JERK|PPO|Human) ([\d.]+)±([\d.]+)", table
        )
    }
    assert {k: tuple(v) for k, v in spec.published[0].rows.items()} == {
        k: (float(s), float(e)) for k, (s, e) in published.items()
    }


def test_sonic_essential_actions_equal_section_3_7():
    text = (PAPER / "sonic_actions.txt").read_text()
    combos = [
        frozenset(b.strip() for b in m.split(",") if b.strip())
        for m in re.findall(r"\{([^{}]*)\}", text)
    ]
    spec = load_spec("sonic")
    assert [frozenset(c) for c in spec.action_sets["essential8"]] == combos
    assert [frozenset(c) for c in spec.action_sets["baseline7"]] == combos[1:]


# -- loader behaviour ----------------------------------------------------------------------------


def test_hash_ignores_comments_and_formatting_but_not_values():
    text = (DATA / "specs" / "minimal_atari.yaml").read_text()
    a = parse_spec(text)
    b = parse_spec("# another comment\n" + text.replace("frameskip: 4", "frameskip:   4  # skip"))
    c = parse_spec(text.replace("frameskip: 4", "frameskip: 5"))
    assert a.hash == b.hash != c.hash


def test_user_yaml_file_is_accepted_like_a_builtin_name(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text((DATA / "specs" / "minimal_atari.yaml").read_text())
    spec = load_spec(str(path))
    assert spec.name == "mini" and spec.games == ("pong", "breakout", "qbert")
    assert spec.games_of("Mini-2") == ("pong", "qbert")


def test_unknown_spec_suggests_close_matches():
    with pytest.raises(UnknownSpec, match=re.escape("Did you mean: 'saber'?")):
        load_spec("sabre")


@pytest.mark.parametrize(
    "spelling", ["battle_zone", "Battle Zone", "BattleZone", "battlezone", "BATTLE-ZONE"]
)
def test_common_spellings_resolve(spelling):
    assert load_spec("saber").resolve_game(spelling) == "battle_zone"


@pytest.mark.parametrize(
    "spelling,game",
    [
        ("Q*bert", "qbert"),
        ("Ms. Pac-Man", "ms_pacman"),
        ("Montezuma's Revenge", "montezuma_revenge"),
        ("Yar's Revenge", "yars_revenge"),
        ("Up'n Down", "up_n_down"),
        ("Pitfall!", "pitfall"),
        ("James Bond", "jamesbond"),
    ],
)
def test_paper_spellings_resolve(spelling, game):
    assert load_spec("hwr").resolve_game(spelling) == game


def test_unknown_game_lists_close_matches():
    with pytest.raises(UnknownGame, match=r"Did you mean: 'pong'"):
        load_spec("saber").resolve_game("pongg")


def test_sonic_level_spellings_resolve():
    spec = load_spec("sonic")
    assert (
        spec.resolve_game("SonicTheHedgehog-Genesis,GreenHillZone.Act1")
        == "SonicTheHedgehog-GreenHillZone.Act1"
    )
    assert (
        spec.resolve_game("SonicTheHedgehog-Genesis-v0,GreenHillZone.Act1")
        == "SonicTheHedgehog-GreenHillZone.Act1"
    )


def test_name_key_joins_spellings():
    assert name_key("Ms. Pac-Man") == name_key("ms_pacman") == "mspacman"


def test_loaded_spec_is_read_only():
    spec = load_spec("saber")
    with pytest.raises((AttributeError, TypeError)):
        spec.constants["pong"] = None
    with pytest.raises(AttributeError):
        spec.version = 2


def test_public_api_exports_loader():
    assert arcadebench.load_spec is load_spec and "saber" in arcadebench.list_specs()


# -- the broken corpus ---------------------------------------------------------------------------


def test_corpus_has_at_least_twenty_broken_specs():
    assert len(BROKEN) >= 20


@pytest.mark.parametrize("path", BROKEN, ids=[p.stem for p in BROKEN])
def test_broken_spec_raises_spec_error_naming_file_and_key_path(path):
    expect = re.search(r"^# expect: (.+)$", path.read_text(), re.M)[1]
    start = time.perf_counter()
    with pytest.raises(SpecError) as info:
        load_spec(str(path))
    message = str(info.value)
    assert message.startswith(str(path.resolve())), message
    assert expect in message, message
    assert "\n" not in message
    assert time.perf_counter() - start < 5  # alias bombs are refused, not expanded


def test_minimal_specs_of_the_corpus_are_valid():
    for name in ("minimal_atari.yaml", "minimal_retro.yaml"):
        spec = load_spec(str(DATA / "specs" / name))
        assert spec.games


def test_oversized_and_non_utf8_files_are_refused(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * 2_100_000)
    with pytest.raises(SpecError, match="larger than"):
        load_spec(str(big))
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"name: \xff\xfe")
    with pytest.raises(SpecError, match="not UTF-8"):
        load_spec(str(binary))


def test_non_finite_numbers_are_refused():
    text = (
        (DATA / "specs" / "minimal_atari.yaml")
        .read_text()
        .replace("[-20.71, 14.6, 21.0]", "[.nan, 14.6, 21.0]")
    )
    with pytest.raises(SpecError, match=r"constants.rows.pong\[0\]: must be a finite number"):
        parse_spec(text)
    assert math.isfinite(load_spec("saber").constants["pong"].random)
