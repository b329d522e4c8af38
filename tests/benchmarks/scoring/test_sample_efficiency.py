"""Sample-efficiency curves: their points, what they show, the published ones, rliable's bands."""

from __future__ import annotations

import numpy as np
import pytest
from report_helpers import write_log
from rliable import library as rly_library
from rliable import metrics as rly_metrics

import arcadebench
from arcadebench.benchmarks.scoring.normalise import normalise
from arcadebench.benchmarks.scoring.sample_efficiency import (
    curve_frames,
    curve_name,
    curve_paths,
    reference_curves,
)
from arcadebench.errors import InvalidArgument
from arcadebench.specs import load_spec
from arcadebench.specs.model import Evaluation

SABER = load_spec("saber").evaluation  # checkpoints 10M, 50M, 100M, 200M; budget 200M


def test_default_points_are_round_multiples_up_to_the_longest_run():
    assert curve_frames(Evaluation("mean"), 16_000, True) == tuple(range(1000, 16_001, 1000))
    assert curve_frames(Evaluation("mean"), 45_000, True)[:2] == (2500, 5000)  # 45k / 20 -> 2.5k
    assert len(curve_frames(Evaluation("mean"), 45_000, True)) == 18
    assert curve_frames(Evaluation("mean"), 0, True) == ()
    # the protocol's checkpoints are points (those no run reached give no score); nothing
    # beyond the budget is
    assert curve_frames(SABER, 60_000_000, True) == (
        *range(5_000_000, 60_000_001, 5_000_000),
        100_000_000,
        200_000_000,
    )
    assert curve_frames(SABER, 10**9, [300_000_000, 1_000]) == (
        1_000,
        10_000_000,
        50_000_000,
        100_000_000,
        200_000_000,
    )


def test_asked_points_are_checked():
    for bad in ([], [0], [1.5], [True]):
        with pytest.raises(InvalidArgument, match="`curve` must be True or frame counts"):
            curve_frames(SABER, 1000, bad)


def test_a_curve_shows_iqm_then_the_protocols_own_aggregates():
    assert curve_paths(load_spec("saber"), "hwrns") == [
        ("hwrns", "iqm"),
        ("saber", "median"),
        ("saber", "mean"),
        ("hwrb",),
    ]
    assert curve_paths(load_spec("machado2018"), "hns") == [
        ("hns", "iqm"),
        ("hns", "median"),
        ("hns", "mean"),
    ]
    assert curve_paths(load_spec("sonic"), "raw") == [("test", "mean")]  # no IQM in the spec


def test_dopamines_baselines_are_curves_of_four_points():
    assert curve_name("DQN (Dopamine, 10M frames)") == "DQN (Dopamine)"
    assert curve_name("Rainbow (noop)") == "Rainbow (noop)"
    curves = dict(reference_curves(load_spec("machado2018")))
    assert "DQN (Dopamine)" in curves and len(curves) == 6
    frames = [r.frames for r in curves["DQN (Dopamine)"]]
    assert frames == [10_000_000, 50_000_000, 100_000_000, 199_000_000]
    assert reference_curves(load_spec("atari5")) == []


def test_published_curves_are_scored_on_the_results_games():
    results = arcadebench.score("machado2018", {"me": {"pong": 0.0}}, reps=0)
    (dqn,) = [c for c in results.reference_curves() if c.name == "DQN (Dopamine)"]
    # Dopamine's DQN on Pong at 10M frames: its 5 runs, -4.9256 points on average (to the 4
    # decimals the spec prints); HNS 100 (x + 20.71) / 35.31
    runs = results.protocol.published_scores["DQN (Dopamine, 10M frames)"].per_run["pong"]
    assert sum(runs) / 5 == pytest.approx(-4.9256, abs=5e-5)
    assert dqn.points[10_000_000]["hns"]["mean"] == pytest.approx(
        100 * (sum(runs) / 5 + 20.71) / 35.31, abs=1e-9
    )
    assert "iqm" in dqn.points[10_000_000]["hns"]  # over the runs, which are shipped
    assert sorted(dqn.points) == [10_000_000, 50_000_000, 100_000_000, 199_000_000]
    assert dqn.protocol is not None and "frame skip 4" in dqn.protocol


def test_iqm_curve_bands_equal_rliables_on_the_same_matrices(tmp_path):
    """The IQM sample-efficiency bands of ``score(..., curve=...)`` against rliable's.

    rliable's recipe (its README): a ``(runs, games, points)`` array, ``get_interval_estimates``
    with ``lambda s: [aggregate_iqm(s[..., f]) for f in points]``. The matrix is built here by
    hand from the episodes written to the logs: under Atari-5's rule a run's score at F frames
    is the mean return of its episodes ended by then, normalised to HNS.
    """
    spec = load_spec("atari5")
    games = ["battle_zone", "double_dunk", "phoenix"]
    points = (200_000, 400_000, 600_000)
    rng = np.random.default_rng(3)
    returns = {}
    for game in games:
        constants = spec.constants[game]
        level = rng.uniform(0.2, 2.0)
        for run in range(5):
            episodes = constants.random + (constants.human - constants.random) * (
                level * np.linspace(0.2, 1.0, 6) * rng.gamma(4.0, 0.25) + rng.normal(0, 0.1, 6)
            )
            returns[game, run] = episodes
            write_log(tmp_path, "atari5", "agent", game, str(run), episodes, 100_000)
    results = arcadebench.score("atari5", [tmp_path], reps=20000, seed=1, curve=list(points))
    curve = results.algorithms["agent"]["curve"]
    assert list(curve) == [str(f) for f in points]

    matrix = np.empty((5, len(games), len(points)))  # rliable's (runs, tasks, points)
    for j, game in enumerate(games):
        constants = spec.constants[game]
        for run in range(5):
            for k, frames in enumerate(points):
                mean = returns[game, run][: frames // 100_000].mean()
                matrix[run, j, k] = normalise(mean, constants.random, constants.human)
    state = np.random.get_state()
    np.random.seed(0)
    try:
        theirs_points, theirs = rly_library.get_interval_estimates(
            {"agent": matrix},
            lambda s: np.array([rly_metrics.aggregate_iqm(s[..., k]) for k in range(3)]),
            reps=2000,
        )
    finally:
        np.random.set_state(state)
    for k, frames in enumerate(points):
        aggregates = curve[str(frames)]["aggregates"]
        assert aggregates["hns"]["iqm"] == pytest.approx(theirs_points["agent"][k], abs=1e-9)
        low, high = theirs["agent"][:, k]
        ours = np.array(aggregates["ci"]["hns"]["iqm"])
        assert (np.abs(ours - [low, high]) < 0.1 * (high - low)).all(), (frames, ours, low, high)
