"""What one step and one reset of an audited env did, in the emulator's terms.

Both ways of measuring produce these records: the emulator tap (:mod:`.tap`), where the env's
``ALEInterface`` is reachable in this process, and the reference emulator kept in step
(:mod:`.shadow`), where it is not (ale-py's ``AtariVectorEnv``, envpool). Everything the audit
concludes (:mod:`.properties`) is computed from a list of them, so the two ways cannot drift.
A field is ``None`` where the measurement could not tell.

Classes: StepFacts, ResetFacts. Functions: action_id, flat_info.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["Event", "ResetFacts", "StepFacts", "action_id", "flat_info"]


@dataclass(frozen=True)
class StepFacts:
    """One agent step of env 0.

    Attributes:
        action: the agent's action (an index into the env's action space).
        reward: the reward the env returned.
        terminated: the env's ``terminated`` flag.
        truncated: the env's ``truncated`` flag.
        info: the env's ``info``, flattened (:func:`flat_info`).
        frames: emulator frames the step advanced.
        played: the action the emulator received on each of those frames (ALE action ids).
        raw_reward: the emulator's own reward over those frames: the game's score change.
        lives: the emulator's lives after the step.
        lost_life: the step lost a life.
        game_over: the emulator's game was over after the step.
        game_frame: emulator frames since the game's reset, after the step.
    """

    action: int
    reward: float
    terminated: bool
    truncated: bool
    info: Mapping[str, Any] = field(default_factory=dict)
    frames: int | None = None
    played: tuple[int, ...] | None = None
    raw_reward: float | None = None
    lives: int | None = None
    lost_life: bool | None = None
    game_over: bool | None = None
    game_frame: int | None = None

    @property
    def ended(self) -> bool:
        """The step ended the episode."""
        return self.terminated or self.truncated


@dataclass(frozen=True)
class ResetFacts:
    """One reset of env 0 (the agent's ``reset()``, or a vector env's automatic reset).

    Attributes:
        info: the reset's ``info``, flattened (:func:`flat_info`).
        fresh: ALE reset the game (``False``: the game went on, as after a lost life that ended
            the episode in stable-baselines3's ``EpisodicLifeEnv``).
        played: the ways the reset can have played its frames after ALE's own reset (or, when
            the game went on, in the reset): each a tuple of ALE action ids. The tap sees one;
            the reference emulator keeps every sequence that explains what followed.
        game_frame: emulator frames since the game's reset, after the reset.
        lives: the emulator's lives after the reset.
    """

    info: Mapping[str, Any] = field(default_factory=dict)
    fresh: bool | None = None
    played: tuple[tuple[int, ...], ...] | None = None
    game_frame: int | None = None
    lives: int | None = None


Event = StepFacts | ResetFacts
"""What a play records, in order."""


def flat_info(info: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``info`` with nested dicts flattened to dotted keys and one-element arrays to scalars.

    Longer arrays (envpool's ``ram``) keep their shape only; vector envs' ``_key`` masks are
    dropped.

    Example:
        >>> flat_info({"lives": np.array(3), "episode": {"r": 21.0}, "ram": np.zeros(128)})
        {'lives': 3, 'episode.r': 21.0, 'ram': 'array(128,)'}
    """
    flat: dict[str, Any] = {}
    for key, value in info.items():
        name = f"{prefix}{key}"
        if str(key).startswith("_"):
            continue
        if isinstance(value, Mapping):
            flat.update(flat_info(value, f"{name}."))
        elif isinstance(value, np.ndarray | np.generic):
            array = np.asarray(value)
            flat[name] = array.item() if array.size == 1 else f"array{array.shape}"
        else:
            flat[name] = value
    return flat


def action_id(action: Any) -> int:
    """The number of an ALE action (ale-py's ``Action`` enum, or already a number).

    Example:
        >>> from ale_py import Action
        >>> action_id(Action.FIRE), action_id(3)
        (1, 3)
    """
    return int(getattr(action, "value", action))
