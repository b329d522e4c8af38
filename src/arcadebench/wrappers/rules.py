"""The step logic of each protocol rule, written once for one env and for a batch.

Every function takes either plain Python numbers (one env: the wrappers of
:mod:`~arcadebench.wrappers.boundaries` and :mod:`~arcadebench.wrappers.rewards`) or numpy
arrays with one entry per env (a batch: :mod:`~arcadebench.wrappers.vector`), and gives the
same answer for each env: only arithmetic and comparison operators, which mean the same on
both, so a rule cannot drift between the two wrapper families.

Functions: correct_rollovers, last_reward_frame, stuck_frames, limit_reached, life_lost,
drop_life_information.
"""

from __future__ import annotations

from typing import Any, SupportsFloat, overload

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "LIFE_KEYS",
    "correct_rollovers",
    "drop_life_information",
    "last_reward_frame",
    "life_lost",
    "limit_reached",
    "stuck_frames",
]

Frames = NDArray[np.int64]
"""Per-env frame numbers of a vector env; a single env's are ints."""

LIFE_KEYS = ("lives", "_lives")
"""The ``info`` keys of ale-py's life counter (a vector env adds the ``_lives`` mask)."""


def correct_rollovers(rewards: Any, threshold: float, correction: float) -> tuple[Any, Any]:
    """The rewards with every score-counter wrap undone, and where they were: ``(rewards, mask)``.

    SABER Appendix C as its authors ran it (valeoai/rainbow-iqn-apex): a reward strictly below
    ``threshold`` (-900,000) is a wrap of the six-digit score counter, and ``correction``
    (1,000,000, the counter's modulus) is added back.

    Example:
        >>> correct_rollovers(np.array([-999950.0, -9000.0, 25.0]), -900000.0, 1000000.0)
        (array([   50., -9000.,    25.]), array([ True, False, False]))
    """
    mask = np.less(rewards, threshold)
    return np.where(mask, np.add(rewards, correction), rewards), mask


@overload
def last_reward_frame(previous: int, frames: int, rewards: SupportsFloat) -> int: ...
@overload
def last_reward_frame(previous: Frames, frames: Frames, rewards: NDArray[Any]) -> Frames: ...
def last_reward_frame(
    previous: int | Frames, frames: int | Frames, rewards: SupportsFloat | NDArray[Any]
) -> int | Frames:
    """The frame of the last non-zero reward after a step (SABER's max stuck time, Table 1).

    A step with a non-zero reward restarts the count at that step's last frame, ``frames``
    (the episode's frame number after the step); otherwise ``previous`` stands.

    Example:
        >>> last_reward_frame(8, 20, 0.0), last_reward_frame(8, 20, 1.0)
        (8, 20)
        >>> last_reward_frame(np.array([8, 8]), np.array([20, 20]), np.array([0.0, -2.0]))
        array([ 8, 20])
    """
    frame: int | Frames = previous + (frames - previous) * (rewards != 0)
    return frame


@overload
def stuck_frames(frames: int, last_reward: int) -> int: ...
@overload
def stuck_frames(frames: Frames, last_reward: Frames) -> Frames: ...
def stuck_frames(frames: int | Frames, last_reward: int | Frames) -> int | Frames:
    """Frames since the last non-zero reward (or since the episode began).

    Example:
        >>> stuck_frames(18_000, 0)
        18000
    """
    stuck: int | Frames = frames - last_reward
    return stuck


def limit_reached(count: Any, limit: Any, ended: Any) -> Any:
    """Whether a limit ends the episode on this step: ``count >= limit``, and it did not end anyway.

    A limit is a truncation (SABER Table 1's stuck time; the 108,000-frame cap of HWR and
    Atari-5) that fires on the step whose count first reaches it, unless the episode ended on
    that step for another reason, whose end reason then stands. ``ended`` is a bool (or a bool
    array); for booleans ``a > b`` is "a and not b", element by element on arrays too.

    Example:
        >>> limit_reached(18_000, 18_000, False), limit_reached(18_000, 18_000, True)
        (True, False)
        >>> limit_reached(np.array([17_996, 18_000]), 18_000, np.array([False, False]))
        array([False,  True])
    """
    return (count >= limit) > ended


def life_lost(previous: Any, lives: Any, ended: Any) -> Any:
    """Whether a step lost a life and the game goes on: the learner's end of episode.

    DQN (Mnih et al. 2015, GameEnvironment.lua) and the Atari 100k agents (Dopamine's
    ``terminal_on_life_loss``) end the learner's episode when the life counter drops, while the
    game continues; a step that ended the game anyway (``ended``: game over, a limit) is that
    end instead, as is the last life (the counter reaching 0 is the game over).

    Example:
        >>> life_lost(3, 2, False), life_lost(3, 2, True), life_lost(1, 0, False)
        (True, False, False)
        >>> life_lost(np.array([3, 3]), np.array([2, 3]), np.array([False, False]))
        array([ True, False])
    """
    return ((lives < previous) & (lives > 0)) > ended


def drop_life_information(info: dict[str, Any]) -> None:
    """Remove the life counter from ``info`` (SABER Section 3.1; Machado et al. 2018).

    Example:
        >>> info = {"lives": 3, "episode_frame_number": 4}
        >>> drop_life_information(info); info
        {'episode_frame_number': 4}
    """
    for key in LIFE_KEYS:
        info.pop(key, None)
