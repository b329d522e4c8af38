"""Train on a registered protocol env (CleanRL style, numpy only) and score the monitor's log.

    python examples/train_and_score.py --total-steps 3000

The compliant recipe for training under SABER/HWR/Atari-5:

- make the protocol env with `gym.make("arcadebench/SABER-<Game>-v0", ...)`: it already plays the
  protocol's frame skip (4), sticky actions (0.25), full action set, episode caps and game-over-only
  episodes; `obs_type="standard"` adds the usual 84x84 grayscale, max-pooled, 4-frame stack
  *inside* that frame loop (arcadebench's opt-in preprocessing, no deviation recorded);
- give it `log_dir=` (or set ARCADEBENCH_LOG_DIR): its monitor logs every training episode with
  the protocol return, before any clipping you add on top;
- clip or shape rewards for learning *outside* the env (here `np.sign` in the update);
- never wrap it in stable-baselines3's `AtariWrapper` / `make_atari_env`: they skip frames
  again (16 frames per action) and end episodes on life loss, which breaks SABER and HWR.

The agent is a linear softmax policy over a 21x21 average-pooled frame, trained by REINFORCE
with a running-mean baseline. SABER scores the mean of the last 100 training episodes at each
frame checkpoint (10M, 50M, 100M, 200M) and at the end of the log; a short run is scored at its
end only.
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np

import arcadebench
from arcadebench.errors import NoScores


def features(obs: np.ndarray) -> np.ndarray:
    """The newest 84x84 frame, average-pooled to 21x21, scaled to [0, 1], plus a bias."""
    frame = obs[-1].astype(np.float32).reshape(21, 4, 21, 4).mean(axis=(1, 3)) / 255.0
    return np.append(frame.ravel(), 1.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env-id", default="arcadebench/SABER-Breakout-v0")
    parser.add_argument("--total-steps", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--learning-rate", type=float, default=0.01)
    parser.add_argument("--gamma", type=float, default=0.99)
    parser.add_argument("--log-dir", default="results/train_and_score")
    parser.add_argument("--resume", action="store_true", help="continue this seed's log")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    env = gym.make(args.env_id, obs_type="standard")
    # the same as gym.make(..., log_dir=..., run=...), and names the algorithm in the log header
    env = arcadebench.monitor(
        env,
        log_dir=args.log_dir,
        run=f"seed{args.seed}",
        resume=args.resume,
        algorithm="reinforce-linear",
    )
    if not isinstance(env.action_space, gym.spaces.Discrete):
        raise SystemExit(f"{args.env_id}: this agent needs a discrete action set")
    n_actions = int(env.action_space.n)
    weights = np.zeros((n_actions, 21 * 21 + 1))
    baseline = 0.0

    obs, _ = env.reset(seed=args.seed)
    trajectory: list[tuple[np.ndarray, np.ndarray, int, float]] = []
    for global_step in range(args.total_steps):
        phi = features(obs)
        logits = weights @ phi
        probs = np.exp(logits - logits.max())
        probs /= probs.sum()
        action = int(rng.choice(n_actions, p=probs))
        obs, reward, terminated, truncated, info = env.step(action)
        clipped = float(np.sign(float(reward)))  # clipped for learning only
        trajectory.append((phi, probs, action, clipped))
        if terminated or truncated:
            # REINFORCE: discounted clipped returns, minus a running baseline
            returns, g = np.empty(len(trajectory)), 0.0
            for t in range(len(trajectory) - 1, -1, -1):
                g = trajectory[t][3] + args.gamma * g
                returns[t] = g
            baseline += 0.1 * (returns.mean() - baseline)
            for (phi_t, probs_t, a_t, _), g_t in zip(trajectory, returns, strict=True):
                grad = -probs_t[:, None] * phi_t[None, :]
                grad[a_t] += phi_t
                weights += args.learning_rate * (g_t - baseline) * grad
            trajectory.clear()
            end = info["arcadebench"]["end_reason"]
            print(f"global_step={global_step + 1} episode ended ({end})", flush=True)
            obs, _ = env.reset()
    env.close()  # the episode in flight is not logged (like a killed process)

    if env.spec is None:  # gym.make always sets it
        raise SystemExit(f"{args.env_id} has no EnvSpec")
    spec = env.spec.kwargs["spec"]
    try:
        results = arcadebench.score(spec, args.log_dir, reps=0)  # the scorer reads the log
    except NoScores:  # a short run: no episode has ended yet
        print(f"no episode ended in {args.total_steps:,} steps: nothing to score yet")
        return
    print(results.table())


if __name__ == "__main__":
    main()
