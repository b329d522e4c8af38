"""The Ray backend against the local one: what a job costs, and the throughput of short jobs.

Every job is one episode of SABER Pong cut at ``--frames`` emulator frames (a deviation, warned
and ignored here), played by the random agent, so a job is almost all fixed cost: a process
started, arcadebench and the emulator imported, the ROM loaded, the first reset, the log opened
and each record written, the result sent back. Runs go through ``arcadebench.evaluate`` (the
user's view: planning, the backend, scoring with ``reps=0``), each into a fresh log directory.

1. The fixed cost of a job, with one job at a time (``workers=1``; a Ray instance with 1 CPU):
   runs of 1 job and of ``1 + --jobs`` jobs, in interleaved rounds; a job's cost is the median
   over the rounds of ``(t(1 + N) - t(1)) / N``, and ``t(1)`` is the run's own overhead plus
   one job. Beside them, what Ray itself takes: a task doing nothing in a fresh worker process
   (the backend's ``max_calls=1``) and in a reused one, and the same with arcadebench imported
   and a Pong environment made and reset.
2. Throughput: a run of ``--many`` (500) such jobs with 2 workers (local) and on a Ray instance
   with 2 CPUs, interleaved rounds: jobs per second.
3. What ``--backend ray`` without ``--address`` adds to a run: starting and stopping a local
   Ray instance (``ray.init`` + ``ray.shutdown``, medians of ``--rounds``).

The Ray instances are started once per part (``ray.init(address="local")``), so parts 1 and 2
time the backend, not Ray's start-up, which part 3 times on its own.

    .venv/bin/python perf/bench_ray.py [--jobs 10] [--many 500] [--frames 400] [--rounds 3]
                                       [--many-rounds 1]

Writes perf/results/bench_ray.json.
"""

from __future__ import annotations

import tempfile
import time
import warnings
from collections.abc import Callable
from typing import Any, Literal

from _timing import interleave, median, parser, table, write_json

import arcadebench
from arcadebench.errors import NonCompliantWarning

GAME = "pong"


BACKENDS: tuple[Literal["local", "ray"], ...] = ("local", "ray")


def run_case(
    backend: Literal["local", "ray"], jobs: int, workers: int, frames: int
) -> Callable[[], float]:
    """A case: ``evaluate`` of ``jobs`` one-episode jobs; returns its wall seconds."""

    def run() -> float:
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore", NonCompliantWarning)
            start = time.perf_counter()
            arcadebench.evaluate(
                "random",
                "saber",
                [GAME],
                episodes=1,
                seeds=list(range(jobs)),
                workers=workers,
                log_dir=tmp,
                backend=backend,
                env_kwargs={"max_episode_frames": frames},
                progress="off",
                reps=0,
            )
            return time.perf_counter() - start

    return run


def start_ray(cpus: int) -> Any:
    """A local Ray instance with ``cpus`` CPUs; returns the ``ray`` module."""
    import ray

    ray.init(
        address="local",
        num_cpus=cpus,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    return ray


def nothing() -> None:
    """A Ray task that does nothing."""


def make_and_reset() -> None:
    """A Ray task that imports arcadebench and makes and resets a SABER Pong environment."""
    from arcadebench.benchmarks.envs.factory import make
    from arcadebench.specs import load_spec

    env = make(load_spec("saber"), GAME, log_dir=False)
    env.reset(seed=0)
    env.close()


def task_case(ray: Any, function: Callable[[], None], fresh: bool) -> Callable[[], float]:
    """A case: 5 tasks of ``function`` one after the other; seconds per task."""
    task = ray.remote(num_cpus=1, max_calls=1 if fresh else 0)(function)

    def run() -> float:
        start = time.perf_counter()
        for _ in range(5):
            ray.get(task.remote())
        return (time.perf_counter() - start) / 5

    return run


def fixed_costs(jobs: int, frames: int, rounds: int) -> dict[str, Any]:
    """Part 1: runs of 1 and 1 + ``jobs`` jobs, one at a time, on each backend; Ray's tasks."""
    ray = start_ray(1)
    try:
        cases = {
            f"{backend}, {n} job{'s' if n > 1 else ''}": run_case(backend, n, 1, frames)
            for backend in BACKENDS
            for n in (1, 1 + jobs)
        }
        samples = interleave(cases, rounds)
        tasks = interleave(
            {
                f"{name}, {'fresh' if fresh else 'reused'} worker": task_case(ray, fn, fresh)
                for name, fn in (("empty task", nothing), ("make + reset", make_and_reset))
                for fresh in (True, False)
            },
            rounds,
        )
    finally:
        ray.shutdown()
    report: dict[str, Any] = {
        "samples": samples,
        "ray_task_s": {name: median(values) for name, values in tasks.items()},
    }
    for backend in BACKENDS:
        one, many = samples[f"{backend}, 1 job"], samples[f"{backend}, {1 + jobs} jobs"]
        report[backend] = {
            "one_job_run_s": median(one),
            "per_job_s": median([(m - o) / jobs for o, m in zip(one, many, strict=True)]),
        }
    return report


def throughput(many: int, frames: int, rounds: int) -> dict[str, Any]:
    """Part 2: ``many`` jobs with 2 workers (local) and on 2 Ray CPUs."""
    ray = start_ray(2)
    try:
        samples = interleave(
            {backend: run_case(backend, many, 2, frames) for backend in BACKENDS},
            rounds,
            warmup=0,
        )
    finally:
        ray.shutdown()
    return {
        backend: {"seconds": samples[backend], "jobs_per_s": many / median(samples[backend])}
        for backend in samples
    }


def ray_start_stop(rounds: int) -> float:
    """Part 3: median seconds of starting and stopping a local Ray instance with 2 CPUs."""

    def cycle() -> float:
        start = time.perf_counter()
        start_ray(2).shutdown()
        return time.perf_counter() - start

    return median(interleave({"ray": cycle}, rounds, warmup=0)["ray"])


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--jobs", type=int, default=10, help="extra jobs for the per-job cost")
    cli.add_argument("--many", type=int, default=500, help="jobs of the throughput run")
    cli.add_argument("--frames", type=int, default=400, help="emulator frames per job")
    cli.add_argument("--rounds", type=int, default=3, help="rounds of parts 1 and 3")
    cli.add_argument("--many-rounds", type=int, default=1, help="rounds of part 2")
    args = cli.parse_args()

    costs = fixed_costs(args.jobs, args.frames, args.rounds)
    print(
        table(
            ["backend", "run of 1 job s", "per extra job ms"],
            [
                [backend, costs[backend]["one_job_run_s"], 1e3 * costs[backend]["per_job_s"]]
                for backend in BACKENDS
            ],
            f"fixed cost of a job: one {args.frames}-frame episode of Pong, 1 worker / 1 Ray CPU; "
            f"runs of 1 and {1 + args.jobs} jobs, {args.rounds} interleaved rounds (medians)",
        )
    )
    print()
    print(
        table(
            ["Ray task", "ms"],
            [[name, 1e3 * seconds] for name, seconds in costs["ray_task_s"].items()],
            "where a Ray job's cost goes (5 tasks in a row, medians)",
        )
    )
    rates = throughput(args.many, args.frames, args.many_rounds)
    print()
    print(
        table(
            ["backend", "wall s", "jobs/s", "x local"],
            [
                [
                    backend,
                    median(rates[backend]["seconds"]),
                    rates[backend]["jobs_per_s"],
                    rates[backend]["jobs_per_s"] / rates["local"]["jobs_per_s"],
                ]
                for backend in BACKENDS
            ],
            f"a run of {args.many} such jobs, 2 workers / 2 Ray CPUs, "
            f"{args.many_rounds} round(s) (medians)",
        )
    )
    start_stop = ray_start_stop(args.rounds)
    print()
    print(
        table(
            ["cost", "s"],
            [
                [
                    "a local Ray instance started and stopped (--backend ray, no --address)",
                    start_stop,
                ]
            ],
            f"Ray's own start-up ({args.rounds} rounds, median)",
        )
    )
    write_json(
        "bench_ray",
        {
            "frames_per_job": args.frames,
            "extra_jobs": args.jobs,
            "rounds": args.rounds,
            "fixed_costs": costs,
            "many_jobs": args.many,
            "many_rounds": args.many_rounds,
            "throughput": rates,
            "ray_start_stop_s": start_stop,
        },
    )


if __name__ == "__main__":
    main()
