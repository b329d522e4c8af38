"""Training wrappers that change the protocol from above it are caught at run time."""

from __future__ import annotations

import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
from log_helpers import records
from stable_baselines3.common.atari_wrappers import AtariWrapper, MaxAndSkipEnv
from stable_baselines3.common.env_util import make_atari_env

from arcadebench.errors import InvalidArgument, NonCompliantWarning
from arcadebench.records import log_path

PONG = "arcadebench/SABER-Pong-v0"


def play(env, steps, seed=0):
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    for _ in range(steps):
        *_, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
        if terminated or truncated:
            env.reset()


def test_sb3s_atari_wrapper_is_warned_and_recorded_as_deviations(tmp_path):
    env = AtariWrapper(gym.make("arcadebench/SABER-Breakout-v0", log_dir=tmp_path, run="w"))
    with pytest.warns(NonCompliantWarning) as caught:
        play(env, 300)
    env.close()
    messages = " ".join(str(w.message) for w in caught)
    assert "MaxAndSkipEnv steps the environment several times per agent step" in messages
    assert "FireResetEnv plays actions at reset" in messages or "NoopResetEnv" in messages
    assert "docs: guides/train.md" in messages
    episodes = records(log_path(tmp_path, "saber", "breakout", "w"))[1:]
    assert episodes and "frame_skip" in episodes[-1]["deviations"]


def test_life_loss_episodes_are_caught_when_the_game_goes_on_without_a_reset(tmp_path):
    env = AtariWrapper(
        gym.make("arcadebench/SABER-Breakout-v0", log_dir=tmp_path, run="l"),
        frame_skip=1,  # no second frame skip: only the life-loss episodes are left to catch
        noop_max=0,
    )
    with pytest.warns(NonCompliantWarning, match="EpisodicLifeEnv continued a game it had not"):
        play(env, 2000)
    env.close()


def test_sb3s_atari_wrapper_on_the_standard_observation_is_refused_with_the_reason():
    env = AtariWrapper(gym.make(PONG, obs_type="standard", log_dir=False))
    with pytest.raises(
        InvalidArgument,
        match=re.escape("must not be wrapped in stable-baselines3's AtariWrapper"),
    ):
        env.reset(seed=0)
    env.close()


def test_make_atari_env_is_caught_in_its_own_envs(tmp_path):
    with pytest.warns(NonCompliantWarning, match="several times per agent step"):
        envs = make_atari_env(PONG, n_envs=2, env_kwargs=dict(log_dir=str(tmp_path), run="m"))
        envs.reset()
        for _ in range(5):
            envs.step(np.zeros(2, dtype=np.int64))
    envs.close()


class ThirtyNoops(gym.Wrapper):
    """NoopResetEnv at its longest start: 30 no-ops, each a step of the env below, at reset."""

    def reset(self, **kwargs):
        self.env.reset(**kwargs)
        for _ in range(30):
            obs, *_, info = self.env.step(0)
        return obs, info


def test_a_second_frame_skip_is_caught_after_long_no_op_starts(tmp_path):
    # the no-ops at reset are steps too: they must not use up the steps watched after a reset
    env = MaxAndSkipEnv(ThirtyNoops(gym.make(PONG, log_dir=tmp_path, run="n")), skip=4)
    with pytest.warns(NonCompliantWarning) as caught:
        play(env, 3)
    env.close()
    messages = " ".join(str(w.message) for w in caught)
    assert "MaxAndSkipEnv steps the environment several times per agent step" in messages
    assert "ThirtyNoops plays actions at reset" in messages


def test_a_plain_loop_and_the_vector_envs_are_not_flagged(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonCompliantWarning)
        env = gym.make(PONG, log_dir=tmp_path, run="p")
        play(env, 300)
        env.close()
        envs = gym.make_vec(PONG, 2, vectorization_mode="sync", log_dir=str(tmp_path), run="v")
        envs.reset(seed=0)
        for _ in range(300):
            envs.step(np.zeros(2, dtype=np.int64))
        envs.close()
