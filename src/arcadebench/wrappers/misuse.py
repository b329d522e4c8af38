"""Catch, at run time, training wrappers that change the protocol from above it.

A protocol environment cannot see the wrappers a user puts on top, but it can see who calls it.
The usual Atari training stacks were written for ``NoFrameskip-v4`` environments and break
the protocols on a protocol env (SABER Section 3.1; Machado et al. 2018):

- *frame skipping again*: SB3's ``MaxAndSkipEnv`` (inside ``AtariWrapper`` and
  ``make_atari_env``) calls ``step`` four times per agent step, so the agent acts every 16
  frames instead of every 4;
- *episodes that end at a life loss*: SB3's ``EpisodicLifeEnv`` reports a lost life as the end
  of an episode and then, on the agent's ``reset``, steps the game on instead of resetting it —
  life information, which the protocols forbid, even though the log still holds whole games;
- *actions played at reset* (``NoopResetEnv``, ``FireResetEnv``): no-op starts change the
  starting-state distribution the protocols fix ("same starting state and varying seed").

:class:`MisuseDetector` looks at the first frame above the environment's own stack (the
emulator's wrappers, the monitor, Gymnasium's checkers) on the first steps of every episode and
on every reset: a wrapper's ``step`` that called ``step`` twice, or a wrapper's ``reset`` that
called ``step`` on a game it did not reset. Each finding is warned once, as a
:class:`~arcadebench.errors.NonCompliantWarning` with the fix, and returned so the monitor
records it as a deviation with every later episode. SB3's Atari wrappers on a standard
observation (already 84x84 and stacked) are refused at once: ``WarpFrame`` would fail in OpenCV.

Classes: MisuseDetector.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import FrameType
from typing import Any

import gymnasium.core
import gymnasium.utils.passive_env_checker
import gymnasium.wrappers.common

from arcadebench.errors import InvalidArgument, NonCompliantWarning, warn_user

__all__ = ["MisuseDetector"]

# frames of the environment's own stack: this package, and Gymnasium's core and common wrappers
_PACKAGE = str(Path(__file__).resolve().parents[1])
_OWN_FILES = frozenset(
    {
        gymnasium.core.__file__,
        gymnasium.wrappers.common.__file__,
        gymnasium.utils.passive_env_checker.__file__,  # the first reset and step go through it
    }
)
_SB3_ATARI = "stable_baselines3/common/atari_wrappers.py"
_FINDINGS = {  # what a wrapper's frame above a step call does, by deviation
    "reset_actions": "plays actions at reset (no-op or FIRE starts)",
    "life_loss_episodes": "continued a game it had not reset (episodes that end at a life loss)",
    "frame_skip": "steps the environment several times per agent step (a second frame skip)",
}
_FIX = (
    "use the protocol env as it is (it already skips 4 frames with sticky actions and ends "
    "episodes on game over only) and put only agent-side wrappers on top, e.g. "
    "obs_type='standard' for 84x84 stacked frames and gymnasium.wrappers.ClipReward "
    "(docs: guides/train.md, 'What the environments do for a learner')"
)


def _own(frame: FrameType) -> bool:
    filename = frame.f_code.co_filename
    return filename.startswith(_PACKAGE) or filename in _OWN_FILES


def _wrapper_chain(frame: FrameType | None) -> list[FrameType]:
    """The ``step``/``reset`` frames of the wrappers above the env's own stack, innermost first.

    Starts at ``frame`` (the caller of the monitor), skips the env's own frames, then follows
    the methods called ``step`` or ``reset`` upwards: the training wrappers, up to the loop.
    """
    while frame is not None and _own(frame):
        frame = frame.f_back
    chain: list[FrameType] = []
    while frame is not None and frame.f_code.co_name in ("step", "reset") and len(chain) < 32:
        chain.append(frame)
        frame = frame.f_back
    return chain


def _owner(frame: FrameType) -> str:
    """The class of the method a frame runs (``MaxAndSkipEnv``), or its function's name."""
    owner = frame.f_locals.get("self")
    return type(owner).__name__ if owner is not None else frame.f_code.co_name


class MisuseDetector:
    """Watch who steps and resets a protocol env; report what breaks the protocol, once each.

    The wrappers above the env are read from the call stack (about a microsecond) on the first
    steps after each reset, the first steps after a lost life, and every 1,024th step: a
    second frame skip shows on every step, a life-loss episode right after a lost life.
    """

    WATCH = 16  # steps inspected after a reset
    AFTER_LIFE = 8  # and after a lost life (a frame-skip wrapper may play on 3 more frames)
    EVERY = 1024  # and one step in this many, always

    def __init__(self) -> None:
        self.found: dict[str, str] = {}
        self._previous: list[FrameType] = []  # the wrapper chain of the last inspected step
        self._reset_chain: list[FrameType] = []
        self._watch = 0
        self._steps = 0

    def _report(self, key: str, what: str) -> dict[str, Any] | None:
        if key in self.found:
            return None
        self.found[key] = what
        warn_user(
            f"{what}: the run is non-compliant and its scores are not comparable with the "
            f"protocol's (recorded as a deviation in the log); {_FIX}",
            NonCompliantWarning,
        )
        return {key: {"spec": "none", "used": what}}

    def on_reset(self, standard_observation: bool) -> None:
        """Inspect a ``reset`` call (made by the monitor's ``reset``).

        Raises:
            InvalidArgument: SB3's Atari wrappers on a standard observation.
        """
        self._reset_chain = _wrapper_chain(sys._getframe(2))
        self._previous = []
        self._watch = self.WATCH
        sb3 = [f for f in self._reset_chain if _SB3_ATARI in f.f_code.co_filename]
        if sb3 and standard_observation:
            raise InvalidArgument(
                f"`env` must not be wrapped in stable-baselines3's AtariWrapper "
                f"({_owner(sb3[0])}) when obs_type='standard': its WarpFrame expects 210x160 "
                f"RGB frames and its MaxAndSkipEnv skips frames again; {_FIX}"
            )

    def on_step(self, lost_life: bool = False) -> dict[str, Any] | None:
        """Inspect a ``step`` call (made by the monitor's ``step``); the deviation, if new.

        ``lost_life``: the previous step lost a life (a life-loss wrapper acts right after).
        """
        self._steps += 1
        if lost_life:
            self._watch = max(self._watch, self.AFTER_LIFE)
        if self._watch <= 0 and self._steps % self.EVERY:
            return None
        chain = _wrapper_chain(sys._getframe(2))
        previous, self._previous = self._previous, chain
        found = None
        in_reset = False  # a step played by a wrapper's reset (no-op starts: up to 30 of them)
        for frame in chain:
            if frame.f_code.co_name == "reset":
                own_reset = any(frame is f for f in self._reset_chain)
                in_reset = in_reset or own_reset
                key = "reset_actions" if own_reset else "life_loss_episodes"
            elif any(frame is f for f in previous):
                key = "frame_skip"
            else:
                continue
            found = found or self._report(key, f"{_owner(frame)} {_FINDINGS[key]}")
        if not in_reset:  # the watched steps are the agent's first ones after the reset
            self._watch -= 1
        return found
