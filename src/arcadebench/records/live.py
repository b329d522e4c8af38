"""A run written by many environments at once: the shared counters, the slots, the append lock.

A run (log directory, spec, game, run id) is one training run: one learner and any number of
environments, in any number of processes of one machine (a vector env, SB3's
``SubprocVecEnv``) or of a Ray cluster (relayed to one process, below). Each environment is a
*stream* of the run with a slot of its own; the run's frames and steps are the sum over its
streams, and so are its budget and its checkpoints (SABER Section 3.2 counts *training frames*
of the learner, not of one env).

Next to the log ``<run>.jsonl`` lives ``<run>.counters``, a small binary file every process maps
into memory: a header (whether the run is set up, how many slots were used, frames known to be
played but lost with a killed process) and one slot per stream with its live totals (steps and
frames, the episode in flight included), the index of its next episode and its complete
episodes. POSIX record locks on that file coordinate the processes and vanish with a process,
so a ``kill -9`` never leaves a lock behind:

- every live stream's process holds a *shared* lock on byte 0; the first process to open a run
  with no live stream gets it *exclusively* instead, rebuilds the counters from the log (the
  log is the truth; a crashed run's counters are not) and then turns it into a shared lock;
- a stream holds an exclusive lock on its slot's byte for as long as it lives: a new stream takes
  the first free slot, and continues that slot's episode numbering and totals (a resumed run
  continues where its streams stopped);
- appending an episode takes an exclusive lock on byte 1 around reading the run's totals and
  writing the line, so the log's order is the order episodes finished and ``total_frames``
  never goes back along it.

POSIX locks belong to a process, not to a file descriptor, so the streams of one process share
one :class:`LiveRun` (one descriptor, one mapping) and take their slots from it. A run without a
log is a :class:`LiveRun` kept in memory.

A stream can also be played in a process that cannot reach the log at all (a Ray task or actor
on another machine): the process that holds the log (:class:`~arcadebench.records.relay.RunHolder`:
the runner's driver, or a training run's owner) claims the stream's slot and sends a
:class:`StreamStart`; the playing process keeps a :class:`RelayedRun`, the run's counters in
memory from that start, whose lines go to the holder instead of a file (a :class:`Relay`). A
relayed stream of a training run also *reports* its live totals to the holder every few steps
and learns the run's (a :class:`Grant`), so the budget of a run whose streams play on many
machines is counted in one place (:mod:`~arcadebench.records.relay` gives the bound).

The counters file is shared through ``mmap`` and POSIX locks, which only hold between processes
of one machine: on a network file system (:mod:`~arcadebench.records.filesystems`) a run's
files are written by one process, and a second one is refused.

Classes: LiveRun, RelayedRun, StreamStart, Grant, Relay.
Functions: counters_path, read_totals.
"""

from __future__ import annotations

import itertools
import mmap
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from arcadebench.errors import ArcadebenchError, LogInUse
from arcadebench.records.filesystems import network_filesystem
from arcadebench.records.replay_format import replay_path
from arcadebench.records.writer import cut_partial_line

_REPLAY_SYNC_SECONDS = 1.0
"""A replay file is ``fsync``ed at an append a second or more after the last (and when closed)."""

try:  # POSIX record locks; without them (Windows) a run is one process
    import fcntl

    _EXCLUSIVE, _SHARED, _UNLOCK = fcntl.LOCK_EX, fcntl.LOCK_SH, fcntl.LOCK_UN
except ImportError:  # pragma: no cover - not on Linux/macOS
    fcntl = None  # type: ignore[assignment]  # the module is absent off POSIX
    _EXCLUSIVE = _SHARED = _UNLOCK = 0

__all__ = [
    "MAX_STREAMS",
    "Grant",
    "LiveRun",
    "Relay",
    "RelayedRun",
    "StreamStart",
    "StreamState",
    "counters_path",
    "read_totals",
]

MAX_STREAMS = 1024
"""The slots of a run's counters file, so the most streams (environments) a run has live at once."""
_MAGIC = b"ABRUN\x00\x00\x01"
# header words: magic, ready, high (slots used), lost steps, lost frames; padded to 64 bytes
_HEADER_SIZE = 64
_FIELDS = 4  # per slot: live steps, live frames, next episode, complete episodes
_STEPS, _FRAMES, _EPISODE, _COMPLETE = range(_FIELDS)
_SIZE = _HEADER_SIZE + MAX_STREAMS * _FIELDS * 8
_RUN_LOCK, _APPEND_LOCK, _SLOT_LOCKS = 0, 1, 16

StreamState = tuple[int, int, int, int]
"""A stream's ``(steps, frames, next episode, complete episodes)``."""

_RELAYED_RUNS = itertools.count()


class StreamStart(NamedTuple):
    """Where a stream played in another process starts: the run as its log holds it.

    Attributes:
        slot: the stream's index, claimed by the process that holds the log.
        streams: every stream's ``(steps, frames, next episode, complete episodes)``.
        lost: ``(steps, frames)`` played by streams whose process was killed mid-episode.
        header: the log has no header yet, so the stream's first line is its header.
    """

    slot: int
    streams: dict[int, StreamState]
    lost: tuple[int, int]
    header: bool


class Grant(NamedTuple):
    """The holder's answer to a relayed stream: the run's totals, and when to report again.

    Attributes:
        steps: the run's steps (every stream's, as reported, and the lost ones).
        frames: the run's frames.
        next_steps: the stream reports again once it has played this many more steps.
        next_frames: ... or this many more frames, whichever comes first.
    """

    steps: int
    frames: int
    next_steps: int
    next_frames: int


class Relay(NamedTuple):
    """A stream's way to a log another process writes: where it starts, and how lines go there.

    ``send(line)`` hands one complete line (a header or an episode record, newline included) to
    the log's holder, in the order the stream produces them; when it returns a :class:`Grant`
    (the holder answered: a training run's relay waits for it), the record's run totals are the
    holder's. ``report(steps, frames)``, when given, tells the holder the stream's live totals
    and returns its :class:`Grant`: the stream calls it as often as the grants say, which is what
    lets a budget count streams on many machines. ``leave()``, when given, tells the holder the
    stream closed.
    """

    start: StreamStart
    send: Callable[[bytes], Grant | None]
    report: Callable[[int, int], Grant] | None = None
    leave: Callable[[], None] | None = None


def counters_path(log: Path) -> Path:
    """The counters file of the run logged at ``log`` (``<run>.counters`` beside ``<run>.jsonl``).

    Example:
        >>> counters_path(Path("logs/saber/pong/seed0.jsonl")).as_posix()
        'logs/saber/pong/seed0.counters'
    """
    return log.with_suffix(".counters")


def read_totals(log: Path) -> tuple[int, int]:
    """A run's ``(steps, frames)`` so far, read without joining it (for a training callback).

    In a process that writes the run, its own mapping is read: opening and closing the counters
    file there would drop the process's locks on it (POSIX locks belong to the process).
    """
    attached = LiveRun._attached.get((os.getpid(), str(log.resolve())))
    if attached is not None:
        return attached.totals()
    with open(counters_path(log), "rb") as handle:
        data = bytearray(handle.read(_SIZE).ljust(_SIZE, b"\0"))
    run = LiveRun(None, "reader")
    run._words = memoryview(data).cast("q")
    return run.totals()


def _lock(fd: int, kind: int, start: int, *, wait: bool) -> bool:
    """Take a POSIX record lock on one byte; ``False`` if ``wait`` is off and it is held."""
    if fcntl is None:  # pragma: no cover - not on Linux/macOS
        return True
    try:
        fcntl.lockf(fd, kind | (0 if wait else fcntl.LOCK_NB), 1, start)
    except (BlockingIOError, PermissionError):
        return False
    return True


class LiveRun:
    """The live state of one run in this process: its counters, its slots and its log file.

    Use :meth:`attach` (one object per run and process), then :meth:`claim` a slot per stream.

    Args:
        log: the run's log, or ``None`` for a run kept in memory.
        key: the run's identity in this process (the resolved log path, or the run's names).
    """

    _attached: ClassVar[dict[tuple[int, str], LiveRun]] = {}
    _attach_lock: ClassVar[threading.Lock] = threading.Lock()
    filesystem_probe: ClassVar[Callable[[Path], str | None]] = staticmethod(network_filesystem)
    """The network file system a directory is on, or ``None`` (replaceable, for tests)."""

    def __init__(self, log: Path | None, key: str) -> None:
        self.log = log
        self.key = key
        self.lock = threading.Lock()  # the streams of this process, around an append
        self._claimed: set[int] = set()
        self._fd: int | None = None
        self._map: mmap.mmap | None = None
        self._log_file: Any = None
        self._replay_file: Any = None  # <run>.replay, opened at its first line
        self._replay_synced = 0.0  # when it was last fsynced (time.monotonic)
        self._words: memoryview = memoryview(bytearray(_SIZE)).cast("q")
        self._words[0] = 0
        self._kept = 0  # holders keeping the run open while none of its slots is claimed
        self.first = True  # whether this process set the run up (no other stream was live)

    # -- attaching --------------------------------------------------------------------------
    @classmethod
    def attach(
        cls,
        log: Path | None,
        key: str,
        setup: Callable[[LiveRun], object],
    ) -> LiveRun:
        """The run ``key`` in this process; ``setup`` runs when no stream of it is live anywhere.

        ``setup(run)`` rebuilds the counters from the log with :meth:`rebuild` (and may refuse
        to continue an old run by raising); the other processes wait meanwhile.
        """
        with cls._attach_lock:
            found = cls._attached.get((os.getpid(), key))
            if found is not None:
                return found
            run = cls(log, key)
            if log is None:
                setup(run)
            else:
                run._open_file(log, setup)
            cls._attached[(os.getpid(), key)] = run
            return run

    def _open_file(self, log: Path, setup: Callable[[LiveRun], object]) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        network = type(self).filesystem_probe(log.parent)
        fd = os.open(counters_path(log), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            if os.fstat(fd).st_size < _SIZE:
                os.ftruncate(fd, _SIZE)
            self._fd = fd
            self._map = mmap.mmap(fd, _SIZE)
            self._words = memoryview(self._map).cast("q")
            self._log_file = open(log, "ab", buffering=0)  # noqa: SIM115 - closed by release()
            while True:
                if _lock(fd, _EXCLUSIVE, _RUN_LOCK, wait=False):
                    self._words[1] = 0  # not ready until set up
                    setup(self)
                    self._words[1] = 1
                    if network is None:  # on a network file system the run stays this process's
                        _lock(fd, _SHARED, _RUN_LOCK, wait=True)  # atomic
                    self.first = True
                    return
                if network is not None:
                    raise LogInUse(
                        f"{log}: another process writes this run, and {log.parent} is on a "
                        f"network file system ({network}), whose shared mappings and locks do "
                        "not hold between machines: write a run there from one process, keep the "
                        "log directory on a local disk, or run the environments on Ray with one "
                        "process holding the log (arcadebench.benchmarks.training.ray_run)"
                    )
                _lock(fd, _SHARED, _RUN_LOCK, wait=True)
                if self._words[1] == 1:  # set up by a live stream: join it
                    self.first = False
                    return
                # its first process failed to set it up; try again
                _lock(fd, _UNLOCK, _RUN_LOCK, wait=True)
        except BaseException:
            self._close()
            raise

    # -- the counters ---------------------------------------------------------------------
    def rebuild(self, streams: Mapping[int, StreamState], lost: tuple[int, int]) -> None:
        """Set the counters from the log (:meth:`attach`'s ``setup``): streams and lost frames."""
        words = self._words
        words[_HEADER_SIZE // 8 : _SIZE // 8] = memoryview(bytes(_SIZE - _HEADER_SIZE)).cast("q")
        for slot, state in streams.items():
            if not 0 <= slot < MAX_STREAMS:
                raise ArcadebenchError(
                    f"`env` must be a stream index below {MAX_STREAMS}, got {slot} in {self.log}"
                )
            base = (_HEADER_SIZE // 8) + slot * _FIELDS
            words[base : base + _FIELDS] = memoryview(struct.pack("<4q", *state)).cast("q")
        words[2] = max(streams, default=-1) + 1
        words[3], words[4] = lost

    def claim(self) -> tuple[int, StreamState]:
        """Take the first free slot: ``(index, its state)``.

        Raises:
            LogInUse: all :data:`MAX_STREAMS` slots are live.
        """
        with self.lock:
            for slot in range(MAX_STREAMS):
                if slot in self._claimed:
                    continue
                if self._fd is not None and not _lock(
                    self._fd, _EXCLUSIVE, _SLOT_LOCKS + slot, wait=False
                ):
                    continue
                self._claimed.add(slot)
                if slot >= self._words[2]:
                    self._words[2] = slot + 1
                return slot, self.state(slot)
        raise LogInUse(
            f"{self.log or self.key}: all {MAX_STREAMS} streams of this run are live; a run "
            "has at most that many environments"
        )

    def state(self, slot: int) -> StreamState:
        """A stream's ``(steps, frames, next episode, complete episodes)``."""
        base = (_HEADER_SIZE // 8) + slot * _FIELDS
        words = self._words
        return words[base], words[base + 1], words[base + 2], words[base + 3]

    def publish(self, slot: int, steps: int, frames: int) -> None:
        """A stream's live totals (the episode in flight included)."""
        base = (_HEADER_SIZE // 8) + slot * _FIELDS
        self._words[base] = steps
        self._words[base + 1] = frames

    def finish_episode(self, slot: int, complete: bool) -> None:
        """Count an episode of a stream: its next index, and its complete episodes."""
        base = (_HEADER_SIZE // 8) + slot * _FIELDS
        self._words[base + 2] += 1
        self._words[base + 3] += complete

    def totals(self) -> tuple[int, int]:
        """The run's steps and frames: every stream's live totals, and the frames lost."""
        words = self._words
        high = words[2]
        first = (_HEADER_SIZE // 8) + _STEPS
        steps = sum(words[first : first + high * _FIELDS : _FIELDS]) + words[3]
        frames = sum(words[first + 1 : first + 1 + high * _FIELDS : _FIELDS]) + words[4]
        return steps, frames

    def streams(self) -> int:
        """How many streams the run has had (the slots used)."""
        return self._words[2]

    def snapshot(self) -> tuple[dict[int, StreamState], tuple[int, int]]:
        """Every stream's state and the frames lost: what :meth:`rebuild` takes, as it is now."""
        lost = (self._words[3], self._words[4])
        return {slot: self.state(slot) for slot in range(self.streams())}, lost

    # -- the log --------------------------------------------------------------------------
    @contextmanager
    def appending(self) -> Iterator[None]:
        """Hold the run's append lock (this process's streams and the other processes')."""
        with self.lock:
            if self._fd is not None:
                _lock(self._fd, _EXCLUSIVE, _APPEND_LOCK, wait=True)
            try:
                yield
            finally:
                if self._fd is not None:
                    _lock(self._fd, _UNLOCK, _APPEND_LOCK, wait=True)

    def write(self, line: bytes) -> tuple[int, int] | None:
        """Append one line with one ``write`` and ``fsync`` it (inside :meth:`appending`).

        Returns ``None``: the record's run totals are this process's (a :class:`RelayedRun`
        returns its holder's).
        """
        if self._log_file is not None:
            self._log_file.write(line)
            os.fsync(self._log_file.fileno())
        return None

    def write_replay(self, line: bytes) -> None:
        """Append one replay line to ``<run>.replay``; ``fsync`` it at most once a second.

        Inside :meth:`appending`, before its episode's line
        (:mod:`~arcadebench.records.replay_format`): a line a crash cut is dropped before the
        first append, as the log's is. A killed process loses nothing written; an operating
        system's crash or a power cut can lose the last second's recordings (their episodes,
        whose lines are fsynced, are then unverifiable, never lost), for an ``fsync`` an
        episode less (0.4 ms: 0.2 % of a 900-step Atari episode). Closing the run syncs it.
        """
        if self.log is None:
            return
        if self._replay_file is None:
            path = replay_path(self.log)
            if path.exists():
                cut_partial_line(path)
            self._replay_file = open(path, "ab", buffering=0)  # noqa: SIM115 - closed in _close
        self._replay_file.write(line)
        now = time.monotonic()
        if now - self._replay_synced >= _REPLAY_SYNC_SECONDS:
            os.fsync(self._replay_file.fileno())
            self._replay_synced = now

    # -- releasing ------------------------------------------------------------------------
    def keep(self) -> None:
        """Keep the run open in this process while none of its slots is claimed (a holder)."""
        with self.lock:
            self._kept += 1

    def let_go(self) -> None:
        """Undo one :meth:`keep`; with no slot claimed either, the run closes here."""
        with self.lock:
            self._kept -= 1
            if self._claimed or self._kept:
                return
        self._detach()

    def release(self, slot: int) -> None:
        """Give a slot back; the last slot of this process closes the run here (unless kept)."""
        with self.lock:
            self._claimed.discard(slot)
            if self._fd is not None:
                _lock(self._fd, _UNLOCK, _SLOT_LOCKS + slot, wait=True)
            if self._claimed or self._kept:
                return
        self._detach()

    def _detach(self) -> None:
        with LiveRun._attach_lock:
            LiveRun._attached.pop((os.getpid(), self.key), None)
        self._close()

    def _close(self) -> None:
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None
        if self._replay_file is not None:
            os.fsync(self._replay_file.fileno())
            self._replay_file.close()
            self._replay_file = None
        if self._map is not None:
            self._words.release()
            self._map.close()
            self._map = None
        if self._fd is not None:
            os.close(self._fd)  # releases this process's locks on the run
            self._fd = None


class RelayedRun(LiveRun):
    """A run whose log another process writes: its counters in memory, its lines sent on.

    The counters start from the :class:`StreamStart` the log's holder sent, so the stream
    continues its slot's numbering and totals and sees the run's totals as the log had them.
    :meth:`write` hands each line to :attr:`Relay.send`; the holder appends it with the append
    lock and ``fsync`` of a local stream. With :attr:`Relay.report` the stream also reports its
    live totals whenever its last :class:`Grant` says (every few steps, more often as the budget
    nears; the first after its first step unless its header's answer came first), and each
    line it sends is a report too (the holder answers with a grant), and
    the run's totals it sees are the holder's at that moment plus its own steps since; without
    it the other streams' progress since the start is not seen (the runner's runs have one
    stream each).

    Args:
        log: the log, for messages (this process does not open it).
        relay: where the stream starts and where its lines go.
    """

    def __init__(self, log: Path, relay: Relay) -> None:
        super().__init__(log, f"relayed-{next(_RELAYED_RUNS)}")
        self.rebuild(relay.start.streams, relay.start.lost)
        self.relay = relay
        own = relay.start.streams.get(relay.start.slot, (0, 0, 0, 0))
        self._reported = (own[_STEPS], own[_FRAMES])  # the own totals the holder last heard
        self._next = (1, 1)  # report after the first step: learn the run and the interval
        self._others: tuple[int, int] | None = None  # the other streams' totals, once heard
        self._in_append = False
        self._left = False

    def claim(self) -> tuple[int, StreamState]:
        """The slot the log's holder claimed for this stream.

        Raises:
            LogInUse: the slot is claimed already (one stream per relay).
        """
        slot = self.relay.start.slot
        with self.lock:
            if slot in self._claimed:
                raise LogInUse(f"{self.log}: stream {slot} of this run is played already")
            self._claimed.add(slot)
            if slot >= self._words[2]:
                self._words[2] = slot + 1
            return slot, self.state(slot)

    def publish(self, slot: int, steps: int, frames: int) -> None:
        """The stream's live totals; reported to the holder when the last grant says so."""
        super().publish(slot, steps, frames)
        if self.relay.report is None or self._in_append:
            return
        if (
            steps - self._reported[0] >= self._next[0]
            or frames - self._reported[1] >= self._next[1]
        ):
            self._heard(self.relay.report(steps, frames), steps, frames)

    def _heard(self, grant: Grant, steps: int, frames: int) -> None:
        """Take the holder's answer to own totals ``(steps, frames)``."""
        self._others = (grant.steps - steps, grant.frames - frames)
        self._reported = (steps, frames)
        self._next = (grant.next_steps, grant.next_frames)

    def totals(self) -> tuple[int, int]:
        """The run's steps and frames: the holder's at the last answer, and own steps since."""
        if self._others is None:
            return super().totals()
        steps, frames, _, _ = self.state(self.relay.start.slot)
        return steps + self._others[0], frames + self._others[1]

    @contextmanager
    def appending(self) -> Iterator[None]:
        """Around an episode's end: its line is the report (no second round trip)."""
        with super().appending():
            self._in_append = True
            try:
                yield
            finally:
                self._in_append = False

    def write_replay(self, line: bytes) -> None:
        """Send one replay line to the log's holder, which writes it beside the log."""
        self.relay.send(line)

    def write(self, line: bytes) -> tuple[int, int] | None:
        """Send one line to the log's holder; its run totals if it answered with a grant."""
        answer = self.relay.send(line)
        if not isinstance(answer, Grant):
            return None
        steps, frames, _, _ = self.state(self.relay.start.slot)
        self._heard(answer, steps, frames)
        return answer.steps, answer.frames

    def release(self, slot: int) -> None:
        """Give the slot back, and tell the holder the stream left."""
        if not self._left and self.relay.leave is not None:
            self._left = True
            self.relay.leave()
        super().release(slot)
