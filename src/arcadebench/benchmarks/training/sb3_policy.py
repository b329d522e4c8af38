"""A saved stable-baselines3 model as a batched runner agent: ``sb3:<Algorithm>:<model.zip>``.

Evaluating a trained model is the job every paper ends with, so it has to be as fast as SB3's
own ``evaluate_policy`` and must never play a model on spaces it was not trained on. Hence:

- **Nothing heavy in the parent.** Constructing an :class:`SB3Policy` reads the zip's ``data``
  JSON only (the plain fields SB3 writes beside each pickled value: the observation shape and
  dtype, the number of actions, the policy class's module and name), so the runner checks the
  model against the protocol's environment before any worker starts, without importing torch
  (1.3 s) or stable-baselines3.
- **The policy, not the algorithm.** :meth:`SB3Policy.load`, in the worker, builds the saved
  policy class from its saved keyword arguments and loads ``policy.pth`` into it, as
  ``BaseAlgorithm.load`` does, but without the algorithm, its rollout buffer and its optimizer:
  building a torch optimizer imports ``torch._dynamo`` (1.8 s of a 2.0 s first ``PPO.load``
  here), and ``policy.optimizer.pth`` is twice the size of the policy.
- **Batched.** :meth:`SB3Policy.act_batch` answers every episode in flight with one
  ``policy.predict`` (what ``evaluate_policy`` does per vector step); stochastic actions
  (``:stochastic``) are drawn row by row from each episode's own generator, so an episode's
  actions do not depend on the episodes that share its batch.
- **The right class.** The algorithm named in the agent string must be one that trains the saved
  policy class (``sb3:DQN:ppo.zip`` is refused in one line naming the algorithms that do).

Classes: SB3Policy.
Functions: read_sb3_agent.
Constants: SB3_KIND, the ``sb3:`` kind of :mod:`arcadebench.benchmarks.runner.saved`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import pickletools
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.envs.spaces import obs_type_for_shape
from arcadebench.benchmarks.training.exported import inverse_cdf
from arcadebench.errors import IncompatibleAgent, MissingDependency, first_line, install_hint

__all__ = ["SB3_KIND", "SB3Policy", "read_sb3_agent"]

_ALGORITHM_PACKAGES = ("stable_baselines3", "sb3_contrib")


class _NoOptimizer:
    """Stands in for the policy's optimizer: evaluation never updates the weights."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass


def _saved_class(field: dict[str, Any]) -> str:
    """``module.Name`` of a class SB3 pickled into its JSON, read without unpickling it.

    Example:
        >>> import base64, pickle, collections
        >>> _saved_class({":serialized:": base64.b64encode(pickle.dumps(collections.OrderedDict))})
        'collections.OrderedDict'
    """
    import base64

    strings = [
        str(arg)
        for op, arg, _ in pickletools.genops(base64.b64decode(field[":serialized:"]))
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE")
    ]
    return ".".join(strings[:2])


def _space_fields(data: dict[str, Any], key: str, path: str) -> dict[str, Any]:
    field = data.get(key)
    if not isinstance(field, dict):
        raise IncompatibleAgent(
            f"{path} has no {key} in its data: not a stable-baselines3 model saved with "
            "model.save() (SB3 >= 1.0); save it again with model.save()"
        )
    return field


def _plain(value: Any) -> Any:
    """A field SB3 wrote beside a pickled value: JSON itself, or its ``str()`` (older SB3)."""
    return json.loads(value) if isinstance(value, str) else value


def _read_spaces(data: dict[str, Any], path: str) -> tuple[gym.spaces.Box, gym.spaces.Space[Any]]:
    """The model's spaces from the plain fields of its JSON (``_shape``, ``dtype``, ``n``)."""
    observation = _space_fields(data, "observation_space", path)
    action = _space_fields(data, "action_space", path)
    try:
        shape = tuple(_plain(observation["_shape"]))
        dtype = np.dtype(observation.get("dtype", "uint8"))
        if "Discrete" in action[":type:"] and "Multi" not in action[":type:"]:
            action_space: gym.spaces.Space[Any] = gym.spaces.Discrete(
                int(_plain(action["n"])), start=int(_plain(action.get("start", 0)))
            )
        else:
            action_space = gym.spaces.Box(-1, 1, tuple(_plain(action["_shape"])))
    except (KeyError, ValueError, TypeError) as error:
        raise IncompatibleAgent(
            f"{path}: its observation or action space cannot be read ({type(error).__name__}: "
            f"{error}); save the model again with this stable-baselines3 version"
        ) from None
    high = 255 if dtype == np.uint8 else np.inf
    low = 0 if dtype == np.uint8 else -np.inf
    return gym.spaces.Box(low, high, shape, dtype), action_space


class SB3Policy:
    """A saved stable-baselines3 model, played by the runner in batches (module docstring).

    The observation type of the environments it plays is chosen from the model's observation
    shape (``(4, 84, 84)`` is the standard observation), so it is always evaluated on the
    observations it was trained on.

    Args:
        algorithm: the SB3 (or sb3-contrib) class that trained the model: ``PPO``, ``A2C``,
            ``DQN``, ``QRDQN``...
        path: the ``.zip`` file ``model.save()`` wrote.
        deterministic: the policy's most likely action (else sampled from its distribution).
        device: where the policy runs: ``"cpu"``, ``"cuda"``, ``"cuda:1"``...

    Raises:
        IncompatibleAgent: no such file, not a zip SB3 wrote, or observations no protocol
            environment gives.

    Example:
        >>> SB3Policy("PPO", "missing.zip")
        Traceback (most recent call last):
        ...
        arcadebench.errors.IncompatibleAgent: `path` must be a saved stable-baselines3 model (.zip), got 'missing.zip': no such file
    """  # noqa: E501 - a doctest's expected line

    def __init__(
        self,
        algorithm: str,
        path: str | os.PathLike[str],
        deterministic: bool = True,
        device: str = "cpu",
    ) -> None:
        self.algorithm = algorithm
        self.path = str(path)
        self.deterministic = deterministic
        self.device = device
        if not Path(self.path).is_file():
            raise IncompatibleAgent(
                f"`path` must be a saved stable-baselines3 model (.zip), got {self.path!r}: "
                "no such file"
            )
        data = self._data()
        self.observation_space, self.action_space = _read_spaces(data, self.path)
        self.policy_class = _saved_class(_space_fields(data, "policy_class", self.path))
        obs_type = obs_type_for_shape(self.observation_space.shape)
        if obs_type is None:
            raise IncompatibleAgent(
                f"{self.path} expects observations of shape {self.observation_space.shape}, "
                "which no protocol environment gives (obs_type 'standard': (4, 84, 84), 'rgb': "
                "(210, 160, 3), 'grayscale': (210, 160), 'ram': (128,)); train it on one of "
                "those"
            )
        self.env_kwargs = {"obs_type": obs_type}
        self._policy: Any = None

    @property
    def name(self) -> str:
        """The agent's name in logs and results, the model file's name."""
        return Path(self.path).stem

    def _data(self) -> dict[str, Any]:
        try:
            with zipfile.ZipFile(self.path) as archive:
                if "policy.pth" not in archive.namelist():
                    raise KeyError("policy.pth")
                data = json.loads(archive.read("data"))
        except (zipfile.BadZipFile, KeyError, ValueError, OSError) as error:
            raise IncompatibleAgent(
                f"{self.path} is not a stable-baselines3 model ({type(error).__name__}: "
                f"{error}): pass the .zip that model.save() wrote"
            ) from None
        if not isinstance(data, dict):
            raise IncompatibleAgent(f"{self.path}: its data is not SB3's JSON; save it again")
        return data

    # -- in the worker ---------------------------------------------------------------------
    def load(self, threads: int = 1) -> None:
        """Build the policy and load its weights on :attr:`device` (once per worker process).

        Raises:
            MissingDependency: stable-baselines3 (or torch) is not installed.
            IncompatibleAgent: an unknown algorithm, one that does not train this policy class,
                an unavailable device, or weights that do not fit.
        """
        if self._policy is not None:
            return
        try:
            import torch
            from stable_baselines3.common.save_util import json_to_data
        except ImportError:
            raise MissingDependency(
                f"{self.path} needs stable-baselines3: " + install_hint("sb3", "stable-baselines3")
            ) from None
        torch.set_num_threads(threads)
        with contextlib.suppress(RuntimeError):  # only before torch's first parallel work
            torch.set_num_interop_threads(threads)
        device = self._device(torch)
        algorithm = self._algorithm_class()
        fields = ("policy_class", "policy_kwargs", "observation_space", "action_space")
        data = self._data()
        saved = json_to_data(json.dumps({key: data[key] for key in fields if key in data}))
        policy_class = saved["policy_class"]
        allowed = tuple(algorithm.policy_aliases.values())
        if not (isinstance(policy_class, type) and issubclass(policy_class, allowed)):
            raise IncompatibleAgent(
                f"{self.path} holds a policy of class {self.policy_class.rpartition('.')[2]}, "
                f"which {self.algorithm} does not train ({_trainers(self.policy_class)}); pass the "
                f"algorithm that saved it, e.g. sb3:{_trainers(self.policy_class, first=True)}:"
                f"{self.path}"
            )
        kwargs = dict(saved.get("policy_kwargs") or {})
        kwargs.pop("device", None)
        kwargs["optimizer_class"] = _NoOptimizer
        try:
            policy = policy_class(
                saved["observation_space"], saved["action_space"], lambda _: 0.0, **kwargs
            )
            with zipfile.ZipFile(self.path) as archive:
                state = torch.load(
                    io.BytesIO(archive.read("policy.pth")), map_location=device, weights_only=True
                )
            policy.load_state_dict(state)
        except (RuntimeError, TypeError, ValueError, KeyError) as error:
            raise IncompatibleAgent(
                f"{self.path}: its weights do not load into its {self.policy_class} "
                f"({type(error).__name__}: {first_line(error)}); save the model again with this "
                "stable-baselines3 version"
            ) from None
        policy.to(device)
        policy.set_training_mode(False)
        self._policy = policy

    def _device(self, torch: Any) -> Any:
        try:
            device = torch.device(self.device)
        except RuntimeError:
            device = None
        if device is None or (device.type == "cuda" and not torch.cuda.is_available()):
            found = torch.cuda.device_count() if torch.cuda.is_available() else 0
            raise IncompatibleAgent(
                f"`device` must be a device torch can use here, got {self.device!r} "
                f"({found} CUDA devices); use 'cpu' or one of cuda:0..cuda:{max(found - 1, 0)}"
                if found
                else f"`device` must be a device torch can use here, got {self.device!r} (this "
                "machine has no CUDA device torch can see); use 'cpu'"
            )
        return device

    def _algorithm_class(self) -> Any:
        import importlib

        for package in _ALGORITHM_PACKAGES:
            try:
                module = importlib.import_module(package)
            except ImportError:
                continue
            found = getattr(module, self.algorithm, None)
            if isinstance(found, type) and hasattr(found, "policy_aliases"):
                return found
        raise IncompatibleAgent(
            f"`algorithm` must be a stable-baselines3 algorithm (PPO, A2C, DQN, SAC, TD3, DDPG, "
            f"or sb3-contrib's QRDQN, ...), got {self.algorithm!r}"
        )

    def act_batch(self, obs: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """One action per row of ``obs``: the policy's most likely, or drawn with ``rngs[i]``."""
        if self._policy is None:
            self.load()
        if self.deterministic:
            return self._greedy(obs)
        return _sample(self._policy, obs, rngs)

    def _greedy(self, obs: np.ndarray) -> np.ndarray:
        """``policy.predict(obs, deterministic=True)`` without its per-call checks and copies.

        ``predict`` checks the observation's shape against the space, copies it into a tensor
        and back, per call; the runner has checked the spaces once, so the policy's own
        ``_predict`` (what ``predict`` calls, the same in every SB3 policy since 1.0) runs on
        the batch as it is, under ``inference_mode``: 0.3-0.7 ms less per batch of 4-8 here.
        """
        import torch

        policy = self._policy
        with torch.inference_mode():
            tensor = torch.as_tensor(obs, device=policy.device)
            actions = policy._predict(tensor, deterministic=True)
        greedy: np.ndarray = actions.cpu().numpy().astype(np.int64).reshape(len(obs))
        return greedy

    def __getstate__(self) -> dict[str, Any]:
        """Paths and settings only: each worker loads the model itself."""
        return {**self.__dict__, "_policy": None}


def _sample(policy: Any, obs: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """Draw row ``i``'s action from the policy's distribution with ``rngs[i]`` (inverse CDF)."""
    import torch

    with torch.no_grad():
        tensor, _ = policy.obs_to_tensor(obs)
        distribution = policy.get_distribution(tensor).distribution
        probs = distribution.probs.cpu().numpy().astype(np.float64)
    return inverse_cdf(probs, rngs)


_TRAINERS = {  # the policy modules of SB3's algorithms, to name the right one in a refusal
    "stable_baselines3.common.policies": ("PPO", "A2C"),
    "stable_baselines3.dqn.policies": ("DQN",),
    "stable_baselines3.sac.policies": ("SAC",),
    "stable_baselines3.td3.policies": ("TD3", "DDPG"),
    "sb3_contrib.qrdqn.policies": ("QRDQN",),
}


def _trainers(policy_class: str, first: bool = False) -> str:
    """The algorithms that train ``policy_class`` (by its module), in words."""
    found = _TRAINERS.get(policy_class.rpartition(".")[0], ())
    if first:
        return found[0] if found else "<Algorithm>"
    return f"{' and '.join(found)} do" if found else "see the class's package"


def read_sb3_agent(text: str, device: str = "cpu") -> SB3Policy:
    """Parse ``sb3:<Algorithm>:<path>[:stochastic]`` into an :class:`SB3Policy`.

    ``path`` may leave out ``.zip``, as ``model.save(name)`` and ``PPO.load(name)`` do.

    Raises:
        IncompatibleAgent: not of that form, or the file is not a usable model.

    Example:
        >>> read_sb3_agent("sb3:ppo")
        Traceback (most recent call last):
        ...
        arcadebench.errors.IncompatibleAgent: `agent` must be \
sb3:<Algorithm>:<model.zip>[:stochastic], e.g. sb3:PPO:runs/ppo_pong.zip, got 'sb3:ppo'; \
did you mean sb3:PPO:<model.zip>?
    """
    body = text.removeprefix("sb3:")
    algorithm, _, path = body.partition(":")
    deterministic = not path.endswith(":stochastic")
    path = path.removesuffix(":stochastic")
    if not algorithm or not path:
        known = {name.lower(): name for names in _TRAINERS.values() for name in names}
        hint = known.get(algorithm.lower())
        raise IncompatibleAgent(
            f"`agent` must be sb3:<Algorithm>:<model.zip>[:stochastic], e.g. "
            f"sb3:PPO:runs/ppo_pong.zip, got {text!r}"
            + (f"; did you mean sb3:{hint}:<model.zip>?" if hint else "")
        )
    if not Path(path).is_file() and Path(f"{path}.zip").is_file():
        path = f"{path}.zip"  # SB3's own save name
    return SB3Policy(algorithm, path, deterministic=deterministic, device=device)


class _SB3Kind:
    """The ``sb3:`` saved-policy kind (:mod:`arcadebench.benchmarks.runner.saved`)."""

    prefix = "sb3"
    usage = "sb3:<Algorithm>:<model.zip>[:stochastic]"
    framework = "torch"
    packages = ("stable_baselines3", "torch")

    def read(self, reference: str, device: str) -> SB3Policy:
        """The model's policy, read from its zip without torch."""
        return read_sb3_agent(reference, device)


SB3_KIND = _SB3Kind()
"""A stable-baselines3 zip as a saved policy, named like ``sb3:PPO:model.zip``."""
