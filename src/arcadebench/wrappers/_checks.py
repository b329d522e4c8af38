"""Argument checks shared by the wrappers: one message template, raised before any side effect.

Every check raises :class:`InvalidArgument` with "`<param>` must be <rule>, got <value!r>", so a
bad argument is reported the same way by every wrapper (style guideline 2).
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Any

from arcadebench.errors import InvalidArgument

__all__ = ["check_int", "check_probability", "check_real"]


def _is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def check_int(name: str, value: Any, minimum: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer ``>= minimum``, else raise.

    Example:
        >>> check_int("n", 4, minimum=1)
        4
        >>> check_int("n", 0, minimum=1)
        Traceback (most recent call last):
        ...
        arcadebench.errors.InvalidArgument: `n` must be an integer >= 1, got 0
    """
    if not _is_int(value) or (minimum is not None and value < minimum):
        rule = "an integer" if minimum is None else f"an integer >= {minimum}"
        raise InvalidArgument(f"`{name}` must be {rule}, got {value!r}")
    return int(value)


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a ``float`` if it is a finite real number, else raise."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise InvalidArgument(f"`{name}` must be a finite number, got {value!r}")
    return float(value)


def check_probability(name: str, value: Any) -> float:
    """Return ``value`` as a ``float`` if it is a probability in [0, 1], else raise."""
    if isinstance(value, bool) or not isinstance(value, Real) or not 0.0 <= float(value) <= 1.0:
        raise InvalidArgument(f"`{name}` must be a probability in [0, 1], got {value!r}")
    return float(value)
