"""The statistics registry: one entry and one function per statistic, read by every consumer."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing

import numpy as np
import pytest

import arcadebench
from arcadebench.benchmarks.report.report_data import stat_label
from arcadebench.benchmarks.report.sources import load_report_data
from arcadebench.benchmarks.scoring import metrics
from arcadebench.errors import SpecError
from arcadebench.specs import parse_spec, statistics
from arcadebench.specs.diff import diff
from arcadebench.specs.model import Scoring, Split
from arcadebench.specs.statistics import SPLITS, STATISTICS, Statistic


def test_every_statistic_has_one_function_and_every_function_a_statistic():
    assert list(metrics.AGGREGATES) == list(STATISTICS)
    for key, statistic in STATISTICS.items():
        assert statistic.key == key
        fields = {f.name for f in dataclasses.fields(Scoring)}
        assert set(statistic.arguments) <= fields, key
        # the scorer calls it with the scores, then the spec's settings its entry names
        settings = [getattr(Scoring(), name) for name in statistic.arguments]
        inspect.signature(metrics.AGGREGATES[key]).bind(np.zeros((1, 1)), *settings)


def test_the_splits_are_raw_scores_over_every_game_then_over_each_split_of_the_levels():
    assert all(split.key == key for key, split in SPLITS.items())
    assert [s.levels for s in SPLITS.values()] == [None, *typing.get_args(Split)]


def test_the_registries_are_read_only():
    with pytest.raises(TypeError):
        STATISTICS["x"] = STATISTICS["mean"]
    with pytest.raises(TypeError):
        metrics.AGGREGATES["x"] = metrics.aggregate_mean
    with pytest.raises(dataclasses.FrozenInstanceError):
        STATISTICS["mean"].direction = -1


# -- a statistic registered in one place reaches every consumer -----------------------------------


def _trimmed_mean(scores: np.ndarray) -> np.ndarray:
    """The 20 % trimmed mean of all (run, game) scores pooled: floor(n / 5) cut at each end."""
    scores = np.asarray(scores, dtype=np.float64)
    pooled = np.sort(scores.reshape(*scores.shape[:-2], -1), axis=-1)
    cut = pooled.shape[-1] // 5
    return pooled[..., cut : pooled.shape[-1] - cut].mean(axis=-1)


def _game_gap(scores: np.ndarray, threshold: float) -> np.ndarray:
    """How far below ``threshold`` the game means fall on average (lower is better)."""
    return threshold - np.minimum(metrics.game_means(scores), threshold).mean(axis=-1)


@pytest.fixture
def registered(monkeypatch):
    """Two new statistics, each added as a developer adds one: its entry and its function."""
    new = {
        "trimmed_mean": (Statistic("trimmed_mean", "20 % trimmed mean", "runs"), _trimmed_mean),
        "game_gap": (
            Statistic(
                "game_gap",
                "gap of the game means",
                "games",
                direction=-1,
                level=False,
                arguments=("optimality_gap_threshold",),
            ),
            _game_gap,
        ),
    }
    for key, (statistic, function) in new.items():
        monkeypatch.setitem(statistics._STATISTICS, key, statistic)
        monkeypatch.setitem(metrics._AGGREGATES, key, function)


SPEC = """
name: stats
id_prefix: Stats
title: Registered statistics
version: 1
citation: A test.
platform: none
constants:
  columns: [random, human]
  rows: {a: [0, 100], b: [0, 100], c: [0, 100]}
scoring:
  normalised: {hns: {reference: human}}
  aggregates: [mean, trimmed_mean, game_gap]
  optimality_gap_threshold: 50
  learning_efficiency: true
published:
  source: Table 1
  columns: [hns.trimmed_mean, hns.game_gap]
  rows: {printed: [44.0, 6.0]}
"""

# HNS = the raw score (random 0, human 100). x: game means 20, 50, 150; y: 45 on every game.
RUNS = {
    "x": {"a": [10, 20, 30], "b": [40, 50, 60], "c": [70, 80, 300]},
    "y": {"a": [45, 45, 45], "b": [45, 45, 45], "c": [45, 45, 45]},
}


def _csv(path):
    lines = ["algorithm,game,run,score,frames"]
    for name, games in RUNS.items():
        for game, runs in games.items():
            lines += [f"{name},{game},{i},{score},1000000" for i, score in enumerate(runs)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_spec_may_name_only_registered_statistics():
    with pytest.raises(SpecError, match="trimmed_mean"):
        parse_spec(SPEC)


def test_a_registered_statistic_reaches_the_loader_the_results_and_the_tables(registered, tmp_path):
    spec = parse_spec(SPEC)
    assert spec.scoring.aggregates == ("mean", "trimmed_mean", "game_gap")
    assert spec.published[0].paths == (("hns", "trimmed_mean"), ("hns", "game_gap"))
    assert diff(spec, arcadebench.load_spec("sonic")).row("optimality gap threshold").a == "50 %"

    results = arcadebench.score(spec, _csv(tmp_path / "scores.csv"), reps=100)
    x, y = (results.algorithms[n]["aggregates"] for n in ("x", "y"))
    # x pooled: 10 20 30 40 50 60 70 80 300, one cut at each end: 350 / 7; y: all 45
    assert x["hns"]["trimmed_mean"] == pytest.approx(50.0)
    assert y["hns"]["trimmed_mean"] == pytest.approx(45.0)
    # the spec's threshold, 50: x's game means 20, 50, 150 -> 50 - (20 + 50 + 50) / 3
    assert x["hns"]["game_gap"] == pytest.approx(10.0)
    assert y["hns"]["game_gap"] == pytest.approx(5.0)
    assert set(x["ci"]["hns"]) == {"mean", "trimmed_mean", "game_gap"}
    # HWR Eq. 7 divides a level of the score by the frames, never a gap
    assert x["learning_efficiency"]["hns"] == {
        "mean": pytest.approx(220 / 3 / 100 / 1e6),
        "trimmed_mean": pytest.approx(50 / 100 / 1e6),
    }

    markdown = results.to_markdown()
    rows = {
        line.split(" | ")[0].strip("| "): line.split(" | ")[1:]
        for line in markdown.splitlines()
        if line.startswith("| HNS ")
    }
    # higher is better for the trimmed mean (x's), lower for the gap (y's)
    trimmed, gap = rows["HNS 20 % trimmed mean (%)"], rows["HNS gap of the game means (%)"]
    assert trimmed[0].startswith("**50.0**") and trimmed[1].startswith("45.0")
    assert gap[0].startswith("10.0") and gap[1].startswith("**5.0**")
    assert (
        "Bold: the best of each row (the lowest gap of the game means) among the columns over "
        "the same games." in markdown  # the printed row is over its paper's games
    )
    assert (
        "the mean and gap of the game means over games of each game's mean over runs, "
        "the 20 % trimmed mean over all runs" in markdown
    )
    assert "HNS 20 % trimmed mean per frame" in markdown
    assert "gap of the game means per frame" not in markdown
    stacked = r"(\\begin\{tabular\}\[t\]\{@\{\}r@\{\}\})?"  # its interval under it
    assert re.search(
        rf"HNS 20 \\% trimmed mean \(\\%\) & {stacked}\\textbf\{{50\.0\}}", results.to_latex()
    )

    assert stat_label("hns", "game_gap") == "HNS gap of the game means"


def test_a_registered_statistic_is_drawn_by_its_units(registered, tmp_path):
    pytest.importorskip("matplotlib")
    from arcadebench.benchmarks.report.figures import aggregates_figure

    spec = parse_spec(SPEC)
    results = arcadebench.score(spec, _csv(tmp_path / "scores.csv"), reps=0)
    figure = aggregates_figure(load_report_data([results], spec=spec, reps=0))
    panels = {ax.get_title(): ax for ax in figure.axes if ax.get_visible()}
    assert set(panels) == {"HNS mean", "HNS 20 % trimmed mean", "HNS gap of the game means"}

    def marks_100(ax) -> bool:
        return any(list(line.get_xdata()) == [100.0, 100.0] for line in ax.get_lines())

    # a level of the score is drawn against the 100 % reference; a gap below a threshold is not
    assert marks_100(panels["HNS 20 % trimmed mean"])
    assert not marks_100(panels["HNS gap of the game means"])
