"""Where the runner's jobs execute: local worker processes, or Ray tasks.

Both backends run every job in a process of its own (stable-retro allows one emulator per
process, and a crash then takes down one job only), feed the same progress events to the
caller, stop a job whose episode runs past the wall-clock limit, and return one
:class:`JobOutcome` per job. Ctrl-C (``KeyboardInterrupt``) stops every worker within a few
seconds (SIGTERM, then SIGKILL) and propagates; finished episodes are already in the logs.

Events are tuples ``(kind, job key, ...)``: ``start``, ``episode_start``, ``episode``,
``steps``, ``done``, ``error`` from the workers (see :mod:`~arcadebench.benchmarks.runner.worker`),
and ``failed`` from the backend.

Classes: JobOutcome.
Functions: run_local, run_ray.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

from arcadebench.benchmarks.runner.worker import Job, run_job, worker_main
from arcadebench.errors import ArcadebenchError

__all__ = ["RAY_INSTALL", "JobOutcome", "run_local", "run_ray"]

RAY_INSTALL = "pip install 'arcadebench[ray]'"
_STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL when stopping workers
_PRELOAD = ["numpy", "gymnasium", "ale_py", "arcadebench", "arcadebench.benchmarks.runner.worker"]

Events = Callable[[tuple], None]


@dataclass
class JobOutcome:
    """How a job ended: ``status`` is ``"done"`` or ``"failed"`` (``message`` says why)."""

    job: Job
    status: str
    message: str = ""
    summary: dict[str, Any] = field(default_factory=dict)


def _context() -> multiprocessing.context.BaseContext:
    """Forkserver (workers fork from a preloaded server: fast, no state shared) or spawn."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(_PRELOAD)
        return context
    return multiprocessing.get_context("spawn")  # pragma: no cover - Windows


@contextlib.contextmanager
def _main_module_importable() -> Iterator[None]:
    """Hide a ``__main__.__file__`` that is no file (``python -``) while starting workers.

    multiprocessing re-imports the parent's main script in every worker (so agents defined there
    unpickle); a main without a file is skipped, but ``<stdin>`` would be looked up and fail.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or os.path.exists(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process died ({name})"
    return f"the worker process exited with status {exitcode} without reporting"


def _tail(path: str | None, lines: int = 3) -> str:
    """What a dead worker last wrote: faulthandler's fatal error and frame, or its last lines."""
    if not path:
        return ""
    try:
        with open(path, errors="replace") as handle:
            text = [line.strip() for line in handle.read().splitlines() if line.strip()]
    except OSError:
        return ""
    fatal = [i for i, line in enumerate(text) if line.startswith("Fatal Python error:")]
    if fatal:
        frames = [line for line in text[fatal[-1] :] if line.startswith("File ")]
        found = [text[fatal[-1]], *(["at " + frames[0]] if frames else [])]
    else:
        found = [line for line in text if not line.startswith("Extension modules:")][-lines:]
    return (": " + " | ".join(found))[:400] if found else ""


def _hang_message(job: Job, episode: int | None, limit: float) -> str:
    return (
        f"episode {episode} of {job.game} run {job.run!r} ran past the wall-clock limit of "
        f"{limit:g} s "
        "(the agent or the emulator hangs); the worker was stopped"
    )


@dataclass
class _Running:
    job: Job
    process: Any
    conn: Any
    stderr: str | None
    episode: int | None = None
    since: float | None = None
    summary: dict[str, Any] | None = None
    error: str | None = None
    hung: str | None = None
    eof: bool = False


def _receive(worker: _Running, on_event: Events) -> None:
    """Drain ``worker``'s pipe, tracking the episode in flight for the wall-clock limit."""
    while not worker.eof:
        try:
            if not worker.conn.poll():
                return
            event = worker.conn.recv()
        except (EOFError, OSError):
            worker.eof = True
            return
        kind = event[0]
        if kind == "episode_start":
            worker.episode, worker.since = event[2], time.monotonic()
        elif kind == "episode":
            worker.since = None
        elif kind == "done":
            worker.summary = event[2]
        elif kind == "error":
            worker.error = event[2]
        on_event(event)


def _stop(workers: Sequence[_Running]) -> None:
    """SIGTERM every worker, SIGKILL those still alive after the grace period."""
    for worker in workers:
        if worker.process.is_alive():
            worker.process.terminate()
    deadline = time.monotonic() + _STOP_GRACE
    for worker in workers:
        worker.process.join(max(0.0, deadline - time.monotonic()))
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(1.0)
        worker.conn.close()


def run_local(
    jobs: Sequence[Job],
    *,
    workers: int,
    on_event: Events,
    episode_time_limit: float | None = None,
    stderr_path: Callable[[Job], str | None] = lambda job: None,
) -> list[JobOutcome]:
    """Run ``jobs`` in at most ``workers`` worker processes at a time, one process per job."""
    context = _context()
    pending = list(jobs)
    running: list[_Running] = []
    outcomes: dict[str, JobOutcome] = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                job = pending.pop(0)
                receiver, sender = context.Pipe(duplex=False)
                path = stderr_path(job)
                process = context.Process(
                    target=worker_main,
                    args=(job, sender, path),
                    name=f"arcadebench {job.key}",
                    daemon=True,
                )
                with _main_module_importable():
                    process.start()
                sender.close()
                running.append(_Running(job, process, receiver, path))
            handles = [w.conn for w in running if not w.eof] + [w.process.sentinel for w in running]
            wait(handles, timeout=0.25)
            now = time.monotonic()
            for worker in list(running):
                _receive(worker, on_event)
                if worker.process.is_alive():
                    if (
                        episode_time_limit is not None
                        and worker.since is not None
                        and now - worker.since > episode_time_limit
                        and worker.hung is None
                    ):
                        worker.hung = _hang_message(worker.job, worker.episode, episode_time_limit)
                        worker.process.kill()
                    continue
                worker.process.join()
                _receive(worker, on_event)
                worker.conn.close()
                running.remove(worker)
                outcome = _outcome(worker)
                outcomes[worker.job.key] = outcome
                if outcome.status == "failed":
                    on_event(("failed", worker.job.key, outcome.message))
    except BaseException:
        _stop(running)
        raise
    return [outcomes[job.key] for job in jobs]


def _outcome(worker: _Running) -> JobOutcome:
    if worker.hung is not None:
        return JobOutcome(worker.job, "failed", worker.hung)
    if worker.summary is not None:
        return JobOutcome(worker.job, "done", summary=worker.summary)
    if worker.error is not None:
        return JobOutcome(worker.job, "failed", worker.error)
    return JobOutcome(worker.job, "failed", _death(worker.process.exitcode) + _tail(worker.stderr))


# -- Ray -------------------------------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import ray
        from ray.util.queue import Queue
    except ImportError:
        raise ArcadebenchError(
            f"`--backend ray` needs Ray, which is not installed: {RAY_INSTALL}"
        ) from None
    return ray, Queue


def _check_reachable(address: str) -> None:
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


def _ray_task(job: Job, queue: Any, stderr_path: str | None) -> dict[str, Any]:
    """A Ray task: like :func:`worker_main`, but reporting through a Ray queue and returning."""
    import faulthandler
    import sys
    import traceback

    if stderr_path is not None:
        os.makedirs(os.path.dirname(stderr_path) or ".", exist_ok=True)
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        os.close(fd)
        faulthandler.enable()
    try:
        summary = run_job(job, queue.put)
    except Exception as error:  # noqa: BLE001 - reported as the job's failure
        traceback.print_exc(file=sys.stderr)
        return {
            "error": str(error)
            if isinstance(error, ArcadebenchError)
            else f"{type(error).__name__}: {error}"
        }
    return {"summary": summary}


def run_ray(
    jobs: Sequence[Job],
    *,
    workers: int,
    on_event: Events,
    episode_time_limit: float | None = None,
    stderr_path: Callable[[Job], str | None] = lambda job: None,
    address: str | None = None,
) -> list[JobOutcome]:
    """Run ``jobs`` as Ray tasks (one fresh worker process each: ``max_calls=1``).

    Without ``address`` and without a running Ray instance, a local one with ``workers`` CPUs is
    started and shut down afterwards. On a cluster the log directory must be on a file system
    every node shares (the tasks write the logs there, as local workers do).
    """
    ray, Queue = _import_ray()
    started = False
    if not ray.is_initialized():
        options: dict[str, Any] = {
            "include_dashboard": False,
            "log_to_driver": False,
            "configure_logging": False,
        }
        if address is None:
            options["num_cpus"] = workers
        else:
            _check_reachable(address)
        try:
            ray.init(
                address=address or "local", **options
            )  # "local": a new instance, never a stray one
        except Exception as error:  # noqa: BLE001 - Ray raises many types here
            where = (
                f"connect to the Ray cluster at {address}"
                if address
                else "start a local Ray instance"
            )
            first = (str(error).strip().splitlines() or [""])[0][:200]
            raise ArcadebenchError(
                f"cannot {where} ({type(error).__name__}: {first}); check the address and, if the "
                "cluster uses token authentication, RAY_AUTH_TOKEN"
            ) from None
        started = True
    queue = Queue()
    task = ray.remote(num_cpus=1, max_retries=0, max_calls=1)(_ray_task)
    refs: dict[Any, _Running] = {}
    by_key: dict[str, _Running] = {}
    outcomes: dict[str, JobOutcome] = {}
    try:
        for job in jobs:
            path = stderr_path(job)
            worker = _Running(job, None, None, path)
            refs[task.remote(job, queue, path)] = worker
            by_key[job.key] = worker
        while refs:
            ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=0.25)
            _drain_queue(queue, by_key, on_event)
            now = time.monotonic()
            for ref in ready:
                worker = refs.pop(ref)
                try:
                    result = ray.get(ref)
                except Exception as error:  # noqa: BLE001 - a dead worker or a cancelled task
                    result = {
                        "died": f"the Ray task failed ({type(error).__name__})"
                        + _tail(worker.stderr)
                    }
                _drain_queue(queue, by_key, on_event)
                if worker.hung is not None:
                    outcome = JobOutcome(worker.job, "failed", worker.hung)
                elif "summary" in result:
                    outcome = JobOutcome(worker.job, "done", summary=result["summary"])
                    on_event(("done", worker.job.key, result["summary"]))
                else:
                    outcome = JobOutcome(
                        worker.job, "failed", result.get("error") or result["died"]
                    )
                outcomes[worker.job.key] = outcome
                if outcome.status == "failed":
                    on_event(("failed", worker.job.key, outcome.message))
            if episode_time_limit is not None:
                for ref, worker in refs.items():
                    if (
                        worker.since is not None
                        and now - worker.since > episode_time_limit
                        and worker.hung is None
                    ):
                        worker.hung = _hang_message(worker.job, worker.episode, episode_time_limit)
                        ray.cancel(ref, force=True)
    except BaseException:
        for ref in refs:
            ray.cancel(ref, force=True)
        raise
    finally:
        try:
            ray.kill(queue.actor)
        except Exception:  # noqa: BLE001 - best effort
            pass
        if started:
            ray.shutdown()
    return [outcomes[job.key] for job in jobs]


def _drain_queue(queue: Any, by_key: dict[str, _Running], on_event: Events) -> None:
    while True:
        try:
            events = queue.get_nowait_batch(queue.qsize())
        except Exception:  # noqa: BLE001 - Empty, or the queue is gone
            return
        if not events:
            return
        for event in events:
            worker = by_key.get(event[1])
            if worker is not None:
                if event[0] == "episode_start":
                    worker.episode, worker.since = event[2], time.monotonic()
                elif event[0] == "episode":
                    worker.since = None
            if event[0] not in ("done", "error"):
                on_event(event)
