"""Spec → environment: the entry point behind every registered id, and the registration.

``import arcadebench`` registers ``arcadebench/<Protocol>-<Game>-v<N>`` for every game of every
built-in spec, e.g. ``arcadebench/SABER-Pong-v0`` or
``arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act1-v0``. The registered kwargs are the
spec's environment settings, so ``env.spec.kwargs`` shows the protocol; passing a different value
to ``gym.make`` is allowed but marks the environment *non-compliant* (a warning, and the
deviation is recorded with every logged episode; :mod:`~arcadebench.benchmarks.envs.resolve`).

Functions: make_protocol_env, make, register_envs.

Example:
    >>> import gymnasium as gym, arcadebench
    >>> env = gym.make("arcadebench/SABER-Pong-v0")
    >>> env.spec.kwargs["repeat_action_probability"], int(env.action_space.n)
    (0.25, 18)
    >>> env.close()
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym

from arcadebench.benchmarks.envs.atari import make_atari_env
from arcadebench.benchmarks.envs.ids import env_id
from arcadebench.benchmarks.envs.resolve import (
    monitor_kwargs,
    protocol_kwargs,
    resolve,
    warn_deviations,
)
from arcadebench.benchmarks.envs.sonic import make_retro_env
from arcadebench.errors import InvalidArgument
from arcadebench.records import log_path, phase_run, resolve_log_dir
from arcadebench.specs import Spec, list_specs, load_spec
from arcadebench.specs.model import AtariSettings, RetroSettings
from arcadebench.wrappers.monitor import EpisodeMonitor

__all__ = ["make", "make_protocol_env", "register_envs"]


def make_protocol_env(
    spec: str | Spec,
    game: str,
    log_dir: str | os.PathLike[str] | bool | None = None,
    run: str = "0",
    resume: bool = False,
    algorithm: str | None = None,
    record_actions: bool = True,
    **kwargs: Any,
) -> gym.Env:
    """Build the environment of ``game`` exactly as ``spec`` defines it (the entry point).

    Keyword arguments named like a spec setting override it (recorded as a deviation); the
    builder options are ``obs_type`` (Atari) and ``render_mode``; anything else is refused
    (:func:`~arcadebench.benchmarks.envs.resolve.resolve`). The outermost wrapper is the
    :class:`~arcadebench.wrappers.monitor.EpisodeMonitor`; it writes episodes to
    ``<log_dir>/<spec>/<game>/<run>.jsonl`` when ``log_dir`` (or ``$ARCADEBENCH_LOG_DIR``) is
    set: every environment made with the same ``log_dir`` and ``run`` is one more environment of
    that training run (a vector env, ``SubprocVecEnv`` workers, other processes of the machine;
    across machines, :mod:`~arcadebench.benchmarks.training.ray_run`), and an old run is
    continued only with ``resume=True``. ``log_dir=False`` says no
    log is intended (otherwise a training protocol without one warns once); ``algorithm`` names
    the agent in the log's header. A logged environment also records what re-simulating each
    episode needs (``<run>.replay``: its start and actions) unless ``record_actions=False``.
    """
    if not isinstance(record_actions, bool):
        raise InvalidArgument(f"`record_actions` must be True or False, got {record_actions!r}")
    spec = load_spec(spec)
    game = spec.resolve_game(game)
    resolved = resolve(spec, kwargs)
    directory, unlogged_ok = resolve_log_dir(log_dir)
    phase = resolved.options.get("phase", "training")
    log = log_path(directory, spec.name, game, phase_run(run, phase)) if directory else None
    warn_deviations(resolved, f"{spec.name} environment for {game!r}")
    settings = resolved.settings
    if isinstance(settings, AtariSettings):
        env = make_atari_env(game, settings, **resolved.options)
    elif isinstance(settings, RetroSettings):
        env = make_retro_env(spec, game, settings, **resolved.options)
    try:
        return EpisodeMonitor(
            env,
            log=log,
            phase=phase,
            **monitor_kwargs(
                resolved,
                game,
                run=run,
                resume=resume,
                algorithm=algorithm,
                record_actions=record_actions,
                unlogged_ok=unlogged_ok,
            ),
        )
    except BaseException:
        env.close()  # e.g. the log is in use: free the emulator (one per process in stable-retro)
        raise


def make(spec: str | os.PathLike[str] | Spec, game: str, **kwargs: Any) -> gym.Env:
    """Make the protocol environment of ``game``; also works for a spec YAML file of your own.

    It is ``gym.make(env_id(spec, game), **kwargs)``: a spec of your own registers its id first,
    so its environments have an ``env.spec`` too (``gym.make(env.spec)`` rebuilds one).

    Raises:
        InvalidArgument: your spec's ``id_prefix`` is a built-in spec's (the ids would clash).
    """
    spec = load_spec(spec)
    game = spec.resolve_game(game)
    id = env_id(spec, game)
    if not (spec.name in list_specs() and load_spec(spec.name).hash == spec.hash):
        _register_own_spec(spec, game, id)
    return gym.make(id, **kwargs)


def _register_own_spec(spec: Spec, game: str, id: str) -> None:
    """Register (or re-register) ``id`` for a spec that is not built in."""
    registered = gym.registry.get(id)
    builtin = registered.kwargs.get("spec") if registered is not None else None
    if isinstance(builtin, str) and builtin in list_specs():
        raise InvalidArgument(
            f"`spec` must have an id_prefix of its own, got {spec.id_prefix!r} (from "
            f"{spec.source}), the built-in {builtin!r} spec's; change id_prefix in the YAML"
        )
    source = Path(spec.source)
    kwargs = {"spec": str(source.resolve()) if source.is_file() else spec, "game": game}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Overriding environment": the same file, reloaded
        gym.register(
            id=id,
            entry_point=f"{__name__}:make_protocol_env",
            kwargs={**kwargs, **protocol_kwargs(spec)},
        )


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
