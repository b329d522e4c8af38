"""A worker process of the runner: it loads the agent once and plays whatever the parent sends.

A worker lives for the whole run: it loads a saved policy (or any agent) once, on its device,
with the thread pools sized for the number of workers (:meth:`~.reference.AgentRef.load`), and
plays what the parent sends it (:mod:`~.messages`), in one of two ways (:mod:`~.worker`):

- :class:`~.messages.PlayJob`: a whole job, one episode at a time (:func:`~.worker.run_job`);
- :class:`~.messages.OpenLane`, :class:`~.messages.PlayEpisode`, :class:`~.messages.CloseLane`:
  the episodes of batched lanes (:class:`~.lanes.Lanes`), stepped together between messages;
- :class:`~.messages.Stop`: close everything and return.

What it says back: :class:`~.messages.Ready` once the agent is loaded,
:class:`~.messages.Refused` when it cannot play (the run stops), and the progress of its jobs
and lanes. The same :class:`Worker` runs in a local process (:func:`worker_main`) and in a Ray
actor (:mod:`~.ray_backend`).

Classes: WorkerOptions, Worker.
Functions: worker_main, limit_threads.
"""

from __future__ import annotations

import contextlib
import faulthandler
import os
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arcadebench.benchmarks.runner.lanes import Lanes
from arcadebench.benchmarks.runner.messages import (
    CloseLane,
    JobDone,
    JobFailed,
    OpenLane,
    Order,
    PlayEpisode,
    PlayJob,
    Ready,
    Refused,
    Report,
    Stop,
    failure_of,
)
from arcadebench.benchmarks.runner.reference import AgentRef, LoadedAgent
from arcadebench.benchmarks.runner.worker import Send, run_job
from arcadebench.errors import ArcadebenchError, IncompatibleAgent
from arcadebench.records import Relay

__all__ = ["Worker", "WorkerOptions", "limit_threads", "worker_main"]

Receive = Callable[[bool], list[Order]]
"""``receive(block)`` returns the messages waiting (at least one when ``block``)."""


@dataclass(frozen=True)
class WorkerOptions:
    """How a worker plays.

    Attributes:
        device: where a saved model runs (``"cpu"``, ``"cuda"``...).
        threads: the intra-op threads of the agent's framework (cores / workers).
    """

    device: str = "cpu"
    threads: int = 1


class Worker:
    """One worker: its agent, its lanes, and the loop over the parent's messages.

    Args:
        agent: what the run plays, resolved at the door.
        options: device and threads.
        send: how events reach the parent.
        line_sender: for streams whose log the parent holds (Ray), ``line_sender(stream)``
            sends that stream's lines.
    """

    def __init__(
        self,
        agent: AgentRef,
        options: WorkerOptions,
        send: Send,
        line_sender: Callable[[int], Callable[[bytes], Any]] | None = None,
    ) -> None:
        self.agent = agent
        self.options = options
        self.send = send
        self.line_sender = line_sender
        self.loaded: LoadedAgent | None = None
        self.lanes: Lanes | None = None

    def start(self) -> bool:
        """Load the agent, once; whether it can play."""
        try:
            self.loaded = self.agent.load(self.options.device, self.options.threads)
        except ArcadebenchError as error:
            self.send(Refused(str(error)))
            return False
        except Exception as error:  # noqa: BLE001 - the user's agent: whatever it raises
            traceback.print_exc()
            self.send(Refused(f"the agent could not be loaded: {type(error).__name__}: {error}"))
            return False
        self.lanes = Lanes(self.loaded, self.send, self.line_sender)
        self.send(Ready())
        return True

    def serve(self, receive: Receive) -> None:
        """Handle messages until :class:`~.messages.Stop`; step the lanes in between."""
        lanes = self.lanes
        if lanes is None:  # pragma: no cover - serve follows a successful start
            return
        try:
            while True:
                for message in receive(not lanes.busy):
                    if not self.handle(message):
                        return
                if lanes.busy:
                    lanes.step()
        finally:
            lanes.close_all()

    def handle(self, message: Order) -> bool:
        """Carry out one message; ``False`` on :class:`~.messages.Stop`."""
        lanes = self.lanes
        if lanes is None:  # pragma: no cover - messages follow a successful start
            return not isinstance(message, Stop)
        if isinstance(message, PlayEpisode):
            lanes.play(message.lane, message.index)
        elif isinstance(message, OpenLane):
            try:
                lanes.open(message.lane, message.job, message.start, message.stream)
            except IncompatibleAgent as error:
                self.send(Refused(str(error)))
        elif isinstance(message, CloseLane):
            lanes.close(message.lane)
        elif isinstance(message, PlayJob):
            self._job(message)
        return not isinstance(message, Stop)

    def _job(self, order: PlayJob) -> None:
        """Play a whole job one episode at a time; report it done, failed or refused."""
        job, loaded = order.job, self.loaded
        if loaded is None:  # pragma: no cover - jobs follow a successful start
            return
        relays = {
            phase: Relay(start, self.line_sender(stream))
            for phase, (start, stream) in (order.starts or {}).items()
            if self.line_sender is not None
        }
        try:
            summary = run_job(job, self.send, loaded, relays)
        except IncompatibleAgent as error:
            self.send(Refused(str(error)))
        except Exception as error:  # noqa: BLE001 - reported as the job's failure
            trace = traceback.format_exc()
            sys.stderr.write(trace)
            self.send(JobFailed(job.key, failure_of(error), trace))
        else:
            self.send(JobDone(job.key, summary))


def limit_threads(threads: int) -> None:
    """One worker's share of the cores for the agent's numerical libraries' thread pools."""
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(variable, str(threads))


def _stop(signum: int, _frame: Any) -> None:
    raise SystemExit(128 + signum)


def worker_main(
    agent: AgentRef, conn: Any, stderr_path: str | None, options: WorkerOptions
) -> None:
    """Entry point of a local worker process: load the agent, then serve the parent's pipe.

    SIGINT is ignored (the parent decides when to stop); SIGTERM exits through ``finally``, so
    the environments and their logs are closed. Output goes to ``stderr_path`` so emulator
    banners do not break the parent's progress display; faulthandler writes a crash's trace
    there, which the parent reports.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    limit_threads(options.threads)
    if stderr_path is not None:
        os.makedirs(os.path.dirname(stderr_path) or ".", exist_ok=True)
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    faulthandler.enable()

    def send(message: Report) -> None:
        try:
            conn.send(message)
        except OSError:  # the parent is gone: stop (the logs are closed on the way out)
            raise SystemExit(1) from None

    def receive(block: bool) -> list[Order]:
        try:
            messages = [conn.recv()] if block else []
            while conn.poll():
                messages.append(conn.recv())
        except (EOFError, OSError):  # the parent is gone
            raise SystemExit(1) from None
        return messages

    worker = Worker(agent, options, send)
    try:
        if worker.start():
            worker.serve(receive)
        else:
            receive(True)  # the parent stops a worker that refused
    finally:
        with contextlib.suppress(OSError):
            conn.close()
