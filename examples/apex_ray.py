"""Ape-X-style distributed Q-learning with plain Ray actors, on any node: one run, one log.

    pip install -e ".[ray]"
    python examples/apex_ray.py --game Pong --frames 1000000 --out results/apex
    python examples/apex_ray.py --game Pong --frames 1000000 --out results/apex \\
        --address <head-ip>:6379 --explorers 16   # on a cluster
    arcadebench score saber results/apex

Ape-X (Horgan et al., 2018) in miniature: explorers, Ray actors placed anywhere on the cluster,
each play one protocol env with an epsilon of their own (``0.4 ** (1 + 7 i / (N - 1))``) and
send their transitions to the learner (this process), which keeps a prioritized replay, learns
a Q-function and sends its parameters with each explorer's next request. The Q-function is
linear in the 128 bytes of the Atari RAM (``--obs-type ram``), so the example needs numpy only;
put your network in ``Learner``.

The protocol side is the run (``arcadebench.benchmarks.training.ray_run``): each explorer's env
comes from ``run.env_creator(...)`` and is a stream of one run whose log, counters and budget
(``--frames``) live in the run's owner on this machine. The frames are the sum over the
explorers, every explorer stops within a few steps of the budget (the monitor ends its episode
with ``end_reason: "budget"``), and an explorer whose node dies is restarted by Ray on another
node (``max_restarts``) as a new stream of the same run: its episode in flight is lost, nothing
is counted twice. If this driver dies, run again with ``--resume`` (the log continues).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import ray

import arcadebench
from arcadebench.benchmarks.training.ray_run import EnvCreator, RayRun
from arcadebench.errors import ArcadebenchError, NoScores

Batch = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def features(ram: np.ndarray) -> np.ndarray:
    """RAM bytes in [0, 1], and a bias."""
    ram = np.atleast_2d(ram).astype(np.float32) / 255.0
    return np.concatenate([ram, np.ones((len(ram), 1), np.float32)], axis=1)


class Explorer:
    """An Ape-X actor: one protocol env of the run, epsilon-greedy on the learner's parameters."""

    def __init__(self, creator: EnvCreator, epsilon: float, seed: int) -> None:
        self.env = creator()  # a new stream of the run, on this actor's node
        self.epsilon = epsilon
        self.rng = np.random.default_rng(seed)
        self.obs, info = self.env.reset(seed=seed)
        self.over = bool(info["arcadebench"].get("budget_exhausted"))  # made after the budget
        space = self.env.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise TypeError(f"a protocol env has discrete actions, got {space}")
        self.actions = int(space.n)

    def explore(self, weights: np.ndarray, steps: int) -> tuple[Batch, bool]:
        """Play up to ``steps`` steps; the transitions, and whether the run's budget is used up."""
        obs, actions, rewards, next_obs, done = [], [], [], [], []
        for _ in range(0 if self.over else steps):
            if self.rng.random() < self.epsilon:
                action = int(self.rng.integers(self.actions))
            else:
                action = int(np.argmax(features(self.obs) @ weights))
            after, reward, terminated, truncated, info = self.env.step(action)
            obs.append(self.obs)
            actions.append(action)
            rewards.append(np.sign(float(reward)))  # for learning; the log keeps the protocol's
            next_obs.append(after)
            done.append(terminated)
            self.obs = after
            if terminated or truncated:
                self.over = info["arcadebench"].get("end_reason") == "budget"
                if not self.over:
                    self.obs, info = self.env.reset()
                    self.over = bool(info["arcadebench"].get("budget_exhausted"))
                if self.over:
                    break
        batch = (np.array(obs), np.array(actions), np.array(rewards), np.array(next_obs))
        return (*batch, np.array(done, dtype=bool)), self.over


class Learner:
    """Double Q-learning with a prioritized replay (proportional, alpha 0.6, beta 0.4)."""

    def __init__(self, actions: int, seed: int, capacity: int = 50_000) -> None:
        self.rng = np.random.default_rng(seed)
        self.weights = np.zeros((129, actions), np.float32)
        self.target = self.weights.copy()
        self.capacity = capacity
        self.data: list[np.ndarray] = []
        self.priority = np.zeros(capacity, np.float64)
        self.size = self.next = self.updates = 0

    def add(self, batch: Batch) -> None:
        obs, actions, rewards, next_obs, done = batch
        if not self.data:
            self.data = [np.zeros((self.capacity, *part.shape[1:]), part.dtype) for part in batch]
        top = self.priority[: self.size].max() if self.size else 1.0
        for i in range(len(obs)):
            for store, part in zip(self.data, (obs, actions, rewards, next_obs, done), strict=True):
                store[self.next] = part[i]
            self.priority[self.next] = top
            self.next = (self.next + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)

    def learn(self, updates: int, batch: int = 64, lr: float = 0.01, gamma: float = 0.99) -> None:
        for _ in range(updates if self.size >= batch else 0):
            p = self.priority[: self.size] ** 0.6
            index = self.rng.choice(self.size, batch, p=p / p.sum())
            obs, actions, rewards, next_obs, done = (part[index] for part in self.data)
            importance = (self.size * p[index] / p.sum()) ** -0.4
            x, x_next = features(obs), features(next_obs)
            best = np.argmax(x_next @ self.weights, axis=1)
            target = rewards + gamma * ~done * (x_next @ self.target)[np.arange(batch), best]
            error = target - (x @ self.weights)[np.arange(batch), actions]
            step = np.zeros_like(self.weights)
            np.add.at(step.T, actions, (importance / importance.max() * error)[:, None] * x)
            self.weights += lr * step / batch
            self.priority[index] = np.abs(error) + 1e-3
            self.updates += 1
            if self.updates % 250 == 0:
                self.target = self.weights.copy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="saber")
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--frames", type=int, default=1_000_000, help="the run's frame budget")
    parser.add_argument("--out", default="results/apex")
    parser.add_argument("--address", default=None, help="a Ray cluster's head (default local)")
    parser.add_argument("--explorers", type=int, default=4)
    parser.add_argument("--steps", type=int, default=100, help="steps per explorer request")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resume", action="store_true", help="continue the run's log")
    args = parser.parse_args()

    ray.init(address=args.address, log_to_driver=False, include_dashboard=False)
    run = RayRun(
        args.spec,
        args.game,
        args.out,
        run=f"apex-seed{args.seed}",
        algorithm="apex-linear",
        budget_frames=args.frames,
        resume=args.resume,
    )
    # a plain loop sees the budget end its episode: no idling needed
    creator = run.env_creator(obs_type="ram", idle_after_budget=False)
    # an explorer whose node dies is made again elsewhere: a new stream of the same run
    remote: Any = ray.remote(num_cpus=1, max_restarts=-1)(Explorer)
    n = args.explorers
    explorers = [
        remote.remote(creator, 0.4 ** (1 + 7 * i / max(1, n - 1)), args.seed * 1000 + i)
        for i in range(n)
    ]
    learner = Learner(18, args.seed)
    pending = {e.explore.remote(learner.weights, args.steps): i for i, e in enumerate(explorers)}
    rounds = 0
    try:
        while pending:
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(ready)
            try:
                batch, over = ray.get(ready)
            except ray.exceptions.RayActorError:  # its node died: Ray restarts it elsewhere
                pending[explorers[i].explore.remote(learner.weights, args.steps)] = i
                continue
            if len(batch[0]):
                learner.add(batch)
                learner.learn(updates=max(1, len(batch[0]) // 16))
            if not over:
                pending[explorers[i].explore.remote(learner.weights, args.steps)] = i
            rounds += 1
            if rounds % (4 * n) == 0 or not pending:
                view = run.progress()
                line = f"run frames {view['run_frames']:>9,}"
                if "episode_return_mean" in view:
                    line += f"  return {view['episode_return_mean']:.1f} ({view['episodes']} ep.)"
                print(line, flush=True)
    finally:
        for explorer in explorers:
            ray.kill(explorer)
        run.close()
    print(f"the run's budget of {args.frames:,} frames is used up: {run.log}")
    try:
        print(arcadebench.score(args.spec, Path(args.out), reps=0).table())
    except NoScores:  # a short run: no episode has ended yet
        print(f"no episode ended in {args.frames:,} frames: nothing to score yet")


if __name__ == "__main__":
    try:
        main()
    except ArcadebenchError as error:  # one line: what is wrong and what to do
        raise SystemExit(f"apex_ray.py: error: {error}") from None
