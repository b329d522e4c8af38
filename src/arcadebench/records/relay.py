"""Streams logged by another process: the log's holder writes what the playing processes send.

On a Ray cluster without a shared file system a task or actor cannot write the driver's logs:
what it wrote would land on its own node's disk. So one process on the driver's machine holds
the run as local streams would — the counters file, the streams' slots and their locks, the
append lock — and writes every line itself, one ``write`` and ``fsync`` each; the environments
play with a :class:`~arcadebench.records.live.RelayedRun`, which sends its lines instead of
writing them.

- The holder opens a :class:`RunHolder` for the run: the run is continued from its log exactly
  as a local stream continues it (:func:`~.recorder.continue_run`: a corrupt log, another run's
  log or an old run without ``resume`` are refused here). :meth:`RunHolder.join` claims a slot
  per stream; its :class:`~arcadebench.records.live.StreamStart` (the slot, every stream's
  totals and numbering, whether the log still needs its header) travels to the stream.
- The stream opens its monitor's log with a :class:`~arcadebench.records.live.Relay` made of
  that start and callables reaching the holder (``RunRecorder.open(path, relay=...)``):
  numbering, budget and records are the local stream's, and each line goes to the holder.
- The holder appends (:meth:`RunHolder.append`) each line it receives, in order: it counts the
  episode in the run's counters, sets the record's run totals to its own (so ``total_frames``
  never goes back along the file, whichever stream's line comes next) and writes the line under
  the append lock, so other processes joining the run see it as they would a local stream's.

**A run's budget across machines.** A training run's streams also report their live totals
(:meth:`RunHolder.report`), and each answer (a :class:`~arcadebench.records.live.Grant`) gives
the run's totals and how far the stream may go before it reports again: at most ``sync_steps``
steps, and near the budget its share of what is left, ``floor((budget - counted - granted to
the others) / streams)`` steps (and frames), at least one, where ``counted`` is the run's
total by the holder's count and ``granted to the others`` what the other streams may play
before their next report; an episode's end is a report too. A stream stops as a local one does,
when the run's totals it knows (the holder's at its last answer plus its own steps since) reach
the budget, so every stream stops at its first report after the holder's count has reached it.
Hence the bound: the run overshoots its budget by fewer than ``sync_steps`` steps per stream
whatever happens (their frames, for a frame budget), and by about one step per stream when the
streams play at the same pace, as a run on one machine does (the grants never add up to more
than the budget has left, until the last steps, which are one per stream); a stream that idles
meanwhile (waiting for its learner) may still play what it was granted before.

A line that never reaches the holder (its stream's node died just after the episode ended) is
lost like an episode in flight, and so are the steps a dead stream played since its last report
(fewer than ``sync_steps``); what it reported stays counted. The log, read by the holder when
the run is resumed, is the truth either way.

:class:`RunReceiver` is one stream's end of a holder (the runner's Ray backend: one job, one
stream, one run).

Classes: RunHolder, RunReceiver.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from arcadebench.errors import ArcadebenchError, InputError
from arcadebench.records.live import Grant, LiveRun, StreamStart
from arcadebench.records.recorder import NO_LIMIT, check_budget, continue_run
from arcadebench.records.writer import tightest
from arcadebench.specs import Spec

__all__ = ["SYNC_STEPS", "RunHolder", "RunReceiver"]

SYNC_STEPS = 128
"""Steps a relayed stream of a training run plays at most between two reports to its holder."""

_SUMMARY = ("env", "episode", "return", "steps", "frames", "complete", "end_reason")
_KEPT_EPISODES = 10_000  # summaries kept for take_episodes between two calls


class RunHolder:
    """The process holding a run whose streams play elsewhere: its log, counters and budget.

    Args:
        spec: the protocol.
        game: the canonical game or level.
        run: the run id.
        log: the run's log (this process writes it).
        resume: continue an existing log with episodes (otherwise it is refused).
        budget_steps: a tighter step budget than the spec's (for the report intervals).
        budget_frames: a tighter frame budget than the spec's.
        sync_steps: the most steps a stream plays between two reports.

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
        ...     holder = RunHolder(spec, level, "0", Path(tmp) / "0.jsonl", resume=False)
        ...     players = []
        ...     for _ in range(2):  # two streams, e.g. on two machines
        ...         start = holder.join()
        ...         player = RunRecorder(spec, level)
        ...         player.open(holder.log, resume=False, relay=Relay(
        ...             start, lambda line, slot=start.slot: holder.append(slot, line)))
        ...         players.append(player)
        ...     for player in players:
        ...         _ = player.finish(episode_return=1.0, steps=10, frames=40,
        ...                           end_reason="stuck", complete=True, rollover_rewards=[],
        ...                           wall_time=0.1)
        ...         player.close()
        ...     holder.close()
        ...     kinds = [line.split('"')[3] for line in holder.log.read_text().splitlines()]
        >>> kinds, players[1].last["total_frames"]
        (['header', 'episode', 'episode'], 80)
    """

    def __init__(
        self,
        spec: Spec,
        game: str,
        run: str,
        log: Path,
        *,
        resume: bool,
        budget_steps: int | None = None,
        budget_frames: int | None = None,
        sync_steps: int = SYNC_STEPS,
    ) -> None:
        if type(sync_steps) is not int or sync_steps < 1:
            raise ArcadebenchError(f"`sync_steps` must be a positive integer, got {sync_steps!r}")
        self.budget_steps = tightest(
            spec.evaluation.budget_steps, check_budget("budget_steps", budget_steps)
        )
        self.budget_frames = tightest(
            spec.evaluation.budget_frames, check_budget("budget_frames", budget_frames)
        )
        self.sync_steps = sync_steps
        self.log = log

        live = LiveRun.attach(
            log, str(log.resolve()), lambda live: continue_run(live, spec, game, run, resume=resume)
        )
        live.keep()
        self._live: LiveRun | None = live
        self._streams: set[int] = set()
        self._granted: dict[int, tuple[int, int]] = {}  # what each stream may play unreported
        self._written = live.totals()  # the run's totals on the last line written
        self._episodes: deque[dict[str, Any]] = deque(maxlen=_KEPT_EPISODES)

    @property
    def live(self) -> LiveRun:
        """The run, while the holder is open."""
        if self._live is None:
            raise ArcadebenchError(f"the holder of {self.log} was closed: open a new one")
        return self._live

    def join(self) -> StreamStart:
        """Claim a slot for a new stream; where it starts (its header too, if none is written).

        Raises:
            LogInUse: all the run's slots are live.
        """
        live = self.live
        slot, _ = live.claim()
        self._streams.add(slot)
        self._granted[slot] = (1, 1)  # a stream first reports after its first step
        streams, lost = live.snapshot()
        return StreamStart(slot, streams, lost, not self._headed())

    def _headed(self) -> bool:
        """Whether the log has its header: any line in it (an old log without one goes on so).

        The file decides, not this holder: each stream of a run played elsewhere has a holder
        of its own, and every stream that joins before a header is written is told to send one
        (the first to arrive is written, under the run's append lock), so no stream's episode
        can reach the log before its header, whichever stream's lines arrive first.
        """
        try:
            return self.log.stat().st_size > 0
        except FileNotFoundError:
            return False

    def _refusal(self, why: str) -> InputError:
        return InputError(str(self.log), None, why)

    def _check_slot(self, slot: int) -> LiveRun:
        live = self.live
        if slot not in self._streams:
            held = ", ".join(map(str, sorted(self._streams))) or "none"
            raise self._refusal(f"this holder holds stream {held}, got a record of stream {slot!r}")
        return live

    def report(self, slot: int, steps: int, frames: int) -> Grant:
        """A stream's live totals (the episode in flight included); the run's, and the next report.

        Raises:
            InputError: the holder holds no such stream.
        """
        live = self._check_slot(slot)
        old_steps, old_frames, _, _ = live.state(slot)
        if steps >= old_steps and frames >= old_frames:  # an old report arriving late: ignored
            live.publish(slot, steps, frames)
        return self._grant(slot, *live.totals())

    def append(self, slot: int, line: bytes) -> Grant:
        """Write one line a stream sent: count its episode, set its run totals, append it.

        Raises:
            InputError: the line is no record of this stream, or the holder is closed.
        """
        try:
            record = json.loads(line)
            kind = record["kind"]
        except (ValueError, TypeError, KeyError):
            record, kind = None, None
        kinds = ("header", "episode", "replay")
        if self._live is None or kind not in kinds or not line.endswith(b"\n"):
            raise self._refusal(
                "a remote stream must send whole header, replay or episode lines to an open "
                f"holder, got {line[:80]!r}"
            )
        if kind != "header" and record["env"] != slot:
            sent = record["env"]
            raise self._refusal(f"this holder holds stream {slot}, got a record of stream {sent!r}")
        live = self._check_slot(slot)
        with live.appending():
            if kind != "episode":
                if kind == "replay":  # beside the log, before its episode's line
                    live.write_replay(line)
                elif not self._headed():  # the first header to arrive opens the log
                    live.write(line)
                return self._grant(slot, *self.totals())
            live.publish(slot, record["env_steps"], record["env_frames"])
            live.finish_episode(slot, record["complete"])
            steps, frames = live.totals()
            totals = (max(steps, self._written[0]), max(frames, self._written[1]))
            if (record["total_steps"], record["total_frames"]) != totals:
                record["total_steps"], record["total_frames"] = totals
                line = (json.dumps(record) + "\n").encode()
            live.write(line)
            self._written = totals
        self._episodes.append({key: record[key] for key in _SUMMARY} | {"run_frames": totals[1]})
        return self._grant(slot, *totals)

    def _grant(self, slot: int, steps: int, frames: int) -> Grant:
        """The run's totals, and stream ``slot``'s share of what the budget has left."""
        streams = max(1, len(self._streams))
        others = [granted for held, granted in self._granted.items() if held != slot]
        next_steps = self.sync_steps
        if self.budget_steps is not None:
            counted = steps + sum(granted[0] for granted in others)
            next_steps = _share(self.budget_steps, counted, streams, self.sync_steps)
        next_frames = NO_LIMIT
        if self.budget_frames is not None:
            counted = frames + sum(granted[1] for granted in others)
            next_frames = _share(self.budget_frames, counted, streams, NO_LIMIT)
        self._granted[slot] = (next_steps, next_frames)
        return Grant(steps, frames, next_steps, next_frames)

    def leave(self, slot: int) -> None:
        """A stream closed: its slot is free for a stream that continues it.

        What it reported stays counted (its episode in flight included, as for a killed one).
        """
        if self._live is not None and slot in self._streams:
            self._streams.discard(slot)
            self._granted.pop(slot, None)
            self._live.release(slot)

    def totals(self) -> tuple[int, int]:
        """The run's ``(steps, frames)``: every stream's, as reported, and the lost ones."""
        steps, frames = self.live.totals()
        return max(steps, self._written[0]), max(frames, self._written[1])

    def used_up(self) -> bool:
        """Whether the run's budget is used up (by the holder's count)."""
        steps, frames = self.totals()
        return (self.budget_steps is not None and steps >= self.budget_steps) or (
            self.budget_frames is not None and frames >= self.budget_frames
        )

    def take_episodes(self) -> list[dict[str, Any]]:
        """The episodes written since the last call (the last 10,000): ``env``, ``return``, ...

        Each has the summary's fields (``env``, ``episode``, ``return``, ``steps``, ``frames``,
        ``complete``, ``end_reason``) and ``run_frames``, the run's frames on its line.
        """
        episodes = list(self._episodes)
        self._episodes.clear()
        return episodes

    def close(self) -> None:
        """Leave the run: every stream's slot is freed, and the log closes in this process."""
        if self._live is not None:
            for slot in sorted(self._streams):
                self.leave(slot)
            live, self._live = self._live, None
            live.let_go()


def _share(budget: int, counted: int, streams: int, most: int) -> int:
    """How far a stream may go before it reports again: its share of what the budget has left.

    ``counted`` is the run's total plus what the other streams may play unreported; the share
    is at least 1 (a stream never waits) and at most ``most``.

    Example:
        >>> _share(1000, 500, 2, 128), _share(1000, 990, 4, 128), _share(1000, 1010, 4, 128)
        (128, 2, 1)
    """
    return max(1, min(most, (budget - counted) // streams))


class RunReceiver:
    """The log's end of one stream played elsewhere (a runner job on Ray): a holder of one stream.

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
        self.log = log
        self._holder = RunHolder(spec, game, run, log, resume=resume)
        try:
            self.start = self._holder.join()
        except BaseException:
            self._holder.close()
            raise

    def append(self, line: bytes) -> Grant:
        """Write one line the stream sent: count its episode in the run, then append it.

        Raises:
            InputError: the line is no record of this stream, or the receiver is closed.
        """
        return self._holder.append(self.start.slot, line)

    def close(self) -> None:
        """Leave the run: the slot is free for a stream that continues it."""
        self._holder.close()
