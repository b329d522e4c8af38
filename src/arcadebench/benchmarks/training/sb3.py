"""Training and evaluating with stable-baselines3 on the protocols (``arcadebench[sb3]``).

- :class:`ProtocolVecEnv` is an SB3 ``VecEnv`` over :func:`arcadebench.make_vec`: the batched
  Atari path (ale-py's C++ vector env, the protocol's wrappers, one run for the whole batch)
  for SB3 learners. :func:`make_sb3_vec_env` builds one.
- :class:`ProtocolCallback` writes the protocol's view of training to SB3's logger (so
  TensorBoard, CSV or W&B show it) and stops training when the run's budget is used up instead
  of letting the next reset fail.

A saved model played as an agent of the runner (``--agent sb3:PPO:model.zip``) is
:mod:`~arcadebench.benchmarks.training.sb3_policy`, which imports neither SB3 nor torch until a
worker loads it.

Classes: ProtocolVecEnv, ProtocolCallback.
Functions: make_sb3_vec_env.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from arcadebench.benchmarks.envs import make_vec
from arcadebench.benchmarks.training.protocol_view import CheckpointScores
from arcadebench.records import counters_path, log_path, read_totals
from arcadebench.specs import Spec, load_spec

__all__ = ["ProtocolCallback", "ProtocolVecEnv", "make_sb3_vec_env"]


def _split(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """A vector env's info (arrays with ``_key`` masks) as one dict per env."""
    out: list[dict[str, Any]] = [{} for _ in range(n)]
    for key, value in info.items():
        if key.startswith("_") or key == "final_obs":
            continue
        mask = info.get(f"_{key}")
        parts = _split(value, n) if isinstance(value, dict) else None
        for i in range(n):
            if mask is None or mask[i]:
                out[i][key] = parts[i] if parts is not None else value[i]
    return out


class ProtocolVecEnv(VecEnv):
    """An SB3 ``VecEnv`` over a protocol vector env (:func:`arcadebench.make_vec`).

    Semantics are SB3's ``DummyVecEnv``'s: an env whose episode ends is reset in the same step
    (``make_vec`` does that natively), its last observation is ``info["terminal_observation"]``
    and ``info["TimeLimit.truncated"]`` marks truncations (the protocol's caps and stuck limit),
    so PPO bootstraps them. ``info["episode"]`` carries the protocol return and length of a
    finished episode (what SB3's ``ep_rew_mean`` shows), ``info["arcadebench"]`` the rest.
    Seeds set with ``seed()`` go to the next reset only, as in SB3.

    Args:
        venv: a vector env made by :func:`arcadebench.make_vec`.
    """

    def __init__(self, venv: VectorEnv) -> None:
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: np.ndarray | None = None
        self._t0 = time.perf_counter()

    def reset(self) -> np.ndarray:
        """Reset every env (with the seeds given to ``seed()``, once); the observations."""
        seeds = None if all(s is None for s in self._seeds) else [int(s or 0) for s in self._seeds]
        # Sync/AsyncVectorEnv take one seed per env; VectorEnv.reset's annotation says one int
        obs, info = self.venv.reset(seed=seeds)  # type: ignore[arg-type]  # a list: see above
        self.reset_infos = _split(info, self.num_envs)
        self._reset_seeds()
        self._reset_options()
        observations: np.ndarray = obs
        return observations

    def step_async(self, actions: np.ndarray) -> None:
        """Remember the actions of the next step."""
        self._actions = np.asarray(actions)

    def step_wait(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
        """Step every env: observations, rewards, dones and one info dict per env."""
        obs, rewards, terminated, truncated, info = self.venv.step(self._actions)
        dones = terminated | truncated
        infos = _split(info, self.num_envs)
        final = info.get("final_obs")
        for i in np.flatnonzero(dones).tolist():
            infos[i]["terminal_observation"] = final[i] if final is not None else obs[i]
            episode = infos[i].get("arcadebench", {}).get("episode")
            if episode is not None:
                infos[i]["episode"] = {
                    "r": episode["return"],
                    "l": episode["steps"],
                    "t": round(time.perf_counter() - self._t0, 6),
                }
        for i, info_i in enumerate(infos):
            info_i["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32), dones, infos

    def close(self) -> None:
        """Close the vector env (its run's log stays)."""
        self.venv.close()

    def get_attr(self, attr_name: str, indices: Any = None) -> list[Any]:
        """An attribute of the vector env, once per env (SB3 reads ``render_mode``)."""
        value = getattr(self.venv, attr_name)
        return [value for _ in self._get_indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: Any = None) -> None:
        """Set an attribute of the vector env."""
        setattr(self.venv, attr_name, value)

    def env_method(
        self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any
    ) -> list[Any]:
        """Call a method of the vector env, once (the result is repeated per env)."""
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in self._get_indices(indices)]

    def env_is_wrapped(self, wrapper_class: type, indices: Any = None) -> list[bool]:
        """No SB3 wrapper is inside: the protocol env is never wrapped by SB3's Atari wrappers."""
        return [False for _ in self._get_indices(indices)]


def make_sb3_vec_env(
    spec: str | Spec, game: str, num_envs: int, **make_vec_kwargs: Any
) -> ProtocolVecEnv:
    """``num_envs`` envs of ``game`` as one SB3 ``VecEnv`` and one run (``make_vec``'s options).

    Example:
        >>> envs = make_sb3_vec_env("saber", "pong", 2, log_dir=False)
        >>> envs.reset().shape, envs.action_space
        ((2, 4, 84, 84), Discrete(18))
        >>> envs.close()
    """
    return ProtocolVecEnv(make_vec(spec, game, num_envs, **make_vec_kwargs))


class ProtocolCallback(BaseCallback):
    """The protocol's view of an SB3 training run, in SB3's logger; stops at the budget.

    Records (under ``arcadebench/``): ``run_frames`` and ``run_steps`` (all the run's
    environments, read from the run's counters), ``episode_return`` (the mean protocol return
    of the episodes that finished since the last dump, before any reward clipping), and at each
    frame checkpoint of the spec the run passes (SABER Section 3.2),
    ``checkpoint_<frames>/<metric>`` for the game's raw and normalised scores there, scored from
    the log exactly as ``arcadebench score`` does. Training stops (``_on_step`` returns
    ``False``) once the run's budget is used up.

    Args:
        spec: the protocol.
        game: the game trained on.
        log_dir: the log root the training envs write to (``None``: no checkpoint scores).
        run: the run id of the training envs.
        every: read the run's counters every this many calls (cheap, but not free).
    """

    def __init__(
        self,
        spec: str | Spec,
        game: str,
        log_dir: str | os.PathLike[str] | None,
        run: str = "0",
        every: int = 256,
        verbose: int = 0,
    ) -> None:
        super().__init__(verbose)
        self.spec = load_spec(spec)
        self.game = self.spec.resolve_game(game)
        self.log = log_path(log_dir, self.spec.name, self.game, run) if log_dir else None
        self.every = every
        self.checkpoints = CheckpointScores(self.spec, self.game, self.log)
        self._returns: list[float] = []
        self._exhausted = False

    @property
    def scored(self) -> dict[int, dict[str, Any]]:
        """The scores at each checkpoint passed so far, ``{frames: {metric: value}}``."""
        return self.checkpoints.scored

    def _on_step(self) -> bool:
        for info in self.locals.get("infos", ()):
            protocol = info.get("arcadebench") or {}
            episode = protocol.get("episode")
            if episode is not None:
                self._returns.append(float(episode["return"]))
                if episode["end_reason"] == "budget":
                    self._exhausted = True
            if protocol.get("budget_exhausted"):
                self._exhausted = True
        if self._exhausted or self.n_calls % self.every == 0:
            self._record()
        if self._exhausted and self.verbose:
            print("arcadebench: the run's budget is used up; training stops")
        return not self._exhausted

    def _record(self) -> None:
        if self._returns:
            self.logger.record("arcadebench/episode_return", float(np.mean(self._returns)))
            self._returns = []
        if self.log is None or not counters_path(self.log).exists():
            return
        steps, frames = read_totals(self.log)
        self.logger.record("arcadebench/run_steps", steps)
        self.logger.record("arcadebench/run_frames", frames)
        for checkpoint, cell in self.checkpoints.update(frames).items():
            for metric, value in cell.items():
                self.logger.record(f"arcadebench/checkpoint_{checkpoint}/{metric}", value)

    def _on_training_end(self) -> None:
        # A checkpoint can only be scored once an episode has ended past it, which is often
        # after the last of SB3's own dumps: dump once more so the final scores are not lost.
        self._record()
        self.logger.dump(self.num_timesteps)
