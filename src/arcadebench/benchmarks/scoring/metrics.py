"""Scoring as pure functions over one array contract: per-game scores, aggregates, estimates.

Every function takes score arrays of shape ``(..., runs, games)`` (rliable's
``(num_runs x num_tasks)`` contract, with any leading batch axes so the bootstrap can evaluate
thousands of resamples in one call) and does no I/O. ``NaN`` marks *no run*: a game with fewer
runs than the widest game is padded with ``NaN`` below its runs. Scores themselves are never
``NaN`` (inputs reject it); ``+inf`` is allowed (SABER's "infinite gameplay").

Conventions (the papers' own, checked against their published numbers; see ``data/README.md``):

- Normalised score = 100 (x - random) / abs(reference - random) (Atari-5 Eq. 2, HWR Eqs. 3-5,
  SABER Appendix D Eq. 1), computed by :func:`arcadebench.benchmarks.scoring.normalise.normalise`. A
  score equal to its reference is exactly 100 %.
- SABER = HWRNS capped **above** at 200 %, no lower clip (SABER Section 3.2: both papers'
  published means keep the negative per-game values); infinite gameplay contributes the cap.
- CHNS = clip(HNS, 0, 100) (Agent57; HWR "Capped Normalized Score").
- HWRB counts games with HWRNS >= 100 % (HWR: sum_g (HWRNS_g >= 1)); exact ties count.
- Classes of SABER Section 3.2: failing < 1, poor < 10, medium < 50, fair < 100, superhuman
  otherwise (so exactly 100 % is superhuman, consistent with HWRB).
- Aggregates follow rliable (Agarwal et al. 2021, ``rliable/metrics.py``): mean and median over
  the games of each game's mean over runs; IQM (25 % trimmed mean) and optimality gap over all
  (run, game) scores pooled. Games without a score are absent from the arrays (dropped, not
  zero-filled), as in both papers' tables. :data:`AGGREGATES` keys them by the statistics of
  :mod:`arcadebench.specs.statistics`, which declare everything else about each.
- The probability of improvement P(X > Y) is Agarwal et al.'s (2021, Section 4, rliable's
  ``probability_of_improvement``): per game the Mann-Whitney U statistic of X's runs over Y's
  divided by the number of pairs (ties count half), averaged over the games.

Functions: game_means, aggregate_mean, aggregate_median, aggregate_iqm,
aggregate_optimality_gap, game_improvement, probability_of_improvement, class_index,
class_histogram, breakthroughs, subset_score, predicted_scores, learning_efficiency,
game_time_days.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

import numpy as np
from numpy.typing import ArrayLike, NDArray

from arcadebench.benchmarks.scoring.normalise import log_normalise, subset_estimate
from arcadebench.errors import InvalidArgument

__all__ = [
    "AGGREGATES",
    "aggregate_iqm",
    "aggregate_mean",
    "aggregate_median",
    "aggregate_optimality_gap",
    "breakthroughs",
    "class_histogram",
    "class_index",
    "game_improvement",
    "game_means",
    "game_time_days",
    "learning_efficiency",
    "predicted_scores",
    "probability_of_improvement",
    "subset_score",
]

Array = NDArray[np.float64]
"""Scores as float64. A reduction to no axes gives a numpy float64 scalar, which numpy's stubs
type as ``Any``: the typed locals below (``result: Array = ...``) name what it is used as."""


def _scores(scores: ArrayLike, name: str = "scores") -> Array:
    """Check the ``(..., runs, games)`` contract at the boundary and return a float array."""
    array = np.asarray(scores, dtype=np.float64)
    if array.ndim < 2:
        raise InvalidArgument(
            f"`{name}` must be an array of shape (..., runs, games), got shape {array.shape}"
        )
    return array


def _present_mean(scores: Array, axis: int | tuple[int, int]) -> Array:
    """The mean over ``axis`` of the scores there, ``NaN`` padding left out."""
    missing = np.isnan(scores)
    if not missing.any():  # the common case, and every bootstrap batch of equal runs: no masks
        result: Array = scores.mean(axis=axis)
        return result
    count = (~missing).sum(axis=axis)
    total = np.where(missing, 0.0, scores).sum(axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        result = total / count
    return result


def _over_games(scores: ArrayLike, reduce: Callable[..., Array]) -> Array:
    """``reduce`` over the games of each game's mean over runs; ``NaN`` without a game."""
    means = game_means(scores)
    if means.shape[-1] == 0:
        return np.full(means.shape[:-1], np.nan)
    result: Array = reduce(means, axis=-1)
    return result


# -- per-game scores ------------------------------------------------------------------------------


def game_means(scores: ArrayLike) -> Array:
    """Each game's mean over its runs, ignoring ``NaN`` padding: shape ``(..., games)``.

    A game with no run at all gives ``NaN``.

    Example:
        >>> game_means([[1.0, 4.0], [3.0, float("nan")]]).tolist()
        [2.0, 4.0]
    """
    return _present_mean(_scores(scores), -2)


def aggregate_mean(scores: ArrayLike) -> Array:
    """Mean over games of the per-game mean over runs (rliable ``aggregate_mean``).

    Example:
        >>> float(aggregate_mean([[0.0, 10.0], [2.0, 20.0]]))
        8.0
    """
    return _over_games(scores, np.mean)


def aggregate_median(scores: ArrayLike) -> Array:
    """Median over games of the per-game mean over runs (rliable ``aggregate_median``).

    With an even number of games it is the midpoint of the two middle games (numpy/rliable).

    Example:
        >>> float(aggregate_median([[1.0, 5.0, 100.0, 3.0]]))
        4.0
    """
    return _over_games(scores, np.median)


def aggregate_iqm(scores: ArrayLike) -> Array:
    """Interquartile mean: the 25 % trimmed mean of all (run, game) scores pooled.

    Same trimming as rliable's ``aggregate_iqm`` (``scipy.stats.trim_mean(x, 0.25)``): with
    ``n`` scores, the ``floor(n / 4)`` lowest and highest are dropped (Agarwal et al. 2021,
    Section 4).

    Example:
        >>> float(aggregate_iqm([[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 100.0]]))
        4.5
    """
    scores = _scores(scores)
    ordered = np.sort(scores.reshape(*scores.shape[:-2], -1), axis=-1)  # NaN padding sorts last
    n = ordered.shape[-1]
    if n and not np.isnan(ordered[..., -1]).any():
        result: Array = ordered[..., n // 4 : n - n // 4].mean(axis=-1)
        return result
    count = (~np.isnan(ordered)).sum(axis=-1)
    cut = count // 4
    position = np.arange(ordered.shape[-1])
    keep = (position >= cut[..., None]) & (position < (count - cut)[..., None])
    with np.errstate(invalid="ignore", divide="ignore"):
        result = np.where(keep, ordered, 0.0).sum(axis=-1) / (count - 2 * cut)
    return result


def aggregate_optimality_gap(scores: ArrayLike, threshold: float = 100.0) -> Array:
    """How far below ``threshold`` scores fall on average: ``threshold - mean(min(s, threshold))``.

    Over all (run, game) scores pooled, as rliable's ``aggregate_optimality_gap`` (whose
    ``gamma=1`` is our 100 % for scores in percent).

    Example:
        >>> float(aggregate_optimality_gap([[50.0, 150.0], [100.0, 0.0]], threshold=100.0))
        37.5
    """
    return threshold - _present_mean(np.minimum(_scores(scores), threshold), (-2, -1))


# -- probability of improvement -------------------------------------------------------------------


def game_improvement(x: ArrayLike, y: ArrayLike) -> Array:
    """P(X_g > Y_g) of every game: how often a run of X beats a run of Y, ties counting half.

    The Mann-Whitney U statistic of X's runs over Y's on each game divided by the number of
    (run of X, run of Y) pairs, as rliable's ``probability_of_improvement`` computes it per task
    (``scipy.stats.mannwhitneyu(x, y).statistic / (n_x n_y)``; Agarwal et al. 2021, Section 4).
    ``x`` is ``(..., runs_x, games)`` and ``y`` ``(..., runs_y, games)`` with the same games in
    the same order; ``NaN`` padding is no run. Since P only compares runs within a game, it is
    the same on raw scores and on any normalised score that is not capped (a normalisation is
    increasing). Returns ``(..., games)``.

    Example:
        >>> game_improvement([[3.0, 1.0], [1.0, 2.0]], [[2.0, 2.0]]).tolist()
        [0.5, 0.25]
    """
    x = _scores(x, "x")
    y = _scores(y, "y")
    if x.shape[-1] != y.shape[-1]:
        raise InvalidArgument(
            f"`y` must have the games of `x` ({x.shape[-1]}), got {y.shape[-1]} games"
        )
    runs_x = (~np.isnan(x)).sum(axis=-2)
    runs_y = (~np.isnan(y)).sum(axis=-2)
    if (runs_x == 0).any() or (runs_y == 0).any():
        raise InvalidArgument(
            "`x` and `y` must have at least one run of every game; drop the games either lacks"
        )
    left, right = x[..., :, None, :], y[..., None, :, :]  # (..., runs_x, runs_y, games)
    wins = (left > right).sum(axis=(-3, -2)) + 0.5 * (left == right).sum(axis=(-3, -2))
    result: Array = wins / (runs_x * runs_y)
    return result


def probability_of_improvement(x: ArrayLike, y: ArrayLike) -> Array:
    """P(X > Y): the probability that X beats Y on a game drawn at random (Agarwal et al. 2021).

    The mean over games of :func:`game_improvement`, rliable's ``probability_of_improvement``;
    ``P(Y > X) = 1 - P(X > Y)`` exactly, ties counting half.

    Example:
        >>> float(probability_of_improvement([[3.0, 1.0], [1.0, 2.0]], [[2.0, 2.0]]))
        0.375
    """
    result: Array = game_improvement(x, y).mean(axis=-1)
    return result


_AGGREGATES: dict[str, Callable[..., Array]] = {
    "mean": aggregate_mean,
    "median": aggregate_median,
    "iqm": aggregate_iqm,
    "optimality_gap": aggregate_optimality_gap,
}
AGGREGATES: Mapping[str, Callable[..., Array]] = MappingProxyType(_AGGREGATES)
"""The aggregate functions by the keys of :data:`arcadebench.specs.statistics.STATISTICS`.

Each is called with the scores, then the spec's settings its statistic's ``arguments`` name
(the optimality gap: its threshold); everything else about a statistic (its printed name, its
direction, its units) is its :class:`~arcadebench.specs.statistics.Statistic` there.
"""


# -- classes and counts ---------------------------------------------------------------------------


def class_index(values: ArrayLike, classes: Sequence[tuple[str, float | None]]) -> NDArray[np.intp]:
    """Index of each value's class; ``classes`` are ``(label, exclusive upper bound)`` pairs.

    The last class has no bound (``None``). SABER Section 3.2: failing (< 1 %), poor (< 10 %),
    medium (< 50 %), fair (< 100 %), superhuman (>= 100 %). A value equal to a bound belongs to
    the class above it.

    Example:
        >>> bins = [("failing", 1), ("poor", 10), ("superhuman", None)]
        >>> class_index([0.5, 1.0, 10.0, float("inf")], bins).tolist()
        [0, 1, 2, 2]
    """
    bounds = np.asarray([b for _, b in classes if b is not None], dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    if np.isnan(values).any():
        raise InvalidArgument("`values` must not contain NaN (drop games without a score first)")
    return np.searchsorted(bounds, values, side="right")


def class_histogram(
    values: ArrayLike, classes: Sequence[tuple[str, float | None]]
) -> dict[str, int]:
    """Number of games in each class (every class present, zero included), SABER Figure 4.

    Example:
        >>> class_histogram([0.0, 5.0, 100.0], [("failing", 1), ("poor", 10), ("superhuman", None)])
        {'failing': 1, 'poor': 1, 'superhuman': 1}
    """
    counts = np.bincount(class_index(values, classes), minlength=len(classes))
    return {label: int(n) for (label, _), n in zip(classes, counts, strict=True)}


def breakthroughs(values: ArrayLike, threshold: float = 100.0) -> int:
    """Number of games whose score is at least ``threshold`` (HWRB: HWRNS >= 100 %, HWR paper).

    Example:
        >>> breakthroughs([99.9, 100.0, float("inf")])
        2
    """
    values = np.asarray(values, dtype=np.float64)
    return int(np.count_nonzero(values >= threshold))


# -- Atari-5 ---------------------------------------------------------------------------------------


def subset_score(hns: ArrayLike, coefficients: Sequence[float]) -> Array:
    """Atari-X estimate of the 57-game median HNS: 10^(sum_g c_g log10(1 + max(0, HNS_g))) - 1.

    Atari-5 Eq. 3 and Appendix E with the Table 9 coefficients (no intercept); ``hns`` has the
    subset's games on its last axis in the order of ``coefficients``.

    Example:
        >>> round(float(subset_score([99.0, 99.0], [0.5, 0.5])), 6)
        99.0
    """
    return subset_estimate(log_normalise(hns), coefficients)


def predicted_scores(inputs: ArrayLike, models: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Predicted HNS of every modelled game from the subset's HNS (Atari-5 Tables 10-11).

    ``models[game] = (c, x_1, ..., x_n)``: log10(1 + s) = c + sum_i x_i log10(1 + max(0, s_i))
    (Eqs. 10-11), with ``inputs`` the HNS of the model's input games in order.

    Example:
        >>> predicted_scores([99.0], {"pong": (0.0, 1.0)})
        {'pong': 99.0}
    """
    logs = log_normalise(inputs)
    return {
        game: float(subset_estimate(logs, coefs[1:], intercept=coefs[0]))
        for game, coefs in models.items()
    }


# -- learning efficiency (HWR paper) ---------------------------------------------------------------


def learning_efficiency(percent: ArrayLike, frames: ArrayLike) -> Array:
    """An aggregate per training frame, the aggregate taken as a fraction (HWR Eq. 7).

    ``percent`` is a normalised aggregate in percent (e.g. mean HNS); Eq. 7 divides it as a
    fraction: HWR Table 3 prints Rainbow's mean HNS of 873.97 % at 200M frames as 4.37E-08.

    Example:
        >>> f"{float(learning_efficiency(873.97, 2e8)):.2E}"
        '4.37E-08'
    """
    budget = np.asarray(frames, dtype=np.float64)
    if np.any(budget <= 0):
        raise InvalidArgument(f"`frames` must be positive, got {budget.tolist()!r}")
    result: Array = np.asarray(percent, dtype=np.float64) / 100.0 / budget
    return result


def game_time_days(frames: ArrayLike, frames_per_day: float) -> Array:
    """Real-time game play of ``frames`` in days: frames / (108,000 x 2 x 24) (HWR Eq. 6).

    Example:
        >>> round(float(game_time_days(200_000_000, 5_184_000)), 1)
        38.6
    """
    if frames_per_day <= 0:
        raise InvalidArgument(f"`frames_per_day` must be positive, got {frames_per_day!r}")
    return np.asarray(frames, dtype=np.float64) / frames_per_day
