"""Soak: many short episodes, 2 workers, no leaked processes, file handles or memory.

The short version runs in CI (>= 100 episodes); the long one (>= 1,000 episodes, memory growth
< 10 % after warm-up in the parent and in every worker) runs with ``ARCADEBENCH_LONG=1``:

    ARCADEBENCH_LONG=1 .venv/bin/python -m pytest tests/test_soak.py
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

import arcadebench
from arcadebench.benchmarks.runner.messages import EpisodeEnded
from arcadebench.errors import NonCompliantWarning

SHORT = {"max_episode_frames": 100}  # 25 agent steps an episode
GAMES = ["qbert", "phoenix", "battle_zone", "double_dunk"]


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def rss_kb() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def soak(log_dir, episodes, seeds=(0,), on_event=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        return arcadebench.evaluate(
            "random",
            "atari5",
            GAMES,
            episodes=episodes,
            seeds=seeds,
            workers=2,
            log_dir=log_dir,
            env_kwargs=SHORT,
            progress="off",
            reps=0,
            on_event=on_event,
        )


@pytest.mark.skipif(
    not Path("/proc/self/fd").exists(), reason="counts processes and handles through /proc"
)
def test_soak_short(tmp_path):
    soak(tmp_path / "warmup", 1)  # imports all (and starts any forkserver)
    processes, fds = descendants(os.getpid()), open_fds()
    seen = []
    results = soak(
        tmp_path / "soak",
        25,
        on_event=lambda e: seen.append(e) if isinstance(e, EpisodeEnded) else None,
    )
    assert len(seen) == 100
    (scored,) = results.algorithms.values()  # one algorithm: random, under SHORT's settings
    assert sum(g["episodes"] for g in scored["games"].values()) == 100
    assert descendants(os.getpid()) == processes, "worker processes were left behind"
    assert open_fds() == fds, "file handles leaked"


@pytest.mark.long
def test_soak_long(tmp_path):
    soak(tmp_path / "warmup", 1)
    processes, fds = descendants(os.getpid()), open_fds()
    workers: dict[str, list[int]] = {}
    parent: list[int] = []

    def watch(event):
        if isinstance(event, EpisodeEnded):
            workers.setdefault(event.key, []).append(event.record["rss_kb"])
            parent.append(rss_kb())

    soak(tmp_path / "soak", 130, seeds=(0, 1), on_event=watch)  # 8 jobs x 130 = 1,040 episodes
    assert len(parent) == 1040
    warm = parent[len(parent) // 10]
    assert parent[-1] < 1.10 * warm, f"the parent grew from {warm} to {parent[-1]} KiB"
    for key, rss in workers.items():
        assert rss[-1] < 1.10 * rss[20], f"worker {key} grew from {rss[20]} to {rss[-1]} KiB"
    assert descendants(os.getpid()) == processes
    assert open_fds() == fds
