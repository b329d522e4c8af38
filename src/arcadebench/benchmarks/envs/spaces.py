"""What a protocol environment's observations look like, for agents trained elsewhere.

A saved model knows the shape of the observations it was trained on, not the ``obs_type`` that
gives them; the runner picks the environment's ``obs_type`` from that shape, so a model is
always evaluated on the observations it learnt from, and refuses a shape no environment gives.

Functions: obs_type_for_shape.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["OBSERVATION_SHAPES", "obs_type_for_shape"]

OBSERVATION_SHAPES: dict[tuple[int, ...], str] = {
    (4, 84, 84): "standard",  # grayscale, max-pooled, 84x84 INTER_AREA, stack of 4, oldest first
    (210, 160, 3): "rgb",
    (250, 160, 3): "rgb",  # the ROMs ALE runs as PAL
    (210, 160): "grayscale",
    (250, 160): "grayscale",
    (128,): "ram",
}
"""Each Atari ``obs_type``'s observation shape (``AtariEnv``'s screens; the standard stack)."""


def obs_type_for_shape(shape: Sequence[int] | None) -> str | None:
    """The ``obs_type`` whose observations have ``shape``, or ``None``.

    Example:
        >>> obs_type_for_shape((4, 84, 84)), obs_type_for_shape((84, 84, 4))
        ('standard', None)
    """
    return OBSERVATION_SHAPES.get(tuple(shape or ()))
