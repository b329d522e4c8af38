"""What a report shows: scored algorithms and published references side by side, as one model.

Every table and figure of the report reads a :class:`ReportData`: the spec, and one
:class:`Entry` per column (an algorithm read from a results JSON or scored from logs, or a
published reference). An entry's ``block`` has the shape of one algorithm of the
``arcadebench-results/2`` format (DEVELOPING.md, "Results"), so results and references are drawn
by the same code; an aggregate-only reference (e.g. Atari-5 Table 3) has no games.

Results of another protocol are never entries of the report's spec: each such protocol is an
:class:`OtherProtocol`, a ``ReportData`` of its own with the differences
:func:`arcadebench.specs.diff` finds, shown in its own section and in no table or figure of the
report's spec.

Classes: Entry, OtherProtocol, ReportData.
Functions: default_metric, metric_label, stat_label, expected_range.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.scoring.normalise import headline_metric, normalise
from arcadebench.benchmarks.scoring.sample_efficiency import ReferenceCurve
from arcadebench.benchmarks.scoring.tables import dig
from arcadebench.errors import InvalidArgument, did_you_mean
from arcadebench.records import RunLog
from arcadebench.specs import Spec, SpecDiff
from arcadebench.specs.model import EMPTY, Normalisation
from arcadebench.specs.statistics import SPLITS, STATISTICS

__all__ = [
    "Entry",
    "OtherProtocol",
    "ReportData",
    "check_metric",
    "default_metric",
    "expected_range",
    "metric_label",
    "stat_label",
]


Interval = tuple[float, float]


@dataclass(frozen=True)
class Entry:
    """One column of the report: an algorithm's scores, or a published reference.

    Attributes:
        name: unique display name in the report.
        block: ``{"games", "aggregates"[, "predictions"][, "checkpoints"]}`` as in the results
            format (``inf`` as a float).
        kind: ``"result"`` (scored inputs) or ``"reference"`` (``--references``).
        source: the input file of a result, the citation of a reference.
        per_game: ``False`` for references that publish aggregates only.
        errors: published error intervals of aggregates, keyed ``"<metric>.<stat>"`` (e.g. Sonic
            Table 1's "score +- error"), shown where a result shows its bootstrap CI.
        curves: the monitor logs' runs (learning curves), when the inputs had logs.
        protocol: for a reference, how its numbers were obtained where that is not the report's
            spec's protocol (a paper's own, no-op or human starts...); ``None``: the spec's own.
    """

    name: str
    block: Mapping[str, Any]
    kind: Literal["result", "reference"] = "result"
    source: str = ""
    per_game: bool = True
    errors: Mapping[str, Interval] = field(default_factory=lambda: EMPTY)
    curves: tuple[RunLog, ...] = ()
    protocol: str | None = None

    @property
    def games(self) -> Mapping[str, Mapping[str, Any]]:
        """Per-game cells (empty for aggregate-only references)."""
        games: Mapping[str, Mapping[str, Any]] = self.block.get("games", EMPTY)
        return games

    @property
    def aggregates(self) -> Mapping[str, Any]:
        """The aggregates object of the results format."""
        aggregates: Mapping[str, Any] = self.block.get("aggregates", EMPTY)
        return aggregates

    def value(self, game: str, metric: str) -> float | None:
        """The per-game ``metric`` (``raw`` or a normalised score), ``None`` when absent."""
        value = self.games.get(game, EMPTY).get(metric)
        return float(value) if isinstance(value, int | float) else None

    def game_interval(self, game: str, metric: str) -> Interval | None:
        """The per-game bootstrap interval of ``metric``, when the game has several runs."""
        bounds = self.games.get(game, EMPTY).get("ci", EMPTY).get(metric)
        return _interval(bounds)

    def aggregate(
        self, metric: str, stat: str | None = None
    ) -> tuple[float | int | None, Interval | None]:
        """An aggregate and its interval: ``("hns", "median")``, or ``("atari5", None)``.

        The interval is the bootstrap CI of a result, or the published error of a reference.
        """
        path = (metric,) if stat is None else (metric, stat)
        value = dig(self.aggregates, path)
        interval = _interval(dig(self.aggregates, ("ci", *path)))
        if interval is None:
            interval = _interval(self.errors.get(".".join(path)))
        number = value if isinstance(value, int | float) and not isinstance(value, bool) else None
        return number, interval

    def runs(self, game: str) -> list[float]:
        """The per-run raw scores of ``game`` (empty when absent)."""
        runs = self.games.get(game, EMPTY).get("runs", [])
        return [float(r) for r in runs if isinstance(r, int | float) and not isinstance(r, bool)]


def _interval(value: object) -> Interval | None:
    """``value`` as an interval when it is a pair of numbers (a JSON ``[low, high]``), else None."""
    if (
        isinstance(value, Sequence)
        and not isinstance(value, str)
        and len(value) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
    ):
        return float(value[0]), float(value[1])
    return None


@dataclass(frozen=True)
class OtherProtocol:
    """Results of another protocol than the report's: reported apart, never ranked with its own.

    Attributes:
        data: those results as a report of their own (their spec, entries, metric, notes).
        diff: how their protocol differs from the report's (``diff(report spec, their spec)``).
    """

    data: ReportData
    diff: SpecDiff


@dataclass(frozen=True)
class ReportData:
    """Everything one report shows.

    Attributes:
        spec: the protocol the entries were scored against.
        entries: results first (input order), then references (``--references`` order).
        metric: the per-game metric of the score figures (see :func:`default_metric`).
        level: confidence level of the intervals (e.g. ``0.95``).
        reps: bootstrap repetitions for the performance-profile bands (``0``: none).
        seed: seed of those repetitions.
        inputs: the input paths, as given.
        provenance: ``(source, provenance mapping)`` of every scored input.
        notes: things the reader should know (renamed algorithms, skipped logs...).
        others: results of other protocols, each reported in its own section.
        comparisons: P(X > Y) of every pair of results, in :attr:`metric` (the results
            format's comparison objects, :mod:`arcadebench.benchmarks.scoring.improvement`).
        reference_curves: the published curves of the references compared against
            (``--references``), scored on the results' games.
    """

    spec: Spec
    entries: tuple[Entry, ...]
    metric: str
    level: float = 0.95
    reps: int = 2000
    seed: int = 0
    inputs: tuple[str, ...] = ()
    provenance: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    notes: tuple[str, ...] = ()
    others: tuple[OtherProtocol, ...] = ()
    comparisons: tuple[Mapping[str, Any], ...] = ()
    reference_curves: tuple[ReferenceCurve, ...] = ()

    @property
    def protocol(self) -> str:
        """Short protocol name for titles, the spec's id prefix and version (``SABER v1``)."""
        return f"{self.spec.id_prefix} v{self.spec.version}"

    def colour_index(self, name: str) -> int:
        """The entry's place in :attr:`entries`: its colour in every figure.

        Figures draw subsets of the entries (those with per-game scores, with a curve...), and
        an algorithm keeps its colour across all of them; a name that is no entry (a published
        curve) follows the entries.
        """
        names = [e.name for e in self.entries]
        return names.index(name) if name in names else len(names)

    def per_game_entries(self) -> list[Entry]:
        """Entries with per-game scores."""
        return [e for e in self.entries if e.per_game and e.games]

    def games(self) -> list[str]:
        """Games any entry has, in the spec's order (unknown names last, in input order)."""
        present = dict.fromkeys(g for entry in self.per_game_entries() for g in entry.games)
        ordered = [g for g in self.spec.games if g in present]
        return ordered + [g for g in present if g not in set(self.spec.games)]

    def normalisation(self, metric: str) -> Normalisation | None:
        """The spec's definition of a normalised ``metric`` (``None`` for raw scores)."""
        return next((n for n in self.spec.scoring.normalised if n.name == metric), None)

    def run_matrix(self, entry: Entry, games: Sequence[str]) -> NDArray[np.float64]:
        """``(runs, games)`` per-run scores in :attr:`metric`, NaN-padded (the scoring contract).

        Runs are normalised with the spec's constants exactly as the scorer does, so the
        profile's per-game means equal the per-game table. A game without runs is all NaN.
        """
        columns = [self._run_scores(entry, g) for g in games]
        height = max((len(c) for c in columns), default=0)
        out = np.full((max(height, 1), len(games)), np.nan)
        for j, column in enumerate(columns):
            out[: len(column), j] = column
        return out

    def _run_scores(self, entry: Entry, game: str) -> NDArray[np.float64]:
        runs = np.asarray(entry.runs(game), dtype=np.float64)
        if runs.size == 0:  # e.g. a results file without runs: the per-game mean is one run
            value = entry.value(game, self.metric)
            return np.asarray([] if value is None else [value], dtype=np.float64)
        norm = self.normalisation(self.metric)
        if norm is None:
            return runs
        constants = self.spec.constants.get(game)
        random = constants.random if constants is not None else None
        reference = constants.reference(norm.reference) if constants is not None else None
        if random is None or reference is None:
            return np.asarray([], dtype=np.float64)
        return normalise(runs, random, reference, norm.floor, norm.cap)


def default_metric(spec: Spec) -> str:
    """The per-game metric a report plots by default: the spec's headline normalised score.

    The score the spec classifies or counts breakthroughs of (SABER, HWR: HWRNS), else its first
    normalised score (Atari-5: HNS), else ``raw`` (Sonic): the scorer's
    :func:`~arcadebench.benchmarks.scoring.normalise.headline_metric`.
    """
    return headline_metric(spec)


def check_metric(spec: Spec, metric: str | None) -> str:
    """``metric`` if the spec defines it (``None``: :func:`default_metric`), else an error."""
    if metric is None:
        return default_metric(spec)
    choices = [n.name for n in spec.scoring.normalised] + ["raw"]
    if metric not in choices:
        raise InvalidArgument(
            f"`metric` must be one of {', '.join(choices)} for the {spec.name!r} spec, got "
            f"{metric!r}.{did_you_mean(metric, choices)}"
        )
    return metric


def metric_label(spec: Spec, metric: str) -> str:
    """Axis label with units: ``HNS (%; 0 = random, 100 = human)`` or ``raw score (points)``."""
    norm = next((n for n in spec.scoring.normalised if n.name == metric), None)
    if norm is None:
        return f"{SPLITS[metric].name if metric in SPLITS else metric} (points)"
    clip = f", capped at {norm.cap:g}" if norm.cap is not None else ""
    return f"{metric.upper()} (%; 0 = random, 100 = {norm.reference.replace('_', ' ')}{clip})"


def stat_label(metric: str, stat: str | None) -> str:
    """Readable aggregate name, e.g. ``HNS IQM``, ``Atari-5 estimate``, ``test-level score mean``.

    Example:
        >>> stat_label("hns", "iqm"), stat_label("atari3_val", None)
        ('HNS IQM', 'Atari-3-Val estimate')
    """
    if stat is None:
        if metric.startswith("atari"):
            name = metric.replace("atari", "Atari-").replace("_val", "-Val")
            return f"{name} estimate"
        return metric.replace("_", " ")
    head = SPLITS[metric].name if metric in SPLITS else metric.upper()
    name = STATISTICS[stat].name if stat in STATISTICS else stat.replace("_", " ")
    return f"{head} {name}"


def expected_range(estimate: float, relative_error: float) -> Interval:
    """The range an Atari-X estimate's error typically spans (Atari-5 Table 2).

    Table 2's relative error is ln(10) x the mean absolute error of log10(1 + HNS), i.e. the mean
    absolute error of ln(1 + HNS); the range is ``(1 + s) exp(-+e) - 1``.

    Example:
        >>> [round(v, 1) for v in expected_range(100.0, 10.0)]
        [90.4, 110.6]
    """
    if not math.isfinite(estimate):
        return (estimate, estimate)
    factor = math.exp(relative_error / 100.0)
    return ((1.0 + estimate) / factor - 1.0, (1.0 + estimate) * factor - 1.0)
