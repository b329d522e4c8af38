"""The runner's progress display: a bar per running job and an overall one.

On a terminal the bars are drawn with ``rich`` (episodes or steps done, frames/s, ETA); when the
output is not a terminal (CI, a log file) each finished episode, finished job and failure is one
plain line instead, so logs stay readable. Everything goes to stderr: stdout is for the score
table. A job's end says which limit ended it (its quota, the protocol's budget; an episode's,
the protocol's cap: :mod:`~.limits`), and a learning agent under a protocol scored after
training (Atari 100k, DQN) shows its training steps before its evaluation episodes, which are
the quota the overall bar counts.

With ``auto_refresh=False`` the bars are redrawn by the events and by :meth:`tick` (which the
local backend calls several times a second) instead of a thread of their own, so that the local
backend can fork its workers from a process running one thread only.

Classes: RunProgress.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, Literal, TextIO, TypeAlias

from arcadebench._table import count
from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.limits import episode_end, job_limit
from arcadebench.benchmarks.runner.messages import (
    EpisodeEnded,
    EpisodeStarted,
    Failure,
    JobDone,
    JobFailed,
    JobStarted,
    Progress,
    Steps,
    Waiting,
)
from arcadebench.specs import Spec
from arcadebench.specs.model import AtariSettings, RetroSettings

__all__ = ["ProgressMode", "RunProgress"]

ProgressMode: TypeAlias = Literal["auto", "bars", "lines", "off"]
"""How a run shows its progress; ``"auto"`` is bars on a terminal, else lines."""

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
        spec: the jobs' protocol (its budget; whether it is scored after training).
        settings: the environments' settings (their caps; default: the spec's).
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
        *,
        spec: Spec,
        settings: AtariSettings | RetroSettings | None = None,
        stream: TextIO | None = None,
        mode: ProgressMode = "auto",
        auto_refresh: bool = True,
    ) -> None:
        self.stream = stream or sys.stderr
        if mode == "auto":
            mode = "bars" if self.stream.isatty() else "lines"
        self.mode = mode
        self.quota, self.unit = quota, unit
        self.spec = spec
        self.settings = settings if settings is not None else spec.environment
        self.jobs = {job.key: job for job in jobs}
        self._after_training = spec.evaluation.scored == "after_training"
        self.total = quota * len(jobs)
        self.done: dict[str, int] = {job.key: 0 for job in jobs}
        self.frames: dict[str, int] = {}
        self.frames_at_start: dict[str, int] = {}
        self.started: dict[str, float] = {}
        self.units_at_start = 0
        self.start = time.monotonic()
        self.failures: list[tuple[str, Failure]] = []
        self._last_line = time.monotonic()
        self._auto_refresh = auto_refresh
        self._last_redraw = 0.0
        self._bars: Any = None
        self._tasks: dict[str, Any] = {}
        # jobs that train before their evaluation episodes: (steps, frames) so far
        self.training: dict[str, tuple[int, int]] = {}
        self._trained_frames: dict[str, int] = {}  # frames a job played before its evaluation
        self._tenths: dict[str, int] = {}  # tenths of its training a job has shown (lines)

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
                TextColumn("{task.fields[unit]}"),
                TextColumn("{task.fields[rate]}"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
                auto_refresh=self._auto_refresh,
            )
            self._bars.__enter__()
            self._overall = self._bars.add_task(
                "all jobs", total=self.total, rate="", unit=self.unit
            )
        return self

    def tick(self) -> None:
        """Redraw the bars if due (without a refresh thread: the time columns move on)."""
        if self._bars is not None and not self._auto_refresh:
            now = time.monotonic()
            if now - self._last_redraw >= _REDRAW_INTERVAL:
                self._last_redraw = now
                self._bars.refresh()

    def __exit__(self, *_: object) -> None:
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
    def __call__(self, event: Progress | Waiting) -> None:
        """Handle one progress message."""
        if isinstance(event, Waiting):
            self._line(event.message)
            return
        key = event.key
        if key in self.training and isinstance(event, EpisodeStarted | EpisodeEnded):
            self._trained(key)  # its first evaluation episode: the training is over
        if isinstance(event, JobStarted):
            self._started(event)
        elif isinstance(event, Steps):
            if key in self.training:
                self._training_steps(key, event.steps, event.frames)
            else:
                if self.unit == "steps":
                    self.done[key] = event.steps
                self.frames[key] = self._trained_frames.get(key, 0) + event.frames
            if self.mode == "lines" and time.monotonic() - self._last_line > _PLAIN_INTERVAL:
                self._line(f"[{self._summary()}]")
        elif isinstance(event, EpisodeEnded):
            self._episode(key, event.record)
        elif isinstance(event, JobDone):
            self._done(key, event.summary)
        elif isinstance(event, JobFailed):
            self.training.pop(key, None)
            self.failures.append((key, event.failure))
            self._line(f"{key} FAILED: {event.failure}")
            self._remove(key)
        self._refresh(key)

    def _started(self, event: JobStarted) -> None:
        key, steps, frames = event.key, event.steps, event.frames
        self.done[key] = event.complete if self.unit == "episodes" else steps
        self.units_at_start += min(self.done[key], self.quota)
        self.frames[key] = self.frames_at_start[key] = frames
        self.started[key] = time.monotonic()
        trains = self._after_training and self.jobs[key].phase == "training"  # a learner first
        if trains:
            self.training[key] = (steps, frames)
        if self._bars is not None:
            self._tasks[key] = self._bars.add_task(
                f"{key} training" if trains else key,
                total=(self.jobs[key].steps if trains else None) or self.quota,
                completed=steps if trains else self.done[key],
                rate="",
                unit="steps" if trains else self.unit,
            )

    def _episode(self, key: str, record: dict[str, Any]) -> None:
        self.frames[key] = self._trained_frames.get(key, 0) + record["total_frames"]
        if self.unit == "episodes":
            self.done[key] += bool(record["complete"])
        else:
            self.done[key] = record["total_steps"]
        if self.mode == "lines":
            end = episode_end(self.spec, self.jobs[key], self.settings, record)
            self._line(
                f"{key} episode {record.get('index', record['episode'])}: "
                f"return {record['return']:g}, {record['steps']:,} steps, "
                f"{record['frames']:,} frames, {record['wall_time']:.1f} s"
                + (f" ({end})" if end else "")
                + f"  [{self._summary()}]"
            )

    def _done(self, key: str, summary: dict[str, Any]) -> None:
        if self.mode == "lines" or summary.get("budget"):
            # a budget or step quota cuts the episode in flight: it is not one of them
            cut = "complete episode" if summary.get("budget") else "episode"
            episodes = "evaluation episode" if self._after_training else cut
            limit = job_limit(
                self.spec,
                self.jobs[key],
                steps=int(summary.get("total_steps") or 0),
                frames=int(summary.get("total_frames") or 0),
                exhausted=bool(summary.get("budget")),
                evaluation=self._after_training,
            )
            self._line(
                f"{key} done: {count(summary['episodes'], episodes)}, "
                f"{summary['total_steps']:,} steps, {summary['total_frames']:,} frames"
                + (f" ({limit})" if limit else "")
            )
        self._remove(key)

    # -- a job's training before its evaluation ------------------------------------------------
    def _training_steps(self, key: str, steps: int, frames: int) -> None:
        self.training[key] = (steps, frames)
        self.frames[key] = frames
        job = self.jobs[key]
        if self.mode != "lines" or not job.steps:
            return
        tenth = min(10, steps * 10 // job.steps)
        if tenth > self._tenths.get(key, 0):
            self._tenths[key] = tenth
            self._line(
                f"{key} training: {steps:,} of {job.steps:,} steps, {frames:,} frames"
                f"  [{self._summary()}]"
            )

    def _trained(self, key: str) -> None:
        """The job's training is over: say what ended it; its bar counts episodes now."""
        steps, frames = self.training.pop(key)
        self._trained_frames[key] = frames
        job = self.jobs[key]
        limit = job_limit(self.spec, job, steps=steps, frames=frames, exhausted=True)
        self._line(
            f"{key} trained: {steps:,} steps, {frames:,} frames ({limit}); "
            f"now {count(self.quota, 'evaluation episode')}"
        )
        task = self._tasks.get(key)
        if task is not None and self._bars is not None:
            # reset, not update: the bar's speed and ETA start again, in episodes
            self._bars.reset(
                task, description=key, total=self.quota, completed=0, rate="", unit=self.unit
            )

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
            training = self.training.get(key)
            self._bars.update(
                task,
                completed=training[0] if training else min(self.done.get(key, 0), self.quota),
                rate=f"{played / elapsed:,.0f} frames/s",
            )
        self._bars.update(self._overall, completed=self.completed, rate=rate)
        self.tick()
