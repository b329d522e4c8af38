"""The episode monitor: one fsynced JSON line per finished episode, and the run's budget.

SABER/HWR and Sonic are *training* protocols: their scores are means over the episodes a learning
agent plays (SABER Section 3.2: the last 100 training episodes before each frame checkpoint;
Sonic Section 3.9: every episode of the 1M timesteps on a test level). So every protocol
environment records every episode it plays, whoever drives it (a training loop, the runner),
and stops a run that tries to go past the protocol's budget, as retro-contest's evaluation
server did (``TimestepTimeoutError``).

:class:`EpisodeMonitor` is the outermost protocol wrapper of every registered environment
(``benchmarks/envs.py``), so it sees the protocol return: after the rollover guard, before any
clipping or shaping an agent adds on top. It writes nothing unless given a log (``log_dir`` to
``gym.make``, ``ARCADEBENCH_LOG_DIR``, or :func:`monitor`). The log format is DEVELOPING.md's
"Episode log": an optional header line, then one ``{"kind": "episode", ...}`` line per episode,
each written with one ``write`` and ``fsync`` so a killed process loses at most the episode in
flight. An exclusive ``flock`` keeps a second process (or a second environment in this process)
from writing the same log.

Per step the monitor only adds to counters and reads two ``info`` keys; everything else happens
once per episode.

Classes: EpisodeMonitor.
Functions: monitor, find_monitor, log_path.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym

from arcadebench.errors import ArcadebenchError, BudgetExhausted
from arcadebench.records import (
    LOG_DIR_ENV,
    LogFile,
    RunIdentity,
    check_run,
    episode_record,
    header_record,
    log_path,
    package_versions,
    parse_log,
    tightest,
)
from arcadebench.specs import Spec, load_spec

__all__ = ["LOG_DIR_ENV", "EpisodeMonitor", "find_monitor", "log_path", "monitor"]

_NO_LIMIT = sys.maxsize


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
        log: str | os.PathLike | None = None,
        run: str = "0",
        seed: int | None = None,
        resume: bool = False,
        deviations: Mapping[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None,
        env_id: str | None = None,
        algorithm: str | None = None,
        budget_steps: int | None = None,
        budget_frames: int | None = None,
    ) -> None:
        spec = load_spec(spec)
        game = spec.resolve_game(game)
        check_run(run)
        for name, value in (("budget_steps", budget_steps), ("budget_frames", budget_frames)):
            if value is not None and (type(value) is not int or value <= 0):
                raise ArcadebenchError(
                    f"`{name}` must be a positive integer or None, got {value!r}"
                )
        gym.utils.RecordConstructorArgs.__init__(self, spec=spec.name, game=game, run=run)
        gym.Wrapper.__init__(self, env)
        self._protocol = spec
        self._game = game
        self._env_id = env_id or (env.spec.id if env.spec is not None else None)
        self._deviations = dict(deviations or {})
        self._settings = dict(settings or {})
        self._algorithm = algorithm
        self._budget_steps = tightest(spec.evaluation.budget_steps, budget_steps)
        self._budget_frames = tightest(spec.evaluation.budget_frames, budget_frames)
        self._run = run
        self._seed = seed
        self._log: LogFile | None = None
        self._episode = 0
        self._complete = 0
        self._total_steps = 0
        self._total_frames = 0
        self._exhausted = False
        self._in_episode = False
        self._last: dict[str, Any] | None = None
        self._start_episode_counters()
        if log is not None:
            self.open_log(log, run=run, seed=seed, resume=resume)

    # -- read-only state ------------------------------------------------------------------
    @property
    def protocol(self) -> Spec:
        """The protocol spec this environment follows."""
        return self._protocol

    @property
    def game(self) -> str:
        """The canonical game or level name."""
        return self._game

    @property
    def log(self) -> Path | None:
        """The log file, or ``None`` when nothing is recorded."""
        return self._log.path if self._log is not None else None

    @property
    def run(self) -> str:
        """The run id written with every episode."""
        return self._run

    @property
    def episode(self) -> int:
        """Index of the next episode to be logged (continues a resumed log)."""
        return self._episode

    @property
    def complete_episodes(self) -> int:
        """Complete episodes of the run so far (a resumed log's included)."""
        return self._complete

    @property
    def total_steps(self) -> int:
        """Agent steps of the run so far, the current episode included."""
        return self._total_steps + self._ep_steps

    @property
    def total_frames(self) -> int:
        """Emulator frames of the run so far, the current episode included."""
        return self._total_frames + self._ep_frames

    @property
    def budget_steps(self) -> int | None:
        """The run's step budget (``None``: unlimited)."""
        return self._budget_steps

    @property
    def budget_frames(self) -> int | None:
        """The run's frame budget (``None``: unlimited)."""
        return self._budget_frames

    @property
    def exhausted(self) -> bool:
        """Whether the budget is used up (further steps and resets raise)."""
        return self._exhausted

    @property
    def last_episode(self) -> dict[str, Any] | None:
        """The record of the last finished episode (also when no log is written)."""
        return self._last

    # -- logging --------------------------------------------------------------------------
    def open_log(
        self,
        path: str | os.PathLike,
        *,
        run: str | None = None,
        seed: int | None = None,
        resume: bool = False,
    ) -> None:
        """Start writing episodes to ``path``; with ``resume``, continue the run logged there.

        Raises:
            ArcadebenchError: already logging, or called after the run started.
            LogInUse: another writer holds the log.
            InputError: the existing log is corrupt or belongs to another spec.
        """
        if self._log is not None:
            raise ArcadebenchError(
                f"this environment already logs to {self._log.path}; one log per environment"
            )
        if self._total_steps or self._ep_steps:
            raise ArcadebenchError(
                "attach the log before the first step, so that no episode is missed"
            )
        run = check_run(run if run is not None else self._run)
        log = LogFile(Path(path))
        try:
            previous = self._previous_run(log.path, run)
            if previous is not None and not resume:
                raise ArcadebenchError(
                    f"{log.path} already holds {len(previous.returns)} episodes of run {run!r}; "
                    "continue that run with resume=True (`arcadebench run --resume`), or start "
                    "a new one under another run id or log directory"
                )
        except BaseException:
            log.close()
            raise
        self._log, self._run = log, run
        if seed is not None:
            self._seed = seed
        if previous is not None:
            self._episode = len(previous.returns)
            self._complete = int(previous.complete.sum())
            self._total_steps = int(previous.total_steps[-1])
            self._total_frames = int(previous.total_frames[-1])
            self._start_episode_counters()
            self._exhausted = self._budget_used()
        elif log.empty:
            log.append(self._header())

    def _previous_run(self, path: Path, run: str) -> Any:
        """The run already in ``path`` (via the scorer's reader), or ``None``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deviations were reported when they were recorded
            runs = parse_log(self._protocol, path)
        for found in runs:
            if found.game != self._game or found.run != run:
                raise ArcadebenchError(
                    f"{path} holds {found.game} run {found.run!r}, not {self._game} run {run!r}; "
                    "one log per run: pick another log file"
                )
        return runs[0] if runs else None

    def _identity(self) -> RunIdentity:
        return RunIdentity(
            self._protocol.name,
            self._protocol.version,
            self._protocol.hash,
            self._env_id,
            self._game,
            self._run,
            self._seed,
            self._algorithm,
            self._settings,
            self._deviations,
        )

    def _header(self) -> dict[str, Any]:
        return dict(
            header_record(
                self._identity(), (self._budget_steps, self._budget_frames), package_versions()
            )
        )

    def set_budget(self, steps: int | None = None, frames: int | None = None) -> None:
        """Tighten the run's budget (the runner's ``steps``); it can never exceed the spec's."""
        for name, value in (("steps", steps), ("frames", frames)):
            if value is not None and (type(value) is not int or value <= 0):
                raise ArcadebenchError(
                    f"`{name}` must be a positive integer or None, got {value!r}"
                )
        self._budget_steps = tightest(self._budget_steps, steps)
        self._budget_frames = tightest(self._budget_frames, frames)
        self._set_limits()
        self._exhausted = self._exhausted or self._budget_used()

    # -- the episode loop -----------------------------------------------------------------
    def _start_episode_counters(self) -> None:
        self._ep_return = 0.0
        self._ep_steps = 0
        self._ep_frames = 0
        self._rollover: list[float] = []
        self._t0 = time.perf_counter()
        self._set_limits()

    def _set_limits(self) -> None:
        self._steps_left = (
            _NO_LIMIT if self._budget_steps is None else self._budget_steps - self._total_steps
        )
        self._frames_left = (
            _NO_LIMIT if self._budget_frames is None else self._budget_frames - self._total_frames
        )

    def _budget_used(self) -> bool:
        return self._steps_left <= 0 or self._frames_left <= 0

    def _budget_message(self) -> str:
        spec, used = self._protocol, []
        if self._budget_steps is not None:
            used.append(f"{self._total_steps:,} of {self._budget_steps:,} steps")
        if self._budget_frames is not None:
            used.append(f"{self._total_frames:,} of {self._budget_frames:,} frames")
        return (
            f"run {self._run!r} of {self._game} has used its budget ({' and '.join(used)}; "
            f"{spec.name} evaluation.budget): the protocol allows no more interaction; "
            "start a new run (another run id or log directory) to play on"
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode; an unfinished one is logged as incomplete (``end_reason: "reset"``)."""
        if self._exhausted:
            raise BudgetExhausted(self._budget_message())
        if self._in_episode and self._ep_steps:
            self._finish(complete=False, end_reason="reset")
        if self._seed is None and seed is not None:
            self._seed = seed
        obs, info = self.env.reset(seed=seed, options=options)
        self._start_episode_counters()
        self._ep_frames = info.get("episode_frame_number", 0)
        self._in_episode = True
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step, count, and log the episode if it ended (or the budget cut it)."""
        if not self._in_episode:
            if self._exhausted:
                raise BudgetExhausted(self._budget_message())
            raise ArcadebenchError(
                "step() after the episode ended: call reset() to start the next one"
            )
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._ep_return += float(reward)
        self._ep_steps += 1
        self._ep_frames = info.get("episode_frame_number", self._ep_frames)
        extra = info.get("arcadebench")
        if extra:
            rollover = extra.get("rollover_rewards")
            if rollover:
                self._rollover.extend(rollover)
        if terminated or truncated:
            extra = dict(extra) if extra else {}
            extra.setdefault("end_reason", "game_over" if terminated else "time_limit")
            info["arcadebench"] = extra
            self._finish(complete=True, end_reason=extra["end_reason"])
        elif self._ep_steps >= self._steps_left or self._ep_frames >= self._frames_left:
            truncated = True  # the run is over: a truncation, so a training loop handles it as one
            info["arcadebench"] = {**(extra or {}), "end_reason": "budget"}
            self._finish(complete=False, end_reason="budget")
        return obs, reward, terminated, truncated, info

    def _finish(self, complete: bool, end_reason: str) -> None:
        self._total_steps += self._ep_steps
        self._total_frames += self._ep_frames
        record = episode_record(
            self._identity(),
            episode=self._episode,
            episode_return=self._ep_return,
            steps=self._ep_steps,
            frames=int(self._ep_frames),
            total_steps=self._total_steps,
            total_frames=int(self._total_frames),
            end_reason=end_reason,
            complete=complete,
            rollover_rewards=[float(r) for r in self._rollover],
            wall_time=time.perf_counter() - self._t0,
        )
        if self._log is not None:
            self._log.append(record)
        self._last = record
        self._episode += 1
        self._complete += complete
        self._in_episode = False
        self._start_episode_counters()
        self._exhausted = self._budget_used()

    def close(self) -> None:
        """Release the log (and its lock), then close the environment."""
        if self._log is not None:
            self._log.close()
            self._log = None
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
    log: str | os.PathLike | None = None,
    *,
    log_dir: str | os.PathLike | None = None,
    run: str = "0",
    seed: int | None = None,
    resume: bool = False,
    algorithm: str | None = None,
    spec: Spec | str | None = None,
    game: str | None = None,
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
    if log is None:
        log_dir = log_dir if log_dir is not None else os.environ.get(LOG_DIR_ENV) or None
        if log_dir is None:
            raise ArcadebenchError(
                f"`log` or `log_dir` must be given (or ${LOG_DIR_ENV} set), got neither: "
                "where should the episodes go?"
            )
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
        env = inner = EpisodeMonitor(env, spec, game, run=run, seed=seed, algorithm=algorithm)
    if log is None:
        log = log_path(log_dir, inner.protocol.name, inner.game, run)  # type: ignore[arg-type]
    if algorithm is not None:
        inner._algorithm = algorithm
    inner.open_log(log, run=run, seed=seed, resume=resume)
    return env
