"""The look shared by every report figure: matplotlib on demand, Okabe-Ito colours, safe labels.

matplotlib is an optional extra (``arcadebench[report]``), imported only when a figure is drawn.
Figures are :class:`matplotlib.figure.Figure` objects rendered by the Agg canvas, never through
``pyplot``: headless, no global backend switch in the caller's session, nothing left open.

Colours follow Okabe & Ito (2008), distinguishable with the common colour-vision deficiencies;
published references are hatched so they never look like a result. Text read from inputs goes
through :func:`label`, which keeps matplotlib from interpreting it (``$...$`` is mathtext, a
leading ``_`` hides a legend entry).

Classes: MissingDependency.
Functions: require_matplotlib, new_figure, save_png, label, colour, hatch, needs_log.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from arcadebench.errors import MissingDependency, install_hint

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from arcadebench.benchmarks.report.report_data import Entry

__all__ = [
    "fit_title",
    "INSTALL_HINT",
    "PALETTE",
    "colour",
    "hatch",
    "label",
    "needs_log",
    "new_figure",
    "require_matplotlib",
    "save_png",
]

#: Okabe-Ito, most distinct first (yellow, the weakest on white, last but one).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
_CYCLE_HATCHES = ("", "..", "xx", "++")
INSTALL_HINT = install_hint("report", "matplotlib")
DPI = 100


def require_matplotlib() -> None:
    """Raise :class:`MissingDependency` (one line, with the install command) without matplotlib."""
    try:
        found = importlib.util.find_spec("matplotlib") is not None
        if found:
            import matplotlib.figure  # noqa: F401 - a broken install fails here, not mid-report
    except (ImportError, ValueError):
        found = False
    if not found:
        raise MissingDependency(
            f"`arcadebench report` draws its figures with matplotlib, which is not installed; "
            f"install it with: {INSTALL_HINT}"
        )


def new_figure(width: float, height: float) -> Figure:
    """A headless figure (Agg canvas) with constrained layout, ``width`` x ``height`` inches."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, min(height, 300.0)), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def fit_title(figure: Figure, text: str, fontsize: float) -> str:
    """``text`` wrapped to the figure's width, so a title is never cut at the edges.

    A character of the sans-serif font is about 0.6 of its size wide; each line of ``text`` is
    wrapped on spaces to what the figure's width holds.
    """
    width_points = figure.get_figwidth() * 72 * 0.94  # leave the constrained layout a margin
    per_line = max(20, int(width_points / (0.6 * fontsize)))
    return "\n".join(
        textwrap.fill(line, per_line, break_on_hyphens=False) for line in text.split("\n")
    )


def save_png(figure: Figure, path: Path) -> Path:
    """Write ``figure`` as a PNG (no timestamp in the metadata, so reruns are byte-identical)."""
    figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def label(text: Any, limit: int = 44) -> str:
    """``text`` as a literal matplotlib label: ``$`` escaped, cut to ``limit`` characters."""
    value = " ".join(str(text).split())
    if len(value) > limit:
        value = value[: limit - 1] + "\u2026"
    value = value.replace("\\", "\\\\").replace("$", r"\$")
    if value.startswith("_"):  # matplotlib hides legend entries whose label starts with "_"
        value = " " + value
    return value


def colour(index: int) -> str:
    """The Okabe-Ito colour of the ``index``-th entry (the palette repeats, hatched, after 8)."""
    return PALETTE[index % len(PALETTE)]


def hatch(index: int, entry: Entry) -> str:
    """Bar hatch: ``//`` marks a published reference; repeats of the palette add a pattern."""
    base = _CYCLE_HATCHES[(index // len(PALETTE)) % len(_CYCLE_HATCHES)]
    return base + ("///" if entry.kind == "reference" else "")


def needs_log(values: ArrayLike, percent: bool = True) -> bool:
    """Whether finite scores spread over enough orders of magnitude for a (symmetric) log axis.

    Atari normalised scores range from below 0 to tens of thousands of percent; a linear axis
    would flatten every game below the largest. Log when the largest magnitude is over 50 times
    the median magnitude, or, for normalised scores (``percent``), over 1,000 % (ten times the
    reference).

    Example:
        >>> needs_log([10, 50, 120]), needs_log([0, 20, 4000]), needs_log([2000, 3000], False)
        (False, True, False)
    """
    finite = np.abs(np.asarray(values, dtype=np.float64))
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return False
    largest = float(finite.max())
    return (percent and largest > 1000.0) or largest > 50.0 * max(float(np.median(finite)), 1.0)
