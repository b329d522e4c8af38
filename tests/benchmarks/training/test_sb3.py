"""stable-baselines3 on the protocols: the VecEnv over make_vec, the checkers, saved models."""

from __future__ import annotations

import json
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from stable_baselines3 import PPO
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from testdata import DATA

import arcadebench
from arcadebench.benchmarks.runner.agents import agent_env_kwargs, agent_name, load_agent
from arcadebench.benchmarks.training.sb3 import ProtocolVecEnv, SB3Policy, make_sb3_vec_env
from arcadebench.cli import main
from arcadebench.errors import AgentError

SPEC = str(DATA / "specs" / "run_budget.yaml")  # episodes capped at 2,000 frames


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """One torch thread, as the examples train: a tiny CNN gains nothing from a second one, and
    while the suite keeps every core busy an idle OpenMP thread spins, burning CPU for nothing."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def model_zip(tmp_path_factory):
    """A PPO model trained for 256 steps on the standard observation, saved."""
    envs = make_sb3_vec_env(SPEC, "breakout", 2, log_dir=False)
    model = PPO("CnnPolicy", envs, n_steps=64, batch_size=64, n_epochs=1, device="cpu", seed=0)
    model.learn(total_timesteps=128)
    envs.close()
    path = tmp_path_factory.mktemp("models") / "ppo_tiny.zip"
    model.save(path)
    return path


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


def test_a_saved_model_is_an_agent_named_after_its_file(model_zip):
    agent = load_agent(f"sb3:PPO:{model_zip}")
    assert isinstance(agent, SB3Policy) and agent.deterministic
    assert agent_name(f"sb3:PPO:{model_zip}") == "ppo_tiny" == agent_name(agent)
    assert agent_env_kwargs(f"sb3:PPO:{model_zip}", arcadebench.load_spec(SPEC)) == {
        "obs_type": "standard"
    }
    assert not load_agent(f"sb3:PPO:{model_zip}:stochastic").deterministic
    obs = np.zeros((4, 84, 84), dtype=np.uint8)
    first = agent.predict(obs)
    assert all(agent.predict(obs) == first for _ in range(5))  # greedy by default


def test_arcadebench_run_evaluates_a_saved_model(tmp_path, model_zip, capsys):
    status = main(
        [
            "run",
            SPEC,
            "--games",
            "pong",
            "--agent",
            f"sb3:PPO:{model_zip}",
            "--episodes",
            "1",
            "--out",
            str(tmp_path),
            "--progress",
            "off",
        ]
    )
    assert status == 0, capsys.readouterr().err
    results = json.loads((tmp_path / "results.json").read_text())
    assert list(results["algorithms"]) == ["ppo_tiny"]
    log = tmp_path / "ppo_tiny" / "runbudget" / "pong" / "0.jsonl"
    header = json.loads(log.read_text().splitlines()[0])
    assert header["settings"]["frameskip"] == 4 and header["algorithm"] == "ppo_tiny"


def test_bad_models_are_one_line_errors(tmp_path):
    with pytest.raises(AgentError, match=re.escape("must be a saved model (.zip)")):
        load_agent(f"sb3:PPO:{tmp_path / 'missing.zip'}")
    with pytest.raises(AgentError, match="must be sb3:<Algorithm>:<model.zip>"):
        load_agent("sb3:PPO")
    cartpole = PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=32, batch_size=32, device="cpu")
    cartpole.save(tmp_path / "cartpole.zip")
    with pytest.raises(AgentError, match=r"expects observations of shape \(4,\), which no"):
        load_agent(f"sb3:PPO:{tmp_path / 'cartpole.zip'}")
    with pytest.raises(AgentError, match="must be a stable-baselines3 algorithm"):
        load_agent(f"sb3:NotAnAlgorithm:{tmp_path / 'cartpole.zip'}")
