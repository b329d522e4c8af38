"""The episode monitor: one fsynced JSON line per finished episode, and the run's budget.

SABER/HWR and Sonic are *training* protocols: their scores are means over the episodes a learning
agent plays (SABER Section 3.2: the last 100 training episodes before each frame checkpoint;
Sonic Section 3.9: every episode of the 1M timesteps on a test level). So every protocol
environment records every episode it plays, whoever drives it (a training loop, the runner),
and stops a run that tries to go past the protocol's budget, as retro-contest's evaluation
server did (``TimestepTimeoutError``).

:class:`EpisodeMonitor` is the outermost protocol wrapper of every registered environment
(:mod:`arcadebench.benchmarks.envs.factory`), so it sees the protocol return: after the rollover
guard, before any clipping or shaping an agent adds on top. It writes nothing unless given a log
(``log_dir`` to ``gym.make``, ``ARCADEBENCH_LOG_DIR``, or :func:`monitor`). The log format is
DEVELOPING.md's "Episode log": an optional header line, then one ``{"kind": "episode", ...}`` line
per episode, each written with one ``write`` and ``fsync`` so a killed process loses at most the
episode in flight. An exclusive ``flock`` keeps a second process (or a second environment in this
process) from writing the same log.

Per step the monitor only adds to counters and reads two ``info`` keys; everything else happens
once per episode, in the run's :class:`~arcadebench.records.RunRecorder` (shared with the vector
monitor).

Classes: EpisodeMonitor.
Functions: monitor, find_monitor, log_path.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, get_args

import gymnasium as gym

from arcadebench.errors import ArcadebenchError, BudgetExhausted, warn_user
from arcadebench.records import (
    LOG_DIR_ENV,
    EpisodeRecord,
    Relay,
    RunRecorder,
    log_path,
    phase_run,
)
from arcadebench.specs import Spec, load_spec
from arcadebench.wrappers._info import Options, ResetResult, StepResult, protocol_info
from arcadebench.wrappers.misuse import MisuseDetector
from arcadebench.wrappers.observations import StandardAtariEnv
from arcadebench.wrappers.recording import EpisodeRecording, snapshot, state_digest_reader

__all__ = [
    "LOG_DIR_ENV",
    "EpisodeMonitor",
    "episode_summary",
    "warn_unlogged",
    "find_monitor",
    "log_path",
    "monitor",
]

_SummaryField = Literal["env", "episode", "return", "steps", "frames", "complete", "end_reason"]
SUMMARY_FIELDS: tuple[_SummaryField, ...] = get_args(_SummaryField)
_UNLOGGED_WARNED: set[str] = set()


def warn_unlogged(spec: Spec) -> None:
    """Warn once per process and protocol that a training protocol is played without a log."""
    evaluation = spec.evaluation
    scored_in_training = evaluation.episode_aggregate == "last_k" or (
        evaluation.budget_steps is not None or evaluation.budget_frames is not None
    )
    if not scored_in_training or spec.name in _UNLOGGED_WARNED:
        return
    _UNLOGGED_WARNED.add(spec.name)
    scored = (
        "evaluation episodes played after a training budget that the training log counts"
        if evaluation.scored == "after_training"
        else "the training episodes themselves"
    )
    warn_user(
        f"{spec.name} scores {scored}, and this environment keeps no log: nothing it plays "
        f"counts. Give it log_dir=... (gym.make, make_vec, make_vec_env's env_kwargs) or set "
        f"${LOG_DIR_ENV}; say log_dir=False if no log is intended",
        UserWarning,
    )


def episode_summary(record: EpisodeRecord) -> dict[str, Any]:
    """What the last step of an episode tells in ``info["arcadebench"]["episode"]``.

    The episode's protocol return, length and end, and the run's totals when it ended
    (``run_steps``, ``run_frames``: every environment of the run), for a training loop's own
    logging (the SB3 callback's, for example).
    """
    summary: dict[str, Any] = {key: record[key] for key in SUMMARY_FIELDS}
    summary["run_steps"] = record["total_steps"]
    summary["run_frames"] = record["total_frames"]
    return summary


class EpisodeMonitor(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Record every episode to an append-only log and enforce the protocol's budget.

    Each finished episode becomes one record: protocol return (after the rollover guard, before
    agent-side clipping), agent steps, emulator frames (``info["episode_frame_number"]``), the
    run's cumulative steps and frames, why it ended, the guarded rollover rewards, deviations
    from the spec and wall time. On the last step ``info["arcadebench"]["end_reason"]`` is
    ``"game_over"`` (terminated) or ``"time_limit"`` (truncated) unless a wrapper set it.

    The budget (``spec.evaluation.budget_steps`` / ``budget_frames``, e.g. Sonic's 1M timesteps,
    SABER's 200M frames; ``budget_*`` arguments may only tighten it) counts the whole run, so a
    continued log continues it. The step that uses the budget up ends the run: it returns
    ``truncated=True`` with end reason ``"budget"``, an unfinished episode is logged with
    ``complete: false``, and any further ``step`` or ``reset`` raises
    :class:`~arcadebench.errors.BudgetExhausted`. A ``reset`` in the
    middle of an episode is allowed, and the cut episode is logged with ``complete: false`` and
    ``end_reason: "reset"`` (never dropped). An episode still running when the environment is
    closed is not logged, like one in flight when a process is killed.

    Args:
        env: the protocol environment.
        spec: its protocol spec (a :class:`~arcadebench.specs.Spec` or a spec name).
        game: its game or level.
        log: the log file (``None``: record nothing; see :func:`monitor` to add one later).
        run: the run id written with every episode.
        seed: the run's seed (default: the first ``reset(seed=...)``).
        resume: continue an existing log of this run; without it a log that already has episodes
            is refused, so a new run never continues an old one by accident.
        deviations: settings that differ from the spec (``{key: {"spec": ..., "used": ...}}``).
        settings: the environment settings, for the log header.
        env_id: the Gymnasium id, for the records.
        algorithm: the agent's name, for the log header (the scorer's algorithm name).
        budget_steps: a tighter step budget than the spec's (e.g. the runner's ``steps``).
        budget_frames: a tighter frame budget than the spec's.
        unlogged_ok: playing a training protocol without a log is intended (``log_dir=False``);
            otherwise its first reset without a log warns once, since nothing will be scorable.
        phase: ``"evaluation"``: the evaluation episodes of a protocol scored after training,
            logged as run ``<run>.eval`` outside the training budget
            (:class:`~arcadebench.records.RunRecorder`).
        record_actions: also write what re-simulating each logged episode needs (its start and
            its actions) to ``<run>.replay`` (:mod:`~arcadebench.wrappers.recording`), so that
            ``arcadebench verify`` and ``replay`` can play it again.

    Example:
        >>> import gymnasium as gym, arcadebench
        >>> env = gym.make("arcadebench/Atari5-Qbert-v0")
        >>> mon = arcadebench.wrappers.monitor.find_monitor(env)
        >>> mon.log is None, mon.budget_steps, mon.episode
        (True, None, 0)
        >>> env.close()
    """

    def __init__(
        self,
        env: gym.Env,
        spec: Spec | str,
        game: str,
        *,
        log: str | os.PathLike[str] | None = None,
        run: str = "0",
        seed: int | None = None,
        resume: bool = False,
        deviations: Mapping[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None,
        env_id: str | None = None,
        algorithm: str | None = None,
        budget_steps: int | None = None,
        budget_frames: int | None = None,
        unlogged_ok: bool = False,
        phase: Literal["training", "evaluation"] = "training",
        record_actions: bool = True,
    ) -> None:
        spec = load_spec(spec)
        game = spec.resolve_game(game)
        recorder = RunRecorder(
            spec,
            game,
            run=run,
            env_id=env_id or (env.spec.id if env.spec is not None else None),
            seed=seed,
            algorithm=algorithm,
            settings=dict(settings or {}),
            deviations=dict(deviations or {}),
            budget_steps=budget_steps,
            budget_frames=budget_frames,
            phase=phase,
        )
        gym.utils.RecordConstructorArgs.__init__(self, spec=spec.name, game=game, run=run)
        gym.Wrapper.__init__(self, env)
        self._recorder = recorder
        # every step publishes the stream's totals when the run's sum matters during episodes
        self._publish = recorder.budgeted or bool(spec.evaluation.checkpoints)
        self._misuse = MisuseDetector()
        self._standard = isinstance(env.unwrapped, StandardAtariEnv)
        self._ale = getattr(env.unwrapped, "ale", None)  # lives, to watch for life-loss wrappers
        self._lives = 0
        self._lost_life = False
        self._unlogged_ok = unlogged_ok
        self._in_episode = False
        self._recording = EpisodeRecording(state_digest_reader(env)) if record_actions else None
        self._recording_steps = False  # this episode is recorded (a log is open)
        self._start_episode_counters()
        try:
            if log is not None:
                self.open_log(log, run=run, seed=seed, resume=resume)
        except BaseException:
            recorder.close()
            raise

    # -- read-only state ------------------------------------------------------------------
    @property
    def protocol(self) -> Spec:
        """The protocol spec this environment follows."""
        return self._recorder.spec

    @property
    def game(self) -> str:
        """The canonical game or level name."""
        return self._recorder.game

    @property
    def recorder(self) -> RunRecorder:
        """This environment's stream of the run (numbering, totals, budget and log)."""
        return self._recorder

    @property
    def log(self) -> Path | None:
        """The log file, or ``None`` when nothing is recorded."""
        return self._recorder.log

    @property
    def run(self) -> str:
        """The run id written with every episode (``<run>.eval`` in the evaluation phase)."""
        return self._recorder.run

    @property
    def phase(self) -> Literal["training", "evaluation"]:
        """``training``, or ``evaluation`` (a protocol's evaluation episodes after training)."""
        return self._recorder.phase

    @property
    def stream(self) -> int:
        """This environment's index among the run's environments (``env`` in its records)."""
        return self._recorder.stream

    @property
    def episode(self) -> int:
        """Index of this environment's next episode (continues a resumed stream)."""
        return self._recorder.episode

    @property
    def complete_episodes(self) -> int:
        """Complete episodes of this environment so far (a resumed stream's included)."""
        return self._recorder.complete_episodes

    @property
    def total_steps(self) -> int:
        """Agent steps of this environment so far, the current episode included."""
        return self._recorder.total_steps + self._ep_steps

    @property
    def total_frames(self) -> int:
        """Emulator frames of this environment so far, the current episode included."""
        return self._recorder.total_frames + self._ep_frames

    @property
    def run_totals(self) -> tuple[int, int]:
        """The run's ``(steps, frames)`` over all its environments, as published so far."""
        return self._recorder.live.totals()

    @property
    def budget_steps(self) -> int | None:
        """The run's step budget, ``None`` if unlimited."""
        return self._recorder.budget_steps

    @property
    def budget_frames(self) -> int | None:
        """The run's frame budget, ``None`` if unlimited."""
        return self._recorder.budget_frames

    @property
    def exhausted(self) -> bool:
        """Whether the run's budget is used up (a further step raises)."""
        return self._recorder.exhausted

    @property
    def last_episode(self) -> EpisodeRecord | None:
        """The record of the last finished episode (also when no log is written)."""
        return self._recorder.last

    # -- logging --------------------------------------------------------------------------
    def open_log(
        self,
        path: str | os.PathLike[str],
        *,
        run: str | None = None,
        seed: int | None = None,
        resume: bool = False,
        relay: Relay | None = None,
    ) -> None:
        """Write this environment's episodes to the run logged at ``path``.

        A run that other environments are writing now is joined (one training run, many
        environments); otherwise an existing log with episodes is continued only with
        ``resume``. With ``relay`` another process holds the log (a Ray task's driver): the
        episodes are sent there (:mod:`arcadebench.records.relay`).

        Raises:
            ArcadebenchError: already logging, or called after the environment's first step.
            InputError: the existing log is corrupt or belongs to another spec.
        """
        recorder = self._recorder
        if recorder.log is None and (recorder.total_steps or self._ep_steps):
            raise ArcadebenchError(
                "attach the log before the first step, so that no episode is missed"
            )
        recorder.open(path, run=run, resume=resume, relay=relay)
        recorder.note_seed(seed)
        self._start_episode_counters()
        if self._recording is not None and self._in_episode:  # attached after the reset
            self._recording.begin({"unknown": "the log was attached after the episode's reset"})
            self._recording_steps = True

    def set_budget(self, steps: int | None = None, frames: int | None = None) -> None:
        """Tighten the run's budget (the runner's ``steps``); it can never exceed the spec's."""
        self._recorder.tighten_budget(steps, frames)
        self._publish = True

    # -- the episode loop -----------------------------------------------------------------
    def _start_episode_counters(self) -> None:
        self._ep_return = 0.0
        self._ep_steps = 0
        self._ep_frames = 0
        self._rollover: list[float] = []
        self._t0 = time.perf_counter()

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Start an episode; an unfinished one is logged as incomplete (``end_reason: "reset"``).

        Once the run's budget is used up the environment is still reset (a vector env resets
        an env whose episode just ended), but no episode starts: ``info["arcadebench"]`` says
        ``budget_exhausted`` and the next step raises :class:`BudgetExhausted`.
        """
        recorder = self._recorder
        self._misuse.on_reset(self._standard)
        if self._in_episode and self._ep_steps:
            self._finish(complete=False, end_reason="reset")
        elif recorder.log is None and not self._unlogged_ok:
            warn_unlogged(recorder.spec)
        recorder.note_seed(seed)
        start = self._start(seed)
        obs, info = self.env.reset(seed=seed, options=options)
        if self._ale is not None:
            self._lives, self._lost_life = self._ale.lives(), False
        self._start_episode_counters()
        if recorder.exhausted or (recorder.budgeted and recorder.run_used_up()):
            recorder.exhausted = True
            self._in_episode = False
            protocol_info(info)["budget_exhausted"] = True
            return obs, info
        self._ep_frames = info.get("episode_frame_number", 0)
        self._in_episode = True
        if start is not None and self._recording is not None:
            self._recording.begin(start)
        self._recording_steps = start is not None
        return obs, info

    def _start(self, seed: int | None) -> dict[str, Any] | None:
        """Where the episode about to be reset starts, for its replay (``None``: not recorded).

        Taken before the reset: a seed, the stream's previous episode when a lost life goes on
        into this one (the wrapper below continues the game), or a snapshot of the emulator.
        """
        recorder = self._recorder
        if self._recording is None or recorder.log is None:
            return None
        if seed is not None:
            return {"seed": int(seed)}
        last = recorder.last
        if last is not None and last.get("end_reason") == "life_lost":
            return {"continues": int(last["episode"])}
        return {"snapshot": snapshot(self.env)}

    def step(self, action: Any) -> StepResult:
        """Step, count, and log the episode if it ended (or the run's budget cut it)."""
        if not self._in_episode:
            if self._recorder.exhausted:
                raise BudgetExhausted(self._recorder.budget_message())
            raise ArcadebenchError(
                "step() after the episode ended: call reset() to start the next one"
            )
        found = self._misuse.on_step(self._lost_life)
        if found:
            self._recorder.deviations.update(found)
        obs, reward, terminated, truncated, info = self.env.step(action)
        points = float(reward)
        if self._recording_steps:
            self._recording.add(action, points)  # type: ignore[union-attr]  # set with it
        if self._ale is not None:
            lives = self._ale.lives()
            self._lost_life, self._lives = lives < self._lives, lives
        self._ep_return += points
        self._ep_steps += 1
        self._ep_frames = info.get("episode_frame_number", self._ep_frames)
        extra = info.get("arcadebench")
        if extra and extra.get("rollover_rewards"):
            self._rollover.extend(extra["rollover_rewards"])
        over = self._publish and self._recorder.step(self._ep_steps, self._ep_frames)
        if terminated or truncated:
            extra = dict(extra) if extra else {}
            extra.setdefault("end_reason", "game_over" if terminated else "time_limit")
            info["arcadebench"] = extra
            extra["episode"] = self._finish(complete=True, end_reason=extra["end_reason"])
        elif over:
            truncated = True  # the run is over: a truncation, so a training loop handles it as one
            extra = info["arcadebench"] = {**(extra or {}), "end_reason": "budget"}
            extra["episode"] = self._finish(complete=False, end_reason="budget")
        return obs, reward, terminated, truncated, info

    def _finish(self, complete: bool, end_reason: str) -> dict[str, Any]:
        """Log the episode; its summary goes into the last step's ``info["arcadebench"]``."""
        record = self._recorder.finish(
            episode_return=self._ep_return,
            steps=self._ep_steps,
            frames=int(self._ep_frames),
            end_reason=end_reason,
            complete=complete,
            rollover_rewards=[float(r) for r in self._rollover],
            wall_time=time.perf_counter() - self._t0,
            replay=self._recording.fields() if self._recording_steps else None,  # type: ignore[union-attr]  # set with it
        )
        self._in_episode = False
        self._recording_steps = False
        self._start_episode_counters()
        return episode_summary(record)

    def close(self) -> None:
        """Leave the run (its log stays for the others), then close the environment."""
        self._recorder.close()
        super().close()


def find_monitor(env: gym.Env) -> EpisodeMonitor | None:
    """The :class:`EpisodeMonitor` inside ``env``'s wrapper stack, or ``None``."""
    while isinstance(env, gym.Wrapper):
        if isinstance(env, EpisodeMonitor):
            return env
        env = env.env
    return None


def monitor(
    env: gym.Env,
    log: str | os.PathLike[str] | None = None,
    *,
    log_dir: str | os.PathLike[str] | None = None,
    run: str = "0",
    seed: int | None = None,
    resume: bool = False,
    algorithm: str | None = None,
    spec: Spec | str | None = None,
    game: str | None = None,
    relay: Relay | None = None,
    record_actions: bool = True,
) -> gym.Env:
    """Record every episode of ``env`` to a log; returns the environment to use.

    For an arcadebench environment the log is attached to the monitor already inside it, below
    any wrappers you added, so returns stay the protocol's even if you clip rewards on top.
    Another environment is wrapped in a new :class:`EpisodeMonitor` (``spec`` and ``game``
    required). Call it before the first step.

    Args:
        env: the environment.
        log: the log file.
        log_dir: instead, the root: ``<log_dir>/<spec>/<game>/<run>.jsonl``; with neither,
            ``$ARCADEBENCH_LOG_DIR``.
        run: the run id (one log per run).
        seed: the run's seed, recorded with each episode.
        resume: continue an existing log of this run.
        algorithm: the agent's name, recorded in the log header.
        spec: the protocol, for a non-arcadebench environment.
        game: the game, for a non-arcadebench environment.
        relay: the log is another process's (a Ray task's driver): send the episodes there
            (:mod:`arcadebench.records.relay`).
        record_actions: for a non-arcadebench environment wrapped here, record what replaying
            its episodes needs (an arcadebench environment's monitor was told when it was made).

    Example:
        >>> import json, tempfile, gymnasium as gym, arcadebench
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     env = gym.make("arcadebench/Atari5-Qbert-v0")
        ...     env = arcadebench.monitor(env, log_dir=tmp, run="a")
        ...     _ = env.reset(seed=0)
        ...     done = False
        ...     while not done:
        ...         *_, terminated, truncated, _ = env.step(0)
        ...         done = terminated or truncated
        ...     env.close()
        ...     lines = open(f"{tmp}/atari5/qbert/a.jsonl").read().splitlines()
        >>> [json.loads(line)["kind"] for line in lines]
        ['header', 'episode']
    """
    inner = find_monitor(env)
    if inner is None:
        if spec is None or game is None:
            kwargs = env.spec.kwargs if env.spec is not None else {}
            spec, game = spec or kwargs.get("spec"), game or kwargs.get("game")
        if spec is None or game is None:
            raise ArcadebenchError(
                "`spec` and `game` must be given for a non-arcadebench environment, "
                f"got {spec!r} and {game!r}"
            )
        env = inner = EpisodeMonitor(
            env, spec, game, run=run, seed=seed, algorithm=algorithm, record_actions=record_actions
        )
    if log is None:
        directory = log_dir if log_dir is not None else os.environ.get(LOG_DIR_ENV) or None
        if directory is None:
            raise ArcadebenchError(
                f"`log` or `log_dir` must be given (or ${LOG_DIR_ENV} set), got neither: "
                "where should the episodes go?"
            )
        log = log_path(directory, inner.protocol.name, inner.game, phase_run(run, inner.phase))
    if algorithm is not None:
        inner.recorder.algorithm = algorithm
    inner.open_log(log, run=run, seed=seed, resume=resume, relay=relay)
    return env
