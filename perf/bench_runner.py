"""Runner throughput with 1 and 2 workers, and what a job and an episode cost besides playing.

Workloads (random agent, compliant settings, fresh log directories), each run with 1 and 2
workers in interleaved rounds:

- ``balanced``: Phoenix, 4 seeds, 3,000 agent steps per job (``steps=``, so the jobs are equal):
  the speed-up the backend gives (target: 2 workers >= 1.8x 1 worker on this 2-core machine);
- ``atari5 main job`` (``--main``): the README's job, the five Atari-5 games, 2 episodes each,
  whose wall time at 2 workers is set by its longest game.

Throughput is emulator frames per second of wall time, scoring included (``reps=0``). Then the
fixed costs, each the median of interleaved repetitions:

- a seeded reset with ale-py's ROM reload (``AtariEnv``), without it (the protocol envs'
  ``ReloadFreeAtariEnv``, byte-identical) and an unseeded reset (the episode-start floor);
- a job of one step (worker process start, env, log, scoring): the runner's cost per job.

    .venv/bin/python perf/bench_runner.py [--steps 3000] [--rounds 3] [--main]

Writes perf/results/bench_runner.json.
"""

from __future__ import annotations

import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypedDict

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
from ale_py.env import AtariEnv

import arcadebench
from arcadebench.benchmarks.envs.reload_free import ReloadFreeAtariEnv
from arcadebench.benchmarks.runner.messages import EpisodeEnded
from arcadebench.errors import ArcadebenchError, NonCompliantWarning


class NativeSettings(TypedDict):
    """``AtariEnv`` arguments: the protocols' emulator settings, HWR/Atari-5 frame cap."""

    frameskip: int
    repeat_action_probability: float
    full_action_space: bool
    max_num_frames_per_episode: int


NATIVE: NativeSettings = {
    "frameskip": 4,
    "repeat_action_probability": 0.25,
    "full_action_space": True,
    "max_num_frames_per_episode": 108_000,
}


def runner_case(
    workers: int,
    frames: list[int],
    *,
    games: Sequence[str] | None = ("phoenix",),
    seeds: Sequence[int] = (0, 1, 2, 3),
    **quota: Any,
) -> Callable[[], float]:
    """A case: ``arcadebench.evaluate`` of the workload; appends the frames played."""

    def run() -> float:
        played = 0

        def count(event: object) -> None:
            nonlocal played
            if isinstance(event, EpisodeEnded):
                played += event.record["frames"]

        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            try:
                arcadebench.evaluate(
                    "random",
                    "atari5",
                    list(games) if games else None,
                    seeds=list(seeds),
                    workers=workers,
                    log_dir=tmp,
                    progress="off",
                    on_event=count,
                    reps=0,
                    **quota,
                )
            except ArcadebenchError as error:  # short jobs: no episode ended, nothing to score
                if "no complete episode" not in str(error):
                    raise
            seconds = time.perf_counter() - start
        frames.append(played)
        return seconds

    return run


def scaling(
    steps: int, rounds: int, main_job: bool
) -> tuple[list[list[object]], dict[str, dict[str, Any]], list[Target]]:
    """Runner workloads with 1 and 2 workers: table rows, report, target."""
    frames: dict[str, list[int]] = {}
    cases: dict[str, Callable[[], float]] = {}
    workloads: dict[str, dict[str, Any]] = {"balanced": {"steps": steps}}
    if main_job:
        workloads["atari5 main job"] = {"episodes": 2, "games": None, "seeds": (0,)}
    for label, quota in workloads.items():
        for workers in (1, 2):
            name = f"{label}, {workers} worker{'s' if workers > 1 else ''}"
            frames[name] = []
            cases[name] = runner_case(workers, frames[name], **quota)
    # warm-up: the first evaluate() imports everything (and starts a forkserver where workers
    # use one); not a round
    runner_case(1, [], seeds=(0,), steps=10)()
    samples = interleave(cases, rounds, warmup=0)
    rows: list[list[object]] = []
    report: dict[str, dict[str, Any]] = {}
    for name in cases:
        base = name.rsplit(",", 1)[0] + ", 1 worker"
        played = median(frames[name])
        rows.append(
            [
                name,
                median(samples[name]),
                int(played),
                played / median(samples[name]),
                ratio(samples, name, base),
                "{:.2f}-{:.2f}".format(*ratio_range(samples, name, base)),
            ]
        )
        report[name] = {
            "seconds": samples[name],
            "frames": frames[name],
            "frames_per_s": played / median(samples[name]),
            "x_1_worker": ratio(samples, name, base),
        }
    target = Target(
        "runner 2 workers / 1 worker (balanced)",
        ratio(samples, "balanced, 2 workers", "balanced, 1 worker"),
        ">=",
        1.8,
    )
    return rows, report, [target]


def reset_costs(rounds: int) -> dict[str, float]:
    """Median seconds of a seeded reset with and without the ROM reload, and unseeded."""
    reload, free = AtariEnv("qbert", **NATIVE), ReloadFreeAtariEnv("qbert", **NATIVE)
    seeds = iter(range(10**6))

    def timed(reset: Callable[[], object], n: int = 10) -> Callable[[], float]:
        def run() -> float:
            start = time.perf_counter()
            for _ in range(n):
                reset()
            return (time.perf_counter() - start) / n

        return run

    samples = interleave(
        {
            "seeded reset, ROM reload (AtariEnv)": timed(lambda: reload.reset(seed=next(seeds))),
            "seeded reset, reload-free": timed(lambda: free.reset(seed=next(seeds))),
            "unseeded reset": timed(lambda: free.reset()),
        },
        rounds,
    )
    reload.close()
    free.close()
    return {name: median(values) for name, values in samples.items()}


def job_cost(rounds: int) -> float:
    """Median wall seconds of a job of one one-step episode (process, env, log, scoring)."""
    frames: list[int] = []
    one_step = {"max_episode_frames": 4}  # a deviation: episodes of one step
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        samples = interleave(
            {"job": runner_case(1, frames, seeds=(0,), episodes=1, env_kwargs=one_step)},
            max(3, rounds),
            warmup=1,
        )
    return median(samples["job"])


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--steps", type=int, default=3000, help="agent steps per balanced job")
    cli.add_argument("--rounds", type=int, default=3)
    cli.add_argument("--main", action="store_true", help="also the Atari-5 main job")
    args = cli.parse_args()
    rows, report, targets = scaling(args.steps, args.rounds, args.main)
    print(
        table(
            ["workload", "wall s", "frames", "frames/s", "x 1 worker", "min-max"],
            rows,
            f"random agent; {args.rounds} interleaved rounds (medians)",
        )
    )
    resets = reset_costs(max(5, args.rounds))
    per_job = job_cost(args.rounds)
    print()
    print(
        table(
            ["cost", "ms"],
            [[name, 1e3 * seconds] for name, seconds in resets.items()]
            + [["a job of one one-step episode (process, env, log, scoring)", 1e3 * per_job]],
            "fixed costs (Q*bert; medians)",
        )
    )
    print()
    write_json(
        "bench_runner",
        {
            "steps_per_job": args.steps,
            "rounds": args.rounds,
            "runs": report,
            "reset_seconds": resets,
            "one_step_job_seconds": per_job,
            "targets": report_targets(targets),
        },
    )


if __name__ == "__main__":
    main()
