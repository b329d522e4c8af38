"""No-op starts: a random number of no-op frames after every reset (DQN's random starts).

Classes: NoopStarts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ale_py import Action
from ale_py.env import AtariEnv, AtariEnvStepMetadata

from arcadebench.errors import InvalidArgument

__all__ = ["NoopStarts"]


class NoopStarts(AtariEnv):
    """ale-py's ``AtariEnv`` whose every reset ends with a random number of no-op frames.

    Why: DQN's evaluation starts each episode "with different initial random conditions
    ('no-op')": "a random number of no-op actions (up to 30)" (Mnih et al. 2015, Methods), and
    the Atari 100k agents do the same at every reset. The code that produced their published
    numbers plays raw emulator frames — ``k = torch.random(30)`` frames in DeepMind's
    ``GameEnvironment.lua``, ``randint(0, 30)`` ``ale.act(0)`` calls in Dopamine's Atari 100k
    runner — so this is the env's own reset, not a wrapper: a frame is a fraction of an agent
    step, and the reset's observation (and the standard observation's frame stack) must be the
    screen after the no-ops. A game that ends during them is reset, as in Dopamine.

    The number is drawn from the env's seeded generator (``np_random``), uniformly in
    ``noop_starts = (least, most)``, so a seeded reset is reproducible; the no-op frames count in
    the episode's frames (``info["episode_frame_number"]``), as ALE counts them.

    Example:
        >>> env = NoopStarts("pong", noop_starts=(1, 30), repeat_action_probability=0.0)
        >>> _, info = env.reset(seed=0)
        >>> 1 <= info["episode_frame_number"] <= 30
        True
        >>> env.reset(seed=0)[1]["episode_frame_number"] == info["episode_frame_number"]
        True
        >>> env.close()
    """

    def __init__(
        self, game: str = "pong", *, noop_starts: tuple[int, int] | None = None, **kwargs: Any
    ) -> None:
        """Make the env; ``noop_starts`` is ``(least, most)`` frames, or ``None`` for none."""
        noop_starts = _check(noop_starts) if noop_starts is not None else None
        super().__init__(game, **kwargs)
        self.noop_starts = noop_starts

    def reset(  # type: ignore[override]  # AtariEnv's info type vs Env's dict: none fits both
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, AtariEnvStepMetadata]:
        """Reset as ``AtariEnv`` does, then play the no-op frames."""
        obs, info = super().reset(seed=seed, options=options)
        if self.noop_starts is None:
            return obs, info
        least, most = self.noop_starts
        ale = self.ale
        for _ in range(int(self.np_random.integers(least, most + 1))):
            ale.act(Action.NOOP)
            if ale.game_over():
                ale.reset_game()
        obs = self._get_obs()  # type: ignore[assignment]  # image observations only here
        return obs, {**info, **self._get_info()}


def _check(noop_starts: Any) -> tuple[int, int]:
    try:
        least, most = noop_starts
    except (TypeError, ValueError):
        least = most = None
    if not (
        isinstance(least, int | np.integer)
        and isinstance(most, int | np.integer)
        and 0 <= least <= most
    ):
        raise InvalidArgument(
            f"`noop_starts` must be (least, most) no-op frames with 0 <= least <= most, "
            f"got {noop_starts!r}"
        )
    return int(least), int(most)
