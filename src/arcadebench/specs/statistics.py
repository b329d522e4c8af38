"""The aggregate statistics and the raw-score splits that results are keyed by, each declared once.

A spec's ``scoring.aggregates`` names statistics (rliable's aggregates, Agarwal et al. 2021,
Section 4: the mean, median, IQM and optimality gap), and a result holds each statistic of each
of its metrics as ``aggregates.<metric>.<statistic>``, a metric being a normalised score or one
of the raw-score :data:`SPLITS`. Everything the package needs to know about a statistic besides
its function is one :class:`Statistic` (its attributes) in :data:`STATISTICS`. The
loader checks specs against it; the scorer, the paper tables and the report read it. The
functions are :data:`arcadebench.benchmarks.scoring.metrics.AGGREGATES`, keyed the same: the
scorer imports the specs, not the other way round, so the names live here.

Adding a statistic is a :class:`Statistic` here and its function in ``metrics.py``;
``tests/specs/test_statistics.py`` checks that both have the same keys, and that a statistic
registered there reaches the loader, the results and the tables.

Example:
    >>> STATISTICS["optimality_gap"].name, STATISTICS["optimality_gap"].direction
    ('optimality gap', -1)
    >>> [s.name for s in STATISTICS.values() if s.over == "runs"]
    ['IQM', 'optimality gap']
    >>> SPLITS["test"].name
    'test-level score'

Classes: Statistic, ScoreSplit. Data: STATISTICS, SPLITS.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from arcadebench.specs.model import Split

__all__ = ["SPLITS", "STATISTICS", "ScoreSplit", "Statistic"]


@dataclass(frozen=True)
class Statistic:
    """One aggregate statistic over a ``(runs, games)`` array of scores.

    Attributes:
        key: its name in a spec's ``scoring.aggregates``, in results and in
            :data:`~arcadebench.benchmarks.scoring.metrics.AGGREGATES` (``"iqm"``).
        name: its name in tables and figures (``"IQM"``).
        over: ``"games"``: of each game's mean over its runs (rliable's mean and median);
            ``"runs"``: of all (run, game) scores pooled (its IQM and optimality gap). The paper
            tables' note says which.
        direction: ``1`` where higher is better, ``-1`` where lower is: the tables bold the
            best of a row by it.
        level: a level of the score itself, one a game's score could have (a mean, a median):
            a figure draws it against the metric's 100 % mark and on a log axis when the scores
            span orders of magnitude, and the learning efficiency divides it by the training
            frames (HWR Eq. 7). ``False`` for a distance such as the optimality gap below its
            threshold, for which none of these means anything.
        arguments: the fields of the spec's :class:`~arcadebench.specs.model.Scoring` its
            function takes after the scores, in order (the optimality gap's threshold).
    """

    key: str
    name: str
    over: Literal["games", "runs"]
    direction: Literal[1, -1] = 1
    level: bool = True
    arguments: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoreSplit:
    """Raw scores a protocol without a normalised score aggregates (Sonic Section 3.9).

    Attributes:
        key: the metric's name in results (``"test"``).
        name: its name in tables and figures, units aside (``"test-level score"``).
        levels: the split of the spec's levels it is over; ``None``: every game.
    """

    key: str
    name: str
    levels: Split | None = None


_STATISTICS = {
    s.key: s
    for s in (
        Statistic("mean", "mean", "games"),
        Statistic("median", "median", "games"),
        Statistic("iqm", "IQM", "runs"),
        Statistic(
            "optimality_gap",
            "optimality gap",
            "runs",
            direction=-1,
            level=False,
            arguments=("optimality_gap_threshold",),
        ),
    )
}
STATISTICS: Mapping[str, Statistic] = MappingProxyType(_STATISTICS)
"""Every aggregate statistic a spec may name, by key, in the order tables list them."""

SPLITS: Mapping[str, ScoreSplit] = MappingProxyType(
    {
        s.key: s
        for s in (
            ScoreSplit("raw", "raw score"),
            ScoreSplit("train", "train-level score", "train"),
            ScoreSplit("test", "test-level score", "test"),
        )
    }
)
"""The raw-score metrics of results by key (every game, then each split of the levels)."""
