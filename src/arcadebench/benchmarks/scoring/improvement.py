"""The probability of improvement between two algorithms of one protocol, as results carry it.

Agarwal et al. (2021, "Deep RL at the Edge of the Statistical Precipice", Section 4) recommend
reporting, beside aggregate scores, P(X > Y): the probability that algorithm X beats Y on a game
drawn at random from the suite, each game's P(X_g > Y_g) being the Mann-Whitney U statistic of
X's runs over Y's divided by the number of pairs
(:func:`~arcadebench.benchmarks.scoring.metrics.game_improvement`), with a stratified bootstrap
interval that resamples each algorithm's runs independently
(:func:`~arcadebench.benchmarks.scoring.bootstrap.improvement_interval`). It answers "how often
is X better", where aggregates answer "by how much on average", and it cannot be dominated by a
few games with huge normalised scores.

The two algorithms are compared on the games both have (P is defined game by game), with the
per-run scores of one metric; since it compares runs within a game only, it is the same on raw
scores and on any uncapped normalised score. Results of two protocols never meet here:
:func:`arcadebench.score` compares the algorithms of one spec.

A comparison is the JSON object ``{"x", "y", "metric", "probability", "games": {game: P(X_g >
Y_g)}[, "ci": [low, high]]}``; ``P(Y > X) = 1 - P(X > Y)``.

Functions: comparison_pairs, compare_pair, comparison_seed.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.scoring.bootstrap import improvement_interval
from arcadebench.benchmarks.scoring.metrics import game_improvement
from arcadebench.errors import InvalidArgument, did_you_mean

__all__ = ["compare_pair", "comparison_pairs", "comparison_seed"]

_TAG = zlib.crc32(b"probability of improvement")

Labelled = tuple[str, Sequence[str], NDArray[np.float64]]
"""An algorithm's name, its games, and its ``(runs, games)`` per-run scores (``NaN`` padding)."""


def comparison_pairs(
    names: Sequence[str], requested: Sequence[tuple[str, str]] | None
) -> list[tuple[str, str]]:
    """The ``(X, Y)`` pairs to compare: the ones asked for, checked, or every pair in order.

    Example:
        >>> comparison_pairs(["a", "b", "c"], None)
        [('a', 'b'), ('a', 'c'), ('b', 'c')]
        >>> comparison_pairs(["a", "b"], [("b", "a")])
        [('b', 'a')]
    """
    if requested is None:
        return list(itertools.combinations(names, 2))
    pairs: list[tuple[str, str]] = []
    for x, y in requested:
        for name in (x, y):
            if name not in names:
                raise InvalidArgument(
                    f"`compare` must name algorithms of the results ({', '.join(names)}), got "
                    f"{name!r}.{did_you_mean(name, names)}"
                )
        if x == y:
            raise InvalidArgument(f"`compare` must pair two different algorithms, got {x!r} twice")
        pairs.append((x, y))
    return pairs


def comparison_seed(seed: int, x: str, y: str) -> np.random.SeedSequence:
    """The bootstrap stream of the comparison of ``x`` with ``y`` under a run's ``seed``.

    Its own stream per pair, so adding an algorithm changes no other interval, and the same
    in the scorer and the report, so both give the same interval for the same runs.
    """
    return np.random.SeedSequence(
        [seed, _TAG, zlib.crc32(x.encode("utf-8")), zlib.crc32(y.encode("utf-8"))]
    )


def compare_pair(
    x: Labelled,
    y: Labelled,
    *,
    metric: str,
    level: float = 0.95,
    reps: int = 2000,
    seed: int | np.random.SeedSequence = 0,
    required: bool = False,
) -> dict[str, Any] | None:
    """P(X > Y) on the games both algorithms have, per game and averaged, with its interval.

    The interval (stratified bootstrap, percentile method, rliable's semantics) is given when
    ``reps > 0`` and either algorithm has a game with two runs or more: with one run per game
    on both sides there is nothing to resample.

    Args:
        x: ``(name, games, scores)`` of X.
        y: the same of Y.
        metric: the score the matrices hold (``hns``...), recorded in the comparison.
        level: confidence level of the interval.
        reps: bootstrap repetitions; ``0``: no interval.
        seed: the bootstrap's seed.
        required: raise rather than return ``None`` when the two share no game.

    Returns:
        The comparison object (see the module docstring), ``None`` without a shared game.

    Raises:
        InvalidArgument: no shared game and ``required``.

    Example:
        >>> a = ("a", ["pong", "qbert"], np.array([[3.0, 1.0], [1.0, 2.0]]))
        >>> b = ("b", ["pong", "qbert"], np.array([[2.0, 2.0]]))
        >>> compare_pair(a, b, metric="raw", reps=0)
        {'x': 'a', 'y': 'b', 'metric': 'raw', 'probability': 0.375, 'games': {'pong': 0.5, 'qbert': 0.25}}
    """  # noqa: E501 - the doctest's output is one line
    x_name, x_games, x_scores = x
    y_name, y_games, y_scores = y
    column = {g: j for j, g in enumerate(y_games)}
    present_x = ~np.all(np.isnan(x_scores), axis=0) if x_scores.size else np.zeros(0, bool)
    present_y = ~np.all(np.isnan(y_scores), axis=0) if y_scores.size else np.zeros(0, bool)
    shared = [
        (i, column[g])
        for i, g in enumerate(x_games)
        if g in column and present_x[i] and present_y[column[g]]
    ]
    if not shared:
        if required:
            raise InvalidArgument(
                f"`compare` must pair algorithms that share a game with a {metric} score, got "
                f"{x_name!r} and {y_name!r}; P(X > Y) is defined game by game"
            )
        return None
    games = [x_games[i] for i, _ in shared]
    x_matrix = x_scores[:, [i for i, _ in shared]]
    y_matrix = y_scores[:, [j for _, j in shared]]
    per_game = game_improvement(x_matrix, y_matrix)
    out: dict[str, Any] = {
        "x": x_name,
        "y": y_name,
        "metric": metric,
        "probability": float(per_game.mean()),
        "games": {g: float(p) for g, p in zip(games, per_game, strict=True)},
    }
    most = max(
        int((~np.isnan(x_matrix)).sum(axis=0).max()), int((~np.isnan(y_matrix)).sum(axis=0).max())
    )
    if reps > 0 and most >= 2:
        rng = np.random.default_rng(seed)
        _, interval = improvement_interval(x_matrix, y_matrix, level=level, reps=reps, seed=rng)
        out["ci"] = [float(interval[0]), float(interval[1])]
    return out
