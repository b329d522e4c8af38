"""What the monitors keep of each episode so that it can be re-simulated: its start, its actions.

The emulators are deterministic given where an episode started and the actions played
(ale-py's state with its random generator, the env's own generator for no-op starts and
Sonic's sticky frame skip), so an episode is recorded as (:mod:`arcadebench.records.replay_format`):

- its *start*: the seed of a seeded reset; for an unseeded one, a :func:`snapshot` taken just
  before the reset (the emulator's state with its generator, and the env's generator), from
  which a replay resets exactly as the episode did, no-op starts and wrappers' counters
  included; for the game going on after a lost life, the episode it continues;
- its actions, and the steps with a non-zero reward (to name where a replay departs);
- digests of the emulator's state after the reset, every
  :data:`~arcadebench.records.replay_format.DIGEST_EVERY` steps and after the last step: the
  low byte of the CRC-32 of its RAM (:func:`state_digest_reader`: ALE's 128 bytes,
  stable-retro's RAM), or, for ale-py's batched emulator whose RAM cannot be read, of the newest
  frame of the observation
  (:func:`observation_digest`), so that a replay under other settings, or with an action
  changed, departs at the next digest even where the rewards agree.

Recording costs a list append per step (about 0.1 us), a digest every 8 steps (0.7 us for
ALE's RAM, 3.5 us for an 84x84 frame) and, per unseeded episode, a snapshot (ale-py's
``cloneState``: 14.5 KB, 7.5 KB compressed).

Classes: EpisodeRecording, BatchRecording.
Functions: snapshot, restore_snapshot, state_digest_reader, observation_digest.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.records.replay_format import (
    DIGEST_EVERY,
    ENGINES,
    MAX_SNAPSHOT_BYTES,
    decode_array,
    encode_array,
    replay_fields,
)

__all__ = [
    "BatchRecording",
    "EpisodeRecording",
    "observation_digest",
    "restore_snapshot",
    "snapshot",
    "state_digest_reader",
]


def state_digest_reader(env: gym.Env[Any, Any]) -> Callable[[], int] | None:
    """A function giving the digest of ``env``'s emulator RAM as it is now, or ``None``.

    The digest is the low byte of the RAM's CRC-32
    (:data:`~arcadebench.records.replay_format.DIGEST_EVERY` says why a byte).

    ALE's RAM (128 bytes, read into one buffer: 0.7 us a digest) or stable-retro's
    (``get_ram``); ``None`` for an environment with neither.
    """
    base = env.unwrapped
    ale = getattr(base, "ale", None)
    if ale is not None and hasattr(ale, "getRAM"):
        buffer = np.empty(ale.getRAMSize(), dtype=np.uint8)
        read_ram = ale.getRAM

        def ale_digest() -> int:
            read_ram(buffer)
            return zlib.crc32(buffer.data) & 0xFF

        return ale_digest
    get_ram = getattr(base, "get_ram", None)
    if callable(get_ram):
        return lambda: zlib.crc32(np.ascontiguousarray(get_ram()).data) & 0xFF
    return None


def observation_digest(observation: np.ndarray, obs_type: str) -> int:
    """The digest of an observation's newest frame (the last of a ``"standard"`` stack).

    The low byte of its CRC-32, as :func:`state_digest_reader`'s.

    Example:
        >>> stack = np.zeros((4, 84, 84), np.uint8)
        >>> observation_digest(stack, "standard") == observation_digest(stack[-1], "rgb")
        True
    """
    frame = observation[-1] if obs_type == "standard" else observation
    return zlib.crc32(np.ascontiguousarray(frame).data) & 0xFF


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
        # level 1: 0.07 ms against 0.22 at 6 for ALE's 14.5 KB, 1 % larger (7.5 KB)
        found["ale"] = encode_array(np.frombuffer(data, np.uint8), level=1)
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
        data = decode_array(state["ale"], "uint8", (), limit=MAX_SNAPSHOT_BYTES).tobytes()
        ale.restoreState(ALEState(data))
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
    """One environment's episode in flight: where it started, its actions, rewards, digests.

    Args:
        digest: the emulator state's digest now (:func:`state_digest_reader`; ``None``: the
            episodes are recorded without digests).
    """

    __slots__ = ("_digest", "actions", "digests", "reward_steps", "rewards", "start")

    def __init__(self, digest: Callable[[], int] | None = None) -> None:
        self._digest = digest
        self.start: dict[str, Any] | None = None
        self.actions: list[Any] = []
        self.reward_steps: list[int] = []
        self.rewards: list[float] = []
        self.digests: list[int] = []

    def begin(self, start: dict[str, Any]) -> None:
        """A new episode, starting at ``start`` (the environment was just reset)."""
        self.start = start
        self.actions = []
        self.reward_steps = []
        self.rewards = []
        self.digests = [self._digest()] if self._digest is not None else []

    def add(self, action: Any, reward: float) -> None:
        """One step (the environment has just taken it)."""
        if reward:
            self.reward_steps.append(len(self.actions))
            self.rewards.append(reward)
        self.actions.append(action)
        if self._digest is not None and not len(self.actions) % DIGEST_EVERY:
            self.digests.append(self._digest())

    def fields(self) -> dict[str, Any] | None:
        """The replay line's fields, the state now its last digest (``None``: no episode began)."""
        if self.start is None:
            return None
        digests = None
        if self._digest is not None:
            values = [*self.digests, self._digest()]
            digests = {"of": "ram", "every": DIGEST_EVERY, "end": True, "values": values}
        return replay_fields(
            start=self.start,
            actions=_actions_array(self.actions),
            reward_steps=np.asarray(self.reward_steps, dtype=np.int64),
            rewards=np.asarray(self.rewards, dtype=np.float64),
            digests=digests,
        )


class BatchRecording:
    """The episodes in flight of a batch of environments stepped together (a vector env).

    Every step's actions and rewards are kept until no env's episode in flight needs them. The
    digests are of the observations (:func:`observation_digest`), as the batched emulator's RAM
    cannot be read.

    Args:
        num_envs: environments in the batch.
        obs_type: the batch's observation type (``None``: no digests).
    """

    engine = ENGINES[1]
    """What plays the batch (ale-py's batched emulator), which a replay must use too."""

    def __init__(self, num_envs: int, obs_type: str | None = None) -> None:
        self.starts: list[dict[str, Any] | None] = [None] * num_envs
        self.obs_type = obs_type
        self.digests: list[list[int]] = [[] for _ in range(num_envs)]
        self._due = np.full(num_envs, np.iinfo(np.int64).max, dtype=np.int64)
        self.next_due = int(self._due.min())  # the first batch step a digest is due at
        self._actions: list[np.ndarray] = []
        self._rewards: list[np.ndarray] = []
        self._first = 0  # the batch step of self._actions[0]

    def add(self, actions: Any, rewards: np.ndarray) -> None:
        """One batch step."""
        self._actions.append(np.array(actions, copy=True))
        self._rewards.append(np.array(rewards, dtype=np.float64, copy=True))

    def begin_digests(self, env: int, step: int, observation: np.ndarray) -> None:
        """Env ``env``'s episode began at batch step ``step`` with ``observation``."""
        if self.obs_type is None:
            return
        self.digests[env] = [observation_digest(observation, self.obs_type)]
        self._due[env] = step + DIGEST_EVERY
        self.next_due = int(self._due.min())

    def digest_due(self, step: int, observations: np.ndarray, info: dict[str, Any]) -> None:
        """After batch step ``step``: the digests due, of the state each env's step left.

        An env whose episode ended in the step was reset in it too: its state after the step
        is its final observation.
        """
        if self.obs_type is None:
            return
        ended = info.get("_final_obs")
        for env in np.flatnonzero(self._due == step).tolist():
            row = info["final_obs"][env] if ended is not None and ended[env] else observations[env]
            self.digests[env].append(observation_digest(row, self.obs_type))
            self._due[env] += DIGEST_EVERY
        self.next_due = int(self._due.min())

    def fields(
        self, env: int, start: int, end: int, last: np.ndarray | None = None
    ) -> dict[str, Any] | None:
        """Env ``env``'s episode of batch steps ``start`` to ``end`` (excluded): replay fields.

        ``last``: the observation after its last step (its end digest; ``None``: not known).
        """
        begun = self.starts[env]
        if begun is None:
            return None
        rows = range(start - self._first, end - self._first)
        actions = _actions_array([self._actions[r][env] for r in rows])
        rewards = np.array([self._rewards[r][env] for r in rows], dtype=np.float64)
        steps = np.flatnonzero(rewards)
        digests = None
        if self.obs_type is not None and self.digests[env]:
            values = list(self.digests[env])
            if last is not None:
                values.append(observation_digest(last, self.obs_type))
            digests = {
                "of": "observation",
                "obs_type": self.obs_type,
                "every": DIGEST_EVERY,
                "end": last is not None,
                "values": values,
            }
        return replay_fields(
            start=begun,
            actions=actions,
            reward_steps=steps,
            rewards=rewards[steps],
            engine=self.engine,
            digests=digests,
        )

    def forget_before(self, step: int) -> None:
        """Drop the batch steps before ``step`` (no episode in flight needs them)."""
        drop = step - self._first
        if drop > 0:
            del self._actions[:drop]
            del self._rewards[:drop]
            self._first = step
