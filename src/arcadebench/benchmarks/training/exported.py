"""Saved policies from any framework as runner agents: TorchScript and ONNX files (issue 29).

A policy trained with CleanRL, RLlib, Dopamine's PyTorch ports or a user's own loop is
evaluated under a protocol without arcadebench knowing its code: the user exports the network
once (``torch.jit.save`` or ``torch.onnx.export``) and the runner plays the file
(``--agent torchscript:policy.pt`` or ``--agent onnx:policy.onnx``, ``:stochastic`` appended to
sample). Both classes are *batched* agents: a worker loads the file once (:meth:`load`), checks
it against each environment (:meth:`check`) and calls :meth:`act_batch` once per batch step
with the observations of the episodes in flight stacked on axis 0.

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
:meth:`~TorchScriptPolicy.check` verifies it (and the runner learns the number of actions only
then, too late to map a model of another action set). The shape chooses
``env_kwargs["obs_type"]`` (:data:`~arcadebench.benchmarks.envs.spaces.OBSERVATION_SHAPES`).

The ONNX header is read with the ``onnx`` package (:class:`_OnnxHeader`; the graph's inputs,
outputs and weight files), never ``onnxruntime``.

Classes: TorchScriptPolicy, OnnxPolicy.
Functions: read_exported_agent.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import warnings
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeAlias

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.envs.spaces import OBSERVATION_SHAPES, obs_type_for_shape
from arcadebench.errors import IncompatibleAgent, InvalidArgument, MissingDependency, install_hint

__all__ = [
    "EXPORTED_PREFIXES",
    "METADATA_FILE",
    "ONNX_PREFIX",
    "TORCHSCRIPT_PREFIX",
    "OnnxPolicy",
    "TorchScriptPolicy",
    "read_exported_agent",
]

TORCHSCRIPT_PREFIX = "torchscript:"
"""A TorchScript file as an agent: ``torchscript:<file>[:stochastic]``."""

ONNX_PREFIX = "onnx:"
"""An ONNX file as an agent: ``onnx:<file>[:stochastic]``."""

EXPORTED_PREFIXES = (TORCHSCRIPT_PREFIX, ONNX_PREFIX)
"""The agent strings :func:`read_exported_agent` reads (``text.startswith(EXPORTED_PREFIXES)``)."""

METADATA_FILE = "arcadebench.json"
"""The extra file of a TorchScript archive that tells its observation shape and its number of
actions (JSON: ``observation_shape``, ``actions``)."""

_STOCHASTIC = ":stochastic"
_DEVICE = re.compile(r"cpu|cuda(:(?P<index>\d+))?")
_FIX_OUTPUT = "export a module whose first output is (B,) integer actions or (B, n) logits"


def _device_index(device: object) -> int | None:
    """``None`` for the CPU, the CUDA device's index otherwise; a bad string is refused."""
    match = _DEVICE.fullmatch(device) if isinstance(device, str) else None
    if match is None:
        raise InvalidArgument(f"`device` must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")
    if device == "cpu":
        return None
    return int(match["index"] or 0)


def _import(module: str, extra: str, packages: str, what: str) -> Any:
    """Import a framework where the model is loaded, never where the agent is constructed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(
            f"{module} is needed to run {what}: {install_hint(extra, packages)}"
        ) from None


def _last_line(error: BaseException) -> str:
    """The informative line of a framework's error: TorchScript's own come last, after a trace."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[-1] if lines else type(error).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _box(shape: tuple[int, ...]) -> gym.spaces.Box:
    """The observations a protocol env gives for ``shape``: bytes."""
    return gym.spaces.Box(0, 255, shape, np.uint8)


def _obs_type(path: str, shape: tuple[int, ...]) -> str:
    """The ``obs_type`` giving ``shape``, or the refusal naming the shapes there are."""
    found = obs_type_for_shape(shape)
    if found is None:
        choices = ", ".join(f"{s} {t}" for s, t in OBSERVATION_SHAPES.items())
        raise IncompatibleAgent(
            f"{path} takes observations of shape {shape}, which no protocol env gives "
            f"(obs_type shapes: {choices}); export a model for one of those"
        )
    return found


class _ExportedPolicy:
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
        """Take an input shape the file declares: it chooses the environment's observations."""
        self._input_shape = shape
        self.env_kwargs = {"obs_type": _obs_type(self.path, shape)}
        self.observation_space = _box(shape)

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
                f"{zeros.shape} {zeros.dtype} ({type(error).__name__}: {_last_line(error)}); "
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
                + _FIX_OUTPUT
            )
        integer = np.issubdtype(out.dtype, np.integer)
        if out.ndim == 1 or (out.ndim == 2 and out.shape[1] == 1 and integer):
            if not integer:
                raise IncompatibleAgent(
                    f"{self.name} gives {out.dtype} values of shape {out.shape}, not integer "
                    f"actions; {_FIX_OUTPUT}"
                )
            return True, 1
        if out.ndim != 2 or not np.issubdtype(out.dtype, np.number):
            raise IncompatibleAgent(
                f"{self.name} gives an output of shape {out.shape} {out.dtype} for {batch} "
                f"observations; {_FIX_OUTPUT}"
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
    cdf = np.cumsum(np.exp(z), axis=1)
    draws = np.fromiter((rng.random() for rng in rngs), np.float64, len(rngs)) * cdf[:, -1]
    chosen: np.ndarray = np.minimum((cdf <= draws[:, None]).sum(axis=1), logits.shape[1] - 1)
    return chosen.astype(np.int64)


class TorchScriptPolicy(_ExportedPolicy):
    """A TorchScript file (``torch.jit.save``) as a batched runner agent: ``torchscript:<file>``.

    TorchScript keeps a module's code and weights without the Python class that built it, so a
    policy from any PyTorch code base is evaluated without that code. The module maps
    ``(B, *obs_shape)`` ``uint8`` observations to ``(B,)`` integer actions or ``(B, n)``
    logits (its first output when it returns a tuple); see the module docstring. It runs in
    eval mode under ``torch.inference_mode()``. The archive says nothing of shapes unless it
    carries :data:`METADATA_FILE`, so the standard observation is assumed otherwise.

    Args:
        path: the file written by ``torch.jit.save``.
        deterministic: the argmax of the logits; ``False`` samples from their softmax.
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` (``torch.jit.load``'s ``map_location``);
            whether it exists is known once torch is imported, in :meth:`load`.

    Raises:
        InvalidArgument: a ``device`` other than the three forms.
        IncompatibleAgent: no such file, not a TorchScript archive (an ONNX file, a
            ``torch.save`` state dict) or a damaged one.
    """

    format = "TorchScript (torch.jit.save)"
    prefix = TORCHSCRIPT_PREFIX

    def _read(self) -> None:
        fix = "save it with torch.jit.save(torch.jit.script(module), path)"
        try:
            with zipfile.ZipFile(self.path) as archive:
                names = archive.namelist()
                meta = [n for n in names if n.endswith(f"/extra/{METADATA_FILE}")]
                text = archive.read(meta[0]) if meta else None
        except (zipfile.BadZipFile, OSError, EOFError):
            if _OnnxHeader.looks_like(self.path):
                raise IncompatibleAgent(
                    f"{self.path} is an ONNX model, not TorchScript; evaluate it as "
                    f"{ONNX_PREFIX}{self.path}"
                ) from None
            raise IncompatibleAgent(
                f"{self.path} is not a TorchScript archive (a zip file) or it is damaged; {fix}"
            ) from None
        if not any("/code/" in n for n in names) or not any(
            n.endswith("/constants.pkl") for n in names
        ):
            what = (
                "was saved with torch.save (a state dict or a pickled module)"
                if any(n.endswith("/data.pkl") for n in names)
                else "is a zip archive of something else"
            )
            raise IncompatibleAgent(f"{self.path} {what}, not TorchScript; {fix}")
        if text is not None:
            try:
                said = json.loads(text)
                shape = said.get("observation_shape")
                shape = None if shape is None else tuple(int(d) for d in shape)
                actions = said.get("actions")
                actions = None if actions is None else int(actions)
                if actions is not None and actions < 1:
                    raise ValueError(actions)
            except (ValueError, AttributeError, TypeError):
                raise IncompatibleAgent(
                    f"{self.path}: its {METADATA_FILE} must be a JSON object such as "
                    f'{{"observation_shape": [4, 84, 84], "actions": 18}}, got {text[:80]!r}; '
                    "save it again"
                ) from None
            if shape is not None:
                self._set_input(shape)
            if actions is not None:
                self.action_space = gym.spaces.Discrete(actions)

    def _load(self, threads: int) -> Any:
        torch = _import("torch", "sb3", "torch", f"the TorchScript policy {self.path}")
        if self._device_index is not None:
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if self._device_index >= count:
                available = ", ".join(["cpu", *(f"cuda:{i}" for i in range(count))])
                raise IncompatibleAgent(
                    f"device {self.device!r} is not available to torch {torch.__version__} here "
                    f"(available: {available}); use device='cpu'"
                )
        torch.set_num_threads(threads)
        try:
            with warnings.catch_warnings():
                # torch 2.13 deprecates TorchScript; the user chose the format, the runner
                # repeating it in every worker helps nobody
                warnings.simplefilter("ignore", DeprecationWarning)
                model = torch.jit.load(self.path, map_location=self.device)
        except Exception as error:  # noqa: BLE001 - torch raises RuntimeError and others
            raise IncompatibleAgent(
                f"{self.path} cannot be loaded by torch.jit.load ({_last_line(error)}); save it "
                "again with torch.jit.save(torch.jit.script(module), path)"
            ) from None
        model.eval()
        return model

    def _forward(self, obs: np.ndarray) -> np.ndarray:
        torch = importlib.import_module("torch")
        batch = torch.from_numpy(obs if obs.flags.writeable else obs.copy())
        with torch.inference_mode():
            out = self._model(batch.to(self.device))
        if isinstance(out, (tuple, list)) and out:
            out = out[0]
        if not isinstance(out, torch.Tensor):
            raise IncompatibleAgent(
                f"{self.name} returns {type(out).__name__}, not a tensor; {_FIX_OUTPUT}"
            )
        result: np.ndarray = out.detach().cpu().numpy()
        return result


# ONNX TensorProto.DataType codes the observations can be cast to (onnx/onnx.proto)
_ONNX_DTYPES: dict[int, type[np.generic]] = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
}
_ONNX_INTEGERS = {2, 3, 4, 5, 6, 7, 12, 13}

_Dim: TypeAlias = "int | str | None"  # an ONNX dimension: a size, a dynamic axis's name, unknown


class _Corrupt(Exception):
    """The file is not a well-formed ONNX model."""


class _OnnxHeader:
    """The inputs, outputs and external weight files of an ONNX model (the ``onnx`` package).

    Read with ``onnx.load(path, load_external_data=False)``: the graph's protobuf, without the
    weights kept in other files and without onnxruntime (0.13 s to import ``onnx``, once, in the
    process that constructs the agent).

    Attributes:
        inputs: ``(name, elem_type, dims)`` of each graph input that is not a weight (dims
            ``None`` when the graph gives no shape).
        outputs: the same for each output.
        external: the files the weights are stored in, relative to the model's directory.
    """

    def __init__(self, path: str) -> None:
        onnx = _import("onnx", "onnx", "onnx", f"reading the ONNX model {path}")
        from google.protobuf.message import DecodeError

        try:
            model = onnx.load(path, load_external_data=False)
        except (DecodeError, ValueError, RuntimeError) as error:
            raise _Corrupt from error
        if not model.HasField("graph"):
            raise _Corrupt
        graph = model.graph
        weights = {tensor.name for tensor in graph.initializer}
        self.inputs = [_value_info(v) for v in graph.input if v.name not in weights]
        self.outputs = [_value_info(v) for v in graph.output]
        self.external = {
            entry.value
            for tensor in graph.initializer
            for entry in tensor.external_data
            if entry.key == "location"
        }

    @staticmethod
    def looks_like(path: str) -> bool:
        """Whether the file parses as an ONNX model (for a message about a wrong format)."""
        try:
            _OnnxHeader(path)
        except (_Corrupt, OSError, MissingDependency):
            return False
        return True


def _value_info(info: Any) -> tuple[str, int, list[_Dim] | None]:
    """``(name, elem_type, dims)`` of a ``ValueInfoProto``; elem_type 0 if not a tensor."""
    if not info.type.HasField("tensor_type"):
        return info.name, 0, None
    tensor = info.type.tensor_type
    if not tensor.HasField("shape"):
        return info.name, tensor.elem_type, None
    dims: list[_Dim] = [
        d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in tensor.shape.dim
    ]
    return info.name, tensor.elem_type, dims


def _shape_text(dims: Sequence[_Dim]) -> str:
    return "(" + ", ".join("B" if i == 0 else str(d) for i, d in enumerate(dims)) + ")"


class OnnxPolicy(_ExportedPolicy):
    """An ONNX model (``torch.onnx.export`` or any exporter) as a batched runner agent.

    ONNX runs without the framework that trained the policy (onnxruntime, CPU or CUDA), and
    its graph declares its input and output shapes, so the environment's observations and the
    number of actions are known from the file before anything is loaded. The graph maps
    ``(B, *obs_shape)`` observations to ``(B,)`` integer actions or ``(B, n)`` logits (its
    first output; see the module docstring). Observations are fed in the dtype its input
    declares (the environment's ``uint8`` cast, not scaled: bake ``/ 255`` into the export).
    A graph exported with a fixed batch of 1 is run one row at a time; export with a dynamic
    batch axis for speed. Weights stored beside the model (``model.onnx.data``, what
    ``torch.onnx.export(..., dynamo=True)`` writes) must stay beside it.

    Args:
        path: the ``.onnx`` file.
        deterministic: the argmax of the logits; ``False`` samples from their softmax.
        device: ``"cpu"``, ``"cuda"`` or ``"cuda:N"`` (onnxruntime's CUDAExecutionProvider,
            from ``onnxruntime-gpu``); whether it exists is known in :meth:`load`.

    Raises:
        InvalidArgument: a ``device`` other than the three forms.
        IncompatibleAgent: no such file, not an ONNX model or a damaged one, a missing
            weights file, a graph taking more than the observation or a shape no protocol env
            gives.
    """

    format = "ONNX"
    prefix = ONNX_PREFIX

    def _read(self) -> None:
        fix = "export it again with torch.onnx.export(module, (example_obs,), path)"
        with open(self.path, "rb") as stream:
            zipped = stream.read(4) == b"PK\x03\x04"
        if zipped:
            raise IncompatibleAgent(
                f"{self.path} is a zip archive (TorchScript or torch.save), not an ONNX model; "
                f"evaluate a TorchScript file as {TORCHSCRIPT_PREFIX}{self.path}"
            )
        try:
            header = _OnnxHeader(self.path)
        except _Corrupt:
            raise IncompatibleAgent(
                f"{self.path} is not an ONNX model or it is damaged (no well-formed ModelProto "
                f"with a graph); {fix}"
            ) from None
        where = Path(self.path).parent
        missing = sorted(f for f in header.external if not (where / f).is_file())
        if missing:
            raise IncompatibleAgent(
                f"{self.path} keeps its weights in {', '.join(missing)}, which is not beside it; "
                "copy the weights file with the model"
            )
        if len(header.inputs) != 1 or not header.outputs:
            names = [name for name, _, _ in header.inputs]
            raise IncompatibleAgent(
                f"{self.path} takes {len(header.inputs)} inputs {names} and gives "
                f"{len(header.outputs)} outputs; export a graph taking the observations only "
                "and giving actions or logits first"
            )
        self._input_name, elem_type, dims = header.inputs[0]
        self._output_name, out_type, out_dims = header.outputs[0]
        dtype = _ONNX_DTYPES.get(elem_type)
        if dtype is None:
            raise IncompatibleAgent(
                f"{self.path} takes input {self._input_name!r} of ONNX element type {elem_type}; "
                "export it taking uint8 (or float32) observations"
            )
        self._dtype = np.dtype(dtype)
        self._one_by_one = False
        if dims is not None:
            if not dims:
                raise IncompatibleAgent(
                    f"{self.path} takes a scalar, not a batch of observations; {fix} on a "
                    "(B, *obs_shape) batch"
                )
            if isinstance(dims[0], int) and dims[0] != 1:
                raise IncompatibleAgent(
                    f"{self.path} takes batches of exactly {dims[0]} observations; export it "
                    "with a dynamic batch axis (torch.onnx.export's dynamic_axes or "
                    "dynamic_shapes)"
                )
            self._one_by_one = dims[0] == 1
            shape = dims[1:]
            if all(isinstance(d, int) for d in shape):
                self._set_input(tuple(int(d) for d in shape if isinstance(d, int)))
        if out_dims is not None:
            integer = out_type in _ONNX_INTEGERS
            if len(out_dims) == 2 and isinstance(out_dims[1], int):
                if not (out_dims[1] == 1 and integer):
                    self.action_space = gym.spaces.Discrete(out_dims[1])
            elif len(out_dims) not in (1, 2):
                raise IncompatibleAgent(
                    f"{self.path}'s first output {self._output_name!r} has shape "
                    f"{_shape_text(out_dims)}; {_FIX_OUTPUT}"
                )

    def _load(self, threads: int) -> Any:
        ort = _import("onnxruntime", "onnx", "onnxruntime", f"the ONNX policy {self.path}")
        providers: list[Any] = ["CPUExecutionProvider"]
        if self._device_index is not None:
            available = list(ort.get_available_providers())
            if "CUDAExecutionProvider" not in available:
                raise IncompatibleAgent(
                    f"device {self.device!r} needs onnxruntime's CUDAExecutionProvider, which "
                    f"onnxruntime {ort.__version__} here has not (available: "
                    f"{', '.join(available)}); use device='cpu' or install onnxruntime-gpu"
                )
            providers.insert(0, ("CUDAExecutionProvider", {"device_id": self._device_index}))
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: no warnings per worker
        try:
            session = ort.InferenceSession(self.path, sess_options=options, providers=providers)
        except Exception as error:  # noqa: BLE001 - onnxruntime's own exception types
            raise IncompatibleAgent(
                f"{self.path} cannot be loaded by onnxruntime {ort.__version__} "
                f"({_last_line(error)}); export it again with torch.onnx.export"
            ) from None
        if self._device_index is not None and "CUDAExecutionProvider" not in (
            session.get_providers()
        ):
            raise IncompatibleAgent(
                f"device {self.device!r}: onnxruntime could not start CUDA for {self.path} "
                "(check the CUDA and cuDNN libraries onnxruntime-gpu needs); use device='cpu'"
            )
        return session

    def _forward(self, obs: np.ndarray) -> np.ndarray:
        batch = obs.astype(self._dtype, copy=False)
        names = [self._output_name]
        if self._one_by_one:
            rows = [
                self._model.run(names, {self._input_name: batch[i : i + 1]})[0]
                for i in range(len(batch))
            ]
            return np.concatenate(rows) if rows else np.zeros((0,), np.int64)
        out: np.ndarray = self._model.run(names, {self._input_name: batch})[0]
        return out


def read_exported_agent(text: str, *, device: str = "cpu") -> TorchScriptPolicy | OnnxPolicy:
    """Parse ``torchscript:<file>[:stochastic]`` or ``onnx:<file>[:stochastic]``.

    Args:
        text: the agent string (``--agent``).
        device: where the model runs: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``.

    Raises:
        InvalidArgument: not of either form.
        IncompatibleAgent: the file is missing, damaged or of the other format.

    Example:
        >>> read_exported_agent("pt:policy.pt")
        Traceback (most recent call last):
        ...
        arcadebench.errors.InvalidArgument: `agent` must be torchscript:<file>[:stochastic] \
or onnx:<file>[:stochastic] (e.g. torchscript:runs/policy.pt), got 'pt:policy.pt'
    """
    kinds: tuple[tuple[str, type[TorchScriptPolicy] | type[OnnxPolicy]], ...] = (
        (TORCHSCRIPT_PREFIX, TorchScriptPolicy),
        (ONNX_PREFIX, OnnxPolicy),
    )
    for prefix, cls in kinds:
        if isinstance(text, str) and text.startswith(prefix):
            body = text[len(prefix) :]
            path = body.removesuffix(_STOCHASTIC)
            if path:
                return cls(path, deterministic=path == body, device=device)
    raise InvalidArgument(
        "`agent` must be torchscript:<file>[:stochastic] or onnx:<file>[:stochastic] (e.g. "
        f"torchscript:runs/policy.pt), got {text!r}"
    )
