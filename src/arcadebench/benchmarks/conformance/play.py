"""Play one game of an Atari spec with seeded random and NOOP agents and record what happened.

:func:`play_game` is one job of the check (it runs in a worker process): it makes the game's
protocol env exactly as the spec defines it and plays

1. a random agent for ``frames`` emulator frames with the :class:`StickyProbe` measuring the
   sticky actions inside the protocol's own steps;
2. the same seed and actions again without the probe (the determinism rule: same seed, same
   episode; it also shows the probe only reads the emulator);
3. a NOOP agent until its episode ends, once for the max stuck time and once for the frame cap,
   each limit as declared when it fits in half the budget, else scaled down to half the budget
   (a deviating env: the same wrappers with a smaller number). The other limit is switched off
   when it would fire first, so each run isolates one mechanism. A NOOP agent is never rewarded
   in most games, so it shows the stuck limit firing; where it is rewarded (Pong's opponent
   scores) or its game ends first (Assault), the limit is cut to fit that episode and the
   episode replayed.

Every step of every run goes through an :class:`EpisodeObserver`. The envs keep no episode log
(``log_dir=False``), even with ``$ARCADEBENCH_LOG_DIR`` set: these plays are no training run.
The result is a JSON-able dict of measurements; judging them against the spec is
:mod:`.verdicts`' job, so runs can be shared by specs with the same settings (HWR and Atari-5).

Functions: play_game, scaled_limit.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from ale_py import ALEInterface, LoggerMode
from ale_py.env import AtariEnv

from arcadebench.benchmarks.conformance.observer import EpisodeObserver
from arcadebench.benchmarks.conformance.sticky_probe import StickyProbe
from arcadebench.benchmarks.envs import make_protocol_env
from arcadebench.errors import InvalidArgument, NonCompliantWarning
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.model import AtariSettings

__all__ = ["LIMITS", "play_game", "scaled_limit"]

LIMITS = ("max_stuck_frames", "max_episode_frames")
"""The settings a NOOP run verifies, each in a run of its own."""


def scaled_limit(declared: int, frames: int, frameskip: int) -> int:
    """The limit a run of ``frames`` frames plays: ``declared`` if it fits twice, else half.

    Half the budget leaves room for start-up frames and an early reward; the scaled limit is a
    whole number of agent steps so the mechanism fires on a step boundary as the declared one
    does.

    Example:
        >>> scaled_limit(18_000, 40_000, 4), scaled_limit(18_000, 1_000, 4)
        (18000, 500)
    """
    if declared * 2 <= frames:
        return declared
    return max(frameskip, frames // 2 // frameskip * frameskip)


def _play(
    env: Any,
    settings: dict[str, Any],
    policy: Callable[[], int],
    frames: int,
    seed: int,
    one_episode: bool = False,
) -> dict[str, Any]:
    """Play ``policy`` for ``frames`` frames (or one episode), checking every step."""
    observer = EpisodeObserver(settings, env, digest=not one_episode)
    obs, info = env.reset(seed=seed)
    observer.reset(obs, info)
    while observer.frames < frames and observer.steps < frames:
        obs, reward, terminated, truncated, info = env.step(policy())
        observer.step(obs, reward, terminated, truncated, info)
        if terminated or truncated:
            if one_episode:
                break
            obs, info = env.reset()
            observer.reset(obs, info)
    return observer.summary()


def _random_policy(env: Any, seed: int) -> Callable[[], int]:
    rng, actions = np.random.default_rng(seed), int(env.action_space.n)
    return lambda: int(rng.integers(actions))


def _limit_run(
    spec: Spec,
    game: str,
    settings: dict[str, Any],
    key: str,
    frames: int,
    seed: int,
    env_kwargs: dict[str, Any],
) -> dict[str, Any]:
    """A NOOP episode for the limit ``key``, declared or scaled to fit ``frames``.

    A limit that did not fire is tried once more, cut to what the episode offered: a max stuck
    time to a step less than the longest stretch without reward (the NOOP agent was rewarded:
    Pong's opponent scores; or its game ended first: Freeway's clock), a frame cap to a step
    before the game ended (the NOOP agent lost: Assault). The same seed replays the same frames
    up to the new limit, so the rule must fire there, on the exact step.
    """
    declared, skip = settings[key], settings["frameskip"]
    limit = scaled_limit(declared, frames, skip)
    tries = []
    while True:
        overrides: dict[str, Any] = {key: limit} if limit != declared else {}
        other = LIMITS[1 - LIMITS.index(key)]
        if settings[other] is not None and settings[other] <= limit:
            overrides[other] = None  # it would end the NOOP episode first
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonCompliantWarning)
            env = make_protocol_env(spec, game, log_dir=False, **{**env_kwargs, **overrides})
        try:
            run = _play(env, {**settings, **overrides}, lambda: 0, frames, seed, one_episode=True)
        finally:
            env.close()
        tries.append(limit)
        if key == "max_stuck_frames":  # a step short of it: the stretch may end in a game over
            fired, shorter = run["stuck_ends"], (run["stuck_max"] - skip) // skip * skip
        else:
            fired, shorter = run["cap_ends"], (run["last_frame"] - skip) // skip * skip
        if fired or len(tries) > 1 or shorter < skip:
            break
        limit = shorter
    return {
        "declared": declared,
        "limit": limit,
        "tries": tries,
        "overrides": overrides,
        "run": run,
    }


def atari_settings(spec: Spec) -> AtariSettings:
    """The settings of an Atari spec; any other spec is refused (the check plays ALE games)."""
    if not isinstance(spec.environment, AtariSettings):
        raise InvalidArgument(
            f"`spec` must be an Atari spec (platform 'atari'), got {spec.name!r} (platform "
            f"{spec.platform!r}); the check plays ALE games only"
        )
    return spec.environment


def play_game(
    spec: str, game: str, frames: int, seed: int, env_kwargs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Play ``game`` of ``spec`` (a built-in name or a YAML path) and return the measurements.

    Args:
        spec: the spec, as a name or path a worker process can load.
        game: the canonical (ale-py) game id.
        frames: emulator frames each agent plays.
        seed: seed of the env resets and of the random agent.
        env_kwargs: passed to every env made (``make_protocol_env``): builder options such as
            ``obs_type``, or settings that make the env deviate. The runs are still judged
            against the spec's settings, so a deviation shows as a broken rule.

    Returns:
        ``{"game", "frames", "seed", "settings", "env_kwargs", "actions", "minimal_actions",
        "observation_shape", "sticky", "random", "replay", "max_stuck_frames",
        "max_episode_frames"}``; ``settings`` are the spec's, the runs are
        :meth:`EpisodeObserver.summary` dicts and a limit is ``None`` when the spec has none.
    """
    ALEInterface.setLoggerMode(LoggerMode.Error)  # the report is the table, not ALE's banner
    loaded = load_spec(spec)
    env_kwargs = dict(env_kwargs or {})
    settings = dataclasses.asdict(atari_settings(loaded))
    result: dict[str, Any] = {
        "game": game,
        "frames": frames,
        "seed": seed,
        "settings": settings,
        "env_kwargs": env_kwargs,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)  # env_kwargs: deviating on purpose
        env = make_protocol_env(loaded, game, log_dir=False, **env_kwargs)
    try:
        base = env.unwrapped
        if not isinstance(env.action_space, gym.spaces.Discrete) or not isinstance(base, AtariEnv):
            raise InvalidArgument(
                f"`env_kwargs` must leave {game} an ALE env of discrete actions, got "
                f"{type(base).__name__} with {env.action_space}"
            )
        result["actions"] = int(env.action_space.n)
        result["minimal_actions"] = len(base.ale.getMinimalActionSet())
        result["observation_shape"] = list(env.observation_space.shape or ())
        declared = settings["repeat_action_probability"]
        probe = StickyProbe.attach(env, game, declared)
        try:
            result["random"] = _play(env, settings, _random_policy(env, seed), frames, seed)
        finally:
            result["sticky"] = probe.detach(env).to_dict()
        result["replay"] = _play(env, settings, _random_policy(env, seed), frames, seed)
    finally:
        env.close()
    for key in LIMITS:
        result[key] = (
            None
            if settings[key] is None
            else _limit_run(loaded, game, settings, key, frames, seed, env_kwargs)
        )
    return result
