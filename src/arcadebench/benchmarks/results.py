"""Score raw results against a spec (:func:`score`) and carry them (:class:`Results`).

:func:`score` reads the inputs (:mod:`~arcadebench.benchmarks.inputs`, episode logs through
:mod:`~arcadebench.benchmarks.records`), applies the spec's rules with the pure functions of
:mod:`~arcadebench.benchmarks.scoring`, and bootstraps confidence intervals
(:mod:`~arcadebench.benchmarks.bootstrap`) from one statistic function per block, so a point
estimate and its interval always come from the same code. :class:`Results` writes the
``arcadebench-results/1`` JSON of DEVELOPING.md, a tidy CSV and a plain-text table, and reads the
JSON back for reports.

Per game, a normalised score is the mean over runs of the per-run normalised scores (rliable's
convention; identical to normalising the mean raw score unless the metric is capped). With
several runs per game, every aggregate, Atari-X estimate and per-game score gets a stratified
bootstrap percentile interval.

Classes: Results.
Functions: score.
"""

from __future__ import annotations

import csv
import importlib.metadata
import io
import json
import math
import os
import platform
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from arcadebench._table import render_table
from arcadebench.benchmarks.bootstrap import bootstrap_distribution, percentile_interval
from arcadebench.benchmarks.inputs import RESULTS_FORMAT, RunScores, read_scores
from arcadebench.benchmarks.scoring import (
    AGGREGATES,
    ScoringError,
    breakthroughs,
    class_histogram,
    class_index,
    game_means,
    game_time_days,
    normalised_score,
    predicted_scores,
    subset_score,
)
from arcadebench.errors import InputError, UnknownSpec
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.model import Normalisation, Published

__all__ = ["Results", "score"]

_VERSIONED = ("arcadebench", "numpy", "gymnasium", "ale-py", "stable-retro")


# -- the API ---------------------------------------------------------------------------------------


def score(
    spec: str | os.PathLike | Spec,
    scores: object,
    *,
    ci: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
    command: str | None = None,
) -> Results:
    """Score raw results against a protocol: every number the spec's paper reports, with CIs.

    Args:
        spec: a built-in spec name (``"saber"``), a YAML file or a loaded :class:`Spec`.
        scores: a score CSV/JSON, an episode log (``.jsonl``) or a directory of logs, a list of
            those, or a mapping ``{"<algorithm>": {"<game>": score | [scores per run]}}``.
        ci: confidence level of the stratified bootstrap intervals (percentile method).
        reps: bootstrap repetitions; ``0`` skips the intervals.
        seed: seed of the bootstrap generator (each algorithm and checkpoint derives its own).
        command: the command line, recorded in the provenance.

    Returns:
        The :class:`Results`; intervals appear only where some game has at least two runs.

    Raises:
        ScoringError: ``ci``, ``reps`` or ``seed`` out of range.
        InputError: a malformed score file or log (file, line and value named).
        UnknownSpec: an unknown spec name.

    Example:
        >>> results = score("atari5", {"me": {"Battle Zone": 37187.5, "Pong": [14.6, -20.71]}}, reps=0)
        >>> results.algorithms["me"]["games"]["pong"]["hns"], results.algorithms["me"]["aggregates"]["hns"]["median"]
        (50.0, 75.0)
    """
    if isinstance(ci, bool) or not isinstance(ci, int | float) or not 0.0 < ci < 1.0:
        raise ScoringError(f"`ci` must be a number strictly between 0 and 1, got {ci!r}")
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 0:
        raise ScoringError(f"`reps` must be a non-negative integer (0: no intervals), got {reps!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ScoringError(f"`seed` must be a non-negative integer, got {seed!r}")
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    raw = read_scores(spec, scores)
    algorithms: dict[str, dict] = {}
    for name, data in raw.algorithms.items():
        entry = _score_block(spec, data.games, ci=ci, reps=reps, seed=_block_seed(seed, name, None))
        if data.checkpoints:
            entry["checkpoints"] = {
                str(checkpoint): _score_block(spec, games, ci=ci, reps=reps, seed=_block_seed(seed, name, checkpoint))
                for checkpoint, games in sorted(data.checkpoints.items())
            }
        algorithms[name] = entry
    provenance = _provenance(raw.sources, command)
    return Results(
        spec={"name": spec.name, "version": spec.version, "hash": spec.hash},
        settings={"ci": float(ci), "reps": reps, "seed": seed},
        algorithms=algorithms,
        provenance=provenance,
        published=spec.published,
    )


def _block_seed(seed: int, algorithm: str, checkpoint: int | None) -> np.random.SeedSequence:
    """Each (algorithm, checkpoint) gets its own stream: adding an algorithm changes no other CI."""
    return np.random.SeedSequence([seed, zlib.crc32(algorithm.encode("utf-8")), checkpoint or 0])


def _provenance(sources: tuple[str, ...], command: str | None) -> dict[str, Any]:
    versions: dict[str, Any] = {}
    for package in _VERSIONED:
        try:
            versions[package.replace("-", "_")] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    versions["python"] = platform.python_version()
    versions["inputs"] = list(sources)
    if command is not None:
        versions["command"] = command
    return versions


def subset_key(name: str) -> str:
    """JSON key of a subset: ``Atari-5`` -> ``atari5``, ``Atari-3-Val`` -> ``atari3_val``."""
    return re.sub(r"-(?=\d)", "", name.lower()).replace("-", "_")


# -- one block: the games and aggregates of one algorithm at one checkpoint -----------------------


@dataclass
class _Target:
    """A set of per-run scores that aggregates are computed over (a metric, or raw on a split)."""

    key: str
    columns: np.ndarray
    norm: Normalisation | None = None
    random: np.ndarray | None = None
    reference: np.ndarray | None = None

    def transform(self, raw: np.ndarray) -> np.ndarray:
        selected = raw[..., self.columns]
        if self.norm is None:
            return selected
        return normalised_score(selected, self.random, self.reference, self.norm.floor, self.norm.cap)


@dataclass
class _Layout:
    """Positions of the named outputs in the statistic's flat vector."""

    slots: dict[tuple, slice] = field(default_factory=dict)
    size: int = 0

    def add(self, key: tuple, n: int) -> None:
        self.slots[key] = slice(self.size, self.size + n)
        self.size += n


def _targets(spec: Spec, names: list[str]) -> list[_Target]:
    if spec.scoring.normalised:
        targets = []
        for norm in spec.scoring.normalised:
            random = np.array([_constant(spec, g, "random") for g in names])
            reference = np.array([_constant(spec, g, norm.reference) for g in names])
            columns = np.flatnonzero(np.isfinite(random) & np.isfinite(reference))
            targets.append(_Target(norm.name, columns, norm, random[columns], reference[columns]))
        return targets
    targets = [_Target("raw", np.arange(len(names)))]
    for split in ("train", "test"):
        columns = [i for i, g in enumerate(names) if g in spec.levels and spec.levels[g].split == split]
        if columns:
            targets.append(_Target(split, np.array(columns)))
    return targets


def _constant(spec: Spec, game: str, column: str) -> float:
    constants = spec.constants.get(game)
    value = constants.reference(column) if constants is not None else None
    return np.nan if value is None else float(value)


def _hns_target(spec: Spec, targets: list[_Target]) -> _Target | None:
    """The human-normalised metric the Atari-5 estimates use (Table 12 constants)."""
    for target in targets:
        if target.norm is not None and target.norm.reference == "human" and target.norm.cap is None:
            if target.norm.floor is None:
                return target
    return None


def _score_block(
    spec: Spec, games: Mapping[str, RunScores], *, ci: float, reps: int, seed: np.random.SeedSequence
) -> dict[str, Any]:
    names = list(games)
    n_runs = max((len(games[g].scores) for g in names), default=0)
    raw = np.full((max(n_runs, 1), len(names)), np.nan)
    for j, game in enumerate(names):
        raw[: len(games[game].scores), j] = games[game].scores
    targets = _targets(spec, names)
    hns = _hns_target(spec, targets)
    position = {t.key: {names[c]: i for i, c in enumerate(t.columns)} for t in targets}

    subsets = []
    if hns is not None:
        for subset in spec.subsets.values():
            if all(g in position[hns.key] for g in subset.games):
                index = np.array([position[hns.key][g] for g in subset.games])
                subsets.append((subset_key(subset.name), index, subset.coefficients))

    layout = _Layout()
    layout.add(("game", "raw"), len(names))
    for t in targets:
        layout.add(("game", t.key), len(t.columns))
        if len(t.columns):
            for stat in spec.scoring.aggregates:
                layout.add(("agg", t.key, stat), 1)
    for key, _, _ in subsets:
        layout.add(("subset", key), 1)

    def statistic(x: np.ndarray) -> np.ndarray:
        parts = [game_means(x)]
        per_game = {}
        for t in targets:
            s = t.transform(x)
            per_game[t.key] = game_means(s)
            parts.append(per_game[t.key])
            if len(t.columns):
                for stat in spec.scoring.aggregates:
                    if stat == "optimality_gap":
                        value = AGGREGATES[stat](s, spec.scoring.optimality_gap_threshold)
                    else:
                        value = AGGREGATES[stat](s)
                    parts.append(np.asarray(value)[..., None])
        for _, index, coefficients in subsets:
            parts.append(np.asarray(subset_score(per_game[hns.key][..., index], coefficients))[..., None])
        return np.concatenate(parts, axis=-1)

    point = statistic(raw)
    interval = None
    if reps > 0 and any(len(games[g].scores) >= 2 for g in names):
        samples = bootstrap_distribution(raw, statistic, reps=reps, seed=np.random.default_rng(seed))
        interval = percentile_interval(samples, ci)

    def value(key: tuple, i: int = 0) -> float:
        return float(point[layout.slots[key]][i])

    def bounds(key: tuple, i: int = 0) -> list[float]:
        s = layout.slots[key]
        return [float(interval[0, s][i]), float(interval[1, s][i])]

    block_games: dict[str, dict[str, Any]] = {}
    for j, game in enumerate(names):
        runs = games[game]
        entry: dict[str, Any] = {"raw": value(("game", "raw"), j), "runs": list(runs.scores)}
        episodes = [e for e in runs.episodes if e is not None]
        if episodes:
            entry["episodes"] = int(sum(episodes))
        frames = [f for f in runs.frames if f is not None]
        if frames:
            entry["frames"] = float(np.mean(frames))
        for t in targets:
            if t.norm is not None and game in position[t.key]:
                entry[t.key] = value(("game", t.key), position[t.key][game])
        if spec.scoring.classes_of and game in position.get(spec.scoring.classes_of, {}):
            metric = entry[spec.scoring.classes_of]
            entry["class"] = spec.scoring.classes[int(class_index([metric], spec.scoring.classes)[0])][0]
        if interval is not None and len(runs.scores) >= 2:
            entry["ci"] = {"raw": bounds(("game", "raw"), j)}
            for t in targets:
                if t.norm is not None and game in position[t.key]:
                    entry["ci"][t.key] = bounds(("game", t.key), position[t.key][game])
        block_games[game] = entry

    aggregates: dict[str, Any] = {}
    for t in targets:
        stats: dict[str, Any] = {}
        if len(t.columns):
            stats = {stat: value(("agg", t.key, stat)) for stat in spec.scoring.aggregates}
        stats["n_games"] = int(len(t.columns))
        aggregates[t.key] = stats
    per_game = {t.key: point[layout.slots[("game", t.key)]] for t in targets}
    if spec.scoring.breakthrough_of and spec.scoring.breakthrough_of in per_game:
        key = "hwrb" if spec.scoring.breakthrough_of == "hwrns" else "breakthroughs"
        aggregates[key] = breakthroughs(per_game[spec.scoring.breakthrough_of], spec.scoring.breakthrough_threshold)
    if spec.scoring.classes_of and spec.scoring.classes_of in per_game:
        aggregates["classes"] = class_histogram(per_game[spec.scoring.classes_of], spec.scoring.classes)
    for key, _, _ in subsets:
        aggregates[key] = value(("subset", key))
    frames = [block_games[g]["frames"] for g in names if "frames" in block_games[g]]
    if frames and (spec.scoring.learning_efficiency or spec.scoring.game_time_frames_per_day):
        mean_frames = float(np.mean(frames))
        aggregates["frames"] = mean_frames
        if spec.scoring.game_time_frames_per_day:
            aggregates["game_time_days"] = float(game_time_days(mean_frames, spec.scoring.game_time_frames_per_day))
        if spec.scoring.learning_efficiency and mean_frames > 0:
            aggregates["learning_efficiency"] = {
                t.key: {s: v / mean_frames for s, v in aggregates[t.key].items() if s != "n_games"}
                for t in targets if t.norm is not None and len(t.columns)
            }
    aggregates["missing"] = [g for g in spec.default_games if g not in games]
    if interval is not None:
        cis: dict[str, Any] = {}
        for t in targets:
            if len(t.columns):
                cis[t.key] = {stat: bounds(("agg", t.key, stat)) for stat in spec.scoring.aggregates}
        for key, _, _ in subsets:
            cis[key] = bounds(("subset", key))
        aggregates["ci"] = cis

    block: dict[str, Any] = {"games": block_games, "aggregates": aggregates}
    predictions = {}
    if hns is not None:
        for model in spec.predictions.values():
            if all(g in position[hns.key] for g in model.inputs):
                inputs = [block_games[g][hns.key] for g in model.inputs]
                predictions[subset_key(model.name)] = predicted_scores(inputs, model.models)
    if predictions:
        block["predictions"] = predictions
    return block


# -- the Results object ---------------------------------------------------------------------------


def _jsonable(value: Any) -> Any:
    """JSON-ready copy: ``inf`` as ``"inf"``, numpy scalars as Python, ``NaN`` entries dropped."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()
                if not (isinstance(v, float) and math.isnan(v))}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def _from_jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _from_jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_from_jsonable(v) for v in value]
    if value == "inf":
        return math.inf
    if value == "-inf":
        return -math.inf
    return value


@dataclass(frozen=True)
class Results:
    """Scores of one or more algorithms under one spec: the ``arcadebench-results/1`` document.

    Attributes:
        spec: ``{"name", "version", "hash"}`` of the spec scored against.
        settings: ``{"ci", "reps", "seed"}`` of the bootstrap.
        algorithms: per algorithm ``{"games", "aggregates"[, "predictions"][, "checkpoints"]}``
            (the shape in DEVELOPING.md, "Results"), with Python floats (``inf`` allowed).
        provenance: package versions, inputs and command line.
        published: the spec's published reference results (shown by :meth:`table`).
    """

    spec: Mapping[str, Any]
    settings: Mapping[str, Any]
    algorithms: Mapping[str, Mapping[str, Any]]
    provenance: Mapping[str, Any]
    published: Published | None = field(default=None, compare=False)

    # -- JSON --

    def to_dict(self) -> dict[str, Any]:
        """The JSON document as Python objects (``inf`` already written as ``"inf"``)."""
        return _jsonable({
            "format": RESULTS_FORMAT,
            "spec": dict(self.spec),
            "settings": dict(self.settings),
            "algorithms": {k: dict(v) for k, v in self.algorithms.items()},
            "provenance": dict(self.provenance),
        })

    def to_json(self, path: str | os.PathLike | None = None, *, indent: int | None = 2) -> str:
        """The ``arcadebench-results/1`` JSON text; also written to ``path`` if given."""
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False) + "\n"
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], file: str = "<results>") -> Results:
        """Rebuild from :meth:`to_dict` output (``"inf"`` strings become floats)."""
        if not isinstance(data, Mapping) or data.get("format") != RESULTS_FORMAT:
            found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
            raise InputError(file, None, f'is not an {RESULTS_FORMAT} document ("format" is {found!r})')
        for key in ("spec", "settings", "algorithms", "provenance"):
            if not isinstance(data.get(key), Mapping):
                raise InputError(file, None, f'has no "{key}" object')
        for name, entry in data["algorithms"].items():
            if not isinstance(entry, Mapping) or not isinstance(entry.get("games"), Mapping) \
                    or not isinstance(entry.get("aggregates"), Mapping):
                raise InputError(file, None, f'algorithm {name!r} needs "games" and "aggregates" objects')
        data = _from_jsonable(dict(data))
        return cls(
            spec=data["spec"], settings=data["settings"], algorithms=data["algorithms"],
            provenance=data["provenance"], published=_published_of(data["spec"]),
        )

    @classmethod
    def from_json(cls, path: str | os.PathLike) -> Results:
        """Read a results JSON written by :meth:`to_json` (or by ``arcadebench run``)."""
        file = str(path)
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(file, None, f"cannot read the results: {error}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise InputError(file, error.lineno, f"is not valid JSON: {error.msg}") from None
        except RecursionError:
            raise InputError(file, None, "is nested too deeply") from None
        return cls.from_dict(data, file)

    # -- CSV --

    def rows(self) -> list[list[Any]]:
        """Tidy rows ``[algorithm, checkpoint, game, metric, value, ci_low, ci_high]``.

        Aggregates have an empty ``game`` and dotted metrics (``hns.median``,
        ``classes.failing``); ``checkpoint`` is ``end`` or a frame count.
        """
        rows: list[list[Any]] = []
        for algorithm, entry in self.algorithms.items():
            blocks = [("end", entry), *((c, b) for c, b in entry.get("checkpoints", {}).items())]
            for checkpoint, block in blocks:
                for game, values, cis in _game_rows(block):
                    for metric, value in values:
                        low, high = cis.get(metric, (None, None))
                        rows.append([algorithm, checkpoint, game, metric, value, low, high])
        return rows

    def to_csv(self, path: str | os.PathLike | None = None) -> str:
        """The tidy CSV (see :meth:`rows`); also written to ``path`` if given."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["algorithm", "checkpoint", "game", "metric", "value", "ci_low", "ci_high"])
        for row in self.rows():
            writer.writerow(["" if v is None else _csv_value(v) for v in row])
        text = buffer.getvalue()
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    # -- table --

    def table(self, digits: int = 2) -> str:
        """Plain-text tables: aggregates first, then per game; one column per algorithm."""
        names = list(self.algorithms)
        with_ci = [n for n in names if "ci" in self.algorithms[n]["aggregates"]]
        level = f"{100 * float(self.settings.get('ci', 0.95)):g}%"
        head = f"{self.spec['name']} v{self.spec['version']} ({str(self.spec['hash']).removeprefix('sha256:')[:12]})"
        columns = ["metric", ""]
        for n in names:
            columns.append(n)
            if n in with_ci:
                columns.append(f"{n} {level} CI")
        agg_rows = []
        for label, stat, getter in _aggregate_keys(self.algorithms):
            row: list[Any] = [label, stat]
            for n in names:
                value, interval = getter(self.algorithms[n])
                row.append(value)
                if n in with_ci:
                    row.append(_interval_text(interval, digits))
            agg_rows.append(row)
        parts = [render_table(columns, agg_rows, title=f"{head} - aggregates", digits=digits)]
        checkpoint_table = self._checkpoint_table(names, digits)
        if checkpoint_table:
            parts.append(checkpoint_table)
        parts.append(self._game_table(names, digits))
        published = self._published_table(names, digits)
        if published:
            parts.append(published)
        return "\n\n".join(parts)

    def _game_table(self, names: list[str], digits: int) -> str:
        games: list[str] = []
        for n in names:
            games.extend(g for g in self.algorithms[n]["games"] if g not in games)
        metrics = ["raw"]
        for n in names:
            for cell in self.algorithms[n]["games"].values():
                metrics.extend(m for m in cell if m not in metrics and m not in ("runs", "ci", "episodes", "frames"))
        metrics.append("runs")
        rows = []
        for game in games:
            first = True
            for metric in metrics:
                cells = [self.algorithms[n]["games"].get(game, {}).get(metric) for n in names]
                if metric == "runs":
                    cells = [len(c) if isinstance(c, list) else None for c in cells]
                    if all(c is None or c == 1 for c in cells):
                        continue
                if all(c is None for c in cells):
                    continue
                rows.append([game if first else "", metric, *cells])
                first = False
        return render_table(["game", "metric", *names], rows, title="per game", digits=digits)

    def _checkpoint_table(self, names: list[str], digits: int) -> str | None:
        columns, blocks = [], []
        for n in names:
            checkpoints = self.algorithms[n].get("checkpoints", {})
            for label, block in checkpoints.items():
                columns.append(f"{n} @{_frames_label(label)}")
                blocks.append(block)
            if checkpoints:
                columns.append(f"{n} @end")
                blocks.append(self.algorithms[n])
        if not blocks:
            return None
        rows = []
        for label, stat, getter in _aggregate_keys({str(i): b for i, b in enumerate(blocks)}):
            rows.append([label, stat, *(getter(b)[0] for b in blocks)])
        return render_table(["metric", "", *columns], rows, title="aggregates by training frames", digits=digits)

    def _published_table(self, names: list[str], digits: int) -> str | None:
        published = self.published
        if published is None:
            return None
        rows = []
        for n in names:
            aggregates = self.algorithms[n]["aggregates"]
            rows.append([f"{n} (this run)", *(_published_value(c, aggregates) for c in published.columns)])
        rows.extend([name, *values] for name, values in published.rows.items())
        return render_table(["", *published.columns], rows, title=f"published results ({published.source})", digits=digits)


def _published_of(spec: Mapping[str, Any]) -> Published | None:
    try:
        loaded = load_spec(str(spec.get("name")))
    except (UnknownSpec, InputError, ScoringError, OSError, ValueError):
        return None
    return loaded.published if loaded.hash == spec.get("hash") else None


def _published_value(column: str, aggregates: Mapping[str, Any]) -> Any:
    """Our number for a published column: ``median`` -> HNS median, ``atari5``, Sonic ``score``."""
    if column == "score":
        for key in ("test", "raw"):
            if key in aggregates and "mean" in aggregates[key]:
                return aggregates[key]["mean"]
        return None
    if column in aggregates and not isinstance(aggregates[column], Mapping):
        return aggregates[column]
    if column in ("mean", "median", "iqm", "optimality_gap"):
        return aggregates.get("hns", {}).get(column)
    return None


def _frames_label(label: str) -> str:
    frames = int(label)
    for unit, size in (("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if frames >= size and frames % (size // 10) == 0:
            return f"{frames / size:g}{unit}"
    return str(frames)


def _interval_text(interval: Any, digits: int) -> str:
    if not interval:
        return "-"
    return "[" + ", ".join(_number_text(v, digits) for v in interval) + "]"


def _number_text(value: Any, digits: int) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:,.{digits}f}"


def _csv_value(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, float):
        return repr(value)
    return value


Getter = Callable[[Mapping[str, Any]], tuple[Any, Any]]


def _aggregate_keys(algorithms: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str, Getter]]:
    """Rows of the aggregate table: (label, stat, getter of (value, interval)), union over blocks."""
    keys: list[tuple[str, str, Getter]] = []
    seen: set[tuple[str, str]] = set()

    def add(label: str, stat: str, getter: Getter) -> None:
        if (label, stat) not in seen:
            seen.add((label, stat))
            keys.append((label, stat, getter))

    for entry in algorithms.values():
        for key, value in entry["aggregates"].items():
            if key in ("ci", "missing"):
                continue
            if key == "learning_efficiency":
                for metric, stats in value.items():
                    for stat in stats:
                        add(f"{metric} per frame", stat,
                            lambda e, m=metric, s=stat: (e["aggregates"].get("learning_efficiency", {}).get(m, {}).get(s), None))
            elif key == "classes":
                for label in value:
                    add("classes", label, lambda e, c=label: (e["aggregates"].get("classes", {}).get(c), None))
            elif isinstance(value, Mapping):
                for stat in value:
                    add(key, stat, lambda e, k=key, s=stat: (
                        e["aggregates"].get(k, {}).get(s),
                        e["aggregates"].get("ci", {}).get(k, {}).get(s) if isinstance(e["aggregates"].get("ci", {}).get(k), Mapping) else None,
                    ))
            else:
                add(key, "", lambda e, k=key: (
                    e["aggregates"].get(k),
                    e["aggregates"].get("ci", {}).get(k) if isinstance(e["aggregates"].get("ci", {}).get(k), list) else None,
                ))
    for entry in algorithms.values():
        missing = entry["aggregates"].get("missing")
        if missing is not None:
            add("missing games", "", lambda e: (len(e["aggregates"].get("missing", [])), None))
            break
    return keys


def _game_rows(block: Mapping[str, Any]) -> list[tuple[str, list[tuple[str, Any]], dict[str, Any]]]:
    """(game, [(metric, value)], {metric: (low, high)}) for the games, aggregates and predictions."""
    out = []
    for game, cell in block["games"].items():
        values = [(m, v) for m, v in cell.items() if m not in ("runs", "ci")]
        values.append(("n_runs", len(cell.get("runs", []))))
        out.append((game, values, {m: tuple(b) for m, b in cell.get("ci", {}).items()}))
    aggregates = block["aggregates"]
    values, cis = [], {}
    for key, value in aggregates.items():
        if key == "ci":
            for metric, bounds in value.items():
                if isinstance(bounds, Mapping):
                    cis.update({f"{metric}.{s}": tuple(b) for s, b in bounds.items()})
                else:
                    cis[metric] = tuple(bounds)
        elif key == "missing":
            values.append(("missing", ";".join(value)))
        elif key == "learning_efficiency":
            values.extend((f"learning_efficiency.{m}.{s}", v) for m, stats in value.items() for s, v in stats.items())
        elif isinstance(value, Mapping):
            values.extend((f"{key}.{s}", v) for s, v in value.items())
        else:
            values.append((key, value))
    out.append(("", values, cis))
    for model, predicted in block.get("predictions", {}).items():
        for game, value in predicted.items():
            out.append((game, [(f"{model}.predicted_hns", value)], {}))
    return out
