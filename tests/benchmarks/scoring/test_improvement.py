"""Probability of improvement between algorithms: pairs, shared games, intervals, the scorer's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from rliable import metrics as rly_metrics

import arcadebench
from arcadebench.benchmarks.scoring.improvement import (
    compare_pair,
    comparison_pairs,
    comparison_seed,
)
from arcadebench.benchmarks.scoring.normalise import normalise
from arcadebench.errors import InvalidArgument

NAN = math.nan


def test_every_pair_in_order_or_the_ones_asked_for():
    assert comparison_pairs(["a", "b", "c"], None) == [("a", "b"), ("a", "c"), ("b", "c")]
    assert comparison_pairs(["a", "b"], [("b", "a")]) == [("b", "a")]
    with pytest.raises(InvalidArgument, match=r"got 'bb'\. Did you mean: 'b'"):
        comparison_pairs(["a", "b"], [("a", "bb")])
    with pytest.raises(InvalidArgument, match="two different algorithms, got 'a' twice"):
        comparison_pairs(["a", "b"], [("a", "a")])


def test_a_pair_is_compared_on_the_games_both_have():
    # X has pong and qbert, Y has qbert and breakout: qbert only, 2 runs of X against 1 of Y
    x = ("x", ["pong", "qbert"], np.array([[1.0, 5.0], [2.0, 1.0]]))
    y = ("y", ["qbert", "breakout"], np.array([[3.0, 9.0]]))
    compared = compare_pair(x, y, metric="raw", reps=100)
    assert compared is not None
    assert compared["games"] == {"qbert": 0.5} and compared["probability"] == 0.5
    assert compared["x"] == "x" and compared["metric"] == "raw" and "ci" in compared
    # a game where one side has no run (NaN column) is not shared
    z = ("z", ["pong", "qbert"], np.array([[NAN, 2.0]]))
    assert compare_pair(x, z, metric="raw", reps=0)["games"] == {"qbert": 0.5}  # 5 > 2, 1 < 2


def test_no_interval_with_one_run_per_game_on_both_sides_or_no_repetitions():
    x = ("x", ["pong"], np.array([[2.0]]))
    y = ("y", ["pong"], np.array([[1.0]]))
    assert "ci" not in compare_pair(x, y, metric="raw", reps=500)
    two = ("y", ["pong"], np.array([[1.0], [3.0]]))
    assert "ci" not in compare_pair(x, two, metric="raw", reps=0)
    assert compare_pair(x, two, metric="raw", reps=500)["ci"] == [0.0, 1.0]


def test_no_shared_game():
    x = ("x", ["pong"], np.array([[2.0]]))
    y = ("y", ["qbert"], np.array([[1.0]]))
    assert compare_pair(x, y, metric="hns", reps=0) is None
    with pytest.raises(InvalidArgument, match="share a game with a hns score, got 'x' and 'y'"):
        compare_pair(x, y, metric="hns", reps=0, required=True)


def test_seeds_are_per_pair_and_reproducible():
    games = ["pong", "qbert", "phoenix", "boxing", "tennis", "skiing"]
    x = ("x", games, np.random.default_rng(0).normal(size=(10, 6)))
    y = ("y", games, np.random.default_rng(1).normal(size=(10, 6)))
    a = compare_pair(x, y, metric="raw", seed=comparison_seed(0, "x", "y"))
    b = compare_pair(x, y, metric="raw", seed=comparison_seed(0, "x", "y"))
    c = compare_pair(x, y, metric="raw", seed=comparison_seed(0, "x", "z"))
    assert a == b and a["ci"] != c["ci"]


def test_the_scorer_gives_every_pair_rliables_probability_on_hns():
    scores = {
        "a": {"pong": [1.0, 5.0, -3.0], "qbert": [300.0, 250.0, 900.0]},
        "b": {"pong": [2.0, -20.0], "qbert": [1000.0, 200.0]},
        "c": {"pong": [21.0]},
    }
    results = arcadebench.score("atari5", scores, reps=200)
    pairs = [(c["x"], c["y"]) for c in results.comparisons]
    assert pairs == [("a", "b"), ("a", "c"), ("b", "c")]
    spec = arcadebench.load_spec("atari5")

    def hns(runs, game):
        constants = spec.constants[game]
        return normalise(np.asarray(runs), constants.random, constants.human)

    x = np.stack([hns(scores["a"][g], g) for g in ("pong", "qbert")], axis=1)
    y = np.full((3, 2), NAN)
    for j, g in enumerate(("pong", "qbert")):
        y[:2, j] = hns(scores["b"][g], g)
    first = results.comparisons[0]
    assert first["metric"] == "hns" and first["games"] == {"pong": 4 / 6, "qbert": 3 / 6}
    expected = rly_metrics.probability_of_improvement(x, y[:2])
    assert first["probability"] == pytest.approx(expected, abs=1e-12)
    assert results.comparisons[1]["games"] == {"pong": 0.0} and "ci" in results.comparisons[1]
    only = arcadebench.score("atari5", scores, reps=0, compare=[("c", "a")])
    assert [(c["x"], c["y"]) for c in only.comparisons] == [("c", "a")]
    assert only.comparisons[0]["probability"] == 1.0
