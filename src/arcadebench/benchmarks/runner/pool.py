"""A run's workers, whatever runs them: the one backend interface and the rules both follow.

Local processes (:mod:`~.backends`) and Ray actors (:mod:`~.ray_backend`) are two transports
for the same thing: long-lived workers (:mod:`~.serve`) that load the agent once and play what
a :class:`~.schedule.Scheduler` gives them. Both implement :class:`Backend` (``run(jobs,
agent, settings, on_event)``), and both drive their workers through :class:`WorkerPool`, where
the rules are written once:

- the loop: give each worker what the scheduler has for it, wait for reports, pass them on;
- a worker whose episode runs past the wall-clock limit is stopped, and its jobs fail as hung;
- a worker that ends before it is ready (it died while loading the agent) stops the run;
- a worker that ends after: the jobs it was playing fail with why (its process died, its node
  was lost), what it had been given but not begun goes back to the queue when that was not its
  own doing (its node died, it never ran), and a fresh worker takes its place while there is
  work; workers that end before running, again and again, stop the run.

A transport says only how to start, message, watch, kill and stop its workers
(:class:`WorkerPool`'s abstract methods) and why one ended (:class:`Loss`).

Classes: Backend, PoolSettings, Loss, WorkerPool.
Functions: hung_reason, tail_summary, worker_count.
"""

from __future__ import annotations

import abc
import itertools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.messages import (
    Failure,
    FailureKind,
    Order,
    Ready,
    Report,
)
from arcadebench.benchmarks.runner.reference import AgentRef
from arcadebench.benchmarks.runner.schedule import Events, JobOutcome, Reason, Scheduler
from arcadebench.benchmarks.runner.serve import WorkerOptions
from arcadebench.errors import IncompatibleAgent

__all__ = [
    "POLL",
    "Backend",
    "Loss",
    "PoolSettings",
    "WorkerPool",
    "hung_reason",
    "tail_summary",
    "worker_count",
]

POLL = 0.25
"""Seconds a pool waits for reports before it looks at its workers again."""

UNSTARTED_LIMIT = 5
"""Workers ending before they ran, none running between, showing the transport cannot start one."""


@dataclass(frozen=True)
class PoolSettings:
    """How a run's workers play.

    Attributes:
        workers: workers at most (fewer when there is less to play at once).
        lanes: environments per worker for a batched agent.
        options: their device and threads.
        episode_time_limit: seconds an episode may take before its worker is stopped.
    """

    workers: int
    lanes: int = 8
    options: WorkerOptions = field(default_factory=WorkerOptions)
    episode_time_limit: float | None = None


class Backend(Protocol):
    """Where a run's jobs play: local processes or Ray actors."""

    def run(
        self,
        jobs: Sequence[Job],
        agent: AgentRef,
        settings: PoolSettings,
        on_event: Events,
        tick: Callable[[], None] | None = None,
    ) -> list[JobOutcome]:
        """Play ``jobs`` with ``agent``; every job's outcome, in order.

        ``tick`` is called after every wake-up (at least four times a second), e.g. to redraw a
        progress display.

        Raises:
            IncompatibleAgent: the workers refused the agent (its spaces do not fit an env).
        """


@dataclass(frozen=True)
class Loss:
    """Why a worker ended, as its transport saw it.

    Attributes:
        death: one line on how it ended (its process died, its node was lost...).
        kind: the failure its jobs get.
        trace: what it last printed, kept with each job it failed.
        unstarted: it never ran (its transport never started it).
        blameless: nothing it played caused it (its node died, or it never ran): what it was
            given but had not begun goes back to the queue.
    """

    death: str
    kind: FailureKind = FailureKind.WORKER_DIED
    trace: str = ""
    unstarted: bool = False
    blameless: bool = False


@dataclass
class _Record:
    """What the parent knows of one worker."""

    ready: bool = False
    hung: tuple[str, int | None] | None = None


def worker_count(jobs: Sequence[Job], workers: int, lanes: int) -> int:
    """How many workers are worth starting: no more than there are things to play at once.

    Example:
        >>> job = Job(spec="atari5", game="pong", seed=0, log_dir="logs",
        ...           algorithm="random", episodes=3, todo=(0, 1, 2))
        >>> worker_count([job], workers=4, lanes=8)
        3
    """
    at_once = sum(1 if job.todo is None else len(job.todo) for job in jobs)
    return max(1, min(workers, at_once))


def hung_reason(key: str, episode: int | None, limit: float) -> Reason:
    """Why each job of a worker stopped for a hang failed: the hung one, and the others."""
    game, _, run = key.rpartition("/")
    message = (
        f"episode {episode} of {game} run {run!r} ran past the wall-clock limit of {limit:g} s "
        "(the agent or the emulator hangs); the worker was stopped"
    )

    def reason(job: str, _: int | None) -> Failure:
        said = message if job == key else f"its worker was stopped: {message}"
        return Failure(FailureKind.WORKER_HUNG, said)

    return reason


def tail_summary(text: str, lines: int = 3) -> str:
    """A dead worker's last words: faulthandler's fatal error and frame, or its last lines."""
    found_lines = [line.strip() for line in text.splitlines() if line.strip()]
    fatal = [i for i, line in enumerate(found_lines) if line.startswith("Fatal Python error:")]
    if fatal:
        frames = [line for line in found_lines[fatal[-1] :] if line.startswith("File ")]
        found = [found_lines[fatal[-1]], *(["at " + frames[0]] if frames else [])]
    else:
        found = [line for line in found_lines if not line.startswith("Extension modules:")]
        found = found[-lines:]
    return (": " + " | ".join(found))[:400] if found else ""


class WorkerPool(abc.ABC):
    """The workers of one run on one transport, driven by a :class:`Scheduler` (module docstring).

    Args:
        scheduler: what each worker plays.
        agent: what they play.
        settings: how many, how, and the episodes' wall-clock limit.
        wanted: workers to keep while there is work.
    """

    def __init__(
        self, scheduler: Scheduler, agent: AgentRef, settings: PoolSettings, wanted: int
    ) -> None:
        self.scheduler = scheduler
        self.agent = agent
        self.settings = settings
        self.wanted = wanted
        self.records: dict[int, _Record] = {}
        self._ids = itertools.count()
        self._unstarted = 0  # workers that ended before running since one ran

    # -- what a transport does ------------------------------------------------------------
    @abc.abstractmethod
    def start_worker(self, worker: int) -> None:
        """Start worker ``worker``: it loads the agent and waits for orders."""

    @abc.abstractmethod
    def send(self, worker: int, orders: list[Order]) -> None:
        """Give a worker more to do."""

    @abc.abstractmethod
    def wait(self, timeout: float) -> None:
        """Until a worker says something or ends, or ``timeout`` seconds.

        Also what else the transport watches between two looks (Ray: a cluster without CPUs).
        """

    @abc.abstractmethod
    def collect(self) -> None:
        """Pass every report that arrived to :meth:`deliver`."""

    @abc.abstractmethod
    def ended(self) -> list[int]:
        """The workers that ended since the last look."""

    @abc.abstractmethod
    def loss(self, worker: int) -> Loss:
        """Why ``worker`` ended; its last reports delivered first."""

    @abc.abstractmethod
    def kill(self, worker: int) -> None:
        """Stop ``worker`` at once (its episode hangs)."""

    @abc.abstractmethod
    def stop(self) -> None:
        """Stop every worker (letting it close its logs), and clean up."""

    # -- the rules, once ----------------------------------------------------------------------
    def deliver(self, worker: int, report: Report) -> None:
        """A worker's report, to the scheduler."""
        record = self.records.get(worker)
        if record is not None and isinstance(report, Ready):
            record.ready = True
        self.scheduler.receive(worker, report)

    def ran(self) -> None:
        """A worker is running: the transport can start them."""
        self._unstarted = 0

    def spawn(self) -> None:
        """Start one more worker."""
        worker = next(self._ids)
        self.records[worker] = _Record()
        self.start_worker(worker)
        self.scheduler.add_worker(worker)

    def run(self, tick: Callable[[], None] | None = None) -> list[JobOutcome]:
        """Until every job has an outcome; then stop the workers.

        Raises:
            IncompatibleAgent: the workers refused the agent.
        """
        scheduler = self.scheduler
        try:
            for _ in range(self.wanted):
                self.spawn()
            while not scheduler.finished:
                for worker, orders in scheduler.fill().items():
                    self.send(worker, orders)
                self.wait(POLL)
                if tick is not None:
                    tick()
                self.collect()
                if scheduler.refused is not None:
                    break
                self._stop_hung()
                for worker in self.ended():
                    self._lose(worker)
                if not self.records and not scheduler.finished and scheduler.refused is None:
                    self.spawn()
        finally:
            self.stop()
        if scheduler.refused is not None:
            raise IncompatibleAgent(scheduler.refused)
        return scheduler.outcomes()

    def _stop_hung(self) -> None:
        limit = self.settings.episode_time_limit
        if limit is None:
            return
        for worker, key, episode in self.scheduler.overdue(time.monotonic(), limit):
            record = self.records.get(worker)
            if record is not None and record.hung is None:
                record.hung = (key, episode)
                self.kill(worker)

    def _lose(self, worker: int) -> None:
        """A worker ended: fail (or give back) what it played, replace it while there is work."""
        loss = self.loss(worker)
        record = self.records.pop(worker)
        scheduler = self.scheduler
        if not record.ready and not loss.blameless:
            scheduler.refused = scheduler.refused or (
                f"a worker died while loading the agent ({loss.death})"
            )
            return
        self._unstarted += loss.unstarted  # counted until a worker runs (:meth:`ran`)
        if self._unstarted >= UNSTARTED_LIMIT:
            scheduler.refused = scheduler.refused or (
                f"no worker could be started: {self._unstarted} ended before running and none "
                f"ran ({loss.death}); check the cluster's nodes and runtime environment"
            )
            return
        reason: Reason
        if record.hung is not None:
            reason = hung_reason(*record.hung, self.settings.episode_time_limit or 0.0)
        else:
            failure = Failure(loss.kind, loss.death)
            reason = lambda _key, _episode: failure  # noqa: E731 - every job: the same
        scheduler.lost(worker, reason, loss.trace, requeue_unstarted=loss.blameless)
        if scheduler.work_left and len(self.records) < self.wanted:
            self.spawn()
