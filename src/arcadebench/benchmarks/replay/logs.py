"""What a verification or a replay reads: a log's lines as written, and its recordings.

The scorer's view of a run (:func:`~arcadebench.records.parse_log`) refuses a log with a line of
another spec; re-simulating one must instead *find* that line and say which episode it is, so
the lines are read here as written (:func:`~arcadebench.records.log_records`), each episode with
its line number and where its recording is (:func:`~arcadebench.records.index_replays`: indexed,
decoded only when the episode is replayed). A log to verify is someone else's file: an episode
line whose fields are not what the format says is kept with the reason (``malformed``), so that
it gets a verdict instead of failing the run.

Classes: LoggedEpisode, RecordedRun.
Functions: find_logs, log_header, read_run.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcadebench.errors import ArcadebenchError, InputError
from arcadebench.records import ReplayEntry, ReplayIndex, index_replays, log_records, replay_path

__all__ = ["LoggedEpisode", "RecordedRun", "find_logs", "log_header", "read_run"]


@dataclass(frozen=True)
class LoggedEpisode:
    """One episode line of a log, and where its recording is if it has one.

    Attributes:
        line: its line in the log.
        record: the line as written.
        replay: its recording's line in the replay file (``None``: none).
        malformed: why its fields cannot be checked (``None``: they are the format's).
    """

    line: int
    record: Mapping[str, Any]
    replay: ReplayEntry | None
    malformed: str | None = None

    @property
    def key(self) -> tuple[int, int]:
        """``(stream, episode)``, what joins the line to its recording; ``(-1, -line)`` for none."""
        if self.malformed is not None:
            return -1, -self.line
        return int(self.record.get("env", 0)), int(self.record["episode"])

    @property
    def index(self) -> int | None:
        """The runner's index of the episode in its job, where it has one."""
        index = self.record.get("index") if self.malformed is None else None
        return index if type(index) is int else None

    @property
    def name(self) -> str:
        """How messages name it (the runner's index where it has one)."""
        if self.malformed is not None:
            return f"line {self.line}"
        stream, episode = self.key
        where = f"episode {episode}" + (f" (stream {stream})" if stream else "")
        return where + (f", index {self.index}" if self.index is not None else "")


@dataclass(frozen=True)
class RecordedRun:
    """A log and what it holds: its header, its episodes, where their recordings are.

    Attributes:
        log: the log file.
        header: its header record (``{}`` when it has none).
        episodes: every episode line, in log order.
        replays: its replay file's index (its damaged lines with why).
    """

    log: Path
    header: Mapping[str, Any]
    episodes: list[LoggedEpisode] = field(default_factory=list)
    replays: ReplayIndex | None = None

    @property
    def spec_name(self) -> str | None:
        """The spec its header names."""
        name = self.header.get("spec")
        return name if isinstance(name, str) else None

    @property
    def recorded(self) -> bool:
        """Whether the log has a replay file at all."""
        return self.replays is not None and self.replays.exists

    @property
    def replay_file(self) -> Path:
        """The replay file beside the log."""
        return replay_path(self.log)

    def chain(self, target: LoggedEpisode) -> list[LoggedEpisode]:
        """``target`` and the episodes it continues, first to last (they are replayed first).

        A lost life's game, or a batched emulator's next episode, starts where the episode
        before it in its stream ended, so replaying it replays those first.

        Raises:
            ArcadebenchError: an episode of the chain has no recording, or continues a later one.
        """
        by_key = {e.key: e for e in self.episodes}
        chain = [target]
        while chain[0].replay is not None and "continues" in chain[0].replay.start:
            stream, number = chain[0].key
            key = (stream, int(chain[0].replay.start["continues"]))
            before = by_key.get(key)
            if key[1] >= number or before is None or before.replay is None:
                raise ArcadebenchError(
                    f"{target.name} of {self.log} continues episode {key[1]}, whose recording "
                    "is missing: it cannot be replayed"
                )
            chain.insert(0, before)
        return chain


def _count(record: Mapping[str, Any], key: str, default: Any = None) -> str | None:
    """Why ``record[key]`` is no count (a non-negative integer), or ``None``."""
    value = record.get(key, default)
    if type(value) is not int or value < 0:
        return f"its {key!r} must be a non-negative integer, got {_short(value)}"
    return None


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _malformed(record: Mapping[str, Any]) -> str | None:
    """Why an episode line's fields are not the format's (DEVELOPING.md, "Episode log")."""
    for key in ("episode", "steps", "frames"):
        if problem := _count(record, key):
            return problem
    for key in ("env", "env_steps", "env_frames", "total_steps", "total_frames", "index"):
        if problem := _count(record, key, 0):  # an absent index is none to check
            return problem
    value = record.get("return")
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        return f"its 'return' must be a finite number, got {_short(value)}"
    if type(record.get("complete")) is not bool:
        return f"its 'complete' must be true or false, got {_short(record.get('complete'))}"
    if not isinstance(record.get("end_reason"), str):
        return f"its 'end_reason' must be text, got {_short(record.get('end_reason'))}"
    seed = record.get("seed")
    if seed is not None and type(seed) is not int:
        return f"its 'seed' must be an integer, got {_short(seed)}"
    if not isinstance(record.get("deviations", {}), dict):
        return f"its 'deviations' must be an object, got {_short(record.get('deviations'))}"
    return None


def read_run(log: str | os.PathLike[str]) -> RecordedRun:
    """The lines of ``log`` and the index of the recordings beside it (``<run>.replay``).

    Raises:
        InputError: the log cannot be read, a line before the last is corrupt, or one is
            longer or more deeply nested than any log record.
    """
    path = Path(log)
    replays = index_replays(replay_path(path))
    header: dict[str, Any] = {}
    episodes: list[LoggedEpisode] = []
    for line, record in log_records(path):
        kind = record.get("kind")
        if kind == "header" and not header and not episodes:
            header = record
        elif kind == "episode":
            malformed = _malformed(record)
            entry = None
            if malformed is None:
                entry = replays.entries.get((int(record.get("env", 0)), int(record["episode"])))
            episodes.append(LoggedEpisode(line, record, entry, malformed))
    return RecordedRun(path, header, episodes, replays)


def find_logs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The logs (``.jsonl``) of paths that are logs or directories of logs.

    Raises:
        InputError: a path that is neither, or holds no log.
    """
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            logs = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.suffix == ".jsonl" and path.is_file():
            logs = [path]
        else:
            raise InputError(
                str(path), None, "is no log (.jsonl), directory of logs or results file (.json)"
            )
        if not logs:
            raise InputError(str(path), None, "holds no episode log (.jsonl) to verify")
        found.extend(logs)
    return list(dict.fromkeys(found))


def log_header(log: str | os.PathLike[str]) -> Mapping[str, Any]:
    """A log's first record if it is its header, else ``{}`` (an unreadable log too).

    Reads the first line only, at most 1 MiB of it: what a log says about itself (its spec and
    hash, its agent) without reading its episodes, whatever the file holds.
    """
    try:
        with open(log, "rb") as handle:
            record = json.loads(handle.readline(2**20))
    except (OSError, ValueError, RecursionError):
        return {}
    return record if isinstance(record, dict) and record.get("kind") == "header" else {}
