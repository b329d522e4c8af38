"""The main job, ``arcadebench run atari5 --agent random --episodes 1``, against its limit.

The job is the first thing every user runs. It is timed as the user feels
it: a fresh ``python -m arcadebench run atari5 --agent random --episodes 1 --workers 2 --out
<tmp>`` process, from its start to its exit (progress lines on stderr, the score table on
stdout, bytecode cached as in any installed package).

Its physical limit on this machine is the pure emulator time of the same episodes split over
the same number of processes as well as they can be split: the job's five episodes are replayed
on raw ale-py (``ale_py.env.AtariEnv`` with the protocol's emulator settings read from each
log's header: sticky actions 0.25, the full action set, frame skip 4, the frame cap), reset with
the seed the runner used and stepped with the very actions its random agent drew (the runner's
``episode_seeds`` and ``RandomAgent``), timing the steps only. Every replay is checked against
the log, step count and return, so they are the same episodes. The limit is
``max(sum / workers, longest episode)``: the best any scheduler could do even if it could
preempt; the best split of these whole episodes (found by trying every assignment) is shown
beside it.

Each round runs, in a rotated order: the job; ``python -m arcadebench --version`` (interpreter,
imports and the command's parser: the start-up every command pays); the raw replay, alone and
in ``--workers`` forked copies at once (how much two emulators side by side slow each other on
this machine); the protocol environments made and reset in this process, and raw ``AtariEnv``s
made (ALE's ROM load); and the *floor*: the same episodes in a minimal script on ale-py's
``ALEInterface`` (``FLOOR_SCRIPT``: an interpreter, numpy and ale-py imported, one forked
process per share of the best split, a ROM load per game, the steps; no logs, no scoring, and
the episode lengths known in advance), which is what any Python program doing this job pays.

The job's wall time is split exactly, from its logs' time stamps (when each log was opened,
when each episode ended and how long it played), into: start-up to the first episode, play
against raw, the gaps between a worker's jobs (log written, process exit and start, env make,
seeded reset), idle workers (how unevenly the jobs fell), and the time after the last episode
(scoring, ``results.json``, the table, the exit). The ratio is the median of per-round ratios.
The machine is shared: a case during which other processes used the CPU is run again
(:class:`Quiet`). ``--compare SRC`` also runs the job from another source tree in the same
rounds (an export of an older commit's ``src/``), so a change is measured paired.

    .venv/bin/python perf/bench_main_job.py [--workers 2] [--rounds 5] [--compare SRC]

Writes perf/results/bench_main_job.json. Bytecode goes to ``perf/results/pycache`` (the
sandbox's ``PYTHONDONTWRITEBYTECODE`` would otherwise recompile arcadebench at every start).
"""

from __future__ import annotations

import ctypes
import itertools
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _timing import RESULTS, Target, interleave, median, parser, report_targets, table, write_json
from ale_py.env import AtariEnv

import arcadebench
from arcadebench.benchmarks.runner.agents import RandomAgent
from arcadebench.records import episode_seeds

SPEC = "atari5"
TARGET = 1.25  # the job within 1.25x of its limit with 2 workers


@dataclass(frozen=True)
class Episode:
    """One episode of the job, as its log has it."""

    game: str
    run: str
    episode: int
    steps: int
    frames: int
    ret: float
    settings: dict[str, Any]
    opened: float  # epoch seconds the log was opened (the env was made)
    ended: float  # epoch seconds the episode was logged
    played: float  # seconds the episode played (reset to last step)

    @property
    def started(self) -> float:
        """Epoch seconds the episode's first step started (after its seeded reset)."""
        return self.ended - self.played


@dataclass(frozen=True)
class JobRun:
    """One run of the job: its wall time, when it started and ended, what it printed and logged."""

    seconds: float
    start: float
    end: float
    table: str
    episodes: list[Episode]


class Quiet:
    """Runs each case until no other process used the CPU meanwhile (the machine is shared).

    Other processes' CPU seconds during a case are the machine's busy seconds (``/proc/stat``)
    less this process's and its descendants' (``getrusage``; this process is made a child
    subreaper, so that a job's forkserver and its workers, orphaned when the job exits, are
    reaped here and counted). A case during which they exceed ``tolerance`` of its wall time
    is run again, up to ``attempts`` times; the last attempt counts whatever happened.
    """

    def __init__(self, attempts: int = 4, tolerance: float = 0.1) -> None:
        self.attempts, self.tolerance = attempts, tolerance
        self.payloads: dict[str, list[Any]] = {}
        self.foreign: dict[str, list[float]] = {}
        self.repeated: dict[str, int] = {}
        self.works = Path("/proc/stat").exists() and _subreaper()

    def wrap(self, name: str, case: Callable[[], tuple[float, Any]]) -> Callable[[], float]:
        """A case for :func:`interleave`: ``case`` returns its seconds and what to keep."""
        self.payloads[name], self.foreign[name], self.repeated[name] = [], [], 0

        def run() -> float:
            for attempt in range(self.attempts):
                busy, own = _busy_seconds(), _own_seconds()
                seconds, payload = case()
                _reap_orphans()
                foreign = _busy_seconds() - busy - (_own_seconds() - own)
                if not self.works or foreign <= self.tolerance * seconds:
                    break
                if attempt < self.attempts - 1:
                    self.repeated[name] += 1
            self.payloads[name].append(payload)
            self.foreign[name].append(foreign if self.works else float("nan"))
            return seconds

        return run


def _subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux); whether it worked."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(36, 1, 0, 0, 0)) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _busy_seconds() -> float:
    """CPU seconds the machine has been busy, all cores (``/proc/stat``; 0 where there is none)."""
    try:
        ticks = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    except OSError:
        return 0.0
    return (sum(ticks) - ticks[3] - ticks[4]) / os.sysconf("SC_CLK_TCK")  # less idle, iowait


def _own_seconds() -> float:
    """CPU seconds of this process and its reaped descendants."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _reap_orphans() -> None:
    """Wait for the descendants a job left behind (its forkserver exits when the job has)."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def _environment(source: Path | None = None) -> dict[str, str]:
    """The job's environment: bytecode cached (as installed); ``source`` first on the path."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(RESULTS / "pycache")
    if source is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            [str(source), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
    return env


def job_command(workers: int, out: str) -> list[str]:
    """The README's main job, with an explicit worker count and output directory."""
    return [
        sys.executable,
        "-m",
        "arcadebench",
        "run",
        SPEC,
        "--agent",
        "random",
        "--episodes",
        "1",
        "--workers",
        str(workers),
        "--out",
        out,
    ]


def read_episodes(out: Path) -> list[Episode]:
    """Every episode the job logged under ``out``, with its log's open time and settings."""
    episodes: list[Episode] = []
    for path in sorted(out.glob(f"*/{SPEC}/*/*.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        header = next(line for line in lines if line["kind"] == "header")
        for line in lines:
            if line["kind"] != "episode":
                continue
            episodes.append(
                Episode(
                    game=line["game"],
                    run=line["run"],
                    episode=line["episode"],
                    steps=line["steps"],
                    frames=line["frames"],
                    ret=line["return"],
                    settings=header["settings"],
                    opened=header["time"],
                    ended=line["time"],
                    played=line["wall_time"],
                )
            )
    return episodes


def run_job(workers: int, source: Path | None = None) -> JobRun:
    """Run the job once in a fresh process and a fresh output directory."""
    with tempfile.TemporaryDirectory() as tmp:
        command = job_command(workers, tmp)
        environment = _environment(source)
        start_epoch = time.time()
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=environment)
        seconds = time.perf_counter() - start
        end_epoch = start_epoch + seconds
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}:\n{done.stderr}")
        return JobRun(seconds, start_epoch, end_epoch, done.stdout, read_episodes(Path(tmp)))


def start_up() -> tuple[float, None]:
    """Seconds of ``python -m arcadebench --version``: interpreter, imports, the parser."""
    environment = _environment()
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "arcadebench", "--version"],
        check=True,
        capture_output=True,
        env=environment,
    )
    return time.perf_counter() - start, None


class RawReplay:
    """The job's episodes on raw ale-py: same settings, seeds and actions; steps timed."""

    def __init__(self, episodes: Sequence[Episode]) -> None:
        self.episodes = list(episodes)
        self.envs: list[AtariEnv] = []
        self.seeds: list[int] = []
        self.actions: list[list[int]] = []
        for episode in self.episodes:
            settings = episode.settings
            env = AtariEnv(
                episode.game,
                frameskip=settings["frameskip"],
                repeat_action_probability=settings["repeat_action_probability"],
                full_action_space=settings["full_action_space"],
                max_num_frames_per_episode=settings["max_episode_frames"],
            )
            env_seed, agent_seed = episode_seeds(int(episode.run), episode.episode)
            agent = RandomAgent(env.action_space)  # the runner's agent, seeded as it seeds it
            agent.seed(agent_seed)
            self.envs.append(env)
            self.seeds.append(env_seed)
            self.actions.append([int(agent.act(None)) for _ in range(episode.steps)])
        self.last: list[float] = []

    def play(self) -> float:
        """Replay every episode; keeps each one's seconds in ``last``; returns their sum."""
        self.last = []
        for episode, env, seed, actions in zip(
            self.episodes, self.envs, self.seeds, self.actions, strict=True
        ):
            env.reset(seed=seed)
            step = env.step
            total, steps, ended = 0.0, 0, False
            start = time.perf_counter()
            for action in actions:
                _, reward, terminated, truncated, _ = step(action)
                total += float(reward)
                steps += 1
                if terminated or truncated:
                    ended = True
                    break
            self.last.append(time.perf_counter() - start)
            if not ended or steps != episode.steps or total != episode.ret:
                raise RuntimeError(
                    f"the raw replay of {episode.game} is not the job's episode: {steps} steps, "
                    f"return {total:g} (ended: {ended}); the log says {episode.steps} steps, "
                    f"return {episode.ret:g}"
                )
        return sum(self.last)

    def play_at_once(self, processes: int) -> list[float]:
        """Each episode's seconds when ``processes`` forked copies replay them all at once.

        The same replay in several processes at the same time, as the job's workers play:
        how much slower an emulator runs beside others on this machine (shared caches, and
        maybe one physical core under two vCPUs). The median over the processes.
        """
        context = multiprocessing.get_context("fork")
        pipes = [context.Pipe(duplex=False) for _ in range(processes)]
        children = [context.Process(target=_replay_child, args=(self, w)) for _, w in pipes]
        for child in children:
            child.start()
        times = [r.recv() for r, _ in pipes]
        for child in children:
            child.join()
        return [median(values) for values in zip(*times, strict=True)]

    def close(self) -> None:
        """Close the emulators."""
        for env in self.envs:
            env.close()


def _replay_child(replay: RawReplay, conn: Any) -> None:
    replay.play()
    conn.send(replay.last)


def make_and_reset(episodes: Sequence[Episode]) -> Callable[[], tuple[float, tuple[float, float]]]:
    """A case: each protocol env made and reset with its seed, as a worker does; and the ROMs.

    Keeps the seconds of the protocol envs' make + seeded reset, and those of raw ``AtariEnv``
    constructions (ALE's ``loadROM``, most of a make).
    """

    def run() -> tuple[float, tuple[float, float]]:
        total = roms = 0.0
        for episode in episodes:
            start = time.perf_counter()
            env = arcadebench.make(SPEC, episode.game, log_dir=False)
            env.reset(seed=episode_seeds(int(episode.run), episode.episode)[0])
            total += time.perf_counter() - start
            env.close()
            start = time.perf_counter()
            raw = AtariEnv(episode.game, repeat_action_probability=0.25, full_action_space=True)
            roms += time.perf_counter() - start
            raw.close()
        return total, (total, roms)

    return run


def best_assignment(seconds: Sequence[float], workers: int) -> list[list[int]]:
    """The episodes (indices) of each process in the shortest split of whole episodes.

    Exact (every assignment tried) when that is small, else longest first (a 4/3-approximation).
    """
    if workers ** len(seconds) > 200_000:
        shares: list[list[int]] = [[] for _ in range(workers)]
        loads = [0.0] * workers
        for index in sorted(range(len(seconds)), key=lambda i: -seconds[i]):
            free = loads.index(min(loads))
            shares[free].append(index)
            loads[free] += seconds[index]
        return shares
    best: tuple[float, tuple[int, ...]] = (float("inf"), ())
    for assignment in itertools.product(range(workers), repeat=len(seconds)):
        loads = [0.0] * workers
        for worker, value in zip(assignment, seconds, strict=True):
            loads[worker] += value
        best = min(best, (max(loads), assignment))
    return [[i for i, w in enumerate(best[1]) if w == worker] for worker in range(workers)]


def best_split(seconds: Sequence[float], workers: int) -> float:
    """The shortest makespan of whole episodes over ``workers`` processes."""
    return max(sum(seconds[i] for i in share) for share in best_assignment(seconds, workers))


FLOOR_SCRIPT = """
import json, sys
from multiprocessing import get_context
import numpy as np
from ale_py import ALEInterface, LoggerMode, roms

def play(episodes):
    ALEInterface.setLoggerMode(LoggerMode.Error)
    for e in episodes:
        ale = ALEInterface()  # as ale_py.env.AtariEnv seeds and loads it, once
        ale.setFloat("repeat_action_probability", e["repeat_action_probability"])
        ale.setInt("max_num_frames_per_episode", e["max_episode_frames"])
        ale_seed = np.random.SeedSequence(e["env_seed"]).generate_state(n_words=2)[1]
        ale.setInt("random_seed", np.int32(ale_seed))
        ale.loadROM(roms.get_rom_path(e["game"]))
        ale.reset_game()
        actions = ale.getLegalActionSet() if e["full_action_space"] else ale.getMinimalActionSet()
        draw, n = np.random.default_rng(e["agent_seed"]).integers, len(actions)
        act, over, cut, screen = ale.act, ale.game_over, ale.game_truncated, ale.getScreenRGB
        steps = total = 0
        while True:
            action = actions[int(draw(n))]
            for _ in range(e["frameskip"]):
                total += act(action, 1.0)
            screen()
            steps += 1
            if over(with_truncation=False) or cut():
                break
        print(json.dumps([e["game"], steps, total]), flush=True)

if __name__ == "__main__":
    workers = [get_context("fork").Process(target=play, args=(share,))
               for share in json.loads(sys.argv[1])]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
"""


def floor_case(
    episodes: Sequence[Episode], shares: Sequence[Sequence[int]]
) -> Callable[[], tuple[float, None]]:
    """A case: the job's episodes in a minimal script on ale-py's ``ALEInterface``, best split.

    What any Python program doing this job pays at least: an interpreter importing numpy and
    ale-py (which imports gymnasium), a process per share, one ROM load per game (seeded as
    ``AtariEnv`` seeds), the random agent's draws (numpy's generator, as ``RandomAgent``), the
    frames and the RGB screen of every step; no logs, no scoring, and the episodes' lengths
    known in advance (which no runner knows). Checked to play the job's episodes.
    """
    plan = [
        [
            {
                "game": episodes[i].game,
                **{
                    key: episodes[i].settings[key]
                    for key in (
                        "frameskip",
                        "repeat_action_probability",
                        "full_action_space",
                        "max_episode_frames",
                    )
                },
                "env_seed": episode_seeds(int(episodes[i].run), episodes[i].episode)[0],
                "agent_seed": episode_seeds(int(episodes[i].run), episodes[i].episode)[1],
            }
            for i in share
        ]
        for share in shares
    ]
    command = [sys.executable, "-c", FLOOR_SCRIPT, json.dumps(plan)]
    expected = sorted([e.game, e.steps, e.ret] for e in episodes)

    def run() -> tuple[float, None]:
        environment = _environment()
        start = time.perf_counter()
        done = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
        seconds = time.perf_counter() - start
        played = sorted(json.loads(line) for line in done.stdout.splitlines())
        if played != expected:
            raise RuntimeError(f"the floor script played {played}, not the job's {expected}")
        return seconds, None

    return run


def list_schedule(seconds: Sequence[float], workers: int) -> float:
    """The makespan when each episode, in this order, goes to the first free process."""
    loads = [0.0] * workers
    for value in seconds:
        loads[loads.index(min(loads))] += value
    return max(loads)


def timeline(job: JobRun, raw: Sequence[float], workers: int) -> dict[str, float]:
    """Split the job's wall time exactly, from its logs' time stamps; raw seconds per episode.

    Jobs are put back on the process slot they ran in (a job starts when a slot frees), and
    ``wall = first episode start + (sum of played + gaps + idle) / workers + after last``.
    """
    episodes = sorted(job.episodes, key=lambda e: e.opened)
    first = min(e.started for e in episodes)
    last = max(e.ended for e in episodes)
    slots: list[list[Episode]] = []
    for episode in episodes:
        if len(slots) < workers:
            slots.append([episode])
        else:
            min(slots, key=lambda s: s[-1].ended).append(episode)
    gaps = sum(b.started - a.ended for slot in slots for a, b in itertools.pairwise(slot))
    idle = sum(slot[0].started - first + last - slot[-1].ended for slot in slots)
    idle += (workers - len(slots)) * (last - first)
    played = sum(e.played for e in episodes)
    limit = max(sum(raw) / workers, max(raw))
    return {
        "wall": job.seconds,
        "limit": limit,
        "ratio": job.seconds / limit,
        "to first episode": first - job.start,
        "play over raw": (played - sum(raw)) / workers,
        "between jobs": gaps / workers,
        "idle workers": idle / workers,
        "sum / workers - limit": sum(raw) / workers - limit,
        "after last episode": job.end - last,
    }


def main() -> None:
    cli = parser(__doc__)
    cli.add_argument("--workers", type=int, default=2, help="worker processes (default 2)")
    cli.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    cli.add_argument(
        "--compare",
        type=Path,
        metavar="SRC",
        help="also run the job from this source tree, in the same rounds (e.g. `git archive "
        "<commit> src | tar -x -C /tmp/old`, then --compare /tmp/old/src): a change's effect",
    )
    args = cli.parse_args()
    workers = args.workers
    sources: dict[str, Path | None] = {"job": None}
    if args.compare:
        sources["job, --compare tree"] = args.compare.resolve()

    quiet = Quiet()  # before any job: their orphans must be reaped here
    first = run_job(workers)  # warm-up: bytecode cached, the episodes to replay
    for source in sources.values():
        if source is not None:
            run_job(workers, source)
    _reap_orphans()
    order = [e.game for e in sorted(first.episodes, key=lambda e: e.opened)]
    replay = RawReplay(sorted(first.episodes, key=lambda e: order.index(e.game)))
    replay.play()
    shares = best_assignment(replay.last, workers)

    def job_case(name: str) -> Callable[[], tuple[float, JobRun]]:
        def run() -> tuple[float, JobRun]:
            job = run_job(workers, sources[name])
            key = sorted((e.game, e.steps, e.ret) for e in job.episodes)
            if key != sorted((e.game, e.steps, e.ret) for e in first.episodes):
                raise RuntimeError(f"{name}: other episodes than in the first run")
            if job.table != first.table:
                raise RuntimeError(f"{name}: another table than in the first run")
            return job.seconds, job

        return run

    def raw_case() -> tuple[float, list[float]]:
        seconds = replay.play()
        return seconds, list(replay.last)

    def together_case() -> tuple[float, list[float]]:
        start = time.perf_counter()
        each = replay.play_at_once(workers)
        return time.perf_counter() - start, each

    cases: dict[str, Callable[[], tuple[float, Any]]] = {
        **{name: job_case(name) for name in sources},
        "start-up": start_up,
        "raw": raw_case,
        f"raw, {workers} at once": together_case,
        "make": make_and_reset(replay.episodes),
        "floor": floor_case(replay.episodes, shares),
    }
    samples = interleave(
        {name: quiet.wrap(name, case) for name, case in cases.items()}, args.rounds, warmup=0
    )
    replay.close()
    jobs: dict[str, list[JobRun]] = {name: quiet.payloads[name] for name in sources}
    raws: list[list[float]] = quiet.payloads["raw"]
    together: list[list[float]] = quiet.payloads[f"raw, {workers} at once"]
    makes = [made for made, _ in quiet.payloads["make"]]
    loads = [loaded for _, loaded in quiet.payloads["make"]]

    # pair each round's job with the same round's replay
    splits = {
        name: [
            timeline(job, raw_of(job, replay.episodes, raw), workers)
            for job, raw in zip(runs, raws, strict=True)
        ]
        for name, runs in jobs.items()
    }
    raw_median = [median(values) for values in zip(*raws, strict=True)]
    rows: list[list[object]] = []
    for episode, raw in zip(replay.episodes, raw_median, strict=True):
        played = [
            median([e.played for job in runs for e in job.episodes if e.game == episode.game])
            for runs in jobs.values()
        ]
        rows.append(
            [episode.game, episode.steps, episode.frames, episode.ret, raw]
            + [value for seconds in played for value in (seconds, seconds / raw)]
        )
    print(
        table(
            ["episode (seed 0)", "steps", "frames", "return", "raw ale-py s"]
            + [column for name in jobs for column in (f"{name}: s", "x raw")],
            rows,
            f"{SPEC}, random agent, one episode per game: raw replay and the job's play "
            f"({args.rounds} rounds, medians)",
            digits=3,
        )
    )
    total, longest = sum(raw_median), max(raw_median)
    print()
    print(
        table(
            ["the limit (raw emulator)", "s"],
            [
                ["sum of the episodes", total],
                [f"sum / {workers} workers", total / workers],
                ["longest episode", longest],
                [f"limit = max(sum / {workers}, longest)", max(total / workers, longest)],
                ["best split of these whole episodes", best_split(raw_median, workers)],
                ["the job's order, first free worker", list_schedule(raw_median, workers)],
                ["longest first", list_schedule(sorted(raw_median, reverse=True), workers)],
            ],
            f"{workers} workers (raw medians)",
            digits=3,
        )
    )
    command = f"arcadebench run {SPEC} --agent random --episodes 1 --workers {workers}"
    summary: list[list[object]] = []
    for name, runs in splits.items():
        ratios = [s["ratio"] for s in runs]
        summary.append(
            [
                name,
                median([s["wall"] for s in runs]),
                median([s["limit"] for s in runs]),
                median(ratios),
                f"{min(ratios):.2f}-{max(ratios):.2f}",
            ]
        )
    floor = [
        seconds / split["limit"]
        for seconds, split in zip(samples["floor"], next(iter(splits.values())), strict=True)
    ]
    summary.append(
        [
            "floor: a minimal ale-py script (FLOOR_SCRIPT), best split",
            median(samples["floor"]),
            median([s["limit"] for s in next(iter(splits.values()))]),
            median(floor),
            f"{min(floor):.2f}-{max(floor):.2f}",
        ]
    )
    print()
    print(
        table(
            ["case", "wall s", "limit s", "x limit", "min-max"],
            summary,
            f"{command}: wall time against its limit ({args.rounds} interleaved rounds, medians)",
            digits=3,
        )
    )
    parts = [
        ("limit", "limit (raw emulator, best possible split)"),
        ("to first episode", "start-up to the first episode's first step"),
        ("play over raw", f"play: protocol env, agent, monitor over raw (sum / {workers})"),
        ("between jobs", f"between a worker's jobs (sum / {workers})"),
        ("idle workers", f"idle workers: uneven jobs (sum / {workers})"),
        ("sum / workers - limit", f"sum of raw / {workers} - limit (<= 0)"),
        ("after last episode", "after the last episode: scoring, results.json, table, exit"),
        ("wall", "wall time (the rows above add up to it in each round)"),
    ]
    breakdown: list[list[object]] = [
        [label, *(median([s[key] for s in runs]) for runs in splits.values())]
        for key, label in parts
    ]
    apart = [
        [
            "interpreter, imports, parser (`arcadebench --version`)",
            median(samples["start-up"]),
        ],
        [
            f"raw ale-py, {workers} processes replaying at once, over alone (sum / {workers})",
            median([(sum(t) - sum(r)) / workers for t, r in zip(together, raws, strict=True)]),
        ],
        [f"make + seeded reset of the {len(order)} envs, sum / {workers}", median(makes) / workers],
        [f"  of which ALE's loadROM (raw AtariEnv made), sum / {workers}", median(loads) / workers],
    ]
    print()
    print(
        table(
            ["where the wall time goes", *(f"{name} s" for name in splits)],
            breakdown,
            "breakdown (medians over rounds)",
            digits=3,
        )
    )
    print()
    print(table(["measured apart (medians)", "s"], apart, "what some rows are made of", digits=3))
    print()
    print(
        table(
            ["case", "other processes' CPU s (median)", "max", "runs repeated"],
            [
                [name, median(values), max(values), quiet.repeated[name]]
                for name, values in quiet.foreign.items()
            ],
            f"the machine is shared: a case is run again (up to {quiet.attempts} times) when "
            f"other processes used over {quiet.tolerance:.0%} of its wall time in CPU",
            digits=3,
        )
    )
    print()
    targets = [
        Target(
            f"main job, {workers} workers, x its limit",
            median([s["ratio"] for s in splits["job"]]),
            "<=",
            TARGET,
        )
    ]
    write_json(
        "bench_main_job",
        {
            "workers": workers,
            "rounds": args.rounds,
            "command": " ".join(job_command(workers, "<tmp>")),
            "compare": str(args.compare) if args.compare else None,
            "episodes": [
                {"game": e.game, "steps": e.steps, "frames": e.frames, "return": e.ret}
                for e in replay.episodes
            ],
            "raw_seconds": raws,
            "raw_at_once_seconds": together,
            "splits": splits,
            "start_up_seconds": samples["start-up"],
            "make_seconds": makes,
            "floor_seconds": samples["floor"],
            "floor_shares": [[replay.episodes[i].game for i in share] for share in shares],
            "rom_load_seconds": loads,
            "other_processes_cpu_seconds": quiet.foreign,
            "repeated_runs": quiet.repeated,
            "table": first.table,
            "targets": report_targets(targets),
        },
    )


def raw_of(job: JobRun, episodes: Sequence[Episode], raw: Sequence[float]) -> list[float]:
    """The raw seconds of ``job``'s episodes, in the job's order (``raw`` is in ``episodes``')."""
    index = {e.game: i for i, e in enumerate(episodes)}
    return [raw[index[e.game]] for e in job.episodes]


if __name__ == "__main__":
    main()
