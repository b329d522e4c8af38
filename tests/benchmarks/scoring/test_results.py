"""`arcadebench.score` and `Results`: published aggregates recomputed; the JSON contract."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import shutil
from pathlib import Path

import pytest
from testdata import DATA

import arcadebench
from arcadebench import load_spec
from arcadebench.benchmarks.scoring.results import Results, results_inputs, score, subset_key
from arcadebench.errors import InputError, InvalidArgument, UnknownSpec

SCORES = DATA / "scores"
TABLE3 = SCORES / "atari5_table3.csv"
WORLD_RECORDS = SCORES / "saber_world_records.csv"


# -- published numbers ----------------------------------------------------------------------------

# Atari-5 Table 3: (57-game median HNS, Atari-5 estimate, relative error %); printed truncated
TABLE_3 = {
    "MuZero": (2041, 2091, 2.5),
    "Agent57": (1975, 1817, 8.0),
    "Ape-X": (434, 475, 9.6),
    "IQN": (237, 215, 9.2),
    "Rainbow (noop)": (227, 225, 0.9),
}


@pytest.fixture(scope="module")
def table3():
    return score("atari5", TABLE3, reps=0)


@pytest.mark.parametrize("algorithm", list(TABLE_3))
def test_atari5_table_3_recomputed_from_raw_scores(table3, algorithm):
    median, estimate, relative_error = TABLE_3[algorithm]
    aggregates = table3.algorithms[algorithm]["aggregates"]
    assert math.floor(aggregates["hns"]["median"]) == median
    assert math.floor(aggregates["atari5"]) == estimate
    ours = (
        100 * abs(aggregates["atari5"] - aggregates["hns"]["median"]) / aggregates["hns"]["median"]
    )
    assert round(ours, 1) == relative_error


def test_table_3_missing_game_is_dropped_and_counted(table3):
    rainbow = table3.algorithms["Rainbow (noop)"]
    assert rainbow["aggregates"]["hns"]["n_games"] == 56 and "jamesbond" not in rainbow["games"]
    assert table3.algorithms["MuZero"]["aggregates"]["hns"]["n_games"] == 57
    assert rainbow["aggregates"]["missing"] == []  # the five Atari-5 games are all there


def test_table_3_spec_published_rows_agree(table3):
    (published,) = load_spec("atari5").published
    names = dict(zip(TABLE_3, published.rows, strict=True))
    for ours, theirs in names.items():
        median, atari5 = published.rows[theirs]
        assert math.floor(table3.algorithms[ours]["aggregates"]["hns"]["median"]) == median
        assert math.floor(table3.algorithms[ours]["aggregates"]["atari5"]) == atari5


def test_every_subset_estimate_and_the_table_10_11_predictions(table3):
    aggregates = table3.algorithms["MuZero"]["aggregates"]
    for name in load_spec("atari5").subsets:
        assert subset_key(name) in aggregates
    assert {"atari1", "atari3", "atari5", "atari10", "atari3_val", "atari5_val"} <= set(aggregates)
    predictions = table3.algorithms["MuZero"]["predictions"]
    assert set(predictions) == {"atari5", "atari10"} and len(predictions["atari5"]) == 57


def test_hwr_agent57_mean_hwrns_is_the_papers_125_92():
    # HWR paper, "Mean HWRNS": Agent57 "only acquires 125.92% mean HWRNS"
    results = score("hwr", TABLE3, reps=0)
    assert round(results.algorithms["Agent57"]["aggregates"]["hwrns"]["mean"], 2) == 125.92
    # ... and Agent57 is SOTA in mean SABER over MuZero (HWR "Results")
    assert (
        results.algorithms["Agent57"]["aggregates"]["saber"]["mean"]
        > results.algorithms["MuZero"]["aggregates"]["saber"]["mean"]
    )


def test_saber_world_record_baseline_hns_median_4_4k_mean_99_3k():
    # SABER Section 2.3: the world records scored with the usual HNS have a median of 4.4k % and
    # a mean of 99.3k %; 58 games have a record, 54 of them a beginner-human score.
    results = score("saber", WORLD_RECORDS, reps=0)
    aggregates = results.algorithms["world records"]["aggregates"]
    assert aggregates["hns"]["n_games"] == 54
    assert round(aggregates["hns"]["median"] / 1000, 1) == 4.4
    assert round(aggregates["hns"]["mean"] / 1000, 1) == 99.3
    # and against themselves every record is exactly 100 %: 58 breakthroughs, all superhuman
    assert aggregates["hwrns"] == {
        "mean": 100.0,
        "median": 100.0,
        "iqm": 100.0,
        "optimality_gap": 0.0,
        "n_games": 58,
    }
    assert aggregates["hwrb"] == 58
    assert aggregates["classes"] == {
        "failing": 0,
        "poor": 0,
        "medium": 0,
        "fair": 0,
        "superhuman": 58,
    }
    assert aggregates["missing"] == ["double_dunk", "elevator_action", "tennis"]


# -- hand-computed cases --------------------------------------------------------------------------


def test_saber_metrics_by_hand_with_missing_inf_below_random_and_ties():
    # SABER Table 5: pong r=-20.34 w=21; atlantis r=22188 w=10604840; boxing r=-0.69 w=100;
    # bowling r=23.48 w=300, human 160.7
    data = {
        "me": {
            "pong": 21.0,  # equals the record: exactly 100 % -> superhuman, counts in HWRB
            "atlantis": "inf",  # infinite gameplay: HWRNS inf, SABER 200
            "boxing": -10.759,  # 10 % of |w - r| = 10.069 below random: HWRNS -10 (no lower clip)
            "bowling": 161.74,  # 50 % of the record range
            "qbert": None,  # explicit NA: dropped
        }
    }
    res = score("saber", data, reps=0).algorithms["me"]
    games = res["games"]
    assert games["pong"]["hwrns"] == 100.0 and games["pong"]["class"] == "superhuman"
    assert games["atlantis"]["hwrns"] == math.inf and games["atlantis"]["saber"] == 200.0
    assert games["boxing"]["hwrns"] == pytest.approx(-10.0) and games["boxing"][
        "saber"
    ] == pytest.approx(-10.0)
    assert games["boxing"]["class"] == "failing"
    assert games["bowling"]["hwrns"] == pytest.approx(50.0) and games["bowling"]["class"] == "fair"
    assert "qbert" not in games
    agg = res["aggregates"]
    assert agg["saber"]["mean"] == pytest.approx((100 + 200 - 10 + 50) / 4)
    assert agg["saber"]["median"] == pytest.approx(75.0)
    assert agg["saber"]["iqm"] == pytest.approx((50 + 100) / 2)  # 4 scores: drop one each side
    assert agg["saber"]["optimality_gap"] == pytest.approx(100 - (100 + 100 - 10 + 50) / 4)
    assert agg["saber"]["n_games"] == 4
    assert agg["hwrns"]["mean"] == math.inf and agg["hwrns"]["median"] == pytest.approx(75.0)
    assert agg["hwrb"] == 2
    assert agg["classes"] == {"failing": 1, "poor": 0, "medium": 0, "fair": 1, "superhuman": 2}
    # HNS of bowling: 100 (161.74 - 23.48) / (160.7 - 23.48)
    assert games["bowling"]["hns"] == pytest.approx(100 * 138.26 / 137.22)
    assert "qbert" in agg["missing"] and len(agg["missing"]) == 61 - 4


def test_hwr_chns_learning_efficiency_and_game_time_from_frames(tmp_path):
    path = tmp_path / "agent.csv"
    # HWR constants: pong r=-20.71 h=14.6; breakout r=1.72 h=30.5
    path.write_text("game,score,frames\npong,14.6,2e8\nbreakout,-10,2e8\n")
    agg = score("hwr", path, reps=0).algorithms["agent"]["aggregates"]
    hns_breakout = 100 * (-10 - 1.72) / (30.5 - 1.72)
    assert agg["chns"]["mean"] == pytest.approx(50.0)  # clip(100) and clip(negative -> 0)
    assert agg["hns"]["mean"] == pytest.approx((100 + hns_breakout) / 2)
    assert agg["frames"] == 2e8
    assert agg["game_time_days"] == pytest.approx(2e8 / 5_184_000)
    # HWR Eq. 7 divides the aggregate as a fraction (percent / 100) by the frames
    assert agg["learning_efficiency"]["hns"]["mean"] == pytest.approx(
        agg["hns"]["mean"] / 100 / 2e8
    )
    no_frames = score("hwr", {"a": {"pong": 1.0}}, reps=0).algorithms["a"]["aggregates"]
    assert (
        "frames" not in no_frames
        and "learning_efficiency" not in no_frames
        and "game_time_days" not in no_frames
    )


# HWR Tables 3 and 7, 200M-frame algorithms: (metric, aggregate in %, printed efficiency).
HWR_PRINTED_EFFICIENCY = [
    ("hns", "mean", 873.97, "4.37E-08"),  # Table 3, Rainbow
    ("hns", "median", 230.99, "1.15E-08"),  # Table 3, Rainbow
    ("hwrns", "mean", 28.39, "1.42E-09"),  # Table 7, Rainbow
    # GDI-H3's mean HNS 9,620.98 %: every table prints 4.81E-07 except Table 3, which prints
    # 4.70E-07 (a misprint: 9620.98 / 100 / 2e8 = 4.81E-07).
    ("hns", "mean", 9620.98, "4.81E-07"),
]


@pytest.mark.parametrize(("metric", "stat", "percent", "printed"), HWR_PRINTED_EFFICIENCY)
def test_hwr_learning_efficiency_equals_the_printed_tables(
    tmp_path, metric, stat, percent, printed
):
    # one game whose normalised score is the published aggregate, played for 200M frames
    pong = load_spec("hwr").constants["pong"]
    reference = pong.human if metric == "hns" else pong.world_record
    raw = pong.random + percent / 100 * (reference - pong.random)
    path = tmp_path / "published.csv"
    path.write_text(f"game,score,frames\npong,{raw!r},200000000\n")
    aggregates = score("hwr", path, reps=0).algorithms["published"]["aggregates"]
    assert aggregates[metric][stat] == pytest.approx(percent)
    assert f"{aggregates['learning_efficiency'][metric][stat]:.2E}" == printed


def test_metrics_a_spec_does_not_define_are_absent(table3):
    muzero = table3.algorithms["MuZero"]
    for key in ("hwrns", "saber", "chns", "hwrb", "classes", "frames", "learning_efficiency"):
        assert key not in muzero["aggregates"]
    assert set(muzero["games"]["pong"]) == {"raw", "runs", "hns"}
    saber = score("saber", {"a": {"pong": 1.0}}, reps=0).algorithms["a"]
    assert (
        "atari5" not in saber["aggregates"]
        and "predictions" not in saber
        and "chns" not in saber["aggregates"]
    )
    assert "ci" not in saber["aggregates"] and "ci" not in saber["games"]["pong"]


# -- confidence intervals -------------------------------------------------------------------------


def test_intervals_with_runs_and_their_determinism():
    data = {"a": {"pong": [10.0, 14.0, 12.0], "breakout": [100.0, 50.0], "qbert": 400.0}}
    first = score("saber", data, reps=500, seed=3)
    again = score("saber", data, reps=500, seed=3)
    other = score("saber", data, reps=500, seed=4)
    assert first.to_json() == again.to_json()
    assert first.algorithms["a"]["aggregates"]["ci"] != other.algorithms["a"]["aggregates"]["ci"]
    ci = first.algorithms["a"]["aggregates"]["ci"]
    assert set(ci) == {"hwrns", "saber", "hns"} and set(ci["saber"]) == {
        "mean",
        "median",
        "iqm",
        "optimality_gap",
    }
    for low, high in (ci["hwrns"]["mean"], ci["hns"]["median"]):
        assert low <= high
    games = first.algorithms["a"]["games"]
    assert games["breakout"]["ci"]["raw"] == [50.0, 100.0]
    assert "ci" not in games["qbert"]  # one run: nothing to resample
    assert games["pong"]["ci"]["raw"][0] >= 10.0 and games["pong"]["ci"]["raw"][1] <= 14.0


def test_adding_an_algorithm_changes_no_other_interval():
    a = {"a": {"pong": [1.0, 5.0], "qbert": [100.0, 300.0]}}
    alone = score("saber", a, reps=300).algorithms["a"]
    together = score("saber", {**a, "b": {"pong": [3.0, 4.0]}}, reps=300).algorithms["a"]
    assert alone == together


def test_atari5_estimate_gets_an_interval_from_the_same_resamples():
    five = load_spec("atari5").subsets["Atari-5"].games
    data = {"a": {g: [1000.0, 30000.0] for g in five}}
    agg = score("atari5", data, reps=400).algorithms["a"]["aggregates"]
    low, high = agg["ci"]["atari5"]
    assert low < agg["atari5"] < high


# -- JSON, CSV, table -----------------------------------------------------------------------------


def test_json_shape_inf_and_round_trip(tmp_path):
    results = score(
        "saber",
        {"a": {"pong": [21.0, 19.0], "atlantis": "inf"}},
        reps=200,
        command="arcadebench score x",
    )
    text = results.to_json(tmp_path / "out.json")
    data = json.loads(text)
    assert list(data) == ["format", "spec", "settings", "algorithms", "provenance"]
    assert data["format"] == "arcadebench-results/2"
    spec = load_spec("saber")
    assert data["spec"] == {"name": "saber", "version": spec.version, "hash": spec.hash}
    assert data["settings"] == {"ci": 0.95, "reps": 200, "seed": 0}
    assert data["algorithms"]["a"]["games"]["atlantis"]["raw"] == "inf"
    assert data["algorithms"]["a"]["aggregates"]["hwrns"]["mean"] == "inf"
    assert "null" not in text and "NaN" not in text and "Infinity" not in text
    provenance = data["provenance"]
    assert (
        provenance["arcadebench"] == arcadebench.__version__
        and provenance["command"] == "arcadebench score x"
    )
    assert {"numpy", "gymnasium", "ale_py", "python", "inputs"} <= set(provenance)
    back = Results.from_json(tmp_path / "out.json")
    assert (
        back.algorithms == results.algorithms
        and back.spec == results.spec
        and back.settings == results.settings
    )
    assert back.algorithms["a"]["games"]["atlantis"]["raw"] == math.inf


def test_results_json_can_be_rescored(tmp_path, table3):
    table3.to_json(tmp_path / "t3.json")
    again = score("atari5", tmp_path / "t3.json", reps=0)
    for name in TABLE_3:
        assert again.algorithms[name]["aggregates"] == table3.algorithms[name]["aggregates"]


def test_from_json_refuses_other_documents(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"format": "something"}')
    with pytest.raises(
        InputError,
        match=re.escape(
            "is not a results document (\"format\" is 'something', not one of "
            "arcadebench-results/1, arcadebench-results/2)"
        ),
    ):
        Results.from_json(path)
    path.write_text('{"format": "arcadebench-results/3"}')
    with pytest.raises(InputError, match="this arcadebench reads arcadebench-results/1, .*/2: up"):
        Results.from_json(path)
    path.write_text("{")
    with pytest.raises(InputError, match="is not valid JSON"):
        Results.from_json(path)


def test_csv_is_tidy_and_complete(table3):
    rows = list(csv.DictReader(io.StringIO(table3.to_csv())))
    assert list(rows[0]) == [
        "algorithm",
        "checkpoint",
        "game",
        "metric",
        "value",
        "ci_low",
        "ci_high",
    ]
    by_key = {(r["algorithm"], r["game"], r["metric"]): r for r in rows}
    assert float(by_key[("IQN", "", "atari5")]["value"]) == pytest.approx(
        table3.algorithms["IQN"]["aggregates"]["atari5"]
    )
    assert by_key[("IQN", "pong", "n_runs")]["value"] == "1"
    assert ("MuZero", "alien", "atari5.predicted_hns") in by_key
    results = score("saber", {"a": {"pong": [21.0, 19.0], "atlantis": "inf"}}, reps=100)
    rows = {(r["game"], r["metric"]): r for r in csv.DictReader(io.StringIO(results.to_csv()))}
    assert rows[("atlantis", "raw")]["value"] == "inf"
    assert rows[("pong", "raw")]["ci_low"] == "19.0" and rows[("pong", "raw")]["ci_high"] == "21.0"
    assert rows[("", "hwrb")]["value"] == "1"


def test_table_has_aggregates_first_and_one_column_per_algorithm(table3):
    text = table3.table()
    header = text.splitlines()[1]
    for name in TABLE_3:
        assert name in header
    assert (
        text.index("aggregates")
        < text.index("per game")
        < text.index("published results (Table 3)")
    )
    assert "atari5" in text and "2,091.46" in text


def test_table_shows_intervals_and_checkpoints(tmp_path):
    spec = load_spec("saber")
    for run in ("0", "1"):
        folder = tmp_path / "ppo" / "saber" / "pong"
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / f"{run}.jsonl", "w") as log:
            log.write(
                json.dumps({"kind": "header", "spec": "saber", "spec_hash": spec.hash}) + "\n"
            )
            for i in range(2500):  # 80,000 frames per episode: 200M frames in all
                log.write(
                    json.dumps(
                        {
                            "kind": "episode",
                            "spec": "saber",
                            "spec_hash": spec.hash,
                            "game": "pong",
                            "run": run,
                            "episode": i,
                            "return": float(i + 4 * int(run)),
                            "total_frames": (i + 1) * 80_000,
                            "total_steps": (i + 1) * 20_000,
                            "complete": True,
                        }
                    )
                    + "\n"
                )
    text = score("saber", tmp_path, reps=100).table()
    assert "ppo 95% CI" in text and "aggregates by training frames" in text
    assert "ppo @10M" in text and "ppo @200M" in text and "ppo @end" in text


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ci": 1.0}, "`ci` must be a number strictly between 0 and 1, got 1.0"),
        ({"ci": 0}, "`ci` must be a number strictly between 0 and 1, got 0"),
        ({"reps": -1}, "`reps` must be a non-negative integer (0: no intervals), got -1"),
        ({"reps": 2.5}, "`reps` must be a non-negative integer (0: no intervals), got 2.5"),
        ({"seed": -2}, "`seed` must be a non-negative integer, got -2"),
    ],
)
def test_arguments_checked_before_reading_anything(kwargs, message):
    with pytest.raises(InvalidArgument) as info:
        score("saber", "does-not-exist.csv", **kwargs)
    assert str(info.value) == message


def test_unknown_spec():
    with pytest.raises(UnknownSpec):
        score("sabre", {"a": {"pong": 1.0}})


def test_score_is_exported():
    assert arcadebench.score is score and "score" in arcadebench.__all__


def test_an_algorithm_whose_scores_are_all_na_is_kept_with_no_games(tmp_path):
    path = tmp_path / "none.csv"
    path.write_text("game,score\npong,NA\nqbert,N/A\n")
    none = score("saber", path, reps=0).algorithms["none"]
    assert none["games"] == {} and none["aggregates"]["saber"] == {"n_games": 0}
    assert none["aggregates"]["hwrb"] == 0 and len(none["aggregates"]["missing"]) == 61


# -- probability of improvement and sample-efficiency curves in the JSON ---------------------------


def test_comparisons_are_in_the_json_only_with_two_algorithms(tmp_path):
    two = score("atari5", {"a": {"pong": [1.0, 2.0]}, "b": {"pong": [0.0, 3.0]}}, reps=100)
    document = json.loads(two.to_json())
    assert list(document) == [
        "format",
        "spec",
        "settings",
        "algorithms",
        "comparisons",
        "provenance",
    ]
    (comparison,) = document["comparisons"]
    # pairs (1, 0) (1, 3) (2, 0) (2, 3): two wins in four
    assert comparison["x"] == "a" and comparison["y"] == "b" and comparison["probability"] == 0.5
    assert comparison["games"] == {"pong": 0.5} and len(comparison["ci"]) == 2
    again = Results.from_json(two.to_json(tmp_path / "r.json") and tmp_path / "r.json")
    assert again.comparisons == two.comparisons
    one = score("atari5", {"a": {"pong": 1.0}}, reps=0)
    assert "comparisons" not in json.loads(one.to_json())
    assert {r[0] for r in two.rows()} == {"a", "b"}  # the CSV's rows are the algorithms'
    with pytest.raises(InvalidArgument, match="`compare` must name algorithms of the results"):
        score("atari5", {"a": {"pong": 1.0}}, reps=0, compare=[("a", "c")])
    with pytest.raises(InvalidArgument, match=r"`compare` must be \(X, Y\) pairs"):
        score("atari5", {"a": {"pong": 1.0}}, reps=0, compare=["ab"])  # type: ignore[list-item]


def _atari5_logs(root, frames_per_episode=100_000):
    """Two games, two runs, six episodes each: episode i returns 10 i (+ 1 for run 1)."""
    from report_helpers import write_log

    for game in ("pong", "qbert"):
        for run in ("0", "1"):
            returns = [10.0 * i + int(run) for i in range(6)]
            write_log(root, "atari5", "agent", game, run, returns, frames_per_episode)
    return root


def test_a_curve_is_the_same_block_at_each_point(tmp_path):
    logs = _atari5_logs(tmp_path / "logs")
    results = score("atari5", [logs], reps=100, curve=[250_000, 600_000])
    curve = results.algorithms["agent"]["curve"]
    assert list(curve) == ["250000", "600000"]
    # by 250k frames two episodes ended: returns 0, 10 (run 0) and 1, 11 (run 1)
    assert curve["250000"]["games"]["pong"]["runs"] == [5.0, 6.0]
    assert (
        curve["600000"]["games"]["pong"]["runs"]
        == results.algorithms["agent"]["games"]["pong"]["runs"]
    )
    assert set(curve["250000"]["aggregates"]["ci"]["hns"]) == {
        "mean",
        "median",
        "iqm",
        "optimality_gap",
    }
    back = Results.from_dict(json.loads(results.to_json()))
    assert back.algorithms["agent"]["curve"] == json.loads(json.dumps(curve))
    assert {r[1] for r in results.rows()} == {"end", "250000", "600000"}
    assert "curve" not in score("atari5", [logs], reps=0).algorithms["agent"]


def test_curve_points_where_a_game_has_no_score_are_left_out_with_a_note(tmp_path):
    logs = _atari5_logs(tmp_path / "logs")
    results = score("atari5", [logs], reps=0, curve=[50_000, 100_000])
    agent = results.algorithms["agent"]
    assert list(agent["curve"]) == ["100000"]  # no episode had ended by 50k frames
    assert any("no point at 50,000 frames: pong, qbert had no score" in n for n in agent["notes"])
    table = score("atari5", {"t": {"pong": 1.0}}, reps=0, curve=True)
    assert "curve" not in table.algorithms["t"]
    assert table.algorithms["t"]["notes"] == [
        "no sample-efficiency curve: its scores come from a score table, not episode logs"
    ]


def test_no_curve_for_a_protocol_scored_after_training(tmp_path):
    with pytest.raises(InvalidArgument, match="`curve` must be off for 'atari100k', got True"):
        score("atari100k", {"a": {"pong": 1.0}}, curve=True)


# -- the results file: inputs relative to it, the scoring call's arguments, format 1 --------------


def _two_agents(root):
    """``root/a`` and ``root/b``: the six-episode runs of ``_atari5_logs``, b's 5 points lower."""
    from report_helpers import write_log

    _atari5_logs(root / "a")
    for game in ("pong", "qbert"):
        for run in ("0", "1"):
            returns = [10.0 * i + int(run) - 5 for i in range(6)]
            write_log(root / "b", "atari5", "b", game, run, returns, 100_000)
    return root


@pytest.mark.parametrize(
    ("curve", "compare"),
    [(True, [("b", "agent")]), ([250_000, 600_000], None)],
    ids=["curve-true-compare-b-a", "curve-frames-every-pair"],
)
def test_a_results_file_rescored_with_its_recorded_arguments_is_the_same(
    tmp_path, monkeypatch, curve, compare
):
    logs = _two_agents(tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    results = score("atari5", ["logs/a", "logs/b"], reps=20, seed=3, curve=curve, compare=compare)
    settings = {"ci": 0.95, "reps": 20, "seed": 3, "curve": curve}
    if compare is not None:
        settings["compare"] = [list(pair) for pair in compare]
    assert results.settings == settings
    (tmp_path / "out").mkdir()
    results.to_json(tmp_path / "out" / "results.json")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    back = Results.from_json("../out/results.json")
    inputs = back.provenance["inputs"]
    assert inputs == [
        str(Path("../logs/a/atari5/pong/0.jsonl")),
        str(Path("../logs/a/atari5/pong/1.jsonl")),
        str(Path("../logs/a/atari5/qbert/0.jsonl")),
        str(Path("../logs/a/atari5/qbert/1.jsonl")),
        str(Path("../logs/b/atari5/pong/0.jsonl")),
        str(Path("../logs/b/atari5/pong/1.jsonl")),
        str(Path("../logs/b/atari5/qbert/0.jsonl")),
        str(Path("../logs/b/atari5/qbert/1.jsonl")),
    ]
    assert all(Path(i).resolve().is_relative_to(logs.resolve()) for i in inputs)
    again = score("atari5", inputs, **back.settings)
    assert "curve" in again.algorithms["b"] and again.comparisons
    assert {k: v for k, v in again.to_dict().items() if k != "provenance"} == {
        k: v for k, v in results.to_dict().items() if k != "provenance"
    }


def test_inputs_are_written_relative_to_the_file_and_read_from_anywhere(tmp_path, monkeypatch):
    _atari5_logs(tmp_path / "work" / "logs")
    monkeypatch.chdir(tmp_path / "work")
    results = score("atari5", ["logs", {"table": {"pong": 1.0}}], reps=0)
    written = [
        "logs/atari5/pong/0.jsonl",
        "logs/atari5/pong/1.jsonl",
        "logs/atari5/qbert/0.jsonl",
        "logs/atari5/qbert/1.jsonl",
    ]
    assert results.provenance["inputs"] == ["<mapping>", *(str(Path(w)) for w in written)]
    path = tmp_path / "work" / "out" / "results.json"
    path.parent.mkdir()
    results.to_json(path)
    document = json.loads(path.read_text())
    assert document["provenance"]["inputs"] == ["<mapping>", *(f"../{w}" for w in written)]
    in_cwd = json.loads(results.to_json())["provenance"]["inputs"]  # as a file written here
    assert in_cwd == ["<mapping>", *written]
    monkeypatch.chdir(tmp_path)
    paths, version = results_inputs("work/out/results.json")
    assert version == 2 and paths == [Path("<mapping>"), *(Path("work") / w for w in written)]
    assert all(p.is_file() for p in paths[1:])
    back = Results.from_json(path)  # absolute: the inputs come back absolute
    assert back.provenance["inputs"][1:] == [str(tmp_path / "work" / w) for w in written]
    back.to_json(tmp_path / "results.json")  # written elsewhere: still the same files
    paths, _ = results_inputs(tmp_path / "results.json")
    assert [str(p) for p in paths] == back.provenance["inputs"]
    assert json.loads((tmp_path / "results.json").read_text())["provenance"]["inputs"][1:] == [
        f"work/{w}" for w in written
    ]


def test_a_copied_results_folder_names_its_own_logs(tmp_path, monkeypatch):
    run = tmp_path / "run"
    _atari5_logs(run / "agent")
    monkeypatch.chdir(tmp_path)
    results = score("atari5", ["run/agent"], reps=0)
    results.to_json(run / "results.json")
    shutil.copytree(run, tmp_path / "copy")
    shutil.rmtree(run)
    monkeypatch.chdir(tmp_path / "copy" / "agent")  # a reviewer somewhere in the copy
    paths, version = results_inputs(tmp_path / "copy" / "results.json")
    assert version == 2 and len(paths) == 4
    assert all(p.is_file() and p.is_relative_to(tmp_path / "copy") for p in paths)
    again = score("atari5", paths, reps=0)
    assert again.algorithms == results.algorithms


def test_a_format_1_file_is_read_with_its_inputs_as_written(tmp_path, monkeypatch):
    _atari5_logs(tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    results = score("atari5", ["logs"], reps=20)
    document = {**results.to_dict(), "format": "arcadebench-results/1"}
    (tmp_path / "out").mkdir()
    path = tmp_path / "out" / "old.json"
    path.write_text(json.dumps(document))
    monkeypatch.chdir(tmp_path / "out")
    old = Results.from_json(path)
    assert old.algorithms == results.algorithms and old.settings == results.settings
    assert old.provenance["inputs"] == results.provenance["inputs"]  # relative to tmp_path
    paths, version = results_inputs(path)
    assert version == 1 and paths == [Path(i) for i in results.provenance["inputs"]]
    rescored = score("atari5", path, reps=20)  # its runs, re-scored
    assert rescored.algorithms["agent"]["aggregates"] == results.algorithms["agent"]["aggregates"]


def test_the_csv_is_the_same_whatever_the_format_or_arguments(tmp_path, monkeypatch):
    _two_agents(tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    plain = score("atari5", ["logs/a", "logs/b"], reps=20, curve=[250_000])
    asked = score(
        "atari5", ["logs/a", "logs/b"], reps=20, curve=[250_000], compare=[("b", "agent")]
    )
    text = plain.to_csv()
    assert asked.to_csv() == text  # the settings and comparisons are in the JSON only
    assert text.splitlines()[0] == "algorithm,checkpoint,game,metric,value,ci_low,ci_high"
    assert "agent,250000,pong,raw,5.5,5.0,6.0" in text.splitlines()
    plain.to_json(tmp_path / "r.json")
    assert Results.from_json(tmp_path / "r.json").to_csv() == text
    old = {**plain.to_dict(), "format": "arcadebench-results/1"}
    assert Results.from_dict(old).to_csv() == text


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"curve": False}, '"settings" "curve" must be true or frame counts, got False'),
        ({"curve": [0]}, '"settings" "curve" must be true or frame counts, got [0]'),
        ({"compare": [["a"]]}, '"settings" "compare" must be [x, y] pairs of algorithms'),
    ],
)
def test_recorded_arguments_score_could_not_take_back_are_refused(settings, message):
    document = score("atari5", {"a": {"pong": 1.0}}, reps=0).to_dict()
    document["settings"].update(settings)
    with pytest.raises(InputError, match=re.escape(f"r.json: {message}")):
        Results.from_dict(document, "r.json")


def test_results_inputs_refuses_what_is_not_a_results_file(tmp_path):
    path = tmp_path / "scores.json"
    path.write_text('{"me": {"pong": 1.0}}')
    with pytest.raises(InputError, match="is not a results document"):
        results_inputs(path)
    path.write_text('{"format": "arcadebench-results/2", "provenance": {}}')
    with pytest.raises(InputError, match='has no "provenance" "inputs"'):
        results_inputs(path)
