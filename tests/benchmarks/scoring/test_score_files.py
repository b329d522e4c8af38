"""Score files in: CSV, JSON, mappings; every bad input is one InputError naming file and line."""

from __future__ import annotations

import json
import math
import re
import string
import tempfile
from pathlib import Path

import pytest
from fuzzing import fuzz
from hypothesis import given
from hypothesis import strategies as st

from arcadebench import load_spec
from arcadebench.benchmarks.scoring.inputs import read_scores
from arcadebench.benchmarks.scoring.raw_scores import ScoreCollector
from arcadebench.benchmarks.scoring.results import score
from arcadebench.benchmarks.scoring.score_csv import read_csv
from arcadebench.benchmarks.scoring.score_files import (
    parse_score,
    read_json,
    read_mapping,
)
from arcadebench.errors import InputError

SABER = load_spec("saber")
ATARI5 = load_spec("atari5")


def _csv(tmp_path: Path, text: str, name: str = "agent.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _games(raw, algorithm):
    return raw.algorithms[algorithm].games


# -- CSV ------------------------------------------------------------------------------------------


def test_csv_minimal_algorithm_defaults_to_the_file_stem(tmp_path):
    raw = read_scores(SABER, _csv(tmp_path, "game,score\npong,21\nbreakout,12.5\n", "rainbow.csv"))
    games = _games(raw, "rainbow")
    assert list(games) == ["breakout", "pong"]  # the spec's order
    assert games["pong"].scores == (21.0,) and games["pong"].runs == ("",)
    assert raw.sources == (str(tmp_path / "rainbow.csv"),)


@pytest.mark.parametrize(
    ("spelling", "game"),
    [
        ("Battle Zone", "battle_zone"),
        ("BattleZone", "battle_zone"),
        ("battlezone", "battle_zone"),
        ("battle_zone", "battle_zone"),
        ("Q*bert", "qbert"),
        ("Ms. Pac-Man", "ms_pacman"),
        ("Montezuma's Revenge", "montezuma_revenge"),
        ("  Pong ", "pong"),
    ],
)
def test_csv_game_spellings(tmp_path, spelling, game):
    raw = read_scores(SABER, _csv(tmp_path, f'game,score\n"{spelling}",1\n'))
    assert list(_games(raw, "agent")) == [game]


def test_csv_score_values_inf_and_explicit_na(tmp_path):
    text = (
        "game,score\npong,inf\nbreakout,Infinite\nqbert,NA\nalien,N/A\namidar,\n"
        "boxing,-3e2\nenduro,+.5\n"
    )
    games = _games(read_scores(SABER, _csv(tmp_path, text)), "agent")
    assert games["pong"].scores == (math.inf,) and games["breakout"].scores == (math.inf,)
    assert (
        "qbert" not in games and "alien" not in games and "amidar" not in games
    )  # explicit NA only
    assert games["boxing"].scores == (-300.0,) and games["enduro"].scores == (0.5,)


def test_csv_runs_algorithms_frames_comments_and_bom(tmp_path):
    text = (
        "\ufeff# a comment line, e.g. a licence note\n"
        "Algorithm , Game, Run, Score, Frames\n"
        "ppo,pong,0,20,2e8\n"
        "ppo,pong,1,18,200000000\n"
        "\n"
        "dqn,pong,0,-21,\n"
        "  # an indented comment\n"
        "dqn,pong,1,NA,1000\n"
    )
    raw = read_scores(SABER, _csv(tmp_path, text))
    assert list(raw.algorithms) == ["ppo", "dqn"]
    pong = _games(raw, "ppo")["pong"]
    assert pong.scores == (20.0, 18.0) and pong.runs == ("0", "1") and pong.frames == (2e8, 2e8)
    assert _games(raw, "dqn")["pong"].scores == (-21.0,) and _games(raw, "dqn")["pong"].frames == (
        None,
    )


def _error(tmp_path, text, name="agent.csv", spec=SABER) -> InputError:
    with pytest.raises(InputError) as info:
        read_scores(spec, _csv(tmp_path, text, name))
    return info.value


def test_csv_unknown_game_names_line_and_suggests(tmp_path):
    error = _error(tmp_path, "game,score\npong,1\n# comment\nbrekout,3\n")
    assert error.line == 4 and error.file.endswith("agent.csv")
    assert (
        "unknown game" in str(error)
        and "'brekout'" in str(error)
        and "Did you mean: 'breakout'" in str(error)
    )
    assert re.match(r".*agent\.csv:4: unknown game", str(error))


def test_csv_duplicate_without_run_names_both_lines(tmp_path):
    error = _error(tmp_path, "game,score\npong,1\nbreakout,2\nPong,3\n")
    assert (
        error.line == 4 and "duplicate score for pong" in str(error) and "agent.csv:2" in str(error)
    )


CHECKPOINTS = """algorithm,game,run,frames,score
# published per-checkpoint data, rows in any order
Rainbow,pong,0,50000000,10
Rainbow,pong,0,10000000,-5
Rainbow,pong,0,200000000,20
Rainbow,pong,1,10000000,-7
Rainbow,pong,1,50000000,12
Rainbow,pong,1,200000000,19
"""


def test_a_runs_rows_at_several_frames_are_its_checkpoints_the_last_its_score(tmp_path):
    raw = read_scores(SABER, _csv(tmp_path, CHECKPOINTS))
    rainbow = raw.algorithms["Rainbow"]
    assert rainbow.games["pong"].scores == (20.0, 19.0)
    assert rainbow.games["pong"].frames == (200e6, 200e6)
    assert {f: c["pong"].scores for f, c in rainbow.checkpoints.items()} == {
        10_000_000: (-5.0, -7.0),
        50_000_000: (10.0, 12.0),
        200_000_000: (20.0, 19.0),
    }  # SABER's checkpoints (Section 3.2), as from logs
    assert {f: p["pong"].scores for f, p in rainbow.curve.items()} == {
        10_000_000: (-5.0, -7.0),
        50_000_000: (10.0, 12.0),
        200_000_000: (20.0, 19.0),
    }
    results = score(SABER, [_csv(tmp_path, CHECKPOINTS)], reps=0, curve=True)
    assert list(results.algorithms["Rainbow"]["curve"]) == ["10000000", "50000000", "200000000"]


def test_a_single_row_per_run_is_no_curve(tmp_path):
    raw = read_scores(SABER, _csv(tmp_path, "game,run,frames,score\npong,0,2e8,20\n"))
    assert not raw.algorithms["agent"].curve and not raw.algorithms["agent"].checkpoints


@pytest.mark.parametrize(
    ("rows", "line", "what"),
    [
        ("pong,0,1e7,1\npong,0,1e7,2\n", 3, "duplicate score for run '0' of pong at 10,000,000"),
        ("pong,0,,1\npong,0,1e7,2\n", 3, "each of a run's checkpoints its `frames`"),
        ("pong,0,1e7,1\npong,0,,2\n", 3, "first at"),
    ],
)
def test_a_runs_checkpoints_need_distinct_frames(tmp_path, rows, line, what):
    error = _error(tmp_path, "game,run,frames,score\n" + rows)
    assert error.line == line and what in str(error), str(error)


def test_a_table_as_a_paper_prints_it_scores(tmp_path):
    """Tab-separated, one column per algorithm, thousands separators, mean ± spread."""
    wide = (
        "# Table 2 of a paper, pasted\n"
        "Game\tPPO (ours)\tDQN\n"
        "Pong\t20.7 ± 0.3\t18.9\n"
        'Battle Zone\t12,345\t"29,900 +/- 1,200"\n'
        "Montezuma's Revenge\tNA\t0\n"
    )
    raw = read_scores(SABER, _csv(tmp_path, wide, name="paper.tsv"))
    ours, dqn = raw.algorithms["PPO (ours)"], raw.algorithms["DQN"]
    assert {g: c.scores for g, c in ours.games.items()} == {
        "battle_zone": (12345.0,),
        "pong": (20.7,),
    }
    assert {g: c.scores for g, c in dqn.games.items()} == {
        "battle_zone": (29900.0,),
        "montezuma_revenge": (0.0,),
        "pong": (18.9,),
    }
    (note,) = ours.notes
    assert "1 of its scores as mean ± spread (pong 20.7 ± 0.3)" in note
    assert "battle_zone 29,900 +/- 1,200" in dqn.notes[0]
    long_csv = 'game,score,run\nPong,"1,234.5",0\nPong,-3,1\n'
    assert read_scores(SABER, _csv(tmp_path, long_csv)).algorithms["agent"].games[
        "pong"
    ].scores == (1234.5, -3.0)


def test_a_wide_table_keeps_runs_and_refuses_what_it_cannot_tell(tmp_path):
    runs = "game,run,A,B\npong,0,1,2\npong,1,3,4\n"
    raw = read_scores(SABER, _csv(tmp_path, runs))
    assert raw.algorithms["A"].games["pong"].scores == (1.0, 3.0)
    assert raw.algorithms["B"].games["pong"].runs == ("0", "1")
    error = _error(tmp_path, "game,A,A\npong,1,2\n")
    assert "column 'A' appears twice" in str(error)


def test_csv_duplicate_na_row_is_still_a_duplicate(tmp_path):
    assert "duplicate" in str(_error(tmp_path, "game,score\npong,NA\npong,3\n"))


def test_csv_duplicate_run_id(tmp_path):
    error = _error(tmp_path, "game,score,run\npong,1,a\npong,2,b\npong,3,a\n")
    assert error.line == 4 and "run 'a' of pong" in str(error)


@pytest.mark.parametrize(
    "value", ["abc", "1,5", "1,0000", "nan", "NaN", "-inf", "1_000", "0x10", "12%", "--1", "5 ±"]
)
def test_csv_non_numeric_score(tmp_path, value):
    error = _error(tmp_path, f'game,score\npong,1\nqbert,"{value}"\n')
    assert error.line == 3 and f"score {value!r} of qbert is not a number" in str(error)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", None, "is empty; expected a header line `game,score`"),
        ("# only a comment\n\n", None, "is empty"),
        ("game,score\n", None, "has a header but no score rows"),
        ("pong,21\n", 1, "has no header line: its first line names the game 'pong'"),
        ("Pong\t21\n", 1, "has no header line: its first line names the game 'Pong'"),
        ("agent,score\npong,1\n", 1, "has no game column; name it `game`"),
        ("game,score,seed\npong,1,0\n", 1, "unknown column 'seed'"),
        (
            "game,result\npong,1\n",
            1,
            "has no `score` column, so it would be one column per "
            "algorithm, but it has a 'result' column",
        ),
        ("game,algorithm\npong,a\n", 1, "but it has a 'algorithm' column"),
        ("game,run\npong,0\n", 1, "but it has no algorithm column"),
        ("game,PPO,\npong,1,2\n", 1, "an algorithm column without a name"),
        ("game,score,game\npong,1,pong\n", 1, "column 'game' appears twice"),
        ("game,score\npong,1,2\n", 2, "has 3 fields, expected 2"),
        ("game,score\npong\n", 2, "has 1 fields, expected 2"),
        ("game,score,run\npong,1,\n", 2, "the run id of pong is empty"),
        ("game,score,algorithm\npong,1,\n", 2, "the algorithm is empty"),
        ("game,score,frames\npong,1,-5\n", 2, "frames '-5' of pong must be a non-negative number"),
        ("game,score,frames\npong,1,lots\n", 2, "frames 'lots'"),
        ("game,score\n,1\n", 2, "game must be a non-empty name"),
        ('game,score\n"pong,1\n', 2, "is not valid CSV"),
        ("game,score\npong,1\x00\n", None, "contains NUL bytes"),
    ],
)
def test_csv_malformed(tmp_path, text, line, message):
    error = _error(tmp_path, text)
    assert error.line == line and message in str(error), str(error)


def test_csv_not_utf8(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("game,score\nPong,1\nQ\xe9bert,2\n".encode("latin-1"))
    with pytest.raises(InputError, match="is not UTF-8 text"):
        read_scores(SABER, path)


# -- JSON -----------------------------------------------------------------------------------------


def test_json_scores_and_runs(tmp_path):
    data = {
        "ppo": {"Pong": 21, "Breakout": [10, 12.5, "inf", None], "Q*bert": None, "alien": "NA"},
        "dqn": {"pong": -21.0, "boxing": "infinite"},
    }
    path = tmp_path / "scores.json"
    path.write_text(json.dumps(data, indent=1))
    raw = read_scores(SABER, path)
    ppo = _games(raw, "ppo")
    assert ppo["pong"].scores == (21.0,)
    assert ppo["breakout"].scores == (10.0, 12.5, math.inf) and ppo["breakout"].runs == (
        "0",
        "1",
        "2",
    )
    assert "qbert" not in ppo and "alien" not in ppo
    assert _games(raw, "dqn")["boxing"].scores == (math.inf,)


def test_json_infinity_literal_is_infinite_gameplay(tmp_path):
    path = tmp_path / "s.json"
    path.write_text('{"a": {"atlantis": Infinity}}')
    assert _games(read_scores(SABER, path), "a")["atlantis"].scores == (math.inf,)


def _json_error(tmp_path, text) -> InputError:
    path = tmp_path / "s.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_scores(SABER, path)
    return info.value


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("", None, "is empty"),
        ("[1, 2]", None, "must be a non-empty object"),
        ("{}", None, "must be a non-empty object"),
        ('{"a": [1, 2]}', 1, "algorithm 'a' must map games to scores"),
        ('{\n"a": {\n"pong": {"x": 1}}}', 3, "score of pong (a) must be a number"),
        ('{"a": {"pong": true}}', 1, "score of pong (a) must be a number"),
        ('{"a": {"pong": "lots"}}', 1, "got 'lots'"),
        ('{"a": {"pong": NaN}}', None, "NaN is not a score"),
        ('{"a": {"pong": -Infinity}}', None, "-Infinity is not a score"),
        ('{"a": {"pong": []}}', 1, "empty list of runs"),
        ('{"a": {"pong": [1, [2]]}}', 1, "pong (a) run 1"),
        ('{"a": {\n\n"pnog": 1}}', 3, "Did you mean: 'pong'"),
        ('{"a": {"pong": 1, "pong": 2}}', None, "duplicate key 'pong'"),
        ('{"a": {"pong": 1, "Pong": 2}}', 1, "duplicate score for pong"),
        ('{"a": {"pong": 1}\n,}', 2, "is not valid JSON"),
        ("[" * 100_000, None, "nested too deeply"),
        (
            '{"format": "arcadebench-results/3", "algorithms": {}}',
            None,
            "is an arcadebench-results/3 document; this arcadebench reads "
            "arcadebench-results/1, arcadebench-results/2: upgrade it to read this one",
        ),
    ],
)
def test_json_malformed(tmp_path, text, line, message):
    error = _json_error(tmp_path, text)
    assert message in str(error), str(error)
    if line is not None:
        assert error.line == line


def test_mapping_input_and_numpy_values():
    import numpy as np

    raw = read_mapping(
        SABER, {"x": {"pong": np.float32(3.0), "qbert": np.array([1.0, 2.0]), "alien": np.int64(7)}}
    ).build(SABER)
    games = raw.algorithms["x"].games
    assert (
        games["pong"].scores == (3.0,)
        and games["qbert"].scores == (1.0, 2.0)
        and games["alien"].scores == (7.0,)
    )
    with pytest.raises(InputError, match=r"<mapping>: algorithm 'x' must map games"):
        read_mapping(SABER, {"x": 5})


def test_duplicates_across_files_are_refused(tmp_path):
    a = _csv(tmp_path, "game,score\npong,1\n", "a.csv")
    b = tmp_path / "b.json"
    b.write_text('{"a": {"Pong": 3}}')
    with pytest.raises(
        InputError,
        match=r"b\.json:1: duplicate score for pong of algorithm 'a' \(first at .*a\.csv:2\)",
    ):
        read_scores(SABER, [a, b])
    # different algorithms or disjoint runs merge
    c = _csv(tmp_path, "game,score,run\npong,2,r1\n", "a2.csv")
    c2 = _csv(tmp_path, "algorithm,game,score,run\na2,pong,5,r2\n", "other.csv")
    assert _games(read_scores(SABER, [c, c2]), "a2")["pong"].scores == (2.0, 5.0)


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("missing.csv", "no such file"),
        ("scores.txt", "has an unknown suffix"),
        ("emptydir", "is a directory without episode logs"),
    ],
)
def test_sources_that_are_not_score_files(tmp_path, source, message):
    (tmp_path / "scores.txt").write_text("x")
    (tmp_path / "emptydir").mkdir()
    with pytest.raises(InputError, match=message):
        read_scores(SABER, tmp_path / source)
    with pytest.raises(InputError, match="no score files given"):
        read_scores(SABER, [])
    with pytest.raises(InputError, match="must be a path, a list of paths or a mapping"):
        read_scores(SABER, 42)


def test_parse_score_tokens():
    assert (
        parse_score(" 1e3 ") == 1000.0
        and parse_score("INF") == math.inf
        and parse_score("n/a") is None
    )
    for bad in ("nan", "infinityy", "1e", "", "1 2"):
        if bad == "":
            assert parse_score(bad) is None
        else:
            with pytest.raises(ValueError):
                parse_score(bad)


# -- fuzzing: only InputError may escape --------------------------------------------------------

_GAME_WORDS = [
    "pong",
    "Pong",
    "Q*bert",
    "battle zone",
    "brekout",
    "",
    "NA",
    "inf",
    "1e400",
    "-0",
    "\x00",
    '"',
    "é",
    ",",
]
_cells = st.one_of(
    st.sampled_from(_GAME_WORDS),
    st.text(max_size=8),
    st.from_regex(r"[+-]?\d{0,3}(\.\d{0,2})?(e[+-]?\d{1,3})?", fullmatch=True),
)
_headers = st.lists(
    st.sampled_from(["game", "score", "run", "algorithm", "frames", "seed", "Game", ""]),
    min_size=0,
    max_size=6,
)


@fuzz(1000)
@given(
    header=_headers,
    rows=st.lists(st.lists(_cells, max_size=6), max_size=8),
    sep=st.sampled_from([",", ";", "\t"]),
)
def test_fuzz_structured_csv_only_input_errors(header, rows, sep):
    text = "\n".join(sep.join(row) for row in [header, *rows])
    try:
        read_csv(SABER, "fuzz.csv", ScoreCollector(), text=text).build(SABER)
    except InputError as error:
        assert str(error).startswith("fuzz.csv")


@fuzz(1000)
@given(
    text=st.text(alphabet=st.characters(codec="utf-8"), max_size=200)
    | st.text(alphabet=string.printable, max_size=300)
)
def test_fuzz_arbitrary_csv_text_only_input_errors(text):
    try:
        read_csv(SABER, "fuzz.csv", ScoreCollector(), text="game,score\n" + text)
    except InputError:
        pass


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.floats(allow_nan=True)
    | st.integers()
    | st.sampled_from(_GAME_WORDS)
    | st.text(max_size=5),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(_GAME_WORDS) | st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)


@fuzz(1000)
@given(data=_json_values)
def test_fuzz_json_only_input_errors(data):
    try:
        read_json(SABER, "fuzz.json", ScoreCollector(), text=json.dumps(data)).build(SABER)
    except InputError as error:
        assert str(error).startswith("fuzz.json")


@fuzz(500)
@given(text=st.text(max_size=300))
def test_fuzz_arbitrary_json_text_only_input_errors(text):
    try:
        read_json(SABER, "fuzz.json", ScoreCollector(), text=text)
    except InputError:
        pass


@fuzz(200)
@given(blob=st.binary(max_size=300))
def test_fuzz_arbitrary_bytes_through_read_scores(blob):
    with tempfile.TemporaryDirectory() as folder:
        for suffix in (".csv", ".json"):
            path = Path(folder) / f"fuzz{suffix}"
            path.write_bytes(blob)
            try:
                read_scores(ATARI5, path)
            except InputError:
                pass
