"""TorchScript files as saved policies: ``--agent torchscript:policy.pt[:stochastic]``.

:class:`TorchScriptPolicy`; the output convention and the batched play are :mod:`~.exported`'s.

Classes: TorchScriptPolicy.
"""

from __future__ import annotations

import importlib
import json
import warnings
import zipfile
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.training.exported import (
    FIX_OUTPUT,
    METADATA_FILE,
    ONNX_PREFIX,
    TORCHSCRIPT_PREFIX,
    ExportedKind,
    ExportedPolicy,
    framework,
    last_line,
)
from arcadebench.errors import IncompatibleAgent

__all__ = ["TORCHSCRIPT_KIND", "TorchScriptPolicy"]


class TorchScriptPolicy(ExportedPolicy):
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
            whether it exists is known once torch is imported, in :meth:`ExportedPolicy.load`.

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
            from arcadebench.benchmarks.training.onnx_policy import is_onnx_model

            if is_onnx_model(self.path):
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
        torch = framework("torch", "sb3", "torch", f"the TorchScript policy {self.path}")
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
                f"{self.path} cannot be loaded by torch.jit.load ({last_line(error)}); save it "
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
                f"{self.name} returns {type(out).__name__}, not a tensor; {FIX_OUTPUT}"
            )
        result: np.ndarray = out.detach().cpu().numpy()
        return result


TORCHSCRIPT_KIND = ExportedKind(TorchScriptPolicy, "torch")
"""The ``torchscript:`` saved-policy kind."""
