"""A worker process of the runner: it loads the agent once and plays whatever the parent sends.

Issue 29 measured a process per (game, seed) job: torch and stable-baselines3 imported and the
model loaded again for every job, 10-12 s of wall time for a 764-step episode. A worker lives
for the whole run instead: it loads a saved model (or any agent that does not change from job
to job) once, on its device, with the thread pools sized for the number of workers, and plays
what the parent sends it, in one of two ways (:mod:`~.worker`):

- ``("job", job, starts)``: a whole job, one episode at a time (:func:`~.worker.run_job`);
- ``("open", lane, job, start, stream)``, ``("play", lane, index)``, ``("close", lane)``: the
  episodes of batched lanes (:class:`~.lanes.Lanes`), stepped together between messages;
- ``("stop",)``: close everything and return.

What it says back: ``("ready",)`` once the agent is loaded, ``("refused", message)`` when the
agent cannot play (the run stops), and the events of its jobs and lanes (``episode_start``,
``episode``, ``steps``, ``start``, ``done``, ``error``, ``lane_failed``, ``exhausted``).

Classes: WorkerOptions, Worker.
Functions: worker_main.
"""

from __future__ import annotations

import faulthandler
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arcadebench.benchmarks.runner.agents import (
    SAVED_MODEL_PREFIXES,
    load_agent,
    shared_by_jobs,
)
from arcadebench.benchmarks.runner.lanes import Lanes
from arcadebench.benchmarks.runner.worker import Job, run_job
from arcadebench.errors import ArcadebenchError, IncompatibleAgent
from arcadebench.records import Relay

__all__ = ["Worker", "WorkerOptions", "worker_main"]

Send = Callable[[tuple[Any, ...]], None]
Receive = Callable[[bool], list[tuple[Any, ...]]]
"""``receive(block)``: the messages waiting (at least one when ``block``)."""


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
        agent: what the run plays (as :func:`~.agents.check_agent` returned it).
        options: device and threads.
        send: how events reach the parent.
        line_sender: for streams whose log the parent holds (Ray), ``line_sender(stream)``
            sends that stream's lines.
    """

    def __init__(
        self,
        agent: Any,
        options: WorkerOptions,
        send: Send,
        line_sender: Callable[[int], Callable[[bytes], Any]] | None = None,
    ) -> None:
        self.agent = agent
        self.options = options
        self.send = send
        self.line_sender = line_sender
        self.shared: Any = None
        self._fresh = pickle.dumps(agent) if not isinstance(agent, str) else None
        self.lanes = Lanes(agent, None, send, line_sender, options.device)

    def start(self) -> bool:
        """Load the agent a worker shares between its jobs; whether it can play."""
        try:
            if shared_by_jobs(self.agent):
                obj = load_agent(self.agent, self.options.device)
                if isinstance(self.agent, str) and self.agent.startswith(SAVED_MODEL_PREFIXES):
                    obj.load(threads=self.options.threads)
                self.shared = self.lanes.shared = obj
        except ArcadebenchError as error:
            self.send(("refused", str(error)))
            return False
        except Exception as error:  # noqa: BLE001 - the user's agent: whatever it raises
            traceback.print_exc()
            self.send(
                ("refused", f"the agent could not be loaded: {type(error).__name__}: {error}")
            )
            return False
        self.send(("ready",))
        return True

    def serve(self, receive: Receive) -> None:
        """Handle messages until ``stop``; step the lanes in between."""
        try:
            while True:
                for message in receive(not self.lanes.busy):
                    if not self.handle(message):
                        return
                if self.lanes.busy:
                    self.lanes.step()
        finally:
            self.lanes.close_all()

    def handle(self, message: tuple[Any, ...]) -> bool:
        """Carry out one message; ``False`` on ``stop``."""
        kind = message[0]
        if kind == "play":
            self.lanes.play(message[1], message[2])
        elif kind == "open":
            try:
                self.lanes.open(*message[1:])
            except IncompatibleAgent as error:
                self.send(("refused", str(error)))
        elif kind == "close":
            self.lanes.close(message[1])
        elif kind == "job":
            self._job(message[1], message[2])
        elif kind == "stop":
            return False
        return True

    def _job(self, job: Job, starts: dict[str, tuple[Any, int]] | None) -> None:
        """Play a whole job one episode at a time; report ``done``, ``error`` or ``refused``."""
        relays = {
            phase: Relay(start, self.line_sender(stream))
            for phase, (start, stream) in (starts or {}).items()
            if self.line_sender is not None
        }
        if self.shared is not None:
            agent = self.shared
        elif self._fresh is not None:  # a learner object: a fresh copy per job
            agent = pickle.loads(self._fresh)  # noqa: S301 - the caller's own agent
        else:
            agent = self.agent
        try:
            summary = run_job(job, self.send, relays, agent=agent, device=self.options.device)
        except IncompatibleAgent as error:
            self.send(("refused", str(error)))
        except Exception as error:  # noqa: BLE001 - reported as the job's failure
            trace = traceback.format_exc()
            sys.stderr.write(trace)
            reason = (
                str(error)
                if isinstance(error, ArcadebenchError)
                else f"{type(error).__name__}: {error}"
            )
            self.send(("error", job.key, reason, trace))
        else:
            self.send(("done", job.key, summary))


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def worker_main(agent: Any, conn: Any, stderr_path: str | None, options: WorkerOptions) -> None:
    """Entry point of a local worker process: load the agent, then serve the parent's pipe.

    SIGINT is ignored (the parent decides when to stop); SIGTERM exits through ``finally``, so
    the environments and their logs are closed. Output goes to ``stderr_path`` so emulator
    banners do not break the parent's progress display; faulthandler writes a crash's trace
    there, which the parent reports.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    for variable in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(variable, str(options.threads))
    if stderr_path is not None:
        os.makedirs(os.path.dirname(stderr_path) or ".", exist_ok=True)
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    faulthandler.enable()

    def send(message: tuple[Any, ...]) -> None:
        try:
            conn.send(message)
        except OSError:  # the parent is gone: stop (the logs are closed on the way out)
            raise SystemExit(1) from None

    def receive(block: bool) -> list[tuple[Any, ...]]:
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
        try:
            conn.close()
        except OSError:
            pass
