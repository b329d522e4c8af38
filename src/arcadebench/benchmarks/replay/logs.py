"""What a verification or a replay reads: a log's lines as written, and its recordings.

The scorer's view of a run (:func:`~arcadebench.records.parse_log`) refuses a log with a line of
another spec; re-simulating one must instead *find* that line and say which episode it is, so
the lines are read here as written (:func:`~arcadebench.records.log_records`), each episode with
its line number and its recording (:func:`~arcadebench.records.read_replays`).

Classes: LoggedEpisode, RecordedRun.
Functions: find_logs, read_run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcadebench.errors import ArcadebenchError, InputError
from arcadebench.records import Replay, log_records, read_replays, replay_path

__all__ = ["LoggedEpisode", "RecordedRun", "find_logs", "read_run"]


@dataclass(frozen=True)
class LoggedEpisode:
    """One episode line of a log, and its recording if it has one."""

    line: int
    record: Mapping[str, Any]
    replay: Replay | None

    @property
    def key(self) -> tuple[int, int]:
        """``(stream, episode)``: what joins the line to its recording."""
        return int(self.record.get("env", 0)), int(self.record["episode"])

    @property
    def name(self) -> str:
        """How messages name it: the runner's index where it has one."""
        stream, episode = self.key
        index = self.record.get("index")
        where = f"episode {episode}" + (f" (stream {stream})" if stream else "")
        return where + (f", index {index}" if index is not None else "")


@dataclass(frozen=True)
class RecordedRun:
    """A log and what it holds: its header, its episodes, their recordings.

    Attributes:
        log: the log file.
        header: its header record (``{}`` when it has none).
        episodes: every episode line, in log order.
        damaged: replay lines that could not be read (a cut or edited line).
        recorded: whether the log has a replay file at all.
    """

    log: Path
    header: Mapping[str, Any]
    episodes: list[LoggedEpisode] = field(default_factory=list)
    damaged: int = 0
    recorded: bool = False

    @property
    def spec_name(self) -> str | None:
        """The spec its header names."""
        name = self.header.get("spec")
        return name if isinstance(name, str) else None


def read_run(log: str | os.PathLike[str]) -> RecordedRun:
    """The lines of ``log`` and the recordings beside it (``<run>.replay``).

    Raises:
        InputError: the log cannot be read, or a line before the last is corrupt.
    """
    path = Path(log)
    replays, damaged = read_replays(replay_path(path))
    header: dict[str, Any] = {}
    episodes: list[LoggedEpisode] = []
    for line, record in log_records(path):
        kind = record.get("kind")
        if kind == "header" and not header and not episodes:
            header = record
        elif kind == "episode" and "episode" in record:
            key = (int(record.get("env", 0)), int(record["episode"]))
            episodes.append(LoggedEpisode(line, record, replays.get(key)))
    return RecordedRun(path, header, episodes, damaged, replay_path(path).exists())


def find_logs(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The logs to verify: ``.jsonl`` files, directories' logs, a results file's inputs.

    Raises:
        InputError: a path that is none of these, or holds no log.
    """
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            logs = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
        elif path.suffix == ".jsonl" and path.is_file():
            logs = [path]
        elif path.suffix == ".json" and path.is_file():
            logs = _results_inputs(path)
        else:
            raise InputError(
                str(path), None, "is no log (.jsonl), directory of logs or results file (.json)"
            )
        if not logs:
            raise InputError(str(path), None, "holds no episode log (.jsonl) to verify")
        found.extend(logs)
    return list(dict.fromkeys(found))


def _results_inputs(path: Path) -> list[Path]:
    """The logs a results file was scored from (its provenance's ``inputs``)."""
    try:
        results = json.loads(path.read_text())
        inputs = results["provenance"]["inputs"]
    except (OSError, ValueError, KeyError, TypeError):
        raise InputError(
            str(path),
            None,
            "is not a results file whose provenance lists its inputs (arcadebench score or run "
            "write one); pass the log directory instead",
        ) from None
    logs: list[Path] = []
    for item in inputs:
        given = Path(str(item))  # as the scorer was given it: from where it ran, or absolute
        candidates = [given, path.parent / given, path.parent.parent / given]
        source = next((c for c in candidates if c.exists()), given)
        if source.is_dir():
            logs.extend(sorted(source.rglob("*.jsonl")))
        elif source.suffix == ".jsonl":
            logs.append(source)
    if not logs:
        raise ArcadebenchError(
            f"{path}: its inputs are score tables, not episode logs, so there is nothing to "
            "re-simulate; verify the logs it was scored from"
        )
    return logs
