"""Per-game normalisation and the Atari-5 log transform: the formulas every score is built from.

Pure numpy functions over arrays of any shape, so scoring, bootstrapping and the subset search
share one implementation of each formula; and which of a spec's normalised scores its results
lead with (:func:`headline_metric`).

Example:
    >>> float(normalise(50.0, random=0.0, reference=200.0))
    25.0
    >>> float(normalise(float("inf"), random=0.0, reference=200.0, cap=200.0))
    200.0
    >>> round(float(subset_estimate(log_normalise([100.0, 100.0]), [0.5, 0.5])), 6)
    100.0
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from arcadebench.specs import Spec

__all__ = [
    "headline_metric",
    "inverse_log_normalise",
    "log_normalise",
    "normalise",
    "subset_estimate",
]


def normalise(
    raw: ArrayLike,
    random: ArrayLike,
    reference: ArrayLike,
    floor: float | None = None,
    cap: float | None = None,
) -> NDArray[np.float64]:
    """100 (raw - random) / abs(reference - random), then clipped to [floor, cap] where given.

    This is HNS with ``reference = human`` (Atari-5 Eq. 2; HWR Eq. 4), HWRNS with
    ``reference = world_record`` (SABER Appendix D Eq. 1; HWR Eq. 5), SABER with ``cap=200``
    (SABER Section 3.2) and CHNS with ``floor=0, cap=100`` (Agent57). The absolute value is
    SABER's; for every shipped constant the reference exceeds the random score, so HNS is unchanged.
    Infinite raw scores ("infinite gameplay", SABER Table 6) stay infinite unless capped.

    The ratio is taken before the factor 100, so a score equal to its reference is exactly 100 %
    (``100 * (w - r) / |w - r|`` can land one ulp below, e.g. for SABER's Pong record), and
    record-equalling games count as breakthroughs, as the papers count them.

    Example:
        >>> float(normalise(21.0, random=-20.34, reference=21.0))
        100.0
    """
    raw = np.asarray(raw, dtype=np.float64)
    random = np.asarray(random, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        score: NDArray[np.float64] = 100.0 * ((raw - random) / np.abs(reference - random))
    if floor is not None or cap is not None:
        score = np.clip(
            score, floor if floor is not None else -np.inf, cap if cap is not None else np.inf
        )
    return score


def log_normalise(score: ArrayLike) -> NDArray[np.float64]:
    """phi(x) = log10(1 + max(0, x)) of normalised scores in percent (Atari-5 Eq. 3)."""
    return np.log10(1.0 + np.maximum(0.0, np.asarray(score, dtype=np.float64)))


def inverse_log_normalise(value: ArrayLike) -> NDArray[np.float64]:
    """phi^-1(x) = 10^x - 1 (Atari-5 Eq. 4)."""
    return np.power(10.0, np.asarray(value, dtype=np.float64)) - 1.0


def subset_estimate(
    log_scores: ArrayLike, coefficients: Sequence[float], intercept: float = 0.0
) -> NDArray[np.float64]:
    """10^(c + sum_i x_i phi(s_i)) - 1 over the last axis (Atari-5 Appendix E, Eqs. 10-11).

    With the Table 9 coefficients and no intercept this is the Atari-X estimate of the 57-game
    median HNS; with a Table 10/11 row it is the predicted normalised score of one game.
    """
    scores = np.asarray(log_scores, dtype=np.float64)
    weights = np.asarray(coefficients, dtype=np.float64)
    if scores.shape[-1] != weights.shape[0]:
        raise ValueError(
            f"`log_scores` must have {weights.shape[0]} scores on its last axis, "
            f"got shape {scores.shape}"
        )
    return inverse_log_normalise(intercept + scores @ weights)


def headline_metric(spec: Spec) -> str:
    """The per-game score a spec leads with: the one it classifies or counts breakthroughs of.

    SABER and HWR: HWRNS (SABER Section 3.2's classes, HWR's HWRB); else the first normalised
    score (Atari-5: HNS), else ``raw`` (Sonic). The probability of improvement, the curves' IQM
    and the report's figures are of it.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> headline_metric(load_spec("saber")), headline_metric(load_spec("sonic"))
        ('hwrns', 'raw')
    """
    names = [n.name for n in spec.scoring.normalised]
    breakthrough = spec.scoring.breakthrough
    for preferred in (spec.scoring.classes_of, breakthrough.of if breakthrough else None):
        if preferred in names:
            return preferred
    return names[0] if names else "raw"
