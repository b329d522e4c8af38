"""A training run on Ray: a step whose records go to a remote owner, and 8 envs on two nodes.

The run model across machines (``arcadebench.benchmarks.training.ray_run``): one process, the
run's owner (a Ray actor on the driver's node), holds the log, the counters and the budget; the
environments, anywhere, send it their episodes and report their live totals to it every
``sync_steps`` steps (128 by default), where a local run maps its counters and writes its log
itself. Both parts run on a two-node Ray cluster started here, on this machine: a head with no
CPUs for tasks (the driver and the owner are there) and a worker node with this machine's CPUs.

1. One environment in this process, SABER Pong with RAM observations and the same random
   actions every round (the emulator shared by the cases, as in bench_monitor): its episodes
   logged by a local run (the counters file mapped, the log written here) against relayed to
   the owner (another process: each report and each episode's line a round trip) with the
   default ``sync_steps`` and with a report every step (the worst case, which gives the cost
   of one report). Interleaved rounds of ``--steps`` steps; microseconds per step, and the
   throughput of each case over the local run's.
2. 8 environments, ``--steps8`` random steps each, all of one run: 8 local processes writing
   the run's files against 8 Ray actors on the worker node relayed to the owner on the head.
   Interleaved rounds (the environments are made before the first, not timed); steps per
   second summed over the 8, and the cluster's over the local processes'.

On a real cluster a report crosses the network (about a millisecond where this machine's
loopback takes tens of microseconds): part 1 gives the per-report cost to scale.

    .venv/bin/python perf/bench_ray_training.py [--steps 4000] [--steps8 2000] [--rounds 7]
    .venv/bin/python perf/bench_ray_training.py --quick   # a check that it runs (seconds)

Writes perf/results/bench_ray_training.json.
"""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import numpy as np
from _timing import interleave, median, parser, ratio, ratio_range, step_player, table, write_json

from arcadebench.benchmarks.envs.factory import make_protocol_env
from arcadebench.benchmarks.training.ray_run import EnvCreator, RayRun
from arcadebench.wrappers.monitor import EpisodeMonitor, find_monitor

SPEC, GAME = "saber", "pong"
LOCAL = "local run (its files)"
RAY_ENV = {"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}


# -- the cluster ------------------------------------------------------------------------------


class TwoNodes:
    """A head with no task CPUs and a worker node with ``cpus``, started and stopped here."""

    def __init__(self, cpus: int) -> None:
        self.temp = tempfile.mkdtemp(prefix="abt", dir="/tmp")  # short: socket paths
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.address = f"127.0.0.1:{probe.getsockname()[1]}"
        ray = str(Path(sys.executable).parent / "ray")
        common = [f"--temp-dir={self.temp}", "--disable-usage-stats", "--block"]
        port = self.address.rpartition(":")[2]
        head = [ray, "start", "--head", f"--port={port}", "--num-cpus=0"]
        self.processes = [self._start([*head, "--include-dashboard=false", *common])]
        self._wait(1)
        node = [ray, "start", f"--address={self.address}", f"--num-cpus={cpus}"]
        self.processes.append(self._start([*node, *common]))
        self._wait(2)

    def _start(self, command: list[str]) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            command,
            env=os.environ | RAY_ENV,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # one process group per node, killed together
        )

    def _wait(self, nodes: int) -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = subprocess.run(
                [str(Path(sys.executable).parent / "ray"), "status", f"--address={self.address}"],
                env=os.environ | RAY_ENV,
                capture_output=True,
                text=True,
            )
            if done.stdout.count("node_") >= nodes:
                return
            time.sleep(0.5)
        raise SystemExit(f"the Ray cluster did not start {nodes} node(s) in 120 s")

    def stop(self) -> None:
        for process in reversed(self.processes):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait(30)
        shutil.rmtree(self.temp, ignore_errors=True)


# -- part 1: one environment ---------------------------------------------------------------


def one_env(steps: int, rounds: int, log_dir: Path) -> dict[str, Any]:
    quiet = find_monitor(make_protocol_env(SPEC, GAME, log_dir=False, obs_type="ram"))
    if quiet is None:
        raise SystemExit("the protocol env has no monitor")
    below = quiet.env  # one emulator for every case
    local = EpisodeMonitor(below, SPEC, GAME, log=log_dir / "local" / "0.jsonl")
    runs = {
        "relayed, report every 128 steps": RayRun(SPEC, GAME, log_dir / "relayed", sync_steps=128),
        "relayed, report every step": RayRun(SPEC, GAME, log_dir / "every", sync_steps=1),
    }
    envs: dict[str, Any] = {LOCAL: local}
    for name, run in runs.items():
        creator = run.env_creator(idle_after_budget=False)
        envs[name] = creator.attach(EpisodeMonitor(below, SPEC, GAME))
    actions = np.random.default_rng(0).integers(18, size=steps).tolist()
    try:
        samples = interleave(
            {name: step_player(env, actions) for name, env in envs.items()}, rounds
        )
    finally:
        for env in envs.values():
            find_monitor(env).recorder.close()  # type: ignore[union-attr]  # each is a monitor
        for run in runs.values():
            run.close()
        below.close()
    us = {name: 1e6 * median(samples[name]) / steps for name in samples}
    report_us = us["relayed, report every step"] - us[LOCAL]
    print(
        table(
            ["case", "us/step", "steps/s", "x local", "min-max"],
            [
                [name, us[name], 1e6 / us[name], ratio(samples, name, LOCAL)]
                + ["-".join(f"{v:.2f}" for v in ratio_range(samples, name, LOCAL))]
                for name in samples
            ],
            f"one environment, {steps:,} steps x {rounds} interleaved rounds (medians)",
        )
    )
    print(f"\none report to the owner (a round trip to another process): {report_us:.0f} us\n")
    return {
        "steps": steps,
        "cases": {name: {"seconds": samples[name], "us_per_step": us[name]} for name in samples},
        "report_us": report_us,
    }


# -- part 2: 8 environments ------------------------------------------------------------------


def local_worker(conn: Connection, log_dir: str, seed: int) -> None:
    """A local process: one env of the run, stepped on command; replies with seconds."""
    env = make_protocol_env(SPEC, GAME, log_dir=log_dir, run="8", obs_type="ram")
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    conn.send("ready")
    while (steps := conn.recv()) is not None:
        start = time.perf_counter()
        for action in rng.integers(18, size=steps).tolist():
            *_, terminated, truncated, _ = env.step(action)
            if terminated or truncated:
                env.reset()
        conn.send(time.perf_counter() - start)
    env.close()


class Player:
    """A Ray actor: one env of the run (made by the run's env creator), stepped on command."""

    def __init__(self, creator: EnvCreator, seed: int) -> None:
        self.env = creator()
        self.rng = np.random.default_rng(seed)
        self.env.reset(seed=seed)

    def play(self, steps: int) -> float:
        start = time.perf_counter()
        for action in self.rng.integers(18, size=steps).tolist():
            *_, terminated, truncated, _ = self.env.step(action)
            if terminated or truncated:
                self.env.reset()
        return time.perf_counter() - start


def eight_envs(steps: int, rounds: int, log_dir: Path, ray: Any) -> dict[str, Any]:
    context = multiprocessing.get_context("spawn")
    pipes = []
    for seed in range(8):
        mine, theirs = context.Pipe()
        context.Process(
            target=local_worker, args=(theirs, str(log_dir / "local8"), seed), daemon=True
        ).start()
        pipes.append(mine)
    for pipe in pipes:
        pipe.recv()
    run = RayRun(SPEC, GAME, log_dir / "cluster8", run="8")
    actor: Any = ray.remote(num_cpus=0.25)(Player)  # 8 fit on the worker node's CPUs
    players = [actor.remote(run.env_creator(obs_type="ram"), seed) for seed in range(8)]
    ray.get([player.play.remote(1) for player in players])  # made, on the worker node

    def local() -> float:
        start = time.perf_counter()
        for pipe in pipes:
            pipe.send(steps)
        for pipe in pipes:
            pipe.recv()
        return time.perf_counter() - start

    def cluster() -> float:
        start = time.perf_counter()
        ray.get([player.play.remote(steps) for player in players])
        return time.perf_counter() - start

    names = {"8 local processes (one run's files)": local, "8 Ray actors, worker node": cluster}
    cases: dict[str, Callable[[], float]] = dict(names)
    try:
        samples = interleave(cases, rounds)
    finally:
        for pipe in pipes:
            pipe.send(None)
        for player in players:
            ray.kill(player)
        run.close()
    base = next(iter(cases))
    rows = [
        [name, median(samples[name]), 8 * steps / median(samples[name]), ratio(samples, name, base)]
        for name in cases
    ]
    print(
        table(
            ["case", "wall s", "steps/s (sum)", "x local"],
            rows,
            f"8 environments of one run, {steps:,} steps each x {rounds} interleaved rounds "
            "(medians)",
        )
    )
    return {
        "steps_each": steps,
        "cases": {
            name: {"seconds": samples[name], "steps_per_s": 8 * steps / median(samples[name])}
            for name in cases
        },
    }


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--steps", type=int, default=4000, help="steps per round, part 1")
    cli.add_argument("--steps8", type=int, default=2000, help="steps per env and round, part 2")
    cli.add_argument("--rounds", type=int, default=7)
    cli.add_argument("--quick", action="store_true", help="a short run: does it work?")
    args = cli.parse_args()
    if args.quick:
        args.steps, args.steps8, args.rounds = 500, 200, 2
    os.environ.update(RAY_ENV)
    import ray

    nodes = TwoNodes(len(os.sched_getaffinity(0)))
    try:
        ray.init(address=nodes.address, log_to_driver=False, configure_logging=False)
        with tempfile.TemporaryDirectory() as tmp:
            single = one_env(args.steps, args.rounds, Path(tmp))
            eight = eight_envs(args.steps8, args.rounds, Path(tmp), ray)
        ray.shutdown()
    finally:
        nodes.stop()
    write_json(
        "bench_ray_training",
        {"rounds": args.rounds, "quick": args.quick, "one_env": single, "eight_envs": eight},
    )


if __name__ == "__main__":
    main()
