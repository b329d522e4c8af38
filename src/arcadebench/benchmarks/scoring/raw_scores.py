"""The raw scores every input becomes: algorithm -> game -> one score per run.

Score tables (:mod:`~arcadebench.benchmarks.scoring.score_files`) and episode logs
(:mod:`~arcadebench.benchmarks.scoring.log_scores`) both add their scores to a
:class:`ScoreCollector`, which refuses a run given twice across all inputs and builds the
:class:`RawScores` the scorer reads.

Classes: RunScores, AlgorithmScores, RawScores, ScoreCollector.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from arcadebench.errors import InputError
from arcadebench.specs import Spec

__all__ = ["AlgorithmScores", "RawScores", "RunScores", "ScoreCollector"]

_Entry = tuple[float, float | None, int | None]
"""One run's ``(score, frames, episodes)``."""


@dataclass(frozen=True)
class RunScores:
    """One algorithm's scores on one game: one entry per run (seed), in input order.

    Attributes:
        scores: the per-run raw score (``inf`` for infinite gameplay).
        runs: the run ids (``""`` for a source that has one unnamed run).
        frames: training frames each run used, ``None`` where not given.
        episodes: episodes behind each score (episode logs only; ``None`` otherwise).
    """

    scores: tuple[float, ...]
    runs: tuple[str, ...]
    frames: tuple[float | None, ...]
    episodes: tuple[int | None, ...]


@dataclass(frozen=True)
class AlgorithmScores:
    """One algorithm's scores: at the end of training, and at each frame checkpoint (logs).

    ``deviations`` are the settings its logged runs changed from the protocol:
    ``{game: {run: {setting: {"spec": ..., "used": ...}}}}`` (only runs that deviate);
    ``notes`` what a reader of its scores must know about how its runs were grouped;
    ``curve`` the scores at the points of a sample-efficiency curve (logs, when asked for);
    ``frozen_policy`` whether its runs are a frozen policy's episodes under a protocol that
    scores training episodes (:func:`~.log_scores.frozen_policy`).
    """

    games: Mapping[str, RunScores]
    checkpoints: Mapping[int, Mapping[str, RunScores]] = field(default_factory=dict)
    deviations: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    curve: Mapping[int, Mapping[str, RunScores]] = field(default_factory=dict)
    frozen_policy: bool = False


@dataclass(frozen=True)
class RawScores:
    """Raw scores of every algorithm found in the inputs, game names canonical for the spec."""

    algorithms: Mapping[str, AlgorithmScores]
    sources: tuple[str, ...] = ()
    agents: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    """What played each algorithm's logged runs, as their headers record it (each once)."""


class ScoreCollector:
    """Accumulates scores from several sources and refuses duplicates across all of them.

    A (algorithm, checkpoint, game, run) key may be given once; the error names both places.
    Explicit NA rows take part in the duplicate check but add no score.
    """

    def __init__(self) -> None:
        # (algorithm, checkpoint, game) -> run -> (score, frames, episodes)
        self._cells: dict[tuple[str, int | None, str], dict[str, _Entry]] = {}
        # (algorithm, frames, game) -> run -> (score, frames, episodes): the points of a curve
        self._points: dict[tuple[str, int, str], dict[str, _Entry]] = {}
        self._deviations: dict[str, dict[str, dict[str, Any]]] = {}
        self._notes: dict[str, list[str]] = {}
        self._frozen: set[str] = set()
        self._agents: dict[str, list[Mapping[str, Any]]] = {}
        self._where: dict[tuple[str, int | None, str, str], str] = {}
        self._order: list[str] = []
        self.sources: list[str] = []

    def add(
        self,
        algorithm: str,
        game: str,
        run: str,
        score: float | None,
        *,
        where: tuple[str, int | None],
        frames: float | None = None,
        episodes: int | None = None,
        checkpoint: int | None = None,
        deviations: Mapping[str, Any] | None = None,
    ) -> None:
        """Record one run's score (``None`` = explicit NA); ``where`` is ``(file, line)``."""
        key = (algorithm, checkpoint, game, run)
        here = f"{where[0]}:{where[1]}" if where[1] is not None else where[0]
        if key in self._where:
            what = f"run {run!r} of {game}" if run else game
            at = f" at checkpoint {checkpoint:,}" if checkpoint is not None else ""
            raise InputError(
                where[0],
                where[1],
                f"duplicate score for {what}{at} of algorithm {algorithm!r} (first at "
                f"{self._where[key]}); give each run its own `run` id or remove one",
            )
        self._where[key] = here
        if algorithm not in self._order:
            self._order.append(algorithm)
        if deviations:
            per_game = self._deviations.setdefault(algorithm, {}).setdefault(game, {})
            per_game[run] = dict(deviations)
        if score is not None:
            self._cells.setdefault((algorithm, checkpoint, game), {})[run] = (
                score,
                frames,
                episodes,
            )

    def add_point(
        self, algorithm: str, game: str, run: str, frames: int, score: float, episodes: int | None
    ) -> None:
        """Record one run's score at ``frames``, a point of its algorithm's curve.

        The run itself was checked by :meth:`add` (its score at the end of the log, or its last
        row in a score table); ``episodes`` is ``None`` for a score table's.
        """
        self._points.setdefault((algorithm, frames, game), {})[run] = (
            score,
            float(frames),
            episodes,
        )

    def played_by(self, algorithm: str, agent: Mapping[str, Any]) -> None:
        """Record what played a logged run of ``algorithm`` (its header's ``agent``)."""
        known = self._agents.setdefault(algorithm, [])
        if agent and agent not in known:
            known.append(agent)

    def mark_frozen(self, algorithm: str) -> None:
        """Mark the runs of ``algorithm`` as a frozen policy's (:class:`AlgorithmScores`)."""
        self._frozen.add(algorithm)

    def note(self, algorithm: str, text: str) -> None:
        """Attach a note to ``algorithm``'s scores (once per text)."""
        notes = self._notes.setdefault(algorithm, [])
        if text not in notes:
            notes.append(text)

    def build(self, spec: Spec) -> RawScores:
        """The collected scores, games in the spec's order, runs in input order."""
        position = {g: i for i, g in enumerate(spec.games)}
        algorithms: dict[str, AlgorithmScores] = {}
        for algorithm in self._order:
            checkpoints = _by_frames(self._cells, algorithm, position)
            curve = _by_frames(self._points, algorithm, position)
            algorithms[algorithm] = AlgorithmScores(
                checkpoints.pop(None, {}),
                checkpoints,
                self._deviations.get(algorithm, {}),
                tuple(self._notes.get(algorithm, ())),
                curve,
                algorithm in self._frozen,
            )
        agents = {a: tuple(found) for a, found in self._agents.items() if found}
        return RawScores(algorithms, tuple(self.sources), agents)


def _by_frames(
    cells: Mapping[tuple[str, Any, str], Mapping[str, _Entry]],
    algorithm: str,
    position: Mapping[str, int],
) -> dict[Any, dict[str, RunScores]]:
    """An algorithm's ``{frames (None: the end): {game: runs}}``, frames up, games as the spec's."""
    keys = sorted(
        (key for key in cells if key[0] == algorithm),
        key=lambda k: (k[1] is not None, k[1] or 0, position.get(k[2], len(position))),
    )
    out: dict[Any, dict[str, RunScores]] = {}
    for key in keys:
        out.setdefault(key[1], {})[key[2]] = _run_scores(cells[key])
    return out


def _run_scores(runs: Mapping[str, _Entry]) -> RunScores:
    """A game's runs, ``{run: (score, frames, episodes)}`` in input order, as :class:`RunScores`."""
    return RunScores(
        scores=tuple(v[0] for v in runs.values()),
        runs=tuple(runs),
        frames=tuple(v[1] for v in runs.values()),
        episodes=tuple(v[2] for v in runs.values()),
    )
