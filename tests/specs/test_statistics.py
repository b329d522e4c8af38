"""The statistics registry: one entry and one function per statistic, read by every consumer."""

from __future__ import annotations

import dataclasses
import inspect
import typing

import numpy as np
import pytest

from arcadebench.benchmarks.scoring import metrics
from arcadebench.specs.model import Scoring, Split
from arcadebench.specs.statistics import SPLITS, STATISTICS


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
