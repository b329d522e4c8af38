"""Read the monitor's episode logs and turn episodes into per-run scores, as each protocol says.

Running and scoring meet only here (bsuite's split): the monitor appends one JSON line per
finished episode (format in DEVELOPING.md, "Episode log"); this module streams those lines,
checks them against the spec being scored, groups them by (algorithm, game, run) and applies the
spec's ``evaluation`` rule:

- ``last_k`` (SABER Section 3.2; HWR "Reporting performance"): per run, the mean return of the
  last ``k`` complete episodes whose ``total_frames`` is at most the checkpoint, for every
  checkpoint the run reached, and at the end of the log. Fewer than ``k`` episodes before a
  checkpoint: the mean of those there are (``episodes`` says how many).
- ``mean`` (Atari-5; Sonic Section 3.9): per run, the mean return of all complete episodes.

Either way only complete episodes within the budget (``budget.frames`` / ``budget.steps``)
count. Robustness: records of unknown ``kind`` are skipped; a last line cut by a crash is
ignored with a :class:`LogWarning` (earlier episodes are kept, none is counted twice); a corrupt
line anywhere else, a repeated or out-of-order episode, or a log written for another spec (name
or content hash) is an :class:`~arcadebench.errors.InputError` naming the file and line.

Classes: LogWarning, RunLog.
Functions: parse_log, run_scores, read_logs.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.inputs import ScoreCollector
from arcadebench.errors import InputError, UnknownGame
from arcadebench.specs import Spec
from arcadebench.specs.model import Evaluation

__all__ = ["LogWarning", "RunLog", "parse_log", "read_logs", "run_scores"]

_FIELDS = (
    "spec",
    "spec_hash",
    "game",
    "run",
    "episode",
    "return",
    "total_frames",
    "total_steps",
    "complete",
)


class LogWarning(UserWarning):
    """Something in an episode log was tolerated (a cut last line, protocol deviations...)."""


@dataclass(frozen=True)
class RunLog:
    """The episodes of one run of one game, in log order.

    Attributes:
        algorithm: the agent's name (log header ``algorithm``/``agent``, else from the path).
        game: canonical game or level name.
        run: the run id.
        file: the log file.
        line: the line of the run's first episode.
        returns: protocol return of each episode.
        total_frames: cumulative emulator frames of the run after each episode.
        total_steps: cumulative agent steps of the run after each episode.
        complete: ``False`` for an episode cut by the budget (never scored).
        last_frames: cumulative frames at the run's last record (how far the run got).
    """

    algorithm: str
    game: str
    run: str
    file: str
    line: int
    returns: NDArray[np.float64]
    total_frames: NDArray[np.int64]
    total_steps: NDArray[np.int64]
    complete: NDArray[np.bool_]
    last_frames: int


class _Run:
    """Column lists of one run while a file is streamed."""

    __slots__ = ("complete", "episode", "frames", "line", "returns", "steps")

    def __init__(self, line: int) -> None:
        self.line = line
        self.returns: list[float] = []
        self.frames: list[int] = []
        self.steps: list[int] = []
        self.complete: list[bool] = []
        self.episode = (-1, 0)  # (last episode index, its line)


def _default_algorithm(path: Path, spec: Spec) -> str:
    """``<log_dir>/<spec>/<game>/<run>.jsonl`` -> ``<log_dir>``'s name; otherwise the file stem."""
    parents = path.resolve().parents
    if len(parents) > 2 and parents[1].name == spec.name and parents[2].name:
        return parents[2].name
    return path.stem


def _is_int(value: object) -> bool:
    return type(value) is int


def parse_log(spec: Spec, path: str | os.PathLike) -> list[RunLog]:
    """Stream one log file and return its runs (usually one).

    Raises:
        InputError: unreadable file, a corrupt line before the last, a record without a field
            the format requires or with a wrong type, another spec's log, an unknown game, a
            repeated/out-of-order episode, or cumulative frames going backwards.
    """
    path = Path(path)
    file = str(path)
    algorithm = _default_algorithm(path, spec)
    games: dict[object, str] = {}
    runs: dict[tuple[str, str], _Run] = {}
    deviations_seen = False
    seen_episode = False
    early_resets = 0
    loads = json.loads
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; binary lines feed json.loads directly
    except OSError as error:
        raise InputError(file, None, f"cannot read the log: {error.strerror or error}") from None
    with handle:
        lineno = 0
        for raw in handle:
            lineno += 1
            if raw.isspace():
                continue
            try:
                record = loads(raw)
            except (ValueError, RecursionError):
                if not raw.endswith(b"\n"):
                    warnings.warn(
                        f"{file}:{lineno}: the last line is cut off (the run was killed while "
                        "writing it); it is ignored and the episodes before it are kept",
                        LogWarning,
                        stacklevel=2,
                    )
                    break
                raise InputError(
                    file,
                    lineno,
                    "is not a JSON record: the log is corrupt here "
                    "(only a cut last line is tolerated)",
                ) from None
            if type(record) is not dict:
                raise InputError(file, lineno, f"is not a JSON object but {type(record).__name__}")
            kind = record.get("kind")
            if kind != "episode":
                if not isinstance(kind, str):
                    raise InputError(
                        file, lineno, 'has no "kind" (every log record has one, e.g. "episode")'
                    )
                if kind == "header" and not seen_episode:
                    name = record.get("algorithm") or record.get("agent")
                    if isinstance(name, str) and name.strip():
                        algorithm = name.strip()
                continue
            seen_episode = True
            try:
                spec_name, spec_hash, game_name, run, episode, ret, frames, steps, complete = (
                    record[f] for f in _FIELDS
                )
            except KeyError as error:
                raise InputError(
                    file,
                    lineno,
                    f'episode record has no "{error.args[0]}" field '
                    '(see DEVELOPING.md, "Episode log")',
                ) from None
            if spec_name != spec.name:
                raise InputError(
                    file,
                    lineno,
                    f"was written for spec {spec_name!r}, not {spec.name!r}; "
                    "score it with that spec "
                    f"(`arcadebench score {spec_name} ...`)",
                )
            if spec_hash != spec.hash:
                raise InputError(
                    file,
                    lineno,
                    "was written with a different version of the "
                    f"{spec.name!r} spec ({spec_hash!r}, "
                    f"this one is {spec.hash!r}); score it with the spec file that wrote it",
                )
            game = games.get(game_name) if isinstance(game_name, str) else None
            if game is None:
                if not isinstance(game_name, str):
                    raise InputError(file, lineno, f'"game" must be a string, got {game_name!r}')
                try:
                    game = games[game_name] = spec.resolve_game(game_name)
                except UnknownGame as error:
                    raise InputError(file, lineno, f"unknown game: {error}") from None
            if _is_int(run):
                run = str(run)
            elif not isinstance(run, str):
                raise InputError(file, lineno, f'"run" must be a string or an integer, got {run!r}')
            if type(ret) not in (float, int) or not math.isfinite(ret):
                raise InputError(file, lineno, f'"return" must be a finite number, got {ret!r}')
            if not (_is_int(frames) and frames >= 0 and _is_int(steps) and steps >= 0):
                raise InputError(
                    file,
                    lineno,
                    '"total_frames" and "total_steps" must be non-negative integers, '
                    f"got {frames!r} and {steps!r}",
                )
            if type(complete) is not bool:
                raise InputError(
                    file, lineno, f'"complete" must be true or false, got {complete!r}'
                )
            if not _is_int(episode):
                raise InputError(file, lineno, f'"episode" must be an integer, got {episode!r}')
            if not deviations_seen and record.get("deviations"):
                deviations_seen = True
                warnings.warn(
                    f"{file}:{lineno}: the run deviates from the {spec.name!r} protocol: "
                    f"{json.dumps(record['deviations'], default=str)[:200]}; "
                    "its scores are not comparable "
                    "with published ones",
                    LogWarning,
                    stacklevel=2,
                )
            acc = runs.get((game, run))
            if acc is None:
                acc = runs[(game, run)] = _Run(lineno)
            elif episode <= acc.episode[0]:
                raise InputError(
                    file,
                    lineno,
                    f"episode {episode} of {game} run {run!r} comes after episode {acc.episode[0]} "
                    f"(line {acc.episode[1]}): an episode is repeated or out of order; "
                    "remove the duplicated lines (was the run resumed twice?)",
                )
            elif frames < acc.frames[-1]:
                raise InputError(
                    file,
                    lineno,
                    f'"total_frames" of {game} run {run!r} went back '
                    f"from {acc.frames[-1]} to {frames}",
                )
            if not complete and record.get("end_reason") == "reset":
                early_resets += 1
            acc.episode = (episode, lineno)
            acc.returns.append(ret)
            acc.frames.append(frames)
            acc.steps.append(steps)
            acc.complete.append(complete)
    if not runs:
        warnings.warn(f"{file}: has no episode records", LogWarning, stacklevel=2)
    if early_resets:
        warnings.warn(
            f"{file}: {early_resets} episode(s) were cut short by a reset before they ended; the "
            "protocols score whole episodes only (Sonic Section 3.5 forbids early resets), so "
            "they are not scored and the run may look better than it is",
            LogWarning,
            stacklevel=2,
        )
    return [
        RunLog(
            algorithm=algorithm,
            game=game,
            run=run,
            file=file,
            line=acc.line,
            returns=np.asarray(acc.returns, dtype=np.float64),
            total_frames=np.asarray(acc.frames, dtype=np.int64),
            total_steps=np.asarray(acc.steps, dtype=np.int64),
            complete=np.asarray(acc.complete, dtype=bool),
            last_frames=acc.frames[-1],
        )
        for (game, run), acc in runs.items()
    ]


def run_scores(log: RunLog, evaluation: Evaluation) -> dict[int | None, tuple[float, int, int]]:
    """Score one run per the spec's rule: ``{checkpoint or None (end): (score, frames, episodes)}``.

    ``frames`` is the checkpoint, or at the end the run's cumulative frames (within the budget);
    ``episodes`` how many episodes the score averages. A checkpoint appears only if the run got
    that far and has a complete episode before it.

    Example:
        >>> import numpy as np
        >>> log = RunLog("a", "pong", "0", "f", 1, np.array([1.0, 2.0, 3.0, 4.0]),
        ...              np.array([10, 20, 30, 40]), np.array([3, 5, 8, 10]),
        ...              np.array([True, True, True, False]), 40)
        >>> run_scores(log, Evaluation("last_k", k=2, checkpoints=(20, 50)))
        {None: (2.5, 40, 2), 20: (1.5, 20, 2)}
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
        return scores
    k = evaluation.k or 1
    last = returns[-k:]
    scores[None] = (float(last.mean()), end_frames, int(last.size))
    for checkpoint in evaluation.checkpoints:
        if log.last_frames < checkpoint:
            break
        n = int(np.searchsorted(frames, checkpoint, side="right"))
        if n:
            window = returns[max(0, n - k) : n]
            scores[checkpoint] = (float(window.mean()), checkpoint, int(window.size))
    return scores


def read_logs(
    spec: Spec, paths: Iterable[str | os.PathLike], collector: ScoreCollector | None = None
) -> ScoreCollector:
    """Read episode logs and add each run's scores (end and checkpoints) to ``collector``.

    Raises:
        InputError: anything :func:`parse_log` refuses, or the same (algorithm, game, run) in
            two files (one run's episodes belong in one log; a resume appends to it).
    """
    collector = collector if collector is not None else ScoreCollector()
    owner: dict[tuple[str, str, str], str] = {}
    for path in paths:
        for log in parse_log(spec, path):
            key = (log.algorithm, log.game, log.run)
            if key in owner:
                raise InputError(
                    log.file,
                    log.line,
                    f"run {log.run!r} of {log.game} ({log.algorithm}) "
                    f"is also logged in {owner[key]}; "
                    "one run's episodes belong in one log",
                )
            owner[key] = log.file
            scores = run_scores(log, spec.evaluation)
            if not scores:
                warnings.warn(
                    f"{log.file}: {log.game} run {log.run!r} "
                    "has no complete episode within the budget; "
                    "it has no score",
                    LogWarning,
                    stacklevel=2,
                )
            for checkpoint, (value, frames, episodes) in scores.items():
                collector.add(
                    log.algorithm,
                    log.game,
                    log.run,
                    value,
                    where=(log.file, log.line),
                    frames=float(frames),
                    episodes=episodes,
                    checkpoint=checkpoint,
                )
        collector.sources.append(str(path))
    return collector
