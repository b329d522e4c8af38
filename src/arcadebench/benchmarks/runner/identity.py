"""What identifies the agent that played a run, and whether a log's runs were played by it.

A run's numbers must belong to the agent that played them: a model retrained at the same path,
or a module edited between two evaluations, is another agent, even under the same name. The
runner records in each log header (``agent``) the agent's kind, its name, the string it was
given as and the SHA-256 of what it runs: a saved policy's file, or for ``module:attr`` and
object agents the file of the module defining them. The header's ``versions`` gain those of the
learning frameworks it uses (torch, stable-baselines3, onnxruntime...). Before anything is
played, every log the run would be scored with is checked (:func:`check_logged_agents`): one
played by another agent is refused, so a rerun never reports an old model's episodes as the
new one's and ``resume`` never pools two models' episodes; other versions are only noted.

Classes: AgentIdentity.
Functions: agent_identity, named_logs, check_logged_agents.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import inspect
import sys
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcadebench.errors import ArcadebenchError
from arcadebench.records import log_records

__all__ = [
    "FRAMEWORKS",
    "AgentIdentity",
    "agent_identity",
    "check_logged_agents",
    "file_sha256",
    "named_logs",
]

FRAMEWORKS = ("torch", "stable_baselines3", "onnxruntime", "jax", "tensorflow")
"""The learning frameworks whose versions a log records when the agent's code imported them."""

_IDENTIFYING = ("kind", "name", "sha256")
"""What makes two agents the same: a path may move, a version may change (only noted)."""


@dataclass(frozen=True)
class AgentIdentity:
    """What a log header records of the agent that played the run.

    Attributes:
        record: the header's ``agent`` block: ``kind``, ``name``, ``reference`` (the string the
            agent was given as), ``learns``, and where something was hashed, ``file`` and
            ``sha256``.
        versions: the versions of the frameworks it runs on (beside the header's own).
    """

    record: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        """``saved ppo_pong (sha256 1a2b3c4d5e6f)``: the agent, for messages."""
        return describe(self.record)


def describe(record: Mapping[str, Any]) -> str:
    """An ``agent`` block in a few words (its kind, name and the start of its hash).

    Example:
        >>> describe({"kind": "saved", "name": "ppo_pong", "sha256": "1a2b3c4d5e6f7a8b"})
        'saved ppo_pong (sha256 1a2b3c4d5e6f)'
    """
    digest = record.get("sha256")
    hashed = f" (sha256 {str(digest)[:12]})" if digest else ""
    return f"{record.get('kind', '?')} {record.get('name', '?')}{hashed}"


def agent_identity(
    kind: str,
    name: str,
    reference: str | None,
    obj: Any,
    *,
    learns: bool,
    file: str | None = None,
    packages: Iterable[str] = (),
) -> AgentIdentity:
    """The identity of an agent resolved as ``kind`` (:class:`~.reference.AgentRef`).

    Args:
        kind: ``builtin``, ``saved``, ``module`` or ``object``.
        name: the agent's own name.
        reference: the string it was given as (``None`` for an object).
        obj: what was resolved (a class, a factory, an object, a saved policy).
        learns: whether it learns from its episodes (``False``: a fixed policy, whose episodes
            are an evaluation, not the training episodes some protocols score).
        file: a saved policy's file (``None``: its kind names none).
        packages: the frameworks a saved policy's kind loads it with (module names); for other
            agents, those of :data:`FRAMEWORKS` their code imported.

    Raises:
        ArcadebenchError: a saved policy's file that cannot be read.
    """
    named = {"reference": reference} if reference is not None else {}
    record: dict[str, Any] = {"kind": kind, "name": name, **named, "learns": learns}
    if kind == "builtin":  # arcadebench's own code: its version, in the header, says it
        return AgentIdentity(record)
    saved = kind == "saved"
    hashed = file if saved else _module_file(obj)
    if hashed is not None:
        record["file"] = hashed
        record["sha256"] = file_sha256(Path(hashed))
    used = packages if saved else [m for m in FRAMEWORKS if m in sys.modules]
    return AgentIdentity(record, _versions(used))


def _module_file(obj: Any) -> str | None:
    """The source file of the module defining ``obj`` (a module, class, function or object)."""
    named = inspect.ismodule(obj) or inspect.isclass(obj) or inspect.isroutine(obj)
    target = obj if named else type(obj)
    module = target if inspect.ismodule(target) else inspect.getmodule(target)
    path = getattr(module, "__file__", None)
    return path if isinstance(path, str) and Path(path).is_file() else None


def file_sha256(path: Path) -> str:
    """The hex SHA-256 of a file's bytes, as log headers record an agent's file.

    Raises:
        ArcadebenchError: the file cannot be read.
    """
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise ArcadebenchError(
            f"cannot read the agent's file {path} ({error.strerror or error}); check the path"
        ) from None
    return digest.hexdigest()


def _versions(modules: Iterable[str]) -> dict[str, str]:
    """The installed versions of ``modules`` (by distribution; those not found left out)."""
    found: dict[str, str] = {}
    for module in modules:
        try:
            found[module] = importlib.metadata.version(module)
        except importlib.metadata.PackageNotFoundError:
            dists = importlib.metadata.packages_distributions().get(module)  # onnxruntime-gpu
            if dists:
                found[module] = importlib.metadata.version(dists[0])
    return found


def named_logs(log_dir: Path, spec: str, label: str) -> list[tuple[Path, dict[str, Any]]]:
    """The logs of ``spec`` in an agent's log directory scored under ``label``, with headers.

    Every game and seed, not only those a run still has to play: they share one column of
    results. A log whose header names another agent (the shared layout of earlier versions)
    is left out; one without a header or a name is the directory's.

    Raises:
        InputError: a log whose first line cannot be read.
    """
    headers = ((path, _header(path) or {}) for path in sorted(log_dir.glob(f"{spec}/*/*.jsonl")))
    return [(path, header) for path, header in headers if header.get("algorithm", label) == label]


def check_logged_agents(
    logs: Iterable[tuple[Path, Mapping[str, Any]]],
    identity: AgentIdentity,
    versions: Mapping[str, str],
    label: str,
) -> None:
    """Refuse logs of the run's name played by another agent; note other versions.

    Args:
        logs: the logs scored under this run's name, with their headers (:func:`named_logs`).
        identity: the agent about to play.
        versions: the versions this run records (the header's, the agent's frameworks).
        label: the run's name.

    A log without an ``agent`` block (written before the runner recorded it, or by a monitor
    outside the runner) is accepted: nothing says whose it is.

    Raises:
        ArcadebenchError: a log played by another agent (kind, name or hash).
        InputError: a log whose header cannot be read.
    """
    noted: set[str] = set()
    for path, header in logs:
        logged = header.get("agent")
        if isinstance(logged, Mapping) and any(
            logged.get(key) != identity.record.get(key) for key in _IDENTIFYING
        ):
            raise ArcadebenchError(
                f"{path} was played by {describe(logged)}, not by this run's agent "
                f"{identity.describe()}: scoring them as one run would mix two agents; use "
                f"another `log_dir`, or `overwrite` to remove {label}'s logs and results first"
            )
        before = header.get("versions")
        if isinstance(before, Mapping):
            for package, version in versions.items():
                old = before.get(package)
                if old is not None and old != version and package not in noted:
                    noted.add(package)
                    warnings.warn(
                        f"{path} was played with {package} {old}, this run uses {version}; "
                        "the episodes are scored together",
                        RuntimeWarning,
                        stacklevel=3,
                    )


def _header(path: Path) -> dict[str, Any] | None:
    """A log's header record, or ``None`` when its first record is none.

    Raises:
        InputError: an unreadable log, or a corrupt first line.
    """
    for _, record in log_records(path):
        return record if record.get("kind") == "header" else None
    return None
