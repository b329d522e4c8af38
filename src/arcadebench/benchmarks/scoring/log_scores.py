"""Turn the runs of episode logs into per-run scores, as each protocol says.

Running and scoring meet only at the log (bsuite's split): the monitor appends one JSON line
per finished episode, :func:`arcadebench.records.parse_log` reads them back into runs, and this
module applies the spec's ``evaluation`` rule:

- ``last_k`` (SABER Section 3.2; HWR "Reporting performance"): per run, the mean return of the
  last ``k`` complete episodes whose ``total_frames`` is at most the checkpoint, for every
  checkpoint the run reached, and at the end of the log. Fewer than ``k`` episodes before a
  checkpoint: the mean of those there are (``episodes`` says how many).
- ``mean`` (Atari-5; Sonic Section 3.9): per run, the mean return of all complete episodes.

Either way only complete episodes within the budget (``budget.frames`` / ``budget.steps``)
count. A sample-efficiency curve (:mod:`~arcadebench.benchmarks.scoring.sample_efficiency`)
scores a run the same way at more frame counts: at ``F`` frames, what the rule gives the
episodes completed by then (the last ``k`` of them, or their mean).

A protocol ``scored: after_training`` (Atari 100k, DQN 2015) scores a run by its evaluation
episodes instead, logged as run ``<run>.eval``: the mean return of the complete ones
(the budget is the training's), with the training run's frames beside it; the training logs
themselves are read for those frames only.

Runs are pooled into one algorithm (one bootstrap) only when they were played under the same
settings: a run that changed a protocol setting is scored under its algorithm's name followed
by the change (``random [repeat_action_probability=0.0]``), and a run whose log has lost its
header, so that its settings, seed and budget are unknown, under its name followed by
``[no header]``, with a note and a warning (its episodes still name the spec and its hash, which
the reader checks, as it checks a header's). Runs whose logs name no algorithm take their
directory's name; several of them pooled that way get a note saying so.

A protocol scored on training episodes (SABER, HWR, Machado et al. 2018, Atari-5, Sonic) scores
the episodes of a run that learns: SABER's number is the mean of the last 100 *training*
episodes at 200M frames (Section 3.2). A frozen policy (a saved model, an agent that does not
learn, as the runner's log header records it) played under such a protocol gives an
evaluation, not that number: its runs are scored apart as ``<name> [frozen policy]``, with a
note saying how the protocol's number is obtained. The built-in baselines (``random``,
``noop``) learn nothing by design: their episodes are the protocol's.

Functions: run_scores, read_logs, group_name, frozen_policy.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from arcadebench.benchmarks.scoring.raw_scores import ScoreCollector
from arcadebench.benchmarks.scoring.sample_efficiency import curve_frames
from arcadebench.errors import InputError, OtherSpec
from arcadebench.records import EVALUATION, LogWarning, RunLog, parse_log
from arcadebench.specs import Spec
from arcadebench.specs.model import Evaluation

__all__ = ["FROZEN_POLICY", "NO_HEADER", "frozen_policy", "group_name", "read_logs", "run_scores"]

NO_HEADER = "no header"
"""What the name of runs from logs without a header says (``random [no header]``)."""
FROZEN_POLICY = "frozen policy"
"""What the name of a frozen policy's runs under a training-scored protocol says."""


def run_scores(
    log: RunLog, evaluation: Evaluation, at: Collection[int] = ()
) -> dict[int | None, tuple[float, int, int]]:
    """Score one run per the spec's rule: ``{checkpoint or None (end): (score, frames, episodes)}``.

    ``frames`` is the checkpoint, or at the end the run's cumulative frames (within the budget);
    ``episodes`` how many episodes the score averages. A checkpoint appears only if the run got
    that far and has a complete episode before it. ``at`` are more frame counts to score the run
    at, the points of a sample-efficiency curve, by the same rule: the ``last_k`` episodes before
    each, or for ``mean`` the mean of the episodes completed by then.

    Example:
        >>> import numpy as np
        >>> log = RunLog("a", "pong", "0", "f", 1, np.array([1.0, 2.0, 3.0, 4.0]),
        ...              np.array([10, 20, 30, 40]), np.array([3, 5, 8, 10]),
        ...              np.array([True, True, True, False]), 40)
        >>> run_scores(log, Evaluation("last_k", k=2, checkpoints=(20, 50)))
        {None: (2.5, 40, 2), 20: (1.5, 20, 2)}
        >>> run_scores(log, Evaluation("mean"), at=(25, 40, 50))
        {None: (2.0, 40, 3), 25: (1.5, 25, 2), 40: (2.0, 40, 3)}
    """
    valid = log.complete.copy()
    end_frames = int(log.last_frames)
    if evaluation.budget_frames is not None:
        valid &= log.total_frames <= evaluation.budget_frames
        end_frames = min(end_frames, evaluation.budget_frames)
    if evaluation.budget_steps is not None:
        valid &= log.total_steps <= evaluation.budget_steps
    returns = log.returns[valid]
    frames = log.total_frames[valid]
    scores: dict[int | None, tuple[float, int, int]] = {}
    if returns.size == 0:
        return scores
    if evaluation.episode_aggregate == "mean":
        scores[None] = (float(returns.mean()), end_frames, int(returns.size))
        points: Collection[int] = at
        k = None
    else:
        k = evaluation.k or 1
        last = returns[-k:]
        scores[None] = (float(last.mean()), end_frames, int(last.size))
        points = {*evaluation.checkpoints, *at}
    for point in sorted(points):
        if log.last_frames < point:
            break
        if evaluation.budget_frames is not None and point > evaluation.budget_frames:
            break
        n = int(np.searchsorted(frames, point, side="right"))
        if n:
            window = returns[max(0, n - k) if k else 0 : n]
            scores[point] = (float(window.mean()), point, int(window.size))
    return scores


def _evaluation_score(
    log: RunLog, training_frames: int | None
) -> dict[int | None, tuple[float, int | None, int]]:
    """A run's evaluation episodes as its score: ``{None: (mean return, frames, episodes)}``.

    ``frames`` are the training run's (the agent's experience), not the evaluation's.
    """
    returns = log.returns[log.complete]
    if returns.size == 0:
        return {}
    return {None: (float(returns.mean()), training_frames, int(returns.size))}


def group_name(log: RunLog) -> str:
    """The algorithm a run is scored under: its name, with the settings it changed if any.

    A run whose log has no header is ``[no header]``: what it was played under is unknown.

    Example:
        >>> import numpy as np
        >>> empty = np.zeros(0)
        >>> log = RunLog("random", "pong", "0", "f", 1, empty, empty, empty, empty, 0,
        ...              deviations={"repeat_action_probability": {"spec": 0.25, "used": 0.0}})
        >>> group_name(log)
        'random [repeat_action_probability=0.0]'
        >>> group_name(RunLog("random", "pong", "0", "f", 1, empty, empty, empty, empty, 0,
        ...                   headed=False))
        'random [no header]'
    """
    changes = [_changes(log.deviations)] if log.deviations else []
    if not log.headed:
        changes.append(NO_HEADER)
    if frozen_policy(log):
        changes.append(FROZEN_POLICY)
    return f"{log.algorithm} [{', '.join(changes)}]" if changes else log.algorithm


def frozen_policy(log: RunLog) -> bool:
    """Whether ``log`` holds a frozen policy's training-phase episodes (module docstring).

    The runner's header says what played the run: an agent that does not learn, other than a
    built-in baseline. A log of an evaluation phase (a protocol scored after training) is an
    evaluation by design; a log without the runner's ``agent`` record says nothing of it.

    Example:
        >>> import numpy as np
        >>> empty = np.zeros(0)
        >>> saved = {"kind": "saved", "name": "ppo_pong", "learns": False}
        >>> frozen_policy(RunLog("ppo_pong", "pong", "0", "f", 1, empty, empty, empty, empty, 0,
        ...                      agent=saved))
        True
    """
    agent = log.agent
    learns, kind = agent.get("learns"), agent.get("kind")
    return log.phase == "training" and learns is False and kind not in (None, "builtin")


def _changes(deviations: Mapping[str, Any]) -> str:
    """``key=value`` for short values, the bare key for a long description (a misuse found)."""
    parts = []
    for key, change in sorted(deviations.items()):
        used = change.get("used") if isinstance(change, Mapping) else change
        short = isinstance(used, bool | int | float) or (isinstance(used, str) and len(used) < 20)
        parts.append(f"{key}={used}" if short else key)
    return ", ".join(parts)


def _listed(runs: set[tuple[str, str]]) -> str:
    listed = ", ".join(f"{game} {run!r}" for game, run in sorted(runs)[:3])
    return listed + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")


def _headless_note(runs: set[tuple[str, str]]) -> str:
    return (
        f"{len(runs)} run{'s' if len(runs) > 1 else ''} ({_listed(runs)}) logged without a "
        "header line: the settings, seed and budget played under are unknown, so they are "
        "scored apart from runs whose log has one"
    )


def _pooling_note(algorithm: str, runs: set[tuple[str, str]]) -> str:
    return (
        f"{len(runs)} runs ({_listed(runs)}) name no algorithm in their logs and are pooled under "
        f"their directory's name {algorithm!r}; if they are different learners, name each "
        "(gym.make(..., algorithm=...)) or give each its own log directory"
    )


def _warn_headless(file: str, logs: list[RunLog], scored_phase: str) -> None:
    """One line for a log without its header: what is unknown, how it is scored, the fix."""
    if scored_phase == "evaluation":  # the header says which log holds the evaluation
        how = "read as training episodes (the phase is in the header), so it is not scored"
    else:
        how = f"scored apart, as {group_name(logs[0])!r}, never pooled with runs whose log has one"
    warnings.warn(
        f"{file}:1: has no header line, so the settings, seed and budget its run was played "
        f"under are unknown; it is {how}; restore the header line the monitor wrote",
        LogWarning,
        stacklevel=3,
    )


def read_logs(
    spec: Spec,
    paths: Iterable[str | os.PathLike[str]],
    collector: ScoreCollector,
    other_specs_ok: Collection[Path] = (),
    curve: bool | Sequence[int] = False,
) -> list[Path]:
    """Read episode logs and add each run's scores (end and checkpoints) to ``collector``.

    Logs in ``other_specs_ok`` (found in a directory, which may hold several protocols' runs)
    are skipped when they were written for another spec; the skipped ones are returned.
    ``curve`` adds each run's scores at the points of a sample-efficiency curve
    (:func:`~arcadebench.benchmarks.scoring.sample_efficiency.curve_frames`: ``True`` for the
    default points up to the longest run, or the frame counts asked for).

    Raises:
        InputError: anything :func:`parse_log` refuses, or the same (algorithm, game, run) in
            two files (one run's episodes belong in one log; a resume appends to it).
    """
    owner: dict[tuple[str, str, str], str] = {}
    unnamed: dict[str, set[tuple[str, str]]] = {}
    headless: dict[str, set[tuple[str, str]]] = {}
    frozen: set[str] = set()
    skipped: list[Path] = []
    read: list[tuple[str | os.PathLike[str], list[RunLog]]] = []
    for path in paths:
        try:
            read.append((path, parse_log(spec, path)))
        except OtherSpec:
            if Path(path) not in other_specs_ok:
                raise
            skipped.append(Path(path))
    scored_phase = "evaluation" if spec.evaluation.scored == "after_training" else "training"
    trained = {
        (group_name(log), log.game, log.run): int(log.last_frames)
        for _, logs in read
        for log in logs
        if log.phase == "training"
    }
    at: tuple[int, ...] = ()
    if (curve is not False) and scored_phase == "training":
        at = curve_frames(spec.evaluation, max(trained.values(), default=0), curve)
    for path, logs in read:
        if any(not log.headed for log in logs):
            _warn_headless(str(path), logs, scored_phase)
        for log in logs:
            if log.phase != scored_phase:
                if log.phase == "evaluation":
                    warnings.warn(
                        f"{log.file}: evaluation episodes of run {log.run!r} are not scored: "
                        f"the {spec.name!r} protocol scores its training episodes",
                        LogWarning,
                        stacklevel=2,
                    )
                continue  # a training run of a protocol scored after it: its frames only
            algorithm = group_name(log)
            collector.played_by(algorithm, log.agent)
            if frozen_policy(log):
                frozen.add(algorithm)
            run = log.run.removesuffix(EVALUATION)  # an evaluation is scored as its run
            if not log.named:
                unnamed.setdefault(algorithm, set()).add((log.game, run))
            if not log.headed:
                headless.setdefault(algorithm, set()).add((log.game, run))
            key = (algorithm, log.game, run)
            if key in owner:
                raise InputError(
                    log.file,
                    log.line,
                    f"run {run!r} of {log.game} ({algorithm}) is also logged in {owner[key]}; "
                    "one run's episodes belong in one log",
                )
            owner[key] = log.file
            scores: Mapping[int | None, tuple[float, int | None, int]]
            if scored_phase == "evaluation":
                scores = _evaluation_score(log, trained.get((algorithm, log.game, run)))
            else:
                scores = run_scores(log, spec.evaluation, at)
            if not scores:
                warnings.warn(
                    f"{log.file}: {log.game} run {run!r} has no complete episode within the "
                    "budget; it has no score",
                    LogWarning,
                    stacklevel=2,
                )
            for checkpoint, (value, frames, episodes) in scores.items():
                if checkpoint in at:
                    collector.add_point(algorithm, log.game, run, checkpoint, value, episodes)
                if checkpoint is not None and checkpoint not in spec.evaluation.checkpoints:
                    continue  # a point of the curve only
                collector.add(
                    algorithm,
                    log.game,
                    run,
                    value,
                    where=(log.file, log.line),
                    frames=float(frames) if frames is not None else None,
                    episodes=episodes,
                    checkpoint=checkpoint,
                    deviations=log.deviations if checkpoint is None else None,
                )
        collector.sources.append(str(path))
    for algorithm, runs in unnamed.items():
        if len({run for _, run in runs}) > 1:
            collector.note(algorithm, _pooling_note(algorithm, runs))
    for algorithm, runs in headless.items():
        collector.note(algorithm, _headless_note(runs))
    for algorithm in frozen:
        collector.mark_frozen(algorithm)
    return skipped
