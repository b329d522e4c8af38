"""map_on_cores: every item on the cores, in order; a crash costs only the item that crashed."""

from __future__ import annotations

import os

from arcadebench.benchmarks.replay.processes import map_on_cores


def square_or_die(item: int) -> int:
    if item == 3:
        os._exit(1)  # what an emulator crashed by a hostile recording does to its process
    return item * item


def given_up(item: int) -> int:
    return -item


def test_items_come_back_in_order_and_only_the_crashing_one_is_given_up():
    assert map_on_cores(square_or_die, [0, 1, 2, 4, 5], 2, given_up) == [0, 1, 4, 16, 25]
    assert map_on_cores(square_or_die, [1, 2, 3, 4, 5], 2, given_up) == [1, 4, -3, 16, 25]
    assert map_on_cores(square_or_die, [2], 2, given_up) == [4]  # here, without a pool
