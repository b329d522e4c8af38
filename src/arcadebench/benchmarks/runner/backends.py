"""Where the runner's jobs execute: local worker processes (here), or Ray actors.

Both backends start long-lived workers (:mod:`~.serve`: each loads the agent once and plays many
jobs, in lanes of environments stepped together for a batched agent), let a
:class:`~.schedule.Scheduler` decide what each plays, feed the same progress events to the
caller, stop a worker whose episode runs past the wall-clock limit, and return one
:class:`~.schedule.JobOutcome` per job. A worker that dies (an emulator crash, the OOM killer)
or hangs fails the jobs it was playing, and a fresh worker takes over the rest.

Ctrl-C (``KeyboardInterrupt``) stops every worker within a few seconds (SIGTERM, then
SIGKILL) and propagates; finished episodes are already in the logs. Local workers write their
logs themselves; Ray actors send their records to the driver, which writes them
(:mod:`~arcadebench.benchmarks.runner.ray_backend`).

How a local worker starts (:func:`start_method`): from a *forkserver* by default, a fresh
interpreter that imports arcadebench once and forks a clean copy of itself per worker, so
nothing of the caller's process (its threads, a GPU context, an agent's state) reaches a worker.
Its start costs what the command's own start costs (the interpreter and every import: 0.4-0.6 s
on a 2-vCPU machine, perf/README.md, bench_main_job). When nothing of the caller can reach the
worker (Linux, an agent the runner loads itself by name: a built-in or a saved model, no other
thread running, stable-retro and the model frameworks not imported) the worker is forked from
the caller itself, which has imported everything already: issue 18, the fixed cost of a first
run. The workers play the same episodes either way; they depend on the seeds only.

Events are tuples ``(kind, job key, ...)``: ``start``, ``episode_start``, ``episode``,
``steps``, ``done``, ``failed``; the Ray backend also sends ``("waiting", "", message)`` when
the jobs wait for a node with CPUs.

Functions: run_local, start_method, hang_message, tail_summary, worker_count.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any, Literal, TypeAlias, cast

from arcadebench.benchmarks.runner.agents import BUILTIN_AGENTS, SAVED_MODEL_PREFIXES
from arcadebench.benchmarks.runner.schedule import JobOutcome, Scheduler
from arcadebench.benchmarks.runner.serve import WorkerOptions, worker_main
from arcadebench.benchmarks.runner.worker import Job
from arcadebench.errors import IncompatibleAgent

__all__ = [
    "Events",
    "JobOutcome",
    "StartMethod",
    "hang_message",
    "hung_reason",
    "run_local",
    "start_method",
    "tail_summary",
    "worker_count",
]

_STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL when stopping workers
_PRELOAD = ["numpy", "gymnasium", "ale_py", "arcadebench", "arcadebench.benchmarks.runner.serve"]
_FRAMEWORKS = ("torch", "tensorflow", "jax", "onnxruntime")  # not fork-safe once initialised
_WARNING_FILTERS = tuple(warnings.filters)  # as arcadebench was imported, for forked workers

Events = Callable[[tuple[Any, ...]], None]

StartMethod: TypeAlias = Literal["fork", "forkserver", "spawn"]
"""How a local worker process starts (see the module docstring)."""


def start_method(agent: Any) -> StartMethod:
    """How the workers of ``agent`` start now: ``"fork"`` when nothing of this process can leak.

    That is: on Linux (macOS's system libraries are not fork-safe), for an agent the runner
    loads itself by name (a built-in or a saved model: no user code, so nothing the user
    imported or started here runs in the worker), with no other thread running (a fork copies
    only the calling thread: a lock another thread holds, e.g. on a stream it is writing to,
    would stay held in the worker), without stable-retro imported (an emulator here would be one
    too many in the worker) and without a model framework imported (its thread pools and GPU
    context do not survive a fork). Otherwise ``"forkserver"`` (``"spawn"`` where there is none).

    Example:
        >>> start_method("random") in ("fork", "forkserver", "spawn")
        True
    """
    by_name = isinstance(agent, str) and (
        agent in BUILTIN_AGENTS or agent.startswith(SAVED_MODEL_PREFIXES)
    )
    if (
        sys.platform == "linux"
        and by_name
        and threading.active_count() == 1
        and "stable_retro" not in sys.modules
        and not any(name in sys.modules for name in _FRAMEWORKS)
    ):
        return "fork"
    if "forkserver" in multiprocessing.get_all_start_methods():
        return "forkserver"
    return "spawn"  # pragma: no cover - Windows


_Context: TypeAlias = (
    multiprocessing.context.ForkContext
    | multiprocessing.context.ForkServerContext
    | multiprocessing.context.SpawnContext
)


def _context(method: StartMethod) -> _Context:
    """The multiprocessing context of ``method`` (the forkserver preloads arcadebench)."""
    if method == "fork":
        return multiprocessing.get_context("fork")
    if method == "spawn":  # pragma: no cover - Windows
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(_PRELOAD)
    return context


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    sys.stderr.write(warnings.formatwarning(message, category, filename, lineno, line))


def _forked_worker_main(
    agent: Any, conn: Any, stderr_path: str | None, options: WorkerOptions
) -> None:
    """:func:`worker_main` in a worker forked from the caller, which starts as a fresh one would.

    The caller's stream replacements (e.g. a progress display's) and warning capture (the
    CLI collects warnings to print them once) do not apply in the worker: its output and
    warnings go to ``stderr_path``, as a forkserver worker's do.
    """
    if sys.__stdout__ is not None and sys.__stderr__ is not None:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    warnings.resetwarnings()  # clears the filters and what was cached under them
    cast("list[Any]", warnings.filters).extend(_WARNING_FILTERS)  # a list at run time
    warnings.showwarning = _show_warning
    worker_main(agent, conn, stderr_path, options)


@contextlib.contextmanager
def _main_module_importable() -> Iterator[None]:
    """Hide a ``__main__.__file__`` that is no file (``python -``) while starting workers.

    multiprocessing re-imports the parent's main script in every worker (so agents defined there
    unpickle); a main without a file is skipped, but ``<stdin>`` would be looked up and fail.
    """
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or path is None or os.path.exists(path):
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


def _tail(path: str | None) -> str:
    """What a dead worker last wrote to ``path`` (see :func:`tail_summary`)."""
    if not path:
        return ""
    try:
        with open(path, errors="replace") as handle:
            return tail_summary(handle.read())
    except OSError:
        return ""


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


def hang_message(key: str, episode: int | None, limit: float) -> str:
    """Why a job (``game/run``) whose episode ran past ``limit`` seconds was stopped."""
    game, _, run = key.rpartition("/")
    return (
        f"episode {episode} of {game} run {run!r} ran past the wall-clock limit of {limit:g} s "
        "(the agent or the emulator hangs); the worker was stopped"
    )


def worker_count(jobs: Sequence[Job], workers: int, lanes: int) -> int:
    """How many workers are worth starting: no more than there are things to play at once.

    Example:
        >>> job = Job(spec="atari5", game="pong", seed=0, log_dir="logs", agent="random",
        ...           algorithm="random", episodes=3, todo=(0, 1, 2))
        >>> worker_count([job], workers=4, lanes=8)
        3
    """
    at_once = sum(1 if job.todo is None else len(job.todo) for job in jobs)
    return max(1, min(workers, at_once))


@dataclass
class _Process:
    """A local worker process and what the parent knows of it."""

    process: Any
    conn: Any
    stderr: str
    ready: bool = False
    hung: tuple[str, int | None] | None = None
    eof: bool = False


class _LocalWorkers:
    """The local worker processes of one run, driven by a :class:`Scheduler`."""

    def __init__(
        self,
        scheduler: Scheduler,
        agent: Any,
        options: WorkerOptions,
        method: StartMethod,
        stderr_dir: str,
        wanted: int,
        limit: float | None,
    ) -> None:
        self.scheduler = scheduler
        self.wanted = wanted  # workers to keep while there is work
        self.limit = limit
        self.agent = agent
        self.options = options
        self.method = method
        self.context = _context(method)
        self.stderr_dir = stderr_dir
        self.processes: dict[int, _Process] = {}
        self._ids = itertools.count()

    def spawn(self) -> None:
        """Start one more worker."""
        worker = next(self._ids)
        receiver, sender = self.context.Pipe(duplex=True)
        stderr = os.path.join(self.stderr_dir, f"worker-{worker}.txt")
        process = self.context.Process(
            target=_forked_worker_main if self.method == "fork" else worker_main,
            args=(self.agent, sender, stderr, self.options),
            name=f"arcadebench worker {worker}",
            daemon=True,
        )
        if self.method == "fork":
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()  # or the worker would write out what is still buffered here
            with warnings.catch_warnings():
                # Python >= 3.12 warns when the process has any other OS thread, such as the
                # idle pool NumPy's OpenBLAS starts at import; the Python threads, which could
                # hold a lock the worker needs, are none (start_method)
                warnings.filterwarnings(
                    "ignore", "This process .* is multi-threaded", DeprecationWarning
                )
                process.start()
        else:
            with _main_module_importable():
                process.start()
        sender.close()
        self.processes[worker] = _Process(process, receiver, stderr)
        self.scheduler.add_worker(worker)

    def send_work(self) -> None:
        """Send every worker what the scheduler gives it now."""
        for worker, messages in self.scheduler.fill().items():
            found = self.processes[worker]
            for message in messages:
                try:
                    found.conn.send(message)
                except OSError:  # it died: noticed with its sentinel
                    break

    def receive(self, worker: int) -> None:
        """Pass what ``worker`` sent to the scheduler."""
        found = self.processes[worker]
        while not found.eof:
            try:
                if not found.conn.poll():
                    return
                event = found.conn.recv()
            except (EOFError, OSError):
                found.eof = True
                return
            if event[0] == "ready":
                found.ready = True
            self.scheduler.receive(worker, event)

    def wait(self, timeout: float) -> None:
        """Until a worker says something or dies, or ``timeout`` seconds."""
        handles = [p.conn for p in self.processes.values() if not p.eof]
        handles += [p.process.sentinel for p in self.processes.values()]
        wait(handles, timeout=timeout)

    def reap(self) -> None:
        """Give up on dead workers (failing what they were playing); replace them if needed."""
        for worker, found in list(self.processes.items()):
            if found.process.is_alive():
                continue
            found.process.join()
            self.receive(worker)
            found.conn.close()
            del self.processes[worker]
            text = _read(found.stderr)
            if not found.ready and self.scheduler.refused is None:
                death = _death(found.process.exitcode)
                self.scheduler.refused = (
                    f"a worker process died while loading the agent ({death}{tail_summary(text)})"
                )
                continue
            if found.hung is not None:
                reason = hung_reason(*found.hung, self.limit or 0.0)
            else:
                death = _death(found.process.exitcode) + tail_summary(text)
                reason = functools.partial(_same_reason, death)
            self.scheduler.lost(worker, reason, text[-_TRACE_BYTES:])
            if self.scheduler.work_left and len(self.processes) < self.wanted:
                self.spawn()

    def stop_hung(self) -> None:
        """Kill each worker with an episode in flight for longer than the limit."""
        if self.limit is None:
            return
        for worker, key, episode in self.scheduler.overdue(time.monotonic(), self.limit):
            found = self.processes.get(worker)
            if found is not None and found.hung is None:
                found.hung = (key, episode)
                found.process.kill()

    def stop(self, grace: float = _STOP_GRACE) -> None:
        """Ask every worker to stop, then SIGTERM and SIGKILL those that do not."""
        for found in self.processes.values():
            with contextlib.suppress(OSError):
                found.conn.send(("stop",))
        deadline = time.monotonic() + grace
        for found in self.processes.values():
            found.process.join(max(0.0, deadline - time.monotonic()))
            if found.process.is_alive():
                found.process.terminate()
        for found in self.processes.values():
            found.process.join(max(0.0, deadline + grace - time.monotonic()))
            if found.process.is_alive():
                found.process.kill()
                found.process.join(1.0)
            found.conn.close()
        self.processes.clear()


def hung_reason(key: str, episode: int | None, limit: float) -> Callable[[str, int | None], str]:
    """Why each job of a worker stopped for a hang failed: the hung one, and the others."""
    message = hang_message(key, episode, limit)

    def reason(job: str, _: int | None) -> str:
        return message if job == key else f"its worker was stopped: {message}"

    return reason


def _same_reason(reason: str, job: str, episode: int | None) -> str:
    return reason


_TRACE_BYTES = 64 * 1024  # the end of a dead worker's output kept with each job it failed


def _read(path: str) -> str:
    try:
        with open(path, errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def run_local(
    jobs: Sequence[Job],
    *,
    workers: int,
    on_event: Events,
    agent: Any = None,
    lanes: int = 8,
    options: WorkerOptions | None = None,
    episode_time_limit: float | None = None,
    tick: Callable[[], None] | None = None,
    method: StartMethod | None = None,
) -> list[JobOutcome]:
    """Play ``jobs`` in at most ``workers`` long-lived worker processes (module docstring).

    Args:
        jobs: what to play (``job.todo`` set: over lanes; else whole, one per worker at a time).
        workers: worker processes at most (fewer when there is less to play at once).
        on_event: called with every progress event.
        agent: the agent every job plays (default: the first job's).
        lanes: environments per worker for a batched agent.
        options: device and threads of the workers.
        episode_time_limit: seconds an episode may take before its worker is stopped.
        tick: called after every wake-up (at least four times a second), e.g. to redraw a
            progress display.
        method: how the workers start (default: :func:`start_method`).

    Raises:
        IncompatibleAgent: the workers refused the agent (its spaces do not fit an env).
    """
    agent = jobs[0].agent if agent is None and jobs else agent
    options = options or WorkerOptions()
    scheduler = Scheduler(jobs, lanes=lanes, on_event=on_event)
    with tempfile.TemporaryDirectory(prefix="arcadebench-workers-") as stderr_dir:
        pool = _LocalWorkers(
            scheduler,
            agent,
            options,
            method or start_method(agent),
            stderr_dir,
            wanted=worker_count(jobs, workers, lanes),
            limit=episode_time_limit,
        )
        try:
            for _ in range(pool.wanted):
                pool.spawn()
            while not scheduler.finished:
                pool.send_work()
                pool.wait(0.25)
                if tick is not None:
                    tick()
                for worker in list(pool.processes):
                    pool.receive(worker)
                if scheduler.refused is not None:
                    break
                pool.stop_hung()
                pool.reap()
                if not pool.processes and not scheduler.finished and scheduler.refused is None:
                    pool.spawn()
        finally:
            pool.stop()
    if scheduler.refused is not None:
        raise IncompatibleAgent(scheduler.refused)
    return scheduler.outcomes()
