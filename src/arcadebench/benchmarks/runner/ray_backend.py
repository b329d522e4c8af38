"""The Ray backend: the runner's jobs as Ray tasks, on a local Ray instance or on a cluster.

Each job is a task in a fresh worker process (``max_calls=1``: stable-retro allows one emulator
per process, and a crash takes down one job only), on any node. Clusters started by KubeRay, the
cloud autoscalers or ``ray up`` share no file system, so tasks write nothing to the driver's:
the driver is the single writer of the logs (:mod:`arcadebench.records.relay`).

- Before submitting a job the driver opens its run (:class:`~arcadebench.records.RunReceiver`:
  the log continued as a local worker continues it, the stream's slot claimed and locked) and
  sends the task where the stream starts.
- The task plays with its monitor's log relayed (:class:`~arcadebench.records.Relay`): each
  header and episode line, and each progress event, goes to a mailbox, a small actor pinned to
  the driver's node (so it outlives any worker node), without waiting for it (a task blocked in
  ``ray.get`` lends its CPU to another task, which would run more jobs than CPUs). Only its
  last message is awaited, so a task that returns has delivered everything.
- The driver empties the mailbox every quarter second and whenever a task ends: it appends the
  lines to the logs (one ``write`` + ``fsync`` each, under the run's append lock, as a local
  worker does) and passes the events on.
- A failed job's stderr travels back too, into ``<log>.stderr.txt`` on the driver: in the
  task's result when the job raised, or read from the task's node by a small pinned task when
  its worker process died.

Node failures: a worker node that dies fails the jobs it was running (``NodeDiedError``, within a
second), one line each; their finished episodes are in the driver's logs, from which
``--resume`` continues them on the nodes that remain. Jobs not started yet wait for a node (an
autoscaler may be adding one); when the cluster has had no CPU at all for ``cpu_wait`` seconds,
they fail with a message saying so.

Functions: run_ray, import_ray, check_reachable.
"""

from __future__ import annotations

import faulthandler
import os
import socket
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.runner.backends import (
    EpisodeClock,
    Events,
    JobOutcome,
    hang_message,
    tail_summary,
)
from arcadebench.benchmarks.runner.worker import Job, run_job
from arcadebench.errors import ArcadebenchError, MissingDependency, install_hint
from arcadebench.records import Relay, RunReceiver, StreamStart, log_path
from arcadebench.specs import load_spec

__all__ = ["CPU_WAIT", "RAY_INSTALL", "check_reachable", "import_ray", "run_ray"]

RAY_INSTALL = install_hint("ray", "ray")
CPU_WAIT = 300.0
"""Seconds jobs wait for a node with CPUs (a cluster whose last worker node died, or an
autoscaler still starting one) before they fail."""

_POLL = 0.25  # seconds between two looks at the mailbox while no task ends
_CLUSTER_POLL = 1.0  # seconds between two looks at the cluster's CPUs
_JOBS_PER_CPU = 2  # jobs submitted per CPU of the cluster (each holds its log open)
_STDERR_BYTES = 64 * 1024  # the end of a failed task's stderr that travels back


def import_ray() -> Any:
    """The ``ray`` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise MissingDependency(
            f"`--backend ray` needs Ray, which is not installed: {RAY_INSTALL}"
        ) from None
    return ray


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
    options: dict[str, Any] = {
        "include_dashboard": False,
        "log_to_driver": False,
        "configure_logging": False,
    }
    if address is None:
        options["num_cpus"] = workers
    else:
        check_reachable(address)
    try:
        ray.init(
            address=address or "local", **options
        )  # "local": a new instance, never a stray one
    except Exception as error:  # noqa: BLE001 - Ray raises many types here
        where = (
            f"connect to the Ray cluster at {address}" if address else "start a local Ray instance"
        )
        first = (str(error).strip().splitlines() or [""])[0][:200]
        raise ArcadebenchError(
            f"cannot {where} ({type(error).__name__}: {first}); check the address and, if the "
            "cluster uses token authentication, RAY_AUTH_TOKEN"
        ) from None
    return True


# -- the task's side -------------------------------------------------------------------------


class _Mailbox:
    """What the tasks send the driver, kept on the driver's node until the driver takes it."""

    def __init__(self) -> None:
        self._items: list[tuple[Any, ...]] = []

    def put(self, item: tuple[Any, ...]) -> None:
        """Keep one message (actor calls from one task run in the order it made them)."""
        self._items.append(item)

    def take(self) -> list[tuple[Any, ...]]:
        """Everything kept so far, in the order it came."""
        items, self._items = self._items, []
        return items


def _read_end(path: str) -> str:
    """The last :data:`_STDERR_BYTES` of a file, or ``""``."""
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.fstat(handle.fileno()).st_size - _STDERR_BYTES))
            return handle.read().decode(errors="replace")
    except OSError:
        return ""


def _take_stderr(path: str) -> str:
    """A small task on a dead worker's node: the end of its stderr file, which it removes."""
    text = _read_end(path)
    Path(path).unlink(missing_ok=True)
    return text


def _ray_task(job: Job, start: StreamStart, mailbox: Any) -> dict[str, Any]:
    """A Ray task: play ``job``, sending its log lines and events to the driver's mailbox.

    Its stderr goes to a file on its own node (emulator banners, a traceback, faulthandler's
    report of a crash), whose end travels back when the job fails.
    """
    import ray

    fd, stderr = tempfile.mkstemp(prefix="arcadebench-", suffix=".stderr.txt")
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)
    faulthandler.enable()
    put = mailbox.put.remote  # not awaited: see the module docstring
    put(("node", job.key, ray.get_runtime_context().get_node_id(), stderr))
    result: dict[str, Any]
    try:
        summary = run_job(job, put, Relay(start, lambda line: put(("line", job.key, line))))
        result = {"summary": summary}
    except Exception as error:  # noqa: BLE001 - reported as the job's failure
        traceback.print_exc()
        sys.stderr.flush()
        reason = (
            str(error)
            if isinstance(error, ArcadebenchError)
            else f"{type(error).__name__}: {error}"
        )
        result = {"error": reason, "stderr": _read_end(stderr)}
    ray.get(put(("end", job.key)))  # the mailbox has every message before the result is seen
    Path(stderr).unlink(missing_ok=True)
    return result


# -- the driver's side -----------------------------------------------------------------------


@dataclass
class _Remote:
    """A job submitted to Ray: its log's receiver, and what the driver knows of the task."""

    job: Job
    receiver: RunReceiver
    clock: EpisodeClock = field(default_factory=EpisodeClock)
    node: str | None = None
    stderr: str | None = None
    hung: str | None = None
    broken: str | None = None


class _RayRun:
    """The driver's loop: submit jobs, write what their tasks send, collect their outcomes."""

    def __init__(
        self,
        ray: Any,
        jobs: Sequence[Job],
        *,
        workers: int,
        on_event: Events,
        stderr_path: Callable[[Job], str | None],
    ) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.ray = ray
        self.workers = workers
        self.on_event = on_event
        self.stderr_path = stderr_path
        self.pending = list(jobs)
        self.running: dict[Any, _Remote] = {}
        self.by_key: dict[str, _Remote] = {}
        self.outcomes: dict[str, JobOutcome] = {}
        self._pinned = NodeAffinitySchedulingStrategy(
            ray.get_runtime_context().get_node_id(), soft=False
        )
        self.mailbox = (
            ray.remote(_Mailbox).options(num_cpus=0, scheduling_strategy=self._pinned).remote()
        )
        self.task = ray.remote(num_cpus=1, max_retries=0, max_calls=1)(_ray_task)
        self._cpus = 0.0
        self._cpus_at = -float("inf")
        self._no_cpu_since: float | None = None

    def run(self, episode_time_limit: float | None, cpu_wait: float) -> None:
        """Until every job has an outcome."""
        while self.pending or self.running:
            self._submit()
            refs = list(self.running)
            ready: list[Any] = []
            if refs:
                self.ray.wait(refs, num_returns=1, timeout=_POLL)
                ready, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
            self._drain()
            for ref in ready:
                self._finish(ref)
            now = time.monotonic()
            if episode_time_limit is not None:
                for ref, remote in self.running.items():
                    if remote.hung is None and remote.clock.overdue(now, episode_time_limit):
                        remote.hung = hang_message(
                            remote.job, remote.clock.episode, episode_time_limit
                        )
                        self.ray.cancel(ref, force=True)
            self._check_cpus(now, cpu_wait)

    # -- submitting ---------------------------------------------------------------------
    def _cluster_cpus(self) -> float:
        now = time.monotonic()
        if now - self._cpus_at > _CLUSTER_POLL:
            self._cpus = float(self.ray.cluster_resources().get("CPU", 0))
            self._cpus_at = now
        return self._cpus

    def _submit(self) -> None:
        """Submit jobs while fewer than two per CPU of the cluster are in flight."""
        window = max(self.workers, int(_JOBS_PER_CPU * self._cluster_cpus()))
        while self.pending and len(self.running) < window:
            job = self.pending.pop(0)
            spec = load_spec(job.spec)
            try:
                receiver = RunReceiver(
                    spec,
                    job.game,
                    job.run,
                    log_path(job.log_dir, spec.name, job.game, job.run),
                    resume=job.resume,
                )
            except ArcadebenchError as error:  # the log refuses this job, as a worker's would
                self._outcome(JobOutcome(job, "failed", str(error)))
                continue
            remote = _Remote(job, receiver)
            self.running[self.task.remote(job, receiver.start, self.mailbox)] = remote
            self.by_key[job.key] = remote

    # -- what the tasks send ------------------------------------------------------------
    def _drain(self) -> None:
        """Write the lines and pass on the events the mailbox holds."""
        try:
            items = self.ray.get(self.mailbox.take.remote())
        except self.ray.exceptions.RayActorError as error:
            raise ArcadebenchError(
                f"the runner's mailbox on this node died ({type(error).__name__}), so the jobs' "
                "episodes can no longer reach the logs; the episodes written so far are kept: "
                "continue with resume=True"
            ) from None
        for item in items:
            kind, remote = item[0], self.by_key.get(item[1])
            if remote is None or remote.broken is not None:
                continue  # a late message of a job that has ended
            if kind == "line":
                try:
                    remote.receiver.append(item[2])
                except (OSError, ArcadebenchError) as error:
                    remote.broken = f"the driver could not write {remote.receiver.log}: {error}"
                    self.ray.cancel(self._ref(remote), force=True)
            elif kind == "node":
                remote.node, remote.stderr = item[2], item[3]
            elif kind != "end":
                remote.clock.note(item)
                self.on_event(item)

    def _ref(self, remote: _Remote) -> Any:
        return next(ref for ref, found in self.running.items() if found is remote)

    # -- outcomes -----------------------------------------------------------------------
    def _finish(self, ref: Any) -> None:
        remote = self.running.pop(ref)
        try:
            result = self.ray.get(ref)
        except Exception as error:  # noqa: BLE001 - a dead worker or node, a cancelled task
            result = {"died": error}
        job = remote.job
        if remote.hung is not None or remote.broken is not None:
            self._save_stderr(job, self._fetch_stderr(remote))
            outcome = JobOutcome(job, "failed", remote.hung or remote.broken or "")
        elif "summary" in result:
            outcome = JobOutcome(job, "done", summary=result["summary"])
            self.on_event(("done", job.key, result["summary"]))
        elif "error" in result:
            self._save_stderr(job, result.get("stderr", ""))
            outcome = JobOutcome(job, "failed", result["error"])
        else:
            outcome = JobOutcome(job, "failed", self._death(remote, result["died"]))
        self._outcome(outcome, remote)

    def _death(self, remote: _Remote, error: Exception) -> str:
        """One line on a task that ended without a result: its node or its process died."""
        exceptions = self.ray.exceptions
        name = type(error).__name__
        if isinstance(error, exceptions.NodeDiedError):
            return (
                f"the Ray node running it died ({name}); its finished episodes are in the "
                "driver's log"
            )
        text = self._fetch_stderr(remote)
        self._save_stderr(remote.job, text)
        if isinstance(error, exceptions.WorkerCrashedError):
            return f"the Ray worker process died ({name})" + tail_summary(text)
        first = (str(error).strip().splitlines() or [""])[0][:200]
        return f"the Ray task failed ({name}: {first})" + tail_summary(text)

    def _fetch_stderr(self, remote: _Remote) -> str:
        """The end of a dead task's stderr, read on its node ("" when the node is gone)."""
        if remote.node is None or remote.stderr is None:
            return ""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        reader = self.ray.remote(num_cpus=0, max_retries=0)(_take_stderr)
        try:
            ref = reader.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(remote.node, soft=False)
            ).remote(remote.stderr)
            return str(self.ray.get(ref, timeout=30))
        except Exception:  # noqa: BLE001 - the node is gone: no stderr to read
            return ""

    def _save_stderr(self, job: Job, text: str) -> None:
        path = self.stderr_path(job)
        if path and text:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(text)

    def _outcome(self, outcome: JobOutcome, remote: _Remote | None = None) -> None:
        if remote is not None:
            remote.receiver.close()
            self.by_key.pop(remote.job.key, None)
        self.outcomes[outcome.job.key] = outcome
        if outcome.status == "failed":
            self.on_event(("failed", outcome.job.key, outcome.message))

    def _check_cpus(self, now: float, cpu_wait: float) -> None:
        """Fail the jobs left when the cluster has had no CPU for ``cpu_wait`` seconds."""
        if not (self.pending or self.running) or self._cluster_cpus() > 0:
            self._no_cpu_since = None
            return
        if self._no_cpu_since is None:
            self._no_cpu_since = now
            self.on_event(
                (
                    "waiting",
                    "",
                    f"no node of the Ray cluster has a CPU for tasks: the jobs wait up to "
                    f"{cpu_wait:g} s for one (start a worker node: `ray start --address=<head>`)",
                )
            )
        if now - self._no_cpu_since < cpu_wait:
            return
        reason = (
            f"no node of the Ray cluster had a CPU for {cpu_wait:g} s, so the job could not run; "
            "start a worker node (`ray start --address=<head>`) and continue with resume=True"
        )
        for ref, remote in list(self.running.items()):
            self.ray.cancel(ref, force=True)
            del self.running[ref]
            self._outcome(JobOutcome(remote.job, "failed", reason), remote)
        for job in self.pending:
            self._outcome(JobOutcome(job, "failed", reason))
        self.pending = []

    def stop(self) -> None:
        """Cancel the tasks left (Ctrl-C, an error), write what they sent, drop the mailbox."""
        for ref in self.running:
            try:
                self.ray.cancel(ref, force=True)
            except Exception:  # noqa: BLE001 - best effort
                pass
        if self.running:
            try:
                self._drain()  # the episodes that reached the mailbox are finished: keep them
            except Exception:  # noqa: BLE001 - best effort: the mailbox may be gone
                pass
        for remote in self.running.values():
            remote.receiver.close()
        self.running.clear()
        try:
            self.ray.kill(self.mailbox)
        except Exception:  # noqa: BLE001 - best effort
            pass


def run_ray(
    jobs: Sequence[Job],
    *,
    workers: int,
    on_event: Events,
    episode_time_limit: float | None = None,
    stderr_path: Callable[[Job], str | None] = lambda job: None,
    address: str | None = None,
    cpu_wait: float = CPU_WAIT,
) -> list[JobOutcome]:
    """Run ``jobs`` as Ray tasks (one fresh worker process each: ``max_calls=1``).

    Without ``address`` and without a running Ray instance, a local one with ``workers`` CPUs is
    started and shut down afterwards. On a cluster the tasks run on any node and write nothing
    there: this process writes the logs (see the module docstring), so the log directory only
    has to be on this machine.

    Args:
        jobs: what to play.
        workers: the CPUs of a local instance (a cluster's own CPUs decide there).
        on_event: called with every progress event, in this process.
        episode_time_limit: seconds one episode may take before its task is cancelled.
        stderr_path: where a failed job's stderr goes (``<log>.stderr.txt``).
        address: a running cluster's head (``host:port``, ``auto``); default a local instance.
        cpu_wait: seconds the jobs left wait for a node with CPUs before they fail.
    """
    ray = import_ray()
    started = _connect(ray, address, workers)
    try:
        runner = _RayRun(ray, jobs, workers=workers, on_event=on_event, stderr_path=stderr_path)
        try:
            runner.run(episode_time_limit, cpu_wait)
        finally:
            runner.stop()
    finally:
        if started:
            ray.shutdown()
    return [runner.outcomes[job.key] for job in jobs]
