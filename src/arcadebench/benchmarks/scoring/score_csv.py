"""Read a score table — CSV or TSV, long or wide, as a paper prints it — into the raw scores.

Two layouts, told apart by the header:

- **long**: ``game,score`` and optionally ``algorithm`` (default: the file's stem), ``run``
  (several rows of a game = several runs) and ``frames`` (training frames used). A run with
  several rows of different ``frames`` is scored at checkpoints: the row of the most frames is
  its score, every row a point of its algorithm's sample-efficiency curve (and, at one of the
  spec's checkpoints, e.g. SABER's 10M, that checkpoint's score), so published per-checkpoint
  data plots beside logged runs.
- **wide**, as papers' tables are: a ``game`` column and one column per algorithm, named as the
  paper names it (``game,PPO (ours),DQN``), optionally with ``run``.

The game column may be headed ``game``, ``environment``, ``env``, ``task`` or ``level``.
Columns are separated by commas or, where the header has tabs, by tabs. A cell may be
``mean ± spread`` (or ``+/-``), as papers print a mean over seeds: the mean is scored as one run
and the spread kept in a note (the runs behind it are not in the table). Lines starting with
``#`` are comments (a licence note).

Functions: read_csv.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple

from arcadebench.benchmarks.scoring.raw_scores import ScoreCollector
from arcadebench.benchmarks.scoring.score_files import (
    MISSING,
    NUMBER,
    parse_score,
    read_text,
    resolve_game,
)
from arcadebench.errors import InputError, UnknownGame
from arcadebench.specs import Spec

__all__ = ["COLUMNS", "GAME_COLUMNS", "read_csv"]

COLUMNS = ("game", "score", "algorithm", "run", "frames")
"""The long layout's columns (``game`` under any of :data:`GAME_COLUMNS`)."""
GAME_COLUMNS = ("game", "environment", "env", "task", "level")
"""Headers naming the game column."""
_SCORE_WORDS = frozenset(
    {"scores", "result", "results", "return", "returns", "reward", "raw", "mean"}
)
"""Headers that name the long layout's score column by another word, never an algorithm."""
_SPREAD = re.compile(r"^(?P<mean>[^±]+?)\s*(?:±|\+/-|\+-)\s*(?P<spread>\S+)$")


class _Row(NamedTuple):
    """A score table's cell, read and checked: one run's score."""

    algorithm: str
    game: str
    run: str
    score: float | None
    frames: float | None
    line: int


class _Header(NamedTuple):
    """The header line: the columns' names, and for the wide layout which are algorithms."""

    names: list[str]  # canonical for the long layout's columns, as written for an algorithm
    algorithms: list[str]  # empty: the long layout


def read_csv(
    spec: Spec,
    path: str | os.PathLike[str],
    collector: ScoreCollector | None = None,
    *,
    text: str | None = None,
) -> ScoreCollector:
    """Read a score table (module docstring: CSV or TSV, long or wide) into ``collector``.

    ``text`` replaces the file's content (the file name is still used in messages).

    Raises:
        InputError: empty file, unknown or missing columns (with what the header looks like),
            a row with the wrong number of fields, an unknown game (with "did you mean"), a
            non-numeric score or frames, an empty algorithm or run, or a duplicate
            (algorithm, game, run).
    """
    path = Path(path)
    file = str(path)
    collector = collector if collector is not None else ScoreCollector()
    text = read_text(path) if text is None else text
    if "\x00" in text:
        raise InputError(file, None, "contains NUL bytes; a score CSV is plain text")
    lines = [
        (n, line)
        for n, line in enumerate(text.splitlines(keepends=True), 1)
        if not line.lstrip().startswith("#")
    ]
    first = next((line for _, line in lines if line.strip()), "")
    delimiter = "\t" if "\t" in first else ","
    reader = csv.reader(
        io.StringIO("".join(line for _, line in lines)), delimiter=delimiter, strict=True
    )

    def line_of() -> int:
        return lines[min(reader.line_num, len(lines)) - 1][0] if lines else 1

    header: _Header | None = None
    rows: list[_Row] = []
    spreads: dict[str, list[str]] = {}
    try:
        for row in reader:
            if not row or all(not cell.strip() for cell in row):
                continue
            line = line_of()
            if header is None:
                header = _read_header(spec, row, file, line)
                continue
            if len(row) != len(header.names):
                raise InputError(
                    file,
                    line,
                    f"has {len(row)} fields, expected {len(header.names)} "
                    f"({delimiter.join(header.names)}): {delimiter.join(row)!r}",
                )
            cells = dict(zip(header.names, (cell.strip() for cell in row), strict=True))
            # a row's (algorithm, score cell) pairs: one per algorithm, or the long layout's one
            pairs = [(n, cells[n]) for n in header.algorithms] or [
                (cells.get("algorithm", path.stem), cells["score"])
            ]
            for algorithm, cell in pairs:
                rows.append(_row(spec, cells, algorithm, cell, file, line, spreads))
    except csv.Error as error:
        raise InputError(file, line_of(), f"is not valid CSV: {error}") from None
    if header is None:
        raise InputError(
            file, None, "is empty; expected a header line `game,score` and one row per game"
        )
    if not rows:
        raise InputError(file, None, "has a header but no score rows")
    _add_rows(spec, rows, collector, file)
    for algorithm, given in spreads.items():
        shown = "; ".join(given[:3]) + (f"; and {len(given) - 3} more" if len(given) > 3 else "")
        collector.note(
            algorithm,
            f"{file} gives {len(given)} of its scores as mean ± spread ({shown}): each mean is "
            "scored as one run, since the runs behind it are not in the table",
        )
    collector.sources.append(file)
    return collector


def _read_header(spec: Spec, row: Sequence[str], file: str, line: int) -> _Header:
    """The header: the long layout if it has ``score``, else the wide one (module docstring)."""
    written = [cell.strip() for cell in row]
    lowered = [cell.lower() for cell in written]
    games = [i for i, name in enumerate(lowered) if name in GAME_COLUMNS]
    if not games:
        raise InputError(file, line, _no_game_column(spec, written))
    names = ["game" if i == games[0] else name for i, name in enumerate(lowered)]
    if "score" in names:
        for name in names:
            if name not in COLUMNS:
                raise InputError(
                    file,
                    line,
                    f"unknown column {name!r}; a score CSV has the columns game, score and "
                    "optionally algorithm, run, frames, or (without `score`) a column per "
                    "algorithm",
                )
        canonical = names
        algorithms: list[str] = []
    else:  # wide: every column but the game's and the run's is an algorithm
        canonical = [n if n in ("game", "run") else w for n, w in zip(names, written, strict=True)]
        algorithms = [w for n, w in zip(names, written, strict=True) if n not in ("game", "run")]
        taken = [n for n in names if n in ("algorithm", "frames") or n in _SCORE_WORDS]
        if taken or not algorithms or not all(algorithms):
            what = (
                f"a {taken[0]!r} column" if taken else "an algorithm column without a name"
                if algorithms else "no algorithm column"
            )  # fmt: skip
            raise InputError(
                file,
                line,
                f"has no `score` column, so it would be one column per algorithm, but it has "
                f"{what}; use `game,score[,algorithm][,run][,frames]`, or `game,<algorithm>,...`",
            )
    duplicates = sorted({c for c in canonical if canonical.count(c) > 1})
    if duplicates:
        raise InputError(file, line, f"column {duplicates[0]!r} appears twice in the header")
    return _Header(canonical, algorithms)


def _no_game_column(spec: Spec, written: Sequence[str]) -> str:
    """Why a header without a game column is refused, fitted to what it holds."""
    for cell in written:
        try:
            spec.resolve_game(cell)
        except UnknownGame:
            continue
        return (
            f"has no header line: its first line names the game {cell!r}; add a header such "
            "as `game,score` (or `game,<algorithm>,...`, a column per algorithm) above it"
        )
    return (
        f"the header ({', '.join(map(repr, written))}) has no game column; name it `game` "
        "(a score CSV is `game,score[,algorithm][,run][,frames]` or `game,<algorithm>,...`)"
    )


def _row(
    spec: Spec,
    cells: Mapping[str, str],
    algorithm: str,
    cell: str,
    file: str,
    line: int,
    spreads: dict[str, list[str]],
) -> _Row:
    game = resolve_game(spec, cells["game"], file, line)
    score_text = cell
    spread = _SPREAD.fullmatch(cell)
    if spread is not None:
        score_text = spread["mean"]
        spreads.setdefault(algorithm, []).append(f"{game} {cell}")
    try:
        score = parse_score(score_text)
    except ValueError:
        raise InputError(
            file,
            line,
            f"score {cell!r} of {game} is not a number; use a number (12345 or 12,345), "
            "mean ± spread, inf/infinite, or NA for a missing score",
        ) from None
    frames = None
    if "frames" in cells:
        try:
            frames = _parse_frames(cells["frames"])
        except ValueError:
            raise InputError(
                file,
                line,
                f"frames {cells['frames']!r} of {game} must be a non-negative number or empty",
            ) from None
    if not algorithm:
        raise InputError(
            file, line, "the algorithm is empty; name it or drop the `algorithm` column"
        )
    run = cells.get("run", "")
    if "run" in cells and not run:
        raise InputError(file, line, f"the run id of {game} is empty; give every row a run id")
    return _Row(algorithm, game, run, score, frames, line)


def _parse_frames(text: str) -> float | None:
    token = text.strip()
    if token.lower() in MISSING:
        return None
    token = token.replace(",", "") if re.fullmatch(r"\d{1,3}(?:,\d{3})+", token) else token
    if not NUMBER.fullmatch(token):
        raise ValueError(text)
    value = float(token)
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return value


def _add_rows(spec: Spec, rows: Sequence[_Row], collector: ScoreCollector, file: str) -> None:
    """Add a table's runs: one score each, or a run's checkpoints (several ``frames``)."""
    by_run: dict[tuple[str, str, str], list[_Row]] = {}
    for row in rows:
        by_run.setdefault((row.algorithm, row.game, row.run), []).append(row)
    curves = {key[0] for key, runs in by_run.items() if len(runs) > 1}
    for (algorithm, game, run), runs in by_run.items():
        if len(runs) > 1:
            _check_checkpoints(runs, file)
        ordered = sorted(runs, key=lambda r: r.frames or 0.0)
        checkpoints: list[tuple[int | None, _Row]] = [(None, ordered[-1])]
        if len(runs) > 1:
            checkpoints += [
                (int(r.frames or 0), r)
                for r in ordered
                if int(r.frames or 0) in spec.evaluation.checkpoints
            ]
        for checkpoint, row in checkpoints:
            where = (file, row.line)
            collector.add(
                algorithm, game, run, row.score, where=where, frames=row.frames,
                checkpoint=checkpoint,
            )  # fmt: skip
        for row in ordered if algorithm in curves else ():
            if row.frames is not None and row.score is not None:
                collector.add_point(algorithm, game, run, int(row.frames), row.score, None)


def _check_checkpoints(runs: Sequence[_Row], file: str) -> None:
    """A run's several rows are its checkpoints: each has ``frames``, no two the same."""
    seen: dict[float | None, int] = {}
    for row in runs:
        if row.frames in seen or (seen and (row.frames is None or None in seen)):
            first = seen.get(row.frames, next(iter(seen.values())))
            what = f"run {row.run!r} of {row.game}" if row.run else row.game
            at = f" at {row.frames:,.0f} frames" if row.frames is not None else ""
            raise InputError(
                file,
                row.line,
                f"duplicate score for {what}{at} of algorithm {row.algorithm!r} (first at "
                f"{file}:{first}); give each run its own `run` id, or each of a run's "
                "checkpoints its `frames`",
            )
        seen[row.frames] = row.line
