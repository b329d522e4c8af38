"""Score raw results against a spec (:func:`score`) and carry them (:class:`Results`).

:func:`score` reads the inputs (:mod:`~arcadebench.benchmarks.scoring.inputs`: score tables,
result files and episode logs), applies the spec's rules with the pure functions of
:mod:`~arcadebench.benchmarks.scoring.metrics`, and bootstraps confidence intervals
(:mod:`~arcadebench.benchmarks.scoring.bootstrap`) from one statistic function per block, so a
point estimate and its interval always come from the same code. :class:`Results` writes the
``arcadebench-results/2`` JSON of DEVELOPING.md, a tidy CSV and a plain-text table, and reads the
JSON back (format 1 too) for reports.

A results file is verifiable as a whole: its ``provenance.inputs`` are written relative to its
folder (:meth:`Results.to_json`), so a copied results folder or a reviewer in another directory
finds its logs (:func:`results_inputs`), and its ``settings`` hold every argument of the scoring
call that changes numbers (``ci``, ``reps``, ``seed``, ``curve``, ``compare``), so passing them back
to :func:`score` with those inputs gives the same document.

Per game, a normalised score is the mean over runs of the per-run normalised scores (rliable's
convention; identical to normalising the mean raw score unless the metric is capped). With
several runs per game, every aggregate, Atari-X estimate and per-game score gets a stratified
bootstrap percentile interval.

Beyond the protocol's own numbers, the two other tools of Agarwal et al. (2021, Section 4):
the probability of improvement between every pair of algorithms
(:mod:`~arcadebench.benchmarks.scoring.improvement`), and sample-efficiency curves, every
aggregate at several training frame counts scored from the logs as the checkpoints are
(:mod:`~arcadebench.benchmarks.scoring.sample_efficiency`). :class:`Results` also renders the
tables a paper pastes (:meth:`Results.to_latex`, :meth:`Results.to_markdown`).

Classes: Results.
Functions: score, headline_metric, results_inputs.
"""

from __future__ import annotations

import csv
import importlib.metadata
import io
import json
import math
import os
import platform
import warnings
import zlib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.scoring.bootstrap import bootstrap_distribution, percentile_interval
from arcadebench.benchmarks.scoring.improvement import (
    compare_pair,
    comparison_pairs,
    comparison_seed,
)
from arcadebench.benchmarks.scoring.inputs import Scores, read_scores
from arcadebench.benchmarks.scoring.metrics import (
    AGGREGATES,
    breakthroughs,
    class_histogram,
    class_index,
    game_means,
    game_time_days,
    learning_efficiency,
    predicted_scores,
    subset_score,
)
from arcadebench.benchmarks.scoring.normalise import headline_metric, normalise
from arcadebench.benchmarks.scoring.paper_tables import (
    chosen_references,
    latex_tables,
    markdown_tables,
)
from arcadebench.benchmarks.scoring.raw_scores import AlgorithmScores, RunScores
from arcadebench.benchmarks.scoring.sample_efficiency import ReferenceCurve, reference_curves
from arcadebench.benchmarks.scoring.score_files import RESULTS_FORMAT, results_version
from arcadebench.benchmarks.scoring.tables import results_table
from arcadebench.errors import InputError, InvalidArgument, UnknownSpec
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.model import Normalisation, Published, PublishedScores
from arcadebench.specs.names import subset_key
from arcadebench.specs.statistics import SPLITS, STATISTICS

__all__ = [
    "Results",
    "headline_metric",
    "results_inputs",
    "score",
    "subset_key",
    "without_run_statistics",
]

_VERSIONED = ("arcadebench", "numpy", "gymnasium", "ale-py", "stable-retro")


# -- the API ---------------------------------------------------------------------------------------


def score(
    spec: str | os.PathLike[str] | Spec,
    scores: Scores,
    *,
    ci: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
    command: str | None = None,
    compare: Sequence[tuple[str, str]] | None = None,
    curve: bool | Sequence[int] = False,
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
        compare: ``(X, Y)`` pairs of algorithms to give P(X > Y) (Agarwal et al. 2021) in
            :attr:`Results.comparisons`; ``None``: every pair, in input order.
        curve: score the logs' runs at the points of a sample-efficiency curve as well:
            ``True`` for about 20 round frame counts up to the longest run and the protocol's
            checkpoints, or the frame counts wanted (the checkpoints are added).

    Returns:
        The :class:`Results`; intervals appear only where some game has at least two runs. Its
        ``settings`` record ``ci``, ``reps``, ``seed`` and, when given, ``curve`` and
        ``compare``: the same call with them on the same inputs gives the same numbers.

    Raises:
        InvalidArgument: ``ci``, ``reps``, ``seed``, ``compare`` or ``curve`` out of range,
            or a curve of a protocol scored after training.
        InputError: a malformed score file or log (file, line and value named).
        UnknownSpec: an unknown spec name.

    Example:
        >>> scores = {"me": {"Battle Zone": 37187.5, "Pong": [14.6, -20.71]}}
        >>> me = score("atari5", scores, reps=0).algorithms["me"]
        >>> me["games"]["pong"]["hns"], me["aggregates"]["hns"]["median"]
        (50.0, 75.0)
    """
    if isinstance(ci, bool) or not isinstance(ci, int | float) or not 0.0 < ci < 1.0:
        raise InvalidArgument(f"`ci` must be a number strictly between 0 and 1, got {ci!r}")
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 0:
        raise InvalidArgument(
            f"`reps` must be a non-negative integer (0: no intervals), got {reps!r}"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidArgument(f"`seed` must be a non-negative integer, got {seed!r}")
    if compare is not None and (
        isinstance(compare, str)
        or not all(
            isinstance(p, Sequence) and not isinstance(p, str) and len(p) == 2 for p in compare
        )
    ):
        raise InvalidArgument(
            f"`compare` must be (X, Y) pairs of algorithm names, or None for every pair, got "
            f"{compare!r}"
        )
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    if curve is not False and spec.evaluation.scored == "after_training":
        raise InvalidArgument(
            f"`curve` must be off for {spec.name!r}, got {curve!r}: the protocol scores "
            "evaluation episodes played after training, one score per run, so its runs have no "
            "sample-efficiency curve; score without it"
        )
    raw = read_scores(spec, scores, curve)
    metric = headline_metric(spec)
    algorithms: dict[str, dict[str, Any]] = {}
    matrices: dict[str, tuple[list[str], NDArray[np.float64]]] = {}
    for name, data in raw.algorithms.items():
        block = _Block(spec, data.games)
        entry = block.score(ci=ci, reps=reps, seed=_block_seed(seed, name, None))
        matrices[name] = block.matrix(metric)
        if data.checkpoints:
            entry["checkpoints"] = {
                str(checkpoint): _Block(spec, games).score(
                    ci=ci, reps=reps, seed=_block_seed(seed, name, checkpoint)
                )
                for checkpoint, games in sorted(data.checkpoints.items())
            }
        notes = _compliance_notes(spec, data)
        if curve is not False:
            asked = () if isinstance(curve, bool) else tuple(curve)
            at = entry.get("checkpoints", {})
            points = _curve(spec, name, data, asked, notes, at, ci=ci, reps=reps, seed=seed)
            if points:
                entry["curve"] = points
        if data.deviations:
            entry["deviations"] = {game: dict(runs) for game, runs in data.deviations.items()}
        if data.frozen_policy:
            entry["frozen_policy"] = True
            notes.insert(0, _frozen_note(spec))
        if notes:
            entry["notes"] = notes
        algorithms[name] = entry
    comparisons = []
    for x, y in comparison_pairs(list(algorithms), compare):
        compared = compare_pair(
            (x, *matrices[x]),
            (y, *matrices[y]),
            metric=metric,
            level=ci,
            reps=reps,
            seed=comparison_seed(seed, x, y),
            required=compare is not None,
        )
        if compared is not None:
            comparisons.append(compared)
    provenance = _provenance(raw.sources, command)
    if raw.agents:  # what played the logged runs: a retrained model is another agent
        provenance["agents"] = {name: list(found) for name, found in raw.agents.items()}
    settings: dict[str, Any] = {"ci": float(ci), "reps": reps, "seed": seed}
    if curve is not False:
        settings["curve"] = True if isinstance(curve, bool) else list(curve)
    if compare is not None:
        settings["compare"] = [[x, y] for x, y in compare]
    return Results(
        spec=spec.identity,
        settings=settings,
        algorithms=algorithms,
        provenance=provenance,
        comparisons=tuple(comparisons),
        protocol=spec,
    )


def _curve(
    spec: Spec,
    name: str,
    data: AlgorithmScores,
    asked: Sequence[int],
    notes: list[str],
    at_checkpoints: Mapping[str, Any],
    *,
    ci: float,
    reps: int,
    seed: int,
) -> dict[str, Any]:
    """The algorithm's sample-efficiency curve: a block per point where every game has a score.

    A point where some game of the algorithm has no score yet (no episode completed by then,
    or no run got that far) is left out with a note: an aggregate over fewer games would make
    the curve jump for a reason that is not learning; so is a point ``asked`` for where no game
    has one. Each point has the seed a checkpoint at those frames has, so a curve through a
    checkpoint gives its numbers: a point with the very scores of a checkpoint takes the block
    already scored for it (``at_checkpoints``) instead of bootstrapping it again.
    """
    if not data.curve:
        logged = any(e is not None for cell in data.games.values() for e in cell.episodes)
        notes.append(
            "no sample-efficiency curve: "
            + (
                "no run got past its first curve point"
                if logged
                else "its scores come from a score table, not episode logs"
            )
        )
        return {}
    points: dict[str, Any] = {}
    left_out: list[int] = []
    lacking: set[str] = set()
    every = {frames: data.curve.get(frames, {}) for frames in {*data.curve, *asked}}
    for frames, games in sorted(every.items()):
        absent = [g for g in data.games if g not in games]
        if absent:
            left_out.append(frames)
            lacking.update(absent)
            continue
        if data.checkpoints.get(frames) == games and str(frames) in at_checkpoints:
            points[str(frames)] = at_checkpoints[str(frames)]
            continue
        block = _Block(spec, games)
        points[str(frames)] = block.score(ci=ci, reps=reps, seed=_block_seed(seed, name, frames))
    if left_out:
        shown = ", ".join(f"{f:,}" for f in left_out[:3])
        more = f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
        notes.append(
            f"the sample-efficiency curve has no point at {shown}{more} frames: "
            f"{', '.join(sorted(lacking))} had no score there (no episode completed by then, or "
            "no run got that far), and an aggregate over fewer games is not the curve's"
        )
    return points


def _compliance_notes(spec: Spec, data: AlgorithmScores) -> list[str]:
    """What a reader of these scores must know: deviations, and checkpoints not reached.

    SABER and HWR report a run's score at frame checkpoints (SABER Section 3.2: 10M, 50M,
    100M, 200M training frames); a run that stopped short of one is scored at the end of its
    log, which is not the checkpoint's number.
    """
    notes = list(data.notes)
    for game, runs in data.deviations.items():
        for run, deviations in runs.items():
            changed = ", ".join(
                f"{key}={value.get('used')!r} (spec: {value.get('spec')!r})"
                if isinstance(value, Mapping)
                else f"{key}={value!r}"
                for key, value in deviations.items()
            )
            notes.append(f"non-compliant: {game} run {run!r}: {changed}")
    frames = [f for cell in data.games.values() for f in cell.frames if f is not None]
    if spec.evaluation.episode_aggregate == "last_k" and frames:
        reached = int(max(frames))
        short = [c for c in spec.evaluation.checkpoints if reached < c]
        if short:
            notes.append(
                f"frames reached {reached:,} of the {short[0]:,}-frame checkpoint"
                + (f" (and of {len(short) - 1} later ones)" if len(short) > 1 else "")
                + ": scored at the end of the log there, not at the checkpoint"
            )
    return notes


def _frozen_note(spec: Spec) -> str:
    evaluation = spec.evaluation
    rule = (
        f"the mean of the last {evaluation.k} training episodes at each checkpoint"
        if evaluation.episode_aggregate == "last_k"
        else "the mean return of a run's training episodes"
    )
    return (
        f"a frozen policy's episodes: {spec.name} scores the episodes of a run that learns "
        f"({rule}), so these are an evaluation, set apart from the protocol's numbers and its "
        "references; the protocol's number comes from the training run's own log (train on "
        "the protocol's environments, whose monitor logs every training episode, then score "
        "that log)"
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


# -- one block: the games and aggregates of one algorithm at one checkpoint -----------------------


@dataclass
class _Target:
    """Per-run scores that aggregates are computed over: a normalised metric, or raw on a split."""

    key: str
    columns: NDArray[np.intp]
    norm: Normalisation | None = None
    random: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))
    reference: NDArray[np.float64] = field(default_factory=lambda: np.empty(0))

    def transform(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """The target's ``(..., runs, columns)`` scores from ``(..., runs, games)`` raw scores."""
        selected = raw[..., self.columns]
        if self.norm is None:
            return selected
        return normalise(selected, self.random, self.reference, self.norm.floor, self.norm.cap)


def _targets(spec: Spec, names: list[str]) -> list[_Target]:
    """Each normalised metric over the games with its constants; without any, raw per split."""
    if spec.scoring.normalised:
        targets = []
        for norm in spec.scoring.normalised:
            random = np.array([_constant(spec, g, "random") for g in names])
            reference = np.array([_constant(spec, g, norm.reference) for g in names])
            columns = np.flatnonzero(np.isfinite(random) & np.isfinite(reference))
            targets.append(_Target(norm.name, columns, norm, random[columns], reference[columns]))
        return targets
    targets = []
    for split in SPLITS.values():  # Sonic Section 3.9: the score is the mean over test levels
        if split.levels is None:
            targets.append(_Target(split.key, np.arange(len(names))))
            continue
        columns = np.array(
            [
                i
                for i, g in enumerate(names)
                if g in spec.levels and spec.levels[g].split == split.levels
            ],
            dtype=np.intp,
        )
        if len(columns):
            targets.append(_Target(split.key, columns))
    return targets


def _constant(spec: Spec, game: str, column: str) -> float:
    constants = spec.constants.get(game)
    value = constants.reference(column) if constants is not None else None
    return np.nan if value is None else float(value)


_Slot = tuple[str, ...]
"""A number's place in the statistic: ``("game", metric)``, ``("agg", metric, stat)``, ..."""


class _Block:
    """The scores of one algorithm at one checkpoint: one statistic, its point and its interval.

    Every number that gets an interval (per-game means, aggregates, Atari-X estimates) is one
    slot of the vector :meth:`statistic` returns, so the point estimate and the bootstrap share
    one implementation.
    """

    def __init__(self, spec: Spec, games: Mapping[str, RunScores]) -> None:
        self.spec = spec
        self.games = games
        self.names = list(games)
        self.targets = _targets(spec, self.names)
        self.position = {
            t.key: {self.names[c]: i for i, c in enumerate(t.columns)} for t in self.targets
        }
        # Atari-5 Eq. 3 uses the uncapped human-normalised score (Table 12 constants)
        self.hns = next(
            (
                t
                for t in self.targets
                if t.norm is not None
                and t.norm.reference == "human"
                and t.norm.floor is None
                and t.norm.cap is None
            ),
            None,
        )
        # (key, HNS columns, coefficients) of every Atari-X subset whose games were all played
        self.subsets: list[tuple[str, NDArray[np.intp], tuple[float, ...]]] = []
        if self.hns is not None:
            present = self.position[self.hns.key]
            for subset in spec.subsets.values():
                if all(g in present for g in subset.games):
                    index = np.array([present[g] for g in subset.games], dtype=np.intp)
                    self.subsets.append((subset_key(subset.name), index, subset.coefficients))
        self.slots: dict[_Slot, slice] = {}
        self._add(("game", "raw"), len(self.names))
        for t in self.targets:
            self._add(("game", t.key), len(t.columns))
            for stat in spec.scoring.aggregates if len(t.columns) else ():
                self._add(("agg", t.key, stat), 1)
        for key, _, _ in self.subsets:
            self._add(("subset", key), 1)

    def _add(self, key: _Slot, n: int) -> None:
        start = max((s.stop for s in self.slots.values()), default=0)
        self.slots[key] = slice(start, start + n)

    def statistic(self, raw: NDArray[np.float64]) -> NDArray[np.float64]:
        """Every slot from ``(..., runs, games)`` raw scores, vectorised over leading axes."""
        scoring = self.spec.scoring
        parts = [game_means(raw)]
        per_game: dict[str, NDArray[np.float64]] = {}
        for t in self.targets:
            scores = t.transform(raw)
            per_game[t.key] = game_means(scores)
            parts.append(per_game[t.key])
            for stat in scoring.aggregates if len(t.columns) else ():
                extra = (getattr(scoring, name) for name in STATISTICS[stat].arguments)
                parts.append(np.asarray(AGGREGATES[stat](scores, *extra))[..., None])
        if self.hns is not None:  # the subsets' estimates are of the HNS
            for _, index, coefficients in self.subsets:
                estimate = subset_score(per_game[self.hns.key][..., index], coefficients)
                parts.append(np.asarray(estimate)[..., None])
        return np.concatenate(parts, axis=-1)

    def raw(self) -> NDArray[np.float64]:
        """The ``(runs, games)`` raw scores, ``NaN`` below a game's runs."""
        runs = max((len(self.games[g].scores) for g in self.names), default=0)
        raw = np.full((max(runs, 1), len(self.names)), np.nan)
        for j, game in enumerate(self.names):
            raw[: len(self.games[game].scores), j] = self.games[game].scores
        return raw

    def matrix(self, key: str) -> tuple[list[str], NDArray[np.float64]]:
        """The games and ``(runs, games)`` per-run scores of a target (``hns``, ``raw``...)."""
        target = next((t for t in self.targets if t.key == key), None)
        if target is None:
            return [], np.empty((1, 0))
        return [self.names[c] for c in target.columns], target.transform(self.raw())

    def score(self, *, ci: float, reps: int, seed: np.random.SeedSequence) -> dict[str, Any]:
        """The block's JSON-ready ``{"games", "aggregates"[, "predictions"]}``."""
        runs = max((len(self.games[g].scores) for g in self.names), default=0)
        raw = self.raw()
        self.point = self.statistic(raw)
        self.interval: NDArray[np.float64] | None = None
        if reps > 0 and runs >= 2:
            rng = np.random.default_rng(seed)
            samples = bootstrap_distribution(raw, self.statistic, reps=reps, seed=rng)
            self.interval = percentile_interval(samples, ci)
        games = self._games()
        block: dict[str, Any] = {"games": games, "aggregates": self._aggregates(games)}
        predictions = self._predictions(games)
        if predictions:
            block["predictions"] = predictions
        return block

    def _value(self, key: _Slot, i: int = 0) -> float:
        return float(self.point[self.slots[key]][i])

    def _bounds(self, interval: NDArray[np.float64], key: _Slot, i: int = 0) -> list[float]:
        column = self.slots[key]
        return [float(interval[0, column][i]), float(interval[1, column][i])]

    def _games(self) -> dict[str, dict[str, Any]]:
        scoring = self.spec.scoring
        normalised = [t for t in self.targets if t.norm is not None]
        interval = self.interval
        out: dict[str, dict[str, Any]] = {}
        for j, game in enumerate(self.names):
            runs = self.games[game]
            entry: dict[str, Any] = {
                "raw": self._value(("game", "raw"), j),
                "runs": list(runs.scores),
            }
            episodes = [e for e in runs.episodes if e is not None]
            if episodes:
                entry["episodes"] = int(sum(episodes))
            frames = [f for f in runs.frames if f is not None]
            if frames:
                entry["frames"] = float(np.mean(frames))
            metrics = [t for t in normalised if game in self.position[t.key]]
            for t in metrics:
                entry[t.key] = self._value(("game", t.key), self.position[t.key][game])
            if scoring.classes_of in entry:
                index = int(class_index([entry[scoring.classes_of]], scoring.classes)[0])
                entry["class"] = scoring.classes[index][0]
            if interval is not None and len(runs.scores) >= 2:
                entry["ci"] = {"raw": self._bounds(interval, ("game", "raw"), j)}
                for t in metrics:
                    column = self.position[t.key][game]
                    entry["ci"][t.key] = self._bounds(interval, ("game", t.key), column)
            out[game] = entry
        return out

    def _aggregates(self, games: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
        scoring = self.spec.scoring
        out: dict[str, Any] = {}
        for t in self.targets:
            stats = {
                s: self._value(("agg", t.key, s)) for s in scoring.aggregates if len(t.columns)
            }
            out[t.key] = {**stats, "n_games": int(len(t.columns))}
        per_game = {t.key: self.point[self.slots[("game", t.key)]] for t in self.targets}
        breakthrough = scoring.breakthrough
        if breakthrough is not None and breakthrough.of in per_game:  # HWR: HWRB
            key = "hwrb" if breakthrough.of == "hwrns" else "breakthroughs"
            out[key] = breakthroughs(per_game[breakthrough.of], breakthrough.threshold)
        if scoring.classes_of in per_game:  # SABER Section 3.2 histogram
            out["classes"] = class_histogram(per_game[scoring.classes_of], scoring.classes)
        for key, _, _ in self.subsets:
            out[key] = self._value(("subset", key))
        out.update(self._efficiency(games, out))
        out["missing"] = [g for g in self.spec.default_games if g not in games]
        interval = self.interval
        if interval is not None:
            cis: dict[str, Any] = {
                t.key: {s: self._bounds(interval, ("agg", t.key, s)) for s in scoring.aggregates}
                for t in self.targets
                if len(t.columns)
            }
            cis.update({key: self._bounds(interval, ("subset", key)) for key, _, _ in self.subsets})
            out["ci"] = cis
        return out

    def _efficiency(
        self, games: Mapping[str, Mapping[str, Any]], aggregates: Mapping[str, Any]
    ) -> dict[str, Any]:
        """HWR Eqs. 6-7 over the mean training frames of the games (when frames are given)."""
        scoring = self.spec.scoring
        frames = [cell["frames"] for cell in games.values() if "frames" in cell]
        if not frames or not (scoring.learning_efficiency or scoring.game_time_frames_per_day):
            return {}
        mean = float(np.mean(frames))
        out: dict[str, Any] = {"frames": mean}
        if scoring.game_time_frames_per_day:
            out["game_time_days"] = float(game_time_days(mean, scoring.game_time_frames_per_day))
        if scoring.learning_efficiency and mean > 0:
            out["learning_efficiency"] = {
                t.key: {
                    s: float(learning_efficiency(v, mean))
                    for s, v in aggregates[t.key].items()
                    if s in STATISTICS and STATISTICS[s].level  # a gap per frame means nothing
                }
                for t in self.targets
                if t.norm is not None and len(t.columns)
            }
        return out

    def _predictions(self, games: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, float]]:
        """Atari-5 Tables 10-11: every game's HNS predicted from the subset's, when all played."""
        if self.hns is None:
            return {}
        out = {}
        for model in self.spec.predictions.values():
            if all(g in self.position[self.hns.key] for g in model.inputs):
                inputs = [games[g][self.hns.key] for g in model.inputs]
                out[subset_key(model.name)] = predicted_scores(inputs, model.models)
        return out


# -- the Results object ---------------------------------------------------------------------------


def without_run_statistics(aggregates: Mapping[str, Any]) -> dict[str, Any]:
    """``aggregates`` without the statistics over all runs: what per-game means can give.

    A reference of per-game means only (a paper's table) cannot give an IQM or an optimality gap
    (Agarwal et al. 2021, Section 4: over all runs), so it is shown without them.

    Example:
        >>> without_run_statistics({"hns": {"mean": 50.0, "iqm": 40.0}, "atari5": 30.0})
        {'hns': {'mean': 50.0}, 'atari5': 30.0}
    """
    runs = {key for key, statistic in STATISTICS.items() if statistic.over == "runs"}

    def strip(value: Any) -> Any:
        if isinstance(value, Mapping):
            return {k: strip(v) for k, v in value.items() if k not in runs}
        return value

    return {key: strip(value) for key, value in aggregates.items()}


def _jsonable(value: Any) -> Any:
    """JSON-ready copy: ``inf`` as ``"inf"``, numpy scalars as Python, ``NaN`` entries dropped."""
    if isinstance(value, dict):
        return {
            str(k): _jsonable(v)
            for k, v in value.items()
            if not (isinstance(v, float) and math.isnan(v))
        }
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
    """Scores of one or more algorithms under one spec: the ``arcadebench-results/2`` document.

    Attributes:
        spec: ``{"name", "version", "hash"}`` of the spec scored against.
        settings: ``{"ci", "reps", "seed"[, "curve"][, "compare"]}``: the arguments of
            :func:`score` that change numbers (``curve``: ``True`` or the frame counts asked
            for, absent without a curve; ``compare``: the ``[x, y]`` pairs asked for, absent
            when every pair was compared).
        algorithms: per algorithm ``{"games", "aggregates"[, "predictions"][, "checkpoints"]
            [, "curve"]}`` (the shape in DEVELOPING.md, "Results"), with Python floats (``inf``
            allowed).
        provenance: package versions, inputs and command line. The ``inputs`` are paths as
            given to :func:`score` (from the current directory, or absolute) or labels such as
            ``<mapping>``; :meth:`to_json` writes them relative to the file.
        comparisons: P(X > Y) of pairs of algorithms, each ``{"x", "y", "metric",
            "probability", "games"[, "ci"]}``
            (:func:`~arcadebench.benchmarks.scoring.improvement.compare_pair`).
        protocol: the loaded spec, when it is at hand (its published results are shown by
            :meth:`table`); ``None`` for results of a spec this installation does not have.
    """

    spec: Mapping[str, Any]
    settings: Mapping[str, Any]
    algorithms: Mapping[str, Mapping[str, Any]]
    provenance: Mapping[str, Any]
    comparisons: tuple[Mapping[str, Any], ...] = ()
    protocol: Spec | None = field(default=None, compare=False, repr=False)

    @property
    def published(self) -> tuple[Published, ...]:
        """The aggregate tables the spec's papers printed (``()`` without the spec)."""
        return self.protocol.published if self.protocol is not None else ()

    def reference_blocks(
        self, names: Collection[str] | None = None, *, intervals: bool = False
    ) -> list[tuple[PublishedScores, Mapping[str, Any]]]:
        """Each published per-game result of the spec scored on these results' games: its block.

        The block has the shape of an algorithm's (``{"games", "aggregates"}``). A reference
        whose per-run scores are shipped is scored over its runs exactly as results are (with
        intervals from these results' ``ci``, ``reps`` and ``seed`` when ``intervals``); one of
        per-game means only has the statistics over games alone: a statistic over all runs (the
        IQM, the optimality gap: Agarwal et al. 2021, Section 4) cannot be computed from means,
        so it is not in the block at all.

        Args:
            names: only these references, in the spec's order (``None``: every one).
            intervals: bootstrap the intervals of the references with runs.
        """
        if self.protocol is None:
            return []
        games = {game for entry in self.algorithms.values() for game in entry["games"]}
        reps = int(self.settings.get("reps") or 0) if intervals else 0
        blocks = []
        for reference in self.protocol.published_scores.values():
            if names is not None and reference.name not in names:
                continue
            scores = reference.score_input(games)
            if not scores:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scored = score(
                    self.protocol,
                    {reference.name: scores},
                    ci=float(self.settings.get("ci", 0.95)),
                    reps=reps if reference.per_run else 0,
                    seed=int(self.settings.get("seed", 0)),
                )
            block = scored.algorithms[reference.name]
            if not reference.per_run:
                block = {**block, "aggregates": without_run_statistics(block["aggregates"])}
            blocks.append((reference, block))
        return blocks

    def reference_curves(self) -> list[ReferenceCurve]:
        """The spec's published references that form curves, scored on these results' games.

        Each point is the reference's block of :meth:`reference_blocks` (on the games the
        results share with it), so a curve compares with the results' curves point by point.
        """
        found = reference_curves(self.protocol) if self.protocol is not None else []
        if not found:
            return []
        blocks = {reference.name: block for reference, block in self.reference_blocks()}
        curves = []
        for name, members in found:
            points = {
                reference.frames: blocks[reference.name]["aggregates"]
                for reference in members
                if reference.frames is not None and reference.name in blocks
            }
            if len(points) >= 2:
                last = members[-1]
                curves.append(ReferenceCurve(name, points, last.protocol, last.source))
        return curves

    # -- JSON --

    def to_dict(self) -> dict[str, Any]:
        """The JSON document as Python objects (``inf`` already written as ``"inf"``).

        The inputs are as in memory, which is what a file written in the current directory
        holds (up to normalisation); :meth:`to_json` makes them relative to its file.
        """
        body: dict[str, Any] = {
            "format": RESULTS_FORMAT,
            "spec": dict(self.spec),
            "settings": dict(self.settings),
            "algorithms": {k: dict(v) for k, v in self.algorithms.items()},
        }
        if self.comparisons:
            body["comparisons"] = [dict(c) for c in self.comparisons]
        body["provenance"] = dict(self.provenance)
        document: dict[str, Any] = _jsonable(body)
        return document

    def to_json(self, path: str | os.PathLike[str] | None = None, *, indent: int | None = 2) -> str:
        """The ``arcadebench-results/2`` JSON text; also written to ``path`` if given.

        Every input that names a file or directory is written relative to ``path``'s folder
        (the current directory without ``path``), with ``/`` separators, so the results find
        their logs from wherever they are read and a copied results folder names its own
        copies; a label (``<mapping>``) is written as it is.
        """
        document = self.to_dict()
        inputs = document["provenance"].get("inputs")
        if isinstance(inputs, list):
            folder = Path(path).parent if path is not None else Path()
            document["provenance"]["inputs"] = [_written_input(i, folder) for i in inputs]
        text = json.dumps(document, indent=indent, allow_nan=False) + "\n"
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], file: str = "<results>") -> Results:
        """Rebuild from :meth:`to_dict` output (``"inf"`` strings become floats).

        The inputs are kept as they are in ``data``; :meth:`from_json` makes a file's usable
        from the current directory.
        """
        results_version(data, file)
        for key in ("spec", "settings", "algorithms", "provenance"):
            if not isinstance(data.get(key), Mapping):
                raise InputError(file, None, f'has no "{key}" object')
        for name, entry in data["algorithms"].items():
            blocks = (entry.get(key) for key in ("games", "aggregates"))
            if not isinstance(entry, Mapping) or not all(isinstance(b, Mapping) for b in blocks):
                raise InputError(
                    file, None, f'algorithm {name!r} needs "games" and "aggregates" objects'
                )
        comparisons = data.get("comparisons", [])
        if not isinstance(comparisons, list) or not all(
            isinstance(c, Mapping) and {"x", "y", "probability"} <= set(c) for c in comparisons
        ):
            raise InputError(
                file, None, '"comparisons" must be a list of {"x", "y", "probability", ...}'
            )
        _check_settings(data["settings"], file)
        data = _from_jsonable(dict(data))
        return cls(
            spec=data["spec"],
            settings=data["settings"],
            algorithms=data["algorithms"],
            provenance=data["provenance"],
            comparisons=tuple(data.get("comparisons", ())),
            protocol=_protocol_of(data["spec"]),
        )

    @classmethod
    def from_json(cls, path: str | os.PathLike[str]) -> Results:
        """Read a results JSON written by :meth:`to_json` (or by ``arcadebench run``).

        A format-2 file's inputs become paths from the current directory (joined onto the
        file's folder), so writing the results elsewhere keeps them right; a format-1 file's
        are kept as written (relative to wherever its scorer ran).
        """
        data = _read_document(path)
        results = cls.from_dict(data, str(path))
        inputs = results.provenance.get("inputs")
        if results_version(data, str(path)) < 2 or not isinstance(inputs, list):
            return results
        folder = Path(path).parent
        return replace(
            results,
            provenance={**results.provenance, "inputs": [_read_input(i, folder) for i in inputs]},
        )

    # -- CSV --

    def rows(self) -> list[list[Any]]:
        """Tidy rows ``[algorithm, checkpoint, game, metric, value, ci_low, ci_high]``.

        Aggregates have an empty ``game`` and dotted metrics (``hns.median``,
        ``classes.failing``); ``checkpoint`` is ``end`` or a frame count (a protocol checkpoint
        or a point of the curve: both are the run scored at those frames). The probabilities of
        improvement, which belong to no one algorithm, are in the JSON only.
        """
        rows: list[list[Any]] = []
        for algorithm, entry in self.algorithms.items():
            at = {int(c): b for c, b in entry.get("curve", {}).items()}
            at.update({int(c): b for c, b in entry.get("checkpoints", {}).items()})
            blocks = [("end", entry), *((str(c), at[c]) for c in sorted(at))]
            for checkpoint, block in blocks:
                for game, values, cis in _game_rows(block):
                    for metric, value in values:
                        low, high = cis.get(metric, (None, None))
                        rows.append([algorithm, checkpoint, game, metric, value, low, high])
        return rows

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> str:
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

    def table(self, digits: int = 2, *, references: Sequence[str] | str | None = None) -> str:
        """Plain-text tables: aggregates first, then per game; one column per algorithm.

        Args:
            digits: decimals of the numbers.
            references: the spec's published references to show beside ours, by name, or
                ``"none"``; ``None``: every one, each with the protocol it was obtained under.
        """
        names = None if references is None else chosen_references(self.protocol, references)
        return results_table(self, digits, names)

    # the tables of paper_tables, these results their first argument
    to_latex = latex_tables
    to_markdown = markdown_tables


def results_inputs(path: str | os.PathLike[str]) -> tuple[list[Path], int]:
    """The inputs a results file was scored from, as paths, and its format version (1 or 2).

    What ``arcadebench verify`` needs to find a results file's logs without scoring anything
    (then ``score(spec, inputs, **settings)`` recomputes its numbers). A format-2 file's inputs
    are relative to its folder and come back joined onto it, usable from the current directory;
    a format-1 file's come back as written, relative to wherever its scorer ran (or absolute),
    for the caller to look for. An input that was no file (the label ``<mapping>`` of an
    in-memory mapping) comes back as written, naming no file.

    Raises:
        InputError: an unreadable file, invalid JSON, a document that is not results, or one
            without a ``provenance.inputs`` list of strings.
    """
    file = str(path)
    data = _read_document(path)
    version = results_version(data, file)
    provenance = data.get("provenance")
    inputs = provenance.get("inputs") if isinstance(provenance, Mapping) else None
    if not isinstance(inputs, list) or not all(isinstance(i, str) for i in inputs):
        raise InputError(
            file, None, 'has no "provenance" "inputs": the list of what it was scored from'
        )
    if version >= 2:
        inputs = [_read_input(i, Path(path).parent) for i in inputs]
    return [Path(i) for i in inputs], version


def _read_document(path: str | os.PathLike[str]) -> Any:
    """The decoded JSON of a results file."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(file, None, f"cannot read the results: {error}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(file, error.lineno, f"is not valid JSON: {error.msg}") from None
    except RecursionError:
        raise InputError(file, None, "is nested too deeply") from None


def _written_input(item: object, folder: Path) -> object:
    """An input as a results file in ``folder`` records it: relative to the folder, with ``/``."""
    if not isinstance(item, str) or not os.path.exists(item):
        return item  # a label (``<mapping>``), or nothing there to be relative to
    absolute = os.path.abspath(item)
    try:
        relative = os.path.relpath(absolute, os.path.abspath(folder))
    except ValueError:  # another drive (Windows): no relative path leads there
        relative = absolute
    return Path(relative).as_posix()


def _read_input(item: object, folder: Path) -> object:
    """A format-2 input read from a results file in ``folder``: a path from the current one."""
    if not isinstance(item, str) or os.path.isabs(item):
        return item
    if item.startswith("<") and item.endswith(">"):
        return item  # a source that is no file, named in angle brackets (``<mapping>``)
    return os.path.normpath(os.path.join(folder, item))


def _check_settings(settings: Mapping[str, Any], file: str) -> None:
    """Refuse recorded ``curve``/``compare`` settings that :func:`score` could not take back."""
    curve = settings.get("curve", True)
    frames = isinstance(curve, list) and all(
        isinstance(f, int) and not isinstance(f, bool) and f > 0 for f in curve
    )
    if curve is not True and not (frames and curve):
        raise InputError(
            file, None, f'"settings" "curve" must be true or frame counts, got {curve!r}'
        )
    compare = settings.get("compare", [])
    if not isinstance(compare, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(n, str) for n in p) for p in compare
    ):
        raise InputError(
            file, None, f'"settings" "compare" must be [x, y] pairs of algorithms, got {compare!r}'
        )


def _protocol_of(spec: Mapping[str, Any]) -> Spec | None:
    """The built-in spec the results were scored against, if this installation has it."""
    try:
        loaded = load_spec(str(spec.get("name")))
    except (UnknownSpec, InputError, InvalidArgument, OSError, ValueError):
        return None
    return loaded if loaded.hash == spec.get("hash") else None


def _csv_value(value: Any) -> Any:
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, float):
        return repr(value)
    return value


def _game_rows(block: Mapping[str, Any]) -> list[tuple[str, list[tuple[str, Any]], dict[str, Any]]]:
    """(game, [(metric, value)], {metric: (low, high)}) of the games, aggregates, predictions."""
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
            values.extend(
                (f"learning_efficiency.{m}.{s}", v)
                for m, stats in value.items()
                for s, v in stats.items()
            )
        elif isinstance(value, Mapping):
            values.extend((f"{key}.{s}", v) for s, v in value.items())
        else:
            values.append((key, value))
    out.append(("", values, cis))
    for model, predicted in block.get("predictions", {}).items():
        for game, value in predicted.items():
            out.append((game, [(f"{model}.predicted_hns", value)], {}))
    return out
