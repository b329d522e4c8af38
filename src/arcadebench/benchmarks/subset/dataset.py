"""The regression data set of Algorithm 1 (Section 4.1): :class:`SubsetData` and :func:`prepare`.

:func:`prepare` applies the paper's filters (algorithms with too few games, then games scored by
too few of the remaining algorithms) and computes the target each subset model predicts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.scoring.normalise import log_normalise
from arcadebench.benchmarks.subset.score_table import ScoreTable, Target
from arcadebench.errors import SubsetError, UnknownGame, did_you_mean
from arcadebench.specs.names import name_key

__all__ = [
    "DEFAULT_MIN_GAMES",
    "SubsetData",
    "prepare",
]

#: "We removed any algorithms that had results for fewer than 40 of the 57 games" (Section 4.1).
DEFAULT_MIN_GAMES = 40


@dataclass(frozen=True, eq=False)
class SubsetData:
    """The data set D of Algorithm 1 after the Section 4.1 filters, with its target.

    Attributes:
        table: the algorithms kept, with all of their games.
        target: ``"median"`` or ``"mean"``: the summary score Phi^REF predicted.
        y: ``log10(1 + max(0, Phi^REF))`` per algorithm (Algorithm 1 line 10, Eq. 3), computed
            over *all* of the algorithm's games — also those dropped as candidates, as the paper's
            57-game median includes Surround.
        x: log-normalised scores (Eq. 3), NaN = missing.
        candidates: games scored by at least ``min_algorithms`` of the kept algorithms: the games
            a subset may use.
        dropped_algorithms: algorithms with fewer than ``min_games`` games (or at most
            ``min_target``).
        dropped_games: games of the table that are not candidates.
        min_games: the per-algorithm threshold used.
        min_algorithms: the per-game threshold used.
    """

    table: ScoreTable
    target: str
    y: NDArray[np.float64]
    x: NDArray[np.float64]
    candidates: tuple[str, ...]
    dropped_algorithms: tuple[str, ...]
    dropped_games: tuple[str, ...]
    min_games: int
    min_algorithms: int

    def resolve(self, names: Iterable[str], what: str = "game") -> tuple[str, ...]:
        """Table game names for any spellings (``BattleZone``, ``battle_zone``), in the given order.

        Raises:
            UnknownGame: with close matches.
        """
        lookup = {name_key(g): g for g in self.table.games}
        out = []
        for name in names:
            game = lookup.get(name_key(name))
            if game is None:
                raise UnknownGame(
                    f"{what} {name!r} is not a game of {self.table.source}."
                    f"{did_you_mean(name, self.table.games)}"
                )
            if game not in out:
                out.append(game)
        return tuple(out)


def prepare(
    table: ScoreTable,
    target: Target = "median",
    min_games: int = DEFAULT_MIN_GAMES,
    min_algorithms: int | None = None,
    min_target: float | None = None,
) -> SubsetData:
    """Apply the paper's filters (Section 4.1) and compute the target (Algorithm 1 line 10).

    Args:
        table: the scores.
        target: the summary score to predict: the ``median`` (the paper's, Section 5) or ``mean``
            normalised score of each algorithm over all of its games.
        min_games: drop algorithms with scores for fewer games ("fewer than 40 of the 57 games").
        min_algorithms: then drop candidate games scored by fewer of the remaining algorithms
            (the paper: 40 of 62, which removes Surround); default ``min_games``.
        min_target: also drop algorithms whose summary score is not above this. The authors' code
            (``atari5.py``, ``is_good``) keeps only medians above 40; the paper does not mention it
            and every algorithm of the published data set passes, so the default is no threshold.

    Raises:
        SubsetError: bad arguments, or no algorithm/game survives the filters.
    """
    summary = table.summary(target)  # raises for an unknown target, before the other checks
    if not isinstance(min_games, int) or min_games < 1:
        raise SubsetError(f"`min_games` must be a positive integer, got {min_games!r}")
    if min_algorithms is None:
        min_algorithms = min_games
    if not isinstance(min_algorithms, int) or min_algorithms < 0:
        raise SubsetError(
            f"`min_algorithms` must be a non-negative integer, got {min_algorithms!r}"
        )
    counts = np.sum(~np.isnan(table.scores), axis=1)
    keep = counts >= min_games
    if min_target is not None:
        keep &= summary > min_target
    if not keep.any():
        raise SubsetError(
            f"no algorithm of {table.source} passes the filters (the most games any has is "
            f"{int(counts.max())}, min_games={min_games}); lower `min_games` (--min-games)"
        )
    scores = table.scores[keep]
    kept = ScoreTable(
        tuple(a for a, k in zip(table.algorithms, keep, strict=True) if k),
        table.games,
        scores,
        table.constants,
        table.source,
    )
    per_game = np.sum(~np.isnan(scores), axis=0)
    candidates = tuple(g for g, n in zip(table.games, per_game, strict=True) if n >= min_algorithms)
    if not candidates:
        raise SubsetError(
            f"no game of {table.source} is scored by {min_algorithms} of the "
            f"{int(keep.sum())} algorithms kept; lower `min_algorithms` (--min-algorithms)"
        )
    y = log_normalise(summary[keep])
    x = kept.log_scores()
    y.setflags(write=False)
    x.setflags(write=False)
    return SubsetData(
        table=kept,
        target=target,
        y=y,
        x=x,
        candidates=candidates,
        dropped_algorithms=tuple(a for a, k in zip(table.algorithms, keep, strict=True) if not k),
        dropped_games=tuple(g for g in table.games if g not in candidates),
        min_games=min_games,
        min_algorithms=min_algorithms,
    )
