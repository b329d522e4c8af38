"""Atari protocol environments: ale-py's ``AtariEnv`` with the spec's native settings, then wrappers.

ale-py implements four SABER/HWR/Atari-5 settings natively and exactly — per-frame sticky actions
(``repeat_action_probability``), the 18-action set (``full_action_space``), the frame skip and
the episode frame cap (``max_num_frames_per_episode``, a truncation) — so those are passed
straight through. Behaviours ale-py lacks (max stuck time, the rollover guard, hiding life
information) are wrappers from :mod:`arcadebench.wrappers`.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from ale_py.env import AtariEnv

from arcadebench.specs import Spec

__all__ = ["make_atari_env"]


def make_atari_env(spec: Spec, game: str, settings: dict[str, Any], **kwargs: Any) -> gym.Env:
    """Build the Atari environment of ``game`` with the (possibly overridden) protocol ``settings``.

    Args:
        spec: the protocol spec.
        game: an ale-py game id of the spec.
        settings: the spec's environment settings (``AtariSettings`` fields).
        **kwargs: passed to ``AtariEnv`` (``render_mode``, ``obs_type``, ``mode``, ``difficulty``).
    """
    return AtariEnv(
        game=game,
        frameskip=settings["frameskip"],
        repeat_action_probability=settings["repeat_action_probability"],
        full_action_space=settings["full_action_space"],
        max_num_frames_per_episode=settings["max_episode_frames"],
        **kwargs,
    )
