"""Representative benchmark subsets: the Atari-5 method (Algorithm 1, BEST_SUBSET) for any suite.

Aitchison, Sweetser & Hutter (ICML 2023) predict a target summary score — log10(1 + the 57-game
median HNS) — from the log-normalised scores (Eq. 3) of a few games, by least squares without
intercept and with non-negative weights (Proposition 2: such a score is weakly order-preserving),
choosing the games by 10-fold cross-validated error (Sections 3.3 and 4.3). This package
reproduces that procedure on the authors' data set (shipped as ``atari5-dataset``) and applies it
to any suite whose per-task scores are in a long table.

The pipeline, one module per step::

    table.read_scores (CSV: algorithm, game, score)  ->  data.prepare (Section 4.1 filters, target)
      ->  search.best_subsets / search.nested_selection (Algorithm 1, Section 4.3)
          (each subset fitted by fit.fit_subset)
      ->  predictions.fit_predictions (Section 4.4, Tables 10-11)
      ->  export.to_yaml (an ``atari5.yaml`` fragment)

The search scores every subset of a size at once: the Gram matrices of all subsets that share the
same algorithms with complete data are slices of one matrix per such "mask", so all C(n, k) fits
are batched normal equations; subsets with a negative weight are dropped before the k-fold
cross-validation, which uses the same per-mask, per-fold statistics.

Classes: ScoreTable, SubsetData, SubsetFit, SubsetSearch, GameModel, PredictionFit, and
SubsetError (defined in :mod:`arcadebench.errors`). The names of ``__all__`` are imported from
here, as are ``DEFAULT_SEED``, ``DEFAULT_MIN_GAMES``, ``DEFAULT_MAX_SUBSETS`` and ``Target``.

Example:
    The Atari-1 model of Table 9 and its Table 2 figures, refitted from the authors' data:

    >>> data = prepare(read_scores("atari5-dataset"))
    >>> fit = fit_subset(data, ["name_this_game"])
    >>> round(fit.coefficients[0], 4), round(fit.cv_r2, 3), round(fit.cv_relative_error, 1)
    (0.9976, 0.864, 27.4)
"""

from __future__ import annotations

from arcadebench.benchmarks.subset.dataset import DEFAULT_MIN_GAMES as DEFAULT_MIN_GAMES
from arcadebench.benchmarks.subset.dataset import SubsetData, prepare
from arcadebench.benchmarks.subset.export import to_yaml
from arcadebench.benchmarks.subset.fit import DEFAULT_SEED as DEFAULT_SEED
from arcadebench.benchmarks.subset.fit import SubsetFit, fit_subset
from arcadebench.benchmarks.subset.predictions import (
    GameModel,
    PredictionFit,
    fit_predictions,
    predict_scores,
)
from arcadebench.benchmarks.subset.score_table import ATARI5_DATASET, ScoreTable, read_scores
from arcadebench.benchmarks.subset.score_table import Target as Target
from arcadebench.benchmarks.subset.search import DEFAULT_MAX_SUBSETS as DEFAULT_MAX_SUBSETS
from arcadebench.benchmarks.subset.search import (
    SubsetSearch,
    best_subsets,
    nested_selection,
)
from arcadebench.errors import SubsetError

__all__ = [
    "ATARI5_DATASET",
    "GameModel",
    "PredictionFit",
    "ScoreTable",
    "SubsetData",
    "SubsetError",
    "SubsetFit",
    "SubsetSearch",
    "best_subsets",
    "fit_predictions",
    "fit_subset",
    "nested_selection",
    "predict_scores",
    "prepare",
    "read_scores",
    "to_yaml",
]
