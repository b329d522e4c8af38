r"""The look shared by every report figure: matplotlib on demand, Okabe-Ito colours, safe labels.

matplotlib is an optional extra (``arcadebench[report]``), imported only when a figure is drawn.
Figures are :class:`matplotlib.figure.Figure` objects rendered by the Agg canvas, never through
``pyplot``: headless, no global backend switch in the caller's session, nothing left open.

A figure is drawn at a width in inches and a font size, and everything else follows from the
two: the report page's figures at :data:`SCREEN_WIDTH` and :data:`SCREEN_FONT_SIZE`, a paper's at
a column's width (:data:`SINGLE_COLUMN`, :data:`DOUBLE_COLUMN`: the two-column templates'
``\linewidth`` and ``\textwidth``) and :data:`PAPER_FONT_SIZE`, so a figure included at
``width=\linewidth`` shows its text at the size it was drawn. Every text of a figure is set in
that size (:func:`font_style`, :func:`finish`), its height comes from what it holds (lines of text
and rows of data, :func:`line_height`), and text is fitted by measuring it with the figure's own
renderer (:func:`text_width`): titles and labels wrap (:func:`wrap`, :func:`fit_title`), a legend
takes as many columns as fit (:func:`fit_legend`), so nothing runs off the figure's edge.

Colours follow Okabe & Ito (2008), distinguishable with the common colour-vision deficiencies;
published references are hatched so they never look like a result. Text read from inputs goes
through :func:`label`, which keeps matplotlib from interpreting it (``$...$`` is mathtext, a
leading ``_`` hides a legend entry).

Classes: MissingDependency.
Functions: require_matplotlib, check_size, font_style, sized, new_figure, line_height, text_width,
wrap, fit_label, fit_title, fit_legend, finish, save_png, writing, label, compact, colour, hatch,
whiskers, entry_bars, needs_log.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from arcadebench.errors import InputError, InvalidArgument, MissingDependency, install_hint

if TYPE_CHECKING:  # pragma: no cover
    import matplotlib.axes
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure

    from arcadebench.benchmarks.report.report_data import Entry, ReportData

__all__ = [
    "DOUBLE_COLUMN",
    "DPI",
    "INSTALL_HINT",
    "PALETTE",
    "PAPER_FONT_SIZE",
    "SCREEN_FONT_SIZE",
    "SCREEN_WIDTH",
    "SINGLE_COLUMN",
    "check_size",
    "colour",
    "compact",
    "entry_bars",
    "finish",
    "fit_label",
    "fit_legend",
    "fit_title",
    "font_style",
    "hatch",
    "label",
    "line_height",
    "needs_log",
    "new_figure",
    "require_matplotlib",
    "save_png",
    "sized",
    "text_width",
    "whiskers",
    "writing",
    "wrap",
]

#: Okabe-Ito, most distinct first (yellow, the weakest on white, last but one).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
_CYCLE_HATCHES = ("", "..", "xx", "++")
INSTALL_HINT = install_hint("report", "matplotlib")
#: Pixels per inch a figure is drawn at, and of its PNG unless :func:`save_png` is told otherwise.
DPI = 100
#: Width of the report page's figures, 1,000 pixels at :data:`DPI`, within the page's 1,280.
SCREEN_WIDTH = 10.0
#: Text of the report page's figures, in points.
SCREEN_FONT_SIZE = 10.0
#: A column of the two-column conference templates (NeurIPS' single column is 5.5 in).
SINGLE_COLUMN = 3.25
#: Both columns of them, a ``figure*``.
DOUBLE_COLUMN = 6.75
#: Text of a paper's figure in points, a caption's size in most templates.
PAPER_FONT_SIZE = 8.0
_LINE_SPACING = 1.3  # a line of text is this many times its font size high
_MARGIN = 0.06  # inches kept free at each edge of the figure, besides the layout's own pads
_HANDLE, _HANDLE_PAD, _COLUMN_SPACING = 1.6, 0.5, 1.2  # a legend's spacing, in font sizes


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


def check_size(
    figure_width: float,
    font_size: float,
    widths: tuple[float, float] = (2.0, 20.0),
    sizes: tuple[float, float] = (6.0, 14.0),
) -> None:
    """Raise :class:`InvalidArgument` unless the width (inches) and font size (points) are in range.

    Example:
        >>> check_size(3.25, 8.0)
        >>> check_size(30.0, 8.0)
        Traceback (most recent call last):
        ...
        arcadebench.errors.InvalidArgument: `figure_width` must be between 2 and 20 inches \
(3.25: one column, 6.75: two), got 30.0
    """
    for name, value, (low, high), unit in (
        ("figure_width", figure_width, widths, "inches (3.25: one column, 6.75: two)"),
        ("font_size", font_size, sizes, "points"),
    ):
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not low <= value <= high
        ):
            raise InvalidArgument(
                f"`{name}` must be between {low:g} and {high:g} {unit}, got {value!r}"
            )


@contextmanager
def font_style(font_size: float) -> Iterator[None]:
    """Every matplotlib text size ``font_size`` while a figure is built, titles one point up."""
    from matplotlib import rc_context

    texts = ("font.size", "axes.labelsize", "xtick.labelsize", "ytick.labelsize", "legend.fontsize")
    sizes: dict[str, Any] = dict.fromkeys((*texts, "legend.title_fontsize"), font_size)
    sizes.update({"axes.titlesize": font_size + 1, "figure.titlesize": font_size + 1})
    with rc_context(cast("dict[Any, Any]", sizes)):  # matplotlib types keys as literals
        yield


_Drawing = TypeVar("_Drawing", bound=Callable[..., "Figure | None"])


def sized(draw: _Drawing) -> _Drawing:
    """A figure function taking ``figure_width`` and ``font_size``, both checked first.

    Its figure is built with every text in ``font_size`` (:func:`font_style`), after
    :func:`check_size` accepted the two.
    """

    @functools.wraps(draw)
    def checked(
        data: ReportData,
        *,
        figure_width: float = SCREEN_WIDTH,
        font_size: float = SCREEN_FONT_SIZE,
    ) -> Figure | None:
        check_size(figure_width, font_size)
        with font_style(font_size):
            figure: Figure | None = draw(data, figure_width=figure_width, font_size=font_size)
            return figure

    return cast("_Drawing", checked)


def new_figure(width: float, height: float) -> Figure:
    """A headless figure (Agg canvas) with constrained layout, ``width`` x ``height`` inches."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, min(height, 300.0)), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def line_height(font_size: float, lines: float = 1.0) -> float:
    """Inches that ``lines`` lines of text of ``font_size`` points take.

    Example:
        >>> round(line_height(8.0, 2), 3)
        0.289
    """
    return lines * font_size * _LINE_SPACING / 72.0


def text_width(text: str, font_size: float, bold: bool = False) -> float:
    """The width in inches of ``text``'s widest line in ``font_size`` points, as Agg draws it.

    Example:
        >>> 0.2 < text_width("HNS IQM", 8.0) < 0.6
        True
    """
    from matplotlib import rcParams

    font = (tuple(rcParams["font.family"]), tuple(rcParams["font.sans-serif"]))
    return max(_width(line, float(font_size), bold, font) for line in text.split("\n"))


@functools.lru_cache(maxsize=8192)
def _width(line: str, font_size: float, bold: bool, font: object) -> float:
    from matplotlib.font_manager import FontProperties

    prop = FontProperties(size=font_size, weight="bold" if bold else "normal")
    width, _, _ = _renderer().get_text_width_height_descent(line, prop, ismath=False)
    return float(width) / 72.0  # the renderer draws at 72 dots per inch: a dot is a point


@functools.cache
def _renderer() -> Any:
    from matplotlib.backends.backend_agg import RendererAgg

    return RendererAgg(1, 1, 72)  # type: ignore[no-untyped-call]  # a C class, unannotated


def wrap(text: str, font_size: float, width: float, bold: bool = False) -> str:
    r"""``text`` broken on spaces into lines no wider than ``width`` inches.

    Existing line breaks are kept, a number stays on the line of its ``%``, and a word wider
    than ``width`` is split where it fills a line, so no line of the result is wider than asked.

    Example:
        >>> wrap("fraction of runs with score above tau", 8.0, 1.0)
        'fraction of runs\nwith score above\ntau'
    """
    lines: list[str] = []
    text = text.replace(" %", "\u00a0%")  # "95 %" stays on one line
    for paragraph in text.split("\n"):
        current = ""
        for word in paragraph.split(" "):
            candidate = f"{current} {word}" if current else word
            if current and text_width(candidate, font_size, bold) > width:
                lines.append(current)
                candidate = word
            while len(candidate) > 1 and text_width(candidate, font_size, bold) > width:
                cut = _fits(candidate, font_size, width, bold)
                lines.append(candidate[:cut])
                candidate = candidate[cut:]
            current = candidate
        lines.append(current)
    return "\n".join(lines).replace("\u00a0%", " %")


def _fits(text: str, font_size: float, width: float, bold: bool) -> int:
    """How many leading characters of ``text`` fit in ``width`` inches (at least one)."""
    low, high = 1, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if text_width(text[:middle], font_size, bold) <= width:
            low = middle
        else:
            high = middle - 1
    return low


def fit_label(text: str, font_size: float, width: float, lines: int = 2) -> str:
    r"""``text`` wrapped to ``width`` inches in at most ``lines`` lines, the last one cut short.

    For names on an axis, where a long one must not squeeze the plot.

    Example:
        >>> print(fit_label("Rainbow DQN (Table 3, as originally published)", 8.0, 0.8))
        Rainbow DQN
        (Table 3, as…
    """
    wrapped = wrap(text, font_size, width).split("\n")
    if len(wrapped) <= lines:
        return "\n".join(wrapped)
    last = " ".join(wrapped[lines - 1 :]) + "\u2026"
    while len(last) > 1 and text_width(last, font_size) > width:
        last = last[:-2] + "\u2026"
    return "\n".join([*wrapped[: lines - 1], last])


def fit_title(figure: Figure, text: str, font_size: float) -> str:
    """``text`` wrapped to the figure's width, so a title is never cut at the edges."""
    return wrap(text, font_size, figure.get_figwidth() - 4 * _MARGIN)


def fit_legend(
    figure: Figure,
    handles: Sequence[Artist],
    font_size: float,
) -> None:
    """A frameless figure legend of ``handles`` in as many columns as the figure's width holds.

    Each label is first wrapped to the width left beside its handle; then the legend takes the
    most columns whose widest labels, handles and spacing fit within the figure. Handles and
    spacing are a little shorter than matplotlib's, so that two columns fit a paper's column.

    Args:
        figure: the figure the legend is drawn in, outside its axes.
        handles (Sequence[matplotlib.artist.Artist]): the artists shown, with their labels.
        font_size: the figure's text size, in points.
    """
    if not handles:
        return
    em = font_size / 72.0
    handle = (_HANDLE + _HANDLE_PAD) * em
    spacing = _COLUMN_SPACING * em
    room = figure.get_figwidth() - 2 * _MARGIN - 0.8 * em  # the legend's own pads: 0.4 em
    for artist in handles:
        artist.set_label(wrap(str(artist.get_label()), font_size, room - handle))
    widths = [handle + text_width(str(a.get_label()), font_size) for a in handles]
    ncols = len(handles)
    while ncols > 1:
        rows = math.ceil(len(handles) / ncols)
        columns = [widths[c * rows : (c + 1) * rows] for c in range(ncols)]  # filled by column
        if sum(max(c, default=0.0) for c in columns) + spacing * (ncols - 1) <= room:
            break
        ncols -= 1
    figure.legend(
        handles=handles,
        loc="outside lower center",
        ncols=ncols,
        fontsize=font_size,
        frameon=False,
        handlelength=_HANDLE,
        handletextpad=_HANDLE_PAD,
        columnspacing=_COLUMN_SPACING,
    )


def finish(figure: Figure, font_size: float, axes_height: float | None = None) -> Figure:
    """Tick labels in ``font_size``; with ``axes_height``, the figure as tall as its axes need.

    matplotlib makes tick labels when it draws, after the figure's font sizes were set: they are
    set on each axis here. ``axes_height`` is the height in inches the rows of axes should have
    together; the constrained layout is run once and the figure's height becomes that plus what
    its titles, labels and legends took, so the plots keep their size whatever surrounds them.
    """
    for ax in figure.axes:
        ax.tick_params(labelsize=font_size)
        for axis in (ax.xaxis, ax.yaxis):
            axis.get_offset_text().set_fontsize(font_size)
    if axes_height is None:
        return figure
    figure.set_figheight(min(axes_height + 4.0, 300.0))  # room enough for a first layout
    for _ in range(3):  # the layout's spacing between rows scales a little with the height
        figure.draw_without_rendering()
        height = figure.get_figheight()
        boxes = [ax.get_position() for ax in figure.axes if ax.get_visible()]
        rows = {(round(box.y0, 4), round(box.y1, 4)) for box in boxes}
        taken = sum(y1 - y0 for y0, y1 in rows) * height
        wanted = max(height - taken + axes_height, axes_height + line_height(font_size, 2))
        if abs(wanted - height) < 0.01:
            break
        figure.set_figheight(min(wanted, 300.0))
    return figure


def save_png(figure: Figure, path: Path, dpi: float = DPI) -> Path:
    """Write ``figure`` as a PNG (no timestamp in the metadata, so reruns are byte-identical)."""
    figure.savefig(path, format="png", dpi=dpi, metadata={"Software": None})
    return path


@contextmanager
def writing(out: Path, what: str, option: str) -> Iterator[None]:
    """An ``OSError`` while ``what`` is written into ``out`` becomes a one-line InputError."""
    try:
        yield
    except OSError as error:
        raise InputError(
            str(out), None, f"{what}: {error.strerror or error}; choose another {option}"
        ) from None


def label(text: Any, limit: int = 44) -> str:
    """``text`` as a literal matplotlib label: ``$`` escaped, cut to ``limit`` characters."""
    value = " ".join(str(text).split())
    if len(value) > limit:
        value = value[: limit - 1] + "\u2026"
    value = value.replace("\\", "\\\\").replace("$", r"\$")
    if value.startswith("_"):  # matplotlib hides legend entries whose label starts with "_"
        value = " " + value
    return value


def compact(value: float, units: Sequence[tuple[str, float]] = (("M", 1e6), ("k", 1e3))) -> str:
    """A number written short, in the largest of ``units`` it reaches: ``500``, ``2k``, ``10M``."""
    for unit, size in units:
        if abs(value) >= size:
            return f"{value / size:g}{unit}"
    return f"{value:g}"


def colour(index: int) -> str:
    """The Okabe-Ito colour of the ``index``-th entry (the palette repeats, hatched, after 8)."""
    return PALETTE[index % len(PALETTE)]


def hatch(index: int, entry: Entry) -> str:
    """Bar hatch: ``//`` marks a published reference; repeats of the palette add a pattern."""
    base = _CYCLE_HATCHES[(index // len(PALETTE)) % len(_CYCLE_HATCHES)]
    return base + ("///" if entry.kind == "reference" else "")


def whiskers(
    values: NDArray[np.float64], bounds: Sequence[tuple[float, float] | None], cap: float
) -> NDArray[np.float64] | None:
    """``xerr`` rows (below, above) from per-bar intervals; ``None`` without any interval."""
    if not any(b is not None for b in bounds):
        return None
    err = np.zeros((2, len(values)))
    for j, (value, interval) in enumerate(zip(values, bounds, strict=True)):
        if interval is None or not math.isfinite(value):
            continue
        low, high = (min(b, cap) for b in interval)
        err[:, j] = (max(value - low, 0.0), max(high - value, 0.0))
    return err


def entry_bars(
    ax: matplotlib.axes.Axes,
    y: NDArray[np.float64],
    values: NDArray[np.float64],
    bar: float,
    xerr: NDArray[np.float64] | None,
    index: int,
    entry: Entry,
    edgecolor: str,
) -> None:
    """An entry's horizontal bars (the ``index``-th colour, ``bar`` apart); NaN: ``missing``."""
    ax.barh(
        y,
        np.nan_to_num(values),
        height=bar * 0.92,
        xerr=xerr,
        hatch=hatch(index, entry),
        edgecolor=edgecolor,
        linewidth=0.4,
        error_kw={"elinewidth": 0.9, "capsize": 1.5, "ecolor": "0.15"},
        zorder=2,
        color=colour(index),
        label=label(entry.name),
    )
    for j in np.flatnonzero(np.isnan(values)):
        ax.text(0.0, y[j], " missing", va="center", fontsize=7, color="0.35")


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
