"""Write an episode log: where a run's log lives, and the locked, fsynced file behind it.

Each record is one ``write`` plus ``fsync``, so a killed process loses at most the episode in
flight; a last line cut by a crash is removed before anything is appended. An exclusive
``flock`` keeps a second writer (another process, or another environment of this one) from
mixing its episodes into a run's log.

Classes: LogFile.
Functions: log_path, check_run, package_versions, tightest.
"""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from arcadebench.errors import ArcadebenchError, LogInUse

try:  # POSIX advisory locks; without them (Windows) logs are unlocked
    import fcntl
except ImportError:  # pragma: no cover - not on Linux/macOS
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOG_DIR_ENV", "LogFile", "check_run", "log_path", "package_versions", "tightest"]

LOG_DIR_ENV = "ARCADEBENCH_LOG_DIR"
_RUN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def log_path(log_dir: str | os.PathLike, spec: str, game: str, run: str) -> Path:
    """Where a run's episodes go: ``<log_dir>/<spec>/<game>/<run>.jsonl`` (DEVELOPING.md).

    Example:
        >>> log_path("logs", "saber", "pong", "0").as_posix()
        'logs/saber/pong/0.jsonl'
    """
    return Path(log_dir) / spec / game / f"{check_run(run)}.jsonl"


def check_run(run: object) -> str:
    """Return ``run`` if it is a valid run id (it names the log file), else raise."""
    if not isinstance(run, str) or not _RUN_RE.match(run):
        raise ArcadebenchError(
            "`run` must be a short name of letters, digits, '.', '_' or '-' (it names the log "
            f"file), got {run!r}"
        )
    return run


def _holder(path: Path) -> str:
    """Describe the process holding the flock on ``path`` (Linux: from /proc/locks)."""
    try:
        st = os.stat(path)
        wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
        with open("/proc/locks") as locks:
            for line in locks:
                fields = line.split()
                if "->" in fields or len(fields) < 6 or fields[1] != "FLOCK" or fields[5] != wanted:
                    continue
                pid = int(fields[4])
                if pid == os.getpid():
                    return f"process {pid} (this process: close the other environment first)"
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as cmd:
                        command = cmd.read().replace(b"\0", b" ").decode(errors="replace").strip()
                except OSError:
                    command = ""
                return f"process {pid}" + (f" ({command[:100]})" if command else "")
    except (OSError, ValueError):
        pass
    return "another process"


class LogFile:
    """An exclusively locked, append-only JSON Lines file; each record is one write plus fsync."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = open(path, "a+b", buffering=0)  # noqa: SIM115 - closed by close()
        if fcntl is not None:
            try:
                fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                self._file.close()
                raise LogInUse(
                    f"{path} is being written by {_holder(path)}; two writers would mix their "
                    "episodes. Wait for it to finish (or stop it), or give this run another "
                    "`run` id "
                    "or log directory."
                ) from None
        self._cut_partial_line()

    def _cut_partial_line(self) -> None:
        """Drop a last line cut by a crash, so the next record starts on a line of its own."""
        size = os.fstat(self._file.fileno()).st_size
        if size == 0:
            return
        self._file.seek(size - 1)
        if self._file.read(1) == b"\n":
            return
        end = size - 1
        while end > 0:
            start = max(0, end - 65536)
            self._file.seek(start)
            chunk = self._file.read(end - start)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
                break
            end = start
        os.ftruncate(self._file.fileno(), end)
        warnings.warn(
            f"{self.path}: the last line was cut off by a crash ({size - end} bytes); removed it, "
            "the episodes before it are kept",
            RuntimeWarning,
            stacklevel=4,
        )

    @property
    def empty(self) -> bool:
        """Whether nothing was written yet (a new log gets its header first)."""
        return os.fstat(self._file.fileno()).st_size == 0

    def append(self, record: Mapping[str, Any]) -> None:
        """Write ``record`` as one line with one ``write``, then ``fsync`` it."""
        self._file.write((json.dumps(record) + "\n").encode())
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file, which releases the lock."""
        self._file.close()  # also releases the flock


def package_versions() -> dict[str, str]:
    """The versions of the packages a log header records."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("arcadebench", "gymnasium", "ale-py", "stable-retro", "numpy"):
        try:
            found[name.replace("-", "_")] = version(name)
        except PackageNotFoundError:
            pass
    return found


def tightest(*values: int | None) -> int | None:
    """The smallest of the given budgets (``None``: no budget)."""
    given = [v for v in values if v is not None]
    return min(given) if given else None
