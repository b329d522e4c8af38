"""Atari protocol environments: ale-py's ``AtariEnv`` with the spec's native settings + wrappers.

ale-py implements four SABER/HWR/Atari-5 settings natively and exactly — per-frame sticky actions
(``repeat_action_probability``), the 18-action set (``full_action_space``), the frame skip and
the episode frame cap (``max_num_frames_per_episode``, a truncation) — so those are passed
straight through. Behaviours ale-py lacks are wrappers from :mod:`arcadebench.wrappers`, composed
inner to outer as DEVELOPING.md documents, each only when the spec asks for it:

``AtariEnv`` → ``RolloverGuard`` (``rollover_threshold``) → ``MaxStuckTime``
(``max_stuck_frames``) → ``EpisodeFrameLimit`` (``max_episode_frames``; labels the native
truncation) → ``NoLifeInformation`` (``life_information: false``).

``obs_type="standard"`` gives the agent-side standard observation (grayscale, max-pool of the
last two frames, 84x84, stack of 4) through :class:`~arcadebench.wrappers.StandardAtariEnv`,
with the protocol unchanged.

Example:
    >>> import gymnasium as gym, arcadebench
    >>> env = gym.make("arcadebench/SABER-Pong-v0", obs_type="standard")
    >>> env.reset(seed=0)[0].shape
    (4, 84, 84)
    >>> [w.name for w in env.spec.additional_wrappers][:4]  # then the monitor, outermost
    ['RolloverGuard', 'MaxStuckTime', 'EpisodeFrameLimit', 'NoLifeInformation']
    >>> env.close()
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from ale_py.env import AtariEnv

from arcadebench.specs import Spec
from arcadebench.wrappers import (
    EpisodeFrameLimit,
    MaxStuckTime,
    NoLifeInformation,
    RolloverGuard,
    StandardAtariEnv,
)

__all__ = ["make_atari_env", "wrap_atari_protocol"]


def make_atari_env(spec: Spec, game: str, settings: dict[str, Any], **kwargs: Any) -> gym.Env:
    """Build the Atari environment of ``game`` with the (possibly overridden) protocol ``settings``.

    Args:
        spec: the protocol spec.
        game: an ale-py game id of the spec.
        settings: the spec's environment settings (``AtariSettings`` fields).
        **kwargs: passed to ``AtariEnv`` (``render_mode``, ``obs_type``, ``mode``, ``difficulty``);
            ``obs_type="standard"`` selects :class:`~arcadebench.wrappers.StandardAtariEnv`.
    """
    native = {
        "game": game,
        "frameskip": settings["frameskip"],
        "repeat_action_probability": settings["repeat_action_probability"],
        "full_action_space": settings["full_action_space"],
        "max_num_frames_per_episode": settings["max_episode_frames"],
    }
    if kwargs.get("obs_type") == "standard":
        del kwargs["obs_type"]
        env: gym.Env = StandardAtariEnv(**native, **kwargs)
    else:
        env = AtariEnv(**native, **kwargs)
    return wrap_atari_protocol(env, settings)


def wrap_atari_protocol(env: gym.Env, settings: dict[str, Any]) -> gym.Env:
    """Wrap an ``AtariEnv`` in the wrappers ``settings`` asks for, in the documented order."""
    if settings["rollover_threshold"] is not None:
        env = RolloverGuard(env, threshold=settings["rollover_threshold"])
    if settings["max_stuck_frames"] is not None:
        env = MaxStuckTime(env, max_stuck_frames=settings["max_stuck_frames"])
    if settings["max_episode_frames"] is not None:
        env = EpisodeFrameLimit(env, max_episode_frames=settings["max_episode_frames"])
    if not settings["life_information"]:
        env = NoLifeInformation(env)
    return env
