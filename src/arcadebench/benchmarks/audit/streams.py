"""Env 0 of whatever is audited, played the way its learner plays it.

A Gymnasium env is stepped directly. A vector env (Gymnasium's ``SyncVectorEnv`` and
``AsyncVectorEnv``, ale-py's ``AtariVectorEnv``, envpool, stable-baselines3's ``VecEnv``) is
stepped as a batch, env 0 playing the agent's action and the others NOOP, and env 0's part of
each result is what the audit sees: its observation, reward, flags and ``info`` (Gymnasium's
vector ``info`` holds arrays, SB3's a list of dicts). Vector envs reset an env automatically:
Gymnasium's default and envpool's on the step after its episode ended ("next step", Gymnasium
1.x ``AutoresetMode``), SB3 within the step that ended it ("same step": the returned
observation is already the next episode's). :class:`Stream` hides the difference behind
``reset()`` after an episode ends.

Where env 0 lives in this process (a ``SyncVectorEnv`` or a ``DummyVecEnv``), the stream wraps
it so that the emulator tap (:mod:`.tap`) learns when its ``reset()`` begins, even inside a
vector step; ``Stream.host`` is then its emulator's holder.

Classes: Stream. Functions: open_stream, no_hook.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench._table import count
from arcadebench.benchmarks.audit.tap import emulator_host
from arcadebench.errors import InvalidArgument

__all__ = ["Stream", "no_hook", "open_stream"]


def no_hook() -> None:
    """The reset hook of a stream no tap listens to."""


class _ResetMark(gym.Wrapper[Any, Any, Any, Any]):
    """Tells the stream's hook that env 0's ``reset()`` begins (inside a vector env)."""

    def __init__(self, env: gym.Env[Any, Any], hook: Callable[[], Callable[[], None]]) -> None:
        super().__init__(env)
        self._hook = hook

    def reset(self, **kwargs: Any) -> Any:
        self._hook()()
        return self.env.reset(**kwargs)


def _env0(value: Any) -> Any:
    """Env 0's part of a batched value (an array, or a vector ``info`` dict of arrays)."""
    if isinstance(value, dict):
        return {
            key: _env0(item)
            for key, item in value.items()
            if not str(key).startswith("_") and value.get(f"_{key}", np.ones(1, bool))[0]
        }
    return value[0] if isinstance(value, np.ndarray | list | tuple) and len(value) else value


class Stream:
    """Env 0: ``reset(seed)``, ``step(action)``, its action count and, if reachable, its emulator.

    Attributes:
        label: what is played, for the report (``"gymnasium env"``, ``"SB3 VecEnv, 1 env"``).
        actions: the size of env 0's discrete action space.
        host: the holder of env 0's ``ALEInterface`` (``None``: out of reach).
        on_reset: called when env 0's ``reset()`` begins, where the stream can tell.
    """

    def __init__(self, env: Any, label: str, actions: int, host: Any | None) -> None:
        self.env = env
        self.label = label
        self.actions = actions
        self.host = host
        self.on_reset: Callable[[], None] = no_hook
        self.owned = True
        self._marked: list[Any] | None = None  # the vector env's env list whose env 0 is marked

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        """Start an episode (seeded when ``seed`` is given)."""
        self.on_reset()
        obs, info = self.env.reset(seed=seed)
        return obs, dict(info)

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Play one agent step."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, float(reward), bool(terminated), bool(truncated), dict(info)

    def close(self) -> None:
        """Unwrap env 0 again and close the env if the audit made it."""
        if self._marked is not None:
            self._marked[0] = self._marked[0].env
            self._marked = None
        if self.owned:
            self.env.close()


class _GymVector(Stream):
    """A Gymnasium ``VectorEnv`` (or envpool's Gymnasium interface): env 0 of the batch."""

    def __init__(self, env: Any, label: str, actions: int, host: Any | None) -> None:
        super().__init__(env, label, actions, host)
        self._n = int(getattr(env, "num_envs", 1))
        mode = getattr(env, "metadata", {}).get("autoreset_mode", "NextStep")
        self._same_step = str(getattr(mode, "value", mode)) == "SameStep"
        self._pending: tuple[Any, dict[str, Any]] | None = None
        self._ended = False

    def _batch(self, action: int) -> np.ndarray:
        return np.array([action] + [0] * (self._n - 1), dtype=np.int32)

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        if self._pending is not None:  # same-step autoreset: already reset inside the step
            result, self._pending, self._ended = self._pending, None, False
            return result
        if self._ended:  # next-step autoreset: this step resets env 0
            self._ended = False
            obs, _, _, _, info = self.env.step(self._batch(0))
            return _env0(obs), _env0(info)
        obs, info = self.env.reset(seed=seed)
        return _env0(obs), _env0(info)

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(self._batch(action))
        done = bool(terminated[0] or truncated[0])
        obs0, info0 = _env0(obs), _env0(info)
        if done and self._same_step:
            self._pending = (obs0, {})
            obs0 = info0.pop("final_obs", obs0)
            info0 = {**info0.pop("final_info", {}), **info0}
        self._ended = done and not self._same_step
        return obs0, float(reward[0]), bool(terminated[0]), bool(truncated[0]), info0


class _Sb3Vector(Stream):
    """A stable-baselines3 ``VecEnv``: env 0 of the batch, reset within the step that ends it."""

    def __init__(self, env: Any, label: str, actions: int, host: Any | None) -> None:
        super().__init__(env, label, actions, host)
        self._pending: tuple[Any, dict[str, Any]] | None = None

    def reset(self, seed: int | None = None) -> tuple[Any, dict[str, Any]]:
        if self._pending is not None:
            result, self._pending = self._pending, None
            return result
        if seed is not None:
            self.env.seed(seed)
        obs = self.env.reset()
        infos = getattr(self.env, "reset_infos", None) or [{}]
        return obs[0], dict(infos[0])

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        actions = np.array([action] + [0] * (self.env.num_envs - 1))
        obs, rewards, dones, infos = self.env.step(actions)
        info = dict(infos[0])
        obs0 = obs[0]
        truncated = bool(info.pop("TimeLimit.truncated", False))
        if dones[0]:
            resets = getattr(self.env, "reset_infos", None) or [{}]
            self._pending = (obs0, dict(resets[0]))
            obs0 = info.pop("terminal_observation", obs0)
        return obs0, float(rewards[0]), bool(dones[0]) and not truncated, truncated, info


def _discrete(space: Any, what: str) -> int:
    if not isinstance(space, gym.spaces.Discrete):
        raise InvalidArgument(
            f"`env` must have a discrete action space (Atari actions), got {space} for {what}"
        )
    return int(space.n)


def _mark_env0(env: Any, stream: Stream) -> Any | None:
    """Wrap env 0 of a vector env in this process so the stream hears its resets; its host."""
    inner = getattr(env, "unwrapped", env)
    while hasattr(inner, "venv"):  # VecFrameStack and other VecEnv wrappers
        inner = inner.venv
    envs = getattr(inner, "envs", None)
    if not isinstance(envs, list):  # not in this process (SubprocVecEnv, AsyncVectorEnv...)
        return None
    envs[0] = _ResetMark(envs[0], lambda: stream.on_reset)
    stream._marked = envs
    return emulator_host(envs[0])


def open_stream(env: Any, owned: bool = True) -> Stream:
    """Env 0 of ``env``: an env, a Gymnasium, ale-py or envpool vector env, or an SB3 VecEnv.

    ``owned``: the audit made it, and closes it.

    Raises:
        InvalidArgument: ``env`` is none of these, or its actions are not discrete.
    """
    stream = _open(env)
    stream.owned = owned
    return stream


def _open(env: Any) -> Stream:
    module = type(env).__module__
    stream: Stream
    if module.startswith("stable_baselines3") or hasattr(env, "step_async"):
        name = f"SB3 {type(env).__name__}, {count(env.num_envs, 'env')}"
        stream = _Sb3Vector(env, name, _discrete(env.action_space, name), None)
        stream.host = _mark_env0(env, stream)  # DummyVecEnv: in this process
        return stream
    if isinstance(env, gym.vector.VectorEnv):  # envpool's Gymnasium envs are ones too
        space = getattr(env, "single_action_space", None) or env.action_space
        name = f"{type(env).__name__}, {count(getattr(env, 'num_envs', 1), 'env')}"
        stream = _GymVector(env, name, _discrete(space, name), None)
        stream.host = _mark_env0(env, stream)  # SyncVectorEnv: in this process
        return stream
    if isinstance(env, gym.Env):
        name = type(env.unwrapped).__name__
        stream = Stream(env, f"Gymnasium env ({name})", _discrete(env.action_space, name), None)
        stream.host = emulator_host(env)
        return stream
    raise InvalidArgument(
        f"`env` must be a Gymnasium env or vector env, an envpool env or a stable-baselines3 "
        f"VecEnv, got {type(env).__name__} from {module}"
    )
