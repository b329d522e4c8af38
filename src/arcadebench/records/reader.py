"""Read an episode log back: decode its lines, check each record, group the episodes into runs.

The reader is the other half of the contract :mod:`arcadebench.records.schema` declares; the
monitors use it to continue a run (``resume``), the runner to see what is done, the scorer to
score. :func:`parse_log` is four steps, one function each: decode the lines
(:func:`log_records`), check an episode record's fields (``_episode``) and that it belongs to
the spec being read (``_check_spec``), and add it to its run in order (``_Runs``).

Robustness: records of unknown ``kind`` are skipped; a line longer than :data:`MAX_LOG_LINE`
or nested deeper than :data:`MAX_DEPTH` is a corrupt line (:func:`bounded_lines`,
:func:`bounded_json`: a log may be someone else's file, and reading it must not cost unbounded
memory or recursion); a last line cut by a crash is ignored with
a :class:`LogWarning` (earlier episodes are kept, none is counted twice); a corrupt line anywhere
else, a record without a required field or with a wrong type, a repeated or out-of-order
episode, or a log written for another spec (name or content hash, in its header or in any
episode) is an :class:`~arcadebench.errors.InputError` naming the file and line. A log that
has lost its header is read (:attr:`RunLog.headed` says so; the scorer scores it apart).

Classes: LogWarning, RunLog.
Functions: parse_log, log_records, bounded_lines, bounded_json.
"""

from __future__ import annotations

import json
import math
import os
import re
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from arcadebench.errors import InputError, OtherSpec, UnknownGame
from arcadebench.specs import Spec

__all__ = [
    "MAX_DEPTH",
    "MAX_LOG_LINE",
    "LogWarning",
    "RunLog",
    "bounded_json",
    "bounded_lines",
    "log_records",
    "parse_log",
]

MAX_LOG_LINE = 4 * 2**20
"""The longest log line read (an episode line is about 500 bytes, a header 1 KB)."""

MAX_DEPTH = 16
"""The deepest nesting of arrays and objects a record may have (the formats' records have 4)."""

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)


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
        envs: the stream (environment of the run) of each episode.
        streams: per stream, ``(steps, frames, next episode, complete episodes)`` after its
            last record: where a resumed stream continues.
        indices: the runner's index of each episode in its job (the record's ``index``; for a
            run of one stream without it, the episode's number, which is how the runner
            numbered a job's episodes before it spread them over streams; else -1).
        deviations: the settings the run changed from its spec (the first record's).
        named: whether the log's header names the algorithm (``False``: ``algorithm`` is the
            log directory's name, which several learners may share).
        phase: ``"training"``, or ``"evaluation"`` for the evaluation episodes of a protocol
            scored after training (the header's ``phase``; ``run`` is then ``<run>.eval``).
        headed: whether the log opens with its header (``False``: the settings, seed and
            budget the run was played under are unknown; the episodes still name the spec).
        agent: what the header records of the agent that played it (the runner's: ``kind``,
            ``name``, ``learns``, a file's ``sha256``...; empty where nothing says).
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
    envs: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    streams: Mapping[int, tuple[int, int, int, int]] = field(default_factory=dict)
    indices: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    deviations: Mapping[str, Any] = field(default_factory=dict)
    named: bool = True
    phase: str = "training"
    headed: bool = True
    agent: Mapping[str, Any] = field(default_factory=dict)


class _Episode(NamedTuple):
    """The fields of an episode record the reader needs, checked."""

    env: int
    env_steps: int
    env_frames: int
    game: str
    run: str
    episode: int
    ret: float
    total_frames: int
    total_steps: int
    complete: bool
    runner_index: int | None  # the record's "index" (NamedTuple has an index method)


def _is_int(value: object) -> bool:
    return type(value) is int


def _default_algorithm(path: Path, spec: Spec) -> str:
    """``<log_dir>/<spec>/<game>/<run>.jsonl`` -> ``<log_dir>``'s name; otherwise the file stem."""
    parents = path.resolve().parents
    if len(parents) > 2 and parents[1].name == spec.name and parents[2].name:
        return parents[2].name
    return path.stem


# -- step 1: decode --------------------------------------------------------------------------------


def bounded_lines(handle: IO[bytes], limit: int) -> Iterator[tuple[int, int, bytes | None]]:
    """``(line number, offset, line)`` of a binary file; ``None`` for a line over ``limit`` bytes.

    The overlong line is skipped without being held in memory.
    """
    lineno, offset = 0, 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        lineno += 1
        start = offset
        offset += len(raw)
        if len(raw) <= limit:
            yield lineno, start, raw
            continue
        while raw and not raw.endswith(b"\n"):
            raw = handle.readline(2**20)
            offset += len(raw)
        yield lineno, start, None


def bounded_json(raw: bytes | str) -> Any:
    """``json.loads(raw)``, refusing nesting deeper than :data:`MAX_DEPTH` before parsing.

    Raises:
        ValueError: not JSON, or nested too deeply (the message says which).

    Example:
        >>> bounded_json(b'{"kind": "episode", "deviations": {}}')["kind"]
        'episode'
        >>> bounded_json("[" * 100 + "]" * 100)
        Traceback (most recent call last):
        ValueError: nested more than 16 deep
    """
    data = raw.encode() if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and _depth(data) > MAX_DEPTH:
        raise ValueError(f"nested more than {MAX_DEPTH} deep")
    try:
        return json.loads(data)
    except RecursionError:  # pragma: no cover - the depth was checked
        raise ValueError(f"nested more than {MAX_DEPTH} deep") from None


def _depth(data: bytes) -> int:
    """The deepest nesting of ``data``'s arrays and objects (brackets in strings do not count)."""
    bare = np.frombuffer(_STRING.sub(b'""', data), dtype=np.uint8)
    opens = (bare == ord("[")) | (bare == ord("{"))
    closes = (bare == ord("]")) | (bare == ord("}"))
    levels = np.cumsum(opens.astype(np.int64) - closes.astype(np.int64))
    return int(levels.max(initial=0))


def log_records(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every record of a log as it is written, with its line number (a cut last line: none).

    For what needs the lines themselves (re-simulating episodes needs each one's steps, frames
    and end reason); the scorer's view of a run is :func:`parse_log`'s.

    Raises:
        InputError: unreadable file, or a corrupt line before the last.
    """
    file = str(Path(path))
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below; bytes feed json.loads directly
    except OSError as error:
        raise InputError(file, None, f"cannot read the log: {error.strerror or error}") from None
    with handle:
        for lineno, _, raw in bounded_lines(handle, MAX_LOG_LINE):
            if raw is None:
                raise InputError(
                    file, lineno, f"is longer than {MAX_LOG_LINE:,} bytes: no log record is"
                )
            if raw.isspace():
                continue
            try:
                record = bounded_json(raw)
            except ValueError:
                if not raw.endswith(b"\n"):
                    warnings.warn(
                        f"{file}:{lineno}: the last line is cut off (the run was killed while "
                        "writing it); it is ignored and the episodes before it are kept",
                        LogWarning,
                        stacklevel=3,
                    )
                    return
                raise InputError(
                    file,
                    lineno,
                    "is not a JSON record: the log is corrupt here "
                    "(only a cut last line is tolerated)",
                ) from None
            if type(record) is not dict:
                raise InputError(file, lineno, f"is not a JSON object but {type(record).__name__}")
            if not isinstance(record.get("kind"), str):
                raise InputError(
                    file, lineno, 'has no "kind" (every log record has one, e.g. "episode")'
                )
            yield lineno, record


# -- step 2: an episode record's fields ------------------------------------------------------------

_READ_FIELDS = (
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


def _episode(spec: Spec, record: dict[str, Any], file: str, lineno: int) -> _Episode:
    """The checked fields of an episode record (DEVELOPING.md, "Episode log") of ``spec``."""
    try:
        spec_name, spec_hash, game, run, episode, ret, frames, steps, complete = (
            record[f] for f in _READ_FIELDS
        )
    except KeyError as error:
        raise InputError(
            file,
            lineno,
            f'episode record has no "{error.args[0]}" field (see DEVELOPING.md, "Episode log")',
        ) from None
    _check_spec(spec, spec_name, spec_hash, file, lineno)
    if not isinstance(game, str):
        raise InputError(file, lineno, f'"game" must be a string, got {game!r}')
    if _is_int(run):
        run = str(run)
    elif not isinstance(run, str):
        raise InputError(file, lineno, f'"run" must be a string or an integer, got {run!r}')
    if type(ret) not in (float, int) or not math.isfinite(ret):
        raise InputError(file, lineno, f'"return" must be a finite number, got {ret!r}')
    _check_counts(file, lineno, '"total_frames" and "total_steps"', frames, steps)
    if type(complete) is not bool:
        raise InputError(file, lineno, f'"complete" must be true or false, got {complete!r}')
    if not _is_int(episode):
        raise InputError(file, lineno, f'"episode" must be an integer, got {episode!r}')
    # format 1 (one environment per run) has no stream fields: its stream 0 is the run
    env = record.get("env", 0)
    env_steps, env_frames = record.get("env_steps", steps), record.get("env_frames", frames)
    if not (_is_int(env) and 0 <= env):
        raise InputError(file, lineno, f'"env" must be a non-negative integer, got {env!r}')
    _check_counts(file, lineno, '"env_steps" and "env_frames"', env_steps, env_frames)
    index = record.get("index")
    if index is not None and not (_is_int(index) and index >= 0):
        raise InputError(file, lineno, f'"index" must be a non-negative integer, got {index!r}')
    return _Episode(
        env, env_steps, env_frames, game, run, episode, float(ret), frames, steps, complete, index
    )


def _check_counts(file: str, lineno: int, names: str, first: Any, second: Any) -> None:
    """Refuse a pair of counts (``names`` says which) that are not non-negative integers."""
    if not (_is_int(first) and first >= 0 and _is_int(second) and second >= 0):
        raise InputError(
            file, lineno, f"{names} must be non-negative integers, got {first!r} and {second!r}"
        )


# -- step 3: the spec ------------------------------------------------------------------------------


def _check_spec(spec: Spec, name: object, spec_hash: object, file: str, lineno: int) -> None:
    """Refuse a record written for another spec, or for another version of this one."""
    if name != spec.name:
        raise OtherSpec(
            file,
            lineno,
            f"was written for spec {name!r}, not {spec.name!r}; score it with that spec "
            f"(`arcadebench score {name} ...`)",
        )
    if spec_hash != spec.hash:
        raise InputError(
            file,
            lineno,
            f"was written with a different version of the {spec.name!r} spec "
            f"({spec_hash!r}, this one is {spec.hash!r}); score it with the spec file "
            "that wrote it",
        )


# -- step 4: runs ----------------------------------------------------------------------------------


class _Run:
    """Column lists of one run while a file is streamed, and where each stream got to."""

    def __init__(self, line: int, deviations: Any) -> None:
        self.line = line
        self.deviations = deviations if isinstance(deviations, dict) else {}
        self.returns: list[float] = []
        self.frames: list[int] = []
        self.steps: list[int] = []
        self.complete: list[bool] = []
        self.envs: list[int] = []
        self.indices: list[int] = []  # the record's index, or -1 - its episode number
        self.indexed: dict[int, int] = {}  # complete episodes' runner index -> line
        self.last: dict[int, tuple[int, int]] = {}  # stream -> (last episode index, its line)
        self.streams: dict[int, tuple[int, int, int, int]] = {}


class _Runs:
    """The runs of one file: game names resolved once, episodes checked to be in order."""

    def __init__(self, spec: Spec, file: str) -> None:
        self.spec = spec
        self.file = file
        self.games: dict[str, str] = {}
        self.runs: dict[tuple[str, str], _Run] = {}

    def game(self, name: str, lineno: int) -> str:
        game = self.games.get(name)
        if game is None:
            try:
                game = self.games[name] = self.spec.resolve_game(name)
            except UnknownGame as error:
                raise InputError(self.file, lineno, f"unknown game: {error}") from None
        return game

    def add(self, episode: _Episode, lineno: int, deviations: Any) -> None:
        game = self.game(episode.game, lineno)
        run = self.runs.get((game, episode.run))
        if run is None:
            run = self.runs[(game, episode.run)] = _Run(lineno, deviations)
        last = run.last.get(episode.env)
        if last is not None and episode.episode <= last[0]:
            stream = f" (environment {episode.env})" if episode.env else ""
            raise InputError(
                self.file,
                lineno,
                f"episode {episode.episode} of {game} run {episode.run!r}{stream} comes after "
                f"episode {last[0]} (line {last[1]}): an episode is repeated or out of "
                "order; remove the duplicated lines (was the run resumed twice?)",
            )
        if run.frames and episode.total_frames < run.frames[-1]:
            raise InputError(
                self.file,
                lineno,
                f'"total_frames" of {game} run {episode.run!r} went back from {run.frames[-1]} '
                f"to {episode.total_frames}",
            )
        index = episode.runner_index
        if index is not None and episode.complete:
            played = run.indexed.setdefault(index, lineno)
            if played != lineno:
                raise InputError(
                    self.file,
                    lineno,
                    f"episode index {index} of {game} run {episode.run!r} was already played "
                    f"(line {played}): an episode is repeated; remove the duplicated line",
                )
        run.last[episode.env] = (episode.episode, lineno)
        run.indices.append(-1 - episode.episode if index is None else index)
        done = run.streams.get(episode.env, (0, 0, 0, 0))[3] + episode.complete
        next_episode = episode.episode + 1
        run.streams[episode.env] = (episode.env_steps, episode.env_frames, next_episode, done)
        run.envs.append(episode.env)
        run.returns.append(episode.ret)
        run.frames.append(episode.total_frames)
        run.steps.append(episode.total_steps)
        run.complete.append(episode.complete)

    def logs(
        self, algorithm: str, named: bool, phase: str, headed: bool, agent: Mapping[str, Any]
    ) -> list[RunLog]:
        return [
            RunLog(
                algorithm=algorithm,
                named=named,
                phase=phase,
                headed=headed,
                agent=agent,
                game=game,
                run=run,
                file=self.file,
                line=acc.line,
                returns=np.asarray(acc.returns, dtype=np.float64),
                total_frames=np.asarray(acc.frames, dtype=np.int64),
                total_steps=np.asarray(acc.steps, dtype=np.int64),
                complete=np.asarray(acc.complete, dtype=bool),
                last_frames=acc.frames[-1],
                envs=np.asarray(acc.envs, dtype=np.int64),
                streams=dict(acc.streams),
                indices=_indices(acc),
                deviations=acc.deviations,
            )
            for (game, run), acc in self.runs.items()
        ]


def _indices(run: _Run) -> NDArray[np.int64]:
    """Each episode's runner index (see :attr:`RunLog.indices`)."""
    indices = np.asarray(run.indices, dtype=np.int64)
    unindexed = indices < 0
    if len(run.streams) == 1:  # a job the runner played in one stream: its episode numbers
        indices[unindexed] = -1 - indices[unindexed]
    else:
        indices[unindexed] = -1
    return indices


def _header_algorithm(record: dict[str, Any]) -> str | None:
    name = record.get("algorithm") or record.get("agent")
    return name.strip() if isinstance(name, str) and name.strip() else None


def parse_log(spec: Spec, path: str | os.PathLike[str]) -> list[RunLog]:
    """Stream one log file and return its runs (usually one).

    Raises:
        InputError: unreadable file, a corrupt line before the last, a record without a field
            the format requires or with a wrong type, another spec's log, an unknown game, a
            repeated/out-of-order episode, or cumulative frames going backwards.
    """
    path = Path(path)
    file = str(path)
    algorithm, named, phase = _default_algorithm(path, spec), False, "training"
    headed = False
    agent: Mapping[str, Any] = {}
    runs = _Runs(spec, file)
    deviations: tuple[int, Any] | None = None
    early_resets = 0
    for lineno, record in log_records(path):
        kind = record["kind"]
        if kind == "header":  # its spec is the episodes' too: an edited header is no other run
            _check_spec(
                spec,
                record.get("spec", spec.name),
                record.get("spec_hash", spec.hash),
                file,
                lineno,
            )
        if kind == "header" and not runs.runs:
            headed = True
            header = _header_algorithm(record)
            algorithm, named = (header, True) if header else (algorithm, named)
            phase = "evaluation" if record.get("phase") == "evaluation" else "training"
            logged = record.get("agent")
            agent = logged if isinstance(logged, dict) else {}
        if kind != "episode":
            continue
        episode = _episode(spec, record, file, lineno)
        runs.add(episode, lineno, record.get("deviations"))
        if deviations is None and record.get("deviations"):
            deviations = (lineno, record["deviations"])
        if not episode.complete and record.get("end_reason") == "reset":
            early_resets += 1
    _warn(spec, file, deviations, early_resets, bool(runs.runs))
    return runs.logs(algorithm, named, phase, headed, agent)


def _warn(
    spec: Spec, file: str, deviations: tuple[int, Any] | None, early_resets: int, any_runs: bool
) -> None:
    """What the scorer tolerates but the user should know."""
    if deviations is not None:
        lineno, found = deviations
        warnings.warn(
            f"{file}:{lineno}: the run deviates from the {spec.name!r} protocol: "
            f"{json.dumps(found, default=str)[:200]}; its scores are not comparable with "
            "published ones",
            LogWarning,
            stacklevel=3,
        )
    if not any_runs:
        warnings.warn(f"{file}: has no episode records", LogWarning, stacklevel=3)
    if early_resets:
        warnings.warn(
            f"{file}: {early_resets} episode(s) were cut short by a reset before they ended; the "
            "protocols score whole episodes only (Sonic Section 3.5 forbids early resets), so "
            "they are not scored and the run may look better than it is",
            LogWarning,
            stacklevel=3,
        )
