"""The pure scoring functions on numbers computed by hand, and against rliable's metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rliable import metrics as rly

from arcadebench import load_spec
from arcadebench.benchmarks.scoring.metrics import (
    aggregate_iqm,
    aggregate_mean,
    aggregate_median,
    aggregate_optimality_gap,
    breakthroughs,
    class_histogram,
    class_index,
    game_improvement,
    game_means,
    game_time_days,
    learning_efficiency,
    predicted_scores,
    probability_of_improvement,
    subset_score,
)
from arcadebench.benchmarks.scoring.normalise import normalise
from arcadebench.errors import InvalidArgument

NAN = math.nan
INF = math.inf
SABER_CLASSES = load_spec("saber").scoring.classes


# -- normalised scores ----------------------------------------------------------------------------


def test_hns_by_hand():
    # Pong, Atari-5 Table 12: random -20.71, human 14.6 -> 100 (x + 20.71) / 35.31
    hns = normalise([[-20.71, 14.6, -3.055, -21.0]], -20.71, 14.6)
    assert hns[0, 0] == 0.0 and hns[0, 1] == 100.0
    assert hns[0, 2] == pytest.approx(50.0)
    assert hns[0, 3] == pytest.approx(100 * (-0.29) / 35.31)  # below random: negative, kept


def test_score_equal_to_reference_is_exactly_100_even_where_floating_point_is_not():
    # SABER Table 5 Pong: random -20.34, record 21; 100 (21 + 20.34) / 41.34 is 99.99999999999999
    assert 100.0 * (21.0 + 20.34) / abs(21.0 + 20.34) != 100.0
    assert normalise(21.0, -20.34, 21.0) == 100.0
    # a reference below random (never shipped, allowed by the |w - r| formula) ties at -100
    assert normalise(5.0, 10.0, 5.0) == -100.0


def test_saber_cap_and_infinite_gameplay():
    saber = normalise([[INF, 500.0, -50.0]], [0.0, 0.0, 0.0], [100.0, 100.0, 100.0], cap=200)
    assert saber.tolist() == [[200.0, 200.0, -50.0]]  # capped above, no lower clip
    hwrns = normalise([[INF]], 0.0, 100.0)
    assert hwrns[0, 0] == INF


def test_chns_clips_both_ways():
    chns = normalise([[-10.0, 50.0, 300.0, INF]], 0.0, 100.0, floor=0, cap=100)
    assert chns.tolist() == [[0.0, 50.0, 100.0, 100.0]]


def test_missing_constant_or_run_stays_nan():
    score = normalise([[1.0, NAN]], [0.0, 0.0], [NAN, 2.0])
    assert np.isnan(score).all()


# -- aggregates -----------------------------------------------------------------------------------

# rliable's own test matrices (tests/rliable/metrics_test.py): 4 runs x 2 tasks
SCORES = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])


def test_aggregates_by_hand():
    assert float(aggregate_mean(SCORES)) == 4.5  # task means 4 and 5
    assert float(aggregate_median(SCORES)) == 4.5
    assert float(aggregate_iqm(SCORES)) == 4.5  # 8 scores, drop 2 lowest and 2 highest: 3..6
    assert float(aggregate_optimality_gap(SCORES, threshold=5.0)) == pytest.approx(
        5 - (1 + 2 + 3 + 4 + 5 * 4) / 8
    )


def test_median_of_odd_and_even_game_counts():
    assert float(aggregate_median([[1.0, 100.0, 3.0]])) == 3.0
    assert float(aggregate_median([[1.0, 100.0, 3.0, 7.0]])) == 5.0


def test_iqm_trims_floor_of_a_quarter():
    # 5 scores: floor(5 / 4) = 1 dropped each side -> mean(2, 3, 4)
    assert float(aggregate_iqm([[1.0, 2.0, 3.0, 4.0, 1000.0]])) == 3.0
    # 3 scores: nothing trimmed
    assert float(aggregate_iqm([[1.0, 2.0, 6.0]])) == 3.0


def test_optimality_gap_counts_exceeding_scores_as_threshold():
    assert float(aggregate_optimality_gap([[150.0, 100.0, 40.0, -20.0]], 100.0)) == pytest.approx(
        (0 + 0 + 60 + 120) / 4
    )


def test_unequal_runs_per_game_padding_with_nan():
    scores = [[1.0, 10.0], [3.0, NAN], [5.0, NAN]]  # game 0: 3 runs (mean 3), game 1: 1 run
    assert game_means(scores).tolist() == [3.0, 10.0]
    assert float(aggregate_mean(scores)) == 6.5
    assert float(aggregate_median(scores)) == 6.5
    assert float(aggregate_iqm(scores)) == pytest.approx(
        (3 + 5) / 2
    )  # 4 pooled scores: drop 1 and 10
    assert float(aggregate_optimality_gap(scores, 4.0)) == pytest.approx(4 - (1 + 3 + 4 + 4) / 4)


def test_infinite_scores_in_aggregates():
    scores = [[INF, 1.0, 2.0]]
    assert float(aggregate_mean(scores)) == INF
    assert float(aggregate_median(scores)) == 2.0
    assert float(aggregate_optimality_gap(scores, 100.0)) == pytest.approx(100 - (100 + 1 + 2) / 3)


def test_aggregates_are_vectorised_over_leading_axes():
    rng = np.random.default_rng(3)
    batch = rng.normal(50, 30, size=(7, 4, 9))
    batch[2, 3, 4] = NAN
    for function in (aggregate_mean, aggregate_median, aggregate_iqm, aggregate_optimality_gap):
        together = function(batch)
        assert together.shape == (7,)
        one_by_one = [float(function(batch[i])) for i in range(7)]
        np.testing.assert_allclose(together, one_by_one, rtol=1e-12)


@pytest.mark.parametrize("shape", [(5, 57), (3, 2), (10, 7), (1, 11)])
def test_aggregates_equal_rliable_on_rectangular_matrices(shape):
    x = np.random.default_rng(sum(shape)).normal(100, 80, size=shape)
    assert float(aggregate_mean(x)) == pytest.approx(rly.aggregate_mean(x), rel=1e-12)
    assert float(aggregate_median(x)) == pytest.approx(rly.aggregate_median(x), rel=1e-12)
    assert float(aggregate_iqm(x)) == pytest.approx(rly.aggregate_iqm(x), rel=1e-12)
    # rliable's gamma=1 is a normalised score of 1.0; ours is in percent
    assert float(aggregate_optimality_gap(x, 100.0)) == pytest.approx(
        100 * rly.aggregate_optimality_gap(x / 100), rel=1e-12
    )


def test_shape_is_checked_at_the_boundary():
    with pytest.raises(
        InvalidArgument,
        match=r"`scores` must be an array of shape \(\.\.\., runs, games\), got shape \(3,\)",
    ):
        aggregate_mean([1.0, 2.0, 3.0])


def test_no_games_gives_nan_not_an_error():
    empty = np.zeros((1, 0))
    assert np.isnan(aggregate_mean(empty)) and np.isnan(aggregate_median(empty))


# -- classes and breakthroughs --------------------------------------------------------------------


def test_saber_classes_at_their_bounds():
    values = [-5.0, 0.0, 0.999, 1.0, 9.99, 10.0, 49.9, 50.0, 99.999, 100.0, 250.0, INF]
    labels = [SABER_CLASSES[i][0] for i in class_index(values, SABER_CLASSES)]
    assert labels == [
        "failing",
        "failing",
        "failing",
        "poor",
        "poor",
        "medium",
        "medium",
        "fair",
        "fair",
        "superhuman",
        "superhuman",
        "superhuman",
    ]


def test_class_histogram_lists_every_class():
    assert class_histogram([0.5, 100.0, 100.0], SABER_CLASSES) == {
        "failing": 1,
        "poor": 0,
        "medium": 0,
        "fair": 0,
        "superhuman": 2,
    }
    with pytest.raises(InvalidArgument, match="NaN"):
        class_index([NAN], SABER_CLASSES)


def test_breakthroughs_count_exact_ties():
    assert breakthroughs([100.0, 99.99999999999999, 250.0, INF, -3.0], 100.0) == 3


# -- Atari-5 --------------------------------------------------------------------------------------


def test_atari5_estimate_formula_by_hand():
    subset = load_spec("atari5").subsets["Atari-5"]
    hns = [250.0, -40.0, 99.0, 1000.0, 0.0]  # a below-random game contributes log10(1 + 0) = 0
    expected = 10 ** (0.3820 * math.log10(251) + 0.3108 * 2 + 0.1241 * math.log10(1001)) - 1
    assert float(subset_score(hns, subset.coefficients)) == pytest.approx(expected, rel=1e-12)


def test_atari5_estimate_of_a_uniform_agent():
    # every game at x %: estimate = (1 + x)^(sum c) - 1; Table 9 weights of Atari-5 sum to 0.9653
    subset = load_spec("atari5").subsets["Atari-5"]
    assert float(subset_score([99.0] * 5, subset.coefficients)) == pytest.approx(
        100**0.9653 - 1, rel=1e-12
    )


def test_table_10_prediction_by_hand():
    model = load_spec("atari5").predictions["Atari-5"]
    alien = model.models[
        "alien"
    ]  # Table 10: c, battle_zone, double_dunk, name_this_game, phoenix, qbert
    inputs = [200.0, 100.0, 150.0, -10.0, 300.0]
    log = lambda x: math.log10(1 + max(0.0, x))  # noqa: E731
    expected = (
        10 ** (alien[0] + sum(c * log(x) for c, x in zip(alien[1:], inputs, strict=True))) - 1
    )
    assert predicted_scores(inputs, {"alien": alien})["alien"] == pytest.approx(expected, rel=1e-12)


# -- HWR learning efficiency ----------------------------------------------------------------------


def test_game_time_and_learning_efficiency():
    per_day = load_spec("hwr").scoring.game_time_frames_per_day
    assert per_day == 108_000 * 2 * 24
    # HWR paper: "200M training frames equal to 38.5 days" (38.58, truncated in the paper)
    assert float(game_time_days(200_000_000, per_day)) == pytest.approx(38.58, abs=0.01)
    assert float(learning_efficiency(300.0, 2e8)) == pytest.approx(1.5e-8)  # 300 % = 3.0
    with pytest.raises(InvalidArgument, match="`frames` must be positive"):
        learning_efficiency(1.0, 0)


# -- probability of improvement (Agarwal et al. 2021) ---------------------------------------------


def test_probability_of_improvement_by_hand():
    # game 0: X runs 3, 1 against Y's 2: one win in two pairs; game 1: 1, 2 against 2: a tie
    x = [[3.0, 1.0], [1.0, 2.0]]
    y = [[2.0, 2.0]]
    assert game_improvement(x, y).tolist() == [0.5, 0.25]
    assert float(probability_of_improvement(x, y)) == 0.375
    assert float(probability_of_improvement(y, x)) == 0.625  # 1 - P(X > Y): ties count half


def test_probability_of_improvement_equals_rliables_with_ties_and_infinity():
    rng = np.random.default_rng(5)
    x = rng.integers(0, 4, size=(5, 7)).astype(float)  # small integers: many ties
    y = rng.integers(0, 4, size=(3, 7)).astype(float)
    x[0, 2] = INF  # SABER's infinite gameplay beats every finite score, ties with itself
    y[1, 2] = INF
    assert float(probability_of_improvement(x, y)) == pytest.approx(
        rly.probability_of_improvement(x, y), abs=1e-12
    )
    same = rng.normal(size=(4, 3))
    assert float(probability_of_improvement(same, same)) == 0.5  # rliable's special case


def test_probability_of_improvement_ignores_padding_and_batches():
    x = np.array([[3.0, 1.0], [1.0, NAN]])  # game 1: one run of X
    y = np.array([[2.0, 0.0], [NAN, 1.0]])
    assert game_improvement(x, y).tolist() == [0.5, 0.75]  # game 1: 1 vs (0, 1): a win, a tie
    batch = np.stack([x, x[::-1]])  # leading axes are repetitions
    assert game_improvement(batch, np.stack([y, y])).shape == (2, 2)


def test_probability_of_improvement_checks_its_arguments():
    with pytest.raises(InvalidArgument, match=r"`y` must have the games of `x` \(2\), got 3"):
        game_improvement([[1.0, 2.0]], [[1.0, 2.0, 3.0]])
    with pytest.raises(InvalidArgument, match="at least one run of every game"):
        game_improvement([[1.0, NAN]], [[1.0, 2.0]])
