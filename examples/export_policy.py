"""Export a CleanRL PPO Atari agent to TorchScript and ONNX, then evaluate the file under SABER.

    python3 dev.py install sb3 onnx    # in a clone: PyTorch (its CPU build without a GPU), ONNX
    python examples/export_policy.py                                   # an untrained agent
    python examples/export_policy.py --state-dict runs/ppo.cleanrl_model  # CleanRL's save

A policy trained anywhere is evaluated without its training code: export the network once,
and the runner plays the file (``arcadebench run saber --agent torchscript:ppo_pong.pt``, or
``onnx:ppo_pong.onnx``; append ``:stochastic`` to sample from the logits). What is exported
maps a batch of observations exactly as the protocol env gives them, ``(B, 4, 84, 84)``
``uint8``, to ``(B, n)`` logits: the ``/ 255`` CleanRL's ``Agent`` applies goes *inside* the
export (:class:`Policy`), and only the actor is kept (an output of ``(B,)`` integer actions
works too).

The agent must be exported for the protocol's action set: SABER plays all 18 Atari actions,
while CleanRL's envpool scripts train on the game's minimal set (6 for Pong), so the runner
refuses such a checkpoint under SABER in one line before anything is played (the TorchScript
file says its number of actions in an ``arcadebench.json`` extra file; an ONNX graph says it by
itself), and points to ``map_actions=True``, which plays it on its own action set as a
recorded deviation.

The example exports both ways, loads each file as the runner's workers do (``load``,
``check``, ``act_batch`` on a real observation, which must give the torch model's greedy
action), then evaluates the TorchScript file for one short episode.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from torch import nn
from torch.distributions import Categorical, Distribution

import arcadebench
from arcadebench.benchmarks.runner.saved import saved_kind

Layer = TypeVar("Layer", nn.Conv2d, nn.Linear)


def layer_init(layer: Layer, std: float = np.sqrt(2), bias_const: float = 0.0) -> Layer:
    nn.init.orthogonal_(layer.weight, std)
    if layer.bias is not None:
        nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    """CleanRL's PPO Atari actor-critic (``ppo_atari_envpool.py``): Nature CNN, actor, critic.

    The attribute names are CleanRL's, so its saved ``state_dict`` loads as it is.
    """

    def __init__(self, actions: int) -> None:
        super().__init__()
        self.network = nn.Sequential(
            layer_init(nn.Conv2d(4, 32, 8, stride=4)),
            nn.ReLU(),
            layer_init(nn.Conv2d(32, 64, 4, stride=2)),
            nn.ReLU(),
            layer_init(nn.Conv2d(64, 64, 3, stride=1)),
            nn.ReLU(),
            nn.Flatten(),
            layer_init(nn.Linear(64 * 7 * 7, 512)),
            nn.ReLU(),
        )
        self.actor = layer_init(nn.Linear(512, actions), std=0.01)
        self.critic = layer_init(nn.Linear(512, 1), std=1)

    def get_value(self, x: torch.Tensor) -> torch.Tensor:
        value: torch.Tensor = self.critic(self.network(x / 255.0))
        return value

    def get_action_and_value(
        self, x: torch.Tensor, action: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        hidden = self.network(x / 255.0)
        # seen as a Distribution: Categorical overrides its annotated methods without annotations
        probs: Distribution = Categorical(logits=self.actor(hidden))
        if action is None:
            action = probs.sample()
        return action, probs.log_prob(action), probs.entropy(), self.critic(hidden)


class Policy(nn.Module):
    """What is exported: ``uint8`` observations in, the actor's logits out (no critic)."""

    def __init__(self, agent: Agent) -> None:
        super().__init__()
        self.network = agent.network
        self.actor = agent.actor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.actor(self.network(x.float() / 255.0))
        return logits


def build_agent(state_dict: Path | None, actions: int) -> Agent:
    """CleanRL's agent, untrained or with the weights CleanRL saved (``torch.save`` of its
    ``state_dict``; the number of actions is read from them)."""
    if state_dict is None:
        torch.manual_seed(0)
        return Agent(actions).eval()
    state = torch.load(state_dict, map_location="cpu", weights_only=True)
    agent = Agent(int(state["actor.weight"].shape[0]))
    agent.load_state_dict(state)
    return agent.eval()


def export(policy: Policy, out: Path, name: str) -> tuple[Path, Path]:
    """``<name>.pt`` (TorchScript) and ``<name>.onnx``, both with a dynamic batch axis."""
    out.mkdir(parents=True, exist_ok=True)
    script, onnx = out / f"{name}.pt", out / f"{name}.onnx"
    # what the runner reads before loading anything (an ONNX graph says it by itself): the
    # observations to ask the environment for and the number of actions, checked against the
    # protocol's before any worker starts
    said = {"observation_shape": [4, 84, 84], "actions": policy.actor.out_features}
    torch.jit.save(
        torch.jit.script(policy), str(script), _extra_files={"arcadebench.json": json.dumps(said)}
    )
    example = torch.zeros((1, 4, 84, 84), dtype=torch.uint8)
    # dynamo=False: torch's TorchScript-based exporter, which needs the onnx package only;
    # torch 2.9+ calls it deprecated for its torch.export-based default, which needs onnxscript
    # too and keeps the weights in a <name>.onnx.data file beside the model (read as well)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(
            policy,
            (example,),
            str(onnx),
            dynamo=False,
            input_names=["obs"],
            output_names=["logits"],
            dynamic_axes={"obs": {0: "batch"}, "logits": {0: "batch"}},
        )
    return script, onnx


def play_one_step(policy: Policy, files: Sequence[Path], spec: str, game: str) -> list[int]:
    """Each file as the runner's workers use it, on a real observation: the greedy actions."""
    env = arcadebench.make(spec, game, obs_type="standard", log_dir=False)
    obs, _ = env.reset(seed=0)
    with torch.no_grad():
        expected = int(policy(torch.from_numpy(obs[None])).argmax())
    chosen = []
    for path in files:
        reference = f"{'onnx' if path.suffix == '.onnx' else 'torchscript'}:{path}"
        kind = saved_kind(reference)  # what --agent reads it as
        if kind is None:
            raise SystemExit(f"no saved-policy kind reads {reference}")
        agent: Any = kind.read(reference, "cpu")
        agent.load(threads=1)
        agent.check(env.observation_space, env.action_space)
        action = int(agent.act_batch(obs[None], [np.random.default_rng(0)])[0])
        print(f"{path.name}: {agent.env_kwargs}, {agent.action_space}, greedy action {action}")
        if action != expected:
            raise SystemExit(f"{path.name} chose {action}, the torch model {expected}")
        chosen.append(action)
    env.close()
    return chosen


def main(argv: Sequence[str] | None = None, evaluate: bool = True) -> list[int]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--state-dict", type=Path, help="a CleanRL agent's saved state_dict")
    parser.add_argument("--spec", default="saber")
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--out", type=Path, default=Path("results/export_policy"))
    parser.add_argument("--no-evaluate", action="store_true", help="export and check only")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)

    spec = arcadebench.load_spec(args.spec)
    env = arcadebench.make(spec, args.game, obs_type="standard", log_dir=False)
    actions = int(getattr(env.action_space, "n", 0))
    env.close()
    policy = Policy(build_agent(args.state_dict, actions)).eval()
    script, onnx = export(policy, args.out, f"ppo_{spec.resolve_game(args.game)}")
    chosen = play_one_step(policy, [script, onnx], args.spec, args.game)

    if evaluate and not args.no_evaluate:
        # one short episode (2,000 frames: a deviation from SABER, recorded as such)
        results = arcadebench.evaluate(
            f"torchscript:{script}",
            args.spec,
            [args.game],
            episodes=1,
            log_dir=args.out / "eval",
            env_kwargs={"max_episode_frames": 2000},
            progress="off",
            reps=0,
        )
        print(results.table())
    return chosen


if __name__ == "__main__":
    main()
