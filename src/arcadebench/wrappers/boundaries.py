"""Episode boundaries: when an episode ends, and what the agent may know about it.

Limits are truncations, never terminations (the game did not end; Pardo et al. 2018's
distinction, which Gymnasium's ``truncated`` encodes), and the wrapper that ends an episode says
why in ``info["arcadebench"]["end_reason"]``.

Classes: MaxStuckTime, EpisodeFrameLimit, TimeLimit, NoLifeInformation, LifeLossTerminal,
EpisodicLife.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.wrappers import TimeLimit as _GymTimeLimit

from arcadebench.errors import InvalidArgument, NonCompliantWarning, warn_user
from arcadebench.wrappers._checks import check_int
from arcadebench.wrappers._info import (
    KEY,
    Options,
    ResetResult,
    StepResult,
    protocol_info,
    set_end_reason,
)
from arcadebench.wrappers.rules import (
    drop_life_information,
    last_reward_frame,
    life_lost,
    limit_reached,
    stuck_frames,
)

__all__ = [
    "EpisodeFrameLimit",
    "EpisodicLife",
    "LifeLossTerminal",
    "MaxStuckTime",
    "NoLifeInformation",
    "TimeLimit",
]


def _frame_number(info: dict[str, Any], wrapper: str) -> int:
    try:
        return int(info["episode_frame_number"])
    except KeyError:
        raise InvalidArgument(
            f"`env` must report info['episode_frame_number'] for {wrapper} (ale-py does; wrap a "
            "stable-retro env in StickyFrameSkip first), got info keys "
            f"{sorted(info)!r}"
        ) from None


class MaxStuckTime(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Truncate an episode after ``max_stuck_frames`` emulator frames without a non-zero reward.

    Why: some games can get stuck forever (an emulator bug in BattleZone, Yars' Revenge), and with
    SABER's practically unlimited episodes one such episode would stall training; SABER therefore
    limits "the time without receiving any reward" to 5 minutes, 18,000 frames (Toromanoff et al.
    2019, Section 3.1 and Table 1; Appendix C). Frames, not agent steps, are counted, from
    ``info["episode_frame_number"]`` (ale-py's counter; :class:`StickyFrameSkip` provides it for
    stable-retro), so the limit does not depend on the frame skip. A step whose reward is
    non-zero resets the count at that step's last frame.

    When the limit is reached the step returns ``truncated=True`` with end reason ``"stuck"``,
    unless the episode ends on that step anyway (then the other reason stands).

    Info: ``info["arcadebench"]["stuck_frames"]`` on every step: frames since the last non-zero
    reward (or since reset).

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = MaxStuckTime(AtariEnv("breakout", frameskip=4), max_stuck_frames=400)
        >>> _ = env.reset(seed=0)
        >>> steps = 0
        >>> while True:  # NOOP never launches the ball, so no reward ever comes
        ...     _, _, terminated, truncated, info = env.step(0)
        ...     steps += 1
        ...     if terminated or truncated:
        ...         break
        >>> steps, truncated, info["episode_frame_number"], info["arcadebench"]
        (100, True, 400, {'stuck_frames': 400, 'end_reason': 'stuck'})
        >>> env.close()
    """

    def __init__(self, env: gym.Env, max_stuck_frames: int) -> None:
        """Wrap ``env``.

        Args:
            env: an env whose ``info`` has ``episode_frame_number``.
            max_stuck_frames: frames without reward that end the episode (SABER Table 1: 18,000).
        """
        max_stuck_frames = check_int("max_stuck_frames", max_stuck_frames, minimum=1)
        gym.utils.RecordConstructorArgs.__init__(self, max_stuck_frames=max_stuck_frames)
        gym.Wrapper.__init__(self, env)
        self._max_stuck_frames = max_stuck_frames
        self._last_reward_frame = 0

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Reset the env and the count."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._last_reward_frame = int(info.get("episode_frame_number", 0))
        protocol_info(info)["stuck_frames"] = 0
        return obs, info

    def step(self, action: Any) -> StepResult:
        """Step, and truncate with ``"stuck"`` once the rewardless frames reach the limit."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        frame = _frame_number(info, "MaxStuckTime")
        self._last_reward_frame = last_reward_frame(self._last_reward_frame, frame, reward)
        stuck = stuck_frames(frame, self._last_reward_frame)
        protocol_info(info)["stuck_frames"] = stuck
        if limit_reached(stuck, self._max_stuck_frames, terminated or truncated):
            truncated = True
            set_end_reason(info, "stuck")
        return obs, reward, terminated, truncated, info


class EpisodeFrameLimit(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Truncate an episode when it reaches ``max_episode_frames`` emulator frames.

    Why: the Atari protocols cap episodes in frames — 30 minutes (108,000 frames) for HWR and
    Atari-5, an effectively unlimited 100 hours (21,600,000 frames) for SABER (Toromanoff et al.
    2019, Table 1) — and a cap is a truncation, never a termination. The Atari builder passes the
    cap to ale-py natively (``max_num_frames_per_episode``, which truncates exactly at the cap);
    this wrapper then only labels those truncations ``"frame_limit"``. Around an env without a
    native cap it truncates itself, at the first step whose ``info["episode_frame_number"]`` is
    at least the cap.

    ``info["arcadebench"]`` exists on every step after this wrapper (possibly empty).

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = EpisodeFrameLimit(AtariEnv("pong", frameskip=4), max_episode_frames=40)
        >>> _ = env.reset(seed=0)
        >>> for _ in range(10):
        ...     _, _, terminated, truncated, info = env.step(0)
        >>> terminated, truncated, info["episode_frame_number"], info["arcadebench"]
        (False, True, 40, {'end_reason': 'frame_limit'})
        >>> env.close()
    """

    def __init__(self, env: gym.Env, max_episode_frames: int) -> None:
        """Wrap ``env``.

        Args:
            env: an env whose ``info`` has ``episode_frame_number``.
            max_episode_frames: the cap in emulator frames.
        """
        max_episode_frames = check_int("max_episode_frames", max_episode_frames, minimum=1)
        gym.utils.RecordConstructorArgs.__init__(self, max_episode_frames=max_episode_frames)
        gym.Wrapper.__init__(self, env)
        self._max_episode_frames = max_episode_frames

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Reset the env."""
        obs, info = self.env.reset(seed=seed, options=options)
        protocol_info(info)
        return obs, info

    def step(self, action: Any) -> StepResult:
        """Step, and truncate with ``"frame_limit"`` at the cap."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        protocol_info(info)
        frame = _frame_number(info, "EpisodeFrameLimit")
        if limit_reached(frame, self._max_episode_frames, terminated):
            truncated = True
            set_end_reason(info, "frame_limit")
        return obs, reward, terminated, truncated, info


class TimeLimit(_GymTimeLimit):
    """Gymnasium's :class:`~gymnasium.wrappers.TimeLimit`, plus the end reason ``"time_limit"``.

    Why: the Sonic benchmark ends an episode after 4,500 timesteps, about 5 minutes of game time
    (Nichol et al. 2018, Section 3.5; retro-contest wraps ``gym.wrappers.TimeLimit`` around the
    sticky frame skip). Gymnasium's wrapper does exactly that truncation; this subclass only adds
    the label, on the step it truncates (unless an inner wrapper already gave one).

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = TimeLimit(AtariEnv("pong", frameskip=4), max_episode_steps=3)
        >>> _ = env.reset(seed=0)
        >>> [env.step(0)[3] for _ in range(3)]
        [False, False, True]
        >>> env.step(0)[4]["arcadebench"]
        {'end_reason': 'time_limit'}
        >>> env.close()
    """

    # Gymnasium's TimeLimit reports itself as ``env.spec.max_episode_steps`` instead of as an
    # additional wrapper, so ``gym.make(env.spec)`` would rebuild Gymnasium's class, without the
    # label. Use the standard property: this wrapper, with its argument, in the wrapper list.
    #: :meta private: (Gymnasium's own property, left to its docs as every inherited member is)
    spec = gym.Wrapper.spec

    def __init__(self, env: gym.Env, max_episode_steps: int) -> None:
        """Wrap ``env``; ``max_episode_steps`` agent steps end an episode (Sonic: 4,500)."""
        max_episode_steps = check_int("max_episode_steps", max_episode_steps, minimum=1)
        super().__init__(env, max_episode_steps)

    def step(self, action: Any) -> StepResult:
        """Step, and truncate with ``"time_limit"`` after ``max_episode_steps`` steps."""
        obs, reward, terminated, truncated, info = super().step(action)
        # _elapsed_steps is None only before the first reset, which step refuses
        if truncated and not terminated and (self._elapsed_steps or 0) >= self._max_episode_steps:
            set_end_reason(info, "time_limit")
        return obs, reward, terminated, truncated, info


class NoLifeInformation(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Remove ``lives`` from ``info``, so life loss cannot serve as an episode boundary.

    Why: ending training episodes at a life loss is game-specific knowledge that helps the agent
    and makes comparisons unfair; SABER forbids life information (Toromanoff et al. 2019,
    Section 3.1 and Table 1) following Machado et al. (2018), and HWR and Atari-5 do the same.
    Episodes end on game over only, which is ale-py's ``terminated`` already; this wrapper hides
    the counter ale-py puts in ``info``. (It cannot hide ``env.unwrapped.ale.lives()``: an agent
    that reaches into the emulator is non-compliant by construction.)

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = NoLifeInformation(AtariEnv("breakout"))
        >>> _, info = env.reset(seed=0)
        >>> "lives" in info, "lives" in env.step(0)[4]
        (False, False)
        >>> env.close()
    """

    def __init__(self, env: gym.Env) -> None:
        """Wrap ``env``."""
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Reset the env; ``lives`` is removed from ``info``."""
        obs, info = self.env.reset(seed=seed, options=options)
        drop_life_information(info)
        return obs, info

    def step(self, action: Any) -> StepResult:
        """Step the env; ``lives`` is removed from ``info``."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        drop_life_information(info)
        return obs, reward, terminated, truncated, info


class LifeLossTerminal(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """End the learner's episode at a lost life while the game goes on (a training signal).

    Why: the training environments of DQN (Mnih et al. 2015, GameEnvironment.lua: "Loosing a
    life will trigger a terminal signal in training mode") and of the Atari 100k agents
    (Dopamine's ``terminal_on_life_loss = True``) tell the learner that a life is lost by ending
    its episode; the game is not reset, and the evaluation episodes run to game over. The specs
    say so with ``life_loss_terminal_in_training``, and only their training environment has
    this layer.

    On a life loss before the game ends, the step returns ``terminated=True`` with end reason
    ``"life_lost"``. The next ``reset()`` without a seed continues the same game: it plays
    nothing and returns the observation the step returned, and ``info["episode_frame_number"]``
    counts from there, so the episode monitor counts each learner episode's own frames and the
    run's frames stay the emulator's. A seeded reset, or one after the game ended, resets it.
    Lives are read from the emulator (``env.unwrapped.ale.lives()``) when it has one, else from
    ``info["lives"]``, so it works under :class:`NoLifeInformation` too.

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = LifeLossTerminal(AtariEnv("breakout", repeat_action_probability=0.0))
        >>> _ = env.reset(seed=0)
        >>> while True:  # FIRE launches the ball; it falls: a life is lost
        ...     _, _, terminated, truncated, info = env.step(1)
        ...     if terminated or truncated:
        ...         break
        >>> info["arcadebench"]["end_reason"], env.unwrapped.ale.lives()
        ('life_lost', 4)
        >>> _, info = env.reset()  # the same game, 4 lives left, its frames counted afresh
        >>> info["episode_frame_number"], env.unwrapped.ale.lives()
        (0, 4)
        >>> env.close()
    """

    def __init__(self, env: gym.Env) -> None:
        """Wrap ``env``."""
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        self._lives = 0
        self._continues = False  # the last episode ended at a lost life: reset goes on playing
        self._last: tuple[Any, dict[str, Any]] | None = None  # what that step returned
        self._offset = 0  # the game's frame count where the learner's episode began

    def _read_lives(self, info: dict[str, Any]) -> int:
        ale = getattr(self.env.unwrapped, "ale", None)
        if ale is not None:
            return int(ale.lives())
        try:
            return int(info["lives"])
        except KeyError:
            raise InvalidArgument(
                f"`env` must have an ale-py emulator or report info['lives'] for "
                f"{type(self).__name__}, got info keys {sorted(info)!r}"
            ) from None

    def _continue_game(self) -> tuple[Any, dict[str, Any]]:
        """The first observation of a learner's episode that continues the game."""
        if self._last is None:  # pragma: no cover - set by the step that lost the life
            raise InvalidArgument("no life was lost: there is no game to continue")
        obs, info = self._last
        info = {key: value for key, value in info.items() if key != KEY}
        self._offset = int(info.get("episode_frame_number", 0))
        return obs, info

    def _rebased(self, info: dict[str, Any]) -> dict[str, Any]:
        if self._offset and "episode_frame_number" in info:
            info["episode_frame_number"] -= self._offset
        return info

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Continue the game after a lost life; otherwise (or when seeded) reset it."""
        if self._continues and seed is None:
            obs, info = self._continue_game()
        else:
            self._offset = 0
            obs, info = self.env.reset(seed=seed, options=options)
        self._continues = False
        self._lives = self._read_lives(info)
        return obs, self._rebased(info)

    def step(self, action: Any) -> StepResult:
        """Step; a life lost before the game ends terminates with ``"life_lost"``."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        lives = self._read_lives(info)
        if life_lost(self._lives, lives, terminated or truncated):
            terminated = self._continues = True
            set_end_reason(info, "life_lost")
            self._last = (obs, dict(info))
        self._lives = lives
        return obs, reward, terminated, truncated, self._rebased(info)


class EpisodicLife(LifeLossTerminal):
    """NON-COMPLIANT training trick: report a life loss as the end of an episode.

    Why it exists: DQN, Rainbow and IQN trained this way ("end a training episode after the loss
    of the first life"), and reproducing them needs it. Why it is not the protocol: SABER, HWR
    and Atari-5 forbid it — "an unfair comparison to agents which are not using this
    game-specific knowledge" (Toromanoff et al. 2019, Section 3.1; Machado et al. 2018). Making
    one warns :class:`~arcadebench.errors.NonCompliantWarning`.

    On a life loss the step returns ``terminated=True`` with end reason ``"life_lost"``; the next
    ``reset()`` (without a seed) does not reset the game but plays one ``noop_action`` step, so
    the game continues with the remaining lives. Lives are read from the emulator
    (``env.unwrapped.ale.lives()``) when it has one, else from ``info["lives"]``. Put it
    *outside* the protocol env (and its monitor), so logged episodes still end on game over.

    Example:
        >>> import warnings
        >>> from ale_py.env import AtariEnv
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     env = EpisodicLife(AtariEnv("breakout", repeat_action_probability=0.0))
        >>> _ = env.reset(seed=0)
        >>> while True:  # FIRE launches the ball; NOOP lets it fall: a life is lost
        ...     _, _, terminated, truncated, info = env.step(1)
        ...     if terminated or truncated:
        ...         break
        >>> info["lives"], info["arcadebench"]["end_reason"]
        (4, 'life_lost')
        >>> _ = env.reset()  # not a new game: the remaining lives carry on
        >>> env.unwrapped.ale.lives()
        4
        >>> env.close()
    """

    def __init__(self, env: gym.Env, noop_action: Any = 0) -> None:
        """Wrap ``env``; ``noop_action`` is played by a reset that continues the game."""
        LifeLossTerminal.__init__(self, env)
        gym.utils.RecordConstructorArgs.__init__(self, noop_action=noop_action)
        warn_user(
            "EpisodicLife ends episodes on life loss: non-compliant with SABER, HWR and "
            "Atari-5 (life information is not allowed). Use it for training only, outside "
            "the protocol env.",
            NonCompliantWarning,
        )
        self._noop_action = noop_action

    def _continue_game(self) -> tuple[Any, dict[str, Any]]:
        """SB3's ``EpisodicLifeEnv``: one ``noop_action`` step, or a reset if it ends the game."""
        obs, _, terminated, truncated, info = self.env.step(self._noop_action)
        self._offset = 0  # counted from the game's start, as SB3's wrapper leaves it
        return self.env.reset() if terminated or truncated else (obs, info)
