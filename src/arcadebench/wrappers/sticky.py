"""Sticky frame skip: the Sonic benchmark's source of randomness (Nichol et al. 2018, Section 3.4).

Classes: StickyFrameSkip.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.wrappers._checks import check_int, check_probability
from arcadebench.wrappers._info import Options, ResetResult, StepResult

__all__ = ["StickyFrameSkip"]

_NONE = object()  # "no action applied yet in this episode" (retro-contest's ``curac = None``)


class StickyFrameSkip(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Run each agent step as ``n`` emulator frames, delaying the new action by one frame at random.

    Why: the Sonic benchmark requires a frame skip of 4 and, since deterministic emulators invite
    scripted solutions, a *sticky* frame skip: "for each action, we delay it by one frame with
    probability 0.25, applying the previous action for that frame instead" (Nichol et al. 2018,
    Section 3.4). This is retro-contest's ``StochasticFrameSkip(n=4, stickprob=0.25)``, step for
    step:

    - frame 0 of a step plays the previous step's action with probability ``stickprob`` (one
      uniform draw per step, ``u <= stickprob``), otherwise the new action; on the first step
      after ``reset`` there is no previous action, so the new one plays and nothing is drawn;
    - frames 1 to ``n - 1`` always play the new action, so a step never has fewer frames because
      of stickiness and an action is delayed by at most one frame;
    - the frames' rewards are summed; the observation and ``info`` are the last frame's;
    - when a frame ends the episode (terminated or truncated) the step stops there.

    It is neither of the other "sticky actions": ale-py's ``repeat_action_probability``
    (Machado et al. 2018) decides on *every* frame whether to repeat the previous frame's action,
    so a new action can be delayed for several frames; Gymnasium's ``StickyAction`` repeats the
    previous action for whole agent steps. Wrap a one-frame-per-step env (stable-retro's
    ``RetroEnv``), never one that already skips frames.

    Randomness comes from ``self.np_random``, the wrapped env's generator, which
    ``reset(seed=...)`` seeds: the same seed gives the same frame-by-frame action sequence.

    ``info["episode_frame_number"]`` (the ale-py key, see DEVELOPING.md) is set to the emulator
    frames since reset when the wrapped env does not provide it, so frame-based rules
    (:class:`~arcadebench.wrappers.MaxStuckTime`, budgets) work on stable-retro too.

    Example:
        >>> import stable_retro
        >>> env = StickyFrameSkip(stable_retro.make("Airstriker-Genesis-v0", render_mode=None))
        >>> _, info = env.reset(seed=0)
        >>> info["episode_frame_number"]
        0
        >>> for _ in range(3):
        ...     _, reward, terminated, truncated, info = env.step(env.action_space.sample())
        >>> info["episode_frame_number"]
        12
        >>> env.close()
    """

    def __init__(self, env: gym.Env, n: int = 4, stickprob: float = 0.25) -> None:
        """Wrap ``env`` (one emulator frame per step).

        Args:
            env: the environment to wrap, one emulator frame per ``step``.
            n: emulator frames per agent step (Section 3.4: 4).
            stickprob: probability that a step's first frame plays the previous action
                (Section 3.4: 0.25).
        """
        n = check_int("n", n, minimum=1)
        stickprob = check_probability("stickprob", stickprob)
        gym.utils.RecordConstructorArgs.__init__(self, n=n, stickprob=stickprob)
        gym.Wrapper.__init__(self, env)
        self._n = n
        self._stickprob = stickprob
        self._current: Any = _NONE
        self._frames = 0

    def reset(self, *, seed: int | None = None, options: Options = None) -> ResetResult:
        """Reset the env; the next step plays its action from its first frame."""
        obs, info = self.env.reset(seed=seed, options=options)
        self._current = _NONE
        self._frames = 0
        if "episode_frame_number" not in info:
            info["episode_frame_number"] = 0
        return obs, info

    def step(self, action: Any) -> StepResult:
        """Play ``action`` for ``n`` frames, the first one possibly still the previous action."""
        if isinstance(action, np.ndarray):
            action = action.copy()  # the caller may reuse its buffer; the next step needs this one
        total = 0.0
        obs: Any = None
        terminated = truncated = False
        info: dict[str, Any] = {}
        for frame in range(self._n):
            if frame == 0:
                if self._current is _NONE or self.np_random.random() > self._stickprob:
                    self._current = action
            elif frame == 1:
                self._current = action
            obs, reward, terminated, truncated, info = self.env.step(self._current)
            total += float(reward)
            self._frames += 1
            if terminated or truncated:
                break
        if "episode_frame_number" not in info:
            info["episode_frame_number"] = self._frames
        return obs, total, terminated, truncated, info
