"""A saved stable-baselines3 model as the runner's batched agent: read, loaded, checked, played.

The model is real (PPO's CnnPolicy, trained for 128 steps on the standard observation), and so
are the environments; nothing of SB3 or torch is stood in for.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import warnings
import zipfile

import gymnasium as gym
import numpy as np
import pytest
import torch
from log_helpers import played, records
from stable_baselines3 import PPO
from testdata import DATA
from torch_helpers import one_torch_thread  # noqa: F401 - a module fixture

from arcadebench.benchmarks.runner.reference import resolve_agent
from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env
from arcadebench.benchmarks.training.sb3_policy import SB3_KIND, SB3Policy
from arcadebench.cli import main
from arcadebench.errors import IncompatibleAgent
from arcadebench.specs import load_spec

SPEC = str(DATA / "specs" / "run_budget.yaml")  # 18 actions, episodes capped at 2,000 frames


@pytest.fixture(scope="module")
def model_zip(tmp_path_factory):
    """A PPO model of the 18 actions, trained for 128 steps on the standard observation."""
    envs = make_sb3_vec_env(SPEC, "breakout", 2, log_dir=False)
    model = PPO("CnnPolicy", envs, n_steps=64, batch_size=64, n_epochs=1, device="cpu", seed=0)
    model.learn(total_timesteps=128)
    envs.close()
    path = tmp_path_factory.mktemp("models") / "ppo_tiny.zip"
    model.save(path)
    return path


@pytest.fixture(scope="module")
def observations():
    """Eight real standard observations of Pong, a few steps into their episodes."""
    envs = make_sb3_vec_env(SPEC, "pong", 8, log_dir=False)
    envs.seed(3)
    obs = envs.reset()
    for _ in range(60):
        obs, *_ = envs.step(np.arange(8) % 6)
    envs.close()
    return obs


def test_a_saved_model_is_read_without_its_framework(model_zip):
    code = (
        "import sys; from arcadebench.benchmarks.runner.reference import resolve_agent; "
        "from arcadebench.specs import load_spec; "
        f"a = resolve_agent('sb3:PPO:{model_zip}', load_spec('{SPEC}')); "
        "print('torch' in sys.modules, 'stable_baselines3' in sys.modules, "
        "a.observation_space.shape, a.action_space.n, dict(a.env_kwargs), a.name)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "False",
        "False",
        "(4,",
        "84,",
        "84)",
        "18",
        "{'obs_type':",
        "'standard'}",
        "ppo_tiny",
    ]
    ref = resolve_agent(f"sb3:PPO:{model_zip}", load_spec(SPEC))
    assert (ref.kind, ref.framework, ref.batched, ref.shared) == ("saved", "torch", True, True)
    without_zip = resolve_agent(f"sb3:PPO:{str(model_zip).removesuffix('.zip')}", load_spec(SPEC))
    assert without_zip.name == "ppo_tiny"  # SB3's own save name, as PPO.load takes it


def test_greedy_batches_are_the_models_own_actions(model_zip, observations):
    agent = SB3_KIND.read(f"sb3:PPO:{model_zip}", "cpu")
    assert isinstance(agent, SB3Policy) and agent.deterministic
    agent.load(threads=1)
    rngs = [np.random.default_rng(i) for i in range(8)]
    expected, _ = PPO.load(model_zip, device="cpu").predict(observations, deterministic=True)
    assert agent.act_batch(observations, rngs).tolist() == expected.tolist()
    assert agent._policy.optimizer.__class__.__name__ == "_NoOptimizer"  # no torch optimizer


def test_sampled_actions_of_a_row_do_not_depend_on_the_batch(model_zip, observations):
    agent = SB3_KIND.read(f"sb3:PPO:{model_zip}:stochastic", "cpu")
    assert not agent.deterministic
    together = agent.act_batch(observations[:5], [np.random.default_rng(i) for i in range(5)])
    alone = [
        int(agent.act_batch(observations[i : i + 1], [np.random.default_rng(i)])[0])
        for i in range(5)
    ]
    assert together.tolist() == alone
    # the draws follow the policy's distribution (inverse CDF of its probabilities)
    policy = agent._policy
    with torch.no_grad():
        probs = policy.get_distribution(policy.obs_to_tensor(observations[:1])[0])
        probs = probs.distribution.probs[0].numpy()
    rng = np.random.default_rng(0)
    draws = [int(agent.act_batch(observations[:1], [rng])[0]) for _ in range(400)]
    counts = np.bincount(draws, minlength=18) / 400
    assert np.abs(counts - probs).max() < 0.1


def test_bad_models_are_one_line_errors(tmp_path, model_zip):
    def refused(text, match):
        with pytest.raises(IncompatibleAgent, match=match) as error:
            agent = SB3_KIND.read(text, "cpu")
            agent.load()
        assert "\n" not in str(error.value)

    refused(f"sb3:PPO:{tmp_path / 'missing.zip'}", re.escape("must be a saved stable-baselines3"))
    refused("sb3:PPO", "must be sb3:<Algorithm>:<model.zip>")
    refused("sb3:ppo", "did you mean sb3:PPO:<model.zip>")
    (tmp_path / "garbage.zip").write_bytes(b"not a zip")
    refused(f"sb3:PPO:{tmp_path / 'garbage.zip'}", "is not a stable-baselines3 model.*BadZipFile")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("data", "{}")
    refused(f"sb3:PPO:{tmp_path / 'other.zip'}", "KeyError.*policy.pth")
    cartpole = PPO("MlpPolicy", gym.make("CartPole-v1"), n_steps=32, batch_size=32, device="cpu")
    cartpole.save(tmp_path / "cartpole.zip")
    refused(f"sb3:PPO:{tmp_path / 'cartpole.zip'}", r"expects observations of shape \(4,\)")
    refused(f"sb3:NotAnAlgorithm:{model_zip}", "`algorithm` must be a stable-baselines3 alg")
    refused(
        f"sb3:DQN:{model_zip}",
        "holds a policy of class ActorCriticCnnPolicy, which DQN does not train "
        r"\(PPO and A2C do\); pass the algorithm that saved it, e.g. sb3:PPO:",
    )
    with pytest.raises(IncompatibleAgent, match="`device` must be a device torch can use here"):
        SB3Policy("PPO", model_zip, device="cuda").load()


def run(tmp_path, *arguments, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = main(["run", *arguments, "--out", str(tmp_path), "--progress", "off"])
    return status, capsys.readouterr()


def test_arcadebench_run_evaluates_a_saved_model(tmp_path, model_zip, capsys):
    status, out = run(
        tmp_path, SPEC, "--games", "pong", "--agent", f"sb3:PPO:{model_zip}", "--episodes", "3",
        "--envs", "2", "--reps", "0", capsys=capsys,
    )  # fmt: skip
    assert status == 0, out.err
    results = json.loads((tmp_path / "results.json").read_text())
    assert list(results["algorithms"]) == ["ppo_tiny [frozen policy]"]  # run budget: training
    log = tmp_path / "ppo_tiny" / "runbudget" / "pong" / "0.jsonl"
    header = records(log)[0]
    assert header["settings"]["frameskip"] == 4 and header["algorithm"] == "ppo_tiny"
    assert [e[0] for e in played(tmp_path)[("pong", "0")]] == [0, 1, 2]


def test_a_model_of_another_class_is_refused_in_one_line(tmp_path, model_zip, capsys):
    status, out = run(
        tmp_path, SPEC, "--games", "pong", "--agent", f"sb3:DQN:{model_zip}", "--episodes", "1",
        capsys=capsys,
    )  # fmt: skip
    assert status == 2
    (line,) = out.err.strip().splitlines()
    assert "holds a policy of class ActorCriticCnnPolicy, which DQN does not train" in line
    assert "Traceback" not in out.err and not list(tmp_path.rglob("*.jsonl"))


def test_a_model_of_another_action_set_is_refused_or_mapped_by_meaning(tmp_path, model_zip, capsys):
    """Atari 100k plays Pong's 6 minimal actions; the model chooses among all 18."""
    agent = f"sb3:PPO:{model_zip}"
    args = ("atari100k", "--games", "Pong", "--agent", agent, "--episodes", "1", "--reps", "0")
    status, out = run(tmp_path / "refused", *args, capsys=capsys)
    assert status == 2
    (line,) = out.err.strip().splitlines()
    assert (
        "ppo_tiny chooses among 18 actions, but the atari100k environment of pong has 6 actions "
        "(its minimal action set): train it under the protocol's action set, or evaluate it with "
        "--map-actions to play its actions by their ALE meanings" in line
    )
    assert not (tmp_path / "refused").exists()  # refused before anything was played
    status, out = run(tmp_path / "mapped", *args, "--map-actions", capsys=capsys)
    assert status == 0, out.err
    log = tmp_path / "mapped" / "ppo_tiny" / "atari100k" / "pong" / "0.eval.jsonl"
    header = records(log)[0]
    assert header["settings"]["full_action_space"] is True
    assert header["deviations"] == {"full_action_space": {"spec": False, "used": True}}
    assert "ppo_tiny [full_action_space=True]" in out.out  # scored apart from compliant runs
