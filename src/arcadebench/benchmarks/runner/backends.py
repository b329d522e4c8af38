"""Where the runner's jobs execute: local worker processes (here), or Ray tasks.

Both backends run every job in a process of its own (stable-retro allows one emulator per
process, and a crash then takes down one job only), feed the same progress events to the
caller, stop a job whose episode runs past the wall-clock limit, and return one
:class:`JobOutcome` per job.

Ctrl-C (``KeyboardInterrupt``) stops every worker within a few seconds (SIGTERM, then
SIGKILL) and propagates; finished episodes are already in the logs. Local workers write their
logs themselves; Ray tasks send their records to the driver, which writes them
(:mod:`~arcadebench.benchmarks.runner.ray_backend`).

How a local worker starts (:func:`start_method`): from a *forkserver* by default, a fresh
interpreter that imports arcadebench once and forks a clean copy of itself per job, so nothing
of the caller's process (its threads, a GPU context, an agent's state) reaches a worker. Its
start costs what the command's own start costs (the interpreter and every import: 0.4-0.6 s on
a 2-vCPU machine, perf/README.md, bench_main_job), before the first job can start. When nothing
of the caller can reach the worker (Linux, a built-in agent so no user code runs in the worker,
no other thread running, stable-retro not imported) the worker is forked from the caller itself,
which has imported everything already: issue 18, the fixed cost of a first run. The jobs play
the same episodes either way; they depend on the seeds only.

Events are tuples ``(kind, job key, ...)``: ``start``, ``episode_start``, ``episode``,
``steps``, ``done``, ``error`` from the workers (see :mod:`~arcadebench.benchmarks.runner.worker`),
and ``failed`` from the backend; the Ray backend also sends ``("waiting", "", message)`` when
the jobs wait for a node with CPUs.

Classes: JobOutcome, EpisodeClock.
Functions: run_local, start_method, hang_message, tail_summary.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any, Literal, TypeAlias, cast

from arcadebench.benchmarks.runner.agents import BUILTIN_AGENTS
from arcadebench.benchmarks.runner.worker import Job, worker_main

__all__ = [
    "EpisodeClock",
    "Events",
    "JobOutcome",
    "StartMethod",
    "hang_message",
    "run_local",
    "start_method",
    "tail_summary",
]

_STOP_GRACE = 2.0  # seconds between SIGTERM and SIGKILL when stopping workers
_PRELOAD = ["numpy", "gymnasium", "ale_py", "arcadebench", "arcadebench.benchmarks.runner.worker"]
_WARNING_FILTERS = tuple(warnings.filters)  # as arcadebench was imported, for forked workers

Events = Callable[[tuple[Any, ...]], None]

StartMethod: TypeAlias = Literal["fork", "forkserver", "spawn"]
"""How a local worker process starts (see the module docstring)."""


@dataclass
class JobOutcome:
    """How a job ended: ``status`` is ``"done"`` or ``"failed"`` (``message`` says why)."""

    job: Job
    status: str
    message: str = ""
    summary: dict[str, Any] = field(default_factory=dict)


@dataclass
class EpisodeClock:
    """The episode a running job is playing and since when, for the wall-clock limit."""

    episode: int | None = None
    since: float | None = None

    def note(self, event: tuple[Any, ...]) -> None:
        """Follow a job's ``episode_start`` and ``episode`` events."""
        if event[0] == "episode_start":
            self.episode, self.since = event[2], time.monotonic()
        elif event[0] == "episode":
            self.since = None

    def overdue(self, now: float, limit: float) -> bool:
        """Whether the episode in flight has run longer than ``limit`` seconds."""
        return self.since is not None and now - self.since > limit


def start_method(job: Job) -> StartMethod:
    """How ``job``'s worker starts now: ``"fork"`` when nothing of this process can leak into it.

    That is: on Linux (macOS's system libraries are not fork-safe), for a built-in agent (no
    user code, so nothing the user imported or started here runs in the worker), with no other
    thread running (a fork copies only the calling thread: a lock another thread holds, e.g. on
    a stream it is writing to, would stay held in the worker) and without stable-retro imported
    (an emulator here would be one too many in the worker). Otherwise ``"forkserver"``
    (``"spawn"`` where there is none).

    Example:
        >>> job = Job(spec="atari5", game="pong", seed=0, log_dir="logs", agent="random",
        ...           algorithm="random", episodes=1)
        >>> start_method(job) in ("fork", "forkserver", "spawn")
        True
    """
    if (
        sys.platform == "linux"
        and isinstance(job.agent, str)
        and job.agent in BUILTIN_AGENTS
        and threading.active_count() == 1
        and "stable_retro" not in sys.modules
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


def _forked_worker_main(job: Job, conn: Any, stderr_path: str | None = None) -> None:
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
    worker_main(job, conn, stderr_path)


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


def hang_message(job: Job, episode: int | None, limit: float) -> str:
    """Why a job whose episode ran past ``limit`` seconds was stopped."""
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
    clock: EpisodeClock = field(default_factory=EpisodeClock)
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
        worker.clock.note(event)
        if kind == "done":
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


def _start(job: Job, path: str | None, method: StartMethod | None) -> _Running:
    """Start ``job``'s worker process."""
    method = method or start_method(job)
    context = _context(method)
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_forked_worker_main if method == "fork" else worker_main,
        args=(job, sender, path),
        name=f"arcadebench {job.key}",
        daemon=True,
    )
    if method == "fork":
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()  # or the worker would write out what is still buffered here
        with warnings.catch_warnings():
            # Python >= 3.12 warns when the process has any other OS thread, such as the idle
            # pool NumPy's OpenBLAS starts at import; the Python threads, which could hold a
            # lock the worker needs, are none (start_method)
            warnings.filterwarnings(
                "ignore", "This process .* is multi-threaded", DeprecationWarning
            )
            process.start()
    else:
        with _main_module_importable():
            process.start()
    sender.close()
    return _Running(job, process, receiver, path)


def run_local(
    jobs: Sequence[Job],
    *,
    workers: int,
    on_event: Events,
    episode_time_limit: float | None = None,
    stderr_path: Callable[[Job], str | None] = lambda job: None,
    tick: Callable[[], None] | None = None,
    method: StartMethod | None = None,
) -> list[JobOutcome]:
    """Run ``jobs`` in at most ``workers`` worker processes at a time, one process per job.

    ``tick`` is called after every wake-up (at least four times a second), e.g. to redraw a
    progress display; ``method`` forces how the workers start (default: :func:`start_method`).
    """
    pending = list(jobs)
    running: list[_Running] = []
    outcomes: dict[str, JobOutcome] = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                job = pending.pop(0)
                running.append(_start(job, stderr_path(job), method))
            handles = [w.conn for w in running if not w.eof] + [w.process.sentinel for w in running]
            wait(handles, timeout=0.25)
            if tick is not None:
                tick()
            now = time.monotonic()
            for worker in list(running):
                _receive(worker, on_event)
                if worker.process.is_alive():
                    if (
                        episode_time_limit is not None
                        and worker.hung is None
                        and worker.clock.overdue(now, episode_time_limit)
                    ):
                        worker.hung = hang_message(
                            worker.job, worker.clock.episode, episode_time_limit
                        )
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
