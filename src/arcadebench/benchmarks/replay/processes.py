"""Replays on every core, a crash costing only the items of the process it killed.

An emulator fed a hostile recording can kill its process. A process pool then fails every
item in flight, the crashed one's neighbours too; here those are played again, each in a pool
of its own, so that only the item that crashes is given up. ``verify`` replays its chains of
episodes this way and the report its clips.

Functions: map_on_cores, clean_start_method.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Literal, TypeVar

__all__ = ["clean_start_method", "map_on_cores"]

T = TypeVar("T")  # an item
R = TypeVar("R")  # its outcome


def clean_start_method() -> Literal["forkserver", "spawn"]:
    """How to start a process that shares nothing with its caller: forkserver, else spawn."""
    return "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"


def map_on_cores(
    function: Callable[[T], R],
    items: Sequence[T],
    workers: int | None,
    crashed: Callable[[T], R],
) -> list[R]:
    """``function`` of each item, in order, on ``workers`` processes (default: one per core).

    Here, in this process, when there is one item or one worker. Processes start by forkserver
    where there is one (the caller may have threads and matplotlib), else spawn: ``function``
    and the items must pickle. An item whose process dies is given ``crashed(item)``, after the
    items lost with it were played again alone.
    """
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(items) <= 1:
        return [function(item) for item in items]
    context = multiprocessing.get_context(clean_start_method())
    results: dict[int, R] = {}
    pending = list(range(len(items)))
    alone = False  # after a crash, each item of the lost pool goes to a pool of its own
    while pending:
        size = 1 if alone else min(workers, len(pending))
        batch = pending[:1] if alone else pending
        with ProcessPoolExecutor(size, mp_context=context) as pool:
            futures: dict[int, Future[R]] = {i: pool.submit(function, items[i]) for i in batch}
            lost: list[int] = []
            for i, future in futures.items():
                try:
                    results[i] = future.result()
                except BrokenProcessPool:
                    lost.append(i)
        if alone and lost:
            results[lost[0]] = crashed(items[lost[0]])
        pending = [i for i in pending if i not in results]
        alone = alone or bool(lost)
    return [results[i] for i in range(len(items))]
