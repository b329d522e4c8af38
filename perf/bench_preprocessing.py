"""Standard observation (obs_type="standard") against Gymnasium's AtariPreprocessing + frame stack.

Both produce the same observations (grayscale, max-pool of a step's last two frames, INTER_AREA
84x84, stack of 4; tests/test_wrappers_observations.py checks them equal) from the same ALE
settings (sticky actions 0.25, full action set, 108,000-frame cap), Gymnasium's as
``FrameStackObservation(AtariPreprocessing(AtariEnv(frameskip=1), frame_skip=4, noop_max=0,
screen_size=84), 4)``. Cases, stepped with the same random actions in interleaved rounds, each
round from a reset with the same seed, so all play the same frames (an episode that ends is
reset without a seed, inside the timing):

- ``AtariPreprocessing + stack``: the reference (ratio 1);
- ``StandardAtariEnv``: ours, the env the protocol builders use for ``obs_type="standard"``;
- ``... whole-frame resize``: ours with the banded resize off (every frame resized whole);
- ``protocol env (HWR), standard``: ``gym.make("arcadebench/HWR-Pong-v0", obs_type="standard")``,
  i.e. ours plus the protocol wrappers, the monitor and Gymnasium's checker wrappers;
- ``AtariEnv RGB (no preprocessing)``: the emulator with ale-py's RGB observation, for scale.

All cases drive one emulator (ALE object): separate ALE instances run a few per cent apart on
their own, which would blur the ratios.

Then the same first three cases on other games (fewer steps), since the banded resize saves more
where less of the screen changes.

The machine's speed drifts by tens of per cent within seconds, so besides the interleaved
ratios each case times the emulator (ALE's ``act``) inside its own steps; the in-run ratio
``(1 + rest/emulator)_reference / (1 + rest/emulator)_case`` compares what each adds to the same
emulation and does not depend on how fast the machine ran (the target uses it).

    .venv/bin/python perf/bench_preprocessing.py [--steps 1000] [--rounds 21]

Target (issue 9): StandardAtariEnv >= 1.5x AtariPreprocessing + stack on Pong.
Writes perf/results/bench_preprocessing.json.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium as gym
import numpy as np
from _timing import (
    Target,
    TimedCalls,
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
from ale_py.env import AtariEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

import arcadebench  # noqa: F401 - registers the ids
from arcadebench.wrappers import StandardAtariEnv

NATIVE = {
    "repeat_action_probability": 0.25,
    "full_action_space": True,
    "max_num_frames_per_episode": 108_000,
}
BASE = "AtariPreprocessing + stack"
OURS = "StandardAtariEnv"
WHOLE = "StandardAtariEnv, whole-frame resize"


def reference(game: str) -> gym.Env:
    env = AtariPreprocessing(
        AtariEnv(game, frameskip=1, **NATIVE), frame_skip=4, noop_max=0, screen_size=84
    )
    return FrameStackObservation(env, 4)


def whole_frame(game: str) -> gym.Env:
    env = StandardAtariEnv(game, frameskip=4, **NATIVE)
    env._resize._bands = 0  # the ablation: every frame resized whole
    return env


def one_emulator(envs: dict[str, gym.Env]) -> dict[str, gym.Env]:
    """Make every env drive the first one's ALE (all have the same ALE settings).

    Separate ALE instances run a few per cent apart on their own (memory placement), which
    would blur the comparison; every round resets with a seed, so sharing is safe.
    """
    first, *others = envs.values()
    for env in others:
        env.unwrapped.ale = first.unwrapped.ale
    return envs


def breakdown(game: str, actions: list[int], rounds: int) -> dict[str, float]:
    """Where a StandardAtariEnv step's time goes (us/step; medians of ``rounds`` passes).

    Three nested stand-ins time, inside the same steps, the emulator (``ale.act``), ALE's
    grayscale screens (``getScreenGrayscale``, two a step) and the banded resize; the rest is
    the step's Python, the max-pool, the stack and ``info``.
    """
    env = StandardAtariEnv(game, frameskip=4, **NATIVE)
    emulator = TimedCalls(env.ale, "act")
    screens = TimedCalls(emulator, "getScreenGrayscale")
    resize = TimedCalls(env._resize, "update")
    env.ale, env._resize = screens, resize
    play = step_player(env, actions)
    names = ("emulator", "grayscale screens", "resize", "rest", "step")
    parts: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        emulator.seconds = screens.seconds = resize.seconds = 0.0
        seconds = play()
        parts["emulator"].append(emulator.seconds)
        parts["grayscale screens"].append(screens.seconds)
        parts["resize"].append(resize.seconds)
        parts["rest"].append(seconds - emulator.seconds - screens.seconds - resize.seconds)
        parts["step"].append(seconds)
    env.close()
    return {name: 1e6 * median(values) / len(actions) for name, values in parts.items()}


def main() -> None:
    args = parser(__doc__)
    args.add_argument("--steps", type=int, default=1000)
    args.add_argument("--rounds", type=int, default=21)
    args.add_argument("--games", nargs="*", default=["breakout", "space_invaders", "ms_pacman"])
    args = args.parse_args()
    actions = np.random.default_rng(0).integers(18, size=args.steps).tolist()
    envs = one_emulator(
        {
            BASE: reference("pong"),
            OURS: StandardAtariEnv("pong", frameskip=4, **NATIVE),
            WHOLE: whole_frame("pong"),
            "protocol env (HWR), standard": gym.make(
                "arcadebench/HWR-Pong-v0", obs_type="standard"
            ),
            "AtariEnv RGB (no preprocessing)": AtariEnv("pong", frameskip=4, **NATIVE),
        }
    )
    emulator = TimedCalls(envs[OURS].unwrapped.ale, "act")  # the same emulator for all
    for env in envs.values():
        env.unwrapped.ale = emulator
    inside: dict[str, list[float]] = {name: [] for name in envs}

    def case(name: str) -> Callable[[], float]:
        play = step_player(envs[name], actions)

        def run() -> float:
            emulator.seconds = 0.0
            seconds = play()
            inside[name].append(emulator.seconds)
            return seconds

        return run

    samples = interleave({name: case(name) for name in envs}, args.rounds)
    inside = {name: values[-args.rounds :] for name, values in inside.items()}  # no warm-up
    # in-run: (1 + rest/emulator of the reference) / (1 + rest/emulator of the case), per round
    in_run = {
        name: median(
            [
                (tb / eb) / (tc / ec)
                for tc, ec, tb, eb in zip(
                    samples[name], inside[name], samples[BASE], inside[BASE], strict=True
                )
            ]
        )
        for name in envs
    }
    rows = [
        [
            name,
            args.steps / median(samples[name]),
            1e6 * median(samples[name]) / args.steps,
            ratio(samples, name, BASE),
            "{:.2f}-{:.2f}".format(*ratio_range(samples, name, BASE)),
            in_run[name],
            1e6 * median(inside[name]) / args.steps,
        ]
        for name in envs
    ]
    columns = [
        "case",
        "steps/s",
        "us/step",
        "x reference",
        "min-max",
        "x ref. in-run",
        "emulator us/step",
    ]
    print(
        table(
            columns,
            rows,
            f"Pong, random actions, {args.steps:,} steps x {args.rounds} interleaved rounds "
            "(medians; ratio = median of per-round ratios)",
        )
    )
    for env in envs.values():
        env.close()

    other = {}
    for game in args.games:
        game_envs = one_emulator(
            {
                BASE: reference(game),
                OURS: StandardAtariEnv(game, frameskip=4, **NATIVE),
                WHOLE: whole_frame(game),
            }
        )
        short = actions[: args.steps // 2]
        found = interleave(
            {name: step_player(env, short) for name, env in game_envs.items()},
            max(3, args.rounds // 2),
        )
        other[game] = {
            name: {"seconds": found[name], "x_reference": ratio(found, name, BASE)}
            for name in game_envs
        }
        for env in game_envs.values():
            env.close()
    print()
    print(
        table(
            ["game", "StandardAtariEnv x ref", "whole-frame resize x ref"],
            [[g, v[OURS]["x_reference"], v[WHOLE]["x_reference"]] for g, v in other.items()],
            "other games (half the steps, fewer rounds)",
        )
    )
    print()
    parts = breakdown("pong", actions, args.rounds)
    print(
        table(
            ["part", "us/step", "share"],
            [[name, value, value / parts["step"]] for name, value in parts.items()],
            "where a StandardAtariEnv step goes (Pong; nested timers, medians)",
        )
    )
    print()
    targets = report_targets(
        [
            Target(
                "standard preprocessing / AtariPreprocessing+stack (in-run)",
                in_run[OURS],
                ">=",
                1.5,
            )
        ]
    )
    write_json(
        "bench_preprocessing",
        {
            "game": "pong",
            "steps": args.steps,
            "rounds": args.rounds,
            "breakdown_us_per_step": parts,
            "cases": {
                name: {
                    "seconds": samples[name],
                    "steps_per_s": args.steps / median(samples[name]),
                    "x_reference": ratio(samples, name, BASE),
                    "x_reference_range": ratio_range(samples, name, BASE),
                    "x_reference_in_run": in_run[name],
                    "emulator_seconds": inside[name],
                }
                for name in envs
            },
            "other_games": other,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    main()
