"""Rewards: the protocol's reward rules and the baselines' opt-in shaping.

Protocol (part of the score): :class:`RolloverGuard` (SABER) and :class:`SonicProgressReward`
(Sonic, computed by :class:`ContestProgress`). Training aids, *not* part of the score — put
them outside the protocol env and its monitor: :class:`AllowBacktracking` and reward clipping to
[-1, 1], which is Gymnasium's own ``gymnasium.wrappers.ClipReward(env, -1.0, 1.0)`` (it does
exactly ``np.clip``; there is nothing to add).

Classes: RolloverGuard, ContestProgress, SonicProgressReward, AllowBacktracking.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym

from arcadebench.errors import InvalidArgument
from arcadebench.wrappers._checks import check_int, check_real
from arcadebench.wrappers._info import (
    EndReason,
    Options,
    ResetResult,
    StepResult,
    protocol_info,
    set_end_reason,
)
from arcadebench.wrappers.rules import correct_rollovers

__all__ = [
    "AllowBacktracking",
    "ContestProgress",
    "RolloverGuard",
    "SonicProgressReward",
]


class RolloverGuard(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Undo a wrap of the score counter: a reward below ``threshold`` gets ``correction`` added.

    Why: in Asterix, Video Pinball and Defender the emulator's six-digit score wraps at
    1,000,000, which the reward reports as about -1,000,000, so a near-perfect agent's score
    collapses at random (Toromanoff et al. 2019, Appendix C). The authors' released code
    (valeoai/rainbow-iqn-apex, ``rainbowiqn/env.py``), which produced SABER's published
    figures, treats a reward below -900,000 as a rollover and adds 1,000,000 back, so the agent
    keeps the points it scored. Appendix C's sentence ("no game ... has a reward inferior to
    -1000"; ignore such rewards) is false in ale-py: Skiing's missed-gate penalty (about -9,000)
    and Journey Escape's -2,000 are genuine rewards that the published random scores include.

    The reward of a whole agent step is tested (ale-py sums the frames of a step). Every other
    reward passes unchanged.

    Info: ``info["arcadebench"]["rollover_rewards"]``, only on steps where a reward was
    corrected: the original values. ``episode_rollovers`` counts them in the current episode.

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = RolloverGuard(AtariEnv("asterix"), threshold=-900_000, correction=1_000_000)
        >>> _ = env.reset(seed=0)
        >>> for address, value in ((0xDE, 0x99), (0xDF, 0x99), (0xE0, 0x50)):
        ...     env.unwrapped.ale.setRAM(address - 0x80, value)  # score 999,950 (BCD)
        >>> for _ in range(100):  # the score wraps to 0: the emulator reports -999,950
        ...     _, reward, _, _, info = env.step(1)
        ...     if "rollover_rewards" in info.get("arcadebench", {}):
        ...         break
        >>> reward, info["arcadebench"]["rollover_rewards"], env.episode_rollovers
        (50.0, [-999950.0], 1)
        >>> env.close()
    """

    def __init__(self, env: gym.Env, *, threshold: float, correction: float) -> None:
        """Wrap ``env``; a reward strictly below ``threshold`` gets ``correction`` added."""
        threshold = check_real("threshold", threshold)
        correction = check_real("correction", correction)
        gym.utils.RecordConstructorArgs.__init__(self, threshold=threshold, correction=correction)
        gym.Wrapper.__init__(self, env)
        self._threshold = threshold
        self._correction = correction
        self.episode_rollovers = 0

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Reset the env and the episode's count."""
        self.episode_rollovers = 0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> StepResult:
        """Step; a reward below the threshold is corrected and recorded."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if float(reward) < self._threshold:
            protocol_info(info).setdefault("rollover_rewards", []).append(float(reward))
            self.episode_rollovers += 1
            reward = float(correct_rollovers(reward, self._threshold, self._correction)[0])
        return obs, reward, terminated, truncated, info


def _level_key(key: Any) -> tuple[int, int]:
    """``(zone, act)`` from a tuple or from script.lua's ``"zone=Z,act=A"`` string."""
    if isinstance(key, tuple) and len(key) == 2:
        return int(key[0]), int(key[1])
    try:  # str.split refuses anything but a string
        zone, act = (int(part.split("=")[1]) for part in str.split(key, ","))
    except (TypeError, IndexError, ValueError):
        raise InvalidArgument(
            f"`level_end_x` keys must be (zone, act) or 'zone=Z,act=A', got {key!r}"
        ) from None
    return zone, act


class ContestProgress:
    """The Sonic contest reward and done rule, frame by frame: stable-retro's ``script.lua``.

    A faithful Python port of ``contest_reward``/``contest_done``/``calc_progress`` from the
    ``contest`` scenario that ships with stable-retro for the three Sonic games (identical to
    openai/retro's), so the reward does not depend on a scenario file:

    - the first frame fixes the origin: ``offset_x = -x0`` and ``end_x = level_end_x - x0``, with
      the level looked up by that frame's ``(zone, act)``;
    - ``progress = clip(x + offset_x, 0, end_x) / end_x``; the reward of a frame is
      ``progress_scale * (progress - previous progress)`` — negative when moving back left;
    - on a frame where ``progress >= 1`` add ``completion_bonus * (1 - clip(frame / horizon, 0,
      1))``; ``frame`` is stable-retro's ``scenario.frame``: the frames played since reset,
      counting this one (1 on the first step), so the bonus reaches 0 exactly at the 18,000th
      frame, the last frame of the 4,500th timestep;
    - done when an ``end_when`` variable equals its value or an ``end_when_not`` variable differs
      (Sonic 2's bonus stage, S3K's special stage), when ``lives`` drops below the previous
      frame's (the previous value starts at ``initial_lives``, 3, as in the script), or when
      ``progress >= 1``; checked in the script's order;
    - S3K (``act_change_offset``): when ``act`` changes mid-level, the origin moves by the jump of
      ``screen_x`` so progress continues (``0x3080 + 0x1049`` for Angel Island Act 1).

    stable-retro evaluates the scenario once at ``reset()`` too (on the reset frame, as frame 0):
    call :meth:`reset` with that frame's RAM, then :meth:`update` for every played frame.

    Example:
        >>> contest = dict(progress_scale=9000, completion_bonus=1000, bonus_horizon_frames=18000)
        >>> rule = ContestProgress({(0, 0): 1100}, **contest)  # sonic.yaml's reward settings
        >>> rule.reset({"x": 100, "zone": 0, "act": 0, "lives": 3})
        >>> rule.update({"x": 600, "zone": 0, "act": 0, "lives": 3}, frame=1)
        (4500.0, False, None, 0.5)
        >>> rule.update({"x": 1200, "zone": 0, "act": 0, "lives": 3}, frame=2)[:3]
        (5499.888888888889, True, 'level_complete')
    """

    def __init__(
        self,
        level_end_x: Mapping[Any, int],
        *,
        end_when: Mapping[str, int] | None = None,
        end_when_not: Mapping[str, int] | None = None,
        act_change_offset: bool = False,
        progress_scale: float,
        completion_bonus: float,
        bonus_horizon_frames: int,
        initial_lives: int = 3,
    ) -> None:
        """Set up the rule; see :class:`SonicProgressReward` for the arguments."""
        if not isinstance(level_end_x, Mapping) or not level_end_x:
            raise InvalidArgument(
                f"`level_end_x` must be a non-empty mapping (zone, act) -> x, got {level_end_x!r}"
            )
        ends = {
            _level_key(key): check_int("level_end_x value", x) for key, x in level_end_x.items()
        }
        for name, conditions in (("end_when", end_when), ("end_when_not", end_when_not)):
            if conditions is not None and not isinstance(conditions, Mapping):
                raise InvalidArgument(
                    f"`{name}` must be a mapping variable -> value, got {conditions!r}"
                )
        if not isinstance(act_change_offset, bool):
            raise InvalidArgument(f"`act_change_offset` must be a bool, got {act_change_offset!r}")
        self.level_end_x = ends
        self.end_when = dict(end_when or {})
        self.end_when_not = dict(end_when_not or {})
        self.act_change_offset = act_change_offset
        self.progress_scale = check_real("progress_scale", progress_scale)
        self.completion_bonus = check_real("completion_bonus", completion_bonus)
        self.bonus_horizon_frames = check_int(
            "bonus_horizon_frames", bonus_horizon_frames, minimum=1
        )
        self.initial_lives = check_int("initial_lives", initial_lives)
        self._restart()

    def _restart(self) -> None:
        self._offset_x: int | None = None
        self._end_x = 0
        self._prev_lives = self.initial_lives
        self._prev_progress = 0.0
        self._prev_act = 0
        self._prev_screen_x = 0

    def _progress(self, ram: Mapping[str, Any]) -> float:
        x = int(ram["x"])
        if self._offset_x is None:
            key = (int(ram["zone"]), int(ram["act"]))
            if key not in self.level_end_x:
                raise InvalidArgument(
                    f"`level_end_x` must have the level being played, got no entry for "
                    f"zone={key[0]}, act={key[1]} (levels: {sorted(self.level_end_x)})"
                )
            self._offset_x = -x
            self._end_x = self.level_end_x[key] - x
            if self._end_x <= 0:
                raise InvalidArgument(
                    f"`level_end_x` must lie right of the start, got {self.level_end_x[key]} "
                    f"for zone={key[0]}, act={key[1]} starting at x={x}"
                )
            if self.act_change_offset:
                self._prev_act = int(ram["act"])
                self._prev_screen_x = int(ram["screen_x"])
        if self.act_change_offset:
            act, screen_x = int(ram["act"]), int(ram["screen_x"])
            if act != self._prev_act:
                self._offset_x -= screen_x - self._prev_screen_x
            self._prev_act, self._prev_screen_x = act, screen_x
        return min(max(x + self._offset_x, 0), self._end_x) / self._end_x

    def _done(self, ram: Mapping[str, Any]) -> tuple[bool, EndReason | None]:
        for name, value in self.end_when.items():
            if ram[name] == value:
                return True, "special_stage"
        for name, value in self.end_when_not.items():
            if ram[name] != value:
                return True, "special_stage"
        lives = int(ram["lives"])
        if lives < self._prev_lives:
            return True, "life_lost"
        self._prev_lives = lives
        if self._progress(ram) >= 1:
            return True, "level_complete"
        return False, None

    def reset(self, ram: Mapping[str, Any]) -> None:
        """Start an episode from the reset frame's RAM (the script's evaluation at ``reset()``)."""
        self._restart()
        self.update(ram, frame=0)

    def update(
        self, ram: Mapping[str, Any], frame: int
    ) -> tuple[float, bool, EndReason | None, float]:
        """One frame: ``(reward, done, end reason or None, progress)``.

        ``frame`` is the number of frames played since reset, counting this one.
        """
        done, reason = self._done(ram)  # stable-retro evaluates done before reward
        progress = self._progress(ram)
        reward = (progress - self._prev_progress) * self.progress_scale
        self._prev_progress = progress
        if progress >= 1:
            elapsed = min(max(frame / self.bonus_horizon_frames, 0.0), 1.0)
            reward += (1.0 - elapsed) * self.completion_bonus
        return reward, done, reason, progress


class SonicProgressReward(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """The Sonic benchmark reward and done rule, computed per emulator frame from RAM variables.

    Why: "the cumulative reward at any point in time is proportional to the horizontal offset
    from the player's initial position", normalised so reaching the level's end is worth 9,000,
    plus a completion bonus of 1,000 for an instant finish that drops linearly to 0 at 4,500
    timesteps; episodes end when the level is complete or a life is lost (Nichol et al. 2018,
    Sections 3.5 and 3.8). :class:`ContestProgress` computes it exactly as the contest's
    ``script.lua`` does, from the ``info`` variables ``x``, ``zone``, ``act``, ``lives``
    (``screen_x`` for S3K, the ``end_when``/``end_when_not`` variables for Sonic 2 and S3K), so
    it needs no scenario file and the per-level end table lives in ``sonic.yaml``.

    Wrap stable-retro's ``RetroEnv`` directly (one frame per step; the frame count restarts at
    reset), inside :class:`~arcadebench.wrappers.StickyFrameSkip`. The wrapped env's own reward
    is discarded. A run's return is therefore ``9000 * progress`` plus, on completion at frame
    ``t``, ``1000 * (1 - t / 18000)``: at most 10,000 (the limit of an instant finish; a finish on
    the first frame scores 9,999.94), at most 9,000 for a level never finished.

    ``terminated`` is set on level completion (end reason ``"level_complete"``), life loss
    (``"life_lost"``), on an ``end_when``/``end_when_not`` condition — Sonic 2's bonus stage or a
    S3K special stage (``"special_stage"``) — or when the wrapped env terminates.

    Info: ``info["arcadebench"]["progress"]`` on every step (0 after reset).

    Example:
        >>> import gymnasium as gym
        >>> class Run(gym.Env):  # stand-in for RetroEnv's RAM: Sonic runs 10 px per frame
        ...     observation_space = action_space = gym.spaces.Discrete(1)
        ...     def reset(self, *, seed=None, options=None):
        ...         self.x = 0
        ...         return 0, {"x": 0, "zone": 0, "act": 0, "lives": 3}
        ...     def step(self, action):
        ...         self.x += 10
        ...         return 0, 0.0, False, False, {"x": self.x, "zone": 0, "act": 0, "lives": 3}
        >>> contest = dict(progress_scale=9000, completion_bonus=1000, bonus_horizon_frames=18000)
        >>> env = SonicProgressReward(Run(), level_end_x={(0, 0): 100}, **contest)
        >>> _ = env.reset()
        >>> steps = [env.step(0) for _ in range(10)]  # the 10th frame reaches the end
        >>> rewards = [reward for _, reward, *_ in steps]
        >>> rewards[0], round(rewards[-1], 2), round(sum(rewards), 2)
        (900.0, 1899.44, 9999.44)
        >>> _, _, terminated, _, info = steps[-1]
        >>> terminated, info["arcadebench"]
        (True, {'progress': 1.0, 'end_reason': 'level_complete'})
    """

    def __init__(
        self,
        env: gym.Env,
        level_end_x: Mapping[Any, int],
        *,
        end_when: Mapping[str, int] | None = None,
        end_when_not: Mapping[str, int] | None = None,
        act_change_offset: bool = False,
        progress_scale: float,
        completion_bonus: float,
        bonus_horizon_frames: int,
        initial_lives: int = 3,
    ) -> None:
        """Wrap ``env``.

        Args:
            env: stable-retro ``RetroEnv`` (one frame per step) whose ``info`` has the variables.
            level_end_x: ``(zone, act)`` (or ``"zone=Z,act=A"``) -> the x that completes the
                level (``sonic.yaml`` ``retro_games.<game>.level_end_x``).
            end_when: variable -> value that ends the episode (Sonic 2: ``{"game_mode": 16}``).
            end_when_not: variable -> value whose change ends it (S3K: ``{"special_stage": 0}``).
            act_change_offset: S3K's origin shift when the act changes mid-level.
            progress_scale: reward for the whole level (Section 3.8: 9,000).
            completion_bonus: bonus for an instant finish (Section 3.8: 1,000).
            bonus_horizon_frames: frames at which the bonus reaches 0 (4,500 timesteps x 4).
            initial_lives: the script's starting "previous lives" (3).
        """
        rule = ContestProgress(
            level_end_x,
            end_when=end_when,
            end_when_not=end_when_not,
            act_change_offset=act_change_offset,
            progress_scale=progress_scale,
            completion_bonus=completion_bonus,
            bonus_horizon_frames=bonus_horizon_frames,
            initial_lives=initial_lives,
        )
        # the rule's public attributes are its checked arguments, in the signature's order
        settings = {key: value for key, value in vars(rule).items() if not key.startswith("_")}
        settings["level_end_x"] = {f"zone={z},act={a}": x for (z, a), x in rule.level_end_x.items()}
        gym.utils.RecordConstructorArgs.__init__(self, **settings)
        gym.Wrapper.__init__(self, env)
        self._rule = rule
        self._frame = 0

    def _reset_ram(self, info: dict[str, Any]) -> Mapping[str, Any]:
        if "x" in info:
            return info
        data = getattr(self.env.unwrapped, "data", None)  # RetroEnv.reset() returns an empty info
        if data is not None and hasattr(data, "lookup_all"):
            ram: Mapping[str, Any] = data.lookup_all()  # stable-retro ships no types
            return ram
        raise InvalidArgument(
            "`env` must report the RAM variables x, zone, act, lives in info (a stable-retro "
            f"RetroEnv of a Sonic game), got info keys {sorted(info)!r}"
        )

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Reset the env; the reset frame's position is the origin of progress."""
        obs, info = self.env.reset(seed=seed, options=options)
        ram = self._reset_ram(info)
        try:
            self._rule.reset(ram)
        except KeyError as missing:
            raise _missing_variable(missing, ram) from None
        self._frame = 0
        protocol_info(info)["progress"] = 0.0
        return obs, info

    def step(self, action: Any) -> StepResult:
        """Play one frame; reward and done from the contest rule."""
        obs, _, terminated, truncated, info = self.env.step(action)
        self._frame += 1
        try:
            reward, done, reason, progress = self._rule.update(info, self._frame)
        except KeyError as missing:
            raise _missing_variable(missing, info) from None
        protocol_info(info)["progress"] = progress
        if done:
            terminated = True
            if reason is not None:
                set_end_reason(info, reason)
        return obs, reward, terminated, truncated, info


def _missing_variable(missing: KeyError, ram: Mapping[str, Any]) -> InvalidArgument:
    return InvalidArgument(
        f"`env` must report the RAM variable {missing} in info, got info keys {sorted(ram)!r}"
    )


class AllowBacktracking(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Training aid: reward only new maxima of the episode's cumulative reward.

    Why: Sonic's reward punishes going left, yet levels often need it; the baselines (Rainbow,
    PPO) use "an environment wrapper that rewards the agent based on deltas in the maximum
    x-position", so backtracking costs nothing (Nichol et al. 2018, Sections 3.8 and 4.2). As in
    retro-baselines, it works on the running sum of the wrapped env's reward: returns
    ``max(0, total - best)`` and then raises ``best``. Not part of the score: wrap it outside the
    protocol env and its monitor.

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = AllowBacktracking(AtariEnv("pong"))
        >>> _ = env.reset(seed=0)
        >>> env.reward(-1.0), env.reward(1.0), env.reward(1.0), env.reward(-1.0), env.reward(2.0)
        (0.0, 0.0, 1.0, 0.0, 1.0)
        >>> env.close()
    """

    def __init__(self, env: gym.Env) -> None:
        """Wrap ``env``."""
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self._total = 0.0
        self._best = 0.0

    def reward(self, reward: SupportsFloat) -> float:
        """The shaped reward of one step's ``reward`` (updates the running sums)."""
        self._total += float(reward)
        shaped = max(0.0, self._total - self._best)
        self._best = max(self._best, self._total)
        return shaped

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Reset the env and the running sums."""
        self._total = self._best = 0.0
        return self.env.reset(seed=seed, options=options)

    def step(self, action: Any) -> StepResult:
        """Step; the reward is the increase of the best cumulative reward."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, self.reward(reward), terminated, truncated, info
