"""JERK: the act/observe port against a line-by-line transcription of retro-baselines'
``jerk_agent.py`` (same generator, same draws) on a scripted level, and each rule by hand."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest

from arcadebench.benchmarks.runner.jerk import JerkAgent
from arcadebench.errors import InvalidArgument

B, LEFT, RIGHT = 0, 6, 7
BUTTONS = gym.spaces.MultiBinary(12)


class ScriptedLevel(gym.Env):
    """A deterministic side-scroller: RIGHT/LEFT move 1 px, B (a jump) 1 px more; a wall at
    x = 40 stops a run without a jump (reward -0.5); after step 100 of an episode every step
    costs 1 (a flood: right moves earn nothing, so JERK backtracks). Episode ``k`` ends at step
    ``60 + 37 k mod 250``, or when x reaches 300."""

    observation_space = gym.spaces.Discrete(1)
    action_space = BUTTONS

    def __init__(self):
        self.episode = -1

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.episode += 1
        self.x, self.t = 0, 0
        self.end = 60 + (37 * self.episode) % 250
        return 0, {}

    def step(self, action):
        self.t += 1
        move = int(action[RIGHT]) - int(action[LEFT])
        move *= 2 if action[B] else 1
        before = self.x
        if move > 0 and self.x < 40 <= self.x + move and not action[B]:
            reward = -0.5
        else:
            self.x = max(0, self.x + move)
            reward = float(self.x - before)
        if self.t > 100:
            reward = -1.0
        done = self.t >= self.end or self.x >= 300
        return 0, reward, done, False, {}


class Budget(Exception):
    """The step budget ran out (retro-contest's TimestepTimeoutError)."""


class TrackedEnv(gym.Wrapper):
    """retro-baselines' TrackedEnv, stopping at ``limit`` steps."""

    def __init__(self, env, limit, log):
        super().__init__(env)
        self.action_history, self.reward_history = [], []
        self.total_reward, self.total_steps_ever = 0, 0
        self.limit, self.log = limit, log

    def best_sequence(self):
        max_cumulative = max(self.reward_history)
        for i, rew in enumerate(self.reward_history):
            if rew == max_cumulative:
                return self.action_history[: i + 1]
        raise RuntimeError("unreachable")

    def reset(self, **kwargs):
        self.action_history, self.reward_history, self.total_reward = [], [], 0
        return self.env.reset(**kwargs)

    def step(self, action):
        if self.total_steps_ever >= self.limit:
            raise Budget
        self.total_steps_ever += 1
        self.action_history.append(action.copy())
        self.log.append(action.astype(np.uint8).copy())
        obs, rew, done, _, info = self.env.step(action)
        self.total_reward += rew
        self.reward_history.append(self.total_reward)
        return obs, rew, done, info


def reference_jerk(env, rng, limit):
    """``main``, ``move`` and ``exploit`` of jerk_agent.py, with ``random.random`` -> ``rng``."""
    log, solutions = [], []
    env = TrackedEnv(env, limit, log)

    def move(num_steps, left=False, jump_prob=1.0 / 10.0, jump_repeat=4):
        total_rew, done, steps_taken, jumping_steps_left = 0.0, False, 0, 0
        while not done and steps_taken < num_steps:
            action = np.zeros((12,), dtype=bool)
            action[6] = left
            action[7] = not left
            if jumping_steps_left > 0:
                action[0] = True
                jumping_steps_left -= 1
            else:
                if rng.random() < jump_prob:
                    jumping_steps_left = jump_repeat - 1
                    action[0] = True
            _, rew, done, _ = env.step(action)
            total_rew += rew
            steps_taken += 1
            if done:
                break
        return total_rew, done

    def exploit(sequence):
        env.reset()
        done, idx = False, 0
        while not done:
            if idx >= len(sequence):
                _, _, done, _ = env.step(np.zeros((12,), dtype="bool"))
            else:
                _, _, done, _ = env.step(sequence[idx])
            idx += 1
        return env.total_reward

    try:
        new_ep = True
        while True:
            if new_ep:
                if solutions and rng.random() < 0.25 + env.total_steps_ever / 1e6:
                    solutions = sorted(solutions, key=lambda x: np.mean(x[0]))
                    best_pair = solutions[-1]
                    new_rew = exploit(best_pair[1])
                    best_pair[0].append(new_rew)
                    continue
                env.reset()
                new_ep = False
            rew, new_ep = move(100)
            if not new_ep and rew <= 0:
                _, new_ep = move(70, left=True)
            if new_ep:
                solutions.append(([max(env.reward_history)], env.best_sequence()))
    except Budget:
        return log, solutions


def play(agent, env, limit):
    """The runner's loop, without seeding: act, step, observe, until ``limit`` steps."""
    actions, steps = [], 0
    while steps < limit:
        obs, _ = env.reset()
        done = False
        while not done and steps < limit:
            action = agent.act(obs)
            actions.append(action.copy())
            obs, reward, terminated, truncated, info = env.step(action)
            agent.observe(obs, reward, terminated, truncated, info)
            done = terminated or truncated
            steps += 1
    return actions


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_port_plays_exactly_what_the_original_plays(seed):
    limit = 30_000
    expected, solutions = reference_jerk(ScriptedLevel(), np.random.default_rng(seed), limit)
    agent = JerkAgent(BUTTONS, seed=seed)
    actions = play(agent, ScriptedLevel(), limit)
    assert len(actions) == len(expected) == limit
    assert all(np.array_equal(a, e) for a, e in zip(actions, expected, strict=True))
    # the same solutions, scores and replays, in the same (last sorted) order; the episode cut
    # by the budget is stored by neither
    ours = [(rewards, len(seq)) for rewards, seq in agent.solutions]
    theirs = [(rewards, len(seq)) for rewards, seq in solutions]
    assert ours == theirs
    assert any(len(r) > 1 for r, _ in theirs)  # solutions were replayed
    lefts = sum(int(a[LEFT]) for a in actions)
    assert lefts > 0  # and it backtracked


def test_explore_runs_right_and_backtracks_left_when_a_run_earned_nothing():
    agent = JerkAgent(BUTTONS, explore_steps=3, backtrack_steps=2, jump_probability=0.0)
    moves = []
    for reward in [0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0]:
        action = agent.act(None)
        assert action[B] == 0
        moves.append("R" if action[RIGHT] else "L" if action[LEFT] else "?")
        agent.observe(None, reward, False, False, {})
    # 3 right (sum 0) -> 2 left -> 3 right (sum 3 > 0) -> right again
    assert "".join(moves) == "RRRLLRRRR"


def test_a_jump_holds_b_for_jump_repeat_steps():
    agent = JerkAgent(BUTTONS, jump_probability=1.0, jump_repeat=4)
    pressed = []
    for _ in range(12):
        pressed.append(int(agent.act(None)[B]))
        agent.observe(None, 1.0, False, False, {})
    assert pressed == [1] * 12
    agent = JerkAgent(BUTTONS, seed=3, jump_probability=0.1, jump_repeat=4)
    presses = []
    for _ in range(400):
        presses.append(int(agent.act(None)[B]))
        agent.observe(None, 1.0, False, False, {})
    runs = [len(run) for run in "".join(map(str, presses[:-4])).split("0") if run]
    assert runs and all(length % 4 == 0 for length in runs)  # B is held 4 steps (or 8, ...)


def test_the_solution_is_the_prefix_up_to_the_first_peak_and_exploit_replays_it():
    agent = JerkAgent(BUTTONS, explore_steps=100, jump_probability=0.0, exploit_bias=1.0)
    for i, reward in enumerate([1.0, 2.0, -5.0, 2.0]):
        agent.act(None)
        agent.observe(None, reward, False, i == 3, {})  # cumulative 1, 3, -2, 0
    assert [(r, len(seq)) for r, seq in agent.solutions] == [([3.0], 2)]
    replay = [agent.act(None) for _ in range(1)]
    agent.observe(None, 4.0, False, False, {})
    replay += [agent.act(None) for _ in range(1)]
    agent.observe(None, 1.0, False, False, {})
    replay.append(agent.act(None))
    agent.observe(None, 0.0, True, False, {})
    assert [a.tolist() for a in replay[:2]] == [[0] * 7 + [1] + [0] * 4] * 2  # the stored RIGHTs
    assert replay[2].tolist() == [0] * 12  # then released buttons
    assert agent.solutions[0][0] == [3.0, 5.0]  # the replay's return joins its rewards


def test_exploit_picks_the_best_mean_and_grows_with_the_steps():
    agent = JerkAgent(BUTTONS, jump_probability=0.0, exploit_bias=1.0)
    right = np.zeros(12, np.uint8)
    right[RIGHT] = 1
    left = np.zeros(12, np.uint8)
    left[LEFT] = 1
    agent.solutions = [([5.0, 1.0], [left]), ([4.0], [right]), ([2.0, 2.5], [left])]
    assert agent.act(None).tolist() == right.tolist()  # best mean: 4.0
    never = JerkAgent(BUTTONS, exploit_bias=-1.0, horizon_steps=10)
    never.solutions = [([1.0], [left])]
    never.total_steps = 5  # -1 + 5/10 < 0: always explore
    assert never.act(None)[RIGHT] == 1
    always = JerkAgent(BUTTONS, exploit_bias=-1.0, horizon_steps=10)
    always.solutions = [([1.0], [left])]
    always.total_steps = 20  # -1 + 20/10 >= 1: always exploit
    assert always.act(None)[LEFT] == 1


def test_seeded_and_reset_level_forgets():
    first = play(JerkAgent(BUTTONS, seed=5), ScriptedLevel(), 2000)
    again = play(JerkAgent(BUTTONS, seed=5), ScriptedLevel(), 2000)
    other = play(JerkAgent(BUTTONS, seed=6), ScriptedLevel(), 2000)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other, strict=True))
    agent = JerkAgent(BUTTONS, seed=5)
    play(agent, ScriptedLevel(), 2000)
    assert agent.solutions and agent.total_steps == 2000
    agent.reset_level("next")
    assert agent.solutions == [] and agent.total_steps == 0
    agent.seed(1)
    assert np.array_equal(agent.act(None), JerkAgent(BUTTONS, seed=1).act(None))


def test_bad_arguments_are_one_line():
    with pytest.raises(
        InvalidArgument,
        match=re.escape(
            "`action_space` must be MultiBinary(12), the raw Genesis buttons (make the env with "
            "action_set='buttons'), got Discrete(8)"
        ),
    ):
        JerkAgent(gym.spaces.Discrete(8))
    with pytest.raises(
        InvalidArgument,
        match=re.escape("`jump_probability` must be a probability in [0, 1], got 1.5"),
    ):
        JerkAgent(BUTTONS, jump_probability=1.5)
    assert JerkAgent.action_set == "buttons"
