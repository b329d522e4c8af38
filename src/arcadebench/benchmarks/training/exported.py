"""What TorchScript and ONNX saved policies share: their output convention and how they play.

A policy trained with CleanRL, RLlib, Dopamine's PyTorch ports or a user's own loop is
evaluated under a protocol without arcadebench knowing its code: the user exports the network
once (``torch.jit.save`` or ``torch.onnx.export``) and the runner plays the file
(``--agent torchscript:policy.pt`` or ``--agent onnx:policy.onnx``, ``:stochastic`` appended to
sample). Both kinds (:mod:`~.torchscript_policy`, :mod:`~.onnx_policy`) build on
:class:`ExportedPolicy`, a *batched* agent: a worker loads the file once
(:meth:`~ExportedPolicy.load`), checks it against each environment
(:meth:`~ExportedPolicy.check`) and calls :meth:`~ExportedPolicy.act_batch` once per batch step
with the observations of the episodes in flight stacked on axis 0; :class:`ExportedKind` is
the saved-policy kind of either (:mod:`arcadebench.benchmarks.runner.saved`).

**The output convention.** The exported module or graph maps a batch of observations
``(B, *obs_shape)``, exactly as the protocol env gives them (``uint8``; bake any scaling such
as ``/ 255`` into the export), to its first output, which is either

- ``(B,)`` integer actions (``(B, 1)`` is read as the same), taken as they are; or
- ``(B, n)`` logits or Q-values, one per action: the greedy action is the argmax; with
  ``deterministic=False`` an action is sampled from ``softmax(logits)`` by the inverse CDF of
  one ``rngs[i].random()`` per row, so a row's action depends on its own episode's generator
  only, never on which other episodes share the batch, and a resumed run replays it.

Further outputs (a critic's value, say) are ignored. What the environment must give is read
from the file where the file says it, without importing a framework (the parent process of a
run only constructs the agent and pickles it to the workers): an ONNX graph declares its input
shape and dtype and its output shape; a TorchScript archive says nothing of shapes unless it
carries an ``arcadebench.json`` extra file (``{"observation_shape": [128], "actions": 18}``,
both optional, written with ``torch.jit.save(module, path, _extra_files={"arcadebench.json":
...})``), else the standard observation ``(4, 84, 84)`` is assumed and
:meth:`~ExportedPolicy.check` verifies it (and the runner learns the number of actions only
then, too late to map a model of another action set). The shape chooses
``env_kwargs["obs_type"]`` (:data:`~arcadebench.benchmarks.envs.spaces.OBSERVATION_SHAPES`).

Classes: ExportedPolicy, ExportedKind.
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.envs.spaces import OBSERVATION_SHAPES, obs_type_for_shape
from arcadebench.errors import IncompatibleAgent, InvalidArgument, MissingDependency, install_hint

__all__ = [
    "FIX_OUTPUT",
    "METADATA_FILE",
    "ONNX_PREFIX",
    "TORCHSCRIPT_PREFIX",
    "ExportedKind",
    "ExportedPolicy",
    "framework",
    "inverse_cdf",
    "last_line",
]

TORCHSCRIPT_PREFIX = "torchscript:"
"""The prefix of a TorchScript file as an agent, ``torchscript:<file>[:stochastic]``."""

ONNX_PREFIX = "onnx:"
"""The prefix of an ONNX file as an agent, ``onnx:<file>[:stochastic]``."""

METADATA_FILE = "arcadebench.json"
"""The extra file of a TorchScript archive that tells its observation shape and its number of
actions (JSON: ``observation_shape``, ``actions``)."""

_STOCHASTIC = ":stochastic"
_DEVICE = re.compile(r"cpu|cuda(:(?P<index>\d+))?")
FIX_OUTPUT = "export a module whose first output is (B,) integer actions or (B, n) logits"


def _device_index(device: object) -> int | None:
    """``None`` for the CPU, the CUDA device's index otherwise; a bad string is refused."""
    match = _DEVICE.fullmatch(device) if isinstance(device, str) else None
    if match is None:
        raise InvalidArgument(f"`device` must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if device == "cpu":
        return None
    return int(match["index"] or 0)


def framework(module: str, extra: str, packages: str, what: str) -> Any:
    """Import a framework where the model is loaded, never where the agent is constructed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(
            f"{module} is needed to run {what}: {install_hint(extra, packages)}"
        ) from None


def last_line(error: BaseException) -> str:
    """The informative line of a framework's error: TorchScript's own come last, after a trace."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[-1] if lines else type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


class ExportedPolicy:
    """What both formats share: arguments, the output convention, checking, pickling."""

    format: ClassVar[str] = ""
    prefix: ClassVar[str] = ""

    def __init__(
        self, path: str | os.PathLike[str], *, deterministic: bool = True, device: str = "cpu"
    ) -> None:
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise InvalidArgument(f"`path` must be a file path (str or os.PathLike), got {path!r}")
        if not isinstance(deterministic, bool):
            raise InvalidArgument(f"`deterministic` must be True or False, got {deterministic!r}")
        self._device_index = _device_index(device)
        self.path = os.fspath(path)
        self.deterministic = deterministic
        self.device = device
        self.name = Path(self.path).stem
        self.env_kwargs: dict[str, Any] = {"obs_type": "standard"}
        self.observation_space: gym.spaces.Box | None = None
        self.action_space: gym.spaces.Discrete | None = None
        self._input_shape: tuple[int, ...] | None = None  # where the file says it
        self._actions_output: bool | None = None  # None: not known before a first run
        self._model: Any = None
        if not Path(self.path).is_file():
            raise IncompatibleAgent(
                f"{self.path}: no such file; give the path of a {self.format} file "
                f"({self.prefix}<file>)"
            )
        self._read()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.path!r}, deterministic={self.deterministic}, "
            f"device={self.device!r})"
        )

    def __getstate__(self) -> dict[str, Any]:
        # only the path and settings travel: each worker loads the model itself (load()); a
        # Box travels as its shape and dtype (its bounds are 113 kB for the standard one)
        space = self.observation_space
        kept = None if space is None else (space.shape, space.dtype.str)
        return {**self.__dict__, "_model": None, "observation_space": kept}

    def __setstate__(self, state: dict[str, Any]) -> None:
        kept = state["observation_space"]
        box = None if kept is None else gym.spaces.Box(0, 255, kept[0], np.dtype(kept[1]))
        self.__dict__.update(state, observation_space=box)

    def _read(self) -> None:
        """Read what the file says without a framework; refuse a file of another format."""
        raise NotImplementedError

    def _load(self, threads: int) -> Any:
        """The framework's model on ``self.device``, its intra-op threads set."""
        raise NotImplementedError

    def _forward(self, obs: np.ndarray) -> np.ndarray:
        """The model's first output for a batch, as a NumPy array."""
        raise NotImplementedError

    def _set_input(self, shape: tuple[int, ...]) -> None:
        """Take an input shape the file declares: it chooses the environment's observations.

        Raises:
            IncompatibleAgent: a shape no protocol env gives (naming the shapes there are).
        """
        obs_type = obs_type_for_shape(shape)
        if obs_type is None:
            choices = ", ".join(f"{s} {t}" for s, t in OBSERVATION_SHAPES.items())
            raise IncompatibleAgent(
                f"{self.path} takes observations of shape {shape}, which no protocol env gives "
                f"(obs_type shapes: {choices}); export a model for one of those"
            )
        self._input_shape = shape
        self.env_kwargs = {"obs_type": obs_type}
        self.observation_space = gym.spaces.Box(0, 255, shape, np.uint8)  # bytes, as envs give

    def load(self, threads: int = 1) -> None:
        """Import the framework and load the model, once in each worker (a second call is a no-op).

        Loading waits until here because a run's parent process only constructs the agent and
        sends it to the workers: it never pays for the framework or the weights.

        Args:
            threads: the framework's intra-op threads (one per worker when the workers fill
                the cores).

        Raises:
            MissingDependency: the framework is not installed.
            IncompatibleAgent: the device is not available, or the framework cannot load the
                file.
        """
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise InvalidArgument(f"`threads` must be an integer >= 1, got {threads!r}")
        if self._model is None:
            self._model = self._load(threads)

    def check(self, observation_space: gym.Space[Any], action_space: gym.Space[Any]) -> None:
        """Refuse an environment the model cannot play, before its first episode.

        A zero batch of the environment's observations goes through the model, so a wrong
        input shape or dtype fails here in one line instead of in a worker mid-run. Logits must
        be one per action; an actions output can only be checked against the action space as
        it plays (:meth:`act_batch`). Afterwards :attr:`observation_space` and
        :attr:`action_space` describe the model.

        Raises:
            IncompatibleAgent: naming the model's and the environment's sizes and the fix.
        """
        if not isinstance(observation_space, gym.spaces.Box):
            raise IncompatibleAgent(
                f"{self.name} takes array observations, the environment gives "
                f"{observation_space}; evaluate it on an environment with Box observations"
            )
        if not isinstance(action_space, gym.spaces.Discrete):
            raise IncompatibleAgent(
                f"{self.name} chooses discrete actions, the environment's are {action_space}; "
                "evaluate it on an environment with a Discrete action space"
            )
        shape, n = tuple(int(d) for d in observation_space.shape), int(action_space.n)
        if self._input_shape is not None and self._input_shape != shape:
            raise IncompatibleAgent(
                f"{self.name} takes observations of shape {self._input_shape} "
                f"(obs_type {obs_type_for_shape(self._input_shape)!r}), the environment "
                f"gives {shape}; evaluate it with env_kwargs={self.env_kwargs!r} or export a "
                f"model for {shape} observations"
            )
        self.load()
        zeros = np.zeros((2, *shape), observation_space.dtype)
        try:
            out = self._forward(zeros)
        except IncompatibleAgent:
            raise
        except Exception as error:  # noqa: BLE001 - whatever the user's model raises
            raise IncompatibleAgent(
                f"{self.name} fails on a zero batch of the environment's observations "
                f"{zeros.shape} {zeros.dtype} ({type(error).__name__}: {last_line(error)}); "
                f"export a model that takes (B, *{shape}) {zeros.dtype} observations as the "
                "environment gives them"
            ) from None
        actions, width = self._read_output(out, 2)
        if not actions and width != n:
            raise IncompatibleAgent(
                f"{self.name} outputs {width} logits per observation, the environment has {n} "
                f"actions ({action_space}); export a model with one output per action of this "
                "environment's action set"
            )
        if actions and not self.deterministic:
            raise IncompatibleAgent(
                f"{self.name} outputs actions, so it cannot be sampled from (stochastic); drop "
                f"{_STOCHASTIC} or export (B, n) logits"
            )
        self._actions_output = actions
        self.observation_space = observation_space
        self.action_space = gym.spaces.Discrete(n)

    def _read_output(self, out: np.ndarray, batch: int) -> tuple[bool, int]:
        """``(is an actions output, logits per row)`` of an output for ``batch`` rows."""
        if out.ndim == 0 or out.shape[0] != batch:
            raise IncompatibleAgent(
                f"{self.name} gives an output of shape {out.shape} for {batch} observations; "
                + FIX_OUTPUT
            )
        integer = np.issubdtype(out.dtype, np.integer)
        if out.ndim == 1 or (out.ndim == 2 and out.shape[1] == 1 and integer):
            if not integer:
                raise IncompatibleAgent(
                    f"{self.name} gives {out.dtype} values of shape {out.shape}, not integer "
                    f"actions; {FIX_OUTPUT}"
                )
            return True, 1
        if out.ndim != 2 or not np.issubdtype(out.dtype, np.number):
            raise IncompatibleAgent(
                f"{self.name} gives an output of shape {out.shape} {out.dtype} for {batch} "
                f"observations; {FIX_OUTPUT}"
            )
        return False, int(out.shape[1])

    def act_batch(self, obs: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """One action per row of ``obs``, greedy or sampled with that row's generator.

        Args:
            obs: the observations of the episodes in flight, stacked on axis 0, as the
                environment gives them.
            rngs: one generator per row, its episode's; sampling draws one ``random()`` from
                ``rngs[i]`` for row ``i`` (none when greedy).

        Returns:
            ``(B,)`` int64 actions.

        Raises:
            IncompatibleAgent: an actions output outside the action space checked.
        """
        if not isinstance(obs, np.ndarray) or obs.ndim < 2:
            raise InvalidArgument(
                f"`obs` must be a batch of observations stacked on axis 0, got {obs!r}"
            )
        if len(rngs) != len(obs):
            raise InvalidArgument(
                f"`rngs` must hold one generator per row of `obs` ({len(obs)}), got {len(rngs)}"
            )
        self.load()
        out = self._forward(obs)
        actions, _ = self._read_output(out, len(obs))
        if self._actions_output is None:
            self._actions_output = actions
        if actions:
            chosen = out.reshape(len(obs)).astype(np.int64)
            n = None if self.action_space is None else int(self.action_space.n)
            outside = chosen[(chosen < 0) | (chosen >= (n or np.iinfo(np.int64).max))]
            if len(outside):
                space = "any action space" if n is None else f"the {n} actions checked"
                raise IncompatibleAgent(
                    f"{self.name} chose action {int(outside[0])}, outside {space}; export a "
                    "model for this environment's action set"
                )
            return chosen
        if self.deterministic:
            greedy: np.ndarray = np.argmax(out, axis=1).astype(np.int64)
            return greedy
        return _sample(out, rngs)


def _sample(logits: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """Sample each row from ``softmax(logits[i])`` with one ``rngs[i].random()``.

    The inverse CDF: the first action whose cumulative probability exceeds the draw. A row's
    action is a function of its logits and its generator only.

    Example:
        >>> logits = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
        >>> draws = [np.random.default_rng(0), np.random.default_rng(1)]
        >>> [round(np.random.default_rng(s).random(), 3) for s in (0, 1)]
        [0.637, 0.512]
        >>> _sample(logits, draws).tolist()  # 0.637 is past 0.5, 0.512 past 0.2
        [1, 2]
    """
    z = logits.astype(np.float64)
    z -= z.max(axis=1, keepdims=True)
    return inverse_cdf(np.exp(z), rngs)


def inverse_cdf(weights: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """Row ``i``'s action drawn in proportion to ``weights[i]`` with one ``rngs[i].random()``."""
    cdf = np.cumsum(weights, axis=1)
    draws = np.fromiter((rng.random() for rng in rngs), np.float64, len(rngs)) * cdf[:, -1]
    chosen: np.ndarray = np.minimum((cdf <= draws[:, None]).sum(axis=1), weights.shape[1] - 1)
    return chosen.astype(np.int64)


class ExportedKind:
    """The saved-policy kind of a TorchScript or ONNX file: ``<prefix>:<file>[:stochastic]``.

    Args:
        policy: the policy class the files are read into.
        framework: the module the policies import when loaded.
    """

    def __init__(self, policy: type[ExportedPolicy], framework: str) -> None:
        self.policy = policy
        self.prefix = policy.prefix.removesuffix(":")
        self.usage = f"{self.prefix}:<file>[{_STOCHASTIC}]"
        self.framework = framework
        self.packages = (framework,)

    def read(self, reference: str, device: str) -> ExportedPolicy:
        """Parse ``<prefix>:<file>[:stochastic]`` and read the file's spaces.

        Raises:
            InvalidArgument: not of that form, or a bad ``device``.
            IncompatibleAgent: the file is missing, damaged or of another format.
        """
        body = reference.removeprefix(self.policy.prefix)
        path = body.removesuffix(_STOCHASTIC)
        if body == reference or not path:
            raise InvalidArgument(
                f"`agent` must be {self.usage} (e.g. {self.prefix}:runs/policy), got {reference!r}"
            )
        return self.policy(path, deterministic=path == body, device=device)
