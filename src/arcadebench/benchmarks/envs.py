"""Spec → environment: Gymnasium ids for every (protocol, game/level), and the factory behind them.

``import arcadebench`` registers ``arcadebench/<Protocol>-<Game>-v<N>`` for every game of every
built-in spec, e.g. ``arcadebench/SABER-Pong-v0`` or
``arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act1-v0``. The registered kwargs are the
spec's environment settings, so ``env.spec.kwargs`` shows the protocol; passing a different value
to ``gym.make`` is allowed but marks the environment *non-compliant* (a warning, and the
deviation is recorded with every logged episode).

Example:
    >>> import gymnasium as gym, arcadebench
    >>> env = gym.make("arcadebench/SABER-Pong-v0")
    >>> env.spec.kwargs["repeat_action_probability"], int(env.action_space.n)
    (0.25, 18)
    >>> env.close()
"""

from __future__ import annotations

import dataclasses
import os
import re
import warnings
from typing import Any

import gymnasium as gym

from arcadebench.errors import NonCompliantWarning, UnknownGame
from arcadebench.specs import Spec, list_specs, load_spec
from arcadebench.wrappers.monitor import LOG_DIR_ENV, EpisodeMonitor, log_path

__all__ = [
    "env_id",
    "make",
    "make_protocol_env",
    "parse_env_id",
    "register_envs",
    "NonCompliantWarning",
]

NAMESPACE = "arcadebench"
_ID_RE = re.compile(
    rf"^{NAMESPACE}/(?P<prefix>[A-Za-z][A-Za-z0-9]*)-(?P<game>.+)-v(?P<version>\d+)$"
)


def _display_name(spec: Spec, game: str) -> str:
    if spec.platform == "atari":
        from ale_py.registration import rom_id_to_name

        return rom_id_to_name(game)
    return game


def env_id(spec: Spec | str, game: str) -> str:
    """The Gymnasium id of ``game`` under ``spec``, e.g. ``arcadebench/Atari5-BattleZone-v0``."""
    spec = load_spec(spec)
    game = spec.resolve_game(game)
    return f"{NAMESPACE}/{spec.id_prefix}-{_display_name(spec, game)}-v{spec.env_version}"


def parse_env_id(id: str) -> tuple[str, str, int]:
    """Split an id into ``(id_prefix, game display name, version)``: :func:`env_id` inverted."""
    match = _ID_RE.match(id)
    if not match:
        raise UnknownGame(f"{id!r} is not an arcadebench id (arcadebench/<Protocol>-<Game>-v<N>).")
    return match["prefix"], match["game"], int(match["version"])


def protocol_kwargs(spec: Spec) -> dict[str, Any]:
    """The spec's environment settings as keyword arguments (what ``env.spec.kwargs`` shows)."""
    if spec.environment is None:
        return {}
    return dataclasses.asdict(spec.environment)


# Settings that are the agent's choice, not the protocol's: Sonic's actions are the 12 buttons
# (Nichol et al. 2018, Section 3.7); the named button combinations are conveniences (JERK played
# the raw buttons, Rainbow and PPO seven combinations), so choosing one is no deviation.
_AGENT_CHOICES = frozenset({"action_set"})


def _deviations(spec: Spec, settings: dict[str, Any]) -> dict[str, dict[str, Any]]:
    expected = protocol_kwargs(spec)
    return {
        key: {"spec": expected[key], "used": value}
        for key, value in settings.items()
        if key in expected
        and key not in _AGENT_CHOICES
        and _normalise(value) != _normalise(expected[key])
    }


def _normalise(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def make_protocol_env(
    spec: str | Spec,
    game: str,
    log_dir: str | os.PathLike | None = None,
    run: str = "0",
    resume: bool = False,
    **kwargs: Any,
) -> gym.Env:
    """Build the environment of ``game`` exactly as ``spec`` defines it (the entry point).

    Keyword arguments named like a spec setting override it (recorded as a deviation); the others
    go to the platform builder (e.g. ``render_mode``, ``obs_type`` for Atari). The outermost
    wrapper is the :class:`~arcadebench.wrappers.monitor.EpisodeMonitor`; it writes episodes to
    ``<log_dir>/<spec>/<game>/<run>.jsonl`` when ``log_dir`` (or ``$ARCADEBENCH_LOG_DIR``) is
    set, continuing that run's log only with ``resume=True``, and nothing otherwise.
    """
    spec = load_spec(spec)
    game = spec.resolve_game(game)
    log_dir = log_dir if log_dir is not None else os.environ.get(LOG_DIR_ENV) or None
    log = log_path(log_dir, spec.name, game, run) if log_dir is not None else None
    settings = protocol_kwargs(spec)
    extra = {k: v for k, v in kwargs.items() if k not in settings}
    settings.update({k: v for k, v in kwargs.items() if k in settings})
    deviations = _deviations(spec, settings)
    if deviations:
        changed = ", ".join(
            f"{k}={v['used']!r} (spec: {v['spec']!r})" for k, v in deviations.items()
        )
        warnings.warn(
            f"{spec.name} environment for {game!r} is non-compliant: {changed}. "
            "Its scores are not comparable with the protocol's.",
            NonCompliantWarning,
            stacklevel=2,
        )
    if spec.platform == "atari":
        from arcadebench.benchmarks.atari import make_atari_env

        env = make_atari_env(spec, game, settings, **extra)
    elif spec.platform == "retro":
        from arcadebench.benchmarks.sonic import make_retro_env

        env = make_retro_env(spec, game, settings, **extra)
    else:
        raise UnknownGame(
            f"the {spec.name!r} spec (platform 'none') defines scores only, no environments."
        )
    try:
        return EpisodeMonitor(
            env,
            spec,
            game,
            log=log,
            run=run,
            resume=resume,
            deviations=deviations,
            settings=settings,
            env_id=env_id(spec, game),
        )
    except BaseException:
        env.close()  # e.g. the log is in use: free the emulator (one per process in stable-retro)
        raise


def make(spec: str | Spec, game: str, **kwargs: Any) -> gym.Env:
    """Make the protocol environment of ``game``; also works for a spec YAML file of your own.

    For built-in specs this is ``gym.make(env_id(spec, game), **kwargs)``.
    """
    spec = load_spec(spec)
    game = spec.resolve_game(game)
    if spec.name in list_specs() and load_spec(spec.name).hash == spec.hash:
        return gym.make(env_id(spec, game), **kwargs)
    return make_protocol_env(spec, game, **kwargs)


def register_envs() -> list[str]:
    """Register an id for every game or level of every built-in spec; returns the ids."""
    ids = []
    for name in list_specs():
        spec = load_spec(name)
        if spec.platform == "none":
            continue
        settings = protocol_kwargs(spec)
        for game in spec.games:
            id = env_id(spec, game)
            if id not in gym.registry:
                gym.register(
                    id=id,
                    entry_point=f"{__name__}:make_protocol_env",
                    kwargs={"spec": name, "game": game, **settings},
                )
            ids.append(id)
    return ids
