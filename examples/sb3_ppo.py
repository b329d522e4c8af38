"""Train PPO (stable-baselines3) on a protocol with many environments, then score and report it.

    python3 dev.py install sb3  # in a clone: stable-baselines3, PyTorch's CPU build without a GPU
    python examples/sb3_ppo.py --timesteps 200000 --num-envs 8

The compliant recipe with SB3:

- the environments are one training run: ``make_sb3_vec_env`` puts ``num_envs`` protocol envs
  on ale-py's batched emulator as one SB3 ``VecEnv``, and their monitor logs every episode of
  every env into ``<log-dir>/<spec>/<game>/<run>.jsonl``. The run's frames are the sum over its
  envs, so SABER's 10M-frame checkpoint is 10M frames of the *learner*, and the budget stops
  the run, not each env;
- the observation is the standard one (84x84 grayscale, max-pooled, 4 frames), computed inside
  the protocol's frame loop: no SB3 ``AtariWrapper`` (it would skip frames again and end
  episodes at a life loss — arcadebench detects it, warns and records the deviation);
- rewards are clipped for learning by SB3's ``VecNormalize``-free way: a reward-clipping
  ``VecEnvWrapper`` *above* the protocol env, so the logged returns stay the protocol's;
- :class:`ProtocolCallback` shows the run's frames, the protocol return and the checkpoint
  scores in SB3's logger (TensorBoard, CSV...), and stops training at the run's budget.

The trained model is saved, evaluated by the runner as ``--agent sb3:PPO:<model.zip>`` (greedy
actions, the observation settings read from the model), and reported.

The same run with SB3's own helpers, one env per process::

    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.vec_env import SubprocVecEnv
    envs = make_vec_env(
        "arcadebench:arcadebench/SABER-Pong-v0",  # "arcadebench:" imports the ids in each worker
        n_envs=8,
        vec_env_cls=SubprocVecEnv,
        env_kwargs=dict(obs_type="standard", log_dir="logs", run="ppo-seed1", algorithm="ppo"),
    )
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecEnvWrapper
from stable_baselines3.common.vec_env.base_vec_env import VecEnvObs, VecEnvStepReturn

import arcadebench
from arcadebench.benchmarks.training.sb3 import ProtocolCallback, make_sb3_vec_env
from arcadebench.errors import NoScores


class ClipRewards(VecEnvWrapper):
    """The sign of the reward, for learning only: above the protocol env and its log."""

    def reset(self) -> VecEnvObs:
        return self.venv.reset()

    def step_wait(self) -> VecEnvStepReturn:
        obs, rewards, dones, infos = self.venv.step_wait()
        return obs, np.sign(rewards), dones, infos


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="saber")
    parser.add_argument("--game", default="pong")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--timesteps", type=int, default=200_000, help="agent steps, all envs")
    parser.add_argument("--n-steps", type=int, default=128, help="PPO rollout length per env")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="results/sb3_ppo")
    parser.add_argument("--eval-episodes", type=int, default=1)
    args = parser.parse_args()

    torch.set_num_threads(1)  # small CNN, few cores: one thread is faster
    out = Path(args.out)
    run = f"ppo-seed{args.seed}"
    envs = make_sb3_vec_env(
        args.spec, args.game, args.num_envs, log_dir=out / "train", run=run, algorithm="ppo"
    )
    envs.seed(args.seed)
    model = PPO(
        "CnnPolicy",
        ClipRewards(envs),
        n_steps=args.n_steps,
        batch_size=min(256, args.n_steps * args.num_envs),
        n_epochs=4,
        learning_rate=2.5e-4,
        clip_range=0.1,
        ent_coef=0.01,
        seed=args.seed,
        device="cpu",
        verbose=1,
    )
    callback = ProtocolCallback(args.spec, args.game, out / "train", run=run)
    model.learn(total_timesteps=args.timesteps, callback=callback)
    envs.close()
    model_path = out / f"ppo_{args.game}.zip"
    model.save(model_path)

    # the training run, scored as the protocol says (SABER: last 100 episodes at checkpoints)
    try:
        trained = [arcadebench.score(args.spec, out / "train", reps=0)]
        print(trained[0].table())
    except NoScores:  # a short run: no training episode has ended yet
        trained = []
        print(f"no training episode ended in {args.timesteps:,} timesteps: nothing to score yet")
    # the saved model, evaluated greedily by the runner (its own logs, under out/eval)
    evaluated = arcadebench.evaluate(
        f"sb3:PPO:{model_path}",
        args.spec,
        games=[args.game],
        episodes=args.eval_episodes,
        seeds=(args.seed,),
        workers=1,
        log_dir=out / "eval",
        progress="off",
    )
    print(evaluated.table())
    arcadebench.report([*trained, evaluated], out / "report", spec=args.spec, reps=0)
    print(f"report: {out / 'report' / 'report.html'}")


if __name__ == "__main__":
    main()
