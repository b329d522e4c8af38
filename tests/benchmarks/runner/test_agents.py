"""Every kind of agent behind the runner's one interface, driven on a real emulator in-process."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from arcadebench.benchmarks.runner.agents import (
    Actor,
    NoopAgent,
    RandomAgent,
    agent_env_kwargs,
    agent_name,
    check_agent,
    load_agent,
)
from arcadebench.errors import ArcadebenchError
from arcadebench.specs import load_spec

ATARI5 = load_spec("atari5")


@pytest.fixture(scope="module")
def env():
    env = gym.make("arcadebench/Atari5-Qbert-v0")
    yield env
    env.close()


def run_episode(actor, env, seed=0, max_steps=60):
    actor.begin_episode(seed)
    obs, _ = env.reset(seed=seed)
    actions = []
    for _ in range(max_steps):
        action = actor.act(obs)
        actions.append(int(action))
        obs, reward, terminated, truncated, info = env.step(action)
        if actor.observe is not None:
            actor.observe(obs, reward, terminated, truncated, info)
        if terminated or truncated:
            break
    return actions


def always_three(obs):
    return 3


class Predictor:
    def predict(self, obs, state=None, episode_start=None, deterministic=False):
        return 5, None


class Learner:
    def __init__(self, action_space, game):
        self.n, self.game = int(action_space.n), game
        self.seen, self.rewards, self.levels, self.seeds = 0, 0.0, [], []

    def reset_level(self, level):
        self.levels.append(level)

    def seed(self, seed):
        self.seeds.append(seed)

    def act(self, obs):
        return self.seen % self.n

    def observe(self, obs, reward, terminated, truncated, info):
        assert obs.shape == (210, 160, 3) and isinstance(info, dict)
        self.seen += 1
        self.rewards += reward


def make_learner():
    return Learner(gym.spaces.Discrete(18), "qbert")


class NeedsButtons(RandomAgent):
    action_set = "buttons"


class NeedsKwargs(RandomAgent):
    env_kwargs = {"obs_type": "grayscale"}


def test_builtin_random_is_seeded_per_episode(env):
    first = run_episode(Actor("random", env, ATARI5, "qbert", 0), env, seed=11)
    again = run_episode(Actor("random", env, ATARI5, "qbert", 0), env, seed=11)
    other = run_episode(Actor("random", env, ATARI5, "qbert", 0), env, seed=12)
    assert first == again != other
    assert set(first) <= set(range(18)) and len(set(first)) > 5


def test_builtin_noop_always_plays_action_zero(env):
    assert set(run_episode(Actor("noop", env, ATARI5, "qbert", 0), env)) == {0}
    assert NoopAgent(gym.spaces.Discrete(4)).act(None) == 0


def test_a_callable_is_a_policy(env):
    assert set(run_episode(Actor(always_three, env, ATARI5, "qbert", 0), env)) == {3}


def test_an_object_with_predict_is_used_sb3_style(env):
    assert set(run_episode(Actor(Predictor(), env, ATARI5, "qbert", 0), env)) == {5}


def test_a_learning_agent_acts_observes_and_is_reset_per_level(env):
    actor = Actor(Learner, env, ATARI5, "qbert", 7)  # a class is a factory: a fresh agent per job
    agent = actor.agent
    assert agent.levels == ["qbert"] and agent.game == "qbert"
    actions = run_episode(actor, env, seed=4, max_steps=40)
    assert agent.seen == len(actions) == 40 and actions[:3] == [0, 1, 2]
    assert agent.seeds == [4]


def test_a_zero_argument_function_is_a_factory(env):
    actor = Actor(make_learner, env, ATARI5, "qbert", 0)
    assert isinstance(actor.agent, Learner) and actor.observe is not None


def test_module_attr_paths_resolve():
    assert load_agent("arcadebench.benchmarks.runner.agents:RandomAgent") is RandomAgent
    assert load_agent("random") == "random"
    with pytest.raises(
        ArcadebenchError,
        match="`agent` must be 'random', 'noop', 'jerk', a saved model .* or 'module:attr'"
        ".*got 'nonsense'",
    ):
        load_agent("nonsense")
    with pytest.raises(ArcadebenchError, match="got 'randon'. Did you mean: 'random'"):
        load_agent("randon")
    with pytest.raises(ArcadebenchError, match="cannot import agent module 'no_such_module'"):
        load_agent("no_such_module:Agent")
    with pytest.raises(
        ArcadebenchError,
        match="module 'arcadebench.benchmarks.runner.agents' has no attribute 'Nope'",
    ):
        load_agent("arcadebench.benchmarks.runner.agents:Nope")


def test_agents_must_be_picklable_for_worker_processes():
    assert check_agent("random") == "random"
    assert check_agent(Learner) is Learner
    with pytest.raises(
        ArcadebenchError, match="must be picklable to run in worker processes.*lambda"
    ):
        check_agent(lambda obs: 0)
    with pytest.raises(
        ArcadebenchError,
        match="`agent` must be 'random', 'noop', 'jerk', a saved model, 'module:attr', a factory",
    ):
        check_agent(42)


def test_agents_declare_what_they_need_from_the_environment():
    assert agent_env_kwargs("random", ATARI5) == {}
    assert agent_env_kwargs(NeedsKwargs, ATARI5) == {"obs_type": "grayscale"}
    assert agent_env_kwargs(NeedsButtons, load_spec("sonic")) == {"action_set": "buttons"}
    with pytest.raises(
        ArcadebenchError, match="needs action_set='buttons', which only retro protocols have"
    ):
        agent_env_kwargs(NeedsButtons, ATARI5)


def test_agent_names_identify_them():
    assert agent_name("random") == "random"
    assert agent_name("pkg.mod:Agent") == "pkg.mod:Agent"
    assert (
        agent_name(Learner)
        == agent_name(Learner(gym.spaces.Discrete(2), "x"))
        == "test_agents.Learner"
    )
    assert agent_name(always_three) == "test_agents.always_three"


def test_random_agent_handles_non_discrete_spaces():
    agent = RandomAgent(gym.spaces.MultiBinary(12))
    agent.seed(0)
    assert np.asarray(agent.act(None)).shape == (12,)
