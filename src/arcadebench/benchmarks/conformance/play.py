"""Play one game of an Atari spec with seeded random and NOOP agents and record what happened.

:func:`play_game` is one job of the check (it runs in a worker process): it makes the game's
protocol env exactly as the spec defines it and plays

1. a random agent for ``frames`` emulator frames with the :class:`StickyProbe` measuring the
   sticky actions inside the protocol's own steps;
2. the same seed and actions again without the probe, for half the frames (the determinism
   rule: same seed, same episode, compared over the first half of the first run; it also shows
   the probe only reads the emulator);
3. a NOOP agent until its episode ends, once for the max stuck time and once for the frame cap,
   each limit as declared when it fits in half the budget, else scaled down to half the budget
   (a deviating env: the same wrappers with a smaller number). The other limit is switched off
   when it would fire first, so each run isolates one mechanism. A NOOP agent is never rewarded
   in most games, so it shows the stuck limit firing; where it is rewarded (Pong's opponent
   scores) or its game ends first (Assault), the limit is cut to fit that episode and the
   episode replayed;
4. with no-op starts, a few more resets, to see that their number is drawn (not fixed);
5. with a training life-loss signal, the random agent in the *training* environment, where each
   lost life must end the learner's episode.

Runs 1-3 play the environment whose episodes are scored: the evaluation one of a protocol scored
after training (DQN, Atari 100k), else the training one.

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

__all__ = ["LIMITS", "NOOP_RESETS", "play_game", "scaled_limit"]

LIMITS = ("max_stuck_frames", "max_episode_frames")
"""The settings a NOOP run verifies, each in a run of its own."""
NOOP_RESETS = 5
"""Resets that show the no-op starts are drawn (5 equal draws of 30 would have p = 30**-4)."""
LIFE_LOSS_FRAMES = 4
"""How many times its frames the training run may play to see a lost life end an episode (a
random agent survives 1,000 frames of Ms. Pac-Man)."""


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
    until_life_lost: bool = False,
    digest_frames: int | None = 0,
) -> dict[str, Any]:
    """Play ``policy`` for ``frames`` frames (or one episode), checking every step.

    ``until_life_lost`` stops at the first lost life that ended an episode and the reset that
    continued its game, or after ``frames``; ``digest_frames`` is the observer's.
    """
    observer = EpisodeObserver(settings, env, digest_frames, phase=settings["phase"])
    try:
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
                if until_life_lost and observer.life_ends:
                    break
    finally:
        observer.close()
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
        env = _make(spec, game, settings["phase"], {**env_kwargs, **overrides})
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


def _make(spec: Spec, game: str, phase: str, env_kwargs: dict[str, Any]) -> Any:
    """The protocol env of ``phase``; ``env_kwargs`` may deviate on purpose (no warning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        return make_protocol_env(spec, game, log_dir=False, phase=phase, **env_kwargs)


def _no_op_starts(env: Any, settings: dict[str, Any], seed: int) -> dict[str, Any]:
    """:data:`NOOP_RESETS` resets, the first one seeded, each checked for its no-op frames."""
    observer = EpisodeObserver(settings, env, digest_frames=0, phase=settings["phase"])
    try:
        for reset in range(NOOP_RESETS):
            observer.reset(*env.reset(seed=seed if reset == 0 else None))
    finally:
        observer.close()
    return observer.summary()


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
        "max_episode_frames", "noop_starts", "training"}``; ``settings`` are the spec's plus the
        ``phase`` the scored runs played; the runs are :meth:`EpisodeObserver.summary` dicts, a
        limit is ``None`` when the spec has none, ``noop_starts`` a run of :data:`NOOP_RESETS`
        resets (``None`` without no-op starts) and ``training`` the random agent's run in the
        training environment (``None`` without a training life-loss signal, or when the scored
        runs played that environment).
    """
    ALEInterface.setLoggerMode(LoggerMode.Error)  # the report is the table, not ALE's banner
    loaded = load_spec(spec)
    env_kwargs = dict(env_kwargs or {})
    scored = "evaluation" if loaded.evaluation.scored == "after_training" else "training"
    settings = {**dataclasses.asdict(atari_settings(loaded)), "phase": scored}
    result: dict[str, Any] = {
        "game": game,
        "frames": frames,
        "seed": seed,
        "settings": settings,
        "env_kwargs": env_kwargs,
    }
    half = frames // 2  # the determinism rule's replay
    env = _make(loaded, game, scored, env_kwargs)
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
        probe = StickyProbe.attach(env, game, settings["repeat_action_probability"])
        try:
            policy = _random_policy(env, seed)
            result["random"] = _play(env, settings, policy, frames, seed, digest_frames=half)
        finally:
            result["sticky"] = probe.detach(env).to_dict()
        policy = _random_policy(env, seed)
        result["replay"] = _play(env, settings, policy, half, seed, digest_frames=half)
        result["noop_starts"] = (
            _no_op_starts(env, settings, seed) if settings["noop_starts"] else None
        )
    finally:
        env.close()
    for key in LIMITS:
        result[key] = (
            None
            if settings[key] is None
            else _limit_run(loaded, game, settings, key, frames, seed, env_kwargs)
        )
    result["training"] = None
    if settings["life_loss_terminal_in_training"] and scored != "training":
        training = {**settings, "phase": "training"}
        env = _make(loaded, game, "training", env_kwargs)
        try:
            policy = _random_policy(env, seed)
            limit = frames * LIFE_LOSS_FRAMES
            result["training"] = _play(env, training, policy, limit, seed, until_life_lost=True)
        finally:
            env.close()
    return result
