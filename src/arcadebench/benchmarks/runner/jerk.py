"""JERK ("Just Enough Retained Knowledge"): the Sonic benchmark's scripted, non-neural baseline.

A built-in agent of the runner: ``arcadebench run sonic --split test --agent jerk`` gives every
test level a fresh JERK for the 1M-step budget (Section 3.9).

Classes: JerkAgent.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.errors import InvalidArgument
from arcadebench.wrappers._checks import check_int, check_probability, check_real

__all__ = ["GENESIS_BUTTONS", "JerkAgent"]

# Section 3.7: the Genesis pad, in stable-retro's order (sonic.yaml `buttons`).
GENESIS_BUTTONS = ("B", "A", "MODE", "START", "UP", "DOWN", "LEFT", "RIGHT", "C", "Y", "X", "Z")
_B, _LEFT, _RIGHT = (GENESIS_BUTTONS.index(b) for b in ("B", "LEFT", "RIGHT"))


class JerkAgent:
    """JERK as a learning agent: explore by running right and jumping, replay the best run.

    Why: "a simple algorithm that achieves high rewards on the benchmark without using any deep
    learning. This algorithm completely ignores observations and instead looks solely at
    rewards [...] explore using a simple algorithm, then [...] replay the best action sequences
    more and more frequently as training progresses. Since the environment is stochastic [...]
    each action sequence has a running mean of its rewards" (Nichol et al. 2018, Section 4.3;
    Table 1: 1904.0 ± 21.9, better than PPO). A port of openai/retro-baselines
    ``agents/jerk_agent.py`` (the paper's Appendix A, Algorithm 1), step for step, to the
    runner's ``act``/``observe`` protocol:

    - At the start of each episode, if solutions are stored and a uniform draw is below
      ``exploit_bias + total_steps / horizon_steps`` (0.25 + steps/1M: replaying becomes certain
      by the end of the budget), *exploit*: replay the stored solution with the best mean
      reward (ties: the later one in the last sorted order, as Python's stable ``sorted``
      leaves them), then the no-op (all buttons released) once it runs out, to the end of the
      episode; the episode's return joins that solution's rewards.
    - Otherwise *explore*: repeatedly "move right" for up to ``explore_steps`` (100) steps; if
      that segment's summed reward is <= 0 and the episode goes on, "move left" for up to
      ``backtrack_steps`` (70). A move holds RIGHT (or LEFT); at every step not already in a
      jump, with probability ``jump_probability`` (0.1) it starts a jump holding B for
      ``jump_repeat`` (4) steps. When the episode ends, the prefix of its actions up to the
      first step where the cumulative reward peaked becomes a new solution, scored ``[peak]``.

    It plays the raw 12-button vector (``action_set = "buttons"``, which the runner passes to
    the environment) and needs the protocol reward, not a shaped one. All randomness comes from
    one generator: seeded by ``seed`` at construction, and re-seeded by :meth:`seed` (the
    runner calls it before every episode with a seed derived from the job seed and the
    episode), where the original used Python's unseeded ``random``. :meth:`reset_level`
    forgets everything, so nothing flows between test levels (Section 3.9).

    Example:
        >>> agent = JerkAgent(gym.spaces.MultiBinary(12), seed=0)
        >>> agent.act(None).tolist()  # exploring: RIGHT held (and B, now and then)
        [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0]
        >>> agent.observe(None, 5.0, False, False, {})
        >>> _ = agent.act(None)
        >>> agent.observe(None, -1.0, True, False, {})  # the episode ends
        >>> [(rewards, len(actions)) for rewards, actions in agent.solutions]  # prefix to the peak
        [([5.0], 1)]
    """

    action_set = "buttons"

    def __init__(
        self,
        action_space: gym.Space[Any] | None = None,
        seed: int = 0,
        *,
        explore_steps: int = 100,
        backtrack_steps: int = 70,
        jump_probability: float = 0.1,
        jump_repeat: int = 4,
        exploit_bias: float = 0.25,
        horizon_steps: int = 1_000_000,
    ) -> None:
        """Create the agent.

        Args:
            action_space: the environment's action space: ``MultiBinary(12)``, the Genesis
                buttons (``None``: assume it).
            seed: seeds the generator (the runner passes the job seed, then re-seeds per episode).
            explore_steps: steps of a move right (100).
            backtrack_steps: steps of a move left after a right move earned nothing (70).
            jump_probability: chance per step of starting a jump (0.1).
            jump_repeat: steps a jump holds B (4).
            exploit_bias: the exploit probability at step 0 (0.25).
            horizon_steps: steps over which the exploit probability grows by 1 (the 1M budget).
        """
        if action_space is not None and (
            not isinstance(action_space, gym.spaces.MultiBinary)
            or tuple(action_space.shape) != (len(GENESIS_BUTTONS),)
        ):
            raise InvalidArgument(
                "`action_space` must be MultiBinary(12), the raw Genesis buttons (make the env "
                f"with action_set='buttons'), got {action_space!r}"
            )
        self.seed_value = check_int("seed", seed, minimum=0)
        self.explore_steps = check_int("explore_steps", explore_steps, minimum=1)
        self.backtrack_steps = check_int("backtrack_steps", backtrack_steps, minimum=0)
        self.jump_probability = check_probability("jump_probability", jump_probability)
        self.jump_repeat = check_int("jump_repeat", jump_repeat, minimum=1)
        self.exploit_bias = check_real("exploit_bias", exploit_bias)
        self.horizon_steps = check_int("horizon_steps", horizon_steps, minimum=1)
        self._rng = np.random.default_rng(self.seed_value)
        self.reset_level()

    # -- the runner's hooks -----------------------------------------------------------------------
    def reset_level(self, level: str | None = None) -> None:
        """Forget every solution and count: a new level starts from nothing (Section 3.9)."""
        self.solutions: list[tuple[list[float], list[np.ndarray]]] = []
        self.total_steps = 0
        self._new_episode = True
        self._start_episode_memory()

    def seed(self, seed: int) -> None:
        """Re-seed the generator (the runner calls this before every episode)."""
        self._rng = np.random.default_rng(seed)

    # -- acting -----------------------------------------------------------------------------------
    def _start_episode_memory(self) -> None:
        self._actions: list[np.ndarray] = []
        self._cumulative: list[float] = []
        self._return = 0.0
        self._replay: tuple[list[float], list[np.ndarray]] | None = None
        self._replay_index = 0
        self._start_segment(left=False)

    def _begin_episode(self) -> None:
        self._new_episode = False
        self._start_episode_memory()
        exploit = self.exploit_bias + self.total_steps / self.horizon_steps
        if self.solutions and self._rng.random() < exploit:
            self.solutions = sorted(self.solutions, key=lambda pair: float(np.mean(pair[0])))
            self._replay = self.solutions[-1]  # exploit: replay the best solution (else explore)

    def _start_segment(self, left: bool) -> None:
        self._segment_left = left
        self._segment_length = self.backtrack_steps if left else self.explore_steps
        self._segment_steps = 0
        self._segment_reward = 0.0
        self._jump_steps_left = 0

    def _explore_action(self) -> np.ndarray:
        if self._segment_steps >= self._segment_length:  # the move is over, the episode is not
            self._start_segment(left=not self._segment_left and self._segment_reward <= 0)
            if self._segment_length == 0:  # backtrack_steps == 0: no move left
                self._start_segment(left=False)
        action = np.zeros(len(GENESIS_BUTTONS), dtype=np.uint8)
        action[_LEFT if self._segment_left else _RIGHT] = 1
        if self._jump_steps_left > 0:
            action[_B] = 1
            self._jump_steps_left -= 1
        elif self._rng.random() < self.jump_probability:
            self._jump_steps_left = self.jump_repeat - 1
            action[_B] = 1
        self._segment_steps += 1
        return action

    def act(self, obs: Any) -> np.ndarray:
        """The next button vector (observations are ignored)."""
        if self._new_episode:
            self._begin_episode()
        action: np.ndarray
        if self._replay is not None:
            sequence = self._replay[1]
            if self._replay_index < len(sequence):
                action = sequence[self._replay_index].copy()
            else:
                action = np.zeros(len(GENESIS_BUTTONS), dtype=np.uint8)
            self._replay_index += 1
        else:
            action = self._explore_action()
        self._actions.append(action.copy())
        return action

    def observe(
        self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        """Record the step's reward; at the end of an episode, store or score a solution."""
        self.total_steps += 1
        self._return += float(reward)
        self._cumulative.append(self._return)
        self._segment_reward += float(reward)
        if not (terminated or truncated):
            return
        if self._replay is not None:
            self._replay[0].append(self._return)
        else:
            peak = max(self._cumulative)
            first = self._cumulative.index(peak)
            self.solutions.append(([peak], self._actions[: first + 1]))
        self._new_episode = True
