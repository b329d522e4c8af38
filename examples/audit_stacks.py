"""Atari env stacks as their libraries' recipes build them, for ``arcadebench audit``.

    arcadebench audit examples.audit_stacks:cleanrl_envs          # from a clone's root
    arcadebench audit examples.audit_stacks:envpool_saber --spec saber

The stacks of ``docs/audit.md`` that take more than one call to make (the others are audited
straight from their library: ``ALE/Phoenix-v5``, ``ale_py.vector_env:AtariVectorEnv``,
``stable_baselines3.common.env_util:make_atari_env``, ``envpool:make``), on Phoenix: a game with
lives, a FIRE in its minimal action set that changes the game from its first frame, and rewards
of 20 and more, so that life loss, FIRE resets, no-op starts and reward clipping all show within
a few hundred steps.

- ``ale_v5_preprocessed``: ``frameskip=1`` under Gymnasium's ``AtariPreprocessing`` with its
  defaults, the recipe of ALE issue #439.
- ``cleanrl_envs``: CleanRL's ``ppo_atari.py`` (vwxyzjn/cleanrl, cleanrl/ppo_atari.py at
  fe8d8a0): its ``make_env``, wrapper for wrapper with the Gymnasium 1.x names of its wrappers,
  in a ``SyncVectorEnv`` as the script builds it.
- ``envpool_saber``: envpool configured as close to SABER (Toromanoff et al. 2019, Table 1) as
  its options allow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ale_py
import gymnasium as gym
from gymnasium.wrappers import AtariPreprocessing


def ale_v5_preprocessed() -> gym.Env[Any, Any]:
    """ale-py v5 with frameskip=1 under Gymnasium's AtariPreprocessing (its defaults)."""
    gym.register_envs(ale_py)
    return AtariPreprocessing(gym.make("ALE/Phoenix-v5", frameskip=1))


def cleanrl_make_env(
    env_id: str, idx: int, capture_video: bool, run_name: str
) -> Callable[[], gym.Env[Any, Any]]:
    """CleanRL ppo_atari.py's make_env, wrapper for wrapper (Gymnasium 1.x names)."""
    from stable_baselines3.common.atari_wrappers import (
        ClipRewardEnv,
        EpisodicLifeEnv,
        FireResetEnv,
        MaxAndSkipEnv,
        NoopResetEnv,
    )

    def thunk() -> gym.Env[Any, Any]:
        gym.register_envs(ale_py)
        if capture_video and idx == 0:
            env = gym.make(env_id, render_mode="rgb_array")
            env = gym.wrappers.RecordVideo(env, f"videos/{run_name}")
        else:
            env = gym.make(env_id)
        env = gym.wrappers.RecordEpisodeStatistics(env)
        env = NoopResetEnv(env, noop_max=30)
        env = MaxAndSkipEnv(env, skip=4)
        env = EpisodicLifeEnv(env)
        if "FIRE" in env.unwrapped.get_action_meanings():  # type: ignore[attr-defined]  # AtariEnv has it
            env = FireResetEnv(env)
        env = ClipRewardEnv(env)
        env = gym.wrappers.ResizeObservation(env, (84, 84))
        env = gym.wrappers.GrayscaleObservation(env)
        env = gym.wrappers.FrameStackObservation(env, 4)
        return env

    return thunk


def cleanrl_envs() -> gym.vector.SyncVectorEnv:
    """CleanRL ppo_atari.py's envs: a SyncVectorEnv of its make_env, on PhoenixNoFrameskip-v4."""
    return gym.vector.SyncVectorEnv(
        [cleanrl_make_env("PhoenixNoFrameskip-v4", i, False, "audit") for i in range(1)]
    )


def envpool_saber() -> Any:
    """envpool as close to SABER as its options allow.

    Sticky actions at 0.25, all 18 actions, no FIRE reset, no life signal, no clipping, the
    fewest no-ops, a 100-hour cap and raw RGB frames.
    """
    import envpool

    return envpool.make(
        "Phoenix-v5",
        env_type="gymnasium",
        num_envs=1,
        seed=0,
        repeat_action_probability=0.25,
        full_action_space=True,
        noop_max=1,  # envpool plays 1 to noop_max NOOP frames: 1 is its least
        use_fire_reset=False,
        episodic_life=False,
        reward_clip=False,
        max_episode_steps=21_600_000 // 4,  # agent steps: SABER's 100 hours at frame skip 4
        stack_num=1,
        img_height=210,
        img_width=160,
        gray_scale=False,
    )
