"""One subset, fitted directly: :class:`SubsetFit` and :func:`fit_subset`, with its k-fold figures.

Also the cross-validation plan the search shares: the authors' folds (scikit-learn's ``KFold`` with
shuffling, ``_fold_ids``) and the checks of ``folds`` and ``seed``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.scoring.normalise import log_normalise, subset_estimate
from arcadebench.benchmarks.subset.dataset import SubsetData
from arcadebench.errors import SubsetError
from arcadebench.specs.names import name_key

__all__ = [
    "DEFAULT_SEED",
    "SubsetFit",
    "fit_subset",
]

#: The authors' cross-validation seed, as in ``KFold(10, shuffle=True, random_state=1982)``.
DEFAULT_SEED = 1982


@dataclass(frozen=True)
class SubsetFit:
    """A fitted subset model: log10(1 + Phi) ~ c + sum_g w_g log10(1 + s_g) (Eq. 1 on Eq. 3).

    ``cv_*`` figures are the k-fold cross-validated ones the paper reports in Table 2 (mean of
    the per-fold errors, as scikit-learn's ``cross_val_score``); the others are in-sample. The
    relative errors are ln(10) x the mean absolute log10 error, in percent (Appendix G).

    Attributes:
        games: the subset, in the order of ``coefficients``.
        coefficients: the weights w_g (Table 9).
        intercept: c, or ``None`` for the paper's no-intercept models (Section 4.3, footnote 6).
        n_algorithms: algorithms with all of the subset's games (the rows of this fit).
        mse: in-sample mean squared error in log space.
        r2: in-sample R^2 = 1 - SSE / sum (y - mean y)^2 (Section 5.1, Figure 2).
        relative_error: in-sample ln(10) x mean abs(residual), percent.
        cv_mse: k-fold mean of the per-fold test MSE: the ranking criterion (Section 4.3).
        cv_r2: 1 - cv_mse / var(y) (Table 2).
        cv_relative_error: ln(10) x mean of the per-fold mean abs(residual), percent (Table 2).
        name: e.g. ``"Atari-5"``, when part of a named selection.
    """

    games: tuple[str, ...]
    coefficients: tuple[float, ...]
    intercept: float | None
    n_algorithms: int
    mse: float
    r2: float
    relative_error: float
    cv_mse: float
    cv_r2: float
    cv_relative_error: float
    name: str | None = None

    def renamed(self, name: str) -> SubsetFit:
        """This fit under another name."""
        return dataclasses.replace(self, name=name)

    def estimate(self, scores: Mapping[str, float]) -> float:
        """The estimated target (e.g. 57-game median HNS) from normalised ``scores`` (Eqs. 10-11).

        Raises:
            SubsetError: a game of the subset is missing from ``scores``.
        """
        values = _lookup_scores(scores, self.games)
        return float(
            subset_estimate(log_normalise(values), self.coefficients, self.intercept or 0.0)
        )


def _lookup_scores(scores: Mapping[str, float], games: Sequence[str]) -> NDArray[np.float64]:
    by_key = {name_key(k): v for k, v in scores.items()}
    missing = [g for g in games if name_key(g) not in by_key]
    if missing:
        raise SubsetError(f"`scores` must have a score for every input game, missing {missing!r}")
    return np.array([float(by_key[name_key(g)]) for g in games])


@functools.lru_cache(maxsize=512)
def _fold_ids(n: int, folds: int, seed: int) -> NDArray[np.intp]:
    """Fold of each of ``n`` rows: scikit-learn's ``KFold(folds, shuffle=True, random_state=seed)``.

    The rows are permuted by ``np.random.RandomState(seed).shuffle`` (the legacy generator, for
    the authors' folds), then cut into consecutive folds, the first ``n % folds`` one row larger.
    """
    order = np.arange(n)
    np.random.RandomState(seed).shuffle(order)
    sizes = np.full(folds, n // folds)
    sizes[: n % folds] += 1
    ids = np.empty(n, dtype=np.intp)
    ids[order] = np.repeat(np.arange(folds), sizes)
    ids.setflags(write=False)
    return ids


def _check_cv(folds: int, seed: int) -> None:
    if not isinstance(folds, int) or isinstance(folds, bool) or folds < 2:
        raise SubsetError(f"`folds` must be an integer >= 2, got {folds!r}")
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise SubsetError(f"`seed` must be an integer in [0, 2**32), got {seed!r}")


def fit_subset(
    data: SubsetData,
    games: Sequence[str],
    intercept: bool = False,
    folds: int = 10,
    seed: int = DEFAULT_SEED,
    name: str | None = None,
) -> SubsetFit:
    """Fit one subset directly (Algorithm 1 lines 12-17, one iteration) with its k-fold figures.

    Rows are the algorithms with scores for all of ``games`` ("any algorithm missing a score for
    a required game was excluded for that subset", Section 4.1). Any game of the table may be
    used, candidate or not (e.g. Section 5.1's single-game fits cover Surround).

    Example:
        Section 5.1: Name This Game alone, with an intercept, is close to the identity.

        >>> from arcadebench.benchmarks.subset import prepare, read_scores
        >>> data = prepare(read_scores("atari5-dataset"))
        >>> fit = fit_subset(data, ["Name This Game"], intercept=True)
        >>> round(fit.intercept, 2), round(fit.coefficients[0], 2)
        (-0.03, 1.01)

    Raises:
        UnknownGame: a game not in the table.
        SubsetError: fewer than max(folds, parameters + 1) algorithms have all the games.
    """
    _check_cv(folds, seed)
    resolved = data.resolve(games)
    if not resolved:
        raise SubsetError("`games` must name at least one game, got []")
    cols = [data.table.games.index(g) for g in resolved]
    x = data.x[:, cols]
    rows = ~np.isnan(x).any(axis=1)
    x, y = x[rows], data.y[rows]
    if intercept:
        x = np.column_stack([x, np.ones(len(x))])
    n, q = x.shape
    if n < max(folds, q + 1):
        raise SubsetError(
            f"only {n} algorithms have scores for all of {', '.join(resolved)}; a "
            f"{folds}-fold fit of {q} parameters needs at least {max(folds, q + 1)}"
        )
    beta = np.linalg.lstsq(x, y, rcond=None)[0]
    residual = y - x @ beta
    ids = _fold_ids(n, folds, seed)
    fold_mse, fold_mae = [], []
    for f in range(folds):
        test = ids == f
        b = np.linalg.lstsq(x[~test], y[~test], rcond=None)[0]
        r = y[test] - x[test] @ b
        fold_mse.append(np.mean(r**2))
        fold_mae.append(np.mean(np.abs(r)))
    variance = float(np.var(y))
    mse = float(np.mean(residual**2))
    cv_mse = float(np.mean(fold_mse))
    return SubsetFit(
        games=resolved,
        coefficients=tuple(float(c) for c in (beta[:-1] if intercept else beta)),
        intercept=float(beta[-1]) if intercept else None,
        n_algorithms=n,
        mse=mse,
        r2=1.0 - mse / variance if variance > 0 else math.nan,
        relative_error=100.0 * math.log(10) * float(np.mean(np.abs(residual))),
        cv_mse=cv_mse,
        cv_r2=1.0 - cv_mse / variance if variance > 0 else math.nan,
        cv_relative_error=100.0 * math.log(10) * float(np.mean(fold_mae)),
        name=name,
    )
