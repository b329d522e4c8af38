"""Read a report's inputs: results JSONs as they are, everything else scored first.

``arcadebench report`` takes results JSONs (``arcadebench score --json``, a run's
``results.json``), episode logs and log directories, and score files (CSV/JSON). Results JSONs
are read with :meth:`Results.from_json`; all other inputs go through one call of
:func:`arcadebench.score`, so a report never scores differently from the scorer. Monitor logs
are also kept for the learning curves: the logs given, and for a results JSON the runner's logs
next to it (``<dir>/<agent>/<spec>/<game>/<run>.jsonl``). A run's output directory may hold
several protocols' logs: its ``results.json`` names the spec it is reported under, unless
``--spec`` does, and the scorer reads the logs of that spec only.

Functions: load_report_data.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.report.references import reference_entries
from arcadebench.benchmarks.report.report_data import Entry, ReportData, check_metric
from arcadebench.benchmarks.scoring.results import Results, score
from arcadebench.benchmarks.scoring.score_files import RESULTS_FORMAT
from arcadebench.errors import (
    ArcadebenchError,
    InputError,
    InvalidArgument,
    OtherSpec,
    UnknownSpec,
)
from arcadebench.records import RunLog, parse_log, spec_logs
from arcadebench.specs import Spec, load_spec

__all__ = ["load_report_data"]

_PEEK_LINES = 64


def load_report_data(
    inputs: Sequence[str | os.PathLike[str] | Results],
    *,
    spec: str | os.PathLike[str] | Spec | None = None,
    compare: Sequence[str] = (),
    metric: str | None = None,
    ci: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
) -> ReportData:
    """Read, score and gather everything one report shows.

    Args:
        inputs: results JSONs, episode logs (``.jsonl``), log directories, score CSV/JSON
            files, or :class:`~arcadebench.benchmarks.scoring.results.Results` objects (e.g. what
            :func:`arcadebench.evaluate` returns).
        spec: the spec (name, YAML file or loaded); default: the one the inputs name.
        compare: reference names (see :mod:`~arcadebench.benchmarks.report.references`).
        metric: per-game metric of the figures (default: the spec's headline metric).
        ci: confidence level for inputs scored here.
        reps: bootstrap repetitions for inputs scored here and the profile bands.
        seed: bootstrap seed.

    Raises:
        InputError: a missing or malformed input, or results scored against another spec.
        UnknownSpec: the spec cannot be found (the message says to pass ``--spec``).
        InvalidArgument: bad ``inputs``, ``metric``, ``ci``, ``reps`` or ``seed``.
    """
    if isinstance(inputs, str | os.PathLike | Results) or not inputs:
        raise InvalidArgument(
            "`inputs` must be a non-empty list of results JSONs, logs or score files, "
            f"got {inputs!r}"
        )
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 0:
        raise InvalidArgument(f"`reps` must be a non-negative integer, got {reps!r}")
    labels = [
        f"<results {k}>" if isinstance(item, Results) else str(item)
        for k, item in enumerate(inputs, start=1)
    ]
    for item in inputs:
        if not isinstance(item, Results) and not Path(item).exists():
            raise InputError(str(item), None, "no such file or directory")
    results_files: list[tuple[str, Results, Path | None]] = []  # (label, results, its file)
    to_score: list[Path] = []
    for item, label in zip(inputs, labels, strict=True):
        if isinstance(item, Results):
            results_files.append((label, item, None))
        elif (loaded := _read_results(Path(item))) is not None:
            results_files.append((label, loaded, Path(item)))
        else:
            to_score.append(Path(item))
    spec = _spec(spec, results_files, to_score)
    metric = check_metric(spec, metric)
    notes: list[str] = []
    named: list[tuple[str, Results, str]] = []  # (source label, results, key of its curves)
    for label, results, _ in results_files:
        _check_spec(label, results, spec)
        named.append((label, results, label))
    if to_score:
        scored = score(spec, [str(p) for p in to_score], ci=ci, reps=reps, seed=seed)
        named.append((", ".join(str(p) for p in to_score), scored, ""))
    logs = _curves(spec, to_score, results_files)
    entries: list[Entry] = []
    taken: set[str] = set()
    provenance: list[tuple[str, Mapping[str, Any]]] = []
    for source, results, curve_key in named:
        provenance.append((source, results.provenance))
        for algorithm, block in results.algorithms.items():
            name = _unique(algorithm, taken)
            if name != algorithm:
                notes.append(
                    f"algorithm {algorithm!r} of {source} is shown as {name!r} "
                    "(an earlier input has the name)"
                )
            taken.add(name)
            curves = tuple(logs.get((curve_key, algorithm), ()))
            entries.append(Entry(name, block, "result", source, curves=curves))
    played = {g for e in entries if e.per_game for g in e.games} or None
    for reference in reference_entries(spec, compare, played):
        name = _unique(reference.name, taken)
        taken.add(name)
        entries.append(reference if name == reference.name else _renamed(reference, name))
    level = float(named[0][1].settings.get("ci", ci)) if named else ci
    if len({float(r.settings.get("ci", ci)) for _, r, _ in named}) > 1:
        notes.append(
            f"the inputs use different confidence levels; intervals are labelled {level:g}"
        )
    return ReportData(
        spec=spec,
        entries=tuple(entries),
        metric=metric,
        level=level,
        reps=reps,
        seed=seed,
        inputs=tuple(labels),
        provenance=tuple(provenance),
        notes=tuple(notes),
    )


def _renamed(entry: Entry, name: str) -> Entry:
    return Entry(
        name, entry.block, entry.kind, entry.source, entry.per_game, entry.errors, entry.curves
    )


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    i = 2
    while f"{name} #{i}" in taken:
        i += 1
    return f"{name} #{i}"


def _read_results(path: Path) -> Results | None:
    """The results of a results JSON; ``None`` for any other input (it is scored instead)."""
    if path.is_dir() or path.suffix.lower() != ".json":
        return None
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None  # the scorer reports it with the file and line
    if not isinstance(data, dict) or data.get("format") != RESULTS_FORMAT:
        return None
    return Results.from_dict(data, str(path))


def _spec(
    spec: str | os.PathLike[str] | Spec | None,
    results: list[tuple[str, Results, Path | None]],
    logs: list[Path],
) -> Spec:
    if isinstance(spec, Spec):
        return spec
    if spec is not None:
        return load_spec(spec)
    if results:
        label, first, _ = results[0]
        name = str(first.spec.get("name"))
        where = f"{label} was scored with spec {name!r}"
    else:
        found = _spec_of_logs(logs)
        empty = [p for p in logs if p.is_dir() and not any(p.rglob("*.jsonl"))]
        if found is None and empty:
            raise InputError(
                str(empty[0]),
                None,
                "has no episode logs (*.jsonl) and no results.json; point the report at a run's "
                "output directory, its logs, or a results or score file",
            )
        if found is None:
            raise InvalidArgument(
                "`spec` must be given for score files (CSV/JSON): they do not name their "
                "protocol; pass --spec <name or YAML file>"
            )
        name, where = found
    try:
        return load_spec(name)
    except UnknownSpec:
        raise UnknownSpec(
            f"{where}, which is not a built-in spec; pass its YAML file with --spec"
        ) from None


def _spec_of_logs(paths: list[Path]) -> tuple[str, str] | None:
    """The spec of the inputs, and where it was read.

    A run's output directory says it in its ``results.json`` (the latest run there: the
    directory may hold several protocols' logs); otherwise the first episode record of the
    first log does.
    """
    for path in paths:
        latest = _read_results(path / "results.json") if path.is_dir() else None
        if latest is not None:
            name = str(latest.spec.get("name"))
            return name, f"{path / 'results.json'} was scored with spec {name!r}"
    for path in _log_files(paths):
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for _, line in zip(range(_PEEK_LINES), handle, strict=False):
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(record, dict) and isinstance(record.get("spec"), str):
                        return record["spec"], f"{path} was written for spec {record['spec']!r}"
        except OSError:
            continue
    return None


def _log_files(paths: Sequence[Path]) -> list[Path]:
    """Episode logs among ``paths``, directories expanded as the scorer expands them."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(path.rglob("*.jsonl")))
        elif path.suffix.lower() == ".jsonl":
            found.append(path)
    return found


def _check_spec(label: str, results: Results, spec: Spec) -> None:
    name, version = results.spec.get("name"), results.spec.get("version")
    if name != spec.name or results.spec.get("hash") != spec.hash:
        short = str(results.spec.get("hash", "")).removeprefix("sha256:")[:12]
        raise InputError(
            label,
            None,
            f"was scored with spec {name!r} v{version} ({short}), but this report is for "
            f"{spec.name!r} v{spec.version} ({spec.short_hash}); report one spec at a time, "
            "or pass the spec file it was scored with (--spec)",
        )


def _curves(
    spec: Spec, scored: list[Path], results: list[tuple[str, Results, Path | None]]
) -> dict[tuple[str, str], list[RunLog]]:
    """Runs of the monitor logs, keyed ``(results file or "", algorithm)``.

    Logs given as inputs were already validated by the scorer; logs found next to a results JSON
    are optional extras: one that cannot be read is skipped.
    """
    out: dict[tuple[str, str], list[RunLog]] = {}
    sources: list[tuple[str, list[Path], set[str] | None]] = [("", _log_files(scored), None)]
    for label, loaded, path in results:
        logs = spec_logs(path.parent, spec.name) if path is not None else []
        sources.append((label, logs, set(loaded.algorithms)))
    for key, logs, wanted in sources:
        for log in logs:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the scorer warns about these logs already
                try:
                    runs = parse_log(spec, log)
                except OtherSpec:  # another protocol's log in the directory (the scorer skipped it)
                    continue
                except ArcadebenchError:
                    if not key:
                        raise
                    continue
            for run in runs:
                if wanted is None or run.algorithm in wanted:
                    out.setdefault((key, run.algorithm), []).append(run)
    return out
