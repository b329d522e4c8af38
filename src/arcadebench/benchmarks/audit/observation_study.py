"""What the agent sees: the observation's layout and the processing that made it, measured.

Fed every step of a play, :class:`ObservationStudy` finds the frame stack from behaviour (the
axis along which each observation is the previous one shifted by a frame,
:func:`~.screens.stack_axes`), then reproduces the newest frame from the emulator's screens of
the step's last two frames with each standard processing (:class:`~.screens.Rendering`):
grayscale or RGB, the maximum of the last two frames or the last one (DQN's flicker fix; ale-py
v5 has none, ALE issue #467), resized. The processing reproduced exactly on the most steps wins,
else the closest. Where the screens are out of reach (:mod:`.shadow`), the reference emulator's
surviving processing is reported instead.

Classes: ObservationStudy.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.audit.screens import (
    Rendering,
    Screen,
    newest_frame,
    renderings_for,
    stack_axes,
)

__all__ = ["STUDIED_STEPS", "ObservationStudy"]

STUDIED_STEPS = 120
"""Steps whose frames are reproduced (enough to see moving sprites; the rest only stacked)."""


class ObservationStudy:
    """Accumulates, step by step, the observation's layout and how its frames were made."""

    def __init__(self) -> None:
        self.shape: tuple[int, ...] | None = None
        self.dtype = ""
        self.pairs = 0  # consecutive different observations within an episode
        self.axes: Counter[int] = Counter()
        self.exact: Counter[Rendering] = Counter()
        self.distance: Counter[Rendering] = Counter()
        self.compared = 0
        self._previous: NDArray[np.generic] | None = None

    def reset(self, obs: Any) -> None:
        """An episode's first observation."""
        array = np.asarray(obs)
        self.shape, self.dtype = tuple(array.shape), str(array.dtype)
        self._previous = array

    def step(self, obs: Any, screens: tuple[Screen, Screen | None] | None, ended: bool) -> None:
        """A step's observation and (where reachable) the screens of its last two frames."""
        array = np.asarray(obs)
        previous, self._previous = self._previous, None if ended else array
        if ended or previous is None:
            return
        if not np.array_equal(previous, array):
            self.pairs += 1
            self.axes.update(stack_axes(previous, array))
        if screens is None or self.compared >= STUDIED_STEPS:
            return
        frame = newest_frame(array, self.stack_axis).astype(np.int64)
        self.compared += 1
        for rendering in renderings_for(frame):
            rendered = rendering.render(*screens)
            if rendered.shape != frame.shape:
                continue
            gap = int(np.abs(rendered.astype(np.int64) - frame).sum())
            self.distance[rendering] += gap
            self.exact[rendering] += gap == 0

    @property
    def stack_axis(self) -> int | None:
        """The axis of the frame stack, found shifted on at least 9 in 10 changing steps."""
        if not self.pairs:
            return None
        axis, seen = max(self.axes.items(), key=lambda item: (item[1], -item[0]), default=(0, 0))
        return axis if seen >= 0.9 * self.pairs and seen >= 3 else None

    def best(self) -> Rendering | None:
        """The processing reproduced exactly most often, else the closest on average."""
        if not self.distance:
            return None
        return min(self.distance, key=lambda r: (-self.exact[r], self.distance[r], str(r)))

    def result(self, views: Any = None) -> dict[str, Any]:
        """The layout and processing as a JSON-able dict (``views``: the reference's, if any)."""
        axis = self.stack_axis
        stack = 1 if axis is None or self.shape is None else self.shape[axis]
        frame = list(newest_frame(np.zeros(self.shape, np.uint8), axis).shape) if self.shape else []
        best = self.best()
        if best is not None and self.exact[best]:
            how = f"reproduced exactly on {self.exact[best]} of {self.compared} steps"
        elif best is not None:
            how = f"the closest processing; none reproduced it exactly ({self.compared} steps)"
        elif views:
            renderings = {r for _, r in views}
            best = min(renderings, key=lambda r: (not r.pool, str(r)))
            how = "reproduced by the reference emulator on every step it followed"
            if len({r.pool for r in renderings}) > 1:
                how += " (with or without the max of 2 frames: no step told them apart)"
        else:
            how = "the processing was not reproduced"
        return {
            "shape": list(self.shape or ()),
            "dtype": self.dtype,
            "stack": stack,
            "stack_axis": axis,
            "frame": frame,
            "processing": None if best is None else best.describe(),
            "how": how,
        }
