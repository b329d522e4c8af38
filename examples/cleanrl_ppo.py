"""PPO in the style of CleanRL's ``ppo_atari.py`` (torch), on either vector path, then scored.

    pip install torch --index-url https://download.pytorch.org/whl/cpu  # the CPU build (no GPU)
    python examples/cleanrl_ppo.py --vector gym --num-envs 8 --total-steps 200000
    python examples/cleanrl_ppo.py --vector arcadebench --num-envs 8 --total-steps 200000

The two vector paths, one training run each:

- ``--vector gym``: ``gymnasium.vector.SyncVectorEnv([make_env(i) ...])`` over
  ``gym.make("arcadebench/SABER-<Game>-v0", obs_type="standard", log_dir=..., run=...)``, the
  way CleanRL builds its envs. Gymnasium's default autoreset is *next step*: the step after an
  episode's last one resets that env and its reward is 0, its observation the new first one;
- ``--vector arcadebench``: ``arcadebench.make_vec(...)`` on ale-py's batched emulator, whose
  autoreset is *same step*: the step that ends an episode already returns the next episode's
  first observation (the last one is in ``info["final_obs"]``). Faster on a few cores.

Either way the envs are streams of one run: the run's frames (for the budget and the 10M/50M
frame checkpoints of SABER) are their sum, and the scorer reads one run. Rewards are clipped to
their sign for learning *here*, not in the env, so the logged returns stay the protocol's; no
Atari wrappers are needed (the protocol env already skips 4 frames with sticky actions and
ends episodes on game over only). A finished episode's protocol return is in
``info["arcadebench"]["episode"]``; the run's budget ends training (``end_reason: "budget"``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import gymnasium as gym
import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical, Distribution

import arcadebench
from arcadebench.errors import NoScores


def make_envs(args: argparse.Namespace, log_dir: Path, run: str) -> gym.vector.VectorEnv:
    if args.vector == "arcadebench":
        return arcadebench.make_vec(
            args.spec, args.game, args.num_envs, log_dir=log_dir, run=run, algorithm="ppo-cleanrl"
        )

    def make_env(index: int) -> Callable[[], gym.Env]:
        def thunk() -> gym.Env:
            return arcadebench.make(
                args.spec,
                args.game,
                obs_type="standard",
                log_dir=log_dir,
                run=run,
                algorithm="ppo-cleanrl",
            )

        return thunk

    return gym.vector.SyncVectorEnv([make_env(i) for i in range(args.num_envs)])


def finished_episodes(info: dict[str, Any], n: int) -> list[dict[str, Any]]:
    """The summaries of the episodes that ended on a vector step, from either vector path.

    ``arcadebench.make_vec`` gives an array of summaries; Gymnasium's vector envs merge the
    envs' ``info`` dicts key by key, so there each field is an array of its own.
    """
    protocol = info.get("arcadebench", {})
    mask = protocol.get("_episode", np.zeros(n, bool))
    summaries = protocol.get("episode")
    if isinstance(summaries, dict):
        return [{key: summaries[key][i] for key in summaries} for i in np.flatnonzero(mask)]
    return [summaries[i] for i in np.flatnonzero(mask)]


Layer = TypeVar("Layer", nn.Conv2d, nn.Linear)


def layer(module: Layer, std: float = np.sqrt(2)) -> Layer:
    nn.init.orthogonal_(module.weight, std)
    if module.bias is not None:
        nn.init.constant_(module.bias, 0.0)
    return module


class Agent(nn.Module):
    """CleanRL's Nature-CNN actor-critic."""

    def __init__(self, actions: int) -> None:
        super().__init__()
        self.network = nn.Sequential(
            layer(nn.Conv2d(4, 32, 8, stride=4)),
            nn.ReLU(),
            layer(nn.Conv2d(32, 64, 4, stride=2)),
            nn.ReLU(),
            layer(nn.Conv2d(64, 64, 3, stride=1)),
            nn.ReLU(),
            nn.Flatten(),
            layer(nn.Linear(64 * 7 * 7, 512)),
            nn.ReLU(),
        )
        self.actor = layer(nn.Linear(512, actions), std=0.01)
        self.critic = layer(nn.Linear(512, 1), std=1.0)

    def value(self, x: torch.Tensor) -> torch.Tensor:
        value: torch.Tensor = self.critic(self.network(x / 255.0))
        return value

    def act(
        self, x: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        hidden = self.network(x / 255.0)
        # seen as a Distribution: Categorical overrides its annotated methods without annotations
        dist: Distribution = Categorical(logits=self.actor(hidden))
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.critic(hidden)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vector", choices=("gym", "arcadebench"), default="arcadebench")
    parser.add_argument("--spec", default="saber")
    parser.add_argument("--game", default="breakout")
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--num-steps", type=int, default=128, help="rollout length per env")
    parser.add_argument("--total-steps", type=int, default=200_000, help="agent steps, all envs")
    parser.add_argument("--learning-rate", type=float, default=2.5e-4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="results/cleanrl_ppo")
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    out, run = Path(args.out), f"seed{args.seed}"
    envs = make_envs(args, out, run)
    n, steps = args.num_envs, args.num_steps
    if not isinstance(envs.single_action_space, gym.spaces.Discrete):
        raise SystemExit(f"{args.game}: PPO here needs a discrete action set")
    agent = Agent(int(envs.single_action_space.n))
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    obs_buf = torch.zeros((steps, n, 4, 84, 84), dtype=torch.uint8)
    act_buf = torch.zeros((steps, n), dtype=torch.long)
    logp_buf, rew_buf, done_buf, val_buf = (torch.zeros((steps, n)) for _ in range(4))

    obs, _ = envs.reset(seed=args.seed)
    obs = torch.as_tensor(obs)
    done = torch.zeros(n)
    played, over = 0, False
    while played < args.total_steps and not over:
        for t in range(steps):
            obs_buf[t], done_buf[t] = obs, done
            with torch.no_grad():
                action, logp, _, value = agent.act(obs.float())
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value.flatten()
            obs_np, reward, terminated, truncated, info = envs.step(action.numpy())
            rew_buf[t] = torch.as_tensor(np.sign(reward), dtype=torch.float32)  # learning only
            obs, done = torch.as_tensor(obs_np), torch.as_tensor(terminated | truncated).float()
            for episode in finished_episodes(info, n):
                print(f"run frames {episode['run_frames']:>9,}  return {episode['return']:.0f}")
                over |= episode["end_reason"] == "budget"  # the run's budget: training ends
            played += n
            if over:
                break
        # generalised advantage estimation (gamma 0.99, lambda 0.95), then 4 epochs of PPO
        with torch.no_grad():
            next_value = agent.value(obs.float()).flatten()
            advantages, last = torch.zeros_like(rew_buf), torch.zeros(n)
            for t in reversed(range(steps)):
                following = next_value if t == steps - 1 else val_buf[t + 1]
                alive = 1.0 - (done if t == steps - 1 else done_buf[t + 1])
                delta = rew_buf[t] + 0.99 * following * alive - val_buf[t]
                last = delta + 0.99 * 0.95 * alive * last
                advantages[t] = last
            returns = advantages + val_buf
        b_obs, b_act = obs_buf.reshape(-1, 4, 84, 84).float(), act_buf.reshape(-1)
        b_logp, b_adv, b_ret = logp_buf.reshape(-1), advantages.reshape(-1), returns.reshape(-1)
        for _ in range(4):
            for batch in torch.split(torch.randperm(steps * n), max(1, steps * n // 4)):
                _, logp, entropy, value = agent.act(b_obs[batch], b_act[batch])
                ratio = (logp - b_logp[batch]).exp()
                adv = (b_adv[batch] - b_adv[batch].mean()) / (b_adv[batch].std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(0.9, 1.1)).mean()
                loss = policy_loss + 0.5 * ((value.flatten() - b_ret[batch]) ** 2).mean()
                loss = loss - 0.01 * entropy.mean()
                optimizer.zero_grad()
                torch.autograd.backward(loss)  # loss.backward(), which torch leaves unannotated
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optimizer.step()
    envs.close()
    try:
        print(arcadebench.score(args.spec, out, reps=0).table())
    except NoScores:  # a short run: no episode has ended yet
        print(f"no episode ended in {args.total_steps:,} steps: nothing to score yet")


if __name__ == "__main__":
    main()
