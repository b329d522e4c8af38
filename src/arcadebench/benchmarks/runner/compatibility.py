"""Whether an agent can play a protocol's environment, checked before anything is played.

A model trained on SABER's 18 actions and evaluated under Atari 100k (Pong's 6 minimal actions)
would otherwise be played and scored: its action 4 (LEFT in the full set) played as RIGHTFIRE,
and nothing recorded. So an agent that says what it was trained on (``observation_space``,
``action_space``: a saved model's file says it) is compared with each environment it is to
play, and a mismatch is refused in one line naming both sides and the fixes. The one fix the
runner can apply itself is the action set: a model of the full 18 actions, or of a game's
minimal set, plays its actions by their ALE meanings on that set (``map_actions``), which is a
change of the protocol's ``full_action_space`` setting, recorded as a deviation like any other.

Functions: check_compatible, action_set_override, fit_agent.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.envs.spaces import obs_type_for_shape
from arcadebench.benchmarks.runner.reference import AgentRef
from arcadebench.errors import IncompatibleAgent
from arcadebench.specs import Spec

__all__ = ["FULL_ACTIONS", "action_set_override", "check_compatible", "fit_agent"]

FULL_ACTIONS = 18
"""ALE's full action set (every joystick direction with and without fire, and NOOP)."""

_MAP_HINT = (
    "or evaluate it with map_actions=True to play its actions by their ALE meanings on the "
    "action set it was trained on, recorded as a deviation"
)


def _action_set(space: gym.Space[Any], full: bool | None) -> str:
    if not isinstance(space, gym.spaces.Discrete):
        return str(space)
    which = {True: " (the full action set)", False: " (its minimal action set)", None: ""}[full]
    return f"{int(space.n)} actions{which}"


def check_compatible(
    agent: Any,
    observation_space: gym.Space[Any],
    action_space: gym.Space[Any],
    *,
    label: str,
    spec: Spec,
    game: str,
    full_action_space: bool | None = None,
    call_check: bool = True,
) -> None:
    """Refuse ``agent`` if what it says it was trained on does not fit the environment's spaces.

    Args:
        agent: the agent object (its ``observation_space``/``action_space`` attributes, if any,
            are compared; its ``check(observation_space, action_space)``, if any, is called).
        observation_space: the environment's.
        action_space: the environment's.
        label: how messages name the agent (e.g. the model file).
        spec: the protocol.
        game: the game or level.
        full_action_space: the environment's action set (``None``: not an ALE one).
        call_check: call the agent's own ``check`` (not in the parent: it may load a model).

    Raises:
        IncompatibleAgent: a mismatch, naming both sides and the fix.
    """
    where = f"the {spec.name} environment of {game}"
    trained = getattr(agent, "observation_space", None)
    if isinstance(trained, gym.spaces.Box) and isinstance(observation_space, gym.spaces.Box):
        if trained.shape != observation_space.shape or trained.dtype != observation_space.dtype:
            obs_type = obs_type_for_shape(trained.shape)
            fix = (
                f"make the environments with obs_type={obs_type!r} (env_kwargs)"
                if obs_type is not None
                else "train it on observations a protocol environment gives"
            )
            raise IncompatibleAgent(
                f"{label} was trained on observations of shape {trained.shape} "
                f"{np.dtype(trained.dtype).name}, but {where} gives {observation_space.shape} "
                f"{np.dtype(observation_space.dtype).name}: {fix}"
            )
    actions = getattr(agent, "action_space", None)
    if isinstance(actions, gym.spaces.Discrete) and isinstance(action_space, gym.spaces.Discrete):
        if int(actions.n) != int(action_space.n):
            mappable = full_action_space is not None and (
                int(actions.n) == FULL_ACTIONS or full_action_space
            )
            raise IncompatibleAgent(
                f"{label} chooses among {int(actions.n)} actions, but {where} has "
                f"{_action_set(action_space, full_action_space)}: train it under the "
                f"protocol's action set{', ' + _MAP_HINT if mappable else ''}"
            )
    check = getattr(agent, "check", None)
    if call_check and callable(check):
        check(observation_space, action_space)


def action_set_override(
    agent: Any, *, full: gym.Space[Any], minimal: gym.Space[Any], label: str, game: str
) -> bool | None:
    """The ``full_action_space`` on which ``agent``'s actions keep their ALE meanings.

    ``None`` when the agent does not say how many actions it has; ``True`` for a model of the
    18 actions, ``False`` for one of the game's minimal set.

    Raises:
        IncompatibleAgent: a number of actions that is neither (no mapping keeps its meanings).

    Example:
        >>> from types import SimpleNamespace
        >>> model = SimpleNamespace(action_space=gym.spaces.Discrete(6))
        >>> action_set_override(model, full=gym.spaces.Discrete(18),
        ...                     minimal=gym.spaces.Discrete(6), label="m", game="pong")
        False
    """
    actions = getattr(agent, "action_space", None)
    if not isinstance(actions, gym.spaces.Discrete):
        return None
    n = int(actions.n)
    if isinstance(full, gym.spaces.Discrete) and n == int(full.n):
        return True
    if isinstance(minimal, gym.spaces.Discrete) and n == int(minimal.n):
        return False
    raise IncompatibleAgent(
        f"{label} chooses among {n} actions, which is neither ALE's full action set "
        f"({_action_set(full, None)}) nor {game}'s minimal one ({_action_set(minimal, None)}), "
        "so its actions have no ALE meanings to map: train it under the protocol's action set"
    )


def fit_agent(
    agent: AgentRef, spec: Spec, game: str, env_kwargs: dict[str, Any], *, map_actions: bool
) -> dict[str, Any]:
    """Check ``agent`` against ``game``'s environment before any worker starts; the kwargs to use.

    Only an agent that says what it was trained on is checked here (a saved policy's file says
    it; reading it loads no framework), against the first game's environment (made once, 0.1 s);
    the workers check every environment again before its first episode. With ``map_actions``
    a model of another ALE action set gets ``full_action_space`` set to its own.

    Raises:
        IncompatibleAgent: the agent does not fit (see :func:`check_compatible`).
    """
    from arcadebench.benchmarks.envs.factory import make

    declared = agent.observation_space or agent.action_space
    if spec.platform != "atari" or declared is None:
        return env_kwargs  # nothing to compare; retro: no emulator in this process
    settings = spec.environment
    full = bool(env_kwargs.get("full_action_space", getattr(settings, "full_action_space", True)))
    spaces = _spaces(make, spec, game, env_kwargs)
    if map_actions:
        other = _spaces(make, spec, game, {**env_kwargs, "full_action_space": not full})
        sets = {full: spaces[1], not full: other[1]}
        chosen = action_set_override(
            agent, full=sets[True], minimal=sets[False], label=agent.name, game=game
        )
        if chosen is not None and chosen != full:
            env_kwargs, spaces, full = {**env_kwargs, "full_action_space": chosen}, other, chosen
    check_compatible(
        agent,
        *spaces,
        label=agent.name,
        spec=spec,
        game=game,
        full_action_space=full,
        call_check=False,
    )
    return env_kwargs


def _spaces(
    make: Any, spec: Spec, game: str, env_kwargs: dict[str, Any]
) -> tuple[gym.Space[Any], gym.Space[Any]]:
    import warnings

    from ale_py import ALEInterface, LoggerMode

    ALEInterface.setLoggerMode(LoggerMode.Error)  # a check prints no emulator banner
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the deviations are warned about with the run
            env = make(spec, game, log_dir=False, **env_kwargs)
    finally:
        ALEInterface.setLoggerMode(LoggerMode.Info)  # ALE's default, for the caller's own envs
    try:
        return env.observation_space, env.action_space
    finally:
        env.close()
