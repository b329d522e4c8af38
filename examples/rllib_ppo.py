"""Train RLlib's PPO on a protocol with env runners on any node of a Ray cluster: one run, one log.

    # ray[rllib] pins gymnasium 1.2.2: a virtual env of its own (PyTorch's CPU build first)
    pip install torch --index-url https://download.pytorch.org/whl/cpu
    pip install -e ".[rllib]"
    python examples/rllib_ppo.py --game Pong --frames 2000000 --out results/rllib_ppo
    python examples/rllib_ppo.py --game Pong --frames 2000000 --out results/rllib_ppo \\
        --address <head-ip>:6379 --env-runners 8   # on a cluster
    arcadebench score saber results/rllib_ppo

The recipe (``arcadebench.benchmarks.training.ray_run``):

- ``RayRun`` starts the run's owner on this machine: the log ``<out>/<spec>/<game>/<run>.jsonl``,
  the run's counters and its budget (``--frames``, within the spec's) live there, whatever node
  the env runners are on; no shared file system is needed;
- ``run.env_creator(...)`` is RLlib's env (``tune.register_env``): every env an env runner
  builds is a stream of the run, its episodes written by the owner, so the run's frames (and
  SABER's frame checkpoints) are the sum over the cluster, and the budget stops every env runner
  (after it, an env plays nothing until the iteration ends);
- ``run.on_train_result`` is an RLlib callback at the driver: ``result["arcadebench"]`` has the
  run's frames, the protocol return of the episodes that ended (before the reward clipping of
  the wrappers on top) and the scores at the checkpoints passed; training stops at the budget;
- an env runner whose node dies is restarted by RLlib on another node, as a new stream of the
  same run (its episode in flight is lost; nothing is counted twice). If this driver dies, run
  again with ``--resume``: the log continues, the learner starts afresh.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np
import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.tune.registry import register_env

import arcadebench
from arcadebench.benchmarks.training.ray_run import RayRun, RLlibObservation
from arcadebench.errors import ArcadebenchError, NoScores


def clip_rewards(env: gym.Env[Any, Any]) -> gym.Env[Any, Any]:
    """Rewards clipped to their sign for learning, above the protocol env and its log."""

    def sign(reward: SupportsFloat) -> float:
        return float(np.sign(float(reward)))

    return gym.wrappers.TransformReward(env, sign)


def model_config(obs_type: str) -> DefaultModelConfig:
    if obs_type == "standard":  # 84x84x4 frames: a small CNN, as RLlib's Atari examples use
        return DefaultModelConfig(
            conv_filters=[(16, 4, 2), (32, 4, 2), (64, 4, 2), (128, 4, 2)],
            conv_activation="relu",
            head_fcnet_hiddens=[256],
            vf_share_layers=True,
        )
    return DefaultModelConfig(fcnet_hiddens=[64], vf_share_layers=True)  # RAM bytes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="saber")
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--frames", type=int, default=2_000_000, help="the run's frame budget")
    parser.add_argument("--out", default="results/rllib_ppo")
    parser.add_argument("--address", default=None, help="a Ray cluster's head (default local)")
    parser.add_argument("--env-runners", type=int, default=2)
    parser.add_argument("--envs-per-runner", type=int, default=1)
    parser.add_argument("--rollout", type=int, default=128, help="steps per env per iteration")
    parser.add_argument("--minibatch", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--obs-type", choices=("standard", "ram"), default="standard")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--resume", action="store_true", help="continue the run's log")
    args = parser.parse_args()

    ray.init(address=args.address, log_to_driver=False, include_dashboard=False)
    run = RayRun(
        args.spec,
        args.game,
        args.out,
        run=f"ppo-seed{args.seed}",
        algorithm="rllib-ppo",
        budget_frames=args.frames,
        resume=args.resume,
    )
    wrappers: list[Callable[[gym.Env[Any, Any]], gym.Env[Any, Any]]] = [
        RLlibObservation,
        clip_rewards,
    ]
    register_env("arcadebench-run", run.env_creator(obs_type=args.obs_type, wrappers=wrappers))
    envs = args.env_runners * args.envs_per_runner
    config = (
        PPOConfig()  # type: ignore[no-untyped-call]  # RLlib's constructors are not annotated
        .environment("arcadebench-run")
        .env_runners(
            num_env_runners=args.env_runners,
            num_envs_per_env_runner=args.envs_per_runner,
            rollout_fragment_length=args.rollout,
        )
        .training(
            train_batch_size_per_learner=args.rollout * envs,
            minibatch_size=min(args.minibatch, args.rollout * envs),
            num_epochs=args.epochs,
            lr=2.5e-4,
            lambda_=0.95,
            clip_param=0.1,
            entropy_coeff=0.01,
            vf_clip_param=10.0,
        )
        .rl_module(model_config=model_config(args.obs_type))
        .fault_tolerance(restart_failed_env_runners=True)
        .callbacks(on_train_result=run.on_train_result)
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    try:
        view: dict[str, Any] = {"budget_used_up": run.used_up()}
        iteration = 0
        while not view["budget_used_up"]:
            view = algo.train()["arcadebench"]  # type: ignore[no-untyped-call]  # RLlib's
            iteration += 1
            line = f"iteration {iteration:>3}  run frames {view['run_frames']:>9,}"
            if "episode_return_mean" in view:
                line += f"  return {view['episode_return_mean']:.1f} ({view['episodes']} ep.)"
            for frames, cell in sorted(view["checkpoints"].items()):
                line += f"  checkpoint {frames:,}: {cell['raw']:.1f}"
            print(line, flush=True)
    finally:
        algo.stop()  # type: ignore[no-untyped-call]  # RLlib's methods are not all annotated
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
        raise SystemExit(f"rllib_ppo.py: error: {error}") from None
