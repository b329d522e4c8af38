"""Read a report's inputs: results JSONs as they are, everything else scored first.

``arcadebench report`` takes results JSONs (``arcadebench score --json``, a run's
``results.json``), episode logs and log directories, and score files (CSV/JSON). Results JSONs
are read with :meth:`Results.from_json`; all other inputs go through one call of
:func:`arcadebench.score`, so a report never scores differently from the scorer. Monitor logs
are also kept for the learning curves: the logs given, and for a results JSON the runner's logs
next to it (``<dir>/<agent>/<spec>/<game>/<run>.jsonl``). A run's output directory may hold
several protocols' logs: its ``results.json`` names the spec it is reported under, unless
``--spec`` does (else the first input's spec).

Results of other protocols (results JSONs scored with another built-in spec, logs written for
one) are never mixed with the report's: each protocol's are scored with its own spec and become an
:class:`~arcadebench.benchmarks.report.report_data.OtherProtocol`, reported in a section of its
own with the differences :func:`arcadebench.specs.diff` finds. Results of a spec this
installation does not have (another version, a spec file not given) are refused.

Functions: load_report_data.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcadebench._table import count
from arcadebench.benchmarks.report.references import reference_entries
from arcadebench.benchmarks.report.report_data import (
    Entry,
    OtherProtocol,
    ReportData,
    check_metric,
    default_metric,
)
from arcadebench.benchmarks.scoring.improvement import compare_pair, comparison_seed
from arcadebench.benchmarks.scoring.inputs import spec_of_log
from arcadebench.benchmarks.scoring.log_scores import group_name
from arcadebench.benchmarks.scoring.results import Results, score
from arcadebench.benchmarks.scoring.sample_efficiency import ReferenceCurve, curve_name
from arcadebench.benchmarks.scoring.score_files import RESULTS_FORMATS
from arcadebench.errors import (
    ArcadebenchError,
    InputError,
    InvalidArgument,
    OtherSpec,
    UnknownSpec,
    warn_user,
)
from arcadebench.records import LogWarning, RunLog, parse_log, spec_logs
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.diff import diff

__all__ = ["load_report_data"]

Named = tuple[str, Results, str]
"""``(source label, results, key of its learning curves)`` of one scored input."""


def load_report_data(
    inputs: Sequence[str | os.PathLike[str] | Results],
    *,
    spec: str | os.PathLike[str] | Spec | None = None,
    references: Sequence[str] | str | None = (),
    metric: str | None = None,
    ci: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
    compare: Sequence[str] | None = None,
) -> ReportData:
    """Read, score and gather everything one report shows.

    Args:
        inputs: results JSONs, episode logs (``.jsonl``), log directories, score CSV/JSON
            files, or :class:`~arcadebench.benchmarks.scoring.results.Results` objects (e.g. what
            :func:`arcadebench.evaluate` returns).
        spec: the spec (name, YAML file or loaded); default: the one the inputs name.
        references: published references shown alongside, by name (see
            :mod:`~arcadebench.benchmarks.report.references`), or ``"none"``; ``None``: the
            first four the spec has of its own protocol (``Spec.default_references``).
        compare: deprecated: the old name of ``references`` (its names are added to them).
        metric: per-game metric of the figures (default: the spec's headline metric).
        ci: confidence level for inputs scored here.
        reps: bootstrap repetitions for inputs scored here and the profile bands.
        seed: bootstrap seed.

    Results of other protocols than ``spec`` (results JSONs, logs) are scored with their own
    spec and returned in :attr:`ReportData.others`, one per protocol, never among the entries.

    Raises:
        InputError: a missing or malformed input, or results of a spec this installation does
            not have (another version of a built-in spec, a spec file): report those with it.
        UnknownSpec: the spec cannot be found (the message says to pass ``--spec``).
        InvalidArgument: bad ``inputs``, ``metric``, ``ci``, ``reps`` or ``seed``, or a
            ``spec`` that no input was scored with.
    """
    if isinstance(inputs, str | os.PathLike | Results) or not inputs:
        raise InvalidArgument(
            "`inputs` must be a non-empty list of results JSONs, logs or score files, "
            f"got {inputs!r}"
        )
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 0:
        raise InvalidArgument(f"`reps` must be a non-negative integer, got {reps!r}")
    if compare is not None:
        warnings.warn(
            "`compare` is deprecated: pass `references` (the same names)",
            DeprecationWarning,
            stacklevel=2,
        )
        references = [*_reference_names(references or ()), *compare]
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
    groups: dict[str, _Group] = {}  # other protocols, by spec hash, in input order
    mine: list[tuple[str, Results, Path | None]] = []
    for label, results, path in results_files:
        other = _protocol_of(label, results, spec)
        if other is None:
            mine.append((label, results, path))
        else:
            groups.setdefault(other.hash, _Group(other)).results.append((label, results))
    own_logs, own_sources, other_logs = _split_logs(to_score, spec)
    notes: list[str] = []
    for name, logs in other_logs.items():
        given = [log for log, explicit in logs if explicit]
        try:
            other = load_spec(name)
        except UnknownSpec:
            if given:
                raise InputError(
                    str(given[0]),
                    None,
                    f"was written for spec {name!r}, which is not built in, so it cannot be "
                    "reported beside the other inputs; report it on its own with --spec <its "
                    "spec file>",
                ) from None
            _left_out(
                notes,
                f"the inputs' directories hold {count(len(logs), 'log')} of spec {name!r}, which "
                "is not built in, so they are not reported (report them on their own with --spec "
                "<its spec file>)",
            )
            continue
        group = groups.setdefault(other.hash, _Group(other))
        group.logs.extend(given)
        group.found.extend(log for log, explicit in logs if not explicit)
    if not mine and not own_logs:
        found = ", ".join(g.spec.name for g in groups.values())
        raise InvalidArgument(
            f"`spec` must be the protocol of at least one input, got {spec.name!r} (the inputs "
            f"were scored with {found}); drop --spec, or add results of {spec.name!r}"
        )
    named: list[Named] = [(label, results, label) for label, results, _ in mine]
    if own_logs:  # with the default sample-efficiency curve: the logs are at hand here only
        # (a protocol scored after training has none: one score per run, after its training)
        curve = spec.evaluation.scored != "after_training"
        scored = score(  # no comparisons: _comparisons gives every input's pairs below
            spec, [str(p) for p in own_logs], ci=ci, reps=reps, seed=seed, curve=curve, compare=()
        )
        named.append((", ".join(map(str, own_sources)), scored, ""))
    curves = _curves(spec, own_logs, mine)
    entries = _entries(named, curves, notes)
    played = {g for e in entries if e.per_game for g in e.games} or None
    taken = {e.name for e in entries}
    names = spec.default_references() if references is None else _reference_names(references)
    for reference in reference_entries(spec, names, played):
        name = _unique(reference.name, taken)
        taken.add(name)
        entries.append(dataclasses.replace(reference, name=name))
    level = float(named[0][1].settings.get("ci", ci)) if named else ci
    if len({float(r.settings.get("ci", ci)) for _, r, _ in named}) > 1:
        notes.append(
            f"the inputs use different confidence levels; intervals are labelled {level:g}"
        )
    others: list[OtherProtocol] = []
    for group in groups.values():
        try:
            others.append(group.report(spec, ci=ci, reps=reps, seed=seed))
        except ArcadebenchError as error:
            if group.results or group.logs:  # inputs named on their own: say what is wrong
                raise
            # logs that only share a directory with the inputs (a run's output directory holding
            # several protocols' runs, one still training): the report goes on without them
            _left_out(
                notes,
                f"the inputs' directories hold {count(len(group.found), 'log')} of "
                f"{group.spec.name} that cannot be reported: {error}",
            )
    data = ReportData(
        spec=spec,
        entries=tuple(entries),
        metric=metric,
        level=level,
        reps=reps,
        seed=seed,
        inputs=tuple(labels),
        provenance=tuple((source, results.provenance) for source, results, _ in named),
        notes=tuple(notes),
        others=tuple(others),
    )
    return dataclasses.replace(
        data, comparisons=_comparisons(data), reference_curves=_reference_curves(data)
    )


def _reference_names(references: Sequence[str] | str) -> list[str]:
    """The names of ``references``: ``"none"`` (alone) is none.

    Example:
        >>> _reference_names("none"), _reference_names(["human", "MuZero"])
        ([], ['human', 'MuZero'])
    """
    names = [references] if isinstance(references, str) else list(references)
    if not all(isinstance(n, str) for n in names):
        raise InvalidArgument(f"`references` must be reference names or 'none', got {names!r}")
    if any(n.strip().lower() == "none" for n in names):
        if len(names) > 1:
            raise InvalidArgument(
                f"`references` must be reference names or 'none' alone, got {names!r}"
            )
        return []
    return names


def _comparisons(data: ReportData) -> tuple[Mapping[str, Any], ...]:
    """P(X > Y) of every pair of results, as the scorer computes it, whatever input each is from.

    The same metric, games, runs and bootstrap stream as ``arcadebench score`` gives a pair
    (:func:`~arcadebench.benchmarks.scoring.improvement.comparison_seed`), so a report of one
    results file shows the file's numbers. References are not compared: their per-game scores
    are means over runs, not runs.
    """
    games = data.games()
    results = [e for e in data.entries if e.kind == "result" and e.per_game and e.games]
    found = []
    for x, y in itertools.combinations(results, 2):
        compared = compare_pair(
            (x.name, games, data.run_matrix(x, games)),
            (y.name, games, data.run_matrix(y, games)),
            metric=data.metric,
            level=data.level,
            reps=data.reps,
            seed=comparison_seed(data.seed, x.name, y.name),
        )
        if compared is not None:
            found.append(compared)
    return tuple(found)


def _reference_curves(data: ReportData) -> tuple[ReferenceCurve, ...]:
    """The published curves of the references compared against, on the results' games."""
    wanted = {curve_name(e.name) for e in data.entries if e.kind == "reference"}
    results = {e.name: e.block for e in data.entries if e.kind == "result" and e.games}
    if not wanted or not results:
        return ()
    together = Results(spec={}, settings={}, algorithms=results, provenance={}, protocol=data.spec)
    return tuple(c for c in together.reference_curves() if c.name in wanted)


def _left_out(notes: list[str], note: str) -> None:
    """Say on the page and on the console that logs found beside the inputs are left out."""
    notes.append(note)
    warn_user(note, LogWarning)


def _entries(
    named: Sequence[Named], logs: Mapping[tuple[str, str], list[RunLog]], notes: list[str]
) -> list[Entry]:
    """One entry per algorithm of every input, renamed where an earlier input has the name."""
    entries: list[Entry] = []
    taken: set[str] = set()
    for source, results, curve_key in named:
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
    return entries


@dataclass
class _Group:
    """The inputs of one other protocol: results JSONs as they are, logs to score with it.

    :meth:`report` makes them an :class:`OtherProtocol`: a report of their own, without
    references or learning curves (the figures are the report's spec's), and the diff.
    """

    spec: Spec
    results: list[tuple[str, Results]] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)  # named as inputs
    found: list[Path] = field(default_factory=list)  # found in an input directory

    def report(self, main: Spec, *, ci: float, reps: int, seed: int) -> OtherProtocol:
        named: list[Named] = [(label, results, "") for label, results in self.results]
        logs = [*self.logs, *self.found]
        if logs:
            scored = score(self.spec, [str(p) for p in logs], ci=ci, reps=reps, seed=seed)
            named.append((", ".join(map(str, logs)), scored, ""))
        notes: list[str] = []
        entries = _entries(named, {}, notes)
        data = ReportData(
            spec=self.spec,
            entries=tuple(entries),
            metric=default_metric(self.spec),
            level=float(named[0][1].settings.get("ci", ci)),
            reps=reps,
            seed=seed,
            inputs=tuple(source for source, _, _ in named),
            provenance=tuple((source, results.provenance) for source, results, _ in named),
            notes=tuple(notes),
        )
        return OtherProtocol(data, diff(main, self.spec))


def _protocol_of(label: str, results: Results, spec: Spec) -> Spec | None:
    """``None`` for results of ``spec``; the spec of results of another built-in protocol.

    Raises:
        InputError: results of a spec this installation does not have (another version of a
            built-in spec, or a spec file): they can be reported with that file as ``--spec``.
    """
    name, version = results.spec.get("name"), results.spec.get("version")
    if name == spec.name and results.spec.get("hash") == spec.hash:
        return None
    if results.protocol is not None:
        return results.protocol
    short = str(results.spec.get("hash", "")).removeprefix("sha256:")[:12]
    raise InputError(
        label,
        None,
        f"was scored with spec {name!r} v{version} ({short}), which this installation does not "
        f"have (a spec file, or another version of it), so it cannot be reported beside "
        f"{spec.name!r} v{spec.version} ({spec.short_hash}); report it with --spec <the spec "
        f"file it was scored with>, and see how the two differ with `arcadebench diff <that "
        f"file> {spec.name}`",
    )


def _split_logs(
    paths: Sequence[Path], spec: Spec
) -> tuple[list[Path], list[Path], dict[str, list[tuple[Path, bool]]]]:
    """What to score with ``spec``, the inputs it comes from, and the logs of each other spec.

    A directory holding logs of other specs too is replaced by its logs of ``spec``, so that the
    scorer reads only those (and says nothing of the others, which get their own section). Each
    other log says whether it was named as an input (else it was found in a directory).
    """
    own: list[Path] = []
    sources: list[Path] = []
    others: dict[str, list[tuple[Path, bool]]] = {}
    for path in paths:  # a score file has no logs: it names no protocol; it is the report's
        found = {log: spec_of_log(log) for log in _log_files([path])}
        foreign = [log for log, name in found.items() if name not in (None, spec.name)]
        if not foreign:
            own.append(path)
            sources.append(path)
            continue
        mine = [log for log in found if log not in foreign]
        own.extend(mine)
        sources.extend([path] if mine else [])
        for log in foreign:
            others.setdefault(str(found[log]), []).append((log, log == path))
    return own, sources, others


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
    if not isinstance(data, dict) or data.get("format") not in RESULTS_FORMATS:
        return None  # a newer format is refused by the scorer, with what to do
    return Results.from_json(path)  # its inputs from here, not from the file's folder


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
        written = spec_of_log(path)
        if written is not None:
            return written, f"{path} was written for spec {written!r}"
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


def _curves(
    spec: Spec, scored: list[Path], results: list[tuple[str, Results, Path | None]]
) -> dict[tuple[str, str], list[RunLog]]:
    """Runs of the monitor logs, keyed ``(results file or "", algorithm)``.

    The algorithm is the name the scorer gives the run (:func:`group_name`): a run that changed
    a setting is scored, and shown, apart from the protocol's own.

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
                name = group_name(run)
                if wanted is None or name in wanted:
                    out.setdefault((key, name), []).append(run)
    return out
