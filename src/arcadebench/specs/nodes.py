"""Typed access to parsed YAML that knows where it is, so every error names file and key path.

A :class:`Node` wraps one parsed value with its path (``subsets.Atari-5.coefficients[2]``); its
accessors check the type and range and raise :class:`SpecError` with one message template:
"<file>: <path>: must be <rule>, got <value>".
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any, Literal, TypeVar, overload

from arcadebench.errors import SpecError, did_you_mean

__all__ = ["Node"]

_MAX_SHOWN = 60


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_.,=*+()' -]+$")


def _key(key: str) -> str:
    """A key as it appears in a path: plain keys as they are, odd ones (newlines...) quoted."""
    return key if _PLAIN_KEY.fullmatch(key) else repr(key)  # `$` would let a final "\n" by


C = TypeVar("C", bound=str)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 3] + "..."


def _one_line(text: str) -> str:
    """``text`` as written, or its repr when it spans lines: errors are one line."""
    return text if text.isprintable() else repr(text)


class Node:
    """A parsed YAML value plus its file and key path."""

    def __init__(self, value: Any, file: str, path: str = "") -> None:
        self.value = value
        self.file = file
        self.path = path

    def fail(self, rule: str) -> SpecError:
        """The error for this node: ``must be <rule>, got <value>``."""
        return SpecError(
            self.file, self.path or "<top level>", f"must be {rule}, got {_show(self.value)}"
        )

    def child(self, key: str | int, value: Any) -> Node:
        """The node of ``key`` below this one."""
        if isinstance(key, int):
            return Node(value, self.file, f"{self.path}[{key}]")
        return Node(value, self.file, f"{self.path}.{_key(key)}" if self.path else _key(key))

    # -- containers ---------------------------------------------------------------------------

    def mapping(
        self, required: tuple[str, ...] = (), optional: tuple[str, ...] = ()
    ) -> dict[str, Node]:
        """Check this is a mapping with exactly the allowed keys; return its children."""
        if not isinstance(self.value, dict):
            raise self.fail("a mapping")
        allowed = (*required, *optional)
        for key in self.value:
            if not isinstance(key, str):
                raise self.child(str(key), None).fail("a string key")
            if allowed and key not in allowed:
                raise SpecError(
                    self.file,
                    self.child(key, None).path,
                    f"unknown key.{did_you_mean(key, allowed)} Allowed here: {', '.join(allowed)}",
                )
        for key in required:
            if key not in self.value:
                raise SpecError(self.file, self.child(key, None).path, "is required but missing")
        return {key: self.child(key, value) for key, value in self.value.items()}

    def entries(self) -> Iterator[tuple[str, Node]]:
        """The (key, node) pairs of a mapping with free-form string keys, e.g. game tables."""
        if not isinstance(self.value, dict):
            raise self.fail("a mapping")
        if not self.value:
            raise self.fail("a non-empty mapping")
        for key, value in self.value.items():
            if not isinstance(key, str | int) or isinstance(key, bool):
                raise self.child(str(key), value).fail("keyed by names")
            yield str(key), self.child(str(key), value)

    def items(self, length: int | None = None, min_length: int = 0) -> list[Node]:
        """Check this is a list (of ``length`` if given); return its element nodes."""
        if not isinstance(self.value, list):
            raise self.fail("a list")
        if length is not None and len(self.value) != length:
            raise self.fail(f"a list of {length} items")
        if len(self.value) < min_length:
            raise self.fail(f"a list of at least {min_length} items")
        return [self.child(i, v) for i, v in enumerate(self.value)]

    # -- scalars ------------------------------------------------------------------------------

    def string(self, choices: tuple[str, ...] | None = None) -> str:
        """A non-empty string, one of ``choices`` if given."""
        if not isinstance(self.value, str) or not self.value.strip():
            raise self.fail("a non-empty string")
        if choices is not None and self.value not in choices:
            raise self.fail(f"one of {', '.join(_one_line(choice) for choice in choices)}")
        return self.value

    def choice(self, choices: tuple[C, ...]) -> C:
        """One of ``choices``, typed as they are (a tuple of literals gives that literal)."""
        return choices[choices.index(self.string(choices))]

    def boolean(self) -> bool:
        """``true`` or ``false``."""
        if not isinstance(self.value, bool):
            raise self.fail("true or false")
        return self.value

    @overload
    def integer(self, minimum: int | None = None, optional: Literal[False] = False) -> int: ...

    @overload
    def integer(self, minimum: int | None = None, *, optional: Literal[True]) -> int | None: ...

    def integer(self, minimum: int | None = None, optional: bool = False) -> int | None:
        """An integer (not a bool), at least ``minimum`` if given; ``null`` if ``optional``."""
        if self.value is None and optional:
            return None
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.fail("an integer")
        if minimum is not None and self.value < minimum:
            raise self.fail(f"an integer >= {minimum}")
        return self.value

    @overload
    def number(self, optional: Literal[False] = False, positive: bool = False) -> float: ...

    @overload
    def number(self, optional: Literal[True], positive: bool = False) -> float | None: ...

    def number(self, optional: bool = False, positive: bool = False) -> float | None:
        """A finite number; ``null`` if ``optional``; > 0 if ``positive``."""
        if self.value is None and optional:
            return None
        if isinstance(self.value, bool) or not isinstance(self.value, int | float):
            raise self.fail("a number" + (" or null" if optional else ""))
        if not math.isfinite(self.value):
            raise self.fail("a finite number")
        if positive and self.value <= 0:
            raise self.fail("a positive number")
        return float(self.value)

    def probability(self) -> float:
        """A number in [0, 1]."""
        value: float = self.number()
        if not 0.0 <= value <= 1.0:
            raise self.fail("a probability in [0, 1]")
        return value
