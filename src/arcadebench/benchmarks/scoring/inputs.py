"""Read every score source of a scoring call: score tables, result files, logs, mappings.

Dispatches each source by kind — a mapping, a ``.csv`` or ``.json`` score file
(:mod:`~arcadebench.benchmarks.scoring.score_files`), a ``.jsonl`` episode log or a directory of
them (:mod:`~arcadebench.benchmarks.scoring.log_scores`) — into one :class:`RawScores`.

Functions: read_scores.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.scoring.log_scores import read_logs
from arcadebench.benchmarks.scoring.raw_scores import RawScores, ScoreCollector
from arcadebench.benchmarks.scoring.score_files import read_csv, read_json, read_mapping
from arcadebench.errors import InputError, NoScores
from arcadebench.specs import Spec

__all__ = ["ScoreSource", "Scores", "read_scores"]

ScoreSource = str | os.PathLike[str] | Mapping[str, Any]
"""One source of raw scores: a ``.csv``/``.json`` score file, a ``.jsonl`` episode log, a
directory of logs, or a ``{"<algorithm>": {"<game>": score | [runs]}}`` mapping."""
Scores = ScoreSource | Iterable[ScoreSource]
"""What :func:`arcadebench.score` reads: one source or several."""


def _expand(sources: object) -> list[object]:
    if isinstance(sources, str | os.PathLike | Mapping):
        return [sources]
    if isinstance(sources, Iterable):
        items = list(sources)
        if not items:
            raise InputError("<scores>", None, "no score files given")
        return items
    raise InputError(
        "<scores>",
        None,
        f"scores must be a path, a list of paths or a mapping, got {type(sources).__name__}",
    )


def read_scores(spec: Spec, sources: Scores) -> RawScores:
    """Read every source (``.csv``, ``.json``, ``.jsonl``, a directory of logs, or a mapping).

    Raises:
        InputError: a missing file, an unknown suffix, or anything the readers refuse.
        NoScores: the sources hold no complete episode and no score row.
    """
    collector = ScoreCollector()
    logs: list[Path] = []
    in_directories: list[Path] = []  # logs of other specs are skipped there, not refused
    for source in _expand(sources):
        if isinstance(source, Mapping):
            read_mapping(spec, source, collector)
            continue
        if not isinstance(source, str | os.PathLike):
            raise InputError(
                "<scores>",
                None,
                f"a score source must be a path or a mapping, got {type(source).__name__}",
            )
        path = Path(source)
        if path.is_dir():
            found = sorted(path.rglob("*.jsonl"))
            if not found:  # e.g. a training run before its first episode ended
                raise NoScores(str(path), None, "is a directory without episode logs (*.jsonl)")
            logs.extend(found)
            in_directories.extend(found)
        elif not path.exists():
            raise InputError(str(path), None, "no such file")
        elif path.suffix.lower() == ".csv":
            read_csv(spec, path, collector)
        elif path.suffix.lower() == ".json":
            read_json(spec, path, collector)
        elif path.suffix.lower() == ".jsonl":
            logs.append(path)
        else:
            raise InputError(
                str(path),
                None,
                "has an unknown suffix; give a .csv or .json score file or a .jsonl episode log",
            )
    if logs:
        skipped = read_logs(spec, logs, collector, other_specs_ok=set(in_directories))
        if skipped and len(skipped) == len(logs):
            raise NoScores(
                str(skipped[0].parent),
                None,
                f"has no logs of the {spec.name!r} spec ({len(skipped)} of other specs); score "
                "them with their own spec",
            )
    raw = collector.build(spec)
    if not raw.algorithms:
        where = collector.sources[0] if len(collector.sources) == 1 else "<scores>"
        raise NoScores(
            where, None, "has no scores (no complete episode, no score row); nothing to score"
        )
    return raw
