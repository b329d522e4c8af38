"""Plain-text aligned tables: the one renderer behind ``Results.table()`` and the CLI output.

Plain text (not a terminal library) so tables are identical in a terminal, a log file and a
test, and can be pasted into a paper's appendix.

Example:
    >>> print(render_table(["game", "score"], [["pong", 21.0], ["breakout", 3.25]], title="Demo"))
    Demo
    game      score
    --------  -----
    pong      21.00
    breakout   3.25
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence

__all__ = ["Percent", "count", "format_cell", "render_table"]


def count(n: int, noun: str) -> str:
    """``n`` and the noun, singular for one: ``count(1, "game")`` is ``"1 game"``.

    Example:
        >>> count(1, "episode"), count(61, "game")
        ('1 episode', '61 games')
    """
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


class Percent(float):
    """A number shown with a ``%`` sign: normalised scores and their aggregates are percentages."""


def format_cell(value: object, digits: int = 2) -> str:
    """One cell: numbers with ``digits`` decimals (thousands separated), ``None`` as ``-``.

    A number too small for ``digits`` decimals to show two significant digits keeps three (a
    learning efficiency per frame, minutes of game time in days) instead of printing as zero.

    Example:
        >>> [format_cell(v) for v in (1234.5, 0.25, 0.0193, 4.37e-08, Percent(12.5), None)]
        ['1,234.50', '0.25', '0.0193', '4.37e-08', '12.50%', '-']
    """
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        if math.isinf(value):
            text = "inf" if value > 0 else "-inf"
        elif value == 0 or abs(value) >= 10 ** (1 - digits):
            text = f"{value:,.{digits}f}"
        elif abs(value) >= 1e-4:
            text = f"{value:.{2 - math.floor(math.log10(abs(value)))}f}"
        else:
            text = f"{value:.3g}"
        return text + "%" if isinstance(value, Percent) else text
    return str(value)


def render_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    title: str | None = None,
    digits: int = 2,
    wrap: Mapping[str, int] | None = None,
) -> str:
    """Render ``rows`` under ``columns``: text left-aligned, numbers right-aligned.

    ``wrap`` gives text columns a width: their cells are wrapped onto further lines of the row,
    so a listing with citations stays readable in a terminal.

    Example:
        >>> print(render_table(["name", "note"], [["a", "one two three"]], wrap={"note": 7}))
        name  note
        ----  -------
        a     one two
              three
    """
    cells = [[format_cell(v, digits) for v in row] for row in rows]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in rows) and bool(rows)
        for i in range(len(columns))
    ]
    limits = [(wrap or {}).get(c) for c in columns]
    lines_of = [
        [
            (textwrap.wrap(v, limit) or [""]) if limit else [v]
            for v, limit in zip(row, limits, strict=True)
        ]
        for row in cells
    ]
    widths = [
        max([len(c), *(len(part) for row in lines_of for part in row[i])])
        for i, c in enumerate(columns)
    ]

    def line(values: Sequence[str], header: bool = False) -> str:
        parts = [
            v.rjust(w) if numeric[i] and not header else v.ljust(w)
            for i, (v, w) in enumerate(zip(values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    out = [title] if title else []
    out.append(line(columns, header=True))
    out.append("  ".join("-" * w for w in widths))
    for row in lines_of:
        height = max(len(parts) for parts in row)
        out.extend(
            line([parts[k] if k < len(parts) else "" for parts in row]) for k in range(height)
        )
    return "\n".join(out)
