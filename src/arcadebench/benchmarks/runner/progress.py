"""The runner's progress display: a bar per running job and an overall one.

On a terminal the bars are drawn with ``rich`` (episodes or steps done, frames/s, ETA); when the
output is not a terminal (CI, a log file) each finished episode, finished job and failure is one
plain line instead, so logs stay readable. Everything goes to stderr: stdout is for the score
table. With ``auto_refresh=False`` the bars are redrawn by the events and by :meth:`tick`
(which the local backend calls several times a second) instead of a thread of their own, so
that the local backend can fork its workers from a process running one thread only.

Classes: RunProgress.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, Literal, TextIO, TypeAlias

from arcadebench._table import count
from arcadebench.benchmarks.runner.worker import Job

__all__ = ["ProgressMode", "RunProgress"]

ProgressMode: TypeAlias = Literal["auto", "bars", "lines", "off"]
"""How a run shows its progress: ``"auto"`` is bars on a terminal, else lines."""

_PLAIN_INTERVAL = 30.0  # seconds between plain progress lines of a long episode
_REDRAW_INTERVAL = 0.1  # seconds between redraws of the bars without a refresh thread


def _duration(seconds: float | None) -> str:
    if seconds is None or seconds != seconds or seconds == float("inf"):
        return "-:--:--"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class RunProgress:
    """Turns the backends' events into bars or lines (use as a context manager).

    Args:
        jobs: the jobs that will run.
        quota: episodes (``unit="episodes"``) or steps (``unit="steps"``) per job.
        unit: what ``quota`` counts.
        stream: where to draw (default stderr).
        mode: ``"auto"`` (bars on a terminal, else lines), ``"bars"``, ``"lines"`` or ``"off"``.
        auto_refresh: redraw the bars from a thread of their own (else on events and
            :meth:`tick`).
    """

    def __init__(
        self,
        jobs: Sequence[Job],
        quota: int,
        unit: str,
        stream: TextIO | None = None,
        mode: ProgressMode = "auto",
        auto_refresh: bool = True,
    ) -> None:
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bars" if self.stream.isatty() else "lines"
        self.mode = mode
        self.quota, self.unit = quota, unit
        self.total = quota * len(jobs)
        self.done: dict[str, int] = {job.key: 0 for job in jobs}
        self.frames: dict[str, int] = {}
        self.frames_at_start: dict[str, int] = {}
        self.started: dict[str, float] = {}
        self.units_at_start = 0
        self.start = time.monotonic()
        self.failures: list[tuple[str, str]] = []
        self._last_line = time.monotonic()
        self._auto_refresh = auto_refresh
        self._last_redraw = 0.0
        self._bars: Any = None
        self._tasks: dict[str, Any] = {}

    def __enter__(self) -> RunProgress:
        if self.mode == "bars":
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._bars = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(f"{self.unit}"),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
                auto_refresh=self._auto_refresh,
            )
            self._bars.__enter__()
            self._overall = self._bars.add_task("all jobs", total=self.total, rate="")
        return self

    def tick(self) -> None:
        """Redraw the bars if due (without a refresh thread: the time columns move on)."""
        if self._bars is not None and not self._auto_refresh:
            now = time.monotonic()
            if now - self._last_redraw >= _REDRAW_INTERVAL:
                self._last_redraw = now
                self._bars.refresh()

    def __exit__(self, *exc: object) -> None:
        if self._bars is not None:
            self._bars.__exit__(None, None, None)
            self._bars = None

    # -- numbers --------------------------------------------------------------------------
    @property
    def completed(self) -> int:
        """Units (episodes or steps) done over all jobs, capped at each job's quota."""
        return sum(min(n, self.quota) for n in self.done.values())

    def frame_rate(self) -> float:
        """Emulator frames per second played in this session, over all jobs."""
        elapsed = max(time.monotonic() - self.start, 1e-9)
        played = sum(f - self.frames_at_start.get(k, 0) for k, f in self.frames.items())
        return played / elapsed

    def eta(self) -> float | None:
        """Seconds left at this session's pace, or ``None`` before anything finished."""
        done = self.completed - self.units_at_start
        if done <= 0:
            return None
        return (self.total - self.completed) * (time.monotonic() - self.start) / done

    # -- events ---------------------------------------------------------------------------
    def __call__(self, event: tuple[Any, ...]) -> None:
        """Handle one backend event."""
        kind, key = event[0], event[1]
        if kind == "start":
            episodes, steps, frames = event[2], event[3], event[4]
            self.done[key] = episodes if self.unit == "episodes" else steps
            self.units_at_start += min(self.done[key], self.quota)
            self.frames[key] = self.frames_at_start[key] = frames
            self.started[key] = time.monotonic()
            if self._bars is not None:
                self._tasks[key] = self._bars.add_task(
                    key, total=self.quota, completed=self.done[key], rate=""
                )
        elif kind == "steps":
            if self.unit == "steps":
                self.done[key] = event[2]
            self.frames[key] = event[3]
            self._plain_heartbeat()
        elif kind == "episode":
            record = event[2]
            self.frames[key] = record["total_frames"]
            if self.unit == "episodes":
                self.done[key] += bool(record["complete"])
            else:
                self.done[key] = record["total_steps"]
            if self.mode == "lines":
                self._line(
                    f"{key} episode {record.get('index', record['episode'])}: "
                    f"return {record['return']:g}, "
                    f"{record['steps']:,} steps, "
                    f"{record['frames']:,} frames, {record['wall_time']:.1f} s"
                    + ("" if record["complete"] else f" (incomplete: {record['end_reason']})")
                    + f"  [{self._summary()}]"
                )
        elif kind == "done":
            summary = event[2]
            if self.mode != "off" and (self.mode == "lines" or summary.get("budget")):
                budget = " (the protocol's budget is used up)" if summary.get("budget") else ""
                self._line(
                    f"{key} done: {count(summary['episodes'], 'episode')}, "
                    f"{summary['total_frames']:,} frames{budget}"
                )
            self._remove(key)
        elif kind == "failed":
            self.failures.append((key, event[2]))
            if self.mode != "off":
                self._line(f"{key} FAILED: {event[2]}")
            self._remove(key)
        elif kind == "waiting" and self.mode != "off":
            self._line(event[2])
        self._refresh(key)

    def _summary(self) -> str:
        return (
            f"{self.completed:,}/{self.total:,} {self.unit}, {self.frame_rate():,.0f} frames/s, "
            f"ETA {_duration(self.eta())}"
        )

    def _line(self, text: str) -> None:
        self._last_line = time.monotonic()
        if self._bars is not None:
            self._bars.console.print(text, markup=False, highlight=False)
        elif self.mode != "off":
            print(text, file=self.stream, flush=True)

    def _plain_heartbeat(self) -> None:
        if self.mode == "lines" and time.monotonic() - self._last_line > _PLAIN_INTERVAL:
            self._line(f"[{self._summary()}]")

    def _remove(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        if task is not None and self._bars is not None:
            self._bars.remove_task(task)

    def _refresh(self, key: str) -> None:
        if self._bars is None:
            return
        rate = f"{self.frame_rate():,.0f} frames/s"
        task = self._tasks.get(key)
        if task is not None:
            played = self.frames.get(key, 0) - self.frames_at_start.get(key, 0)
            elapsed = max(time.monotonic() - self.started.get(key, self.start), 1e-9)
            self._bars.update(
                task,
                completed=min(self.done.get(key, 0), self.quota),
                rate=f"{played / elapsed:,.0f} frames/s",
            )
        self._bars.update(self._overall, completed=self.completed, rate=rate)
        self.tick()
