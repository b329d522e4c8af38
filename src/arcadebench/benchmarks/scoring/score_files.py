"""Read score tables — CSV, JSON, a mapping or a results file — into the raw scores.

This is how published results are scored retroactively (the Atari-5 paper's main use): every
source adds to a :class:`~arcadebench.benchmarks.scoring.raw_scores.ScoreCollector`
(algorithm -> game -> one score per run), with game names resolved by the spec. Every bad input
is one :class:`~arcadebench.errors.InputError` naming the file, the line and the value; nothing
is silently dropped except explicit NA.

Formats:

- CSV or TSV tables (:mod:`~arcadebench.benchmarks.scoring.score_csv`). Scores are numbers
  (``12,345`` too), ``inf``/``infinite`` (SABER's infinite gameplay) or empty/``NA``/``N/A``
  (missing), game names in any common spelling (``Battle Zone``, ``battle_zone``, ``Q*bert``).
- JSON ``{"<algorithm>": {"<game>": score | [score per run]}}`` with the same score values
  (``null`` = missing), or a results file of any format in :data:`RESULTS_FORMATS` (its runs are
  re-scored, when it was scored with the same spec: results of another protocol are refused, as
  its logs are).

Episode logs are read by :mod:`~arcadebench.benchmarks.scoring.log_scores`; every kind of
source by :func:`~arcadebench.benchmarks.scoring.inputs.read_scores`.

Functions: read_json, read_mapping, parse_score, resolve_game, read_text, check_results_spec,
results_version.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.scoring.raw_scores import ScoreCollector
from arcadebench.errors import InputError, OtherSpec, UnknownGame
from arcadebench.specs import Spec
from arcadebench.specs.model import short_hash

__all__ = [
    "RESULTS_FORMAT",
    "RESULTS_FORMATS",
    "check_results_spec",
    "parse_score",
    "read_json",
    "read_mapping",
    "read_text",
    "resolve_game",
    "results_version",
]

#: Score files larger than this are refused (a 61-game table of 1,000 runs is a few MB).
MAX_SCORE_FILE_BYTES = 64_000_000

MISSING = frozenset({"", "na", "n/a"})
"""A score cell that says a score is missing (after ``strip`` and ``lower``)."""
_INFINITE = frozenset({"inf", "+inf", "infinite", "infinity", "+infinity"})
NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")
"""A plain decimal number, as a score or frame cell holds it."""
_GROUPED = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?$")  # 12,345.6 as papers print it
RESULTS_FORMAT = "arcadebench-results/2"
"""The results format written, whose ``provenance.inputs`` are relative to the results file's
folder and whose ``settings`` hold every argument of the scoring call that changes numbers."""
RESULTS_FORMATS = ("arcadebench-results/1", RESULTS_FORMAT)
"""Every results format read. Format 1 recorded the inputs as the scorer was given them (relative
to whatever directory it ran in) and no ``curve``/``compare`` settings; its numbers are read the
same."""


# -- values ---------------------------------------------------------------------------------------


def parse_score(text: str) -> float | None:
    """A score cell: a number, ``inf``/``infinite`` (infinite gameplay) or NA (``None``).

    Thousands separators as papers print them (``12,345.6``) are read; a comma anywhere else
    (``1,5``: a decimal comma?) is not guessed at.

    Raises:
        ValueError: for anything else (``nan``, ``-inf``, ``1,5``, words); the callers turn
            it into an :class:`InputError` with the file and line.

    Example:
        >>> parse_score("12.5"), parse_score("Infinite"), parse_score("N/A"), parse_score("12,345")
        (12.5, inf, None, 12345.0)
    """
    token = text.strip().lower()
    if token in MISSING:
        return None
    if token in _INFINITE:
        return math.inf
    if _GROUPED.fullmatch(token):
        token = token.replace(",", "")
    if not NUMBER.fullmatch(token):
        raise ValueError(text)
    value = float(token)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def resolve_game(spec: Spec, name: object, file: str, line: int | None) -> str:
    """The canonical name of a score file's game cell (an :class:`InputError` if unknown)."""
    if not isinstance(name, str) or not name.strip():
        raise InputError(file, line, f"game must be a non-empty name, got {name!r}")
    try:
        return spec.resolve_game(name.strip())
    except UnknownGame as error:
        raise InputError(file, line, f"unknown game: {error}") from None


def read_text(path: Path) -> str:
    """A score file's text, refused when too large, unreadable or not UTF-8."""
    file = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_SCORE_FILE_BYTES:
            raise InputError(
                file,
                None,
                f"is {size:,} bytes, more than the {MAX_SCORE_FILE_BYTES:,} a score file may have",
            )
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(
            file, None, f"is not UTF-8 text (byte {error.start}); save it as UTF-8"
        ) from None
    except OSError as error:
        raise InputError(file, None, f"cannot read the file: {error.strerror or error}") from None


# -- JSON -----------------------------------------------------------------------------------------


def _reject_constant(name: str) -> float:
    if name == "Infinity":
        return math.inf
    raise ValueError(f"{name} is not a score")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        duplicate = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"duplicate key {duplicate!r}")
    return dict(pairs)


def _line_of(text: str, key: str, start: int = 0) -> int | None:
    """Best-effort line of a JSON key in ``text`` (json reports no positions for values)."""
    position = text.find(json.dumps(key), start)
    return None if position < 0 else text.count("\n", 0, position) + 1


def read_json(
    spec: Spec,
    path: str | os.PathLike[str],
    collector: ScoreCollector | None = None,
    *,
    text: str | None = None,
) -> ScoreCollector:
    """Read ``{"<algorithm>": {"<game>": score | [runs]}}`` (or a results file) into ``collector``.

    Raises:
        InputError: invalid JSON (with its line), duplicate keys, a wrong shape (with the
            expected one), an unknown game, a score that is not a number/``"inf"``/``null``.
    """
    path = Path(path)
    file = str(path)
    collector = collector if collector is not None else ScoreCollector()
    text = read_text(path) if text is None else text
    if not text.strip():
        raise InputError(
            file, None, 'is empty; expected {"<algorithm>": {"<game>": score or [scores per run]}}'
        )
    try:
        data = json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant
        )
    except json.JSONDecodeError as error:
        raise InputError(
            file, error.lineno, f"is not valid JSON: {error.msg} (column {error.colno})"
        ) from None
    except ValueError as error:
        raise InputError(file, None, f"is not valid: {error}") from None
    except RecursionError:
        raise InputError(file, None, "is nested too deeply") from None
    if (
        isinstance(data, dict)
        and isinstance(data.get("format"), str)
        and data["format"].startswith("arcadebench-results")
    ):
        results_version(data, file)
        _read_results(spec, data, collector, file, text)
    else:
        _read_mapping(spec, data, collector, file, text)
    collector.sources.append(file)
    return collector


def read_mapping(
    spec: Spec, data: Mapping[str, Any], collector: ScoreCollector | None = None
) -> ScoreCollector:
    """Read an in-memory ``{"<algorithm>": {"<game>": score | [runs]}}`` mapping."""
    collector = collector if collector is not None else ScoreCollector()
    _read_mapping(spec, data, collector, "<mapping>", None)
    collector.sources.append("<mapping>")
    return collector


_SHAPE = '{"<algorithm>": {"<game>": score or [scores per run]}}'


def _json_score(value: object, file: str, line: int | None, what: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = float(value)
        if not (math.isnan(value) or value == -math.inf):
            return value
    elif callable(item := getattr(value, "item", None)) and getattr(value, "shape", None) == ():
        return _json_score(item(), file, line, what)  # a numpy scalar in a mapping
    elif isinstance(value, str):
        with contextlib.suppress(ValueError):
            return parse_score(value)
    raise InputError(file, line, f'score of {what} must be a number, "inf" or null, got {value!r}')


def _read_mapping(
    spec: Spec, data: object, collector: ScoreCollector, file: str, text: str | None
) -> None:
    if not isinstance(data, Mapping) or not data:
        raise InputError(
            file, None, f"must be a non-empty object {_SHAPE}, got {type(data).__name__}"
        )
    for algorithm, games in data.items():
        line = _line_of(text, str(algorithm)) if text else None
        if not isinstance(algorithm, str) or not algorithm:
            raise InputError(
                file, line, f"algorithm names must be non-empty strings, got {algorithm!r}"
            )
        if not isinstance(games, Mapping):
            raise InputError(
                file,
                line,
                f"algorithm {algorithm!r} must map games to scores ({_SHAPE}), "
                f"got {type(games).__name__}",
            )
        start = text.find(json.dumps(algorithm)) if text else 0
        for name, value in games.items():
            line = _line_of(text, str(name), max(start, 0)) if text else None
            game = resolve_game(spec, name, file, line)
            what = f"{game} ({algorithm})"
            if isinstance(value, list | tuple) or (
                hasattr(value, "ndim") and getattr(value, "ndim", 0) == 1
            ):
                values = list(value)
                if not values:
                    raise InputError(
                        file,
                        line,
                        f"{what} has an empty list of runs; use null for a missing score",
                    )
                for i, item in enumerate(values):
                    score = _json_score(item, file, line, f"{what} run {i}")
                    collector.add(algorithm, game, str(i), score, where=(file, line))
            else:
                collector.add(
                    algorithm, game, "", _json_score(value, file, line, what), where=(file, line)
                )


def check_results_spec(spec: Spec, scored_with: object, file: str, line: int | None = None) -> None:
    """Refuse a results file scored with another protocol than ``spec`` (or another version).

    Its raw scores were played under that protocol's rules (sticky actions or not, another cap,
    another evaluation...), so re-scoring them under this one would rank them beside this
    protocol's results as if they were comparable; logs of another spec are refused the same way.

    Raises:
        OtherSpec: scored with a spec of another name (the message points at `arcadebench diff`).
        InputError: no ``spec`` object, or another version (hash) of the same spec.
    """
    if not isinstance(scored_with, Mapping) or not isinstance(scored_with.get("name"), str):
        raise InputError(
            file,
            line,
            'a results file must name the spec it was scored with ("spec": {"name", "version", '
            f'"hash"}}), got {scored_with!r}',
        )
    name, version = scored_with["name"], scored_with.get("version")
    short = short_hash(scored_with.get("hash"))
    if name != spec.name:
        raise OtherSpec(
            file,
            line,
            f"was scored with spec {name!r} v{version} ({short}), not {spec.name!r} "
            f"v{spec.version} ({spec.short_hash}); results of two protocols are never scored "
            f"together: score it with its own spec (`arcadebench score {name} ...`), and see how "
            f"the two differ with `arcadebench diff {name} {spec.name}`",
        )
    if scored_with.get("hash") != spec.hash:
        raise InputError(
            file,
            line,
            f"was scored with another version of the {name!r} spec (v{version}, {short}; this "
            f"one is v{spec.version}, {spec.short_hash}); score it with the spec file it was "
            f"scored with, and see how the two differ with `arcadebench diff <that file> "
            f"{spec.name}`",
        )


def results_version(data: object, file: str) -> int:
    """The format version of a results document (1 or 2), refusing any other document.

    Both versions hold the same numbers, so every reader accepts both; format 2 records its
    inputs relative to the file and the scoring call's ``curve`` and ``compare``
    (:data:`RESULTS_FORMAT`).

    Raises:
        InputError: ``data`` is not a results document, or one of a newer format.

    Example:
        >>> results_version({"format": "arcadebench-results/1"}, "r.json")
        1
    """
    readable = ", ".join(RESULTS_FORMATS)
    if not isinstance(data, Mapping):
        raise InputError(
            file,
            None,
            f'is not a results document (a {type(data).__name__}, not an object whose "format" '
            f"is one of {readable})",
        )
    found = data.get("format")
    if found in RESULTS_FORMATS:
        return int(str(found).rpartition("/")[2])
    if isinstance(found, str) and found.startswith("arcadebench-results/"):
        raise InputError(
            file,
            None,
            f"is an {found} document; this arcadebench reads {readable}: upgrade it to read "
            "this one",
        )
    raise InputError(
        file, None, f'is not a results document ("format" is {found!r}, not one of {readable})'
    )


def _read_results(
    spec: Spec, data: dict[str, Any], collector: ScoreCollector, file: str, text: str
) -> None:
    """Re-score a results file (any of :data:`RESULTS_FORMATS`): every block's per-run scores."""
    check_results_spec(spec, data.get("spec"), file, _line_of(text, "spec"))
    algorithms = data.get("algorithms")
    if not isinstance(algorithms, dict):
        raise InputError(file, None, 'a results file must have an "algorithms" object')
    for algorithm, entry in algorithms.items():
        if not isinstance(entry, dict):
            raise InputError(
                file, _line_of(text, algorithm), f"algorithm {algorithm!r} must be an object"
            )
        if entry.get("frozen_policy") is True:
            collector.mark_frozen(algorithm)
        blocks: list[tuple[int | None, object]] = [(None, entry.get("games", {}))]
        checkpoints = entry.get("checkpoints", {})
        if not isinstance(checkpoints, dict):
            raise InputError(file, _line_of(text, "checkpoints"), '"checkpoints" must be an object')
        for label, block in checkpoints.items():
            if not (isinstance(label, str) and label.isdigit()) or not isinstance(block, dict):
                raise InputError(
                    file,
                    _line_of(text, label),
                    f"checkpoint {label!r} must be a frame count with an object",
                )
            blocks.append((int(label), block.get("games", {})))
        for checkpoint, games in blocks:
            if not isinstance(games, dict):
                raise InputError(file, _line_of(text, "games"), '"games" must be an object')
            for name, cell in games.items():
                line = _line_of(text, name)
                game = resolve_game(spec, name, file, line)
                runs = cell.get("runs") if isinstance(cell, dict) else None
                if not isinstance(runs, list) or not runs:
                    raise InputError(
                        file,
                        line,
                        f'{game} of {algorithm!r} needs a non-empty "runs" list to be re-scored',
                    )
                frames = cell.get("frames")
                if not (
                    isinstance(frames, int | float)
                    and not isinstance(frames, bool)
                    and math.isfinite(frames)
                    and frames >= 0
                ):
                    frames = None
                for i, item in enumerate(runs):
                    score = _json_score(item, file, line, f"{game} ({algorithm}) run {i}")
                    collector.add(
                        algorithm,
                        game,
                        str(i),
                        score,
                        where=(file, line),
                        frames=frames,
                        checkpoint=checkpoint,
                    )
