"""The Ray backend: the runner's workers as Ray actors, on a local Ray instance or on a cluster.

Each worker is an actor (one CPU, on any node) that lives for the whole run: it loads the agent
once and plays what the driver sends it, exactly as a local worker process does
(:mod:`~arcadebench.benchmarks.runner.serve`, decided by the same
:class:`~arcadebench.benchmarks.runner.schedule.Scheduler`). Clusters started by KubeRay, the
cloud autoscalers or ``ray up`` share no file system, so actors write nothing to the driver's:
the driver is the single writer of the logs (:mod:`arcadebench.records.relay`).

- When the scheduler gives a lane a job (or a worker a whole job), the driver opens a stream of
  the job's run (:class:`~arcadebench.records.RunReceiver`: the log continued as a local
  worker continues it, the stream's slot claimed and locked; a whole job of a protocol scored
  after training gets one for its training log and one for its evaluation log) and sends its
  start with the work.
- The actor plays with its monitors' logs relayed (:class:`~arcadebench.records.Relay`): each
  header and episode line, and each event, goes to a mailbox, a small actor pinned to the
  driver's node (so it outlives any worker node), without waiting for it.
- The driver empties the mailbox every quarter second: it appends the lines to the logs (one
  ``write`` + ``fsync`` each, under the run's append lock, as a local worker does) and passes
  the events to the scheduler. Work goes to an actor through a second method (actors run two
  threads: one plays, one takes work), one episode index ahead per lane so a lane never waits
  for the driver's next look.
- A failed job's traceback travels with its failure; the output of an actor that died is read
  from its node by a small pinned task.

Node failures: a worker node that dies fails the jobs its actors were playing (Ray says
``ActorUnavailableError`` within a second, long before the head marks the node dead), one line
each; their finished episodes are in the driver's logs, from which ``--resume`` continues them
on the nodes that remain. What its actors had been sent but not begun, and what went to an
actor Ray placed on the dying node and never started, goes back to the queue. Work not started
yet waits for a node (an autoscaler may be adding one); when the cluster has had no CPU at all
for ``cpu_wait`` seconds, the jobs left fail with a message saying so.

Classes: RayBackend.
Functions: check_reachable.
"""

from __future__ import annotations

import contextlib
import faulthandler
import itertools
import os
import queue
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.messages import (
    ActorStarted,
    Ended,
    Failure,
    FailureKind,
    Line,
    Order,
    Report,
    Stop,
    Waiting,
)
from arcadebench.benchmarks.runner.pool import (
    Loss,
    PoolSettings,
    WorkerPool,
    tail_summary,
    worker_count,
)
from arcadebench.benchmarks.runner.reference import AgentRef
from arcadebench.benchmarks.runner.schedule import Events, JobOutcome, Scheduler
from arcadebench.benchmarks.runner.serve import Worker, WorkerOptions, limit_threads
from arcadebench.benchmarks.training.ray_run import import_ray
from arcadebench.errors import ArcadebenchError, first_line
from arcadebench.records import RunReceiver, log_path, phase_run
from arcadebench.specs import load_spec

__all__ = ["CPU_WAIT", "RayBackend", "check_reachable"]

CPU_WAIT = 300.0
"""Seconds the work left waits for a node with CPUs (a cluster whose last worker node died, or
an autoscaler still starting one) before its jobs fail."""

_CLUSTER_POLL = 1.0  # seconds between two looks at the cluster's CPUs
_STDERR_BYTES = 64 * 1024  # the end of a dead actor's output that travels back
_STOP_GRACE = 5.0  # seconds the actors have to close their lanes when the run ends
_PURPOSE = "`--backend ray`"


def check_reachable(address: str) -> None:
    """Fail fast on a ``host:port`` nobody listens at (Ray itself retries for minutes)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return  # "auto", "ray://..." and the like: left to Ray
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        raise ArcadebenchError(
            f"`address` must be a running Ray cluster's head (host:port), got {address!r}: "
            f"{error.strerror or error}; start one with `ray start --head` or fix the address"
        ) from None


def _connect(ray: Any, address: str | None, workers: int) -> bool:
    """Join the cluster at ``address`` or start a local instance; whether one was started."""
    if ray.is_initialized():
        return False
    if address is not None:
        check_reachable(address)
    cpus = {"num_cpus": workers} if address is None else {}
    try:  # "local": a new instance, never a stray one
        ray.init(
            address=address or "local",
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
            **cpus,
        )
    except Exception as error:  # noqa: BLE001 - Ray raises many types here
        where = (
            f"connect to the Ray cluster at {address}" if address else "start a local Ray instance"
        )
        raise ArcadebenchError(
            f"cannot {where} ({type(error).__name__}: {first_line(error)}); check the address "
            "and, if the cluster uses token authentication, RAY_AUTH_TOKEN"
        ) from None
    return True


# -- the actor's side -------------------------------------------------------------------------


class _Mailbox:
    """What the actors send the driver, kept on the driver's node until the driver takes it."""

    def __init__(self) -> None:
        self._items: list[tuple[int, Report | ActorStarted | Line | Ended]] = []

    def put(self, item: tuple[int, Report | ActorStarted | Line | Ended]) -> None:
        """Keep one message (actor calls from one caller run in the order it made them)."""
        self._items.append(item)

    def take(self) -> list[tuple[int, Report | ActorStarted | Line | Ended]]:
        """Everything kept so far, in the order it came."""
        items, self._items = self._items, []
        return items


def _take_stderr(path: str) -> str:
    """A small task on a dead actor's node: the end of its stderr file, which it removes."""
    text = ""
    with contextlib.suppress(OSError), open(path, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - _STDERR_BYTES))
        text = handle.read().decode(errors="replace")
    Path(path).unlink(missing_ok=True)
    return text


class _RayWorker:
    """A worker of the runner as a Ray actor: :class:`~.serve.Worker` fed through ``give``.

    Its stderr goes to a file on its own node (emulator banners, a traceback, faulthandler's
    report of a crash), whose end travels back when the actor dies.
    """

    def __init__(self, worker: int, agent: AgentRef, options: WorkerOptions, mailbox: Any) -> None:
        import ray

        fd, self.stderr = tempfile.mkstemp(prefix="arcadebench-", suffix=".stderr.txt")
        sys.stderr.flush()
        os.dup2(fd, 2)
        os.close(fd)
        faulthandler.enable()
        limit_threads(options.threads)
        self.id = worker
        self.put = mailbox.put.remote  # not awaited: see the module docstring
        self.inbox: queue.Queue[list[Order]] = queue.Queue()
        self.put((worker, ActorStarted(ray.get_runtime_context().get_node_id(), self.stderr)))
        self.worker = Worker(agent, options, self._send, self._line_sender)

    def _send(self, report: Report) -> None:
        self.put((self.id, report))

    def _line_sender(self, stream: int) -> Callable[[bytes], Any]:
        put, worker = self.put, self.id
        return lambda line: put((worker, Line(stream, line)))

    def give(self, orders: list[Order]) -> None:
        """More work (runs in the actor's second thread while :meth:`serve` plays)."""
        self.inbox.put(orders)

    def _receive(self, block: bool) -> list[Order]:
        found = list(self.inbox.get()) if block else []
        while True:
            try:
                found.extend(self.inbox.get_nowait())
            except queue.Empty:
                return found

    def serve(self) -> None:
        """Load the agent and play until the driver says stop; every message delivered after."""
        import ray

        try:
            if self.worker.start():
                self.worker.serve(self._receive)
            else:
                while not any(isinstance(m, Stop) for m in self._receive(True)):
                    pass
        finally:
            ray.get(self.put((self.id, Ended())))
            Path(self.stderr).unlink(missing_ok=True)


# -- the driver's side -----------------------------------------------------------------------


class _Streams:
    """The driver's ends of the streams the actors play (the scheduler's :class:`StreamHooks`)."""

    def __init__(self, learner: bool) -> None:
        self.learner = learner
        self.receivers: dict[int, RunReceiver] = {}
        self.lanes: dict[tuple[int, int], int] = {}
        self.jobs: dict[str, list[int]] = {}
        self.owner: dict[int, str] = {}
        self._ids = itertools.count()

    def _open(self, job: Job, phase: str) -> tuple[Any, int]:
        spec = load_spec(job.spec)
        run = phase_run(job.run, "evaluation" if phase == "evaluation" else "training")
        receiver = RunReceiver(
            spec, job.game, run, log_path(job.log_dir, spec.name, job.game, run), resume=True
        )
        stream = next(self._ids)
        self.receivers[stream] = receiver
        self.owner[stream] = job.key
        return receiver.start, stream

    def open_lane(self, job: Job, worker: int, lane: int) -> tuple[Any, int]:
        """A stream of ``job``'s run for lane ``lane`` of actor ``worker``."""
        start, stream = self._open(job, job.phase)
        self.lanes[(worker, lane)] = stream
        return start, stream

    def close_lane(self, worker: int, lane: int) -> None:
        """Release the lane's stream."""
        stream = self.lanes.pop((worker, lane), None)
        if stream is not None:
            self._close(stream)

    def open_job(self, job: Job) -> dict[str, tuple[Any, int]]:
        """The streams of a whole job: training and, after training, evaluation."""
        after = load_spec(job.spec).evaluation.scored == "after_training"
        phases = ["training"] if not after else (["training"] if self.learner else [])
        phases += ["evaluation"] if after else []
        starts = {}
        try:
            for phase in phases:
                starts[phase] = self._open(job, phase)
        except BaseException:
            for _, stream in starts.values():
                self._close(stream)
            raise
        self.jobs[job.key] = [stream for _, stream in starts.values()]
        return starts

    def close_job(self, key: str) -> None:
        """Release a whole job's streams."""
        for stream in self.jobs.pop(key, []):
            self._close(stream)

    def _close(self, stream: int) -> None:
        receiver = self.receivers.pop(stream, None)
        if receiver is not None:
            receiver.close()

    def append(self, stream: int, line: bytes) -> tuple[str, Failure] | None:
        """Write a line an actor sent; if that failed, the job whose log it is, and its failure."""
        receiver = self.receivers.get(stream)
        if receiver is None:
            return None  # a late line of a stream given up on
        try:
            receiver.append(line)
        except (OSError, ArcadebenchError) as error:
            message = f"the driver could not write {receiver.log}: {error}"
            self._close(stream)
            return self.owner[stream], Failure(FailureKind.LOG, message)
        return None

    def close_all(self) -> None:
        """Release every stream (the end of the run, or an interruption)."""
        for stream in list(self.receivers):
            self._close(stream)


@dataclass
class _Actor:
    handle: Any
    serve: Any
    node: str | None = None
    stderr: str | None = None


class _RayPool(WorkerPool):
    """The Ray actors of one run (:class:`~.pool.WorkerPool`'s transport), and the logs' writer.

    Its loop empties the mailbox every quarter second: it appends the lines to the logs and
    passes the reports to the scheduler; an actor that ended is noticed through its ``serve``
    call's reference.
    """

    def __init__(
        self,
        ray: Any,
        scheduler: Scheduler,
        streams: _Streams,
        agent: AgentRef,
        settings: PoolSettings,
        wanted: int,
        cpu_wait: float,
    ) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        super().__init__(scheduler, agent, settings, wanted)
        self.ray = ray
        self.streams = streams
        self.cpu_wait = cpu_wait
        self.actors: dict[int, _Actor] = {}
        self._pinned = NodeAffinitySchedulingStrategy(
            ray.get_runtime_context().get_node_id(), soft=False
        )
        self.mailbox = (
            ray.remote(_Mailbox).options(num_cpus=0, scheduling_strategy=self._pinned).remote()
        )
        self.actor_class = ray.remote(num_cpus=1, max_concurrency=2, max_restarts=0)(_RayWorker)
        self._cpus = 0.0
        self._cpus_at = -float("inf")
        self._no_cpu_since: float | None = None

    def start_worker(self, worker: int) -> None:
        handle = self.actor_class.remote(worker, self.agent, self.settings.options, self.mailbox)
        self.actors[worker] = _Actor(handle, handle.serve.remote())

    def send(self, worker: int, orders: list[Order]) -> None:
        self.actors[worker].handle.give.remote(orders)

    def wait(self, timeout: float) -> None:
        refs = [actor.serve for actor in self.actors.values()]
        if refs:
            self.ray.wait(refs, num_returns=1, timeout=timeout)
        else:
            time.sleep(timeout)
        self._check_cpus(time.monotonic())

    def ended(self) -> list[int]:
        refs = [actor.serve for actor in self.actors.values()]
        if not refs:
            return []
        done, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
        return [w for w, actor in self.actors.items() if actor.serve in done]

    def collect(self) -> None:
        """Write the lines and pass on the reports the mailbox holds."""
        try:
            items = self.ray.get(self.mailbox.take.remote())
        except self.ray.exceptions.RayActorError as error:
            raise ArcadebenchError(
                f"the runner's mailbox on this node died ({type(error).__name__}), so the jobs' "
                "episodes can no longer reach the logs; the episodes written so far are kept: "
                "continue with resume=True"
            ) from None
        for worker, message in items:
            actor = self.actors.get(worker)
            if isinstance(message, Line):
                broken = self.streams.append(message.stream, message.line)
                if broken is not None:
                    self.scheduler.fail(*broken)
            elif isinstance(message, ActorStarted):
                self.ran()
                if actor is not None:
                    actor.node, actor.stderr = message.node, message.stderr
            elif not isinstance(message, Ended):
                self.deliver(worker, message)

    # -- actors that end --------------------------------------------------------------------
    def loss(self, worker: int) -> Loss:
        actor = self.actors[worker]
        try:
            self.ray.get(actor.serve)
            error: Exception | None = None
        except Exception as found:  # noqa: BLE001 - a dead actor or node
            error = found
        self.collect()  # what it sent before it ended
        del self.actors[worker]
        never_ran = actor.node is None  # Ray never started it (its node died first...)
        node_died = self._unreachable(error) or (
            not never_ran and not self._node_alive(str(actor.node))
        )
        text = "" if node_died else self._fetch_stderr(actor)
        name = type(error).__name__ if error is not None else "it returned"
        if node_died:
            death = (
                f"the Ray node running it died or became unreachable ({name}); its finished "
                "episodes are in the driver's log"
            )
        elif never_ran:
            death = f"Ray did not start it ({name}: {first_line(error)})"
        elif isinstance(error, self.ray.exceptions.RayActorError):
            death = f"the Ray worker process died ({name})" + tail_summary(text)
        else:
            death = f"the Ray worker failed ({name}: {first_line(error)})" + tail_summary(text)
        kind = FailureKind.NODE_LOST if node_died else FailureKind.WORKER_DIED
        return Loss(death, kind, text, unstarted=never_ran, blameless=never_ran or node_died)

    def _unreachable(self, error: Exception | None) -> bool:
        """Whether the actor's node stopped answering (a killed node, or the network to it).

        Ray says so at once (``ActorUnavailableError``: the actors never restart) while the
        head marks the node dead only after its health checks fail, some 15-30 s later; a
        crashed process on a live node is an ``ActorDiedError`` instead.
        """
        unavailable = getattr(self.ray.exceptions, "ActorUnavailableError", ())
        return isinstance(error, unavailable)

    def _node_alive(self, node: str) -> bool:
        try:
            return any(n.get("NodeID") == node and n.get("Alive") for n in self.ray.nodes())
        except Exception:  # noqa: BLE001 - the head is unreachable: say the process died
            return True

    def _fetch_stderr(self, actor: _Actor) -> str:
        """The end of a dead actor's stderr, read on its node ("" when the node is gone)."""
        if actor.node is None or actor.stderr is None:
            return ""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        reader = self.ray.remote(num_cpus=0, max_retries=0)(_take_stderr)
        try:
            ref = reader.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(actor.node, soft=False)
            ).remote(actor.stderr)
            return str(self.ray.get(ref, timeout=30))
        except Exception:  # noqa: BLE001 - the node is gone: no stderr to read
            return ""

    def kill(self, worker: int) -> None:
        actor = self.actors.get(worker)
        if actor is not None:
            self.ray.kill(actor.handle, no_restart=True)

    # -- a cluster without CPUs -------------------------------------------------------------
    def _cluster_cpus(self) -> float:
        now = time.monotonic()
        if now - self._cpus_at > _CLUSTER_POLL:
            self._cpus = float(self.ray.cluster_resources().get("CPU", 0))
            self._cpus_at = now
        return self._cpus

    def _check_cpus(self, now: float) -> None:
        """Fail the jobs left when the cluster has had no CPU for ``cpu_wait`` seconds."""
        if self.scheduler.finished or self._cluster_cpus() > 0:
            self._no_cpu_since = None
            return
        if self._no_cpu_since is None:
            self._no_cpu_since = now
            self.scheduler.on_event(
                Waiting(
                    f"no node of the Ray cluster has a CPU for the runner's workers: the jobs wait "
                    f"up to {self.cpu_wait:g} s for one (start a worker node: `ray start "
                    "--address=<head>`)"
                )
            )
        if now - self._no_cpu_since < self.cpu_wait:
            return
        message = (
            f"no node of the Ray cluster had a CPU for {self.cpu_wait:g} s, so the job could not "
            "run; start a worker node (`ray start --address=<head>`) and continue with "
            "resume=True"
        )
        self.scheduler.fail_all(Failure(FailureKind.NO_CPU, message))

    def stop(self) -> None:
        """Stop the actors (letting them close their lanes), write what they sent, clean up."""
        for actor in self.actors.values():
            with contextlib.suppress(Exception):  # best effort
                actor.handle.give.remote([Stop()])
        refs = [actor.serve for actor in self.actors.values()]
        if refs:
            with contextlib.suppress(Exception):
                self.ray.wait(refs, num_returns=len(refs), timeout=_STOP_GRACE)
        with contextlib.suppress(Exception):  # the mailbox may be gone
            self.collect()  # the episodes that reached the mailbox are finished: keep them
        for actor in self.actors.values():
            with contextlib.suppress(Exception):
                self.ray.kill(actor.handle, no_restart=True)
        self.actors.clear()
        self.streams.close_all()
        with contextlib.suppress(Exception):
            self.ray.kill(self.mailbox)


class RayBackend:
    """Ray actors that live for the whole run (:class:`~.pool.Backend`; module docstring).

    Without ``address`` and without a running Ray instance, a local one with ``workers`` CPUs is
    started and shut down afterwards. On a cluster the actors run on any node and write nothing
    there: this process writes the logs, so the log directory only has to be on this machine.

    Args:
        address: a running cluster's head (``host:port``, ``auto``); default a local instance.
        cpu_wait: seconds the work left waits for a node with CPUs before its jobs fail.
    """

    def __init__(self, address: str | None = None, cpu_wait: float = CPU_WAIT) -> None:
        self.address = address
        self.cpu_wait = cpu_wait

    def check(self) -> None:
        """Fail before anything runs: Ray missing, or a cluster address nobody answers at."""
        import_ray(_PURPOSE)
        if self.address is not None:
            check_reachable(self.address)

    def run(
        self,
        jobs: Sequence[Job],
        agent: AgentRef,
        settings: PoolSettings,
        on_event: Events,
        tick: Callable[[], None] | None = None,
    ) -> list[JobOutcome]:
        """Play ``jobs`` in Ray actors (module docstring).

        Raises:
            IncompatibleAgent: the actors refused the agent.
        """
        ray = import_ray(_PURPOSE)
        started = _connect(ray, self.address, settings.workers)
        streams = _Streams(learner=agent.learns)
        scheduler = Scheduler(
            jobs, lanes=settings.lanes, depth=2, on_event=on_event, streams=streams
        )
        try:
            on_cluster = self.address is not None
            cpus = int(ray.cluster_resources().get("CPU", 0)) if on_cluster else settings.workers
            wanted = worker_count(jobs, max(settings.workers, cpus), settings.lanes)
            pool = _RayPool(ray, scheduler, streams, agent, settings, wanted, self.cpu_wait)
            return pool.run(tick)
        finally:
            if started:
                ray.shutdown()
