"""Writing an episode log: where a run's log lives, and what its writers share.

Each record is one ``write`` plus ``fsync`` (:mod:`~arcadebench.records.live`), so a killed
process loses at most the episode in flight; a last line cut by a crash is removed
(:func:`cut_partial_line`) before anything is appended.

Functions: log_path, phase_run, spec_logs, resolve_log_dir, check_run, cut_partial_line,
package_versions, tightest.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from arcadebench.errors import ArcadebenchError, InvalidArgument, warn_user

__all__ = [
    "LOG_DIR_ENV",
    "EVALUATION",
    "check_run",
    "cut_partial_line",
    "log_path",
    "package_versions",
    "phase_run",
    "resolve_log_dir",
    "spec_logs",
    "tightest",
]

LOG_DIR_ENV = "ARCADEBENCH_LOG_DIR"
_RUN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def resolve_log_dir(
    log_dir: str | os.PathLike[str] | bool | None,
) -> tuple[str | os.PathLike[str] | None, bool]:
    """An environment's ``log_dir`` argument as ``(directory or None, no log intended)``.

    ``None`` falls back to ``$ARCADEBENCH_LOG_DIR``; ``False`` says no log is intended (a
    training protocol then does not warn that nothing it plays can be scored).

    Raises:
        InvalidArgument: anything else than a directory, ``None`` or ``False``.

    Example:
        >>> resolve_log_dir("logs"), resolve_log_dir(False)
        (('logs', False), (None, True))
    """
    if log_dir is False:
        return None, True
    if log_dir is None:
        log_dir = os.environ.get(LOG_DIR_ENV) or None
    if log_dir is True or (log_dir is not None and not isinstance(log_dir, str | os.PathLike)):
        raise InvalidArgument(
            f"`log_dir` must be a directory, None or False (no log), got {log_dir!r}"
        )
    return log_dir or None, False


def log_path(log_dir: str | os.PathLike[str], spec: str, game: str, run: str) -> Path:
    """Where a run's episodes go: ``<log_dir>/<spec>/<game>/<run>.jsonl`` (DEVELOPING.md).

    Example:
        >>> log_path("logs", "saber", "pong", "0").as_posix()
        'logs/saber/pong/0.jsonl'
    """
    return Path(log_dir) / spec / game / f"{check_run(run)}.jsonl"


EVALUATION = ".eval"
"""The suffix of an evaluation phase's run id, ``<run>.eval`` (its own log, outside the budget)."""


def phase_run(run: str, phase: str) -> str:
    """The run id of a run's ``phase``: ``run`` for training, ``<run>.eval`` for its evaluation.

    A protocol scored on evaluation episodes after training (Atari 100k, DQN 2015) keeps them
    in a log of their own, so that they neither count in the training budget nor mix with the
    training episodes; the scorer pairs the two by this name.

    Example:
        >>> phase_run("seed1", "training"), phase_run("seed1", "evaluation")
        ('seed1', 'seed1.eval')
    """
    return f"{run}{EVALUATION}" if phase == "evaluation" and not run.endswith(EVALUATION) else run


def spec_logs(directory: str | os.PathLike[str], spec: str) -> list[Path]:
    """The logs of ``spec`` in an output directory, whichever agent wrote them.

    The runner keeps each agent's logs under ``<directory>/<agent>/<spec>/<game>/<run>.jsonl``;
    a log directory given to ``gym.make`` has ``<directory>/<spec>/<game>/<run>.jsonl``.
    """
    root = Path(directory)
    return sorted({*root.glob(f"{spec}/*/*.jsonl"), *root.glob(f"*/{spec}/*/*.jsonl")})


def check_run(run: object) -> str:
    """Return ``run`` if it is a valid run id (it names the log file), else raise."""
    if not isinstance(run, str) or not _RUN_RE.fullmatch(run):
        raise ArcadebenchError(
            "`run` must be a short name of letters, digits, '.', '_' or '-' (it names the log "
            f"file), got {run!r}"
        )
    return run


def cut_partial_line(path: Path) -> None:
    """Drop a last line cut by a crash, so the next record starts on a line of its own.

    Only the process that sets a run up calls this, while no other writer is live.
    """
    with open(path, "r+b") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size == 0:
            return
        handle.seek(size - 1)
        if handle.read(1) == b"\n":
            return
        end = size - 1
        while end > 0:
            start = max(0, end - 65536)
            handle.seek(start)
            chunk = handle.read(end - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
                break
            end = start
        os.ftruncate(handle.fileno(), end)
    warn_user(
        f"{path}: the last line was cut off by a crash ({size - end} bytes); removed it, "
        "the episodes before it are kept",
        RuntimeWarning,
    )


def package_versions() -> dict[str, str]:
    """The versions of the packages a log header records."""
    return dict(_installed_versions())


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """The installed versions, read once per process.

    A metadata look-up scans ``sys.path`` (about 0.7 ms a package, paid by every env made), and
    the code a process runs is the code it imported, whatever is installed later.
    """
    from importlib.metadata import PackageNotFoundError, version

    found = []
    for name in ("arcadebench", "gymnasium", "ale-py", "stable-retro", "numpy"):
        try:
            found.append((name.replace("-", "_"), version(name)))
        except PackageNotFoundError:
            pass
    return tuple(found)


def tightest(*values: int | None) -> int | None:
    """The smallest of the given budgets (``None``: no budget)."""
    given = [v for v in values if v is not None]
    return min(given) if given else None
