"""Agents for the runner tests, importable by worker processes (``runner_agents:<Name>``).

Each plays like the built-in random agent (same seeded draws, so episodes match ``random``'s)
and misbehaves where told: raises, hangs, or kills its own process (a stand-in for an emulator
crash or the OOM killer).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import time

import ale_py.env
import gymnasium as gym

from arcadebench.benchmarks.runner.agents import RandomAgent
from arcadebench.records import episode_seeds

__all__ = [
    "BatchedHangingAgent",
    "BatchedKilledAgent",
    "BatchedRaisingAgent",
    "CrashingAgent",
    "Declares18",
    "HangingAgent",
    "KilledAgent",
    "LearningAgent",
    "OutOfRange",
    "RaisingAgent",
    "SlowRandom",
]


class _Counting(RandomAgent):
    """Random agent that knows its episode in the job (``seed`` is called once an episode).

    It answers one observation at a time (no ``act_batch``), so the runner plays each of its
    jobs whole, one episode after the other.
    """

    fail_game = "phoenix"
    fail_episode = 2  # 0-based, as in the log: the 3rd episode
    act_batch = None

    def __init__(self, action_space, game):
        super().__init__(action_space)
        self.game = game
        self.episode = -1
        self.steps = 0

    def seed(self, seed):
        super().seed(seed)
        self.episode += 1
        self.steps = 0

    def act(self, obs):
        self.steps += 1
        if self.game == self.fail_game and self.episode == self.fail_episode and self.steps == 10:
            self.misbehave()
        return super().act(obs)

    def misbehave(self):
        raise NotImplementedError


class RaisingAgent(_Counting):
    """Raises ValueError at step 10 of episode 2 of phoenix."""

    def misbehave(self):
        raise ValueError("boom")


class HangingAgent(_Counting):
    """Hangs (sleeps for an hour) at step 10 of episode 2 of phoenix."""

    def misbehave(self):
        time.sleep(3600)


class KilledAgent(_Counting):
    """Its process is SIGKILLed at step 10 of episode 2 of phoenix (like the OOM killer)."""

    def misbehave(self):
        os.kill(os.getpid(), signal.SIGKILL)


class CrashingAgent(_Counting):
    """Its process segfaults at step 10 of episode 2 of phoenix (like an emulator crash)."""

    def misbehave(self):
        faulthandler._sigsegv()


class _BatchedCounting(RandomAgent):
    """The batched random agent, which misbehaves in the batch holding episode 2 of phoenix.

    It finds that episode by its row's generator, seeded for it by the runner (so it plays its
    jobs in lanes, several episodes at once).
    """

    fail_game = "phoenix"
    fail_episode = 2

    def __init__(self, action_space, game, seed):
        super().__init__(action_space)
        self.game = game
        self.target = episode_seeds(seed, self.fail_episode)[1] if game == self.fail_game else None
        self.steps = {}

    def act_batch(self, obs, rngs):
        for rng in rngs:
            entropy = rng.bit_generator.seed_seq.entropy
            self.steps[entropy] = self.steps.get(entropy, 0) + 1
            if entropy == self.target and self.steps[entropy] == 10:
                self.misbehave()
        return super().act_batch(obs, rngs)

    def misbehave(self):
        raise NotImplementedError


class BatchedRaisingAgent(_BatchedCounting):
    """Raises ValueError at step 10 of episode 2 of phoenix, in a batch."""

    def misbehave(self):
        raise ValueError("boom")


class BatchedKilledAgent(_BatchedCounting):
    """Its process is SIGKILLed at step 10 of episode 2 of phoenix, in a batch."""

    def misbehave(self):
        os.kill(os.getpid(), signal.SIGKILL)


class BatchedHangingAgent(_BatchedCounting):
    """Hangs (sleeps for an hour) at step 10 of episode 2 of phoenix, in a batch."""

    def misbehave(self):
        time.sleep(3600)


class OutOfRange:
    """A batched policy that always chooses action 17: a model of ALE's 18 actions."""

    def act_batch(self, obs):
        return [17] * len(obs)


class Declares18(RandomAgent):
    """Says it chooses among the 18 actions (class attribute), as a trained model would."""

    act_batch = None

    def __init__(self, action_space):
        super().__init__(action_space)
        self.action_space = gym.spaces.Discrete(18)


class SlowRandom(RandomAgent):
    """The random agent, 1 ms per step: runs long enough to be interrupted mid-way."""

    act_batch = None  # one observation at a time: its jobs are played whole

    def __init__(self, action_space):
        super().__init__(action_space)

    def act(self, obs):
        time.sleep(0.001)
        return super().act(obs)


class LearningAgent:
    """A minimal act/observe agent: counts what it observed, acts randomly, writes nothing."""

    def __init__(self, action_space):
        self.inner = RandomAgent(action_space)
        self.observed = 0
        self.level = None

    def reset_level(self, level):
        self.level = level

    def seed(self, seed):
        self.inner.seed(seed)

    def act(self, obs):
        return self.inner.act(obs)

    def observe(self, obs, reward, terminated, truncated, info):
        self.observed += 1


class EvaluatingLearner(LearningAgent):
    """A learner with an evaluation policy: it stops exploring and says so."""

    def __init__(self, action_space):
        super().__init__(action_space)
        self.evaluating = False

    def evaluation(self):
        self.evaluating = True
        return f"greedy after {self.observed} observed steps"

    def observe(self, obs, reward, terminated, truncated, info):
        assert not self.evaluating, "an evaluation episode was observed"
        super().observe(obs, reward, terminated, truncated, info)


def _emulator_fault(*args, **kwargs):
    raise RuntimeError("emulator fault")


class BreakingEmulator(_Counting):
    """At step 10 of episode 2 of phoenix, the emulator's step starts raising (a fault)."""

    def misbehave(self):
        ale_py.env.AtariEnv.step = _emulator_fault


class BreakingEmulatorInBatches:
    """A batched policy (action 0) under which the emulator's step raises from the 10th batch."""

    def __init__(self):
        self.batches = 0

    def act_batch(self, obs):
        self.batches += 1
        if self.batches == 10:
            ale_py.env.AtariEnv.step = _emulator_fault
        return [0] * len(obs)
