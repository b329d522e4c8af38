"""ONNX graphs as saved policies: ``--agent onnx:policy.onnx[:stochastic]`` (:class:`OnnxPolicy`).

The graph's shapes are read with the ``onnx`` package, never onnxruntime; the output convention
and the batched play are :mod:`~.exported`'s.

Classes: OnnxPolicy.
Functions: is_onnx_model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeAlias

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.training.exported import (
    FIX_OUTPUT,
    ONNX_PREFIX,
    TORCHSCRIPT_PREFIX,
    ExportedKind,
    ExportedPolicy,
    framework,
    last_line,
)
from arcadebench.errors import IncompatibleAgent, MissingDependency

__all__ = ["ONNX_KIND", "OnnxPolicy", "is_onnx_model"]

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
        onnx = framework("onnx", "onnx", "onnx", f"reading the ONNX model {path}")
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


class OnnxPolicy(ExportedPolicy):
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
            from ``onnxruntime-gpu``); whether it exists is known in :meth:`ExportedPolicy.load`.

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
            if len(out_dims) == 2 and isinstance(out_dims[1], int):
                if not (out_dims[1] == 1 and out_type in _ONNX_INTEGERS):
                    self.action_space = gym.spaces.Discrete(out_dims[1])
            elif len(out_dims) not in (1, 2):
                raise IncompatibleAgent(
                    f"{self.path}'s first output {self._output_name!r} has shape "
                    f"{_shape_text(out_dims)}; {FIX_OUTPUT}"
                )

    def _load(self, threads: int) -> Any:
        ort = framework("onnxruntime", "onnx", "onnxruntime", f"the ONNX policy {self.path}")
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
                f"({last_line(error)}); export it again with torch.onnx.export"
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


def is_onnx_model(path: str) -> bool:
    """Whether the file parses as an ONNX model (for a message about a wrong format)."""
    try:
        _OnnxHeader(path)
    except (_Corrupt, OSError, MissingDependency):
        return False
    return True


ONNX_KIND = ExportedKind(OnnxPolicy, "onnxruntime")
"""The ``onnx:`` saved-policy kind."""
