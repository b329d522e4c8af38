"""Scaling: the runner with 1 and 2 workers, and the batched path against raw AtariVectorEnv.

1. The runner (processes, one env each): bench_runner.py's balanced workload (Phoenix, 4 seeds,
   equal jobs) with 1 and 2 workers, interleaved rounds.
2. The batched standard path (``arcadebench.make_vec(..., obs_type="standard")``: ale-py's
   ``AtariVectorEnv`` in C++ threads, the protocol's vector wrappers and per-env episode
   accounting, no log) against raw ``AtariVectorEnv`` configured for the same observation
   (grayscale, max-pool, 84x84, stack of 4) and native settings (sticky 0.25, full action set,
   frame skip 4, frame cap, no no-ops, no FIRE reset, no reward clipping, same-step autoreset)
   on Pong with the same number of envs (2 = the cores, and 8), the same random actions,
   interleaved rounds. ``raw + 8 us`` is raw with 8 us of Python between steps: with a small
   batch, any gap between two steps (an agent, a wrapper) may also let ale-py's threads fall
   asleep, which can cost more than the gap itself. envpool, when installed, is measured the
   same way (``envpool.make_gymnasium("Pong-v5", ...)``, the same settings).
3. The batched observations against the single env's (``arcadebench.make(...,
   obs_type="standard")``) for the same seeds (ones ALE's vector env takes) and actions, until
   every env's first episode ends: how many observations are equal, and how the final
   observations (``info["final_obs"]``) differ.

    .venv/bin/python perf/bench_vector.py [--steps 1000] [--rounds 15] [--runner-rounds 3]

Targets: runner 2 workers >= 1.8x 1 worker; batched standard path >= 0.95x raw
AtariVectorEnv with 2 and 8 envs. The batched ratio is checked in-run, as
bench_preprocessing does: both envs' ale-py ``send``/``recv`` are timed inside their own steps,
and the ratio is ``(step / send-recv)`` of the raw env over make_vec's, per round, whose median
the thread wake-ups above leave far less noisy than the end-to-end ratio (printed too); a
wake-up our layers cause lands inside ``recv`` and is not charged to them.
Writes perf/results/bench_vector.json.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from _timing import (
    Target,
    TimedCalls,
    in_run_ratios,
    interleave,
    median,
    parser,
    ratio,
    ratio_range,
    report_targets,
    table,
    write_json,
)
from ale_py.vector_env import AtariVectorEnv
from bench_runner import scaling

import arcadebench
from arcadebench.benchmarks.envs.batched import AtariProtocolVectorEnv

RAW = "raw AtariVectorEnv"
OURS = "make_vec SABER"
Rows = list[list[object]]


def raw_env(num_envs: int, cap: int) -> AtariVectorEnv:
    return AtariVectorEnv(
        "pong",
        num_envs,
        repeat_action_probability=0.25,
        full_action_space=True,
        frameskip=4,
        max_num_frames_per_episode=cap,
        noop_max=0,
        use_fire_reset=False,
        episodic_life=False,
        reward_clipping=False,
        autoreset_mode="SameStep",
    )


def player(
    env: Any, actions: Sequence[np.ndarray], gap: float = 0.0, seeded: bool = True
) -> Callable[[], float]:
    """A case stepping a batch (ale-py's, ours or envpool's) through ``actions``; seconds."""
    env.reset(**({"seed": 0} if seeded else {}))  # envpool takes its seed at make
    step = env.step
    clock = time.perf_counter

    def play() -> float:
        start = clock()
        for action in actions:
            step(action)
            if gap:
                until = clock() + gap
                while clock() < until:
                    pass
        return clock() - start

    return play


def envpool_env(num_envs: int) -> Any:
    """envpool's Pong with the same settings, or ``None`` where envpool is not installed."""
    try:
        import envpool
    except ImportError:
        return None
    return envpool.make_gymnasium(
        "Pong-v5",
        num_envs=num_envs,
        seed=0,
        repeat_action_probability=0.25,
        full_action_space=True,
        noop_max=1,
        reward_clip=False,
        episodic_life=False,
        max_episode_steps=27_000,
    )


def time_inside(env: Any) -> TimedCalls:
    """Time ale-py's ``send``/``recv`` inside the steps of a raw env or of make_vec's adapter."""
    if isinstance(env, AtariVectorEnv):
        inside = TimedCalls(env.ale, "send", "recv")
        env.ale = inside  # type: ignore[assignment]  # a stand-in, duck-typed
        return inside
    base = env.unwrapped
    if not isinstance(base, AtariProtocolVectorEnv):
        raise TypeError(f"expected make_vec's adapter at the bottom of {env}, got {base!r}")
    inside = TimedCalls(base._ale.ale, "send", "recv")
    base._send, base._recv = inside.send, inside.recv
    return inside


def batched(num_envs: int, steps: int, rounds: int) -> tuple[dict[str, Any], Rows]:
    """Interleaved rounds of the raw env, make_vec (HWR, SABER) and the others; report, rows."""
    actions = list(np.random.default_rng(0).integers(18, size=(steps, num_envs)))
    envs: dict[str, Any] = {
        RAW: raw_env(num_envs, 108_000),
        "make_vec HWR": arcadebench.make_vec("hwr", "pong", num_envs, log_dir=False),
        OURS: arcadebench.make_vec("saber", "pong", num_envs, log_dir=False),
    }
    timers = {name: time_inside(env) for name, env in envs.items()}
    inside: dict[str, list[float]] = {name: [] for name in envs}

    def timed(name: str) -> Callable[[], float]:
        play = player(envs[name], actions)

        def run() -> float:
            timers[name].seconds = 0.0
            seconds = play()
            inside[name].append(timers[name].seconds)
            return seconds

        return run

    cases = {name: timed(name) for name in envs}
    gap_env = raw_env(num_envs, 108_000)
    cases["raw + 8 us between steps"] = player(gap_env, actions, gap=8e-6)
    pool = envpool_env(num_envs)
    if pool is not None:
        cases["envpool"] = player(pool, actions, seeded=False)
    samples = interleave(cases, rounds)
    for env in [*envs.values(), gap_env, *([pool] if pool is not None else [])]:
        env.close()
    inside = {name: values[-rounds:] for name, values in inside.items()}  # no warm-up
    # in-run, per round: (step / send-recv) of the raw env over the case's
    in_run = in_run_ratios(samples, inside, RAW)
    rows: Rows = [
        [
            f"{name}, {num_envs} envs",
            num_envs * steps / median(samples[name]),
            ratio(samples, name, RAW),
            "{:.2f}-{:.2f}".format(*ratio_range(samples, name, RAW)),
            in_run.get(name, "-"),
            1e6 * median([t - e for t, e in zip(samples[name], inside[name], strict=True)]) / steps
            if name in inside
            else "-",
        ]
        for name in cases
    ]
    report: dict[str, Any] = {
        name: {
            "seconds": samples[name],
            "env_steps_per_s": num_envs * steps / median(samples[name]),
            "x_raw": ratio(samples, name, RAW),
            **(
                {
                    "send_recv_seconds": inside[name],
                    "x_raw_in_run": in_run[name],
                    "outside_send_recv_us_per_batch_step": 1e6
                    * median([t - e for t, e in zip(samples[name], inside[name], strict=True)])
                    / steps,
                }
                if name in inside
                else {}
            ),
        }
        for name in cases
    }
    return report, rows


def identity(games: list[str], num_envs: int) -> tuple[dict[str, Any], Rows]:
    """make_vec's standard observations against the single env's, same seeds and actions.

    Seeds whose ALE seed is non-negative (ALE's vector env takes those); every step until
    each env's first episode ends, the obs, rewards and flags compared; for each final
    observation, which frames of its stack differ and in how many pixels.
    """
    seeds = [s for s in range(100) if _atari_env_seed(s) >= 0][:num_envs]
    report: dict[str, Any] = {}
    rows: Rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for game in games:
            vec = arcadebench.make_vec("saber", game, num_envs, log_dir=False)
            singles = [
                arcadebench.make("saber", game, obs_type="standard", log_dir=False) for _ in seeds
            ]
            obs, _ = vec.reset(seed=seeds)
            equal = sum(
                np.array_equal(obs[i], env.reset(seed=s)[0])
                for i, (env, s) in enumerate(zip(singles, seeds, strict=True))
            )
            compared, running = num_envs, set(range(num_envs))
            finals: list[dict[str, Any]] = []
            rng = np.random.default_rng(0)
            while running:
                actions = rng.integers(18, size=num_envs)
                obs, rewards, terminated, truncated, info = vec.step(actions)
                for i in sorted(running):
                    o, r, te, tr, single_info = singles[i].step(int(actions[i]))
                    if (r, te, tr) != (rewards[i], terminated[i], truncated[i]):
                        raise RuntimeError(f"{game}: env {i} left the single env's episode")
                    if te or tr:
                        differ = info["final_obs"][i] != o
                        finals.append(
                            {
                                "end": "game over" if te else "truncated",
                                "frames_differing": int(differ.any(axis=(1, 2)).sum()),
                                "newest_frame_pixels_differing": int(differ[-1].sum()),
                                "frame_in_step": int(single_info["episode_frame_number"]) % 4,
                            }
                        )
                        running.discard(i)
                    else:
                        compared += 1
                        equal += bool(np.array_equal(obs[i], o))
            vec.close()
            for env in singles:
                env.close()
            report[game] = {"compared": compared, "equal": equal, "finals": finals}
            pixels = [f["newest_frame_pixels_differing"] for f in finals]
            rows.append(
                [
                    game,
                    compared,
                    equal,
                    sum(f["frames_differing"] == 0 for f in finals),
                    len(finals),
                    max(f["frames_differing"] for f in finals),
                    f"{min(pixels)}-{max(pixels)}",
                ]
            )
    return report, rows


def _atari_env_seed(seed: int) -> int:
    """ALE's random_seed in ale-py's ``AtariEnv.reset(seed=seed)`` (negative: refused by the
    vector env, which then plays another episode)."""
    return int(np.int32(np.random.SeedSequence(seed).generate_state(2)[1]))


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--steps", type=int, default=1000, help="batch steps per round (2 envs)")
    cli.add_argument("--rounds", type=int, default=15)
    cli.add_argument("--runner-steps", type=int, default=3000)
    cli.add_argument("--runner-rounds", type=int, default=3)
    cli.add_argument("--no-runner", action="store_true", help="skip the runner workloads")
    cli.add_argument(
        "--games",
        nargs="*",
        default=["pong", "breakout", "space_invaders", "ms_pacman", "air_raid"],
    )
    args = cli.parse_args()
    targets: list[Target] = []
    runner_report: dict[str, Any] = {}
    if not args.no_runner:
        runner_rows, runner_report, targets = scaling(args.runner_steps, args.runner_rounds, False)
        print(
            table(
                ["workload", "wall s", "frames", "frames/s", "x 1 worker", "min-max"],
                runner_rows,
                f"runner, random agent, {args.runner_rounds} interleaved rounds (medians)",
            )
        )
        print()
    reports, rows = {}, []
    for num_envs, steps in ((2, args.steps), (8, max(1, args.steps // 4))):
        report, found = batched(num_envs, steps, args.rounds)
        reports[num_envs] = report
        rows += found
        targets.append(
            Target(
                f"batched standard path (SABER) / raw AtariVectorEnv, {num_envs} envs (in-run)",
                report[OURS]["x_raw_in_run"],
                ">=",
                0.95,
            )
        )
    print(
        table(
            ["case", "env steps/s", "x raw", "min-max", "x raw in-run", "outside send/recv us"],
            rows,
            f"Pong, standard observations, random actions, {args.rounds} interleaved rounds "
            "(medians; ratio = median of per-round ratios; us per batch step)",
        )
    )
    if "envpool" not in reports[2]:
        print("envpool: not installed here (not a dependency of arcadebench), so no envpool rows")
    print()
    same, same_rows = identity(args.games, 4)
    print(
        table(
            [
                "game",
                "obs compared",
                "equal",
                "final obs equal",
                "episodes",
                "final: frames differing",
                "final: newest-frame pixels differing",
            ],
            same_rows,
            "make_vec vs the single env, standard observations, 4 envs, same seeds and actions, "
            "first episodes",
        )
    )
    print()
    write_json(
        "bench_vector",
        {
            "steps": args.steps,
            "rounds": args.rounds,
            "runner": runner_report,
            "batched": {str(n): r for n, r in reports.items()},
            "identity": same,
            "envpool": "measured" if "envpool" in reports[2] else "not installed",
            "targets": report_targets(targets),
        },
    )


if __name__ == "__main__":
    main()
