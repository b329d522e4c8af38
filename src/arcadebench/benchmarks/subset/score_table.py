"""Reading a score table: :class:`ScoreTable` and :func:`read_scores`, the pipeline's first step.

A long CSV of (algorithm, game, score) rows becomes a table of normalised scores (percent, Eq. 2),
one row per algorithm, whether the file has raw scores with their random/human constants, raw
scores and a spec for the constants, or scores already normalised.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.scoring.normalise import log_normalise, normalise
from arcadebench.errors import InputError, SubsetError, UnknownGame, did_you_mean
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.model import EMPTY

if TYPE_CHECKING:  # pragma: no cover
    from _csv import Reader  # what csv.reader returns (it has line_num)

__all__ = [
    "ATARI5_DATASET",
    "ScoreTable",
    "Target",
    "read_scores",
]

#: Name of the authors' score data set shipped with arcadebench (maitchison/Atari-5 @118cad5,
#: MIT licence): ``read_scores(ATARI5_DATASET)`` reads it with the atari5 spec's game names.
ATARI5_DATASET = "atari5-dataset"
_DATASET_FILE = Path(__file__).resolve().parents[2] / "data" / "atari5_dataset.csv"

Target = Literal["median", "mean"]
_TARGETS = ("median", "mean")


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
    constants: Mapping[str, tuple[float, float]] = field(default_factory=lambda: EMPTY)
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
        out = np.full(len(self.algorithms), np.nan)
        has = np.any(~np.isnan(self.scores), axis=1)  # algorithms with a score
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


def _read_rows(reader: Reader, source: str, spec: Spec | None) -> ScoreTable:
    header = next(reader, None)
    if header is None:
        raise InputError(
            source, None, "is empty; it needs a header row (algorithm, game, score, ...)"
        )
    keys = [re.sub(r"[\s-]+", "_", h.strip().lower()) for h in header]
    found = {c: [keys.index(a) for a in aliases if a in keys] for c, aliases in _COLUMNS.items()}
    index = {column: at[0] for column, at in found.items() if at}  # the first alias present
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
    reference = spec if mode == "spec" else None  # the spec whose constants normalise the rows
    for cells in reader:
        line = reader.line_num
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
        if mode != "normalised":
            random, human = (
                _row_constants(cells, index, header, source, line)
                if reference is None
                else _spec_constants(reference, game, source, line)
            )
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


def _row_constants(
    cells: list[str], index: Mapping[str, int], header: list[str], source: str, line: int
) -> tuple[float, float]:
    """``(random, human)`` from a row's own columns; both are required (no missing result)."""
    values = []
    for column in ("random", "human"):
        cell, name = cells[index[column]], header[index[column]]
        value = _number(cell, source, line, name)
        if value is None:
            raise InputError(source, line, f"column {name!r} must be a number, got {cell!r}")
        values.append(value)
    return values[0], values[1]


def _spec_constants(spec: Spec, game: str, source: str, line: int) -> tuple[float, float]:
    """``(random, human)`` of ``game`` from the spec, for files of raw scores without them."""
    constant = spec.constants.get(game)
    if constant is None or constant.random is None or constant.human is None:
        raise InputError(
            source, line, f"the {spec.name!r} spec has no random/human constants for {game!r}"
        )
    return constant.random, constant.human


def _number(cell: str, source: str, line: int, column: str) -> float | None:
    text = cell.strip()
    if text.lower() in _MISSING:
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
