"""Vector-level protocol wrappers: the Atari protocol on a batch of envs stepped together.

ale-py's ``AtariVectorEnv`` steps a batch of emulators in C++ threads and implements the
protocol's native settings itself (sticky actions, full action set, frame skip, frame cap).
These wrappers add what it lacks, on the batched rewards and per-env frame counters, with the
semantics of their single-env twins in :mod:`arcadebench.wrappers`, composed in the same order
(inner to outer): :class:`VectorRolloverGuard` → :class:`VectorMaxStuckTime` →
:class:`VectorEpisodeFrameLimit` → :class:`VectorLifeLossTerminal` (training environments of
DQN 2015 and Atari 100k) → :class:`VectorNoLifeInformation` → :class:`VectorEpisodeMonitor`.
:func:`arcadebench.make_vec` builds the stack.

What they need from the env below (``benchmarks/envs/batched.py``'s ``AtariProtocolVectorEnv``):

- same-step autoreset (Gymnasium's ``AutoresetMode.SAME_STEP``): on a step that ends an
  env's episode, its reward and flags are the finished episode's, its observation is already
  the next episode's first, and the last one is in ``info["final_obs"]`` (rows marked by
  ``info["_final_obs"]``). A protocol wrapper that ends an episode resets that env at once
  (``reset(options={"reset_mask": ...})``), which next-step autoreset could not express: the
  step after the end would have to be a step the env does not take;
- ``info["episode_frame_number"]``: per env, the emulator frames of the episode the step
  belongs to (on its last step, the finished episode's), as the single-env ``info`` has it;
- ``info["next_episode_frame_number"]`` on a step that ends an episode: per env, where one
  ended, the next episode's count after its reset, i.e. the start-up frames ALE's reset
  emulates (0 on most ROMs; 8 on Air Raid, 134 on Name This Game), which the single env counts
  in the next episode (in its stuck time too).

``info["arcadebench"]`` holds the protocol's additions as per-env arrays, each with a
Gymnasium-style ``_<key>`` mask where only some envs have a value:

- ``end_reason`` (object array, ``_end_reason``): why an env's episode ended on this step;
  set by the wrapper that ended it, the monitor fills ``"game_over"``/``"time_limit"``;
- ``rollover_rewards`` (float, ``_rollover_rewards``): the original reward where the guard
  replaced it;
- ``stuck_frames`` (int, every env): frames since the env's last non-zero reward;
- ``episode`` (object, ``_episode``): the summary of an episode that ended on this step (its
  protocol return, length, end reason, and the run's totals then), as the single env's.

Classes: VectorRolloverGuard, VectorMaxStuckTime, VectorEpisodeFrameLimit,
VectorLifeLossTerminal, VectorNoLifeInformation, VectorEpisodeMonitor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv, VectorWrapper

from arcadebench.errors import ArcadebenchError, BudgetExhausted, InvalidArgument
from arcadebench.records import EpisodeRecord, RunRecorder, check_run, log_path, new_memory_run
from arcadebench.specs import Spec, load_spec
from arcadebench.wrappers._checks import check_int, check_real
from arcadebench.wrappers._info import KEY, Options, ResetResult
from arcadebench.wrappers.monitor import episode_summary, warn_unlogged
from arcadebench.wrappers.recording import BatchRecording
from arcadebench.wrappers.rules import (
    correct_rollovers,
    drop_life_information,
    last_reward_frame,
    life_lost,
    limit_reached,
    stuck_frames,
)

__all__ = [
    "VectorEpisodeFrameLimit",
    "VectorEpisodeMonitor",
    "VectorLifeLossTerminal",
    "VectorMaxStuckTime",
    "VectorNoLifeInformation",
    "VectorRolloverGuard",
    "vector_protocol_info",
]

VectorStep = tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]


def _any(mask: np.ndarray) -> bool:
    """``mask.any()`` for a small bool array in 0.1 us instead of numpy's 1 us reduction.

    Every wrapper checks a few masks per step, and with a small batch the Python time between
    two steps of ale-py's vector env adds up to more than itself (its threads go to sleep).
    """
    return b"\x01" in mask.tobytes()


def _all_zero(values: np.ndarray) -> bool:
    """Whether every value's bytes are 0 (``-0.0`` is not, which only costs a slower path)."""
    return not values.tobytes().strip(b"\x00")


def _seeds_of(seed: Any, count: int) -> list[int] | None:
    """The seeds a vector reset gives its ``count`` chosen envs (``seed + k``, or one each).

    Example:
        >>> _seeds_of(5, 3), _seeds_of([7, 9], 2), _seeds_of(None, 2)
        ([5, 6, 7], [7, 9], None)
    """
    if seed is None:
        return None
    if isinstance(seed, int | np.integer):
        return [int(seed) + k for k in range(count)]
    return [int(s) for s in seed]


def vector_protocol_info(info: dict[str, Any]) -> dict[str, Any]:
    """Return ``info["arcadebench"]`` of a vector step, creating it (empty) if absent."""
    found = info.get(KEY)
    if found is None:
        found = info[KEY] = {}
    elif not isinstance(found, dict):
        raise InvalidArgument(f"`info[{KEY!r}]` must be a dict, got {found!r}")
    return found


def set_end_reasons(info: dict[str, Any], ended: np.ndarray, reason: str) -> None:
    """Record ``reason`` for the envs in ``ended`` that have no end reason yet on this step."""
    protocol = vector_protocol_info(info)
    if "end_reason" not in protocol:
        protocol["end_reason"] = np.full(len(ended), None, dtype=object)
        protocol["_end_reason"] = np.zeros(len(ended), dtype=bool)
    new = ended & ~protocol["_end_reason"]
    protocol["end_reason"][new] = reason
    protocol["_end_reason"] |= new


def _end_now(env: VectorEnv | None, obs: Any, info: dict[str, Any], ended: np.ndarray) -> None:
    """End the episodes of the envs in ``ended`` now, resetting them (same-step autoreset).

    The observation they ended on goes into ``info["final_obs"]``, their next episode's first
    into ``obs``, its frame count into ``info["next_episode_frame_number"]``. Without ``env``
    their games go on: the next episode begins at frame 0 on the same observation.
    """
    if "final_obs" not in info:
        info["final_obs"] = np.zeros_like(obs)
        info["_final_obs"] = np.zeros(len(ended), dtype=bool)
    info["final_obs"][ended] = obs[ended]
    info["_final_obs"] = info["_final_obs"] | ended
    if "next_episode_frame_number" not in info:
        info["next_episode_frame_number"] = np.zeros(len(ended), dtype=np.int64)
    if env is None:
        info["next_episode_frame_number"][ended] = 0
        return
    first, reset_info = env.reset(options={"reset_mask": ended})
    obs[ended] = first[ended]
    info["next_episode_frame_number"][ended] = reset_info["episode_frame_number"][ended]


class VectorRolloverGuard(VectorWrapper, gym.utils.RecordConstructorArgs):
    """Undo score-counter wraps per env: :class:`~.RolloverGuard`'s rule on a batch.

    A reward below ``threshold`` gets ``correction`` added (SABER as its authors ran it;
    :func:`~arcadebench.wrappers.rewards.correct_rollovers`); the original values are in
    ``info["arcadebench"]["rollover_rewards"]``.
    """

    def __init__(self, env: VectorEnv, *, threshold: float, correction: float) -> None:
        """Wrap ``env``; a reward strictly below ``threshold`` gets ``correction`` added."""
        threshold = check_real("threshold", threshold)
        correction = check_real("correction", correction)
        gym.utils.RecordConstructorArgs.__init__(self, threshold=threshold, correction=correction)
        VectorWrapper.__init__(self, env)
        self._threshold = np.float64(threshold)  # a numpy scalar compares faster
        self._correction = correction

    def step(self, actions: Any) -> VectorStep:
        """Step; rewards below the threshold are corrected and recorded."""
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        if _all_zero(rewards):  # most steps
            return obs, rewards, terminated, truncated, info
        corrected, low = correct_rollovers(rewards, self._threshold, self._correction)
        if _any(low):
            protocol = vector_protocol_info(info)
            protocol["rollover_rewards"] = np.where(low, rewards, 0.0).astype(np.float64)
            protocol["_rollover_rewards"] = low
            rewards = corrected
        return obs, rewards, terminated, truncated, info


class VectorMaxStuckTime(VectorWrapper, gym.utils.RecordConstructorArgs):
    """Truncate an env's episode after ``max_stuck_frames`` frames without a non-zero reward.

    :class:`~arcadebench.wrappers.MaxStuckTime` per env (SABER's 5 minutes, 18,000 frames;
    Toromanoff et al. 2019, Section 3.1): frames come from ``info["episode_frame_number"]``, a
    non-zero reward restarts the count at that step's last frame, and the step that reaches the
    limit returns ``truncated`` with end reason ``"stuck"`` (unless the episode ends there anyway)
    and resets that env at once. ``info["arcadebench"]["stuck_frames"]`` on every step.
    """

    def __init__(self, env: VectorEnv, max_stuck_frames: int) -> None:
        """Wrap ``env``; ``max_stuck_frames`` rewardless frames end an episode (SABER: 18,000)."""
        max_stuck_frames = check_int("max_stuck_frames", max_stuck_frames, minimum=1)
        gym.utils.RecordConstructorArgs.__init__(self, max_stuck_frames=max_stuck_frames)
        VectorWrapper.__init__(self, env)
        self._max_stuck_frames = np.int64(max_stuck_frames)  # a numpy scalar compares faster
        self._last_reward_frame = np.zeros(env.num_envs, dtype=np.int64)

    def reset(self, *, seed: Any = None, options: Options = None) -> ResetResult:
        """Reset the envs (all, or ``options["reset_mask"]``) and their counts."""
        obs, info = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        chosen = slice(None) if mask is None else mask
        frames = info["episode_frame_number"]
        self._last_reward_frame[chosen] = frames[chosen]
        vector_protocol_info(info)["stuck_frames"] = frames - self._last_reward_frame
        return obs, info

    def step(self, actions: Any) -> VectorStep:
        """Step, and truncate with ``"stuck"`` the envs whose rewardless frames reach the limit."""
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        frames = info["episode_frame_number"]
        last = self._last_reward_frame
        if not _all_zero(rewards):  # most steps have no reward: the count goes on
            last = self._last_reward_frame = last_reward_frame(last, frames, rewards)
        stuck = stuck_frames(frames, last)
        vector_protocol_info(info)["stuck_frames"] = stuck
        # the rule only where some env is at the limit (one comparison on most steps)
        if _any(stuck >= self._max_stuck_frames):
            hit = limit_reached(stuck, self._max_stuck_frames, terminated | truncated)
            if _any(hit):
                truncated = truncated | hit
                set_end_reasons(info, hit, "stuck")
                _end_now(self.env, obs, info, hit)
        if _any(terminated) or _any(truncated):
            ended = terminated | truncated  # counted from the next episode's start, as at reset
            last[ended] = info["next_episode_frame_number"][ended]
        return obs, rewards, terminated, truncated, info


class VectorEpisodeFrameLimit(VectorWrapper, gym.utils.RecordConstructorArgs):
    """Truncate an env's episode at ``max_episode_frames`` frames, end reason ``"frame_limit"``.

    :class:`~arcadebench.wrappers.EpisodeFrameLimit` per env (HWR and Atari-5: 108,000 frames;
    SABER: 21,600,000): ale-py's vector env truncates at the cap natively, so this labels those
    truncations; an env reaching the cap without one is truncated and reset here.
    ``info["arcadebench"]`` exists on every step after this wrapper (possibly empty).
    """

    def __init__(self, env: VectorEnv, max_episode_frames: int) -> None:
        """Wrap ``env``; ``max_episode_frames`` is the cap in emulator frames."""
        max_episode_frames = check_int("max_episode_frames", max_episode_frames, minimum=1)
        gym.utils.RecordConstructorArgs.__init__(self, max_episode_frames=max_episode_frames)
        VectorWrapper.__init__(self, env)
        self._max_episode_frames = np.int64(max_episode_frames)  # compares faster

    def reset(self, *, seed: Any = None, options: Options = None) -> ResetResult:
        """Reset the envs."""
        obs, info = self.env.reset(seed=seed, options=options)
        vector_protocol_info(info)
        return obs, info

    def step(self, actions: Any) -> VectorStep:
        """Step, and label (or make) the truncations at the cap."""
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        vector_protocol_info(info)
        frames = info["episode_frame_number"]
        if not _any(frames >= self._max_episode_frames):  # most steps: one comparison
            return obs, rewards, terminated, truncated, info
        capped = limit_reached(frames, self._max_episode_frames, terminated)
        if _any(capped):
            unlabelled = capped & ~truncated
            if _any(unlabelled):
                truncated = truncated | unlabelled
                _end_now(self.env, obs, info, unlabelled)
            set_end_reasons(info, capped, "frame_limit")
        return obs, rewards, terminated, truncated, info


class VectorLifeLossTerminal(VectorWrapper, gym.utils.RecordConstructorArgs):
    """End an env's learner episode at a lost life, the game going on: a batch's training signal.

    :class:`~arcadebench.wrappers.LifeLossTerminal` per env (DQN 2015, Atari 100k training):
    where the life counter drops before the game ends, the step returns ``terminated`` with end
    reason ``"life_lost"``, and, same-step autoreset style, the observation is already the next
    episode's first (the game is not reset: it is the same screen, also in ``final_obs``).
    ``info["episode_frame_number"]`` counts each learner episode from its start, as the single
    env's. Lives come from ``info["lives"]``, so it goes below
    :class:`VectorNoLifeInformation`.
    """

    def __init__(self, env: VectorEnv) -> None:
        """Wrap ``env``."""
        gym.utils.RecordConstructorArgs.__init__(self)
        VectorWrapper.__init__(self, env)
        self._lives = np.zeros(self.num_envs, dtype=np.int64)
        self._offset = np.zeros(self.num_envs, dtype=np.int64)  # frames before the episode

    def _lives_of(self, info: dict[str, Any]) -> np.ndarray:
        try:
            return np.asarray(info["lives"], dtype=np.int64)
        except KeyError:
            raise InvalidArgument(
                f"`env` must report info['lives'] for VectorLifeLossTerminal, got info keys "
                f"{sorted(info)!r}"
            ) from None

    def reset(self, *, seed: Any = None, options: Options = None) -> ResetResult:
        """Reset the envs chosen (all without a ``reset_mask``): their games start afresh."""
        obs, info = self.env.reset(seed=seed, options=options)
        mask = (options or {}).get("reset_mask")
        chosen = np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask)
        self._lives[chosen] = self._lives_of(info)[chosen]
        self._offset[chosen] = 0
        info["episode_frame_number"] = info["episode_frame_number"] - self._offset
        return obs, info

    def step(self, actions: Any) -> VectorStep:
        """Step; a life lost before the game ends terminates that env's learner episode."""
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        lives = self._lives_of(info)
        frames = info["episode_frame_number"]
        ended = terminated | truncated
        lost = life_lost(self._lives, lives, ended)
        info["episode_frame_number"] = frames - self._offset
        if _any(ended):  # a game ended (and was reset): the next episode counts from 0 again
            self._offset[ended] = 0
        if _any(lost):
            terminated = terminated | lost
            set_end_reasons(info, lost, "life_lost")
            _end_now(None, obs, info, lost)
            self._offset[lost] = frames[lost]
        self._lives = lives
        return obs, rewards, terminated, truncated, info


class VectorNoLifeInformation(VectorWrapper, gym.utils.RecordConstructorArgs):
    """Remove ``lives`` from ``info``: :class:`~arcadebench.wrappers.NoLifeInformation` for a batch.

    SABER, HWR and Atari-5 forbid life information (Toromanoff et al. 2019, Section 3.1;
    Machado et al. 2018); episodes end on game over only, which is ale-py's ``terminated``.
    """

    def __init__(self, env: VectorEnv) -> None:
        """Wrap ``env``."""
        gym.utils.RecordConstructorArgs.__init__(self)
        VectorWrapper.__init__(self, env)

    def reset(self, *, seed: Any = None, options: Options = None) -> ResetResult:
        """Reset; ``lives`` is removed from ``info``."""
        obs, info = self.env.reset(seed=seed, options=options)
        drop_life_information(info)
        return obs, info

    def step(self, actions: Any) -> VectorStep:
        """Step; ``lives`` is removed from ``info``."""
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        drop_life_information(info)
        return obs, rewards, terminated, truncated, info


class VectorEpisodeMonitor(VectorWrapper, gym.utils.RecordConstructorArgs):
    """Record every env's episodes as streams of one run, in the single-env monitor's format.

    The batch is one training run (one learner, ``num_envs`` environments): env ``i`` is a
    stream of run ``run`` through its own :class:`~arcadebench.records.RunRecorder` (the
    single-env monitor's bookkeeping), all writing ``<log_dir>/<spec>/<game>/<run>.jsonl``, so
    the scorer reads one run whose frames are the sum over the envs. Per step it adds the rewards
    to per-env returns and keeps the frame counts (a few microseconds); records are written when
    episodes end.

    Budget: the spec's budget (and ``budget_*``, which may only tighten it) counts the run's
    steps and frames, every env's together (and any other environment writing the run). The
    step that uses it up ends the whole batch: every episode in flight returns ``truncated`` with
    end reason ``"budget"`` and is logged as incomplete, and further steps raise
    :class:`~arcadebench.errors.BudgetExhausted`. A reset in the middle of episodes logs them as
    incomplete (``"reset"``); episodes still running at ``close()`` are not logged.

    Args:
        env: the protocol vector env (same-step autoreset; see the module docstring).
        spec: its protocol spec.
        game: its game.
        log_dir: the log root (``None``: record nothing).
        run: the run id.
        resume: continue an old run logged there (its streams go on where they stopped).
        deviations: settings that differ from the spec.
        settings: the environment settings, for the log header.
        env_id: the Gymnasium id of the single env, for the records.
        algorithm: the agent's name, for the log header.
        budget_steps: a tighter step budget than the spec's.
        budget_frames: a tighter frame budget than the spec's.
        unlogged_ok: playing without a log is intended (else a training protocol warns once).
        record_actions: also record what replaying each logged episode needs
            (:mod:`~arcadebench.wrappers.recording`): per env its seed and every action since, as
            a batched emulator's per-env states cannot be read (an episode that follows another
            of its env continues it).
        obs_type: the batch's observation type (``"standard"``, ``"rgb"``, ``"grayscale"``):
            the recordings then carry digests of the observations, which a replay renders
            alike (``None``: no digests).
    """

    def __init__(
        self,
        env: VectorEnv,
        spec: Spec | str,
        game: str,
        *,
        log_dir: str | os.PathLike[str] | None = None,
        run: str = "0",
        resume: bool = False,
        deviations: Mapping[str, Any] | None = None,
        settings: Mapping[str, Any] | None = None,
        env_id: str | None = None,
        algorithm: str | None = None,
        budget_steps: int | None = None,
        budget_frames: int | None = None,
        unlogged_ok: bool = False,
        record_actions: bool = True,
        obs_type: str | None = None,
    ) -> None:
        spec = load_spec(spec)
        game = spec.resolve_game(game)
        check_run(run)
        n = env.num_envs
        recorders: list[RunRecorder] = []
        memory_run = new_memory_run()  # until a log is opened, the batch is one run in memory
        try:
            for _ in range(n):
                recorder = RunRecorder(
                    spec,
                    game,
                    run=run,
                    env_id=env_id,
                    algorithm=algorithm,
                    settings=dict(settings or {}),
                    deviations=dict(deviations or {}),
                    budget_steps=budget_steps,
                    budget_frames=budget_frames,
                    memory_run=memory_run,
                )
                recorders.append(recorder)
                if log_dir is not None:
                    recorder.open(log_path(log_dir, spec.name, game, run), resume=resume)
        except BaseException:
            for recorder in recorders:
                recorder.close()
            raise
        gym.utils.RecordConstructorArgs.__init__(self, spec=spec.name, game=game, run=run)
        VectorWrapper.__init__(self, env)
        self._protocol, self._game, self._run = spec, game, run
        self._recorders = recorders
        self._unlogged_ok = unlogged_ok
        self._publish = recorders[0].budgeted or bool(spec.evaluation.checkpoints)
        self._t = 0  # steps of the batch
        self._start_t = np.zeros(n, dtype=np.int64)  # _t when each env's episode started
        self._ep_return = np.zeros(n, dtype=np.float64)
        self._ep_frames = np.zeros(n, dtype=np.int64)  # frames of the running episodes
        self._t0 = np.full(n, time.perf_counter())
        self._rollover: list[list[float]] = [[] for _ in range(n)]
        self._in_episode = False
        logged = recorders[0].log is not None
        self._recording = BatchRecording(n, obs_type) if record_actions and logged else None

    # -- read-only state ------------------------------------------------------------------
    @property
    def protocol(self) -> Spec:
        """The protocol spec."""
        return self._protocol

    @property
    def game(self) -> str:
        """The canonical game name."""
        return self._game

    @property
    def run(self) -> str:
        """The run id; the batch is one run."""
        return self._run

    @property
    def log(self) -> Path | None:
        """The run's log (``None`` when nothing is recorded)."""
        return self._recorders[0].log

    @property
    def streams(self) -> list[int]:
        """Each env's stream index in the run (``env`` in its records)."""
        return [r.stream for r in self._recorders]

    @property
    def episodes(self) -> np.ndarray:
        """Episodes logged per env so far."""
        return np.array([r.episode for r in self._recorders], dtype=np.int64)

    @property
    def total_steps(self) -> np.ndarray:
        """Agent steps per env so far, the current episodes included."""
        finished = np.array([r.total_steps for r in self._recorders], dtype=np.int64)
        return finished + (self._t - self._start_t)

    @property
    def total_frames(self) -> np.ndarray:
        """Emulator frames per env so far, the current episodes included."""
        finished = np.array([r.total_frames for r in self._recorders], dtype=np.int64)
        return finished + self._ep_frames

    @property
    def run_totals(self) -> tuple[int, int]:
        """The run's ``(steps, frames)`` over every env of it, as published so far."""
        return self._recorders[0].live.totals()

    @property
    def exhausted(self) -> bool:
        """Whether the run's budget is used up (further steps raise)."""
        return any(r.exhausted for r in self._recorders)

    @property
    def last_episodes(self) -> list[EpisodeRecord | None]:
        """Each env's last finished episode record (also when no log is written)."""
        return [r.last for r in self._recorders]

    # -- the episode loop -----------------------------------------------------------------
    def reset(self, *, seed: Any = None, options: Options = None) -> ResetResult:
        """Reset the envs; episodes in flight are logged as incomplete (``"reset"``)."""
        if self.exhausted:
            raise BudgetExhausted(self._recorders[0].budget_message())
        mask = (options or {}).get("reset_mask")
        chosen = np.ones(self.num_envs, dtype=bool) if mask is None else np.asarray(mask)
        if self._in_episode:
            for i in np.flatnonzero(chosen & (self._start_t < self._t)).tolist():
                self._finish(i, complete=False, end_reason="reset")
        recording = self._recording
        indices = np.flatnonzero(chosen).tolist()
        if (
            recording is not None
            and seed is None
            and any(recording.starts[i] is None for i in indices)
        ):
            # a batched emulator's unseeded first reset is seeded from the clock, and its state
            # cannot be read: seeds from the system's entropy instead, which a replay can take
            state = np.random.SeedSequence().generate_state(len(indices))
            seed = [int(s) & 0x7FFFFFFF for s in state]
        seeds = _seeds_of(seed, len(indices))
        for i, value in zip(indices, seeds or (), strict=False):
            self._recorders[i].note_seed(value)  # a stream's seed is its env's first
        if self.log is None and not self._unlogged_ok:
            warn_unlogged(self._protocol)
        if recording is not None:  # where the episodes start: their seeds, else where they were
            starts = recording.starts
            for k, i in enumerate(indices):
                last = self._recorders[i].last
                if seeds is not None:
                    starts[i] = {"seed": seeds[k]}
                elif last is not None:
                    starts[i] = {"continues": int(last["episode"])}
                else:  # ALE seeded it from the clock, and its state cannot be read
                    starts[i] = {"unknown": "an unseeded first reset of a batched emulator"}
        obs, info = self.env.reset(seed=seed, options=options)
        if recording is not None:
            for i in indices:
                recording.begin_digests(i, self._t, obs[i])
        self._ep_return[chosen] = 0.0
        self._start_t[chosen] = self._t
        self._ep_frames = np.where(chosen, info["episode_frame_number"], self._ep_frames)
        self._t0[chosen] = time.perf_counter()
        self._in_episode = True
        return obs, info

    def step(self, actions: Any) -> VectorStep:
        """Step every env, count, and log the episodes that ended (or the budget cut)."""
        if not self._in_episode:
            if self.exhausted:
                raise BudgetExhausted(self._recorders[0].budget_message())
            raise ArcadebenchError("step() before reset(): reset the envs first")
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        recording = self._recording
        if recording is not None:
            recording.add(actions, rewards)
        self._t += 1
        if recording is not None and self._t >= recording.next_due:
            recording.digest_due(self._t, obs, info)
        self._ep_return += rewards
        self._ep_frames = info["episode_frame_number"]
        protocol = info.get(KEY)
        if protocol is not None and "_rollover_rewards" in protocol:
            originals = protocol["rollover_rewards"]
            for i in np.flatnonzero(protocol["_rollover_rewards"]).tolist():
                self._rollover[i].append(float(originals[i]))
        over = False
        if self._publish:
            steps = (self._t - self._start_t).tolist()
            for recorder, n_steps, frames in zip(
                self._recorders, steps, self._ep_frames.tolist(), strict=True
            ):
                recorder.publish(n_steps, frames)
            over = self._recorders[0].run_used_up()
        if over or _any(terminated) or _any(truncated):
            self._end_episodes(obs, terminated, truncated, info, over)
            if over:
                truncated = truncated | ~terminated
        return obs, rewards, terminated, truncated, info

    def _end_episodes(
        self,
        obs: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        info: dict[str, Any],
        over: bool,
    ) -> None:
        """Log the episodes that ended on this step (and, ``over`` budget, cut the others).

        An env whose episode ended was reset in the step: ``obs`` is its next episode's first
        observation, ``info["final_obs"]`` its last.
        """
        ended = terminated | truncated
        if over:
            set_end_reasons(info, ~ended, "budget")
        set_end_reasons(info, terminated, "game_over")  # where no wrapper said why
        set_end_reasons(info, truncated, "time_limit")
        protocol = vector_protocol_info(info)
        reasons = protocol["end_reason"]
        summaries = protocol["episode"] = np.full(self.num_envs, None, dtype=object)
        protocol["_episode"] = ended | over
        self._ep_frames = self._ep_frames.astype(np.int64)  # finish() restarts the envs' counts
        for i in np.flatnonzero(ended).tolist():
            summaries[i] = self._finish(
                i, complete=True, end_reason=reasons[i], last=info["final_obs"][i]
            )
            if self._recording is not None and not over:
                self._recording.begin_digests(i, self._t, obs[i])
        if _any(ended):  # the next episodes have started, with their start-up frames
            self._ep_frames[ended] = info["next_episode_frame_number"][ended]
        if over:
            for i in np.flatnonzero(~ended).tolist():
                summaries[i] = self._finish(i, complete=False, end_reason="budget", last=obs[i])
            for recorder in self._recorders:
                recorder.exhausted = True  # the batch steps together: every stream stops here
            self._in_episode = False

    def _finish(
        self, i: int, complete: bool, end_reason: str, last: np.ndarray | None = None
    ) -> dict[str, Any]:
        """Log env ``i``'s episode, start counting its next one; the episode's summary.

        The env itself was already reset, by the same-step autoreset or by a wrapper; ``last``
        is the observation its episode ended on, where it is known.
        """
        now = time.perf_counter()
        recording = self._recording
        replay = (
            None if recording is None else recording.fields(i, int(self._start_t[i]), self._t, last)
        )
        record = self._recorders[i].finish(
            episode_return=float(self._ep_return[i]),
            steps=self._t - int(self._start_t[i]),
            frames=int(self._ep_frames[i]),
            end_reason=end_reason,
            complete=complete,
            rollover_rewards=self._rollover[i],
            wall_time=now - float(self._t0[i]),
            replay=replay,
        )
        self._ep_return[i] = 0.0
        self._start_t[i] = self._t
        self._ep_frames[i] = 0
        if recording is not None:  # the env's next episode follows on from this one
            recording.starts[i] = {"continues": int(record["episode"])}
            recording.forget_before(int(self._start_t.min()))
        self._rollover[i] = []
        self._t0[i] = now
        return episode_summary(record)

    def close(self, **kwargs: Any) -> None:
        """Leave the run (its log stays), then close the envs."""
        for recorder in self._recorders:
            recorder.close()
        super().close(**kwargs)
