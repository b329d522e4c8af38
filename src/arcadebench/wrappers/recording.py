"""What the monitors keep of each episode so that it can be re-simulated: its start, its actions.

The emulators are deterministic given where an episode started and the actions played
(ale-py's state with its random generator, the env's own generator for no-op starts and
Sonic's sticky frame skip), so an episode is recorded as (:mod:`arcadebench.records.replay_format`):

- its *start*: the seed of a seeded reset; for an unseeded one, a :func:`snapshot` taken just
  before the reset (the emulator's state with its generator, and the env's generator), from
  which a replay resets exactly as the episode did, no-op starts and wrappers' counters
  included; for the game going on after a lost life, the episode it continues;
- its actions, and the steps with a non-zero reward (to name where a replay departs).

Recording costs a list append per step (about 0.1 us) and, per unseeded episode, a snapshot
(ale-py's ``cloneState``: 14.5 KB, 7.5 KB compressed).

Classes: EpisodeRecording, BatchRecording.
Functions: snapshot, restore_snapshot.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.records.replay_format import decode_array, encode_array, replay_fields

__all__ = ["BatchRecording", "EpisodeRecording", "restore_snapshot", "snapshot"]


def snapshot(env: gym.Env[Any, Any]) -> dict[str, Any]:
    """Where ``env``'s next unseeded reset starts from: its emulator's and its generator's states.

    Taken *before* the reset: restored into a fresh env of the same settings
    (:func:`restore_snapshot`), an unseeded ``reset()`` there plays the very same reset.
    """
    base = env.unwrapped
    found: dict[str, Any] = {}
    ale = getattr(base, "ale", None)
    if ale is not None and hasattr(ale, "cloneState"):
        data = ale.cloneState(include_rng=True).serialize()
        found["ale"] = encode_array(np.frombuffer(data, np.uint8))
    found["np_random"] = base.np_random.bit_generator.state  # a plain dict of ints
    return found


def restore_snapshot(env: gym.Env[Any, Any], state: dict[str, Any]) -> None:
    """Put ``env`` where :func:`snapshot` found the recorded one, before an unseeded ``reset()``.

    Raises:
        ValueError: the snapshot is damaged, or of another emulator.
    """
    base = env.unwrapped
    if "ale" in state:
        from ale_py import ALEState

        ale = getattr(base, "ale", None)
        if ale is None:
            raise ValueError("the snapshot is of an ale-py emulator, the env has none")
        ale.restoreState(ALEState(decode_array(state["ale"], "uint8", ()).tobytes()))
    generator_state = state.get("np_random")
    if not isinstance(generator_state, dict):
        raise ValueError("the snapshot has no generator state")
    bit_generator = getattr(np.random, str(generator_state.get("bit_generator")), None)
    if bit_generator is None:
        raise ValueError(f"unknown bit generator {generator_state.get('bit_generator')!r}")
    generator = np.random.Generator(bit_generator())
    generator.bit_generator.state = generator_state
    base.np_random = generator


def _actions_array(actions: list[Any]) -> np.ndarray:
    """The actions as one array; integers in 0..255 as bytes (Atari, Sonic's discrete sets)."""
    array = np.asarray(actions)
    if array.dtype.kind in "iub" and array.size and array.min() >= 0 and array.max() < 256:
        return array.astype(np.uint8)
    if not array.size:
        return np.zeros(0, dtype=np.uint8)
    return array


class EpisodeRecording:
    """One environment's episode in flight: where it started, its actions, its rewards."""

    __slots__ = ("actions", "reward_steps", "rewards", "start")

    def __init__(self) -> None:
        self.start: dict[str, Any] | None = None
        self.actions: list[Any] = []
        self.reward_steps: list[int] = []
        self.rewards: list[float] = []

    def begin(self, start: dict[str, Any]) -> None:
        """A new episode, starting at ``start``."""
        self.start = start
        self.actions = []
        self.reward_steps = []
        self.rewards = []

    def add(self, action: Any, reward: float) -> None:
        """One step."""
        if reward:
            self.reward_steps.append(len(self.actions))
            self.rewards.append(reward)
        self.actions.append(action)

    def fields(self) -> dict[str, Any] | None:
        """The replay line's fields (``None`` before any episode began)."""
        if self.start is None:
            return None
        return replay_fields(
            start=self.start,
            actions=_actions_array(self.actions),
            reward_steps=np.asarray(self.reward_steps, dtype=np.int64),
            rewards=np.asarray(self.rewards, dtype=np.float64),
        )


class BatchRecording:
    """The episodes in flight of a batch of environments stepped together (a vector env).

    Every step's actions and rewards are kept until no env's episode in flight needs them.
    """

    engine = "ale-vector"
    """What plays the batch (ale-py's batched emulator), which a replay must use too."""

    def __init__(self, num_envs: int) -> None:
        self.starts: list[dict[str, Any] | None] = [None] * num_envs
        self._actions: list[np.ndarray] = []
        self._rewards: list[np.ndarray] = []
        self._first = 0  # the batch step of self._actions[0]

    def add(self, actions: Any, rewards: np.ndarray) -> None:
        """One batch step."""
        self._actions.append(np.array(actions, copy=True))
        self._rewards.append(np.array(rewards, dtype=np.float64, copy=True))

    def fields(self, env: int, start: int, end: int) -> dict[str, Any] | None:
        """Env ``env``'s episode of batch steps ``start`` to ``end`` (excluded): replay fields."""
        begun = self.starts[env]
        if begun is None:
            return None
        rows = range(start - self._first, end - self._first)
        actions = _actions_array([self._actions[r][env] for r in rows])
        rewards = np.array([self._rewards[r][env] for r in rows], dtype=np.float64)
        steps = np.flatnonzero(rewards)
        return replay_fields(
            start=begun,
            actions=actions,
            reward_steps=steps,
            rewards=rewards[steps],
            engine=self.engine,
        )

    def forget_before(self, step: int) -> None:
        """Drop the batch steps before ``step`` (no episode in flight needs them)."""
        drop = step - self._first
        if drop > 0:
            del self._actions[:drop]
            del self._rewards[:drop]
            self._first = step
