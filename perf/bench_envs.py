"""Protocol envs against the raw emulators: what arcadebench's layers cost per step.

Atari (Pong, the same seeded random actions for every case, unseeded resets when an episode
ends, inside the timing), in interleaved rounds:

- ``ALEInterface``: ALE itself with the protocol's settings (sticky actions 0.25, full action
  set), four ``act`` calls and one ``getScreenRGB`` per step: the emulator's floor;
- ``gym.make("ALE/Pong-v5", ...)`` with each protocol's native settings (frame skip 4, sticky
  0.25, full action set, the frame cap: 108,000 for HWR and Atari-5, 21,600,000 for SABER);
- ``gym.make("arcadebench/<P>-Pong-v0")`` for SABER, HWR and Atari5: the same ALE env plus the
  protocol wrappers and the episode monitor (not logging; bench_monitor.py covers logging),
  compared with its own emulator behind just ``gym.make``'s wrappers (``OrderEnforcing``,
  ``PassiveEnvChecker``): separate ALE instances differ by a few per cent on their own, so the
  target ratio is taken on the same instance; the ratio to a separate ``gym.make`` is in the
  JSON (``x_separate_gym_make``).

Every round of every Gymnasium case resets with the same seed first, so they play the same
frames and differ only in their layers.

Sonic on stable-retro (one emulator per process, so both cases drive the same emulator and
each round starts with a reset): the Sonic protocol on the bundled Airstriker ROM, built as
the tests build it (tests/sonic_helpers.py: the contest scenario, the level's save state, then
SonicProgressReward, StickyFrameSkip, ButtonDiscretizer, TimeLimit and the monitor), against
its own ``RetroEnv`` stepped four frames per step with random button vectors.

    .venv/bin/python perf/bench_envs.py [--steps 1000] [--rounds 15] [--retro-steps 300]

Then each protocol env again, its emulator's ``step`` timed inside the same steps: what our
layers cost per step and the emulator's share of a step, free of the noise between runs.

Targets: every protocol env >= 0.95x the raw Gymnasium ALE env with its settings;
the Sonic protocol env is held to the same 0.95x against its raw RetroEnv. The targets are
checked on the in-run ratio (emulator time / stack time, the same steps; ``gym.make``'s own two
wrappers count as ours), which the interleaved ratios (the tables) confirm within their noise.
Writes perf/results/bench_envs.json.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, SupportsFloat

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
    step_player,
    table,
    write_json,
)
from ale_py import ALEInterface, LoggerMode, roms
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

import arcadebench
from arcadebench.benchmarks.envs.resolve import protocol_kwargs

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

PROTOCOLS = {"SABER": "saber", "HWR": "hwr", "Atari5": "atari5"}


def native(spec: str) -> dict[str, Any]:
    settings = protocol_kwargs(arcadebench.load_spec(spec))
    return {
        "frameskip": settings["frameskip"],
        "repeat_action_probability": settings["repeat_action_probability"],
        "full_action_space": settings["full_action_space"],
        "max_num_frames_per_episode": settings["max_episode_frames"] or 0,
    }


def layer_cost(env: gym.Env, actions: list[int], rounds: int) -> dict[str, float]:
    """Time inside the emulator's own ``step`` and around it, in the same loop.

    The emulator env's ``step`` is timed per call while the whole stack is stepped, so the
    stack's own cost is measured against the emulator in the very same steps: immune to the
    noise between runs that blurs small differences in the interleaved comparison.
    """
    inner = env.unwrapped
    original = inner.step
    spent = [0.0]
    clock = time.perf_counter

    def timed_step(action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        start = clock()
        result = original(action)
        spent[0] += clock() - start
        return result

    inner.step = timed_step  # type: ignore[method-assign]  # timed per call; `del` below restores it
    totals, inners = [], []
    try:
        play = step_player(env, actions)
        for _ in range(rounds):
            spent[0] = 0.0
            totals.append(play())
            inners.append(spent[0])
    finally:
        del inner.step
    layers = [1e6 * (t - i) / len(actions) for t, i in zip(totals, inners, strict=True)]
    share = [i / t for t, i in zip(totals, inners, strict=True)]
    return {"layers_us_per_step": median(layers), "emulator_share": median(share)}


def ale_player(actions: list[int]) -> Callable[[], float]:
    rom = roms.get_rom_path("pong")
    if rom is None:
        raise SystemExit("ale-py has no Pong ROM: reinstall ale-py (its ROMs ship with it)")
    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setFloat("repeat_action_probability", 0.25)
    ale.setInt("max_num_frames_per_episode", 108_000)
    ale.setInt("random_seed", 0)
    ale.loadROM(rom)
    start_state = ale.cloneState(include_rng=True)
    legal = ale.getLegalActionSet()
    screen = np.zeros((*ale.getScreenDims(), 3), np.uint8)
    moves = [legal[a] for a in actions]

    def play() -> float:
        ale.restoreState(start_state)  # every round plays the same frames
        ale.reset_game()
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


def atari(
    args: argparse.Namespace,
) -> tuple[dict[str, dict[str, Any]], list[Target], list[list[object]]]:
    actions = np.random.default_rng(0).integers(18, size=args.steps).tolist()
    envs: dict[str, gym.Env] = {}
    separate_of, alone_of = {}, {}
    for prefix, spec in PROTOCOLS.items():
        settings = native(spec)
        name = f"gym.make ALE/Pong-v5, cap {settings['max_num_frames_per_episode']:,}"
        if name not in envs:
            envs[name] = gym.make("ALE/Pong-v5", **settings)
        separate_of[prefix] = name
    for prefix in PROTOCOLS:
        protocol = gym.make(f"arcadebench/{prefix}-Pong-v0")
        # gym.make's own wrappers around the protocol env's emulator: the raw env, same instance
        alone_of[prefix] = f"{prefix} emulator alone (gym.make's wrappers)"
        envs[alone_of[prefix]] = OrderEnforcing(PassiveEnvChecker(protocol.unwrapped))
        envs[f"arcadebench/{prefix}-Pong-v0"] = protocol
    cases = {"ALEInterface (4 act + RGB screen)": ale_player(actions)}
    cases.update({name: step_player(env, actions) for name, env in envs.items()})
    samples = interleave(cases, args.rounds)
    for name, env in envs.items():
        if name.startswith(("gym.make", "arcadebench")):
            env.close()
    base = next(name for name in cases if name.startswith("gym.make"))
    rows, report = [], {}
    for name in cases:
        prefix = name.split("/")[-1].split("-")[0]
        reference = alone_of[prefix] if name.startswith("arcadebench") else base
        row = [
            name,
            args.steps / median(samples[name]),
            1e6 * median(samples[name]) / args.steps,
            ratio(samples, name, reference),
            "{:.2f}-{:.2f}".format(*ratio_range(samples, name, reference)),
            reference,
        ]
        rows.append(row)
        report[name] = {
            "seconds": samples[name],
            "steps_per_s": row[1],
            "x_reference": row[3],
            "reference": reference,
        }
        if name.startswith("arcadebench"):
            report[name]["x_separate_gym_make"] = ratio(samples, name, separate_of[prefix])
    for prefix in PROTOCOLS:
        name = f"arcadebench/{prefix}-Pong-v0"
        with_layers = gym.make(name)
        report[name]["decomposition"] = layer_cost(with_layers, actions, args.rounds)
        with_layers.close()
    targets = [
        Target(
            f"{prefix} protocol env / its raw ALE env (in-run)",
            report[f"arcadebench/{prefix}-Pong-v0"]["decomposition"]["emulator_share"],
            ">=",
            0.95,
        )
        for prefix in PROTOCOLS
    ]
    return report, targets, rows


def retro(
    args: argparse.Namespace,
) -> tuple[dict[str, dict[str, Any]], list[Target], list[list[object]]]:
    from sonic_helpers import (  # type: ignore[import-not-found]  # tests/, on sys.path at run time only
        TEST_LEVELS,
        write_sonic_airstriker,
    )

    with tempfile.TemporaryDirectory() as tmp:
        spec = str(write_sonic_airstriker(Path(tmp)))
        env = arcadebench.make(spec, TEST_LEVELS[0])
        raw = env.unwrapped
        pads, choices = raw.action_space, env.action_space
        if not isinstance(pads, gym.spaces.MultiBinary) or not isinstance(
            choices, gym.spaces.Discrete
        ):
            raise TypeError(f"expected MultiBinary buttons under Discrete, got {pads}, {choices}")
        rng = np.random.default_rng(0)
        buttons = rng.integers(0, 2, size=(args.retro_steps, pads.shape[0])).astype(np.int8)
        discrete = rng.integers(choices.n, size=args.retro_steps).tolist()

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
            "Sonic protocol env (Airstriker)": step_player(env, discrete),
        }
        samples = interleave(cases, args.rounds)
        decomposition = layer_cost(env, discrete, args.rounds)
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
        "Sonic protocol env / raw RetroEnv (in-run)", decomposition["emulator_share"], ">=", 0.95
    )
    report = {
        name: {"seconds": samples[name], "steps_per_s": row[1], "x_reference": row[3]}
        for name, row in zip(cases, rows, strict=True)
    }
    report["Sonic protocol env (Airstriker)"]["decomposition"] = decomposition
    return report, [target], rows


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--steps", type=int, default=1000)
    cli.add_argument("--rounds", type=int, default=15)
    cli.add_argument("--retro-steps", type=int, default=300)
    args = cli.parse_args()
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
    decompositions = [
        [name, d["decomposition"]["layers_us_per_step"], d["decomposition"]["emulator_share"]]
        for name, d in {**atari_report, **retro_report}.items()
        if "decomposition" in d
    ]
    print(
        table(
            ["protocol env", "our layers us/step", "emulator's share of a step"],
            decompositions,
            "the same steps, timed inside and around the emulator's step (medians of rounds)",
            digits=3,
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
