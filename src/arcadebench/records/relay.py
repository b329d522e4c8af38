"""A stream logged by another process: the log's holder writes what the playing process sends.

On a Ray cluster without a shared file system a task cannot write the driver's logs: what it
wrote would land on its own node's disk. So the driver holds the run as a local stream would —
the counters file, the stream's slot and its lock, the append lock — and writes every line
itself, one ``write`` and ``fsync`` each; the task plays with a
:class:`~arcadebench.records.live.RelayedRun`, which sends its lines instead of writing them.

- The driver opens a :class:`RunReceiver` for the job's run: the run is continued from the
  driver's log exactly as a local stream continues it (:func:`~.recorder.continue_run`: a
  corrupt log, another run's log or an old run without ``resume`` are refused here), and the
  stream's slot is claimed. Its :attr:`RunReceiver.start` (a
  :class:`~arcadebench.records.live.StreamStart`: the slot, every stream's totals and
  numbering, whether the log needs its header) travels to the task.
- The task opens its monitor's log with a :class:`~arcadebench.records.live.Relay` made of that
  start and a ``send`` callable (``RunRecorder.open(path, relay=...)``): numbering, budget and
  records are the local stream's, and each line goes to ``send``.
- The driver appends (:meth:`~RunReceiver.append`) each line it receives, in order: it counts the
  episode in the run's counters and writes the line under the append lock, so other processes
  joining the run see it as they would a local stream's.

A line that never reaches the driver (its task's node died just after the episode ended) is
lost like an episode in flight; the log, read by the driver when the run is resumed, is the
truth either way.

Classes: RunReceiver.
"""

from __future__ import annotations

import json
from pathlib import Path

from arcadebench.errors import InputError
from arcadebench.records.live import LiveRun, StreamStart
from arcadebench.records.recorder import continue_run
from arcadebench.specs import Spec

__all__ = ["RunReceiver"]


class RunReceiver:
    """The log's end of a stream played elsewhere: holds the run, appends what the stream sends.

    Args:
        spec: the protocol.
        game: the canonical game or level.
        run: the run id.
        log: the run's log (this process writes it).
        resume: continue an existing log with episodes (otherwise it is refused).

    Raises:
        ArcadebenchError: the log holds episodes and ``resume`` is off, or another run's.
        InputError: the log is corrupt or belongs to another spec.

    Example:
        >>> import tempfile
        >>> from pathlib import Path
        >>> from arcadebench.records import RunRecorder
        >>> from arcadebench.records.live import Relay
        >>> from arcadebench.specs import load_spec
        >>> spec = load_spec("sonic")
        >>> level = "SonicTheHedgehog-GreenHillZone.Act1"
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     log = Path(tmp) / "0.jsonl"
        ...     receiver = RunReceiver(spec, level, "0", log, resume=False)
        ...     player = RunRecorder(spec, level)  # in the task, on another machine
        ...     player.open(log, resume=False, relay=Relay(receiver.start, receiver.append))
        ...     _ = player.finish(episode_return=1.0, steps=10, frames=40, end_reason="stuck",
        ...                       complete=True, rollover_rewards=[], wall_time=0.1)
        ...     player.close()
        ...     receiver.close()
        ...     kinds = [line.split('"')[3] for line in log.read_text().splitlines()]
        >>> receiver.start.header, kinds
        (True, ['header', 'episode'])
    """

    def __init__(self, spec: Spec, game: str, run: str, log: Path, *, resume: bool) -> None:
        needs_header: list[bool] = []

        def set_up(live: LiveRun) -> None:
            needs_header.append(continue_run(live, spec, game, run, resume=resume))

        self.log = log
        self._live: LiveRun | None = LiveRun.attach(log, str(log.resolve()), set_up)
        self._slot, _ = self._live.claim()
        streams, lost = self._live.snapshot()
        # a run that a live stream set up has its header; a new or empty log gets the stream's
        self.start = StreamStart(self._slot, streams, lost, bool(needs_header and needs_header[0]))

    def append(self, line: bytes) -> None:
        """Write one line the stream sent: count its episode in the run, then append it.

        Raises:
            InputError: the line is no record of this stream, or the receiver is closed.
        """
        live = self._live
        try:
            record = json.loads(line)
            kind = record["kind"]
        except (ValueError, TypeError, KeyError):
            record, kind = None, None
        if live is None or kind not in ("header", "episode") or not line.endswith(b"\n"):
            raise InputError(
                str(self.log),
                None,
                "a remote stream must send whole header or episode lines to an open receiver, "
                f"got {line[:80]!r}",
            )
        with live.appending():
            if kind == "episode":
                if record["env"] != self._slot:
                    raise InputError(
                        str(self.log),
                        None,
                        f"this receiver holds stream {self._slot}, got a record of stream "
                        f"{record['env']!r}",
                    )
                live.publish(self._slot, record["env_steps"], record["env_frames"])
                live.finish_episode(self._slot, record["complete"])
            live.write(line)

    def close(self) -> None:
        """Leave the run: the slot is free for a stream that continues it."""
        if self._live is not None:
            live, self._live = self._live, None
            live.release(self._slot)
