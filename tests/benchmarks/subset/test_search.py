"""The Atari-5 method (benchmarks/subset/) against the paper, its data and brute force.

The paper's numbers are checked on the authors' data set (shipped as ``atari5-dataset``):
Table 9 coefficients, Table 2 cross-validated R^2 and relative errors, Section 5.1's single-game
fits, Tables 10-11 per-game models and Section 5.5's variance explained. Full 56-game searches
take ~15 s, so the searches here run in reduced spaces that contain the paper's winners (a
subset of the full space that contains the global best has the same best); perf/bench_subset.py
runs the full search. The vectorised engine is checked against direct one-subset-at-a-time
fits, on the real data and on random data with missing scores.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import arcadebench
from arcadebench.benchmarks import subset
from arcadebench.benchmarks.scoring.normalise import log_normalise, subset_estimate
from arcadebench.benchmarks.subset import (
    ATARI5_DATASET,
    ScoreTable,
    SubsetError,
    best_subsets,
    fit_predictions,
    fit_subset,
    nested_selection,
    predict_scores,
    prepare,
    read_scores,
    to_yaml,
)
from arcadebench.benchmarks.subset import fit as subset_fit
from arcadebench.benchmarks.subset import search as subset_search
from arcadebench.errors import ArcadebenchError, InputError, UnknownGame
from arcadebench.specs.model import GameConstants

SPEC = arcadebench.load_spec("atari5")
TABLE_9 = SPEC.subsets  # with the Table 2 r2 / relative_error
ATARI5 = TABLE_9["Atari-5"].games
# Table 2's DQN-7 baseline (not in the spec: it has negative weights).
DQN7 = ("beam_rider", "breakout", "enduro", "pong", "qbert", "seaquest", "space_invaders")
# Every game of Table 2's subsets, plus the games of the runner-up subsets of the full search.
PAPER_GAMES = tuple(dict.fromkeys(g for s in TABLE_9.values() for g in s.games))
RUNNERS_UP = (
    "assault",
    "pitfall",
    "road_runner",
    "riverraid",
    "asterix",
    "kung_fu_master",
    "zaxxon",
    "alien",
)


@pytest.fixture(scope="module")
def data() -> subset.SubsetData:
    return prepare(read_scores(ATARI5_DATASET))


# -- the data set and the Section 4.1 filters ------------------------------------------------------


def test_shipped_dataset_is_the_authors_with_its_licence():
    path = Path(arcadebench.__file__).resolve().parent / "data"
    assert (path / "atari5_dataset.csv").stat().st_size == 475_887
    assert "MIT License" in (path / "atari5_dataset.LICENSE").read_text()


def test_filters_keep_62_algorithms_and_drop_surround(data):
    # Section 4.1: 62 algorithms with >= 40 games; Surround is the only game with < 40 of them.
    assert len(data.table.algorithms) == 62 and data.dropped_algorithms == ()
    assert data.dropped_games == ("surround",)
    assert len(data.candidates) == 56 and len(data.table.games) == 57
    assert int(np.sum(~np.isnan(data.x[:, data.table.games.index("surround")]))) == 33


def test_target_is_log_of_the_median_over_all_57_games_including_surround(data):
    # Table 8: MuZero's median is 2041.1 and CGP's 53.0 (over all their games).
    row = data.table.algorithms.index("MuZero")
    assert round(10 ** data.y[row] - 1, 1) == 2041.1
    assert round(10 ** data.y[data.table.algorithms.index("CGP")] - 1, 1) == 53.0
    human = data.table.algorithms.index("Human Ref")
    assert data.y[human] == pytest.approx(math.log10(101.0))


def test_algorithms_are_in_code_point_order_for_the_authors_folds(data):
    assert list(data.table.algorithms) == sorted(data.table.algorithms)
    assert "Bootstrapped DQN" in data.table.algorithms  # trailing space in the CSV stripped


# -- Table 9 coefficients and Table 2 figures ----------------------------------------------------


@pytest.mark.parametrize("name", list(TABLE_9))
def test_refit_gives_table_9_coefficients_and_table_2_figures(data, name):
    published = TABLE_9[name]
    fit = fit_subset(data, published.games)
    assert tuple(round(c, 4) for c in fit.coefficients) == published.coefficients
    assert round(fit.cv_r2, 3) == published.r2
    assert round(fit.cv_relative_error, 1) == published.relative_error


def test_dqn7_baseline_of_table_2(data):
    fit = fit_subset(data, DQN7)
    assert (round(fit.cv_r2, 3), round(fit.cv_relative_error, 1)) == (0.756, 38.9)
    assert min(fit.coefficients) < 0  # why it is no Atari-X candidate (Algorithm 1 line 14)


def test_section_5_1_name_this_game_alone_with_intercept(data):
    fit = fit_subset(data, ["Name This Game"], intercept=True)
    assert (round(fit.intercept, 2), round(fit.coefficients[0], 2)) == (-0.03, 1.01)


def test_section_5_1_single_game_r2_zaxxon_best_surround_worst(data):
    r2 = {g: fit_subset(data, [g], intercept=True).r2 for g in data.table.games}
    ranked = sorted(r2, key=r2.get)
    assert ranked[-1] == "zaxxon" and round(r2["zaxxon"], 3) == 0.903
    assert ranked[0] == "surround" and round(r2["surround"], 3) == 0.002


def test_fit_counts_only_algorithms_with_every_subset_game(data):
    assert fit_subset(data, ["name_this_game"]).n_algorithms == 62
    assert (
        fit_subset(data, ATARI5).n_algorithms == 44
    )  # Phoenix has 45 algorithms, Double Dunk's overlap 44


# -- the searches --------------------------------------------------------------------------------


def test_size_5_search_selects_atari5(data):
    search = best_subsets(data, 5, within=ATARI5 + RUNNERS_UP, top=3, processes=1)
    assert search.n_subsets == math.comb(13, 5)
    assert search.best.games == ATARI5
    assert tuple(round(c, 4) for c in search.best.coefficients) == TABLE_9["Atari-5"].coefficients
    assert [f.cv_mse for f in search.fits] == sorted(f.cv_mse for f in search.fits)
    assert all(min(f.coefficients) >= 0 for f in search.fits)


def test_nested_selection_reproduces_table_2(data):
    found = nested_selection(data, within=PAPER_GAMES + RUNNERS_UP, processes=1)
    assert list(found) == [
        "Atari-1",
        "Atari-3",
        "Atari-5",
        "Atari-10",
        "Atari-3-Val",
        "Atari-5-Val",
    ]
    for name, fit in found.items():
        published = TABLE_9[name]
        assert fit.name == name
        assert fit.games == published.games, name  # same order as Table 9, `always` games last
        assert tuple(round(c, 4) for c in fit.coefficients) == published.coefficients, name
        assert (round(fit.cv_r2, 3), round(fit.cv_relative_error, 1)) == (
            published.r2,
            published.relative_error,
        )


def test_validation_searches_exclude_the_test_games(data):
    found = nested_selection(
        data,
        sizes=(5,),
        validation=(3,),
        extended=None,
        within=ATARI5 + ("assault", "ms_pacman", "yars_revenge", "zaxxon"),
        processes=1,
    )
    assert set(found["Atari-3-Val"].games).isdisjoint(ATARI5)


def test_exclude_always_and_within(data):
    search = best_subsets(
        data, 3, within=ATARI5, exclude=["Q*bert"], always=["Phoenix"], processes=1, top=20
    )
    assert search.n_subsets == math.comb(3, 2)  # battle_zone, double_dunk, name_this_game choose 2
    assert all(f.games[-1] == "phoenix" and "qbert" not in f.games for f in search.fits)


def test_authors_rule_and_algorithm_1_agree_on_atari5(data):
    # atari5.py cross-validates only the 20 lowest in-sample MSEs, never rejecting negative weights.
    space = ATARI5 + RUNNERS_UP
    fits = [fit_subset(data, c) for c in itertools.combinations(space, 5)]
    authors = min(sorted(fits, key=lambda f: f.mse)[:20], key=lambda f: f.cv_mse)
    assert authors.games == best_subsets(data, 5, within=space, processes=1).best.games == ATARI5


# -- the vectorised engine against direct fits -----------------------------------------------------


@pytest.mark.parametrize("intercept", [False, True])
def test_engine_cv_mse_equals_direct_fits_on_real_data(data, intercept):
    space = (
        "battle_zone",
        "double_dunk",
        "phoenix",
        "pitfall",
        "pong",
        "skiing",
        "venture",
        "yars_revenge",
    )
    search = best_subsets(data, 3, within=space, intercept=intercept, top=100, processes=1)
    direct = [fit_subset(data, c, intercept=intercept) for c in itertools.combinations(space, 3)]
    nonnegative = [f for f in direct if min(f.coefficients) >= 0]
    assert search.n_fitted == len(direct) and search.n_nonnegative == len(nonnegative)
    assert [f.games for f in search.fits] == [
        f.games for f in sorted(nonnegative, key=lambda f: f.cv_mse)
    ]
    # the engine's own ranking numbers (normal equations) agree with lstsq
    problem_result = _engine_rows(data, space, 3, intercept)
    by_games = {f.games: f for f in direct}
    for games, cv in problem_result.items():
        assert cv == pytest.approx(by_games[games].cv_mse, rel=1e-9)


def _engine_rows(data, space, size, intercept):
    columns = [data.table.games.index(g) for g in space]
    x = data.x[:, columns]
    present = ~np.isnan(x)
    x = np.where(present, x, 0.0)
    if intercept:
        x = np.column_stack([x, np.ones(len(x))])
        present = np.column_stack([present, np.ones(len(x), dtype=bool)])
    problem = subset_search._Problem(
        x, subset_search._presence_bits(present), np.asarray(data.y), 10, 1982, intercept, 10**6
    )
    tail = [len(space)] if intercept else []
    ((start, combos),) = subset_search._combination_blocks(range(len(space)), size, tail, 10**6)
    out = subset_search._search_chunk(problem, start, combos)
    return {
        tuple(space[j] for j in row[:size]): cv
        for row, cv in zip(out["combos"], out["cv_mse"], strict=True)
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    size=st.integers(1, 3),
    intercept=st.booleans(),
    folds=st.integers(2, 6),
)
def test_engine_matches_brute_force_on_random_data_with_missing_scores(
    seed, size, intercept, folds
):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(12, 80)), 6
    scores = rng.lognormal(3.0, 1.5, size=(m, n)) - 5.0
    scores[rng.random((m, n)) < 0.15] = np.nan
    scores[:, 0] = np.where(rng.random(m) < 0.5, np.nan, -1.0)  # a column of zeros where present
    games = tuple(f"g{j}" for j in range(n))
    table = ScoreTable(tuple(f"a{i:02d}" for i in range(m)), games, scores)
    data = prepare(table, min_games=1, min_algorithms=1)
    direct = []
    for combo in itertools.combinations(data.candidates, size):
        try:
            fit = fit_subset(data, combo, intercept=intercept, folds=folds)
        except SubsetError:
            continue  # too few algorithms with all the games
        if min(fit.coefficients) >= 0:
            direct.append(fit)
    if not direct:
        with pytest.raises(SubsetError, match="no subset"):
            best_subsets(data, size, intercept=intercept, folds=folds, processes=1)
        return
    search = best_subsets(data, size, intercept=intercept, folds=folds, top=100, processes=1)
    assert search.n_nonnegative == len(direct)
    expected = sorted(direct, key=lambda f: f.cv_mse)
    assert [f.cv_mse for f in search.fits] == pytest.approx(
        [f.cv_mse for f in expected], rel=1e-9, abs=1e-12
    )


def test_parallel_search_equals_serial(data, monkeypatch):
    monkeypatch.setattr(subset_search, "_PARALLEL_MIN", 0)
    monkeypatch.setattr(subset_search, "_CHUNK", 97)
    space = ATARI5 + RUNNERS_UP
    parallel = best_subsets(data, 4, within=space, top=5, processes=2)
    serial = best_subsets(data, 4, within=space, top=5, processes=1)
    assert parallel.processes == 2 and serial.processes == 1
    assert parallel.fits == serial.fits
    assert (parallel.n_fitted, parallel.n_nonnegative) == (serial.n_fitted, serial.n_nonnegative)


def test_fold_ids_follow_sklearn_kfold_shuffle_convention():
    ids = subset_fit._fold_ids(44, 10, 1982)
    assert np.bincount(ids).tolist() == [5, 5, 5, 5, 4, 4, 4, 4, 4, 4]  # first 44 % 10 folds larger
    order = np.arange(44)
    np.random.RandomState(1982).shuffle(order)
    assert ids[order].tolist() == sorted(ids.tolist())  # consecutive folds of the permutation


def test_hand_computable_median_game_is_found_with_weight_one():
    # a_i < b_i < c_i for every algorithm: the 3-game median is b, so {b} predicts it exactly.
    records = [
        (f"alg{i}", game, float(v))
        for i in range(12)
        for game, v in (("a", i), ("b", 10 * i + 5), ("c", 100 * i + 50))
    ]
    data = prepare(ScoreTable.from_records(records), min_games=3)
    best = best_subsets(data, 1, processes=1).best
    assert best.games == ("b",)
    assert best.coefficients == pytest.approx((1.0,))
    assert best.r2 == pytest.approx(1.0) and best.cv_mse == pytest.approx(0.0, abs=1e-20)


# -- per-game models (Tables 10-11, Section 5.5) ---------------------------------------------------


@pytest.mark.parametrize("name", ["Atari-5", "Atari-10"])
def test_per_game_models_reproduce_tables_10_and_11(data, name):
    table = SPEC.predictions[name]
    fitted = fit_predictions(data, table.inputs, name)
    assert set(fitted.models) == set(table.models)  # all 57 games, Surround included
    for game, row in table.models.items():
        assert fitted.models[game].coefficients == pytest.approx(row, abs=5.1e-4), game


def test_section_5_5_variance_explained_and_well_predicted_games(data):
    atari5 = fit_predictions(data, ATARI5, "Atari-5")
    atari10 = fit_predictions(data, TABLE_9["Atari-10"].games, "Atari-10")
    assert round(100 * atari5.explained_variance, 1) == 71.5
    assert round(100 * atari10.explained_variance, 1) == 80.0
    assert (
        sum(m.r2 > 0.8 for m in atari5.models.values()) == 17
    )  # "17 games ... R2 greater than 0.8"
    assert atari5.models["battle_zone"].coefficients == (0.0, 1.0, 0.0, 0.0, 0.0, 0.0)


def test_predictions_apply_eqs_10_and_11(data):
    fitted = fit_predictions(data, fit_subset(data, ATARI5, name="Atari-5"))
    assert fitted.name == "Atari-5"
    hns = {
        "Battle Zone": 120.0,
        "Double Dunk": 300.0,
        "Name This Game": 150.0,
        "Phoenix": 80.0,
        "Q*bert": 90.0,
    }
    predicted = fitted.predict(hns)
    assert predicted["battle_zone"] == pytest.approx(120.0)
    phi = log_normalise([hns[g] for g in hns])
    row = fitted.models["alien"].coefficients
    assert predicted["alien"] == pytest.approx(10 ** (row[0] + phi @ np.array(row[1:])) - 1)
    from_table_10 = predict_scores(SPEC.predictions["Atari-5"], hns)
    assert from_table_10["alien"] == pytest.approx(predicted["alien"], rel=0.01)
    with pytest.raises(SubsetError, match="missing"):
        fitted.predict({"battle_zone": 1.0})


def test_table_3_medians_and_atari5_estimates_truncated(data):
    # Table 3 prints integer parts (Agent57's median is 1975.8 in Table 8 and 1,975 in Table 3).
    fit = fit_subset(data, ATARI5)
    names = {"Rainbow DQN": "Rainbow (noop)"}
    for algorithm, (median, atari5) in SPEC.published[0].rows.items():
        row = data.table.algorithms.index(names.get(algorithm, algorithm))
        scores = {g: data.table.scores[row, data.table.games.index(g)] for g in ATARI5}
        assert math.floor(10 ** data.y[row] - 1) == median, algorithm
        assert math.floor(fit.estimate(scores)) == atari5, algorithm


def test_subset_estimate_of_a_fit_equals_the_spec_formula(data):
    fit = fit_subset(data, ATARI5)
    hns = dict(zip(ATARI5, [250.0, 40.0, 180.0, 500.0, 120.0], strict=True))
    expected = subset_estimate(log_normalise(list(hns.values())), TABLE_9["Atari-5"].coefficients)
    assert fit.estimate(hns) == pytest.approx(float(expected), rel=1e-3)


# -- YAML export -----------------------------------------------------------------------------------

HEADER = """name: mysuite
id_prefix: MySuite
title: My suite
version: 1
citation: me
platform: none
scoring:
  normalised:
    hns: {reference: human}
  log_transform: "log10(1 + max(0, x))"
"""


def test_exported_fragment_completed_with_the_header_loads_as_a_spec(data, tmp_path):
    fits = {name: fit_subset(data, s.games) for name, s in TABLE_9.items()}
    preds = [fit_predictions(data, SPEC.predictions[n].inputs, n) for n in ("Atari-5", "Atari-10")]
    path = tmp_path / "mysuite.yaml"
    path.write_text(HEADER + to_yaml(data, fits, preds))
    spec = arcadebench.load_spec(str(path))
    assert spec.platform == "none" and len(spec.games) == 57
    for name, published in TABLE_9.items():
        assert spec.subsets[name] == published  # games, coefficients, r2 and relative error
    assert spec.constants["zaxxon"].random == SPEC.constants["zaxxon"].random
    assert spec.predictions["Atari-5"].models["alien"] == pytest.approx(
        SPEC.predictions["Atari-5"].models["alien"], abs=5.1e-4
    )


def test_exported_spec_scores_a_new_algorithm(data, tmp_path):
    best = fit_subset(data, ATARI5, name="Atari-5")
    path = tmp_path / "atari5-refit.yaml"
    path.write_text(to_yaml(data, [best], name="atari5-refit"))
    spec = arcadebench.load_spec(str(path))
    assert spec.name == "atari5-refit" and spec.id_prefix == "Atari5Refit"
    raw = {
        "Battle Zone": 37187.5,
        "Double Dunk": -16.4,
        "Name This Game": 8049.0,
        "Phoenix": 7242.6,
        "Q*bert": 13455.0,
    }
    subset_scores = [raw[g] for g in raw]
    hns = {
        spec.resolve_game(g): 100.0
        * (v - spec.constants[spec.resolve_game(g)].random)
        / (spec.constants[spec.resolve_game(g)].human - spec.constants[spec.resolve_game(g)].random)
        for g, v in zip(raw, subset_scores, strict=True)
    }
    assert hns == pytest.approx(dict.fromkeys(ATARI5, 100.0))
    estimate = subset_estimate(log_normalise([100.0] * 5), spec.subsets["Atari-5"].coefficients)
    assert float(estimate) == pytest.approx(
        10 ** (sum(TABLE_9["Atari-5"].coefficients) * math.log10(101)) - 1
    )


def test_export_of_normalised_scores_and_odd_names_loads(tmp_path):
    records = [
        (f"alg{i}", game, float(v))
        for i in range(12)
        for game, v in (("Q*bert (hard)", i), ("on", 10 * i + 5), ("c", 100 * i + 50))
    ]
    data = prepare(ScoreTable.from_records(records), min_games=3)
    best = best_subsets(data, 1, processes=1).best.renamed("Tiny-1")
    text = to_yaml(data, [best], [fit_predictions(data, best)], name="tiny")
    assert "random 0 and human 100" in text
    path = tmp_path / "tiny.yaml"
    path.write_text(text)
    spec = arcadebench.load_spec(str(path))
    assert spec.subsets["Tiny-1"].games == ("on",)
    assert spec.resolve_game("Q*bert (hard)") == "Q_bert_hard"
    assert spec.constants["on"].random == 0.0 and spec.constants["on"].human == 100.0


def test_export_refuses_unnamed_or_intercept_fits(data):
    with pytest.raises(SubsetError, match="needs a name"):
        to_yaml(data, [fit_subset(data, ATARI5)])
    with pytest.raises(SubsetError, match="intercept"):
        to_yaml(data, {"X-1": fit_subset(data, ["pong"], intercept=True)})
    with pytest.raises(SubsetError, match="`name` must be"):
        to_yaml(data, {"X-1": fit_subset(data, ["pong"])}, name="Bad Name")


# -- reading score tables --------------------------------------------------------------------------


def _write(tmp_path: Path, text: str, name: str = "scores.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_raw_scores_with_constants_case_insensitive(tmp_path):
    path = _write(
        tmp_path,
        "ALGORITHM,Game,Score,Random,HUMAN\nA,pong,0,-20,20\nB,pong,20,-20,20\nA,qbert,-,0,10\n",
    )
    table = read_scores(path)
    assert table.algorithms == ("A", "B") and table.games == ("pong",)  # "-" is a missing score
    assert table.scores.tolist() == [[50.0], [100.0]]
    assert table.constants == {"pong": (-20.0, 20.0)}


def test_read_normalised_scores_and_flags(tmp_path):
    path = _write(tmp_path, "algo,task,hns,train\nA,t1,50,True\nA,t2,75,False\nB,t1,25,1\n")
    table = read_scores(path)
    assert table.games == ("t1",) and table.constants == {}
    assert table.scores[:, 0].tolist() == [50.0, 25.0]


def test_read_with_spec_names_and_constants(tmp_path):
    path = _write(tmp_path, "algorithm,game,score\nA,Battle Zone,37187.5\nA,PONG,14.6\n")
    table = read_scores(path, spec="atari5")
    assert table.games == ("battle_zone", "pong")
    assert table.scores.tolist() == [[pytest.approx(100.0), pytest.approx(100.0)]]


def test_a_spec_without_a_random_constant_names_the_game_not_a_nan_score(tmp_path):
    # GameConstants types random as optional (NA); a spec built in code can leave it out, and the
    # row then failed as "the score ... must be finite, got nan" instead of naming the constant
    spec = arcadebench.load_spec("atari5")
    constants = dict(spec.constants)
    constants["pong"] = GameConstants(random=None, human=constants["pong"].human)
    spec = dataclasses.replace(spec, constants=constants)
    path = _write(tmp_path, "algorithm,game,score\nA,pong,14.6\n")
    with pytest.raises(InputError, match="no random/human constants for 'pong'"):
        read_scores(path, spec=spec)


def test_identical_duplicates_merge_and_different_ones_fail(tmp_path):
    ok = _write(tmp_path, "algorithm,game,normalized\nA,g,1\nA,g,1.0\n")
    assert read_scores(ok).scores.tolist() == [[1.0]]
    bad = _write(tmp_path, "algorithm,game,normalized\nA,g,1\nA,g,2\n", "bad.csv")
    with pytest.raises(
        InputError, match=re.escape("bad.csv:3: a second, different score for ('A', 'g') (line 2")
    ):
        read_scores(bad)


@pytest.mark.parametrize(
    "text, message",
    [
        ("algorithm,score\nA,1\n", "has no 'game' column"),
        ("algorithm,game,score\nA,g,1\n", "needs `score` with `random` and `human`"),
        (
            "algorithm,game,normalised\nA,g,abc\n",
            ":2: column 'normalised' must be a number, got 'abc'",
        ),
        ("algorithm,game,normalised\nA,g,inf\n", ":2: column 'normalised' must be finite"),
        ("algorithm,game,score,random,human\nA,g,1,0,10\nB,g,1,0,11\n", ":3: constants of 'g'"),
        (
            "algorithm,game,score,random,human\nA,g,1,5,5\n",
            "random and human scores of 'g' must differ",
        ),
        ("algorithm,game,normalised,good\nA,g,1,maybe\n", "column 'good' must be True or False"),
        ("", "is empty"),
        ("algorithm,game,normalised\n", "has no scores"),
    ],
)
def test_bad_score_files_raise_one_line_input_errors(tmp_path, text, message):
    with pytest.raises(InputError, match=re.escape(message)) as info:
        read_scores(_write(tmp_path, text))
    assert "\n" not in str(info.value)


def test_missing_file_and_unknown_spec_game(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_scores(tmp_path / "nope.csv")
    with pytest.raises(
        InputError, match=r":2: 'pnog' is not a game of the 'atari5' spec. Did you mean: 'pong'"
    ):
        read_scores(_write(tmp_path, "algorithm,game,score\nA,pnog,1\n"), spec="atari5")


# -- argument checks -------------------------------------------------------------------------------


def test_prepare_filters_and_errors():
    records = [("A", "g1", 1.0), ("A", "g2", 2.0), ("B", "g1", 3.0)]
    data = prepare(ScoreTable.from_records(records), min_games=2, min_algorithms=1)
    assert data.table.algorithms == ("A",) and data.dropped_algorithms == ("B",)
    assert data.candidates == ("g1", "g2")
    with pytest.raises(SubsetError, match="no game .* is scored by 2 of the 1 algorithms"):
        prepare(ScoreTable.from_records(records), min_games=2)
    assert prepare(
        ScoreTable.from_records(records), min_games=1, min_target=2.5
    ).table.algorithms == ("B",)
    with pytest.raises(
        SubsetError, match="no algorithm .* passes the filters .* lower `min_games`"
    ):
        prepare(ScoreTable.from_records(records), min_games=3)
    with pytest.raises(SubsetError, match="`target` must be one of median, mean, got 'iqm'"):
        prepare(ScoreTable.from_records(records), target="iqm")


def test_search_argument_errors(data):
    with pytest.raises(SubsetError, match="`size` must be at most 5"):
        best_subsets(data, 6, within=ATARI5)
    with pytest.raises(
        SubsetError,
        match=re.escape("C(56, 5) = 3,819,816 subsets is larger than max_subsets=1,000"),
    ):
        best_subsets(data, 5, max_subsets=1000)
    with pytest.raises(UnknownGame, match="Did you mean: 'pong'"):
        best_subsets(data, 1, within=["pnog"])
    with pytest.raises(SubsetError, match="'surround' is scored by 33 of the 62 algorithms"):
        best_subsets(data, 1, within=["surround"])
    with pytest.raises(SubsetError, match="must not share games"):
        best_subsets(data, 2, always=["pong"], exclude=["Pong"])
    with pytest.raises(SubsetError, match="`folds` must be an integer >= 2, got 1"):
        best_subsets(data, 1, folds=1)
    with pytest.raises(SubsetError, match="`sizes` must be decreasing"):
        nested_selection(data, sizes=(3, 5))
    with pytest.raises(ArcadebenchError, match="only 45 algorithms .* at least 50"):
        fit_subset(data, ["phoenix"], folds=50)
