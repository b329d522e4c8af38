"""A learning agent for the runner: `act(obs)` chooses, `observe(...)` learns from every step.

    python examples/learning_agent.py --episodes 3

The runner gives every (game, seed) job a fresh agent (the class is the factory; it may ask for
`action_space`, `observation_space`, `spec`, `game` or `seed`), calls `reset_level(game)` when
the job starts and `seed(s)` before every episode, then per step `act(obs)` and
`observe(next_obs, reward, terminated, truncated, info)`. Rewards are the protocol's; clip or
shape them inside the agent if you like, the logged return is unaffected.

This one is an epsilon-greedy bandit over the actions: it learns which action earns most reward
per step. Not a good Atari agent, but it learns, it is seeded, and it runs in seconds.
From the command line: `arcadebench run atari5 --agent learning_agent:BanditAgent --episodes 3`
(run from this directory, or with it on PYTHONPATH).
"""

from __future__ import annotations

import argparse
from typing import Any

import gymnasium as gym
import numpy as np

import arcadebench


class BanditAgent:
    """Epsilon-greedy action values from per-step rewards (sign-clipped, as DQN clips)."""

    def __init__(self, action_space: gym.spaces.Discrete, game: str, epsilon: float = 0.1) -> None:
        self.n = int(action_space.n)
        self.game = game
        self.epsilon = epsilon
        self.values = np.zeros(self.n)
        self.counts = np.zeros(self.n)
        self.rng = np.random.default_rng(0)
        self.last_action = 0

    def reset_level(self, level: str) -> None:
        """A new game or level: forget what was learnt (Sonic's per-test-level reset)."""
        self.values[:] = 0.0
        self.counts[:] = 0

    def seed(self, seed: int) -> None:
        """Called before every episode with a seed derived from (job seed, episode)."""
        self.rng = np.random.default_rng(seed)

    def act(self, obs: Any) -> int:
        if self.rng.random() < self.epsilon:
            self.last_action = int(self.rng.integers(self.n))
        else:
            best = np.flatnonzero(self.values == self.values.max())
            self.last_action = int(self.rng.choice(best))
        return self.last_action

    def observe(
        self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        a = self.last_action
        self.counts[a] += 1
        self.values[a] += (np.sign(reward) - self.values[a]) / self.counts[a]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=["breakout", "phoenix"])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--out", default="results/learning_agent")
    args = parser.parse_args()
    results = arcadebench.evaluate(
        BanditAgent, "atari5", args.games, episodes=args.episodes, workers=2, log_dir=args.out
    )
    print(results.table())


if __name__ == "__main__":  # required: worker processes import this file
    main()
