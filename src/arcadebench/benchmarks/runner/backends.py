"""Local worker processes: the runner's default backend.

Each worker is a process that lives for the whole run (:mod:`~.serve`: it loads the agent once
and plays many jobs, in lanes of environments stepped together for a batched agent), driven
through a :class:`~.pool.WorkerPool`, which holds the rules every backend follows (a worker
that dies or hangs fails the jobs it was playing, and a fresh worker takes over the rest).
Ctrl-C (``KeyboardInterrupt``) stops every worker within a few seconds (SIGTERM, then
SIGKILL) and propagates; finished episodes are already in the logs, which local workers write
themselves.

How a local worker starts (:func:`start_method`): from a *forkserver* by default, a fresh
interpreter that imports arcadebench once and forks a clean copy of itself per worker, so
nothing of the caller's process (its threads, a GPU context, an agent's state) reaches a worker.
Its start costs what the command's own start costs (the interpreter and every import: 0.4-0.6 s
on a 2-vCPU machine, perf/README.md, bench_main_job). When nothing of the caller can reach the
worker (Linux, an agent the runner loads itself by name: a built-in or a saved policy, no other
thread running, stable-retro and the policy's framework not imported) the worker is forked from
the caller itself, which has imported everything already: the fixed cost of a first run. The
workers play the same episodes either way; they depend on the seeds only.

Classes: LocalBackend.
Functions: start_method.
"""

from __future__ import annotations

import contextlib
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

from arcadebench.benchmarks.replay.processes import clean_start_method
from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.messages import Order, Stop
from arcadebench.benchmarks.runner.pool import (
    Loss,
    PoolSettings,
    WorkerPool,
    tail_summary,
    worker_count,
)
from arcadebench.benchmarks.runner.reference import AgentRef
from arcadebench.benchmarks.runner.schedule import Events, JobOutcome, Scheduler
from arcadebench.benchmarks.runner.serve import WorkerOptions, worker_main

__all__ = ["LocalBackend", "StartMethod", "start_method"]

_STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL when stopping workers
_PRELOAD = ["numpy", "gymnasium", "ale_py", "arcadebench", "arcadebench.benchmarks.runner.serve"]
_FRAMEWORKS = ("torch", "tensorflow", "jax", "onnxruntime")  # not fork-safe once initialised
_WARNING_FILTERS = tuple(warnings.filters)  # as arcadebench was imported, for forked workers
_TRACE_BYTES = 64 * 1024  # the end of a dead worker's output kept with each job it failed

StartMethod: TypeAlias = Literal["fork", "forkserver", "spawn"]
"""How a local worker process starts (see the module docstring)."""


def start_method(agent: AgentRef) -> StartMethod:
    """How the workers of ``agent`` start now: ``"fork"`` when nothing of this process can leak.

    That is: on Linux (macOS's system libraries are not fork-safe), for an agent the runner
    loads itself by name (a built-in or a saved policy: no user code, so nothing the user
    imported or started here runs in the worker), with no other thread running (a fork copies
    only the calling thread: a lock another thread holds, e.g. on a stream it is writing to,
    would stay held in the worker), without stable-retro imported (an emulator here would be one
    too many in the worker) and without a model framework imported (its thread pools and GPU
    context do not survive a fork). Otherwise ``"forkserver"`` (``"spawn"`` where there is none).

    Example:
        >>> from arcadebench.benchmarks.runner.reference import resolve_agent
        >>> from arcadebench.specs import load_spec
        >>> start_method(resolve_agent("random", load_spec("saber"))) in ("fork", "forkserver")
        True
    """
    frameworks = {*_FRAMEWORKS, *([agent.framework] if agent.framework else [])}
    if (
        sys.platform == "linux"
        and agent.by_name
        and threading.active_count() == 1
        and "stable_retro" not in sys.modules
        and not any(name in sys.modules for name in frameworks)
    ):
        return "fork"
    return clean_start_method()


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
    agent: AgentRef, conn: Any, stderr_path: str | None, options: WorkerOptions
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


@dataclass
class _Process:
    """A local worker process and its end of the pipe."""

    process: Any
    conn: Any
    stderr: str
    eof: bool = False


class _LocalPool(WorkerPool):
    """The local worker processes of one run (:class:`~.pool.WorkerPool`'s transport)."""

    def __init__(
        self,
        scheduler: Scheduler,
        agent: AgentRef,
        settings: PoolSettings,
        wanted: int,
        method: StartMethod,
        stderr_dir: str,
    ) -> None:
        super().__init__(scheduler, agent, settings, wanted)
        self.method = method
        self.context = _context(method)
        self.stderr_dir = stderr_dir
        self.processes: dict[int, _Process] = {}

    def start_worker(self, worker: int) -> None:
        receiver, sender = self.context.Pipe(duplex=True)
        stderr = os.path.join(self.stderr_dir, f"worker-{worker}.txt")
        process = self.context.Process(
            target=_forked_worker_main if self.method == "fork" else worker_main,
            args=(self.agent, sender, stderr, self.settings.options),
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

    def send(self, worker: int, orders: list[Order]) -> None:
        found = self.processes[worker]
        for order in orders:
            try:
                found.conn.send(order)
            except OSError:  # it died: noticed with its sentinel
                break

    def _receive(self, worker: int) -> None:
        found = self.processes[worker]
        while not found.eof:
            try:
                if not found.conn.poll():
                    return
                report = found.conn.recv()
            except (EOFError, OSError):
                found.eof = True
                return
            self.deliver(worker, report)

    def collect(self) -> None:
        for worker in list(self.processes):
            self._receive(worker)

    def wait(self, timeout: float) -> None:
        handles = [p.conn for p in self.processes.values() if not p.eof]
        handles += [p.process.sentinel for p in self.processes.values()]
        wait(handles, timeout=timeout)

    def ended(self) -> list[int]:
        return [w for w, found in self.processes.items() if not found.process.is_alive()]

    def loss(self, worker: int) -> Loss:
        found = self.processes[worker]
        found.process.join()
        self._receive(worker)  # what it said before it ended
        del self.processes[worker]
        found.conn.close()
        text = ""
        with contextlib.suppress(OSError), open(found.stderr, errors="replace") as handle:
            text = handle.read()
        return Loss(_death(found.process.exitcode) + tail_summary(text), trace=text[-_TRACE_BYTES:])

    def kill(self, worker: int) -> None:
        found = self.processes.get(worker)
        if found is not None:
            found.process.kill()

    def stop(self, grace: float = _STOP_GRACE) -> None:
        """Ask every worker to stop, then SIGTERM and SIGKILL those that do not."""
        for found in self.processes.values():
            with contextlib.suppress(OSError):
                found.conn.send(Stop())
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


class LocalBackend:
    """Local worker processes (:class:`~.pool.Backend`).

    Args:
        method: how the workers start (default: :func:`start_method` of the agent).
    """

    def __init__(self, method: StartMethod | None = None) -> None:
        self.method = method

    def run(
        self,
        jobs: Sequence[Job],
        agent: AgentRef,
        settings: PoolSettings,
        on_event: Events,
        tick: Callable[[], None] | None = None,
    ) -> list[JobOutcome]:
        """Play ``jobs`` in long-lived worker processes (module docstring).

        Raises:
            IncompatibleAgent: the workers refused the agent (its spaces do not fit an env).
        """
        scheduler = Scheduler(jobs, lanes=settings.lanes, on_event=on_event)
        with tempfile.TemporaryDirectory(prefix="arcadebench-workers-") as stderr_dir:
            pool = _LocalPool(
                scheduler,
                agent,
                settings,
                worker_count(jobs, settings.workers, settings.lanes),
                self.method or start_method(agent),
                stderr_dir,
            )
            return pool.run(tick)
