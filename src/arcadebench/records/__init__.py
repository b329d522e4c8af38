"""The episode-log contract between the monitors that write logs and the scorer that reads them.

One place owns the format (DEVELOPING.md, "Episode log"): the record types
(:mod:`~arcadebench.records.schema`), where logs live (:mod:`~arcadebench.records.writer`), a
run shared by many environments and processes (:mod:`~arcadebench.records.live`), one
environment's part of it behind every monitor (:mod:`~arcadebench.records.recorder`), streams
logged by another process (:mod:`~arcadebench.records.relay`), whether a directory is on a
network file system (:mod:`~arcadebench.records.filesystems`) and the reader
(:mod:`~arcadebench.records.reader`). It sits
at the bottom of the package with the specs: the wrappers write through it, the benchmark
stages read through it, and it imports neither.
"""

from arcadebench.records.filesystems import network_filesystem
from arcadebench.records.live import (
    Grant,
    LiveRun,
    Relay,
    StreamStart,
    counters_path,
    read_totals,
)
from arcadebench.records.reader import LogWarning, RunLog, log_records, parse_log
from arcadebench.records.recorder import (
    NO_LIMIT,
    RunRecorder,
    check_budget,
    continue_run,
    new_memory_run,
)
from arcadebench.records.relay import SYNC_STEPS, RunHolder, RunReceiver
from arcadebench.records.replay_format import (
    REPLAY_FORMAT,
    Replay,
    read_replays,
    replay_fields,
    replay_path,
)
from arcadebench.records.schema import (
    END_REASONS,
    EPISODE_FIELDS,
    LOG_FORMAT,
    EndReason,
    EpisodeRecord,
    HeaderRecord,
    RunIdentity,
    episode_record,
    header_record,
)
from arcadebench.records.writer import (
    EVALUATION,
    LOG_DIR_ENV,
    check_run,
    cut_partial_line,
    log_path,
    package_versions,
    phase_run,
    resolve_log_dir,
    spec_logs,
    tightest,
)

__all__ = [
    "END_REASONS",
    "EVALUATION",
    "EPISODE_FIELDS",
    "LOG_DIR_ENV",
    "LOG_FORMAT",
    "NO_LIMIT",
    "REPLAY_FORMAT",
    "SYNC_STEPS",
    "EndReason",
    "EpisodeRecord",
    "Grant",
    "HeaderRecord",
    "LiveRun",
    "LogWarning",
    "Relay",
    "Replay",
    "RunHolder",
    "RunIdentity",
    "RunLog",
    "RunReceiver",
    "RunRecorder",
    "StreamStart",
    "check_budget",
    "check_run",
    "continue_run",
    "counters_path",
    "log_records",
    "cut_partial_line",
    "episode_record",
    "header_record",
    "log_path",
    "network_filesystem",
    "new_memory_run",
    "package_versions",
    "parse_log",
    "phase_run",
    "read_replays",
    "read_totals",
    "replay_fields",
    "replay_path",
    "resolve_log_dir",
    "spec_logs",
    "tightest",
]
