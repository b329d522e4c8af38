"""An agent resolved once, at the door: what it is, its name, and how a worker loads it.

:func:`~arcadebench.evaluate` and ``arcadebench run`` take an agent in many forms (a built-in
name, a saved policy ``<prefix>:<file>``, ``module:attr``, an object, a factory; see
:mod:`~.agents`). :func:`resolve_agent` works out once what it is, before anything runs, into a
frozen :class:`AgentRef`: its kind, the name its results carry, whether it learns, whether it
answers batches, whether one copy may play every job of a worker, the framework loading it
imports, the spaces it says it was trained on, the environment settings it needs, and what a
worker needs to load it (a saved policy read here, pickled; an object pickled). Everything
below the door (the plan, the backends, the workers) reads the reference and never parses the
agent again; a worker loads it once (:meth:`AgentRef.load`) into a :class:`LoadedAgent`, which
gives each job the object it plays.

Classes: AgentRef, LoadedAgent.
Functions: resolve_agent, agent_name.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import gymnasium as gym

from arcadebench.benchmarks.runner.agents import (
    BUILTIN_AGENTS,
    ActingAgent,
    Agent,
    BatchedAgent,
    PredictingAgent,
    is_batched,
)
from arcadebench.benchmarks.runner.identity import AgentIdentity, agent_identity
from arcadebench.benchmarks.runner.saved import saved_kind, saved_kinds
from arcadebench.errors import ArcadebenchError, did_you_mean
from arcadebench.specs import Spec

__all__ = ["AgentKind", "AgentRef", "LoadedAgent", "agent_name", "resolve_agent"]

AgentKind = Literal["builtin", "saved", "module", "object"]
"""What an agent was given as (a built-in name, a saved policy, ``module:attr``, an object)."""


@dataclass(frozen=True)
class AgentRef:
    """An agent as the runner knows it, resolved once (module docstring).

    Attributes:
        kind: ``builtin``, ``saved``, ``module`` or ``object``.
        name: its name in logs and results.
        reference: the agent string as given (``None`` for an object).
        learns: it learns from ``observe`` (its episodes depend on the ones before them).
        batched: it answers a batch of observations with one call.
        shared: one copy plays every job of a worker (else each job gets a fresh one).
        framework: the module loading it imports (``"torch"``), ``None`` where it is none, or
            ``"user code"`` where the agent's own code runs.
        env_kwargs: what it needs of the environments (``obs_type``, ``action_set``...).
        observation_space: the observations it says it was trained on (``None``: unsaid).
        action_space: the actions it says it has (``None``: unsaid).
        identity: what identifies what played (its file's hash, its frameworks' versions), for
            the log headers (:mod:`~.identity`).
        payload: what a worker unpickles (a saved policy as read here, an object).
    """

    kind: AgentKind
    name: str
    reference: str | None
    learns: bool
    batched: bool
    shared: bool
    framework: str | None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    observation_space: Any = None
    action_space: Any = None
    identity: AgentIdentity = field(default_factory=AgentIdentity)
    payload: bytes | None = field(default=None, repr=False)

    @property
    def by_name(self) -> bool:
        """Whether the runner loads it by itself (built-in, saved), so no user code runs."""
        return self.kind in ("builtin", "saved")

    def load(self, device: str = "cpu", threads: int = 1) -> LoadedAgent:
        """What a worker plays, loaded once per process (a saved policy on ``device``).

        Raises:
            ArcadebenchError: a ``module:attr`` that no longer imports; a saved policy's own
                refusal (its framework missing, its device unavailable).
        """
        if self.kind == "builtin":
            obj: Any = BUILTIN_AGENTS[str(self.reference)]
        elif self.kind == "module":
            obj = _import_attr(str(self.reference))
        else:
            obj = pickle.loads(self.payload or b"")  # noqa: S301 - pickled by resolve_agent
            if self.kind == "saved":
                obj.load(threads=threads)
        return LoadedAgent(self, obj, device)


class LoadedAgent:
    """The agent a worker process holds, and the object each of its jobs plays.

    Args:
        ref: what it is.
        obj: what :meth:`AgentRef.load` loaded (a class, a factory, an object, a policy).
        device: where a factory's saved model runs.
    """

    def __init__(self, ref: AgentRef, obj: Any, device: str = "cpu") -> None:
        self.ref = ref
        self.obj = obj
        self.device = device

    def make(
        self,
        *,
        action_space: gym.Space[Any],
        observation_space: gym.Space[Any],
        spec: Spec,
        game: str,
        seed: int,
    ) -> Any:
        """The object a job plays: the shared one, a factory's new one, a learner's fresh copy.

        A factory (a class, a callable without required arguments) is called once per job with
        whichever of ``action_space``, ``observation_space``, ``spec``, ``game``, ``seed`` and
        ``device`` it accepts; a learner object is copied afresh for each job, as if each ran
        alone.
        """
        if self.ref.shared:
            return self.obj
        if _is_factory(self.obj):
            return _call_factory(
                self.obj,
                action_space=action_space,
                observation_space=observation_space,
                spec=spec,
                game=game,
                seed=seed,
                device=self.device,
            )
        if self.ref.payload is not None:
            return pickle.loads(self.ref.payload)  # noqa: S301 - pickled by resolve_agent
        return pickle.loads(pickle.dumps(self.obj))  # noqa: S301 - the user's own object


def resolve_agent(agent: Agent | AgentRef, spec: Spec, device: str = "cpu") -> AgentRef:
    """Work out what ``agent`` is, once (module docstring).

    Args:
        agent: anything :func:`~arcadebench.evaluate` takes, or a reference already resolved.
        spec: the protocol it plays (what it needs of the environments is checked against it).
        device: where a saved policy will run.

    Raises:
        ArcadebenchError: an unknown name, a module that does not import, a missing attribute,
            an object that is no agent or does not pickle, an ``action_set`` the spec lacks.
        IncompatibleAgent: a saved policy's file that cannot be read.
    """
    if isinstance(agent, AgentRef):
        return agent
    if isinstance(agent, str):
        return _from_text(agent, spec, device)
    _check_usable(agent)
    try:
        payload = pickle.dumps(agent)
    except Exception as error:  # noqa: BLE001 - pickle raises many types
        raise ArcadebenchError(
            f"`agent` must be picklable to run in worker processes, got {agent!r} ({error}); "
            "define it at module level (not a lambda or a local function) or pass 'module:attr'"
        ) from None
    return _reference("object", agent_name(agent), None, agent, spec, payload)


def _from_text(text: str, spec: Spec, device: str) -> AgentRef:
    if text in BUILTIN_AGENTS:
        return _reference("builtin", text, text, BUILTIN_AGENTS[text], spec)
    kind = saved_kind(text)
    if kind is not None:
        policy = kind.read(text, device)
        return AgentRef(
            "saved",
            policy.name,
            text,
            learns=False,
            batched=True,
            shared=True,
            framework=kind.framework,
            env_kwargs=_env_kwargs(policy, spec, policy.name),
            observation_space=getattr(policy, "observation_space", None),
            action_space=getattr(policy, "action_space", None),
            identity=agent_identity(
                "saved",
                policy.name,
                text,
                policy,
                learns=False,
                file=getattr(policy, "path", None),
                packages=getattr(kind, "packages", (kind.framework,) if kind.framework else ()),
            ),
            payload=pickle.dumps(policy),
        )
    module_name, sep, attr = text.partition(":")
    if not sep or not module_name or not attr:
        saved = ", ".join(f"'{k.usage}'" for k in saved_kinds().values())
        raise ArcadebenchError(
            f"`agent` must be {_builtin_names()}, a saved policy ({saved}) or 'module:attr' "
            f"(e.g. 'my_agents:MyAgent'), got {text!r}.{did_you_mean(text, BUILTIN_AGENTS)}"
        )
    obj = _import_attr(text)
    _check_usable(obj)
    return _reference("module", text, text, obj, spec)


def _reference(
    kind: AgentKind, name: str, text: str | None, obj: Any, spec: Spec, payload: bytes | None = None
) -> AgentRef:
    """The reference of an agent object, class or factory (what it is, from what it has)."""
    learns = callable(getattr(obj, "observe", None))
    declared = not inspect.isclass(obj)  # a class's attributes are no trained spaces
    return AgentRef(
        kind,
        name,
        text,
        learns=learns,
        batched=is_batched(obj),
        shared=not _is_factory(obj) and not learns,
        framework=None if kind == "builtin" else "user code",
        env_kwargs=_env_kwargs(obj, spec, name),
        observation_space=getattr(obj, "observation_space", None) if declared else None,
        action_space=getattr(obj, "action_space", None) if declared else None,
        identity=agent_identity(kind, name, text, obj, learns=learns),
        payload=payload,
    )


def _builtin_names() -> str:
    """``'random', 'noop', 'jerk'``: the built-in agents, for messages."""
    return ", ".join(map(repr, BUILTIN_AGENTS))


def _import_attr(text: str) -> Any:
    """What ``module:attr`` names (the module imported, the dotted attribute followed).

    Raises:
        ArcadebenchError: a module that does not import, or a missing attribute.
    """
    module_name, _, attr = text.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any import failure is the user's module
        raise ArcadebenchError(
            f"cannot import agent module {module_name!r} ({type(error).__name__}: {error}); "
            "is it on PYTHONPATH (run from its directory or install it)?"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ArcadebenchError(
                f"module {module_name!r} has no attribute {attr!r}; check the agent path {text!r}"
            ) from None
    return obj


def _check_usable(obj: Any) -> None:
    """Refuse what is no agent: not a factory, a callable or an object of an agent kind."""
    kinds = ActingAgent | PredictingAgent | BatchedAgent
    if not (_is_factory(obj) or callable(obj) or isinstance(obj, kinds)):
        raise ArcadebenchError(
            f"`agent` must be {_builtin_names()}, a saved policy, 'module:attr', a factory, an "
            f"object with act/observe, act_batch or predict, or a callable obs -> action, got "
            f"{obj!r}"
        )


def agent_name(agent: Any) -> str:
    """The name an agent object's results carry: its ``name``, or ``module.qualname``.

    Example:
        >>> from arcadebench.benchmarks.runner.agents import RandomAgent
        >>> agent_name(RandomAgent)
        'arcadebench.benchmarks.runner.agents.RandomAgent'
    """
    name = getattr(agent, "name", None)
    if isinstance(name, str) and not inspect.isclass(agent):
        return name
    target = agent if inspect.isclass(agent) or inspect.isroutine(agent) else type(agent)
    module = getattr(target, "__module__", None) or "?"
    if module == "__main__":  # a script's agent: name it after the script
        main = getattr(sys.modules.get("__main__"), "__file__", None)
        module = Path(main).stem if main else module
    return f"{module}.{getattr(target, '__qualname__', type(target).__name__)}"


def _env_kwargs(agent: Any, spec: Spec, name: str) -> dict[str, Any]:
    """What ``agent`` (or its class) asks of the environment: ``env_kwargs``, ``action_set``.

    Raises:
        ArcadebenchError: an ``action_set`` the spec does not define, or on a non-retro protocol.
    """
    kwargs = dict(getattr(agent, "env_kwargs", None) or {})
    action_set = getattr(agent, "action_set", None)
    if isinstance(action_set, str):
        if spec.platform != "retro":
            raise ArcadebenchError(
                f"agent {name} needs action_set={action_set!r}, which only retro protocols "
                f"have; {spec.name!r} is an {spec.platform} protocol"
            )
        choices = ("buttons", *spec.action_sets)
        if action_set not in choices:
            raise ArcadebenchError(
                f"`action_set` of agent {name} must be one of {', '.join(choices)}, got "
                f"{action_set!r}"
            )
        kwargs["action_set"] = action_set
    return kwargs


def _is_factory(obj: Any) -> bool:
    """A class, or a function whose parameters all have defaults (zero-arg callable)."""
    if inspect.isclass(obj):
        return True
    if not inspect.isroutine(obj):
        return False
    try:
        params = inspect.signature(obj).parameters.values()
    except (TypeError, ValueError):
        return False
    return all(
        p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params
    )


def _call_factory(factory: Callable[..., Any], **available: Any) -> Any:
    params: Mapping[str, inspect.Parameter]
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        params = {}
    takes_all = any(p.kind is p.VAR_KEYWORD for p in params.values())
    kwargs = {k: v for k, v in available.items() if takes_all or k in params}
    return factory(**kwargs)
