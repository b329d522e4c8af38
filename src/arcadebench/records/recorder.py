"""One environment's part of a run: what both monitors hand their finished episodes to.

A monitor counts the steps, frames and rewards of the episode in flight; a
:class:`RunRecorder` is its stream of the run (:mod:`~arcadebench.records.live`): it publishes
the stream's live totals, tells whether the *run's* budget is used up, and when an episode ends
numbers it, adds it to the run and writes its record. The budget rule (SABER Section 3.2: 200M
training frames; Sonic Section 3.9: 1M timesteps per level) and the record format are written
once, whatever drives the environments — a single env, a vector env, or several processes.

A stream whose log is written by another process (a Ray task, whose driver holds the log, or
an environment of a training run on a Ray cluster, whose owner holds it) is opened with a
:class:`~arcadebench.records.live.Relay`: everything above is the same, only its lines travel
and the run's totals are the holder's (:mod:`~arcadebench.records.relay`).

Classes: RunRecorder.
Functions: check_budget, continue_run.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from arcadebench.errors import ArcadebenchError
from arcadebench.records.live import LiveRun, Relay, RelayedRun
from arcadebench.records.reader import RunLog, parse_log
from arcadebench.records.schema import EpisodeRecord, RunIdentity, episode_record, header_record
from arcadebench.records.writer import (
    check_run,
    cut_partial_line,
    package_versions,
    phase_run,
    tightest,
)
from arcadebench.specs import Spec

__all__ = ["NO_LIMIT", "RunRecorder", "check_budget", "continue_run", "new_memory_run"]

NO_LIMIT = sys.maxsize
"""A budget that is never reached (a run without one)."""

_MEMORY_RUNS = itertools.count()


def check_budget(name: str, value: object) -> int | None:
    """Return ``value`` if it is a positive ``int`` or ``None`` (no budget), else raise."""
    if value is not None and (type(value) is not int or value <= 0):
        raise ArcadebenchError(f"`{name}` must be a positive integer or None, got {value!r}")
    return value


def new_memory_run() -> str:
    """A new in-memory run for :class:`RunRecorder`'s ``memory_run`` (a batch's envs share it)."""
    return f"memory-{next(_MEMORY_RUNS)}"


def continue_run(live: LiveRun, spec: Spec, game: str, run: str, *, resume: bool) -> bool:
    """Set the counters of a run no stream of which is live from its log; whether it needs a header.

    The log is the truth (a crashed run's counters are not): its streams' totals and numbering
    go on, and the frames the last record counted in other streams' episodes in flight, lost
    with their process, stay counted, so the run's totals never go back.

    Raises:
        ArcadebenchError: the log holds episodes and ``resume`` is off, or it holds another run.
        InputError: the log is corrupt or belongs to another spec.
    """
    if live.log is None or not live.log.exists():
        live.rebuild({}, (0, 0))
        return True
    cut_partial_line(live.log)
    previous = _previous_run(spec, game, run, live.log)
    if previous is not None and not resume:
        raise ArcadebenchError(
            f"{live.log} already holds {len(previous.returns)} episodes of run "
            f"{run!r}; continue that run with resume=True (`arcadebench run --resume`), "
            "or start a new one under another run id or log directory"
        )
    if previous is None:
        live.rebuild({}, (0, 0))
        return live.log.stat().st_size == 0
    streams = dict(previous.streams)
    logged = (
        int(previous.total_steps[-1]) - sum(s[0] for s in streams.values()),
        int(previous.total_frames[-1]) - sum(s[1] for s in streams.values()),
    )
    live.rebuild(streams, (max(0, logged[0]), max(0, logged[1])))
    return False


def _previous_run(spec: Spec, game: str, run: str, path: Path) -> RunLog | None:
    """The run already in ``path``, or ``None``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deviations were reported when they were recorded
        runs = parse_log(spec, path)
    for found in runs:
        if found.game != game or found.run != run:
            raise ArcadebenchError(
                f"{path} holds {found.game} run {found.run!r}, not {game} run "
                f"{run!r}; one log per run: pick another log file"
            )
    return runs[0] if runs else None


class RunRecorder:
    """One stream of a run: its episodes' numbering, its totals, the run's budget, the log.

    The budget (``spec.evaluation.budget_steps`` / ``budget_frames``; the ``budget_*``
    arguments and :meth:`tighten_budget` may only make it smaller) counts the whole run: every
    stream's steps and frames, the episodes in flight and a continued log's included. The step
    that makes the run's total reach it ends the episode of the stream that took it; each other
    stream ends its episode on its next step, so a run overshoots by at most one step per env.
    Streams relayed to a holder on other machines see the run's totals at their last report:
    fewer than ``sync_steps`` steps each past it, about one when they play at the same pace
    (:mod:`~arcadebench.records.relay`).

    Without a log an environment is a run of its own, kept in memory (a run's identity is its
    log), unless it is given ``memory_run``: the environments of one batch share one.
    :meth:`open` attaches the stream to a log: a run that other environments are writing
    right now is joined, and an old one is continued only with ``resume``.

    Args:
        spec: the protocol.
        game: the canonical game or level.
        run: the run id (it names the log file).
        env_id: the Gymnasium id, for the records.
        seed: the stream's seed (default: set later with :meth:`note_seed`).
        algorithm: the agent's name, for the log header.
        settings: the environment settings, for the log header.
        deviations: settings that differ from the spec, written with every record.
        budget_steps: a tighter step budget than the spec's.
        budget_frames: a tighter frame budget than the spec's.
        memory_run: the in-memory run to join while nothing is logged (from
            :func:`new_memory_run`; default a run of its own).
        phase: ``"evaluation"`` for the evaluation episodes of a protocol scored after
            training: the run is ``<run>.eval`` (:func:`~arcadebench.records.phase_run`), has
            no budget (the budget is the training's) and says its phase in the header.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> rec = RunRecorder(load_spec("sonic"), "SonicTheHedgehog-GreenHillZone.Act1",
        ...                   run="doc", budget_steps=10)
        >>> record = rec.finish(episode_return=5.0, steps=10, frames=40, end_reason="budget",
        ...                     complete=False, rollover_rewards=[], wall_time=0.1)
        >>> record["total_steps"], rec.exhausted
        (10, True)
        >>> rec.close()
    """

    def __init__(
        self,
        spec: Spec,
        game: str,
        *,
        run: str = "0",
        env_id: str | None = None,
        seed: int | None = None,
        algorithm: str | None = None,
        settings: dict[str, Any] | None = None,
        deviations: dict[str, Any] | None = None,
        budget_steps: int | None = None,
        budget_frames: int | None = None,
        memory_run: str | None = None,
        phase: Literal["training", "evaluation"] = "training",
    ) -> None:
        self.spec = spec
        self.game = game
        self.phase = phase
        self.policy: str | None = None  # an evaluation's policy, as the agent describes it
        # the runner's: what played the run (kind, name, file hash) and its frameworks' versions
        self.agent: dict[str, Any] = {}
        self.agent_versions: dict[str, str] = {}
        self.run = check_run(phase_run(run, phase))
        self.env_id = env_id
        self.seed = seed
        self.algorithm = algorithm
        self.settings = dict(settings or {})
        self.deviations = dict(deviations or {})
        training = phase == "training"
        self.budget_steps = tightest(
            spec.evaluation.budget_steps if training else None,
            check_budget("budget_steps", budget_steps),
        )
        self.budget_frames = tightest(
            spec.evaluation.budget_frames if training else None,
            check_budget("budget_frames", budget_frames),
        )
        self.last: EpisodeRecord | None = None
        self.index: int | None = None  # the runner's index of the next episode in its job
        self.exhausted = False
        self._live: LiveRun | None = None
        self._attach(None, resume=False, memory_run=memory_run)

    # -- identity, stream and log ---------------------------------------------------------
    @property
    def identity(self) -> RunIdentity:
        """What the run's log lines repeat about it (the seed is this stream's)."""
        spec = self.spec
        return RunIdentity(
            spec.name,
            spec.version,
            spec.hash,
            self.env_id,
            self.game,
            self.run,
            self.seed,
            self.algorithm,
            self.settings,
            self.deviations,
        )

    @property
    def log(self) -> Path | None:
        """The log file, or ``None`` when nothing is written."""
        return self._live.log if self._live is not None else None

    @property
    def stream(self) -> int:
        """This environment's index among the run's streams (``env`` in its records)."""
        return self._slot

    @property
    def live(self) -> LiveRun:
        """The run this stream belongs to."""
        if self._live is None:
            raise ArcadebenchError("the recorder was closed: make a new environment to play on")
        return self._live

    def note_seed(self, seed: int | None) -> None:
        """The stream's seed is the first one it is given."""
        if self.seed is None and seed is not None:
            self.seed = int(seed)

    def open(
        self,
        path: str | os.PathLike[str],
        *,
        run: str | None = None,
        resume: bool,
        relay: Relay | None = None,
    ) -> None:
        """Write this stream's episodes to the run logged at ``path``.

        A run other environments are writing now is joined; otherwise an existing log with
        episodes is continued only with ``resume`` (its streams' totals and numbering go on).
        With ``relay`` another process holds the log and has decided all that: the stream
        starts where the relay says and sends its lines there.

        Raises:
            ArcadebenchError: already logging, or the log holds episodes and ``resume`` is off.
            InputError: the existing log is corrupt or belongs to another spec, game or run.
        """
        if self.log is not None:
            raise ArcadebenchError(
                f"this environment already logs to {self.log}; one log per environment"
            )
        run = check_run(phase_run(run, self.phase) if run is not None else self.run)
        self.close()
        self.run = run
        self._attach(Path(path), resume=resume, relay=relay)

    def _attach(
        self,
        log: Path | None,
        *,
        resume: bool,
        relay: Relay | None = None,
        memory_run: str | None = None,
    ) -> None:
        if relay is not None and log is not None:
            self._live = RelayedRun(log, relay)
            if relay.start.header:
                self._write_header(self._live)
        else:
            # without a log a run has no identity to share: a run of its own unless told which
            key = str(log.resolve()) if log is not None else memory_run or new_memory_run()
            self._live = LiveRun.attach(log, key, lambda live: self._set_up(live, resume))
        self._slot, (steps, frames, self.episode, self.complete_episodes) = self._live.claim()
        self.total_steps, self.total_frames = steps, frames  # this stream's finished episodes
        self.exhausted = self._run_used_up(*self._live.totals())

    def _set_up(self, live: LiveRun, resume: bool) -> None:
        """No stream of the run is live anywhere: continue it from its log, or start it."""
        if continue_run(live, self.spec, self.game, self.run, resume=resume):
            self._write_header(live)

    def _write_header(self, live: LiveRun, **extra: Any) -> None:
        if self.phase != "training":
            extra["phase"] = self.phase
        if self.policy:
            extra["policy"] = self.policy
        if self.agent:
            extra["agent"] = self.agent
        versions = {**package_versions(), **self.agent_versions}
        header = header_record(
            self.identity, (self.budget_steps, self.budget_frames), versions, **extra
        )
        live.write((json.dumps(header) + "\n").encode())

    def close(self) -> None:
        """Leave the run: the slot is free for a stream that continues it."""
        if self._live is not None:
            live, self._live = self._live, None
            live.publish(self._slot, self.total_steps, self.total_frames)  # drop the unlogged
            live.release(self._slot)

    # -- the budget -----------------------------------------------------------------------
    def tighten_budget(self, steps: int | None = None, frames: int | None = None) -> None:
        """Tighten the run's budget (the runner's ``steps``); it can never exceed the spec's."""
        self.budget_steps = tightest(self.budget_steps, check_budget("steps", steps))
        self.budget_frames = tightest(self.budget_frames, check_budget("frames", frames))
        self.exhausted = self.exhausted or self._run_used_up(*self.live.totals())

    @property
    def budgeted(self) -> bool:
        """Whether the run has a budget (then every step publishes and checks the totals)."""
        return self.budget_steps is not None or self.budget_frames is not None

    def _run_used_up(self, steps: int, frames: int) -> bool:
        return (self.budget_steps is not None and steps >= self.budget_steps) or (
            self.budget_frames is not None and frames >= self.budget_frames
        )

    def publish(self, episode_steps: int, episode_frames: int) -> None:
        """The stream's live totals after a step (the episode in flight included)."""
        self.live.publish(
            self._slot, self.total_steps + episode_steps, self.total_frames + episode_frames
        )

    def run_used_up(self) -> bool:
        """Whether the run's budget is used up, all its streams together, right now."""
        return self._run_used_up(*self.live.totals())

    def step(self, episode_steps: int, episode_frames: int) -> bool:
        """Publish the stream's totals after a step; whether the run's budget is used up."""
        self.publish(episode_steps, episode_frames)
        return self.run_used_up()

    def budget_message(self) -> str:
        """The one-line reason a run that used its budget may not go on."""
        steps, frames = self.live.totals() if self._live is not None else (0, 0)
        used = []
        if self.budget_steps is not None:
            used.append(f"{steps:,} of {self.budget_steps:,} steps")
        if self.budget_frames is not None:
            used.append(f"{frames:,} of {self.budget_frames:,} frames")
        return (
            f"run {self.run!r} of {self.game} has used its budget ({' and '.join(used)}, its "
            f"environments together; {self.spec.name} evaluation.budget): the protocol allows no "
            "more interaction; start a new run (another run id or log directory) to play on"
        )

    # -- episodes -------------------------------------------------------------------------
    def finish(
        self,
        *,
        episode_return: float,
        steps: int,
        frames: int,
        end_reason: str,
        complete: bool,
        rollover_rewards: list[float],
        wall_time: float,
        replay: Mapping[str, Any] | None = None,
    ) -> EpisodeRecord:
        """Add an episode that ended to the run: count it, log it, and return its record.

        ``replay`` is what re-simulating it needs (what
        :func:`~arcadebench.records.replay_format.replay_fields` returns: the replay line's fields
        but ``kind``, ``env`` and ``episode``), written to ``<run>.replay`` just before the
        episode's line, under the same lock.
        """
        live = self.live
        self.total_steps += steps
        self.total_frames += frames
        with live.appending():
            live.publish(self._slot, self.total_steps, self.total_frames)
            live.finish_episode(self._slot, complete)
            run_steps, run_frames = live.totals()
            record = episode_record(
                self.identity,
                env=self._slot,
                episode=self.episode,
                episode_return=episode_return,
                steps=steps,
                frames=frames,
                env_steps=self.total_steps,
                env_frames=self.total_frames,
                total_steps=run_steps,
                total_frames=run_frames,
                end_reason=end_reason,
                complete=complete,
                rollover_rewards=rollover_rewards,
                wall_time=wall_time,
                index=self.index,
            )
            if replay is not None and live.log is not None:
                line = {"kind": "replay", "env": self._slot, "episode": self.episode, **replay}
                live.write_replay((json.dumps(line, separators=(",", ":")) + "\n").encode())
            held = live.write((json.dumps(record) + "\n").encode())
            if held is not None:  # a relayed line: the run's totals are its holder's
                run_steps, run_frames = held
                record["total_steps"], record["total_frames"] = held
        self.last = record
        self.index = None  # the runner names each episode it starts
        self.episode += 1
        self.complete_episodes += complete
        self.exhausted = self._run_used_up(run_steps, run_frames)
        return record
