"""Per-game prediction models (Section 4.4, Tables 10-11): every game's score from a subset's.

:func:`fit_predictions` fits each game's log-normalised score on the subset's ones
(:class:`GameModel`, one row of Table 10 or 11; :class:`PredictionFit` holds one subset's models)
and :func:`predict_scores` applies such models (Eqs. 10-11).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from arcadebench.benchmarks.scoring.normalise import log_normalise, subset_estimate
from arcadebench.benchmarks.subset.dataset import SubsetData
from arcadebench.benchmarks.subset.fit import SubsetFit, _lookup_scores
from arcadebench.errors import SubsetError

__all__ = [
    "GameModel",
    "PredictionFit",
    "fit_predictions",
    "predict_scores",
]


@dataclass(frozen=True)
class GameModel:
    """log10(1 + s_game) ~ c + sum_i x_i log10(1 + s_i): one row of Table 10 or 11.

    Attributes:
        game: the predicted game.
        coefficients: ``(c, x_1, ..., x_n)`` in the order of the inputs (the table's columns).
        r2: in-sample R^2 of the fit (Figure 4); 1 for the input games themselves.
        n_algorithms: algorithms with scores for the game and every input.
    """

    game: str
    coefficients: tuple[float, ...]
    r2: float
    n_algorithms: int


@dataclass(frozen=True)
class PredictionFit:
    """Per-game models from one subset's scores (Section 4.4).

    Attributes:
        name: the subset's name (e.g. ``"Atari-5"``).
        inputs: the subset's games, in coefficient order.
        models: ``game -> GameModel`` for every game with enough data.
        explained_variance: 1 - sum of squared residuals / sum of squares about each game's mean,
            pooled over all modelled games, inputs included: Section 5.5's share of "the variance
            in log-scores within the dataset" (71.5% for Atari-5, 80.0% for Atari-10).
        source: where the models were fitted (the score table).
    """

    name: str
    inputs: tuple[str, ...]
    models: Mapping[str, GameModel]
    explained_variance: float = math.nan
    source: str = ""

    def predict(self, scores: Mapping[str, float]) -> dict[str, float]:
        """Each game's predicted normalised score from the inputs' ``scores`` (Eq. 11)."""
        return predict_scores(self, scores)


def fit_predictions(
    data: SubsetData, inputs: Sequence[str] | SubsetFit, name: str | None = None
) -> PredictionFit:
    """Fit each game's log-normalised score from the ``inputs``' ones, with intercept (Section 4.4).

    Each game's model uses the algorithms (after the Section 4.1 algorithm filter) with scores for
    the game and all inputs; an input game's model is the identity (Tables 10-11 rows with a 1).
    Games with fewer than ``len(inputs) + 2`` such algorithms get no model.

    Args:
        data: from :func:`prepare`.
        inputs: the subset's games, or a fit (its games and name are used).
        name: the models' name (default: the fit's name, or the games joined by ``+``).
    """
    if isinstance(inputs, SubsetFit):
        name = name or inputs.name
        inputs = inputs.games
    games = data.resolve(inputs, "input game")
    if not games:
        raise SubsetError("`inputs` must name at least one game, got []")
    name = name or "+".join(games)
    columns = [data.table.games.index(g) for g in games]
    x_in = data.x[:, columns]
    models: dict[str, GameModel] = {}
    total_sse = total_ss = 0.0
    for j, game in enumerate(data.table.games):
        target = data.x[:, j]
        rows = ~np.isnan(x_in).any(axis=1) & ~np.isnan(target)
        n = int(rows.sum())
        if game in games:
            k = games.index(game)
            coefficients = (0.0, *(1.0 if i == k else 0.0 for i in range(len(games))))
            models[game] = GameModel(game, coefficients, 1.0, n)
            total_ss += float(np.sum((target[rows] - target[rows].mean()) ** 2)) if n else 0.0
            continue
        if n < len(games) + 2:
            continue
        design = np.column_stack([np.ones(n), x_in[rows]])
        beta = np.linalg.lstsq(design, target[rows], rcond=None)[0]
        sse = float(np.sum((target[rows] - design @ beta) ** 2))
        ss = float(np.sum((target[rows] - target[rows].mean()) ** 2))
        total_sse, total_ss = total_sse + sse, total_ss + ss
        models[game] = GameModel(
            game, tuple(float(b) for b in beta), 1.0 - sse / ss if ss > 0 else math.nan, n
        )
    explained = 1.0 - total_sse / total_ss if total_ss > 0 else math.nan
    return PredictionFit(name, games, MappingProxyType(models), explained, data.table.source)


def predict_scores(models: Any, scores: Mapping[str, float]) -> dict[str, float]:
    """Apply per-game models to the inputs' normalised scores (Appendix E, Eqs. 10-11).

    Args:
        models: a :class:`PredictionFit`, or a spec's ``PredictionModels`` (e.g.
            ``load_spec("atari5").predictions["Atari-5"]``, Table 10).
        scores: normalised scores of the input games (any spelling of their names).

    Returns:
        ``game -> predicted normalised score`` for every modelled game.

    Example:
        >>> from arcadebench import load_spec
        >>> table_10 = load_spec("atari5").predictions["Atari-5"]
        >>> hns = dict.fromkeys(table_10.inputs, 100.0)
        >>> round(predict_scores(table_10, hns)["battle_zone"], 6)
        100.0
    """
    inputs = tuple(models.inputs)
    phi = log_normalise(_lookup_scores(scores, inputs))
    out = {}
    for game, model in models.models.items():
        coefficients = model.coefficients if isinstance(model, GameModel) else model
        out[game] = float(subset_estimate(phi, coefficients[1:], coefficients[0]))
    return out
