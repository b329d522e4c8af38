"""Representative benchmark subsets: the Atari-5 method (Algorithm 1, BEST_SUBSET) for any suite.

Aitchison, Sweetser & Hutter (ICML 2023) predict a target summary score — log10(1 + the 57-game
median HNS) — from the log-normalised scores (Eq. 3) of a few games, by least squares without
intercept and with non-negative weights (Proposition 2: such a score is weakly order-preserving),
choosing the games by 10-fold cross-validated error (Sections 3.3 and 4.3). This module
reproduces that procedure on the authors' data set (shipped as ``atari5-dataset``) and applies it
to any suite whose per-task scores are in a long table.

The pipeline::

    read_scores (CSV: algorithm, game, score)  ->  prepare (Section 4.1 filters, the target)
      ->  best_subsets / nested_selection (Algorithm 1, Section 4.3)
      ->  fit_predictions (Section 4.4, Tables 10-11)  ->  to_yaml (an ``atari5.yaml`` fragment)

The search scores every subset of a size at once: the Gram matrices of all subsets that share the
same algorithms with complete data are slices of one matrix per such "mask", so all C(n, k) fits
are batched normal equations; subsets with a negative weight are dropped before the k-fold
cross-validation, which uses the same per-mask, per-fold statistics (issue 7.3).

Classes: ScoreTable, SubsetData, SubsetFit, SubsetSearch, GameModel, PredictionFit, SubsetError.

Example:
    The Atari-1 model of Table 9 and its Table 2 figures, refitted from the authors' data:

    >>> data = prepare(read_scores("atari5-dataset"))
    >>> fit = fit_subset(data, ["name_this_game"])
    >>> round(fit.coefficients[0], 4), round(fit.cv_r2, 3), round(fit.cv_relative_error, 1)
    (0.9976, 0.864, 27.4)
"""

from __future__ import annotations

import concurrent.futures
import csv
import dataclasses
import functools
import itertools
import math
import multiprocessing
import os
import re
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.normalise import log_normalise, normalise, subset_estimate
from arcadebench.errors import ArcadebenchError, InputError, UnknownGame, did_you_mean
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.names import name_key

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

#: Name of the authors' score data set shipped with arcadebench (maitchison/Atari-5 @118cad5,
#: MIT licence): ``read_scores(ATARI5_DATASET)`` reads it with the atari5 spec's game names.
ATARI5_DATASET = "atari5-dataset"
_DATASET_FILE = Path(__file__).resolve().parents[2] / "data" / "atari5_dataset.csv"

#: The authors' cross-validation seed: ``KFold(10, shuffle=True, random_state=1982)``.
DEFAULT_SEED = 1982
#: Section 4.1: "We removed any algorithms that had results for fewer than 40 of the 57 games".
DEFAULT_MIN_GAMES = 40
#: Largest search run without being asked for (C(57, 6) is 36 million).
DEFAULT_MAX_SUBSETS = 50_000_000

Target = Literal["median", "mean"]
_TARGETS = ("median", "mean")
_CHUNK = 65_536  # subsets per work unit
_CV_BATCH = 4_096  # subsets whose fold systems are solved together (memory: batch x folds x q^2)
_STATS_BYTES = 256 * 2**20  # cap on the per-mask Gram statistics held at once
_PARALLEL_MIN = 200_000  # smaller searches run in-process (a pool costs more than it saves)
_EMPTY: Mapping = MappingProxyType({})


class SubsetError(ArcadebenchError, ValueError):
    """An argument of the subset search is invalid, or the data cannot support the request."""


# -- reading a score table ------------------------------------------------------------------------

_COLUMNS = {
    "algorithm": ("algorithm", "algo", "agent", "method", "model"),
    "game": ("game", "task", "environment", "env", "level"),
    "score": ("score", "raw", "raw_score", "return"),
    "random": ("random", "random_score"),
    "human": ("human", "human_average", "human_score", "reference"),
    "normalised": ("normalised", "normalized", "hns", "normalised_score", "normalized_score"),
}
# Flags of the authors' dataset.csv (rows the paper used); a row whose flag is false is skipped.
_FLAGS = ("in57", "train", "good")
_MISSING = frozenset({"", "-", "na", "n/a", "nan", "none", "null"})
_TRUE = frozenset({"true", "1", "yes", "y", "t"})
_FALSE = frozenset({"false", "0", "no", "n", "f"})


@dataclass(frozen=True, eq=False)
class ScoreTable:
    """Normalised scores (percent) of algorithms on games; NaN where an algorithm has no score.

    Algorithms are sorted by name (code-point order, as pandas' ``pivot_table`` sorts them in the
    authors' code): the row order fixes which algorithms share a cross-validation fold.

    Attributes:
        algorithms: algorithm names, sorted.
        games: game names, sorted.
        scores: ``(len(algorithms), len(games))`` normalised scores, NaN = missing; read-only.
        constants: ``game -> (random, human)`` used to normalise raw scores (Eq. 2); empty when
            the input was already normalised.
        source: where the table came from (a file name), for messages and exports.
    """

    algorithms: tuple[str, ...]
    games: tuple[str, ...]
    scores: NDArray[np.float64]
    constants: Mapping[str, tuple[float, float]] = field(default_factory=lambda: _EMPTY)
    source: str = "<scores>"

    def __post_init__(self) -> None:
        scores = np.array(self.scores, dtype=np.float64)
        if scores.shape != (len(self.algorithms), len(self.games)):
            raise SubsetError(
                f"`scores` must have shape ({len(self.algorithms)}, {len(self.games)}), got "
                f"{scores.shape}"
            )
        scores.setflags(write=False)
        object.__setattr__(self, "scores", scores)
        object.__setattr__(self, "constants", MappingProxyType(dict(self.constants)))

    @classmethod
    def from_records(
        cls,
        records: Iterable[tuple[str, str, float]],
        constants: Mapping[str, tuple[float, float]] | None = None,
        source: str = "<records>",
    ) -> ScoreTable:
        """Build a table from ``(algorithm, game, score)`` records.

        Args:
            records: one score per algorithm and game (identical repeats are merged).
            constants: ``game -> (random, human)``; raw scores are normalised with Eq. 2. Without
                it the scores are taken as already normalised (percent).
            source: a name for messages and exports.

        Raises:
            InputError: a non-finite score, a game without constants, or two different scores
                for one algorithm and game.
        """
        entries = []
        for i, (algorithm, game, score) in enumerate(records, start=1):
            value = float(score)
            if constants is not None:
                if game not in constants:
                    raise InputError(
                        source,
                        i,
                        f"game {game!r} has no (random, human) constants"
                        f"{did_you_mean(game, constants)}; add them to `constants`",
                    )
                random, human = constants[game]
                value = float(normalise(value, random, human))
            entries.append((str(algorithm), str(game), value, i))
        return _build_table(entries, dict(constants) if constants is not None else {}, source)

    def log_scores(self) -> NDArray[np.float64]:
        """phi(s) = log10(1 + max(0, s)) of every score (Eq. 3); NaN stays NaN."""
        return log_normalise(self.scores)

    def summary(self, target: Target = "median") -> NDArray[np.float64]:
        """Each algorithm's median (or mean) normalised score over all of its games."""
        if target not in _TARGETS:
            raise SubsetError(f"`target` must be one of {', '.join(_TARGETS)}, got {target!r}")
        reduce = np.nanmedian if target == "median" else np.nanmean
        counts = np.sum(~np.isnan(self.scores), axis=1)
        out = np.full(len(self.algorithms), np.nan)
        has = counts > 0
        out[has] = reduce(self.scores[has], axis=1)
        return out


def _build_table(
    entries: list[tuple[str, str, float, int]],
    constants: Mapping[str, tuple[float, float]],
    source: str,
) -> ScoreTable:
    if not entries:
        raise InputError(
            source, None, "has no scores; it needs one (algorithm, game, score) row per result"
        )
    seen: dict[tuple[str, str], tuple[float, int]] = {}
    for algorithm, game, value, line in entries:
        if not math.isfinite(value):
            raise InputError(
                source,
                line,
                f"the score of ({algorithm!r}, {game!r}) must be finite, got {value!r}",
            )
        key = (algorithm, game)
        if key in seen:
            first, first_line = seen[key]
            if not math.isclose(first, value, rel_tol=1e-12, abs_tol=1e-12):
                raise InputError(
                    source,
                    line,
                    f"a second, different score for ({algorithm!r}, {game!r}) (line "
                    f"{first_line} has {first!r}, this row {value!r}); keep one row per "
                    "algorithm and game",
                )
            continue
        seen[key] = (value, line)
    algorithms = tuple(sorted({a for a, _ in seen}))
    games = tuple(sorted({g for _, g in seen}))
    row = {a: i for i, a in enumerate(algorithms)}
    col = {g: j for j, g in enumerate(games)}
    scores = np.full((len(algorithms), len(games)), np.nan)
    for (algorithm, game), (value, _) in seen.items():
        scores[row[algorithm], col[game]] = value
    kept = {g: constants[g] for g in games if g in constants}
    return ScoreTable(algorithms, games, scores, kept, source)


def read_scores(path: str | Path, spec: str | Path | Spec | None = None) -> ScoreTable:
    """Read a long CSV of scores: one row per (algorithm, game).

    Column names are case-insensitive. Required: ``algorithm`` and ``game``, and either ``score``
    with ``random`` and ``human`` (raw scores, normalised with Eq. 2), or ``score`` with ``spec``
    (constants from the spec), or ``normalised``/``normalized``/``hns`` (already normalised, in
    percent). Other columns are ignored, except ``In57``, ``train`` and ``good`` (the flags of the
    authors' ``dataset.csv``): a row whose flag is false is skipped. Empty or ``-`` scores are
    missing results. Identical repeated rows are merged (the authors' data lists four of
    Prior+Duel hs twice, from two papers).

    Args:
        path: the CSV file, or ``"atari5-dataset"`` for the authors' data set shipped with
            arcadebench (read with the atari5 spec's game names unless ``spec`` is given).
        spec: a spec (or its name) whose game names the table uses (``BattleZone`` and
            ``battlezone`` become ``battle_zone``) and whose constants normalise raw scores when
            the file has none.

    Raises:
        InputError: the file is missing, not UTF-8, lacks a needed column or has a bad value
            (with the line number).
    """
    text = str(path)
    if text == ATARI5_DATASET:
        path, spec = _DATASET_FILE, spec if spec is not None else "atari5"
    path = Path(path)
    spec = load_spec(spec) if spec is not None else None
    source = path.name if path == _DATASET_FILE else str(path)
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return _read_rows(csv.reader(f), source, spec)
    except FileNotFoundError:
        raise InputError(
            str(path),
            None,
            f"no such file; pass a CSV of (algorithm, game, score) rows or {ATARI5_DATASET!r}",
        ) from None
    except UnicodeDecodeError as exc:
        raise InputError(
            str(path), None, f"is not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    except OSError as exc:
        raise InputError(str(path), None, f"cannot be read: {exc.strerror or exc}") from None
    except csv.Error as exc:
        raise InputError(str(path), None, f"is not valid CSV: {exc}") from None


def _read_rows(reader: Iterator[list[str]], source: str, spec: Spec | None) -> ScoreTable:
    header = next(reader, None)
    if header is None:
        raise InputError(
            source, None, "is empty; it needs a header row (algorithm, game, score, ...)"
        )
    keys = [re.sub(r"[\s-]+", "_", h.strip().lower()) for h in header]
    index: dict[str, int] = {}
    for column, aliases in _COLUMNS.items():
        for alias in aliases:
            if alias in keys:
                index[column] = keys.index(alias)
                break
    flags = [keys.index(flag) for flag in _FLAGS if flag in keys]
    for needed in ("algorithm", "game"):
        if needed not in index:
            raise InputError(
                source,
                1,
                f"has no {needed!r} column (columns: {', '.join(header)}); "
                f"name one of {', '.join(_COLUMNS[needed])}",
            )
    if "score" in index and "random" in index and "human" in index:
        mode = "raw"
    elif "score" in index and spec is not None:
        mode = "spec"
    elif "normalised" in index:
        mode = "normalised"
    else:
        raise InputError(
            source,
            1,
            "needs `score` with `random` and `human` columns (or a spec for the "
            "constants), or a `normalised` column of normalised scores in percent",
        )

    entries: list[tuple[str, str, float, int]] = []
    constants: dict[str, tuple[float, float]] = {}
    constants_line: dict[str, int] = {}
    width = max([*index.values(), *flags]) + 1
    for cells in reader:
        line = reader.line_num  # type: ignore[attr-defined]
        if not any(c.strip() for c in cells):
            continue
        if len(cells) < width:
            raise InputError(source, line, f"has {len(cells)} fields, the header has {len(header)}")
        if any(_flag(cells[i], source, line, header[i]) is False for i in flags):
            continue
        algorithm = cells[index["algorithm"]].strip()
        game = cells[index["game"]].strip()
        if not algorithm or not game:
            raise InputError(source, line, "the algorithm and the game must not be empty")
        if spec is not None:
            try:
                game = spec.resolve_game(game)
            except UnknownGame as exc:
                raise InputError(source, line, str(exc)) from None
        value_column = "normalised" if mode == "normalised" else "score"
        value = _number(cells[index[value_column]], source, line, header[index[value_column]])
        if value is None:
            continue
        if mode == "raw":
            random = _number(
                cells[index["random"]], source, line, header[index["random"]], required=True
            )
            human = _number(
                cells[index["human"]], source, line, header[index["human"]], required=True
            )
        elif mode == "spec":
            constant = spec.constants.get(game)
            if constant is None or constant.human is None:
                raise InputError(
                    source,
                    line,
                    f"the {spec.name!r} spec has no random/human constants for {game!r}",
                )
            random, human = constant.random, constant.human
        if mode != "normalised":
            if game in constants and constants[game] != (random, human):
                raise InputError(
                    source,
                    line,
                    f"constants of {game!r} ({random!r}, {human!r}) differ from line "
                    f"{constants_line[game]} {constants[game]!r}; one (random, human) per game",
                )
            if random == human:
                raise InputError(
                    source,
                    line,
                    f"random and human scores of {game!r} must differ, both {random!r}",
                )
            constants.setdefault(game, (random, human))
            constants_line.setdefault(game, line)
            value = float(normalise(value, random, human))
        entries.append((algorithm, game, value, line))
    return _build_table(entries, constants, source)


def _number(cell: str, source: str, line: int, column: str, required: bool = False) -> float | None:
    text = cell.strip()
    if text.lower() in _MISSING:
        if required:
            raise InputError(source, line, f"column {column!r} must be a number, got {cell!r}")
        return None
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        raise InputError(
            source, line, f"column {column!r} must be a number, got {cell!r}"
        ) from None
    if not math.isfinite(value):
        raise InputError(source, line, f"column {column!r} must be finite, got {cell!r}")
    return value


def _flag(cell: str, source: str, line: int, column: str) -> bool | None:
    text = cell.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if text in _MISSING:
        return None
    raise InputError(source, line, f"column {column!r} must be True or False, got {cell!r}")


# -- the regression data set (Section 4.1) --------------------------------------------------------


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
    if target not in _TARGETS:
        raise SubsetError(f"`target` must be one of {', '.join(_TARGETS)}, got {target!r}")
    if not isinstance(min_games, int) or min_games < 1:
        raise SubsetError(f"`min_games` must be a positive integer, got {min_games!r}")
    if min_algorithms is None:
        min_algorithms = min_games
    if not isinstance(min_algorithms, int) or min_algorithms < 0:
        raise SubsetError(
            f"`min_algorithms` must be a non-negative integer, got {min_algorithms!r}"
        )
    counts = np.sum(~np.isnan(table.scores), axis=1)
    summary = table.summary(target)
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


# -- one subset, fitted directly ------------------------------------------------------------------


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
        relative_error: in-sample ln(10) x mean |residual|, percent.
        cv_mse: k-fold mean of the per-fold test MSE: the ranking criterion (Section 4.3).
        cv_r2: 1 - cv_mse / var(y) (Table 2).
        cv_relative_error: ln(10) x mean of the per-fold mean |residual|, percent (Table 2).
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


# -- the search (Algorithm 1), vectorised ---------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Problem:
    """What a worker needs: columns of log-scores, their presence bits, the target, the CV plan."""

    x: NDArray[np.float64]  # (m, c) log-scores, 0 where missing; last column all ones if intercept
    bits: NDArray[np.uint64]  # (c, words): bit r of a column is set when algorithm r has a score
    y: NDArray[np.float64]  # (m,)
    folds: int
    seed: int
    intercept: bool
    keep: int  # best subsets each work unit returns


def _presence_bits(present: NDArray[np.bool_]) -> NDArray[np.uint64]:
    m, c = present.shape
    words = (m + 63) // 64
    bits = np.zeros((c, words), dtype=np.uint64)
    for w in range(words):
        block = present[w * 64 : (w + 1) * 64].T.astype(np.uint64)  # (c, <=64)
        shifts = np.arange(block.shape[1], dtype=np.uint64)
        bits[:, w] = np.bitwise_or.reduce(block << shifts, axis=1)
    return bits


def _unpack_bits(keys: NDArray[np.uint64], m: int) -> NDArray[np.bool_]:
    rows = np.arange(m)
    words, shifts = rows // 64, (rows % 64).astype(np.uint64)
    return ((keys[:, words] >> shifts) & np.uint64(1)).astype(bool)


def _solve(gram: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Batched normal equations G beta = b.

    A column that is zero in every row (e.g. a hard-exploration game every included algorithm
    scored at random level) makes G singular; like the minimum-norm least-squares solution the
    authors' ``LinearRegression`` (scipy ``lstsq``) returns, it gets weight 0.
    """
    diag = np.diagonal(gram, axis1=-2, axis2=-1)
    zero = diag <= 0.0
    if zero.any():
        gram, rhs = gram.copy(), rhs.copy()
        batch, col = np.nonzero(zero)
        gram[batch, col, :] = 0.0
        gram[batch, :, col] = 0.0
        gram[batch, col, col] = 1.0
        rhs[batch, col] = 0.0
    try:
        return np.linalg.solve(gram, rhs[..., None])[..., 0]
    except np.linalg.LinAlgError:  # exactly collinear columns: the minimum-norm solution
        return (np.linalg.pinv(gram) @ rhs[..., None])[..., 0]


def _mask_stats(
    x: NDArray[np.float64], y: NDArray[np.float64], masks: NDArray[np.bool_], folds: int, seed: int
) -> dict[str, NDArray[np.float64]]:
    """Per-mask, per-fold sufficient statistics: X'X, X'y, y'y, sum y and row counts.

    Every subset with the same set of complete algorithms (its mask) has the same rows and the
    same folds, so its Gram matrices are slices of these.
    """
    g, m = masks.shape
    c = x.shape[1]
    weights = np.zeros((g, folds, m))
    for u in range(g):
        rows = np.flatnonzero(masks[u])
        weights[u, _fold_ids(len(rows), folds, seed), rows] = 1.0
    w = weights.reshape(g * folds, m)
    outer = (x[:, :, None] * x[:, None, :]).reshape(m, c * c)
    fold_gram = (w @ outer).reshape(g, folds, c, c)
    fold_xy = (w @ (x * y[:, None])).reshape(g, folds, c)
    fold_yy = (w @ (y * y)).reshape(g, folds)
    fold_n = weights.sum(axis=2)
    return {
        "gram": fold_gram.sum(axis=1),
        "xy": fold_xy.sum(axis=1),
        "yy": fold_yy.sum(axis=1),
        "sy": masks.astype(float) @ y,
        "n": fold_n.sum(axis=1),
        "fold_gram": fold_gram,
        "fold_xy": fold_xy,
        "fold_yy": fold_yy,
        "fold_n": fold_n,
    }


def _quadratic(beta: NDArray[np.float64], gram: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.einsum("...i,...ij,...j->...", beta, gram, beta)


def _search_chunk(problem: _Problem, start: int, combos: NDArray[np.intp]) -> dict[str, Any]:
    """Fit, prune (Algorithm 1 line 14) and cross-validate one block of subsets.

    Returns the ``problem.keep`` best non-negative subsets of the block (by k-fold MSE, ties by
    enumeration order) and the counts of fitted and non-negative subsets.
    """
    m = len(problem.y)
    n_rows, q = combos.shape
    n_weights = q - 1 if problem.intercept else q
    keys = np.bitwise_and.reduce(problem.bits[combos], axis=1)  # (B, words)
    if keys.shape[1] == 1:
        unique, inverse = np.unique(keys[:, 0], return_inverse=True)
        unique = unique[:, None]
    else:
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    masks = _unpack_bits(unique, m)
    counts = masks.sum(axis=1)
    enough = counts >= max(problem.folds, q + 1)
    columns, local = np.unique(combos, return_inverse=True)
    local = local.reshape(n_rows, q)
    x = problem.x[:, columns]
    per_mask = (problem.folds + 1) * len(columns) ** 2 * 8
    group = max(1, _STATS_BYTES // per_mask)
    kept: list[tuple[NDArray, ...]] = []
    n_fitted = n_nonnegative = 0
    usable = np.flatnonzero(enough)
    for lo in range(0, len(usable), group):
        group_masks = usable[lo : lo + group]
        slot = np.full(len(unique), -1)
        slot[group_masks] = np.arange(len(group_masks))
        chosen = np.flatnonzero(slot[inverse] >= 0)
        if not len(chosen):
            continue
        stats = _mask_stats(x, problem.y, masks[group_masks], problem.folds, problem.seed)
        mid = slot[inverse[chosen]]
        sub = local[chosen]
        gram = stats["gram"][mid[:, None, None], sub[:, :, None], sub[:, None, :]]
        xy = stats["xy"][mid[:, None], sub]
        beta = _solve(gram, xy)
        n = stats["n"][mid]
        sse = stats["yy"][mid] - 2.0 * np.sum(beta * xy, axis=1) + _quadratic(beta, gram)
        n_fitted += len(chosen)
        ok = np.all(beta[:, :n_weights] >= 0.0, axis=1)
        n_nonnegative += int(ok.sum())
        chosen, mid, sub, gram, xy, beta, sse, n = (
            a[ok] for a in (chosen, mid, sub, gram, xy, beta, sse, n)
        )
        cv = np.empty(len(chosen))
        fold = np.arange(problem.folds)
        for b0 in range(0, len(chosen), _CV_BATCH):
            sl = slice(b0, b0 + _CV_BATCH)
            bm, bs = mid[sl], sub[sl]
            test_gram = stats["fold_gram"][
                bm[:, None, None, None],
                fold[None, :, None, None],
                bs[:, None, :, None],
                bs[:, None, None, :],
            ]
            test_xy = stats["fold_xy"][bm[:, None, None], fold[None, :, None], bs[:, None, :]]
            train = _solve(
                (gram[sl, None] - test_gram).reshape(-1, q, q),
                (xy[sl, None] - test_xy).reshape(-1, q),
            ).reshape(-1, problem.folds, q)
            test_sse = (
                stats["fold_yy"][bm]
                - 2.0 * np.sum(train * test_xy, axis=2)
                + _quadratic(train, test_gram)
            )
            cv[sl] = np.mean(test_sse / stats["fold_n"][bm], axis=1)
        best = np.lexsort((chosen, cv))[: problem.keep]
        kept.append(
            (
                start + chosen[best],
                combos[chosen[best]],
                beta[best],
                sse[best] / n[best],
                cv[best],
                n[best],
            )
        )
    if kept:
        index, rows, betas, mse, cv, n = (
            np.concatenate(parts) for parts in zip(*kept, strict=True)
        )
        best = np.lexsort((index, cv))[: problem.keep]
        index, rows, betas, mse, cv, n = (a[best] for a in (index, rows, betas, mse, cv, n))
    else:
        index, rows = np.empty(0, dtype=np.intp), np.empty((0, q), dtype=np.intp)
        betas, mse, cv, n = np.empty((0, q)), np.empty(0), np.empty(0), np.empty(0)
    return {
        "index": index,
        "combos": rows,
        "beta": betas,
        "mse": mse,
        "cv_mse": cv,
        "n": n,
        "fitted": n_fitted,
        "nonnegative": n_nonnegative,
    }


def _combination_blocks(
    pool: Sequence[int], r: int, tail: Sequence[int], chunk: int
) -> Iterator[tuple[int, NDArray[np.intp]]]:
    """All r-subsets of ``pool`` (lexicographic), ``tail`` appended to each, ``chunk`` at a time."""
    iterator = itertools.combinations(pool, r)
    tail_array = np.asarray(tail, dtype=np.intp)
    start = 0
    while True:
        block = list(itertools.islice(iterator, chunk))
        if not block:
            return
        heads = np.array(block, dtype=np.intp).reshape(len(block), r)
        yield start, np.hstack([heads, np.broadcast_to(tail_array, (len(block), len(tail_array)))])
        start += len(block)


def _default_processes() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork shares the imported package with the workers (no re-import); elsewhere the default.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _run_blocks(
    problem: _Problem, blocks: Iterator[tuple[int, NDArray[np.intp]]], processes: int
) -> list[dict[str, Any]]:
    if processes <= 1:
        return [_search_chunk(problem, start, combos) for start, combos in blocks]
    results = []
    with concurrent.futures.ProcessPoolExecutor(processes, mp_context=_pool_context()) as pool:
        pending: set[concurrent.futures.Future] = set()
        for start, combos in blocks:  # at most 2 blocks per worker in flight: bounded memory
            pending.add(pool.submit(_search_chunk, problem, start, combos))
            if len(pending) >= 2 * processes:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED
                )
                results.extend(f.result() for f in done)
        results.extend(f.result() for f in pending)
    return results


@dataclass(frozen=True)
class SubsetSearch:
    """The outcome of Algorithm 1 over all subsets of one size.

    Attributes:
        size: games per subset.
        fits: the best subsets, best first (lowest k-fold MSE), each refitted directly.
        n_subsets: subsets enumerated (COMB in Algorithm 1).
        n_fitted: subsets with enough algorithms with complete data to fit and cross-validate.
        n_nonnegative: of those, the ones without a negative weight (Algorithm 1 line 14),
            which were cross-validated.
        pool: the games the search chose from (besides ``always``).
        always: games in every subset.
        seconds: wall time of the search.
        processes: worker processes used.
    """

    size: int
    fits: tuple[SubsetFit, ...]
    n_subsets: int
    n_fitted: int
    n_nonnegative: int
    pool: tuple[str, ...]
    always: tuple[str, ...]
    seconds: float
    processes: int

    @property
    def best(self) -> SubsetFit:
        """The selected subset (Algorithm 1's output)."""
        return self.fits[0]


def best_subsets(
    data: SubsetData,
    size: int,
    *,
    exclude: Iterable[str] = (),
    within: Iterable[str] | None = None,
    always: Iterable[str] = (),
    intercept: bool = False,
    folds: int = 10,
    seed: int = DEFAULT_SEED,
    top: int = 10,
    processes: int | None = None,
    max_subsets: int = DEFAULT_MAX_SUBSETS,
) -> SubsetSearch:
    """Search all subsets of ``size`` games (Algorithm 1, BEST_SUBSET) and return the best.

    For every subset: least squares of the target on the subset's log-normalised scores over the
    algorithms with all of its games, no intercept (Section 4.3); a fit with a negative weight is
    rejected (line 14); the rest are ranked by k-fold cross-validated MSE in log space (line 17).
    Folds follow scikit-learn's ``KFold(folds, shuffle=True, random_state=seed)`` over the
    algorithms in name order, as in the authors' code. The ``top`` best are refitted directly
    (:func:`fit_subset`) for their figures.

    Note:
        The authors' ``atari5.py`` cross-validates only the 20 subsets with the lowest in-sample
        MSE and has no non-negativity check; on their data both rules select the same subsets.

    Args:
        data: from :func:`prepare`.
        size: games per subset (including ``always``).
        exclude: games never used (the validation searches exclude the test games).
        within: search only these games (Atari-3 is searched within Atari-5).
        always: games in every subset (Atari-5-Val extends Atari-3-Val; Atari-10 extends Atari-5);
            they are listed last, as in Table 9.
        intercept: fit an intercept too (not the paper's subset models; Section 5.1 uses one).
        folds: k of the k-fold cross-validation.
        seed: seed of the fold permutation (the authors': 1982).
        top: how many of the best subsets to return.
        processes: worker processes (default: the CPUs available); small searches run inline.
        max_subsets: refuse larger searches (narrow them with ``within`` or ``exclude``).

    Raises:
        UnknownGame: a named game is not in the table.
        SubsetError: bad arguments, a named game that is not a candidate, a search larger than
            ``max_subsets``, or no subset with non-negative weights.
    """
    started = time.perf_counter()
    _check_cv(folds, seed)
    for param, value, low in (("size", size, 1), ("top", top, 1), ("max_subsets", max_subsets, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise SubsetError(f"`{param}` must be an integer >= {low}, got {value!r}")
    if processes is not None and (not isinstance(processes, int) or processes < 1):
        raise SubsetError(f"`processes` must be a positive integer or None, got {processes!r}")
    pool, always_games = _search_space(data, exclude, within, always)
    r = size - len(always_games)
    if r < 0:
        raise SubsetError(
            f"`size` must be at least the {len(always_games)} games of `always`, got {size}"
        )
    if r > len(pool):
        raise SubsetError(
            f"`size` must be at most {len(pool) + len(always_games)} (the games to choose "
            f"from), got {size}"
        )
    n_subsets = math.comb(len(pool), r)
    if n_subsets > max_subsets:
        raise SubsetError(
            f"a search of C({len(pool)}, {r}) = {n_subsets:,} subsets is larger than max_subsets="
            f"{max_subsets:,}; narrow it with `within`/`exclude` (--within/--exclude) or "
            "raise the limit"
        )
    games = data.table.games
    columns = [games.index(g) for g in (*pool, *always_games)]
    x = data.x[:, columns]
    present = ~np.isnan(x)
    x = np.where(present, x, 0.0)
    if intercept:
        x = np.column_stack([x, np.ones(len(x))])
        present = np.column_stack([present, np.ones(len(x), dtype=bool)])
    tail = list(range(len(pool), len(pool) + len(always_games))) + (
        [len(columns)] if intercept else []
    )
    problem = _Problem(
        x=x,
        bits=_presence_bits(present),
        y=np.asarray(data.y),
        folds=folds,
        seed=seed,
        intercept=intercept,
        keep=top + 16,
    )
    workers = _default_processes() if processes is None else processes
    workers = 1 if n_subsets < _PARALLEL_MIN else min(workers, -(-n_subsets // _CHUNK))
    parts = _run_blocks(problem, _combination_blocks(range(len(pool)), r, tail, _CHUNK), workers)
    index = np.concatenate([p["index"] for p in parts])
    cv = np.concatenate([p["cv_mse"] for p in parts])
    combos = np.concatenate([p["combos"] for p in parts])
    if not len(index):
        raise SubsetError(
            f"no subset of {size} games has non-negative weights and at least "
            f"{max(folds, size + 1)} "
            "algorithms with all of its games; widen the search or lower `folds`"
        )
    order = np.lexsort((index, cv))[: problem.keep]
    names = (*pool, *always_games)
    n_weights = r + len(always_games)
    fits = [
        fit_subset(data, [names[j] for j in combos[i, :n_weights]], intercept, folds, seed)
        for i in order
    ]
    fits.sort(key=lambda fit: fit.cv_mse)  # stable: ties keep enumeration order
    return SubsetSearch(
        size=size,
        fits=tuple(fits[:top]),
        n_subsets=n_subsets,
        n_fitted=sum(p["fitted"] for p in parts),
        n_nonnegative=sum(p["nonnegative"] for p in parts),
        pool=pool,
        always=always_games,
        seconds=time.perf_counter() - started,
        processes=workers,
    )


def _search_space(
    data: SubsetData, exclude: Iterable[str], within: Iterable[str] | None, always: Iterable[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    excluded = set(data.resolve(exclude, "excluded game"))
    always_games = data.resolve(always, "`always` game")
    chosen = data.resolve(within, "`within` game") if within is not None else None
    for game in (*always_games, *(chosen or ())):
        if game not in data.candidates:
            n = int(np.sum(~np.isnan(data.x[:, data.table.games.index(game)])))
            raise SubsetError(
                f"{game!r} is scored by {n} of the {len(data.table.algorithms)} algorithms, "
                f"fewer than min_algorithms={data.min_algorithms}; lower it (--min-algorithms) "
                "or leave the game out"
            )
    clash = excluded & set(always_games)
    if clash:
        raise SubsetError(
            f"`always` and `exclude` must not share games, both have {sorted(clash)!r}"
        )
    universe = set(chosen) if chosen is not None else set(data.candidates)
    pool = tuple(
        g for g in data.candidates if g in universe and g not in excluded and g not in always_games
    )
    return pool, always_games


def nested_selection(
    data: SubsetData,
    prefix: str = "Atari",
    sizes: Sequence[int] = (5, 3, 1),
    validation: Sequence[int] = (3, 5),
    extended: int | None = 10,
    *,
    exclude: Iterable[str] = (),
    within: Iterable[str] | None = None,
    folds: int = 10,
    seed: int = DEFAULT_SEED,
    processes: int | None = None,
    max_subsets: int = DEFAULT_MAX_SUBSETS,
) -> dict[str, SubsetFit]:
    """The ordered searches of Section 4.3 that give Table 2's nested subsets.

    1. ``{prefix}-{sizes[0]}``: the best subset of all candidates (Atari-5).
    2. Each further size: the best subset *within* the previous one (Atari-3 in Atari-5, Atari-1
       in Atari-3), so smaller evaluations upgrade to larger ones.
    3. ``{prefix}-{validation[0]}-Val``: the best subset *excluding* the test games
       (Atari-3-Val); each further validation size extends the previous one (Atari-5-Val).
    4. ``{prefix}-{extended}``: the test subset plus the best ``extended - sizes[0]`` more games,
       excluding the largest validation subset (Atari-10).

    Args:
        data: from :func:`prepare`.
        prefix: the suite's name (``"MySuite"`` gives ``MySuite-5``, ``MySuite-3-Val`` ...).
        sizes: decreasing test-subset sizes.
        validation: increasing validation-subset sizes (``()`` for none).
        extended: size of the extended test subset (``None`` for none).
        exclude: games no subset may use.
        within: restrict every search to these games (e.g. to keep a test fast).
        folds: as for :func:`best_subsets`.
        seed: as for :func:`best_subsets`.
        processes: as for :func:`best_subsets`.
        max_subsets: as for :func:`best_subsets`.

    Returns:
        ``name -> fit`` in Table 2's order: test subsets by size, the extended one, validation.

    Raises:
        SubsetError: sizes out of order, or more games than the candidates allow.
    """
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", prefix or ""):
        raise SubsetError(
            "`prefix` must be letters, digits, '_', '.' or '-', starting with a letter, got "
            f"{prefix!r}"
        )
    sizes, validation = tuple(sizes), tuple(validation)
    if not sizes or any(b >= a for a, b in itertools.pairwise(sizes)) or sizes[-1] < 1:
        raise SubsetError(f"`sizes` must be decreasing positive integers, got {sizes!r}")
    if any(b <= a for a, b in itertools.pairwise(validation)) or (validation and validation[0] < 1):
        raise SubsetError(f"`validation` must be increasing positive integers, got {validation!r}")
    if extended is not None and extended <= sizes[0]:
        raise SubsetError(f"`extended` must be larger than sizes[0]={sizes[0]}, got {extended!r}")
    options = {
        "folds": folds,
        "seed": seed,
        "processes": processes,
        "max_subsets": max_subsets,
        "top": 1,
    }
    excluded = list(data.resolve(exclude, "excluded game"))
    found: dict[str, SubsetFit] = {}
    test = best_subsets(data, sizes[0], exclude=excluded, within=within, **options).best
    found[f"{prefix}-{sizes[0]}"] = test.renamed(f"{prefix}-{sizes[0]}")
    previous = test
    for size in sizes[1:]:
        previous = best_subsets(data, size, within=previous.games, exclude=excluded, **options).best
        found[f"{prefix}-{size}"] = previous.renamed(f"{prefix}-{size}")
    val: SubsetFit | None = None
    val_fits: dict[str, SubsetFit] = {}
    for size in validation:
        val = best_subsets(
            data,
            size,
            exclude=[*excluded, *test.games],
            within=within,
            always=val.games if val else (),
            **options,
        ).best
        val_fits[f"{prefix}-{size}-Val"] = val.renamed(f"{prefix}-{size}-Val")
    if extended is not None:
        fit = best_subsets(
            data,
            extended,
            exclude=[*excluded, *(val.games if val else ())],
            within=within,
            always=test.games,
            **options,
        ).best
        found[f"{prefix}-{extended}"] = fit.renamed(f"{prefix}-{extended}")
    ordered = dict(sorted(found.items(), key=lambda item: len(item[1].games)))
    ordered.update(val_fits)
    return ordered


# -- per-game prediction models (Section 4.4, Tables 10-11) ----------------------------------------


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
        source: where the models were fitted (the score file).
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


# -- export: a spec fragment in the atari5.yaml format --------------------------------------------

_YAML_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"})
_GAME_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _yaml_str(text: str) -> str:
    if _YAML_PLAIN.match(text) and text.lower() not in _YAML_WORDS:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _yaml_float(value: float, digits: int | None = None) -> str:
    if digits is not None:
        value = round(float(value), digits)
        return f"{0.0 if value == 0 else value:.{digits}f}"
    return np.format_float_positional(float(value), trim="0")


def _spec_game_names(games: Iterable[str]) -> dict[str, str]:
    names: dict[str, str] = {}
    used: dict[str, str] = {}
    for game in games:
        name = (
            game
            if _GAME_NAME.match(game)
            else re.sub(r"[^A-Za-z0-9_.-]+", "_", game).strip("_.-") or "game"
        )
        key = name_key(name)
        if key in used:
            raise SubsetError(
                f"games {used[key]!r} and {game!r} have the same spec name {name!r}; rename one"
            )
        used[key] = game
        names[game] = name
    return names


def to_yaml(
    data: SubsetData | ScoreTable,
    subsets: Mapping[str, SubsetFit] | Iterable[SubsetFit],
    predictions: Iterable[PredictionFit] = (),
    *,
    name: str | None = None,
    title: str | None = None,
    citation: str | None = None,
    digits: int = 4,
) -> str:
    """Write subsets (Table 9) and per-game models (Tables 10-11) as YAML like ``atari5.yaml``.

    The fragment has ``constants`` (the table's random/human constants; ``[0.0, 100.0]`` when the
    input was already normalised, so spec scoring passes normalised scores through), ``subsets``
    (coefficients to ``digits`` decimals; ``r2`` and ``relative_error`` are the cross-validated
    Table 2 figures) and ``predictions``. With ``name`` it is a complete ``platform: none`` spec
    that :func:`arcadebench.load_spec` reads. Game names a spec cannot hold (spaces, ``*``) are
    written with ``_``; any spelling resolves to them.

    Args:
        data: the data the fits came from (for the constants and the source).
        subsets: fits (each needs a ``name``) or ``name -> fit``.
        predictions: per-game models to include.
        name: write a complete spec with this name (lower-case letters, digits, ``_``, ``-``).
        title: the spec's title (default: generated).
        citation: the spec's citation (default: the Atari-5 method and the data source).
        digits: decimals of the coefficients (Table 9 has 4).

    Raises:
        SubsetError: an unnamed fit, a bad spec name, or two games with one spec name.
    """
    table = data.table if isinstance(data, SubsetData) else data
    if not isinstance(digits, int) or not 1 <= digits <= 12:
        raise SubsetError(f"`digits` must be an integer in [1, 12], got {digits!r}")
    if isinstance(subsets, Mapping):
        subsets = [fit.renamed(key) for key, fit in subsets.items()]
    subsets = list(subsets)
    for fit in subsets:
        if not fit.name:
            raise SubsetError(
                f"every subset needs a name (use fit.renamed('X-5')), got {fit.games!r} without one"
            )
        if fit.intercept is not None:
            raise SubsetError(
                f"subset {fit.name!r} has an intercept; a spec subset has none (Section 4.3)"
            )
    if name is not None and not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise SubsetError(
            "`name` must be lower-case letters, digits, '_' or '-', starting with a letter, got "
            f"{name!r}"
        )
    spec_names = _spec_game_names(table.games)
    out: list[str] = []
    if name is not None:
        prefix = "".join(part.capitalize() for part in re.split(r"[_-]+", name) if part)
        out += [
            f"name: {_yaml_str(name)}",
            f"id_prefix: {prefix}",
            f"title: {_yaml_str(title or f'{name}: representative subsets (arcadebench subset)')}",
            "version: 1",
            "citation: "
            + _yaml_str(
                citation
                or (
                    "Subsets chosen with the method of Aitchison, Sweetser and Hutter (2023), "
                    "Atari-5: "
                    "Distilling the Arcade Learning Environment down to Five Games (ICML); data: "
                    f"{table.source}."
                )
            ),
            "platform: none",
            "",
        ]
    out.append(
        f"# Normalisation constants of {table.source} (Eq. 2: 100 (x - random) / (human - random))."
    )
    if not table.constants:
        out.append(
            "# The scores were already normalised: random 0 and human 100 leave them unchanged."
        )
    out += [
        "constants:",
        f"  source: {_yaml_str(table.source)}",
        "  columns: [random, human]",
        "  rows:",
    ]
    width = max(len(_yaml_str(spec_names[g])) for g in table.games) + 1
    for game in table.games:
        random, human = table.constants.get(game, (0.0, 100.0))
        key = (_yaml_str(spec_names[game]) + ":").ljust(width)
        out.append(f"    {key} [{_yaml_float(random)}, {_yaml_float(human)}]")
    out += [
        "",
        "# Best subsets (Algorithm 1): weights on log10(1 + max(0, score)), no intercept; r2 and",
        "# relative_error are the k-fold cross-validated figures (Table 2).",
        "subsets:",
    ]
    for fit in subsets:
        games = ", ".join(_yaml_str(spec_names[g]) for g in fit.games)
        out += [
            f"  {_yaml_str(fit.name)}:",
            f"    games: [{games}]",
            f"    coefficients: [{', '.join(_yaml_float(c, digits) for c in fit.coefficients)}]",
        ]
        if math.isfinite(fit.cv_r2) and 0.0 <= round(fit.cv_r2, 3) <= 1.0:
            out.append(f"    r2: {_yaml_float(fit.cv_r2, 3)}")
        out.append(f"    relative_error: {_yaml_float(fit.cv_relative_error, 1)}")
    predictions = list(predictions)
    if predictions:
        out += [
            "",
            "# Per-game models (Tables 10-11): log10(1 + s) = c + sum x_i log10(1 + s_i); rows are",
            "# [c, x_1, ..., x_n] in the order of `inputs`.",
            "predictions:",
        ]
        for pred in predictions:
            inputs = ", ".join(_yaml_str(spec_names[g]) for g in pred.inputs)
            out += [
                f"  {_yaml_str(pred.name)}:",
                f"    source: {_yaml_str(f'fitted on {table.source}')}",
                f"    inputs: [{inputs}]",
                "    models:",
            ]
            width = max(len(_yaml_str(spec_names[g])) for g in pred.models) + 1
            for game, model in pred.models.items():
                key = (_yaml_str(spec_names[game]) + ":").ljust(width)
                out.append(
                    f"      {key} [{', '.join(_yaml_float(c, digits) for c in model.coefficients)}]"
                )
    if name is not None:
        out += [
            "",
            "scoring:",
            "  normalised:",
            "    hns: {reference: human}",
            '  log_transform: "log10(1 + max(0, x))"',
        ]
    return "\n".join(out) + "\n"
