"""Every kind of agent resolved once at the door, and played through the runner's one interface.

Driven on a real emulator in-process: each agent is resolved (:func:`resolve_agent`), loaded as a
worker loads it, and its job's object played through an :class:`Actor`.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

from arcadebench.benchmarks.runner.agents import Actor, NoopAgent, RandomAgent
from arcadebench.benchmarks.runner.reference import agent_name, resolve_agent
from arcadebench.errors import ArcadebenchError
from arcadebench.specs import load_spec

ATARI5 = load_spec("atari5")


@pytest.fixture(scope="module")
def env():
    env = gym.make("arcadebench/Atari5-Qbert-v0")
    yield env
    env.close()


def actor_of(agent, env, seed=0):
    """The actor a worker makes for a job of ``agent`` on ``env``."""
    loaded = resolve_agent(agent, ATARI5).load()
    obj = loaded.make(
        action_space=env.action_space,
        observation_space=env.observation_space,
        spec=ATARI5,
        game="qbert",
        seed=seed,
    )
    return Actor(obj, "qbert", seed)


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
    first = run_episode(actor_of("random", env), env, seed=11)
    again = run_episode(actor_of("random", env), env, seed=11)
    other = run_episode(actor_of("random", env), env, seed=12)
    assert first == again != other
    assert set(first) <= set(range(18)) and len(set(first)) > 5


def test_builtin_noop_always_plays_action_zero(env):
    assert set(run_episode(actor_of("noop", env), env)) == {0}
    assert NoopAgent(gym.spaces.Discrete(4)).act(None) == 0


def test_a_callable_is_a_policy(env):
    assert set(run_episode(actor_of(always_three, env), env)) == {3}


def test_an_object_with_predict_is_used_sb3_style(env):
    assert set(run_episode(actor_of(Predictor(), env), env)) == {5}


def test_a_learning_agent_acts_observes_and_is_reset_per_level(env):
    actor = actor_of(Learner, env, 7)  # a class is a factory: a fresh agent per job
    agent = actor.agent
    assert agent.levels == ["qbert"] and agent.game == "qbert"
    actions = run_episode(actor, env, seed=4, max_steps=40)
    assert agent.seen == len(actions) == 40 and actions[:3] == [0, 1, 2]
    assert agent.seeds == [4]


def test_a_zero_argument_function_is_a_factory(env):
    actor = actor_of(make_learner, env)
    assert isinstance(actor.agent, Learner) and actor.observe is not None


def test_module_attr_paths_resolve():
    ref = resolve_agent("arcadebench.benchmarks.runner.agents:RandomAgent", ATARI5)
    assert (ref.kind, ref.name, ref.reference) == ("module", ref.reference, ref.reference)
    assert ref.load().obj is RandomAgent
    assert resolve_agent("random", ATARI5).kind == "builtin"
    with pytest.raises(
        ArcadebenchError,
        match="`agent` must be 'random', 'noop', 'jerk', a saved policy .* or 'module:attr'"
        ".*got 'nonsense'",
    ):
        resolve_agent("nonsense", ATARI5)
    with pytest.raises(ArcadebenchError, match="got 'randon'. Did you mean: 'random'"):
        resolve_agent("randon", ATARI5)
    with pytest.raises(ArcadebenchError, match="cannot import agent module 'no_such_module'"):
        resolve_agent("no_such_module:Agent", ATARI5)
    with pytest.raises(
        ArcadebenchError,
        match="module 'arcadebench.benchmarks.runner.agents' has no attribute 'Nope'",
    ):
        resolve_agent("arcadebench.benchmarks.runner.agents:Nope", ATARI5)


def test_agents_must_be_picklable_for_worker_processes():
    assert resolve_agent(Learner, ATARI5).payload is not None
    with pytest.raises(
        ArcadebenchError, match="must be picklable to run in worker processes.*lambda"
    ):
        resolve_agent(lambda obs: 0, ATARI5)
    with pytest.raises(
        ArcadebenchError,
        match="`agent` must be 'random', 'noop', 'jerk', a saved policy, 'module:attr', a factory",
    ):
        resolve_agent(42, ATARI5)


def test_the_reference_says_what_the_agent_is_once():
    random, learner = resolve_agent("random", ATARI5), resolve_agent(Learner, ATARI5)
    assert (random.batched, random.learns, random.shared, random.by_name) == (
        True,
        False,
        False,
        True,
    )
    assert (learner.batched, learner.learns, learner.shared, learner.by_name) == (
        False,
        True,
        False,
        False,
    )
    shared = resolve_agent(Predictor(), ATARI5)  # an object that does not learn: one copy
    loaded = shared.load()
    job = {"action_space": None, "observation_space": None, "spec": ATARI5, "game": "q", "seed": 0}
    assert shared.shared and loaded.make(**job) is loaded.make(**job) is loaded.obj
    learning = resolve_agent(make_learner(), ATARI5).load()  # a learner: a fresh copy per job
    made = [
        learning.make(action_space=None, observation_space=None, spec=ATARI5, game="q", seed=0)
        for _ in range(2)
    ]
    assert made[0] is not made[1] and isinstance(made[0], Learner)


def test_agents_declare_what_they_need_from_the_environment():
    assert resolve_agent("random", ATARI5).env_kwargs == {}
    assert resolve_agent(NeedsKwargs, ATARI5).env_kwargs == {"obs_type": "grayscale"}
    assert resolve_agent(NeedsButtons, load_spec("sonic")).env_kwargs == {"action_set": "buttons"}
    assert resolve_agent("jerk", load_spec("sonic")).env_kwargs == {"action_set": "buttons"}
    with pytest.raises(
        ArcadebenchError, match="needs action_set='buttons', which only retro protocols have"
    ):
        resolve_agent(NeedsButtons, ATARI5)


def test_agent_names_identify_them():
    assert resolve_agent("random", ATARI5).name == "random"
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
