"""Standard observation (obs_type="standard") against Gymnasium's AtariPreprocessing + frame stack.

Both produce the same observations (grayscale, max-pool of a step's last two frames, INTER_AREA
84x84, stack of 4) from the same ALE settings (sticky actions 0.25, full action set, 108,000-frame
cap), Gymnasium's as ``FrameStackObservation(AtariPreprocessing(AtariEnv(frameskip=1),
frame_skip=4, noop_max=0, screen_size=84), 4)``. Cases, stepped with the same random actions in
interleaved rounds, each round from a reset with the same seed (an episode that ends is reset
without a seed, inside the timing):

- ``AtariPreprocessing + stack``: the reference (ratio 1);
- ``StandardAtariEnv``: ours, the env the protocol builders use for ``obs_type="standard"``
  (palette-index screens through ALE's grayscale table, changed cells only);
- ``... ALE's grayscale screens``: ours reading ALE's grayscale screens instead of indices (its
  fallback; the lookup's ablation);
- ``... whole frames``: ours without cells (every frame looked up, pooled and resized whole);
- ``protocol env (HWR), standard``: ``gym.make("arcadebench/HWR-Pong-v0", obs_type="standard")``,
  i.e. ours plus the protocol wrappers, the monitor and Gymnasium's checker wrappers (Pong only);
- ``AtariEnv RGB (no preprocessing)``: the emulator with ale-py's RGB observation, for scale.

All cases of a game drive one emulator (ALE object): separate ALE instances run a few per cent
apart on their own, which would blur the ratios. Pong with all cases, then the other games with
half the steps: what changes between frames differs from game to game, and so does the
emulator's cost of a step, which bounds every ratio (the RGB case shows the bound).

The machine's speed drifts by tens of per cent within seconds, so besides the interleaved
ratios each case times the emulator inside its own steps: ALE's ``act``, and ``reset_game``,
which emulates an episode's start-up frames (Breakout's short random episodes make that a
visible share). The in-run ratio ``(1 + rest/emulator)_reference / (1 + rest/emulator)_case``
compares what each adds to the same emulation and does not depend on how fast the machine ran
(the targets use it). Its inverse gives the rest a step may cost to meet a target, which the
profile table sets beside where ours goes (nested timers inside the same steps).

Identity: each game's actions are also played, untimed and with the same resets, by ours and by
the plain computation (an ``AtariEnv`` of one frame a step, ALE's grayscale screens, the max of
the last two, ``cv2.resize`` of the whole frame, a stack of 4): every observation must be equal
byte for byte; and by the reference up to the first episode's end (where AtariPreprocessing
stops mid-skip and keeps stale buffers, a documented difference, after which the two play other
random streams).

    .venv/bin/python perf/bench_preprocessing.py [--steps 1000] [--rounds 21] [--games ...]

Targets: StandardAtariEnv >= 1.6x AtariPreprocessing + stack on Pong, >= 1.55x on
Breakout, Space Invaders and Ms. Pac-Man (in-run), observations identical.
Writes perf/results/bench_preprocessing.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import cv2
import gymnasium as gym
import numpy as np
from _timing import (
    Target,
    TimedCalls,
    emulator_rounds,
    in_run_ratios,
    median,
    parser,
    ratio,
    ratio_range,
    report_targets,
    table,
    timed_player,
    write_json,
)
from ale_py.env import AtariEnv
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation

import arcadebench  # noqa: F401 - registers the ids
from arcadebench.wrappers import StandardAtariEnv
from arcadebench.wrappers import observations as observations_module
from arcadebench.wrappers.ale_palette import grayscale_table
from arcadebench.wrappers.observations import _StandardFrame


class Native(TypedDict):
    """``AtariEnv`` arguments every case shares (the protocols' emulator settings, HWR's cap)."""

    repeat_action_probability: float
    full_action_space: bool
    max_num_frames_per_episode: int


NATIVE: Native = {
    "repeat_action_probability": 0.25,
    "full_action_space": True,
    "max_num_frames_per_episode": 108_000,
}
BASE = "AtariPreprocessing + stack"
OURS = "StandardAtariEnv"
GRAY = "StandardAtariEnv, ALE's grayscale screens"
WHOLE = "StandardAtariEnv, whole frames"
PROTOCOL = "protocol env (HWR), standard"
RGB = "AtariEnv RGB (no preprocessing)"
TARGETS = {"pong": 1.6}  # every other game 1.55
OTHER_TARGET = 1.55


def atari(env: gym.Env[Any, Any]) -> AtariEnv:
    """The ``AtariEnv`` at the bottom of ``env``."""
    base = env.unwrapped
    if not isinstance(base, AtariEnv):
        raise TypeError(f"expected an AtariEnv at the bottom of {env}, got {base!r}")
    return base


def reference(game: str) -> gym.Env[Any, Any]:
    env = AtariPreprocessing(
        AtariEnv(game, frameskip=1, **NATIVE), frame_skip=4, noop_max=0, screen_size=84
    )
    return FrameStackObservation(env, 4)


def ours(game: str) -> StandardAtariEnv:
    return StandardAtariEnv(game, frameskip=4, **NATIVE)


def ale_grayscale(game: str) -> StandardAtariEnv:
    """Ours reading ALE's grayscale screens (its fallback): the lookup's ablation."""
    env = ours(game)
    env._indices = False
    env._frame.table = np.arange(256, dtype=np.uint8)
    return env


def whole_frames(game: str) -> StandardAtariEnv:
    """Ours without cells: every frame looked up, pooled and resized whole (the cells' ablation)."""
    env = ours(game)
    height, width = env.ale.getScreenDims()
    env._frame = _StandardFrame(height, width, 84, 2, grayscale_table(game), by_cells=False)
    return env


def cases(game: str, protocol: bool) -> dict[str, gym.Env[Any, Any]]:
    envs: dict[str, gym.Env[Any, Any]] = {
        BASE: reference(game),
        OURS: ours(game),
        GRAY: ale_grayscale(game),
        WHOLE: whole_frames(game),
    }
    if protocol:
        envs[PROTOCOL] = gym.make("arcadebench/HWR-Pong-v0", obs_type="standard", log_dir=False)
    envs[RGB] = AtariEnv(game, frameskip=4, **NATIVE)
    return envs


def one_emulator(envs: dict[str, gym.Env[Any, Any]]) -> TimedCalls:
    """Make every env drive the first one's ALE, timed; returns the timed ALE.

    Separate ALE instances run a few per cent apart on their own (memory placement), which
    would blur the comparison; every round resets with a seed, so sharing is safe. The
    stand-in times ``ale.act`` and ``ale.reset_game`` (emulation all cases do alike) inside
    every case's own steps, for the in-run ratios.
    """
    emulator = TimedCalls(atari(next(iter(envs.values()))).ale, "act", "reset_game")
    for env in envs.values():
        atari(env).ale = emulator  # type: ignore[assignment]  # a stand-in, duck-typed
    return emulator


@dataclass(frozen=True)
class Comparison:
    """Per case: seconds of each round, emulator seconds inside them, in-run ratio."""

    samples: dict[str, list[float]]
    inside: dict[str, list[float]]
    in_run: dict[str, float]

    def us_per_step(self, name: str, steps: int) -> tuple[float, float]:
        """Median emulator and rest (the step's time outside the emulator) per step, in us."""
        rest = [t - e for t, e in zip(self.samples[name], self.inside[name], strict=True)]
        return 1e6 * median(self.inside[name]) / steps, 1e6 * median(rest) / steps


def compare(envs: dict[str, gym.Env[Any, Any]], actions: Sequence[int], rounds: int) -> Comparison:
    """Interleaved rounds of every env: seconds, emulator seconds and in-run ratio per case.

    In-run ratio, per round: ``(1 + rest/emulator)`` of the reference over the case's, where
    rest is a step's time outside ``ale.act`` and ``ale.reset_game``; the median over rounds.
    """
    samples, inside = emulator_rounds(envs, actions, rounds, one_emulator(envs))
    in_run = in_run_ratios(samples, inside, BASE)
    for env in envs.values():
        env.close()
    return Comparison(samples, inside, in_run)


def breakdown(game: str, actions: Sequence[int], rounds: int) -> dict[str, float]:
    """Where a StandardAtariEnv step's time goes (us/step; medians of ``rounds`` passes).

    Nested stand-ins time, inside the same steps, the emulator (``act``, ``reset_game``), the
    two palette-index screens (``getScreen``) and the frame update; the rest is the step's
    Python, the stack's copy, ``info``, the flags and the resets' own work. Inside the update,
    stand-ins for the module's ``numpy`` and ``cv2`` time the change detection (comparison of
    the screens, marks, their sums per cell), the lookup, the max-pool and the resize; its rest
    is finding, gathering and writing back the changed cells, and the update's Python. Every
    timed call adds about 0.3 us to the part that contains it.
    """
    env = ours(game)
    emulator = TimedCalls(env.ale, "act", "reset_game")
    screens = TimedCalls(emulator, "getScreen")
    frame = TimedCalls(env._frame, "update")
    env.ale = screens  # type: ignore[assignment]  # a stand-in, duck-typed
    env._frame = frame  # type: ignore[assignment]  # a stand-in, duck-typed
    detection = TimedCalls(np, "not_equal", "logical_or", "matmul")
    pooling = TimedCalls(detection, "maximum")
    lookup = TimedCalls(cv2, "LUT")
    resize = TimedCalls(lookup, "resize")
    timers = {
        "emulator": emulator,
        "screens": screens,
        "frame update": frame,
        "detection": detection,
        "lookup": lookup,
        "max-pool": pooling,
        "resize": resize,
    }
    play = timed_player(env, actions, list(timers.values()))
    parts: dict[str, list[float]] = {name: [] for name in [*timers, "update: rest", "other"]}
    # the observations module's own globals, replaced for these rounds only
    module, saved = vars(observations_module), {"np": np, "cv2": cv2}
    module.update(np=pooling, cv2=resize)
    try:
        for _ in range(rounds):
            seconds = play()
            for name, timer in timers.items():
                parts[name].append(timer.seconds)
            inside = sum(timers[name].seconds for name in ("detection", "lookup", "max-pool"))
            parts["update: rest"].append(frame.seconds - inside - resize.seconds)
            outside = sum(timers[name].seconds for name in ("emulator", "screens", "frame update"))
            parts["other"].append(seconds - outside)
    finally:
        module.update(saved)
    env.close()
    return {name: 1e6 * median(values) / len(actions) for name, values in parts.items()}


class PlainStandard:
    """The standard observation computed plainly from ALE's grayscale screens (as the tests do):
    an AtariEnv of one frame a step played 4 times a step (the same ALE calls as ours), the max
    of the last two screens, resized whole with INTER_AREA, a stack padded with the reset frame.
    """

    def __init__(self, game: str) -> None:
        self.env = AtariEnv(game, frameskip=1, obs_type="grayscale", **NATIVE)
        self.stack: list[np.ndarray] = []

    @staticmethod
    def _resize(screen: np.ndarray) -> np.ndarray:
        return cv2.resize(screen, (84, 84), interpolation=cv2.INTER_AREA)

    def reset(self, seed: int | None = None) -> np.ndarray:
        self.stack = [self._resize(self.env.reset(seed=seed)[0])] * 4
        return np.stack(self.stack)

    def step(self, action: int) -> tuple[np.ndarray, bool]:
        screens = [self.env.step(action) for _ in range(4)]
        pooled = np.maximum(screens[-2][0], screens[-1][0])
        self.stack = [*self.stack[1:], self._resize(pooled)]
        return np.stack(self.stack), screens[-1][2] or screens[-1][3]


def verify(game: str, actions: Sequence[int]) -> dict[str, int]:
    """Play ``actions`` as a timed round does (seed 0, unseeded resets after an episode's end)
    with ours, the plain computation and the reference; count the equal observations."""
    mine, plain, theirs = ours(game), PlainStandard(game), reference(game)
    obs = mine.reset(seed=0)[0]
    to_plain = [np.array_equal(obs, plain.reset(seed=0))]
    to_reference = [np.array_equal(obs, theirs.reset(seed=0)[0])]
    episodes = 0
    for action in actions:
        obs, _, terminated, truncated, _ = mine.step(action)
        to_plain.append(np.array_equal(obs, plain.step(action)[0]))
        if not episodes:
            theirs_obs = theirs.step(action)[0]
            if not (terminated or truncated):  # AtariPreprocessing's last one is stale
                to_reference.append(np.array_equal(obs, theirs_obs))
        if terminated or truncated:
            episodes += 1
            to_plain.append(np.array_equal(mine.reset()[0], plain.reset()))
    for env in (mine, plain.env, theirs):
        env.close()
    return {
        "steps": len(actions),
        "episodes ended": episodes,
        "obs vs plain": len(to_plain),
        "equal": sum(to_plain),
        "obs vs reference": len(to_reference),
        "equal ": sum(to_reference),
    }


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--steps", type=int, default=1000)
    cli.add_argument("--rounds", type=int, default=21)
    cli.add_argument("--games", nargs="*", default=["breakout", "space_invaders", "ms_pacman"])
    args = cli.parse_args()
    steps: int = args.steps
    rounds: int = args.rounds
    actions: list[int] = np.random.default_rng(0).integers(18, size=steps).tolist()
    found = {"pong": compare(cases("pong", protocol=True), actions, rounds)}
    pong = found["pong"]
    rows = [
        [
            name,
            steps / median(pong.samples[name]),
            1e6 * median(pong.samples[name]) / steps,
            ratio(pong.samples, name, BASE),
            "{:.2f}-{:.2f}".format(*ratio_range(pong.samples, name, BASE)),
            pong.in_run[name],
            pong.us_per_step(name, steps)[0],
        ]
        for name in pong.samples
    ]
    print(
        table(
            [
                "case",
                "steps/s",
                "us/step",
                "x reference",
                "min-max",
                "x ref. in-run",
                "emulator us",
            ],
            rows,
            f"Pong, random actions, {steps:,} steps x {rounds} interleaved rounds "
            "(medians; ratio = median of per-round ratios)",
        )
    )
    short = actions[: steps // 2]
    for game in args.games:
        found[game] = compare(cases(game, protocol=False), short, rounds)
    games = list(found)
    length = {game: steps if game == "pong" else len(short) for game in games}
    print()
    print(
        table(
            ["game", "ours", "(end to end)", "ALE gray screens", "whole frames", "RGB", "target"],
            [
                [
                    game,
                    c.in_run[OURS],
                    ratio(c.samples, OURS, BASE),
                    c.in_run[GRAY],
                    c.in_run[WHOLE],
                    c.in_run[RGB],
                    TARGETS.get(game, OTHER_TARGET),
                ]
                for game, c in found.items()
            ],
            f"x reference, in-run unless said (Pong {steps:,} steps, the others {len(short):,}; "
            f"{rounds} rounds)",
        )
    )
    parts, budget = {}, {}
    for game in games:
        parts[game] = breakdown(game, actions[: length[game]], rounds)
        emulator, rest = found[game].us_per_step(BASE, length[game])
        ours_emulator = found[game].us_per_step(OURS, length[game])[0]
        # the time outside the emulator at which ours would be exactly at the target, in-run
        allowed = (1 + rest / emulator) / TARGETS.get(game, OTHER_TARGET) - 1
        budget[game] = allowed * ours_emulator
    print()
    print(
        table(
            [
                "game",
                "emulator",
                "screens",
                "frame update",
                "other",
                "ours outside emulator",
                "allowed by target",
                "RGB env",
                "reference",
            ],
            [
                [
                    game,
                    p["emulator"],
                    p["screens"],
                    p["frame update"],
                    p["other"],
                    found[game].us_per_step(OURS, length[game])[1],
                    budget[game],
                    found[game].us_per_step(RGB, length[game])[1],
                    found[game].us_per_step(BASE, length[game])[1],
                ]
                for game, p in parts.items()
            ],
            "where a StandardAtariEnv step goes, us/step (nested timers, medians), and the time "
            "outside the emulator in the rounds above (medians): ours, what the target allows, "
            "the RGB env's, the reference's",
        )
    )
    print()
    stages = ["detection", "lookup", "max-pool", "resize", "update: rest"]
    print(
        table(
            ["game", "frame update", *stages],
            [
                [game, p["frame update"], *(p[stage] for stage in stages)]
                for game, p in parts.items()
            ],
            "where the frame update goes, us/step (timed calls inside it, medians; detection: "
            "compare the screens, mark, sum per cell; rest: find, gather and write back the "
            "changed cells, Python)",
        )
    )
    identity = {game: verify(game, actions[: length[game]]) for game in games}
    print()
    print(
        table(
            ["game", *identity["pong"]],
            [[game, *counts.values()] for game, counts in identity.items()],
            "identity over the same steps: ours vs the plain computation (every observation, "
            "resets included) and vs the reference (until the first episode's last step)",
        )
    )
    print()
    targets = [
        Target(
            f"standard preprocessing / AtariPreprocessing+stack, {game} (in-run)",
            c.in_run[OURS],
            ">=",
            TARGETS.get(game, OTHER_TARGET),
        )
        for game, c in found.items()
    ]
    for game, counts in identity.items():
        equal = counts["equal"] + counts["equal "]
        compared = counts["obs vs plain"] + counts["obs vs reference"]
        targets.append(Target(f"observations identical, {game}", equal / compared, ">=", 1.0, ""))
    write_json(
        "bench_preprocessing",
        {
            "steps": steps,
            "rounds": rounds,
            "games": {
                game: {
                    "steps": length[game],
                    "cases": {
                        name: {
                            "seconds": c.samples[name],
                            "emulator_seconds": c.inside[name],
                            "x_reference": ratio(c.samples, name, BASE),
                            "x_reference_range": ratio_range(c.samples, name, BASE),
                            "x_reference_in_run": c.in_run[name],
                        }
                        for name in c.samples
                    },
                    "breakdown_us_per_step": parts[game],
                    "allowed_rest_us_per_step": budget[game],
                    "identity": identity[game],
                }
                for game, c in found.items()
            },
            "targets": report_targets(targets),
        },
    )


if __name__ == "__main__":
    main()
