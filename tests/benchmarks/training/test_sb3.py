"""stable-baselines3 on the protocols: the VecEnv over make_vec and the checkers.

Saved models played by the runner: test_sb3_policy.py.
"""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from testdata import DATA
from torch_helpers import one_torch_thread  # noqa: F401 - a module fixture

from arcadebench.benchmarks.training.sb3 import ProtocolVecEnv, make_sb3_vec_env

SPEC = str(DATA / "specs" / "run_budget.yaml")  # episodes capped at 2,000 frames


def test_the_vec_env_follows_dummy_vec_envs_semantics_on_the_batched_path():
    envs = make_sb3_vec_env(SPEC, "breakout", 2, log_dir=False)
    try:
        assert isinstance(envs, ProtocolVecEnv) and envs.observation_space.shape == (4, 84, 84)
        envs.seed(5)
        obs = envs.reset()
        assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8
        for _ in range(600):  # the 2,000-frame cap ends an episode by step 500
            obs, rewards, dones, infos = envs.step(np.zeros(2, dtype=np.int64))
            assert rewards.dtype == np.float32 and len(infos) == 2
            if dones.any():
                break
        i = int(np.flatnonzero(dones)[0])
        info = infos[i]
        assert info["terminal_observation"].shape == (4, 84, 84)
        assert info["TimeLimit.truncated"] is True  # the frame cap is a truncation
        assert info["arcadebench"]["end_reason"] in ("frame_limit", "stuck")
        assert info["episode"]["l"] == 500 and info["episode"]["r"] == 0.0  # NOOP: no reward
    finally:
        envs.close()


def test_gymnasiums_and_sb3s_checkers_pass_on_logged_envs(tmp_path):
    env = gym.make("arcadebench/SABER-Pong-v0", log_dir=tmp_path, run="c")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # the checkers' own advice
            gymnasium_check_env(env)  # makes a second instance, which joins the run
            sb3_check_env(env, skip_render_check=True)
    finally:
        env.close()
