"""Protocol envs against the raw emulators: what arcadebench's layers cost per step.

Atari (Pong, the same seeded random actions for every case, unseeded resets when an episode
ends, inside the timing), in interleaved rounds:

- ``ALEInterface``: ALE itself with the protocol's settings (sticky actions 0.25, full action
  set), four ``act`` calls and one ``getScreenRGB`` per step: the emulator's floor;
- ``gym.make("ALE/Pong-v5", ...)`` with each protocol's native settings (frame skip 4, sticky
  0.25, full action set, the frame cap: 108,000 for HWR and Atari-5, 21,600,000 for SABER);
- ``gym.make("arcadebench/<P>-Pong-v0")`` for SABER, HWR and Atari5: the same ALE env plus the
  protocol wrappers and the episode monitor (not logging; bench_monitor.py covers logging).

Sonic on stable-retro (one emulator per process, so both cases drive the same emulator and
each round starts with a reset): the Sonic protocol on the bundled Airstriker ROM, built as
the tests build it (tests/sonic_helpers.py: the contest scenario, the level's save state, then
SonicProgressReward, StickyFrameSkip, ButtonDiscretizer, TimeLimit and the monitor), against
its own ``RetroEnv`` stepped four frames per step with random button vectors.

    .venv/bin/python perf/bench_envs.py [--steps 3000] [--rounds 7] [--retro-steps 1000]

Targets (issue 9): every protocol env >= 0.95x the raw Gymnasium ALE env with its settings;
the Sonic protocol env is held to the same 0.95x against its raw RetroEnv.
Writes perf/results/bench_envs.json.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import numpy as np
from _timing import (
    Target,
    interleave,
    median,
    parser,
    ratio,
    ratio_range,
    report_targets,
    table,
    write_json,
)
from ale_py import ALEInterface, LoggerMode, roms

import arcadebench
from arcadebench.benchmarks.envs import protocol_kwargs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

PROTOCOLS = {"SABER": "saber", "HWR": "hwr", "Atari5": "atari5"}


def native(spec: str) -> dict:
    settings = protocol_kwargs(arcadebench.load_spec(spec))
    return {
        "frameskip": settings["frameskip"],
        "repeat_action_probability": settings["repeat_action_probability"],
        "full_action_space": settings["full_action_space"],
        "max_num_frames_per_episode": settings["max_episode_frames"] or 0,
    }


def gym_player(env: gym.Env, actions: list) -> Callable[[], float]:
    env.reset(seed=0)
    step, reset = env.step, env.reset

    def play() -> float:
        start = time.perf_counter()
        for action in actions:
            _, _, terminated, truncated, _ = step(action)
            if terminated or truncated:
                reset()
        return time.perf_counter() - start

    return play


def ale_player(actions: list) -> Callable[[], float]:
    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setFloat("repeat_action_probability", 0.25)
    ale.setInt("max_num_frames_per_episode", 108_000)
    ale.setInt("random_seed", 0)
    ale.loadROM(roms.get_rom_path("pong"))
    legal = ale.getLegalActionSet()
    screen = np.zeros((*ale.getScreenDims(), 3), np.uint8)
    moves = [legal[a] for a in actions]

    def play() -> float:
        act, over, get = ale.act, ale.game_over, ale.getScreenRGB
        start = time.perf_counter()
        for move in moves:
            act(move)
            act(move)
            act(move)
            act(move)
            get(screen)
            if over():
                ale.reset_game()
        return time.perf_counter() - start

    return play


def atari(args) -> tuple[dict, list[Target], list[list]]:
    actions = np.random.default_rng(0).integers(18, size=args.steps).tolist()
    envs: dict[str, gym.Env] = {}
    raw_of = {}
    for prefix, spec in PROTOCOLS.items():
        settings = native(spec)
        raw_name = f"ALE/Pong-v5, cap {settings['max_num_frames_per_episode']:,}"
        if raw_name not in envs:
            envs[raw_name] = gym.make("ALE/Pong-v5", **settings)
        raw_of[prefix] = raw_name
    for prefix in PROTOCOLS:
        envs[f"arcadebench/{prefix}-Pong-v0"] = gym.make(f"arcadebench/{prefix}-Pong-v0")
    cases = {"ALEInterface (4 act + RGB screen)": ale_player(actions)}
    cases.update({name: gym_player(env, actions) for name, env in envs.items()})
    samples = interleave(cases, args.rounds)
    for env in envs.values():
        env.close()
    base = next(name for name in cases if name.startswith("ALE/"))
    rows = []
    for name in cases:
        reference = raw_of.get(name.split("/")[-1].split("-")[0], base)
        rows.append(
            [
                name,
                args.steps / median(samples[name]),
                1e6 * median(samples[name]) / args.steps,
                ratio(samples, name, reference),
                "{:.2f}-{:.2f}".format(*ratio_range(samples, name, reference)),
                reference if name.startswith("arcadebench") else "",
            ]
        )
    targets = [
        Target(
            f"{prefix} protocol env / raw gym ALE env",
            ratio(samples, f"arcadebench/{prefix}-Pong-v0", raw_of[prefix]),
            ">=",
            0.95,
        )
        for prefix in PROTOCOLS
    ]
    report = {
        name: {
            "seconds": samples[name],
            "steps_per_s": args.steps / median(samples[name]),
            "x_reference": row[3],
            "reference": row[5] or base,
        }
        for name, row in zip(cases, rows, strict=True)
    }
    return report, targets, rows


def retro(args) -> tuple[dict, list[Target], list[list]]:
    from sonic_helpers import TEST_LEVELS, write_sonic_airstriker

    with tempfile.TemporaryDirectory() as tmp:
        spec = str(write_sonic_airstriker(Path(tmp)))
        env = arcadebench.make(spec, TEST_LEVELS[0])
        raw = env.unwrapped
        rng = np.random.default_rng(0)
        buttons = rng.integers(0, 2, size=(args.retro_steps, raw.action_space.shape[0])).astype(
            np.int8
        )
        discrete = rng.integers(env.action_space.n, size=args.retro_steps).tolist()

        def play_raw() -> float:
            raw.reset()
            step = raw.step
            start = time.perf_counter()
            for action in buttons:
                for _ in range(4):
                    _, _, terminated, truncated, _ = step(action)
                    if terminated or truncated:
                        raw.reset()
                        break
            return time.perf_counter() - start

        cases = {
            "RetroEnv, 4 frames a step": play_raw,
            "Sonic protocol env (Airstriker)": gym_player(env, discrete),
        }
        samples = interleave(cases, args.rounds)
        env.close()
    base = "RetroEnv, 4 frames a step"
    rows = [
        [
            name,
            args.retro_steps / median(samples[name]),
            1e6 * median(samples[name]) / args.retro_steps,
            ratio(samples, name, base),
            "{:.2f}-{:.2f}".format(*ratio_range(samples, name, base)),
            base if name != base else "",
        ]
        for name in cases
    ]
    target = Target(
        "Sonic protocol env / raw RetroEnv",
        ratio(samples, "Sonic protocol env (Airstriker)", base),
        ">=",
        0.95,
    )
    report = {
        name: {"seconds": samples[name], "steps_per_s": row[1], "x_reference": row[3]}
        for name, row in zip(cases, rows, strict=True)
    }
    return report, [target], rows


def main() -> None:
    args = parser(__doc__)
    args.add_argument("--steps", type=int, default=3000)
    args.add_argument("--rounds", type=int, default=7)
    args.add_argument("--retro-steps", type=int, default=1000)
    args = args.parse_args()
    columns = ["case", "steps/s", "us/step", "x reference", "min-max", "reference"]
    atari_report, atari_targets, atari_rows = atari(args)
    print(
        table(
            columns,
            atari_rows,
            f"Atari, Pong: {args.steps:,} steps x {args.rounds} interleaved rounds "
            "(medians; ratio = median of per-round ratios)",
        )
    )
    retro_report, retro_targets, retro_rows = retro(args)
    print()
    print(
        table(
            columns,
            retro_rows,
            f"stable-retro, Airstriker: {args.retro_steps:,} steps x {args.rounds} rounds",
        )
    )
    print()
    targets = report_targets(atari_targets + retro_targets)
    write_json(
        "bench_envs",
        {
            "steps": args.steps,
            "retro_steps": args.retro_steps,
            "rounds": args.rounds,
            "atari": atari_report,
            "retro": retro_report,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    main()
