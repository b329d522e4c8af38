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
from arcadebench.records.reader import LogWarning, RunLog, bounded_json, log_records, parse_log
from arcadebench.records.recorder import (
    NO_LIMIT,
    RunRecorder,
    check_budget,
    continue_run,
    new_memory_run,
)
from arcadebench.records.relay import SYNC_STEPS, RunHolder, RunReceiver
from arcadebench.records.replay_format import (
    DIGEST_EVERY,
    REPLAY_FORMAT,
    REPLAY_FORMATS,
    Digests,
    Replay,
    ReplayEntry,
    ReplayIndex,
    decode_replay,
    index_replays,
    load_replay,
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
    episode_seeds,
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
    "DIGEST_EVERY",
    "END_REASONS",
    "EVALUATION",
    "EPISODE_FIELDS",
    "LOG_DIR_ENV",
    "LOG_FORMAT",
    "NO_LIMIT",
    "REPLAY_FORMAT",
    "REPLAY_FORMATS",
    "SYNC_STEPS",
    "Digests",
    "EndReason",
    "EpisodeRecord",
    "Grant",
    "HeaderRecord",
    "LiveRun",
    "LogWarning",
    "Relay",
    "Replay",
    "ReplayEntry",
    "ReplayIndex",
    "RunHolder",
    "RunIdentity",
    "RunLog",
    "RunReceiver",
    "RunRecorder",
    "StreamStart",
    "bounded_json",
    "check_budget",
    "check_run",
    "continue_run",
    "counters_path",
    "log_records",
    "cut_partial_line",
    "decode_replay",
    "episode_record",
    "episode_seeds",
    "header_record",
    "index_replays",
    "load_replay",
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
