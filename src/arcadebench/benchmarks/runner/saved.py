"""Kinds of saved policy the runner plays (``<prefix>:<file>``), built in or added by plug-ins.

A saved policy is a file a worker loads once and asks for actions in batches: an SB3 zip
(``sb3:PPO:model.zip``), a TorchScript file (``torchscript:policy.pt``), an ONNX graph
(``onnx:policy.onnx``). Each kind is one object (:class:`SavedPolicyKind`): its prefix, the
framework its policies import once loaded, and ``read``, which parses an agent string and
reads what the file says of its spaces *without* that framework, so the run's parent can check
the agent against the environments before any worker starts and never pays for the framework.
What ``read`` returns (:class:`SavedPolicy`) is picklable and unloaded: each worker calls its
``load`` once, then ``act_batch``.

A package adds a kind without touching arcadebench, by declaring an entry point in the group
:data:`ENTRY_POINT_GROUP` (as pytest and MkDocs find their plug-ins)::

    [project.entry-points."arcadebench.agents"]
    npz = "my_package.policy:KIND"

where ``KIND`` has ``prefix = "npz"``, ``framework`` and ``read``; ``--agent npz:policy.npz``
then plays it, on local workers and on Ray alike (the workers import ``my_package`` when they
unpickle its policy, so it must be importable there).

Classes: SavedPolicyKind, SavedPolicy.
Functions: saved_kinds, saved_kind.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from arcadebench.errors import ArcadebenchError, first_line

__all__ = ["ENTRY_POINT_GROUP", "SavedPolicy", "SavedPolicyKind", "saved_kind", "saved_kinds"]

ENTRY_POINT_GROUP = "arcadebench.agents"
"""The entry-point group a package declares its saved-policy kinds in."""

_BUILT_IN = {
    "sb3": "arcadebench.benchmarks.training.sb3_policy:SB3_KIND",
    "torchscript": "arcadebench.benchmarks.training.torchscript_policy:TORCHSCRIPT_KIND",
    "onnx": "arcadebench.benchmarks.training.onnx_policy:ONNX_KIND",
}


@runtime_checkable
class SavedPolicy(Protocol):
    """A saved policy as :meth:`SavedPolicyKind.read` returns it: read, not loaded.

    Attributes it has: ``name`` (the file's stem: the agent's name in results), ``path``,
    ``observation_space`` and ``action_space`` (what it was trained on, ``None`` where the file
    does not say), ``env_kwargs`` (what it needs of the environment, e.g. ``obs_type``). It may
    define ``check(observation_space, action_space)`` (refuse an environment, in the worker).
    """

    name: str
    env_kwargs: Mapping[str, Any]

    def load(self, threads: int = 1) -> None:
        """Import the framework and load the model (once per worker)."""

    def act_batch(self, obs: Any, rngs: Sequence[np.random.Generator]) -> Any:
        """One action per row of ``obs``; a row's randomness from its own generator."""


@runtime_checkable
class SavedPolicyKind(Protocol):
    """One kind of saved policy: ``<prefix>:...`` agent strings, read without a framework.

    Attributes:
        prefix: what agent strings of this kind start with, before the first ``:``.
        usage: the agent string's form, for messages (``sb3:<Algorithm>:<model.zip>``).
        framework: the module its policies import when loaded (``"torch"``), or ``None``:
            with a framework, workers start from a clean process rather than by forking.

    A kind may also have ``packages``: the modules whose versions a log header records for its
    policies (default: ``framework``).
    """

    prefix: str
    usage: str
    framework: str | None

    def read(self, reference: str, device: str) -> SavedPolicy:
        """Parse ``reference`` and read its file's spaces, without the framework.

        Raises:
            ArcadebenchError: a malformed reference, or a file that is missing or damaged.
        """


@functools.cache
def saved_kinds() -> Mapping[str, SavedPolicyKind]:
    """Every saved-policy kind by prefix: the built-in ones, then the plug-ins' (entry points).

    Raises:
        ArcadebenchError: a plug-in that does not load, is no kind, or takes a prefix already
            taken.
    """
    found: dict[str, SavedPolicyKind] = {}
    named = [(prefix, target, "arcadebench") for prefix, target in _BUILT_IN.items()]
    for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        package = point.dist.name if point.dist is not None else "a package"
        named.append((point.name, point.value, package))
    for prefix, target, package in named:
        kind = _load(target, package)
        if kind.prefix != prefix or prefix in found:
            raise ArcadebenchError(
                f"the saved-policy kind {target!r} of {package} must have a prefix of its own "
                f"matching its entry point {prefix!r}, got {kind.prefix!r} (taken: "
                f"{', '.join(found)})"
            )
        found[prefix] = kind
    return found


def _load(target: str, package: str) -> SavedPolicyKind:
    module_name, _, attr = target.partition(":")
    try:
        kind: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            kind = getattr(kind, part)
    except Exception as error:  # noqa: BLE001 - a plug-in's import: whatever it raises
        raise ArcadebenchError(
            f"the saved-policy kind {target!r} of {package} does not load "
            f"({type(error).__name__}: {first_line(error)}); fix or uninstall {package}"
        ) from None
    if not isinstance(kind, SavedPolicyKind):
        raise ArcadebenchError(
            f"{target!r} of {package} is no saved-policy kind: it needs prefix, usage, "
            "framework and read(reference, device)"
        )
    return kind


def saved_kind(reference: str) -> SavedPolicyKind | None:
    """The kind an agent string names by its prefix (``sb3:...``), or ``None``.

    Example:
        >>> saved_kind("sb3:PPO:model.zip").prefix, saved_kind("my_agents:MyAgent")
        ('sb3', None)
    """
    prefix, sep, _ = reference.partition(":")
    return saved_kinds().get(prefix) if sep else None
