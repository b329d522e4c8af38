"""Training and evaluating with stable-baselines3 on the protocols (``arcadebench[sb3]``).

- :class:`ProtocolVecEnv` is an SB3 ``VecEnv`` over :func:`arcadebench.make_vec`: the batched
  Atari path (ale-py's C++ vector env, the protocol's wrappers, one run for the whole batch)
  for SB3 learners. :func:`make_sb3_vec_env` builds one.
- :class:`ProtocolCallback` writes the protocol's view of training to SB3's logger (so
  TensorBoard, CSV or W&B show it): the run's frames (all its environments), the protocol
  return of finished episodes, the score at each frame checkpoint (SABER Section 3.2: the mean
  of the last 100 training episodes, computed by the scorer from the run's log), and it stops
  training when the run's budget is used up instead of letting the next reset fail.
- :class:`SB3Policy` is a saved model as an agent of the runner (``--agent
  sb3:PPO:path/to/model.zip``): loaded in each worker, its observation settings read from the
  model, deterministic actions unless ``:stochastic`` is appended, named after the file.

Classes: ProtocolVecEnv, ProtocolCallback, SB3Policy.
Functions: make_sb3_vec_env, read_sb3_agent.
"""

from __future__ import annotations

import importlib
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from gymnasium.vector import VectorEnv
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from arcadebench.benchmarks.envs import make_vec
from arcadebench.benchmarks.training.protocol_view import CheckpointScores
from arcadebench.errors import AgentError, MissingDependency, install_hint
from arcadebench.records import counters_path, log_path, read_totals
from arcadebench.specs import Spec, load_spec

__all__ = ["ProtocolCallback", "ProtocolVecEnv", "SB3Policy", "make_sb3_vec_env", "read_sb3_agent"]

# what each obs_type of the protocol envs gives, to match a saved model's observation space
OBSERVATION_SHAPES = {
    (4, 84, 84): "standard",
    (210, 160, 3): "rgb",
    (210, 160): "grayscale",
    (128,): "ram",
}


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
    Seeds set with :meth:`seed` go to the next reset only, as in SB3.

    Args:
        venv: a vector env made by :func:`arcadebench.make_vec`.
    """

    def __init__(self, venv: VectorEnv) -> None:
        self.venv = venv
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions: np.ndarray | None = None
        self._t0 = time.perf_counter()

    def reset(self) -> np.ndarray:
        """Reset every env (with the seeds given to :meth:`seed`, once); the observations."""
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
    frame checkpoint of the spec the run passes, ``checkpoint_<frames>/<metric>`` for the
    game's raw and normalised scores there, scored from the log exactly as ``arcadebench score``
    does. Training stops (``_on_step`` returns ``False``) once the run's budget is used up.

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
        """The scores at each checkpoint passed so far: ``{frames: {metric: value}}``."""
        return self.checkpoints.scored

    def _totals(self) -> tuple[int, int] | None:
        if self.log is None or not counters_path(self.log).exists():
            return None
        return read_totals(self.log)

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
        totals = self._totals()
        if totals is None:
            return
        steps, frames = totals
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


class SB3Policy:
    """A saved stable-baselines3 model as a runner agent: ``sb3:<Algorithm>:<model.zip>``.

    The model is loaded (on the CPU) where the agent plays, i.e. in each worker process; only
    the path travels. Its observation space chooses the environment's ``obs_type``
    (``(4, 84, 84)`` is the standard observation), so a model is always evaluated on the
    observations it was trained on. Actions are the policy's deterministic ones unless
    ``deterministic`` is off (``sb3:PPO:model.zip:stochastic``).

    Args:
        algorithm: the SB3 class that saved the model (``PPO``, ``DQN``, ``A2C``, ...).
        path: the ``.zip`` file.
        deterministic: take the policy's most likely action.

    Raises:
        MissingDependency: stable-baselines3 is not installed.
        AgentError: no such algorithm or file, or a model whose observations no protocol env
            gives.
    """

    def __init__(
        self, algorithm: str, path: str | os.PathLike[str], deterministic: bool = True
    ) -> None:
        self.algorithm = algorithm
        self.path = str(path)
        self.deterministic = deterministic
        if not Path(self.path).is_file():
            raise AgentError(
                f"`path` must be a saved model (.zip), got {self.path!r}: no such file"
            )
        self._model: Any = None
        self.env_kwargs = {"obs_type": self._obs_type(self._load().observation_space.shape)}
        self._model = None  # loaded again in the worker: a model is not sent between processes

    @property
    def name(self) -> str:
        """The agent's name in logs and results: the model file's name."""
        return Path(self.path).stem

    def _load(self) -> Any:
        try:
            module = importlib.import_module("stable_baselines3")
        except ImportError:  # pragma: no cover - the module imports SB3 itself
            raise MissingDependency(
                "stable-baselines3 is needed to load a saved model: "
                + install_hint("sb3", "stable-baselines3")
            ) from None
        cls = getattr(module, self.algorithm, None)
        if cls is None or not hasattr(cls, "load"):
            raise AgentError(
                f"`algorithm` must be a stable-baselines3 algorithm (PPO, DQN, A2C, ...), got "
                f"{self.algorithm!r}"
            )
        return cls.load(self.path, device="cpu")

    def _obs_type(self, shape: Sequence[int] | None) -> str:
        found = OBSERVATION_SHAPES.get(tuple(shape or ()))
        if found is None:
            choices = ", ".join(f"{s} ({t})" for s, t in OBSERVATION_SHAPES.items())
            raise AgentError(
                f"{self.path} expects observations of shape {tuple(shape or ())}, which no "
                f"protocol env gives (obs_type shapes: {choices}); train it on one of those"
            )
        return found

    def predict(self, obs: Any) -> Any:
        """The model's action for one observation."""
        if self._model is None:
            self._model = self._load()
        action, _ = self._model.predict(obs, deterministic=self.deterministic)
        return action

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_model": None}


def read_sb3_agent(text: str) -> SB3Policy:
    """Parse ``sb3:<Algorithm>:<path>[:stochastic]`` into an :class:`SB3Policy`.

    Raises:
        AgentError: not of that form.
    """
    body = text.removeprefix("sb3:")
    algorithm, _, path = body.partition(":")
    deterministic = not path.endswith(":stochastic")
    path = path.removesuffix(":stochastic")
    if not algorithm or not path:
        raise AgentError(
            f"`agent` must be sb3:<Algorithm>:<model.zip>[:stochastic], e.g. "
            f"sb3:PPO:runs/ppo_pong.zip, got {text!r}"
        )
    return SB3Policy(algorithm, path, deterministic=deterministic)
