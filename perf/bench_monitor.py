"""Episode-monitor overhead: the protocol env with and without its monitor (targets: its own cost
<= 1 % of a protocol step, end to end <= 2 %).

First the monitor's own per-step cost, exactly: stepping a no-op environment through it (the
difference from stepping the no-op env directly, in microseconds), set against the time of one
protocol step. Then end to end: one protocol stack of arcadebench/SABER-Pong-v0 (one emulator:
separate ALE instances differ by a few per cent on their own) is stepped through (a) the
wrapper just below the monitor, (b) its monitor without a log, (c) another monitor on it
writing a log (one fsynced line per episode) and recording each episode for its replay (its
start, its actions, a digest of the emulator's RAM every 8 steps), and (d) the same without the
recording: every round of every
case resets with the
same seed and plays the same actions, so all play the same frames (episodes end and restart
inside the timing); the cases run in interleaved rounds and the overhead against (a) is the
median of the per-round ratios. On a shared VM the wall-time rounds of one case spread by 20 %
or more, so the overhead is also given *in-run*, as bench_preprocessing gives its ratios: the
emulator's calls (``ale.act``, ``ale.reset_game``) are timed inside every case's own steps and
each round compares what the cases add around the emulator in the very same steps (the target).

    .venv/bin/python perf/bench_monitor.py [--steps 5000] [--rounds 21]

Writes perf/results/bench_monitor.json.
"""

from __future__ import annotations

import tempfile
import timeit
from pathlib import Path
from typing import Any

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
    report_targets,
    table,
    write_json,
)
from ale_py import ALEInterface, roms

import arcadebench  # noqa: F401 - registers the ids
from arcadebench.records import replay_path
from arcadebench.wrappers.monitor import EpisodeMonitor, find_monitor

ENV_ID = "arcadebench/SABER-Pong-v0"
BASE = "without monitor"
NOOP = np.int64(0)  # the one observation and the action of NullEnv, a Discrete space's element


class NullEnv(gym.Env[np.int64, np.int64]):
    """Steps in no time, with a protocol-like ``info`` (frame counter, ``info["arcadebench"]``).

    It holds a real emulator it never steps (``ale``, Pong loaded), so the monitor reads its
    lives and RAM as it does a protocol env's: the per-step cost includes the state digests.
    """

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(18)

    def __init__(self) -> None:
        self.info: dict[str, Any] = {"episode_frame_number": 0, "arcadebench": {"stuck_frames": 0}}
        self.ale = ALEInterface()
        rom = roms.get_rom_path("pong")
        if rom is None:
            raise SystemExit("ale-py has no Pong ROM")
        self.ale.loadROM(rom)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        return NOOP, self.info

    def step(self, action: np.int64) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        return NOOP, 0.0, False, False, self.info


def per_step_cost_us(log: Path | None = None, n: int = 500_000) -> float:
    """Microseconds the monitor adds to one step (best of 5); with ``log``, recording too."""
    bare = NullEnv()
    watched = EpisodeMonitor(NullEnv(), "saber", "pong", unlogged_ok=True, log=log)
    watched.reset(seed=0)
    bare_t = min(timeit.repeat(lambda: bare.step(NOOP), number=n, repeat=5))
    watched_t = min(timeit.repeat(lambda: watched.step(NOOP), number=n, repeat=5))
    watched.close()
    return (watched_t - bare_t) / n * 1e6


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--steps", type=int, default=5000)
    cli.add_argument("--rounds", type=int, default=21)
    args = cli.parse_args()
    actions = np.random.default_rng(0).integers(18, size=args.steps).tolist()
    with tempfile.TemporaryDirectory() as tmp:
        # one emulator for all cases: separate ALE instances differ by a few % on their own
        quiet = find_monitor(gym.make(ENV_ID, disable_env_checker=True, log_dir=False))
        if quiet is None:
            raise SystemExit(f"{ENV_ID} has no episode monitor")
        below = quiet.env  # the protocol stack without its monitor
        logged = EpisodeMonitor(below, "saber", "pong", log=Path(tmp) / "log.jsonl")
        unrecorded = EpisodeMonitor(
            below, "saber", "pong", log=Path(tmp) / "plain.jsonl", record_actions=False
        )
        envs = {
            BASE: below,
            "monitor, no log": quiet,
            "monitor, logging and recording": logged,
            "monitor, logging, not recording": unrecorded,
        }
        base: Any = below.unwrapped  # the emulator's env: its ALE becomes a timed stand-in
        emulator = TimedCalls(base.ale, "act", "reset_game")
        base.ale = emulator
        samples, inside = emulator_rounds(envs, actions, args.rounds, emulator)
        in_run = in_run_ratios(samples, inside, BASE)
        episodes = logged.episode
        replay_bytes = replay_path(Path(tmp) / "log.jsonl").stat().st_size
        for env in envs.values():
            env.close()
        cost = per_step_cost_us()
        recording_cost = per_step_cost_us(Path(tmp) / "null.jsonl")
    step_us = 1e6 * median(samples[BASE]) / args.steps
    print(
        f"monitor cost per step: {cost:.2f} us = {100 * cost / step_us:.3f} % of a protocol step "
        f"({step_us:.0f} us); logging and recording: {recording_cost:.2f} us = "
        f"{100 * recording_cost / step_us:.3f} %\n"
    )
    steps_played = args.steps * (args.rounds + 1)
    print(
        f"recording: {replay_bytes:,} bytes for {episodes} episodes of {steps_played:,} steps "
        f"({replay_bytes / steps_played:.2f} bytes a step, start states included)\n"
    )
    overhead = {name: 100 * (1 / ratio(samples, name, BASE) - 1) for name in envs}
    overhead_in_run = {name: 100 * (1 / in_run[name] - 1) for name in envs}
    rows = [
        [name, args.steps / median(samples[name]), overhead[name], overhead_in_run[name]]
        for name in envs
    ]
    print(
        table(
            ["case", "steps/s", "overhead % (wall)", "overhead % (in-run)"],
            rows,
            f"{ENV_ID}: {args.steps:,} steps x {args.rounds} interleaved rounds (medians), "
            f"{episodes} episodes logged in all",
        )
    )
    print()
    targets = report_targets(
        [
            Target(
                "monitor overhead, logging and recording (end to end, in-run)",
                overhead_in_run["monitor, logging and recording"],
                "<=",
                2.0,
                "%",
            ),
            Target("monitor cost per step / protocol step", 100 * cost / step_us, "<=", 1.0, "%"),
            Target(
                "monitor cost per step, logging and recording (state digests included) / "
                "protocol step",
                100 * recording_cost / step_us,
                "<=",
                1.0,
                "%",
            ),
        ]
    )
    write_json(
        "bench_monitor",
        {
            "env": ENV_ID,
            "steps": args.steps,
            "rounds": args.rounds,
            "cases": {
                name: {
                    "seconds": samples[name],
                    "steps_per_s": args.steps / median(samples[name]),
                    "overhead_pct": overhead[name],
                    "emulator_seconds": inside[name],
                    "overhead_in_run_pct": overhead_in_run[name],
                }
                for name in envs
            },
            "monitor_us_per_step": cost,
            "monitor_pct_of_step": 100 * cost / step_us,
            "recording_monitor_us_per_step": recording_cost,
            "replay_bytes": replay_bytes,
            "replay_bytes_per_step": replay_bytes / steps_played,
            "targets": targets,
        },
    )


if __name__ == "__main__":
    main()
