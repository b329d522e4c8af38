"""An observation against the emulator's screens: which processing made it.

Atari wrapper stacks turn the emulator's 210x160 RGB screen into an observation in a few
standard ways, and the audit recognises them by reproducing them from the screens of the
step's last two frames (:class:`Rendering`):

- grayscale from ALE's palette (``getScreenGrayscale``: Gymnasium's ``AtariPreprocessing``,
  ale-py's ``AtariVectorEnv``, envpool), OpenCV's ``COLOR_RGB2GRAY`` of the RGB screen
  (stable-baselines3's ``WarpFrame``) or Gymnasium's ``GrayscaleObservation`` weights applied
  after resizing (CleanRL's ``ppo_atari.py``), or the RGB screen itself;
- the maximum over the last two frames (DQN's flicker fix, Mnih et al. 2015, Methods) or the
  last frame alone (ale-py's v5 envs, ALE issue #467);
- an area resize (``cv2.INTER_AREA``, what every one of those libraries uses) to the
  observation's size.

A frame stack is found from behaviour: along its axis, each observation is the previous one
shifted by a frame (:func:`stack_axes`).

Classes: Rendering. Functions: newest_frame, renderings_for, stack_axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import cv2
import numpy as np
from numpy.typing import NDArray

__all__ = ["RAW_SIZE", "Rendering", "Screen", "newest_frame", "renderings_for", "stack_axes"]

RAW_SIZE = (210, 160)
"""The height and width of the emulator's screen."""
Screen = tuple[NDArray[np.uint8], NDArray[np.uint8]]
"""One frame's screen, as the RGB array and ALE's grayscale."""
_GYMNASIUM_WEIGHTS = np.array([0.2125, 0.7154, 0.0721])
"""``gymnasium.wrappers.GrayscaleObservation`` (gymnasium 1.x, transform_observation.py)."""


def _resize(image: NDArray[np.uint8], size: tuple[int, int]) -> NDArray[np.uint8]:
    if image.shape[:2] == size:
        return image
    return cast(NDArray[np.uint8], cv2.resize(image, size[::-1], interpolation=cv2.INTER_AREA))


@dataclass(frozen=True)
class Rendering:
    """One way of making an observation frame from the emulator's screens.

    Attributes:
        gray: ``"ale"``, ``"cv2"``, ``"gymnasium"`` (see the module docstring) or ``None``
            (RGB).
        pool: the maximum over the last two frames (else the last frame alone).
        size: the frame's height and width.
    """

    gray: str | None
    pool: bool
    size: tuple[int, int]

    def render(self, last: Screen, before: Screen | None) -> NDArray[np.uint8]:
        """The frame this processing makes of the last two screens (``before`` may be absent)."""
        pooled = self.pool and before is not None
        if self.gray == "ale":
            gray = np.maximum(last[1], before[1]) if pooled and before else last[1]
            return _resize(gray, self.size)
        rgb = np.maximum(last[0], before[0]) if pooled and before else last[0]
        if self.gray == "cv2":
            return _resize(
                cast(NDArray[np.uint8], cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY)), self.size
            )
        if self.gray == "gymnasium":
            weighted = np.sum(_resize(rgb, self.size) * _GYMNASIUM_WEIGHTS, axis=-1)
            return cast(NDArray[np.uint8], weighted.astype(np.uint8))
        return _resize(rgb, self.size)

    def describe(self) -> str:
        """What the processing does, in words.

        Example:
            >>> Rendering("ale", True, (84, 84)).describe()
            "ALE's grayscale, max of the last 2 frames, resized to 84x84"
        """
        colour = {
            "ale": "ALE's grayscale",
            "cv2": "OpenCV's grayscale of the RGB screen",
            "gymnasium": "Gymnasium's grayscale of the resized RGB",
            None: "RGB",
        }[self.gray]
        frames = "max of the last 2 frames" if self.pool else "the last frame"
        size = "" if self.size == RAW_SIZE else f", resized to {self.size[0]}x{self.size[1]}"
        return f"{colour}, {frames}{size}"


def renderings_for(frame: NDArray[np.generic]) -> list[Rendering]:
    """The processings that could have made ``frame`` (a 2-D gray or an HxWx3 RGB frame)."""
    size = (int(frame.shape[0]), int(frame.shape[1]))
    grays: tuple[str | None, ...] = ("ale", "cv2", "gymnasium") if frame.ndim == 2 else (None,)
    return [Rendering(gray, pool, size) for gray in grays for pool in (True, False)]


def stack_axes(previous: NDArray[np.generic], current: NDArray[np.generic]) -> set[int]:
    """The axes along which ``current`` is ``previous`` shifted by one frame (a frame stack).

    Example:
        >>> a = np.arange(12).reshape(3, 4)
        >>> b = np.concatenate([a[1:], [[9, 9, 9, 9]]])
        >>> stack_axes(a, b)
        {0}
    """
    if previous.shape != current.shape:
        return set()
    found = set()
    for axis, size in enumerate(current.shape):
        if size < 2:
            continue
        older = np.take(previous, range(1, size), axis=axis)
        newer = np.take(current, range(size - 1), axis=axis)
        if np.array_equal(older, newer):
            found.add(axis)
    return found


def newest_frame(obs: NDArray[np.generic], stack_axis: int | None) -> NDArray[np.generic]:
    """The observation's newest frame: the last along the stack axis, squeezed, channels last.

    Example:
        >>> newest_frame(np.zeros((4, 84, 84, 1)), 0).shape
        (84, 84)
        >>> newest_frame(np.zeros((3, 5, 6)), None).shape
        (5, 6, 3)
    """
    frame = obs if stack_axis is None else np.take(obs, obs.shape[stack_axis] - 1, axis=stack_axis)
    frame = np.squeeze(frame)
    if frame.ndim == 3 and frame.shape[0] == 3 and frame.shape[-1] != 3:
        frame = np.moveaxis(frame, 0, -1)
    return frame
