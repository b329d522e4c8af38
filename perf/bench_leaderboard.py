"""The verified leaderboard: ``leaderboard add`` of a 57-game submission, ``build`` of 50 rows.

A submission is a run folder: here the random agent's ``arcadebench.evaluate("random",
"atari5", <its 57 games>, episodes=1, seeds=(0,))``, played once at the start (timed apart and
reported as *play*; one episode a game, 57 logs, no game's episode dominating: the longest are
printed with their share of the frames). Each round then runs, in a rotated order:

- ``raw``: the submission's very episodes on raw ale-py, each on an ``ALEInterface`` set up as
  ``ale_py.env.AtariEnv`` sets it up (sticky actions, the frame cap, the seed of the episode's
  recording, its ROM loaded), stepped through its recorded actions, ``frameskip`` calls of
  ``act`` a step and nothing else (no observation), in a pool of one forked process per core
  taking the longest episodes first; checked every round to end where the logs say with the
  logs' returns. What emulating the submission's frames costs at least on these cores;
- ``add``: ``add_submission`` of the run into a new board (each round a fresh one, since a
  name is taken once), ``workers=None`` (a process per core): it copies the run into the board,
  replays every episode (``verify``), writes the report with each game's best and worst
  episode as a GIF clip (replayed again and encoded, on every core), and moves the copy into
  place. Its parts are timed inside the call (the functions it calls, wrapped with clocks):
  the verification, the clips (their replays and GIF encoding, on a process per core), the
  rest of the report, and what remains (copy, checks, records);
- ``build``: ``build_site`` (``--reps`` 2000, as the CLI) of a board of ``--rows`` accepted
  submissions into a new folder; its parts: the rankings (both scorings of the page), the
  files written (the clips and reports copied in), and the pages rendered (the rest).

The 50-row board is made, not played: the submission accepted by a first, separate ``add``
(timed and shown as the *first add*: imports and the process pool's start included, as a
fresh ``arcadebench leaderboard add`` pays them) is copied 50 times under other names (hard
links, except its ``submission.json`` with the new name and its ``run/results.json``), and each
copy's per-run scores are rewritten so that the rows differ: every game's score times a row
factor (0.5x to 2x) and a log-normal noise per run (sigma 0.3), ``--runs`` 5 runs a game so
that the page's intervals and P(X > Y) are computed as for a submission of 5 seeds. The site
reads only the records and results (it does not verify again), so this is what building a
board of 50 real submissions does, with 50 copies of one submission's clips (57 GIFs each).

Targets: ``build`` of 50 rows under 60 s (the requirement). ``add`` within 4x of ``raw`` on the
same cores. Why 4x: add must replay every episode once (replay's own target is 1.5x raw,
``bench_replay``); then the report replays each game's best and worst episode again to draw
its clip (for a one-episode-a-game submission, every episode: 1x raw, spread over the cores)
and encodes the images (at most 300 a clip, one palette an episode), about as long again; the
rest (copy, figures, page, records) is small. 1.5 + 1 + 1 plus a margin for the rest: 4x.
``add`` is also set against ``play`` (the evaluation that made the run, on the same cores).

The machine is shared: the CPU time that other processes (kernel threads included, e.g. the
writeback of a build's files) used during each case is measured (``/proc``: the machine's busy
time less this process tree's) and shown per case, as a share of one core; before each case the
script waits (up to ``--idle-wait`` seconds, not timed) for a second in which others use under a
quarter of a core, and the cache is synced after every case (not timed either), so that one
case's writeback does not fall into the next.

    .venv/bin/python perf/bench_leaderboard.py [--rounds 3] [--games pong boxing] [--rows 50]

About 6 minutes on 2 cores with the 57 games. Writes perf/results/bench_leaderboard.json.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
from arcadebench.benchmarks.leaderboard import add_submission, build_site, open_board
from arcadebench.records import replay_path
from arcadebench.records.replay_format import read_replays
from arcadebench.specs import load_spec

SPEC = "atari5"
ADD_TARGET = 4.0  # add / raw emulation of the submission's frames on the same cores (docstring)
BUILD_TARGET = 60.0  # seconds to build the 50-row board (the requirement)
ADD_PARTS = {  # what add_submission calls, by where it looks them up
    "verify": ("arcadebench.benchmarks.leaderboard.submit", "verify"),
    "report": ("arcadebench.benchmarks.leaderboard.submit", "report"),
    "clips": ("arcadebench.benchmarks.report.build", "write_episode_clips"),
}
BUILD_PARTS = {
    "rankings": ("arcadebench.benchmarks.leaderboard.site", "rank_board"),
    "files written": ("arcadebench.benchmarks.leaderboard.site", "_write"),
}


class Clocks:
    """Seconds spent in named module-level functions while installed (a ``with`` block).

    Each ``(module, attribute)`` is replaced by a wrapper adding up its calls' seconds, and put
    back on leaving: the parts of a call measured inside that very call.
    """

    def __init__(self, parts: Mapping[str, tuple[str, str]]) -> None:
        self.parts = dict(parts)
        self.seconds = dict.fromkeys(parts, 0.0)

    @contextmanager
    def installed(self) -> Iterator[dict[str, float]]:
        """Install the clocks (from zero); yields their seconds, complete on leaving."""
        self.seconds = dict.fromkeys(self.parts, 0.0)
        saved: list[tuple[Any, str, Any]] = []
        for name, (module_name, attribute) in self.parts.items():
            module = importlib.import_module(module_name)
            original = getattr(module, attribute)
            saved.append((module, attribute, original))
            setattr(module, attribute, self._clocked(name, original))
        try:
            yield self.seconds
        finally:
            for module, attribute, original in saved:
                setattr(module, attribute, original)

    def _clocked(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        def clocked(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - start

        return clocked


class OtherLoad:
    """CPU seconds other processes used while a case ran: the machine's busy time less ours.

    Ours is this process and its descendants, alive (``/proc/<pid>/stat``) or reaped by one of
    them (their children's times): a process pool's workers are counted, whichever of ours
    forked them. Kernel threads are others (the writeback of files a case wrote among them).
    """

    def __init__(self) -> None:
        self.tick = os.sysconf("SC_CLK_TCK")
        self.works = Path("/proc/stat").exists()

    def snapshot(self) -> tuple[float, float]:
        """The machine's busy CPU seconds (all cores) and this process tree's."""
        if not self.works:
            return 0.0, 0.0
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]
        ticks = [int(v) for v in fields]
        busy = sum(ticks) - ticks[3] - ticks[4]  # less idle and iowait
        parents: dict[int, int] = {}
        times: dict[int, int] = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # gone meanwhile
                continue
            after = stat.rsplit(")", 1)[1].split()  # state, ppid, ... (the name may hold spaces)
            parents[int(entry.name)] = int(after[1])
            times[int(entry.name)] = sum(int(v) for v in after[11:15])  # utime..cstime
        ours, todo = set(), [os.getpid()]
        while todo:
            pid = todo.pop()
            ours.add(pid)
            todo += [child for child, parent in parents.items() if parent == pid]
        own = sum(times.get(pid, 0) for pid in ours)
        return busy / self.tick, own / self.tick

    def others(self, seconds: float) -> float:
        """The cores other processes use, on average over the next ``seconds``."""
        busy, own = self.snapshot()
        time.sleep(seconds)
        after_busy, after_own = self.snapshot()
        return max(0.0, (after_busy - busy) - (after_own - own)) / seconds

    def wait_idle(self, most: float, cores: float = 0.25) -> float:
        """Wait (up to ``most`` seconds) for a second in which others use under ``cores``."""
        start = time.perf_counter()
        while self.works and time.perf_counter() - start < most:
            if self.others(1.0) < cores:
                break
        return time.perf_counter() - start

    def wrap(
        self, case: Callable[[], float], found: list[float], wait: float
    ) -> Callable[[], float]:
        """``case``, appending to ``found`` the cores others used on average while it ran.

        Before it, wait up to ``wait`` seconds for the machine to be idle (not timed).
        """

        def run() -> float:
            self.wait_idle(wait)
            busy, own = self.snapshot()
            start = time.perf_counter()
            seconds = case()
            wall = time.perf_counter() - start
            after_busy, after_own = self.snapshot()
            others = max(0.0, (after_busy - busy) - (after_own - own))
            found.append(others / wall if self.works else float("nan"))
            os.sync()  # this case's writes go to disk before the next case starts
            return seconds

        return run


# -- the submission and its episodes ------------------------------------------------------------
def play(games: Sequence[str], folder: Path) -> float:
    """The random agent's evaluation over ``games``, one episode each: the submission."""
    start = time.perf_counter()
    arcadebench.evaluate(
        "random",
        SPEC,
        list(games),
        episodes=1,
        seeds=(0,),
        log_dir=folder,
        progress="off",
        reps=0,
    )
    return time.perf_counter() - start


def episodes_of(run: Path) -> list[dict[str, Any]]:
    """Every episode of the run's logs, with its settings, seed, recorded actions and outcome."""
    found = []
    for log in sorted(run.rglob("*.jsonl")):
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
        header = records[0]
        replays, damaged = read_replays(replay_path(log))
        if damaged:
            raise RuntimeError(f"{log}: {damaged} damaged recordings")
        for record in records[1:]:
            if record.get("kind") != "episode":
                continue
            replay = replays[(record["env"], record["episode"])]
            found.append(
                {
                    "game": header["game"],
                    "settings": header["settings"],
                    "seed": int(replay.start["seed"]),
                    "actions": np.asarray(replay.actions, dtype=np.int64),
                    "steps": int(record["steps"]),
                    "frames": int(record["frames"]),
                    "return": float(record["return"]),
                }
            )
    return sorted(found, key=lambda e: -e["frames"])  # longest first: the pool's best order


def raw_episode(episode: Mapping[str, Any]) -> tuple[str, int, float]:
    """One episode on a bare ``ALEInterface``, as ``AtariEnv`` seeds and loads it; its outcome."""
    settings = episode["settings"]
    ALEInterface.setLoggerMode(LoggerMode.Error)
    ale = ALEInterface()
    ale.setFloat("repeat_action_probability", settings["repeat_action_probability"])
    ale.setInt("max_num_frames_per_episode", settings["max_episode_frames"])
    ale_seed = np.random.SeedSequence(episode["seed"]).generate_state(n_words=2)[1]
    ale.setInt("random_seed", np.int32(ale_seed))
    rom = roms.get_rom_path(episode["game"])
    if rom is None:
        raise RuntimeError(f"ale-py has no ROM of {episode['game']}")
    ale.loadROM(rom)
    ale.reset_game()
    legal = ale.getLegalActionSet() if settings["full_action_space"] else ale.getMinimalActionSet()
    actions = [legal[a] for a in episode["actions"].tolist()]
    act, over, cut, skip = ale.act, ale.game_over, ale.game_truncated, settings["frameskip"]
    total, steps = 0.0, 0
    for action in actions:
        for _ in range(skip):
            total += act(action, 1.0)
        steps += 1
        if over(with_truncation=False) or cut():
            break
    return episode["game"], steps, total


def raw_case(episodes: Sequence[Mapping[str, Any]], cores: int) -> Callable[[], float]:
    """The episodes on raw ale-py in a pool of ``cores`` forked processes, longest first."""
    expected = sorted((e["game"], e["steps"], e["return"]) for e in episodes)

    def run() -> float:
        start = time.perf_counter()
        with multiprocessing.get_context("fork").Pool(cores) as pool:
            played = list(pool.imap_unordered(raw_episode, episodes, chunksize=1))
        seconds = time.perf_counter() - start
        if sorted(played) != expected:
            raise RuntimeError(f"raw ale-py played {sorted(played)}, the logs say {expected}")
        return seconds

    return run


# -- add -------------------------------------------------------------------------------------
def add_once(run: Path, folder: Path, parts: dict[str, list[float]]) -> tuple[float, Path]:
    """``add_submission`` of ``run`` into a new board in ``folder``; its seconds, its folder."""
    board = open_board(folder / "board", folder / "secret")
    clocks = Clocks(ADD_PARTS)
    with clocks.installed() as seconds, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        record = add_submission(board, run, workers=None)
        total = time.perf_counter() - start
    if record.status != "accepted" or record.folder is None:
        raise RuntimeError(f"the submission was rejected: {record.reason}")
    for name, value in seconds.items():
        parts[name].append(value)
    parts["add"].append(total)
    return total, record.folder


def add_case(run: Path, tmp: Path, parts: dict[str, list[float]]) -> Callable[[], float]:
    """Each call: a fresh board, the submission added (timed), the board removed."""
    count = 0

    def run_case() -> float:
        nonlocal count
        count += 1
        folder = tmp / f"add-{count}"
        folder.mkdir()
        seconds, _ = add_once(run, folder, parts)
        shutil.rmtree(folder)
        return seconds

    return run_case


# -- build ------------------------------------------------------------------------------------
def fifty_rows(accepted: Path, board: Path, rows: int, runs: int) -> None:
    """Copy the accepted submission ``rows`` times into ``board``, each with its own scores."""
    rng = np.random.default_rng(0)
    factors = np.geomspace(0.5, 2.0, rows)
    rng.shuffle(factors)  # the order added is not the order ranked
    for row, factor in enumerate(factors):
        name = f"row-{row:02d}"
        copy = board / "submissions" / name
        shutil.copytree(accepted, copy, copy_function=os.link)
        record_file, results_file = copy / "submission.json", copy / "run" / "results.json"
        record = json.loads(record_file.read_text(encoding="utf-8"))
        results = json.loads(results_file.read_text(encoding="utf-8"))
        record["name"] = name
        record["meta"] = {"name": f"Row {row}", "notes": "a copy, for bench_leaderboard"}
        for cell in results["algorithms"][record["algorithm"]]["games"].values():
            base = float(cell["runs"][0])
            noise = rng.lognormal(0.0, 0.3, size=runs)
            cell["runs"] = [float(base * factor * n) for n in noise]
        for path, data in ((record_file, record), (results_file, results)):
            path.unlink()  # a hard link: the original stays as it was
            path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def build_case(
    board: Path, tmp: Path, reps: int, parts: dict[str, list[float]], sizes: list[int]
) -> Callable[[], float]:
    """Each call: the board built into a new folder (timed), then removed."""
    count = 0

    def run() -> float:
        nonlocal count
        count += 1
        out = tmp / f"site-{count}"
        clocks = Clocks(BUILD_PARTS)
        with clocks.installed() as seconds:
            start = time.perf_counter()
            build_site(board, out, reps=reps)
            total = time.perf_counter() - start
        for name, value in seconds.items():
            parts[name].append(value)
        parts["build"].append(total)
        sizes.append(sum(f.stat().st_size for f in out.rglob("*") if f.is_file()))
        shutil.rmtree(out)
        return total

    return run


def size(folder: Path) -> int:
    """Bytes of the files under ``folder``."""
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())


def main() -> None:
    """Play the submission, add it once, make the board, time the rounds, print and save."""
    cli = parser(__doc__)
    cli.add_argument("--rounds", type=int, default=3)
    cli.add_argument("--games", nargs="+", help=f"games of {SPEC} (default: all 57)")
    cli.add_argument("--rows", type=int, default=50, help="submissions on the built board")
    cli.add_argument("--runs", type=int, default=5, help="runs a game of each built row")
    cli.add_argument("--reps", type=int, default=2000, help="bootstrap repetitions of build")
    cli.add_argument(
        "--idle-wait",
        type=float,
        default=60.0,
        help="seconds to wait at most, before each case, for the machine to be idle",
    )
    args = cli.parse_args()
    spec = load_spec(SPEC)
    games = [spec.resolve_game(g) for g in args.games] if args.games else list(spec.games)
    cores = len(os.sched_getaffinity(0))
    load = OtherLoad()
    with tempfile.TemporaryDirectory() as name, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tmp = Path(name)
        run = tmp / "run"
        played = play(games, run)
        episodes = episodes_of(run)
        first_parts: dict[str, list[float]] = {k: [] for k in [*ADD_PARTS, "add"]}
        (tmp / "first").mkdir()
        first, accepted = add_once(run, tmp / "first", first_parts)
        run_mb, report_mb = size(run) / 1e6, size(accepted / "report") / 1e6
        clips = len(list((accepted / "report").glob("*.gif")))
        board = tmp / "board"
        open_board(board, tmp / "board-secret", title="bench_leaderboard")
        fifty_rows(accepted, board, args.rows, args.runs)
        os.sync()
        add_parts: dict[str, list[float]] = {k: [] for k in [*ADD_PARTS, "add"]}
        build_parts: dict[str, list[float]] = {k: [] for k in [*BUILD_PARTS, "build"]}
        sites: list[int] = []
        others: dict[str, list[float]] = {"raw": [], "add": [], "build": []}
        cases = {
            "raw": load.wrap(raw_case(episodes, cores), others["raw"], args.idle_wait),
            "add": load.wrap(add_case(run, tmp, add_parts), others["add"], args.idle_wait),
            "build": load.wrap(
                build_case(board, tmp, args.reps, build_parts, sites),
                others["build"],
                args.idle_wait,
            ),
        }
        samples = interleave(cases, args.rounds, warmup=0)  # the first add above warmed up

    frames = sum(e["frames"] for e in episodes)
    steps = sum(e["steps"] for e in episodes)
    longest = [(e["game"], e["frames"], e["frames"] / frames) for e in episodes[:3]]
    raw_s = median(samples["raw"])
    print(
        f"submission: random agent, {SPEC}, {len(games)} games x 1 episode: {steps:,} steps, "
        f"{frames:,} frames; its run folder {run_mb:.1f} MB; its report on the board "
        f"{report_mb:.1f} MB ({clips} GIF clips)"
    )
    print(
        "longest episodes: "
        + ", ".join(f"{g} {f:,} frames ({share:.0%})" for g, f, share in longest)
    )
    print(
        f"play (arcadebench.evaluate, once, {cores} workers): {played:.1f} s; first add "
        f"(imports, pool start): {first:.1f} s"
    )
    print()
    rows = [
        [
            "raw ale-py, the same episodes",
            median(samples["raw"]),
            min(samples["raw"]),
            max(samples["raw"]),
            1.0,
            median(others["raw"]),
        ],
        [
            f"leaderboard add, {len(games)} games",
            median(samples["add"]),
            min(samples["add"]),
            max(samples["add"]),
            ratio(samples, "raw", "add"),
            median(others["add"]),
        ],
        [
            f"leaderboard build, {args.rows} rows",
            median(samples["build"]),
            min(samples["build"]),
            max(samples["build"]),
            float("nan"),
            median(others["build"]),
        ],
    ]
    print(
        table(
            ["case", "median s", "min s", "max s", "x raw", "others' cores"],
            rows,
            f"{args.rounds} interleaved rounds on {cores} cores (x raw: median of per-round "
            "ratios; others' cores: CPU other processes used meanwhile, median)",
        )
    )
    print()

    add_rest = [
        a - v - r
        for a, v, r in zip(add_parts["add"], add_parts["verify"], add_parts["report"], strict=True)
    ]
    report_rest = [r - c for r, c in zip(add_parts["report"], add_parts["clips"], strict=True)]
    pieces = {
        "verify: every episode replayed, every core": add_parts["verify"],
        "report: clips, best/worst episodes replayed and encoded, every core": add_parts["clips"],
        "report: the rest (scores, figures, page)": report_rest,
        "copy, checks, records": add_rest,
    }
    part_rows = [
        [
            what,
            median(values),
            median([v / a for v, a in zip(values, add_parts["add"], strict=True)]),
            median([v / r for v, r in zip(values, samples["raw"], strict=True)]),
        ]
        for what, values in pieces.items()
    ]
    part_rows.append(["add, in all", median(add_parts["add"]), 1.0, ratio(samples, "raw", "add")])
    print(
        table(
            ["part of add", "median s", "share", "x raw"],
            part_rows,
            f"where add's time goes ({len(games)} games, every part timed inside the call)",
        )
    )
    print()
    build_rest = [
        b - k - w
        for b, k, w in zip(
            build_parts["build"], build_parts["rankings"], build_parts["files written"], strict=True
        )
    ]
    build_rows = [
        [f"rankings (score twice, reps={args.reps})", median(build_parts["rankings"])],
        [
            f"files written (site {median(sites) / 1e6:,.0f} MB)",
            median(build_parts["files written"]),
        ],
        ["pages rendered, the rest", median(build_rest)],
        ["build, in all", median(build_parts["build"])],
    ]
    print(
        table(
            ["part of build", "median s"],
            build_rows,
            f"where build's time goes ({args.rows} rows x {len(games)} games x {args.runs} runs)",
        )
    )
    print()
    low, high = ratio_range(samples, "raw", "add")
    print(
        f"add / raw over the rounds: {low:.2f}x to {high:.2f}x; add / play: "
        f"{median(samples['add']) / played:.2f}x; raw {frames / raw_s:,.0f} frames/s"
    )
    busy = max(v for values in others.values() for v in values)
    if busy > 0.1:
        print(
            f"the machine was shared: other processes used up to {busy:.2f} of a core during a case"
        )
    print()
    targets = report_targets(
        [
            Target(
                f"leaderboard add of a {len(games)}-game submission / raw ale-py emulation of "
                f"its frames on the same {cores} cores",
                ratio(samples, "raw", "add"),
                "<=",
                ADD_TARGET,
            ),
            Target(
                f"leaderboard build of a {args.rows}-row board ({len(games)} games, "
                f"reps={args.reps})",
                median(samples["build"]),
                "<",
                BUILD_TARGET,
                " s",
            ),
        ]
    )
    write_json(
        "bench_leaderboard",
        {
            "rounds": args.rounds,
            "games": games,
            "rows": args.rows,
            "runs": args.runs,
            "reps": args.reps,
            "cores": cores,
            "submission": {
                "steps": steps,
                "frames": frames,
                "episodes": len(episodes),
                "run_bytes": int(run_mb * 1e6),
                "report_bytes": int(report_mb * 1e6),
                "clips": clips,
                "longest": longest,
            },
            "play_s": played,
            "first_add_s": first,
            "first_add_parts": first_parts,
            "samples": samples,
            "add_parts": add_parts,
            "build_parts": build_parts,
            "site_bytes": sites,
            "others_cores": others,
            "ratios": {
                "add / raw": ratio(samples, "raw", "add"),
                "add / raw range": [low, high],
                "add / play": median(samples["add"]) / played,
            },
            "targets": targets,
        },
    )


if __name__ == "__main__":
    main()
