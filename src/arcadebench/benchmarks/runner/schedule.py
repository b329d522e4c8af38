"""The parent's side of a run: which worker plays what, and how each job ended.

Both backends (local processes, Ray actors) start long-lived workers (:mod:`~.serve`) and let a
:class:`Scheduler` decide what to send them; they differ only in how messages travel and how a
dead or hung worker is noticed. The scheduler:

- gives a worker a whole job when the job is played one episode at a time (a learner, a step
  quota, an agent that does not answer batches), one job per worker at a time;
- otherwise gives each worker's lanes the jobs' missing episode indices, one index per lane at a
  time (``depth`` ahead where messages are slow, as on Ray), lane by lane across the workers so
  a few episodes still use every worker; a lane keeps its job while the job has indices left,
  and then takes another job's (closing one stream of the run, opening another);
- turns the workers' reports into the caller's progress (:data:`~.messages.Progress`);
- fails a job whose agent raised in it, whose environment failed, or whose episodes were in
  flight in a worker that died or hung, with the :class:`~.messages.Failure` that says which;
  the other jobs go on. An agent the workers refuse (its spaces do not fit) stops the run.

Classes: JobOutcome, Scheduler, StreamHooks.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arcadebench.benchmarks.runner.job import Job, job_summary
from arcadebench.benchmarks.runner.messages import (
    CloseLane,
    EpisodeEnded,
    EpisodeStarted,
    Exhausted,
    Failure,
    FailureKind,
    JobDone,
    JobFailed,
    JobStarted,
    OpenLane,
    Order,
    PlayEpisode,
    PlayJob,
    Progress,
    Ready,
    Refused,
    Report,
    Steps,
    Waiting,
)
from arcadebench.records import log_path, phase_run
from arcadebench.specs import load_spec

__all__ = ["Events", "JobOutcome", "Scheduler", "StreamHooks"]

Events = Callable[[Progress | Waiting], None]
"""Where the progress of a run goes (the display, the caller's ``on_event``)."""

Reason = Callable[[str, int | None], Failure]
"""Why each job of a lost worker failed, as ``reason(job key, episode in flight)``."""


@dataclass
class JobOutcome:
    """How a job ended: ``status`` is ``"done"`` or ``"failed"`` (``failure`` says why).

    ``trace`` is what the worker printed for a failure (a traceback), kept with the job.
    """

    job: Job
    status: str
    failure: Failure | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    trace: str = ""


class StreamHooks(Protocol):
    """Where the logs are held by the parent (Ray): a stream opened per lane and per job.

    ``open_lane`` returns ``(start, stream id)`` for the worker; ``open_job`` the same per phase
    of a whole job; both raise :class:`~arcadebench.errors.ArcadebenchError` when the log
    refuses the job. ``close_lane``/``close_job`` release them.
    """

    def open_lane(self, job: Job, worker: int, lane: int) -> tuple[Any, int]:
        """A stream of ``job``'s run for a lane."""

    def close_lane(self, worker: int, lane: int) -> None:
        """Release the lane's stream."""

    def open_job(self, job: Job) -> dict[str, tuple[Any, int]]:
        """The streams of a whole job, by phase."""

    def close_job(self, key: str) -> None:
        """Release a whole job's streams."""


@dataclass
class _JobState:
    job: Job
    todo: deque[int]
    complete: int
    steps: int
    frames: int
    played: int = 0
    started: bool = False
    failure: Failure | None = None
    trace: str = ""
    exhausted: bool = False
    summary: dict[str, Any] | None = None

    @property
    def to_give(self) -> bool:
        """Whether episode indices of it are left to give out."""
        return bool(self.todo) and self.failure is None and not self.exhausted


@dataclass
class _LaneState:
    job: str | None = None
    queue: deque[int] = field(default_factory=deque)
    since: float | None = None


@dataclass
class _WorkerState:
    lanes: list[_LaneState]
    job: str | None = None  # the whole job it plays
    heard: bool = False  # the whole job said something (its start, steps, an episode): begun
    episode: int | None = None
    since: float | None = None
    alive: bool = True


class Scheduler:
    """Decides what each worker plays and collects the outcomes (module docstring).

    Args:
        jobs: the jobs to play (``job.todo`` set: spread over lanes; ``None``: whole).
        lanes: environments per worker for lanes.
        depth: episode indices sent ahead per lane (1 locally; 2 where messages are slow).
        on_event: called with every progress event.
        streams: the parent's streams (Ray), or ``None`` (the workers open their logs).
    """

    def __init__(
        self,
        jobs: Sequence[Job],
        *,
        lanes: int,
        depth: int = 1,
        on_event: Events,
        streams: StreamHooks | None = None,
    ) -> None:
        self.jobs = list(jobs)
        self.lanes = lanes
        self.depth = depth
        self.on_event = on_event
        self.streams = streams
        self.states = {
            job.key: _JobState(job, deque(job.todo or ()), *job.before) for job in self.jobs
        }
        self.whole: deque[str] = deque(job.key for job in self.jobs if job.todo is None)
        self.workers: dict[int, _WorkerState] = {}
        self.refused: str | None = None
        for key, state in self.states.items():
            if state.job.todo is not None and not state.todo:  # nothing left: done already
                self._finish(key)

    # -- workers ------------------------------------------------------------------------------
    def add_worker(self, worker: int) -> None:
        """A new worker (at the start, or in place of a dead one)."""
        self.workers[worker] = _WorkerState([_LaneState() for _ in range(self.lanes)])

    @property
    def finished(self) -> bool:
        """Whether every job has an outcome, or the agent was refused."""
        return self.refused is not None or all(
            s.summary is not None or s.failure is not None for s in self.states.values()
        )

    @property
    def work_left(self) -> bool:
        """Whether something is still to be given to a worker."""
        return bool(self.whole) or any(s.to_give for s in self.states.values())

    def busy(self, worker: int) -> bool:
        """Whether the worker has something in flight."""
        state = self.workers[worker]
        return state.job is not None or any(lane.queue for lane in state.lanes)

    # -- what to send -------------------------------------------------------------------------
    def fill(self) -> dict[int, list[Order]]:
        """The messages that give every alive worker as much as it may have now."""
        out: dict[int, list[Order]] = {}
        alive = [w for w, s in self.workers.items() if s.alive]
        for worker in alive:
            if self.whole and not self.busy(worker):  # busy: a job, or a lane's episodes
                out.setdefault(worker, []).extend(self._give_job(worker))
        for ahead in range(self.depth):
            for lane in range(self.lanes):
                for worker in alive:
                    if self.workers[worker].job is None and (
                        messages := self._feed(worker, lane, ahead)
                    ):
                        out.setdefault(worker, []).extend(messages)
        return out

    def _give_job(self, worker: int) -> list[Order]:
        while self.whole:
            key = self.whole.popleft()
            state = self.states[key]
            try:
                starts = self.streams.open_job(state.job) if self.streams is not None else None
            except Exception as error:  # noqa: BLE001 - the log refuses the job: it fails alone
                self.fail(key, Failure(FailureKind.LOG, str(error)))
                continue
            self.workers[worker].job = key
            state.started = True
            return [PlayJob(state.job, starts)]
        return []

    def _feed(self, worker: int, lane_id: int, ahead: int) -> list[Order]:
        """One more episode index for a lane, opening it on another job if it must."""
        lane = self.workers[worker].lanes[lane_id]
        if len(lane.queue) > ahead:
            return []
        if lane.job is not None:
            state = self.states[lane.job]
            if state.to_give:
                index = state.todo.popleft()
                lane.queue.append(index)
                return [PlayEpisode(lane_id, index)]
            if lane.queue:
                return []
        messages: list[Order] = []
        while True:
            key = next((k for k, s in self.states.items() if s.to_give), None)
            if key is None:
                return messages
            state = self.states[key]
            if lane.job is not None:
                messages.append(CloseLane(lane_id))
                if self.streams is not None:
                    self.streams.close_lane(worker, lane_id)
                lane.job = None
            try:
                start, stream = (
                    self.streams.open_lane(state.job, worker, lane_id)
                    if self.streams is not None
                    else (None, None)
                )
            except Exception as error:  # noqa: BLE001 - the log refuses the job: it fails alone
                self.fail(key, Failure(FailureKind.LOG, str(error)))
                continue
            lane.job = key
            if not state.started:
                state.started = True
                self.on_event(JobStarted(key, *state.job.before))
            index = state.todo.popleft()
            lane.queue.append(index)
            return [
                *messages,
                OpenLane(lane_id, state.job, start, stream),
                PlayEpisode(lane_id, index),
            ]

    # -- what the workers say -----------------------------------------------------------------
    def receive(self, worker: int, event: Report) -> None:
        """One report of ``worker``."""
        state = self.workers.get(worker)
        if state is None or not state.alive:
            return  # late words of a worker given up on
        if state.job is not None and not isinstance(event, Ready | Refused):
            state.heard = True  # the whole job's own start, steps or episodes: it has begun
        if isinstance(event, Refused):
            self.refused = self.refused or event.message
        elif isinstance(event, EpisodeStarted):
            now = time.monotonic()
            if event.lane is None:
                state.episode, state.since = event.index, now
            else:
                state.lanes[event.lane].since = now
            self.on_event(dataclasses.replace(event, lane=None))
        elif isinstance(event, EpisodeEnded):
            self._episode(state, event)
        elif isinstance(event, Exhausted):
            job = self.states[event.key]
            job.exhausted = True
            job.todo.clear()
            state.lanes[event.lane].queue.clear()
            self._finish(event.key)
        elif isinstance(event, JobFailed) and event.lane is not None:
            lane = state.lanes[event.lane]
            lane.job, lane.since = None, None
            lane.queue.clear()
            if self.streams is not None:
                self.streams.close_lane(worker, event.lane)
            self.fail(event.key, event.failure, event.trace)
        elif isinstance(event, JobDone | JobFailed):
            state.job, state.heard, state.episode, state.since = None, False, None, None
            if self.streams is not None:
                self.streams.close_job(event.key)
            if isinstance(event, JobDone):
                self.states[event.key].summary = event.summary
                self.on_event(event)
            else:
                self.fail(event.key, event.failure, event.trace)
        elif isinstance(event, JobStarted | Steps):  # a whole job's progress
            self.on_event(event)

    def _episode(self, worker: _WorkerState, event: EpisodeEnded) -> None:
        job = self.states[event.key]
        if event.lane is not None:
            lane = worker.lanes[event.lane]
            if lane.queue:
                lane.queue.popleft()
            lane.since = None
            job.played += 1
            job.complete += bool(event.record.get("complete"))
            job.steps = max(job.steps, int(event.record.get("total_steps") or 0))
            job.frames = max(job.frames, int(event.record.get("total_frames") or 0))
        else:
            worker.since = None
        self.on_event(dataclasses.replace(event, lane=None))
        if event.lane is not None:
            self._finish(event.key)

    def _finish(self, key: str) -> None:
        """A lanes job is done once nothing of it is left to give or in flight."""
        job = self.states[key]
        if job.summary is not None or job.failure is not None or job.todo:
            return
        for worker in self.workers.values():
            if any(lane.job == key and lane.queue for lane in worker.lanes):
                return
        spec = load_spec(job.job.spec)
        run = phase_run(job.job.run, job.job.phase)
        job.summary = job_summary(
            episodes=job.complete,
            played=job.played,
            steps=job.steps,
            frames=job.frames,
            budget=job.exhausted,
            log=str(log_path(job.job.log_dir, spec.name, job.job.game, run)),
        )
        if job.started:
            self.on_event(JobDone(key, job.summary))

    def fail_all(self, failure: Failure) -> None:
        """Fail every job without an outcome (the cluster has no CPU for the work left)."""
        self.whole.clear()
        for key in self.states:
            self.fail(key, failure)

    def fail(self, key: str, failure: Failure, trace: str = "") -> None:
        """Fail a job (a worker's report, or a reason the transport found: its log...)."""
        job = self.states[key]
        if job.failure is not None or job.summary is not None:
            return
        job.failure, job.trace = failure, trace
        job.todo.clear()
        self.on_event(JobFailed(key, failure))

    # -- workers that die or hang -------------------------------------------------------------
    def in_flight(self, worker: int) -> list[tuple[str, int | None, float | None]]:
        """``(job key, episode, since)`` of everything ``worker`` is playing."""
        state = self.workers[worker]
        found: list[tuple[str, int | None, float | None]] = []
        if state.job is not None:
            found.append((state.job, state.episode, state.since))
        for lane in state.lanes:
            if lane.job is not None and lane.queue:
                found.append((lane.job, lane.queue[0], lane.since))
        return found

    def lost(
        self,
        worker: int,
        reason: Reason,
        trace: str = "",
        *,
        requeue_unstarted: bool = False,
    ) -> None:
        """``worker`` is gone: fail each job it was playing with ``reason(key, episode)``.

        ``trace`` (the worker's last output) is kept with each failed job. With
        ``requeue_unstarted`` (its node died, or it never ran: nothing the agent did), work it
        had been given but had not begun goes back to the queue for the workers that remain
        instead of failing: no episode of it started, so nothing of it is in the logs. A worker
        that crashes fails even that, so an agent that kills every worker ends the run.
        """
        state = self.workers[worker]
        if not state.alive:
            return
        state.alive = False
        in_flight = self.in_flight(worker)
        begun = {  # the jobs with an episode begun there: they fail whatever the cause
            key
            for key, _, since in in_flight
            if (state.heard if state.job == key else since is not None)
        }
        for key, episode, _ in in_flight:
            if self.streams is not None and state.job == key:
                self.streams.close_job(key)
            if requeue_unstarted and key not in begun:
                self._requeue(state, key)
            else:
                self.fail(key, reason(key, episode), trace)
        if self.streams is not None:
            for lane_id, lane in enumerate(state.lanes):
                if lane.job is not None:
                    self.streams.close_lane(worker, lane_id)
        state.job, state.heard = None, False
        state.lanes = [_LaneState() for _ in range(self.lanes)]

    def _requeue(self, worker: _WorkerState, key: str) -> None:
        """Give back what a lost worker was given of ``key`` but had not begun."""
        job = self.states[key]
        if worker.job == key:
            self.whole.appendleft(key)
            return
        for lane in worker.lanes:
            if lane.job == key:
                job.todo.extendleft(reversed(lane.queue))
                lane.queue.clear()

    def overdue(self, now: float, limit: float) -> list[tuple[int, str, int | None]]:
        """``(worker, job key, episode)`` of episodes in flight for longer than ``limit`` s."""
        return [
            (worker, key, episode)
            for worker, state in self.workers.items()
            if state.alive
            for key, episode, since in self.in_flight(worker)
            if since is not None and now - since > limit
        ]

    def outcomes(self) -> list[JobOutcome]:
        """Every job's outcome, in the jobs' order (a job never given out: not played)."""
        found = []
        for job in self.jobs:
            state = self.states[job.key]
            if state.summary is not None:
                found.append(JobOutcome(job, "done", summary=state.summary))
            else:
                failure = state.failure or Failure(FailureKind.NOT_PLAYED, "not played")
                found.append(JobOutcome(job, "failed", failure, trace=state.trace))
        return found
