"""Read every score source of a scoring call: score tables, result files, logs, mappings.

Dispatches each source by kind — a mapping, a ``.csv`` or ``.tsv`` score table
(:mod:`~arcadebench.benchmarks.scoring.score_csv`), a ``.json`` score or results file
(:mod:`~arcadebench.benchmarks.scoring.score_files`), a ``.jsonl`` episode log or a directory of
them (:mod:`~arcadebench.benchmarks.scoring.log_scores`) — into one :class:`RawScores`.

Results of different protocols never meet here: a results file or an episode log of another spec
is refused with a pointer to ``arcadebench diff``, and a directory's logs of other specs are
skipped with a warning naming them (a run's output directory may hold several protocols' runs).

Functions: read_scores, spec_of_log.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from arcadebench._table import count
from arcadebench.benchmarks.scoring.log_scores import read_logs
from arcadebench.benchmarks.scoring.raw_scores import RawScores, ScoreCollector
from arcadebench.benchmarks.scoring.score_csv import read_csv
from arcadebench.benchmarks.scoring.score_files import read_json, read_mapping
from arcadebench.errors import InputError, NoScores, OtherSpec, warn_user
from arcadebench.records import LogWarning
from arcadebench.specs import Spec

__all__ = ["ScoreSource", "Scores", "read_scores", "spec_of_log"]

#: Lines of a log read to find the spec it was written for (the header and the first episodes).
_PEEK_LINES = 64

ScoreSource = str | os.PathLike[str] | Mapping[str, Any]
"""One source of raw scores (a ``.csv``/``.tsv``/``.json`` score file, a ``.jsonl`` episode log, a
directory of logs, or a ``{"<algorithm>": {"<game>": score | [runs]}}`` mapping)."""
Scores = ScoreSource | Iterable[ScoreSource]
"""What :func:`arcadebench.score` reads, one source or several."""


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


def read_scores(spec: Spec, sources: Scores, curve: bool | Sequence[int] = False) -> RawScores:
    """Read every source (``.csv``/``.tsv``, ``.json``, ``.jsonl``, a directory of logs, a mapping).

    ``curve``: also score the logs' runs at the points of a sample-efficiency curve (``True``:
    the default points; or frame counts), as
    :func:`~arcadebench.benchmarks.scoring.log_scores.read_logs` does.

    Raises:
        InputError: a missing file, an unknown suffix, or anything the readers refuse.
        NoScores: the sources hold no complete episode and no score row.
    """
    collector = ScoreCollector()
    logs: list[Path] = []
    in_directories: dict[Path, Path] = {}  # log -> its directory: other specs skipped, not refused
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
            in_directories.update(dict.fromkeys(found, path))
        elif not path.exists():
            raise InputError(str(path), None, "no such file")
        elif path.suffix.lower() in (".csv", ".tsv"):
            read_csv(spec, path, collector)
        elif path.suffix.lower() == ".json":
            read_json(spec, path, collector)
        elif path.suffix.lower() == ".jsonl":
            logs.append(path)
        else:
            raise InputError(
                str(path),
                None,
                "has an unknown suffix; give a .csv, .tsv or .json score file or a .jsonl "
                "episode log",
            )
    if logs:
        try:
            skipped = read_logs(
                spec, logs, collector, other_specs_ok=set(in_directories), curve=curve
            )
        except OtherSpec as error:
            other = _spec_at(Path(error.file), error.line)
            raise OtherSpec(
                error.file,
                error.line,
                f"{error.problem}; see how the two protocols differ with "
                f"`arcadebench diff {other or '<its spec>'} {spec.name}`",
            ) from None
        if skipped:
            others = _other_specs(skipped)
            if len(skipped) == len(logs):
                raise NoScores(
                    str(skipped[0].parent),
                    None,
                    f"has no logs of the {spec.name!r} spec ({len(skipped)} of other specs); "
                    f"they were written for {_names(others)}: score them with their own spec, "
                    f"and see how the protocols differ with {_diffs(others, spec)}",
                )
            where = ", ".join(dict.fromkeys(str(in_directories[p]) for p in skipped))
            warn_user(
                f"{where}: not scoring {count(len(skipped), 'log')} of other specs "
                f"({_names(others)}): results of two protocols are never scored together; score "
                f"them with their own spec, and see how the protocols differ with "
                f"{_diffs(others, spec)}",
                LogWarning,
            )
    raw = collector.build(spec)
    if not raw.algorithms:
        where = collector.sources[0] if len(collector.sources) == 1 else "<scores>"
        raise NoScores(
            where, None, "has no scores (no complete episode, no score row); nothing to score"
        )
    return raw


def spec_of_log(path: str | os.PathLike[str]) -> str | None:
    """The spec an episode log was written for, from its first records; ``None`` if unsaid.

    A quick look (the reader validates every record when the log is scored): used to say which
    protocol skipped logs belong to, and by the report to give each protocol its own section.
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for _, line in zip(range(_PEEK_LINES), handle, strict=False):
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                name = record.get("spec") if isinstance(record, dict) else None
                if isinstance(name, str):
                    return name
    except OSError:
        return None
    return None


def _spec_at(path: Path, line: int | None) -> str | None:
    """The spec named by the record at ``line`` of a log (where the reader found another)."""
    if line is None:
        return spec_of_log(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, text in enumerate(handle, 1):
                if number == line:
                    record = json.loads(text)
                    name = record.get("spec") if isinstance(record, dict) else None
                    return name if isinstance(name, str) else None
    except (OSError, ValueError):
        return None
    return None


def _other_specs(paths: Iterable[Path]) -> Counter[str]:
    return Counter(spec_of_log(p) or "an unnamed spec" for p in paths)


def _names(others: Counter[str]) -> str:
    return ", ".join(f"{name}: {n}" for name, n in sorted(others.items()))


def _diffs(others: Counter[str], spec: Spec) -> str:
    named = sorted(n for n in others if n != "an unnamed spec")
    if not named:
        return f"`arcadebench diff <their spec> {spec.name}`"
    return " and ".join(f"`arcadebench diff {name} {spec.name}`" for name in named)
