"""Score figures: per-game bars, the SABER class histogram, aggregates, the performance profile.

Each function takes the :class:`~arcadebench.benchmarks.report.report_data.ReportData` and returns a
matplotlib figure, or ``None`` when the data has nothing to draw (e.g. no classes in the spec).
Every figure puts all entries side by side in one colour each, names protocol and metric in its
title, labels its axes with units, and marks the 100 % reference where a normalised score has one.
Each function's docstring says what it draws, and from which paper.

The four a paper shows (aggregates, profile, improvement, table; :mod:`.paper`) take
``figure_width`` (inches) and ``font_size`` (points), the report page's 10 in and 10 pt by
default, and are laid out for them: panels side by side as the width holds, names and titles
wrapped, a height that follows from the rows drawn (:mod:`.style`). Every entry keeps one colour
in all of them (:meth:`ReportData.colour_index`).

Functions: per_game_figure, classes_figure, aggregates_figure, profile_figure,
improvement_figure, game_table_figure, aggregate_keys.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from arcadebench._table import count, format_cell
from arcadebench.benchmarks.report.report_data import (
    Entry,
    ReportData,
    expected_range,
    metric_label,
    stat_label,
)
from arcadebench.benchmarks.report.style import (
    SCREEN_FONT_SIZE,
    SCREEN_WIDTH,
    colour,
    compact,
    entry_bars,
    finish,
    fit_label,
    fit_legend,
    fit_title,
    hatch,
    label,
    line_height,
    needs_log,
    new_figure,
    sized,
    text_width,
    whiskers,
    wrap,
)
from arcadebench.benchmarks.scoring.bootstrap import bootstrap_distribution, percentile_interval
from arcadebench.benchmarks.scoring.results import subset_key
from arcadebench.specs.statistics import STATISTICS

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "aggregate_keys",
    "aggregates_figure",
    "classes_figure",
    "game_table_figure",
    "improvement_figure",
    "per_game_figure",
    "profile_figure",
]

_LINTHRESH = 10.0  # symlog: linear within +-10 %, logarithmic beyond
_DOTS_BEYOND = 4  # more entries than this: a dot plot instead of grouped bars
_TAUS = 200


def _symlog(ax: Axes, ticks: Sequence[float] | None = None) -> None:
    """A symmetric log x axis (linear within +-10); ``ticks``: its labelled ticks, written short."""
    from matplotlib.ticker import FixedLocator, FuncFormatter

    ax.set_xscale("symlog", linthresh=_LINTHRESH)
    if ticks is None:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        return
    ax.xaxis.set_major_locator(FixedLocator(list(ticks)))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: compact(v)))


def _log_ticks(low: float, high: float, most: int) -> list[float]:
    """About ``most`` ticks of a symmetric log axis: 1, 2 and 5 times powers of ten, and 0.

    The decades alone where 1-2-5 are too many, then every other decade, and so on, counted
    from 100 (the 100 % mark of a normalised score) so that it keeps its label.

    Example:
        >>> _log_ticks(5.0, 3000.0, 8)
        [10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0]
        >>> _log_ticks(5.0, 3000.0, 4), _log_ticks(-50.0, 300000.0, 4)
        ([10.0, 100.0, 1000.0], [0.0, 100.0, 10000.0])
    """
    magnitudes = [m * 10.0**k for k in range(1, 13) for m in (1.0, 2.0, 5.0)]
    candidates = sorted({0.0, *magnitudes, *(-m for m in magnitudes)})
    inside = [t for t in candidates if low <= t <= high]
    for mantissas in ((1, 2, 5), (1,)):
        chosen = [t for t in inside if t == 0.0 or _mantissa(t) in mantissas]
        if len(chosen) <= most:
            return chosen
    step = math.ceil(len(chosen) / max(most, 2))
    return [t for t in chosen if t == 0.0 or (round(math.log10(abs(t))) - 2) % step == 0]


def _mantissa(value: float) -> int:
    return round(abs(value) / 10.0 ** math.floor(math.log10(abs(value))))


def _tick_count(length: float, size: float) -> int:
    """How many labelled ticks an axis ``length`` inches long holds: one per 3.5 font sizes."""
    return max(2, int(length / (3.5 * size / 72.0)))


def _x_ticks(ax: Axes, length: float, size: float, log: Sequence[float] | None = None) -> None:
    """As many ticks as an x axis ``length`` inches long holds.

    Round ones on a linear axis, written without an offset; with ``log``, the axis' low and
    high, a symmetric log axis and its :func:`_log_ticks`.
    """
    from matplotlib.ticker import MaxNLocator, ScalarFormatter

    if log is not None:
        _symlog(ax, _log_ticks(float(log[0]), float(log[-1]), _tick_count(length, size)))
        return
    ax.xaxis.set_major_locator(MaxNLocator(_tick_count(length, size), steps=[1, 2, 2.5, 5, 10]))
    formatter = ScalarFormatter(useOffset=False)
    formatter.set_scientific(False)
    ax.xaxis.set_major_formatter(formatter)


# -- per game -------------------------------------------------------------------------------------


def _scored(data: ReportData) -> tuple[list[Entry], list[str]]:
    """The entries with a per-game score in the report's metric, and the games that have one."""
    metric = data.metric
    entries = [
        e for e in data.per_game_entries() if any(e.value(g, metric) is not None for g in e.games)
    ]
    games = [g for g in data.games() if any(e.value(g, metric) is not None for e in entries)]
    return entries, games


def per_game_figure(data: ReportData) -> Figure | None:
    """Per-game normalised score bars of every entry, games top to bottom in the spec's order.

    One horizontal bar per entry (a dot plot beyond four entries), bootstrap CIs as whiskers, a
    symmetric log axis when the scores span orders of magnitude, ``inf`` (infinite gameplay) as
    a bar to the edge marked with the sign.
    """
    metric = data.metric
    entries, games = _scored(data)
    norm = data.normalisation(metric)
    percent = norm is not None
    if not entries or not games or (data.spec.levels and not percent):
        return None  # Sonic's raw level scores: levels_figure
    values = np.array([[_nan(e.value(g, metric)) for g in games] for e in entries])
    finite = values[np.isfinite(values)]
    log = needs_log(finite, percent)
    top = max(float(finite.max()) if finite.size else 100.0, 100.0 if percent else 1.0)
    bottom = min(float(finite.min()) if finite.size else 0.0, 0.0)
    edge = top * 3.0 if log else top * 1.12  # where an infinite score's bar ends
    n = len(entries)
    dots = n > _DOTS_BEYOND
    bar = 0.8 / n
    row = 0.32 if dots else 0.17 * n + 0.14
    figure = new_figure(9.0, len(games) * row + 2.2)
    ax = figure.add_subplot()
    y = np.arange(len(games), dtype=float)
    has_ci = False
    for i, entry in enumerate(entries):
        c = data.colour_index(entry.name)
        offset = 0.0 if dots else (i - (n - 1) / 2) * bar
        shown = np.where(np.isposinf(values[i]), edge, values[i])
        bounds = [entry.game_interval(g, metric) for g in games]
        has_ci = has_ci or any(b is not None for b in bounds)
        xerr = whiskers(values[i], bounds, edge)
        if dots:
            ax.errorbar(
                shown,
                y,
                xerr=xerr,
                fmt="o",
                markersize=5,
                capsize=2,
                elinewidth=1,
                markeredgecolor="white",
                markeredgewidth=0.5,
                zorder=3,
                color=colour(c),
                label=label(entry.name),
            )
        for j in np.flatnonzero(np.isposinf(values[i])):
            ax.text(edge, y[j] + offset, " \u221e", va="center", fontsize=9, color=colour(c))
        if not dots:  # the bars, and their "missing" marks after the infinite ones
            edges = "white" if entry.kind == "result" else "0.25"
            entry_bars(ax, y + offset, shown, bar, xerr, c, entry, edges)
    if norm is not None:
        text = f"100 % = {norm.reference.replace('_', ' ')}"
        ax.axvline(100.0, color="black", linestyle="--", linewidth=1.0, label=text, zorder=1)
    ax.axvline(0.0, color="0.55", linewidth=0.8, zorder=1)
    ax.set_yticks(y, [label(g, 32) for g in games])
    ax.set_ylim(len(games) - 0.5, -0.5)
    if log:
        _symlog(ax)
    ax.set_xlim(
        bottom * (1.6 if log else 1.1) - (1.0 if bottom < 0 else 0.0), edge * (1.6 if log else 1.06)
    )
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    if len(games) > 15:  # a tall figure: the scale at the top too
        ax.tick_params(axis="x", top=True, labeltop=True)
    scale = " \u2014 symmetric log scale" if log else ""
    ax.set_xlabel(f"{metric_label(data.spec, metric)}{scale}")
    ax.set_ylabel("game")
    ci = f", {data.level * 100:g} % bootstrap CIs" if has_ci else ""
    gaps = "; no marker: no score" if dots and np.isnan(values).any() else ""
    ax.set_title(
        fit_title(figure, f"{data.protocol} \u2014 per-game {metric.upper()}{ci}{gaps}", 12)
    )
    figure.legend(loc="outside upper center", ncols=min(n + 1, 4), fontsize=8, frameon=False)
    return figure


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


# -- classes --------------------------------------------------------------------------------------


def classes_figure(data: ReportData) -> Figure | None:
    """Games per class of the spec's classification (SABER Section 3.2), entries side by side."""
    from matplotlib.ticker import MaxNLocator

    scoring = data.spec.scoring
    entries = [e for e in data.entries if isinstance(e.aggregates.get("classes"), Mapping)]
    if not scoring.classes or not entries:
        return None
    names = [name for name, _ in scoring.classes]
    ranges, lower = [], None
    for _, upper in scoring.classes:
        if lower is None:
            ranges.append(f"< {upper:g} %")
        elif upper is None:
            ranges.append(f"\u2265 {lower:g} %")
        else:
            ranges.append(f"{lower:g}\u2013{upper:g} %")
        lower = upper if upper is not None else lower
    n = len(entries)
    width = 0.8 / n
    figure = new_figure(max(6.5, 1.1 * len(names) + 0.35 * n * len(names)), 4.6)
    ax = figure.add_subplot()
    x = np.arange(len(names), dtype=float)
    for i, entry in enumerate(entries):
        c = data.colour_index(entry.name)
        counts = [int(entry.aggregates["classes"].get(name, 0)) for name in names]
        bars = ax.bar(
            x + (i - (n - 1) / 2) * width,
            counts,
            width * 0.92,
            color=colour(c),
            hatch=hatch(c, entry),
            edgecolor="white" if entry.kind == "result" else "0.25",
            linewidth=0.4,
            label=f"{label(entry.name)} ({count(sum(counts), 'game')})",
        )
        ax.bar_label(bars, fontsize=7, padding=1)
    ax.set_xticks(x, [f"{name}\n{r}" for name, r in zip(names, ranges, strict=True)])
    locator = ax.yaxis.get_major_locator()
    if isinstance(locator, MaxNLocator):  # the default AutoLocator is one: whole counts only
        locator.set_params(integer=True)
    of = scoring.classes_of.upper() if scoring.classes_of else ""
    ax.set_xlabel(f"class of {metric_label(data.spec, scoring.classes_of or data.metric)}")
    ax.set_ylabel("games (count)")
    ax.set_title(fit_title(figure, f"{data.protocol} \u2014 games per {of} class", 12))
    ax.margins(y=0.12)
    figure.legend(loc="outside upper center", ncols=min(n, 3), fontsize=8, frameon=False)
    return figure


# -- aggregates -----------------------------------------------------------------------------------


def aggregate_keys(data: ReportData) -> list[tuple[str, str | None]]:
    """The ``(metric, stat)`` panels of :func:`aggregates_figure` that some entry has a value for.

    The spec's aggregates of the report metric, then the Atari-X estimates; for raw-score specs
    (Sonic) the test- and train-level means, else the mean over all levels.
    """
    keys: list[tuple[str, str | None]] = []
    if data.normalisation(data.metric) is not None:
        keys += [(data.metric, s) for s in data.spec.scoring.aggregates]
        keys += [(subset_key(name), None) for name in data.spec.subsets]
    else:
        keys += [("test", "mean"), ("train", "mean"), ("raw", "mean")]
    results = [e for e in data.entries if e.kind == "result"]
    for group in (results, data.entries):  # panels the results have; else the references'
        present = [k for k in keys if any(e.aggregate(*k)[0] is not None for e in group)]
        if ("raw", "mean") in present and len(present) > 1:
            present.remove(("raw", "mean"))  # Sonic: the split means say it all
        if present:
            return present
    return []


_PANEL_EMS = 9.5  # the narrowest aggregate panel, in font sizes


@sized
def aggregates_figure(
    data: ReportData,
    *,
    figure_width: float = SCREEN_WIDTH,
    font_size: float = SCREEN_FONT_SIZE,
) -> Figure | None:
    """Aggregate point estimates with intervals, one panel per aggregate, entries as rows.

    rliable's interval-estimate plot (``plot_interval_estimates``). Each panel's axis spans its
    points, intervals and expected ranges (an Atari-X estimate's expected error, Atari-5 Table 2)
    with a margin, reaching to 0 or the 100 % mark only where they lie near the data, so an
    interval is never a sliver of an axis from 0 to 100 %.
    A level of the score (:attr:`~arcadebench.specs.statistics.Statistic.level`) whose values
    spread over orders of magnitude is on a symmetric log axis with labelled ticks at 1, 2 and
    5 times powers of ten; anything else is linear. As many panels sit side by side as the
    width holds (at most four), each at least ``_PANEL_EMS`` font sizes wide.

    Args:
        data: the report.
        figure_width: the figure's width in inches (3.25: a paper's column).
        font_size: the size of every text, in points (titles one more).
    """
    keys = aggregate_keys(data)
    entries = [e for e in data.entries if any(e.aggregate(*k)[0] is not None for k in keys)]
    if not keys or not entries:
        return None
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    width, size = figure_width, font_size
    em = size / 72.0
    names = [fit_label(label(e.name, 80), size, max(0.22 * width, 8 * em)) for e in entries]
    names_width = max(text_width(n, size) for n in names) + 1.5 * em
    fits = int((width - names_width) // (_PANEL_EMS * em))
    ncols = max(1, min(len(keys), 4, fits))
    nrows = math.ceil(len(keys) / ncols)
    panel = (width - names_width) / ncols - 1.5 * em  # a panel's plot, about
    figure = new_figure(width, 3.0)
    axes = figure.subplots(nrows, ncols, squeeze=False, sharey=True)
    relative = {subset_key(s.name): s.relative_error for s in data.spec.subsets.values()}
    kinds: set[str] = set()
    for k, (metric, stat) in enumerate(keys):
        ax = axes.flat[k]
        error = relative.get(metric) if stat is None else None
        # an Atari-X estimate (no statistic) is a level of the score, an optimality gap is not
        level = stat is None or stat not in STATISTICS or STATISTICS[stat].level
        percent = data.normalisation(metric) is not None or stat is None
        span = _panel_span(entries, metric, stat, error, (0.0, 100.0) if percent else (0.0,), level)
        for i, entry in enumerate(entries):
            c = data.colour_index(entry.name)
            value, interval = entry.aggregate(metric, stat)
            if value is None:
                ax.text(
                    0.02,
                    i,
                    "n/a",
                    transform=ax.get_yaxis_transform(),
                    va="center",
                    fontsize=size,
                    color="0.4",
                )
                continue
            shown = value if math.isfinite(value) else span.edge
            if error is not None and math.isfinite(value):  # drawn over the band, under the tick
                kinds.add("expected")
                low, high = expected_range(value, error)
                ax.errorbar(
                    value,
                    i,
                    xerr=[[value - low], [high - value]],
                    color="0.1",
                    capsize=0.3 * size,
                    linewidth=0.9,
                )
            band = interval if interval and all(math.isfinite(b) for b in interval) else None
            if band is not None:
                kinds.add("ci" if entry.kind == "result" else "published")
            pattern = "" if entry.kind == "result" else "///"
            _estimate(ax, i, shown, colour(c), size, band, interval is not None, pattern)
            if not math.isfinite(value):
                ax.text(
                    shown, i, "\u221e ", va="center", ha="right", fontsize=size, color=colour(c)
                )
        if data.normalisation(metric) is not None:
            unit = f"{metric.upper()} (%)"
        elif stat is None:
            unit = "estimated 57-game median HNS (%)"
        else:
            unit = "mean return (points)"
        if "%" in unit and level:
            ax.axvline(100.0, color="black", linestyle="--", linewidth=0.9)
        _x_ticks(ax, panel, size, (span.low, span.high) if span.log else None)
        ax.set_xlim(span.low, span.high)
        ax.set_title(wrap(stat_label(metric, stat), size + 1, panel), fontsize=size + 1)
        scaled = unit.replace(")", ", log scale)") if span.log else unit
        ax.set_xlabel(wrap(scaled, size, panel))
        ax.grid(axis="x", color="0.9", linewidth=0.6)
        ax.set_axisbelow(True)
    for ax in axes.flat[len(keys) :]:
        ax.set_visible(False)
    axes[0, 0].set_yticks(range(len(entries)), names)
    axes[0, 0].set_ylim(len(entries) - 0.5, -0.5)
    handles: list[Artist] = []
    if "ci" in kinds:
        handles.append(Patch(color="0.6", alpha=0.5, label=f"{data.level * 100:g} % bootstrap CI"))
    if "published" in kinds:
        handles.append(
            Patch(facecolor="0.85", hatch="///", edgecolor="0.4", label="published \u00b1 error")
        )
    if "expected" in kinds:
        handles.append(
            Line2D(
                [], [], color="0.1", marker="|", label="Atari-5 paper's expected error (Table 2)"
            )
        )
    fit_legend(figure, handles, size)
    what = data.metric.upper() if data.normalisation(data.metric) else "score"
    title = f"{data.protocol} \u2014 aggregate {what}: point estimates and intervals"
    figure.suptitle(fit_title(figure, title, size + 1), fontsize=size + 1)
    lines = max(n.count("\n") + 1 for n in names)
    pitch = line_height(size, max(1.8, 1.1 * lines + 0.5))  # a row per entry
    rows = max(len(entries) * pitch + line_height(size, 0.4), line_height(size, 4))
    return finish(figure, size, nrows * rows)


def _estimate(
    ax: Axes, row: int, x: float, c: str, size: float, band: Any, tick: bool, pattern: str = ""
) -> None:
    """A point estimate on ``row``: a tick at ``x`` over its interval's ``band``, else a dot.

    A band is a patch, under the lines (an expected range's whiskers) whenever they are drawn.
    """
    if band is not None:
        ax.barh(
            row,
            band[1] - band[0],
            left=band[0],
            height=0.6,
            color=c,
            alpha=0.35,
            hatch=pattern,
            edgecolor=c,
            linewidth=0.5,
        )
    ax.plot(
        [x],
        [row],
        marker="|" if tick else "o",
        markersize=(1.3 if tick else 0.6) * size,
        markeredgewidth=2.0,
        color=c,
        linestyle="none",
    )


@dataclass(frozen=True)
class _Span:
    """What an aggregate panel's axis shows: its limits, its scale, where ``inf`` is drawn."""

    low: float
    high: float
    log: bool
    edge: float


def _panel_span(
    entries: list[Entry],
    metric: str,
    stat: str | None,
    relative_error: float | None,
    references: tuple[float, ...],
    level: bool,
) -> _Span:
    """A panel's axis: every point, interval and expected range, with a margin of 6 %.

    A reference value (0, the 100 % mark) is taken in where it lies within a quarter of the
    data's range of it, so the axis shows it when it helps to read the data and zooms in on
    the data when it is far. An infinite estimate is drawn at an edge beyond the finite ones.
    """
    values: list[float] = []
    for entry in entries:
        value, interval = entry.aggregate(metric, stat)
        if value is None:
            continue
        values.append(float(value))
        values.extend(interval or ())
        if relative_error is not None and math.isfinite(value):
            values.extend(expected_range(float(value), relative_error))
    finite = [v for v in values if math.isfinite(v)] or [0.0]
    log = level and _spans_decades(finite)
    forward, inverse = (_to_symlog, _from_symlog) if log else (float, float)
    low, high = forward(min(finite)), forward(max(finite))
    reach = 0.25 * (high - low)
    for reference in references:
        if low - reach <= forward(reference) <= high + reach:
            low, high = min(low, forward(reference)), max(high, forward(reference))
    pad = 0.06 * (high - low) if high > low else max(0.1 * abs(high), 0.5)
    edge = high
    if len(finite) < len(values) or not values:  # an infinite estimate: a column of its own
        edge = high + 3 * pad
        high = edge
    return _Span(inverse(low - pad), inverse(high + pad), log, inverse(edge))


def _spans_decades(values: Sequence[float]) -> bool:
    """Whether values spread so far that a linear axis squeezes the smaller ones into its edge.

    Example:
        >>> _spans_decades([20.0, 45.0]), _spans_decades([12.0, 30.0, 2400.0])
        (False, True)
    """
    magnitudes = [abs(v) for v in values]
    return max(magnitudes) > 50.0 * max(min(magnitudes), _LINTHRESH)


def _to_symlog(value: float) -> float:
    return math.copysign(math.log10(1.0 + abs(value) / _LINTHRESH), value)


def _from_symlog(value: float) -> float:
    return math.copysign(_LINTHRESH * (10.0 ** abs(value) - 1.0), value)


# -- performance profile --------------------------------------------------------------------------


def _profile(scores: NDArray[np.float64], taus: NDArray[np.float64]) -> NDArray[np.float64]:
    """Fraction of runs above each tau: per game the share of its runs, averaged over games.

    ``scores`` is ``(..., runs, games)`` with NaN padding; returns ``(..., len(taus))``. With
    equal runs per game this is rliable's run-score distribution, ``score_distributions`` of
    ``library.create_performance_profile`` (its default, ``use_score_distribution=True``):
    ``np.mean(scores > tau)`` over the whole ``(runs, games)`` array, every run of every game
    pooled. With unequal runs each game still weighs the same.
    """
    present = ~np.isnan(scores)
    above = (scores[..., None] > taus) & present[..., None]
    per_game = above.sum(axis=-3) / np.maximum(present.sum(axis=-2), 1)[..., None]
    fraction: NDArray[np.float64] = per_game.mean(axis=-2)
    return fraction


def _tau_grid(values: NDArray[np.float64], log: bool, percent: bool) -> NDArray[np.float64]:
    finite = values[np.isfinite(values)]
    low = min(float(finite.min()) if finite.size else 0.0, 0.0)
    high = max(float(finite.max()) if finite.size else 100.0, 100.0 if percent else 1.0) * 1.05
    if not log:
        return np.linspace(low, high, _TAUS)

    def forward(x: NDArray[np.float64] | float) -> NDArray[np.float64]:
        return np.sign(x) * np.log10(1.0 + np.abs(x) / _LINTHRESH)

    grid = np.linspace(forward(low), forward(high), _TAUS)
    return np.sign(grid) * _LINTHRESH * (np.power(10.0, np.abs(grid)) - 1.0)


@sized
def profile_figure(
    data: ReportData,
    *,
    figure_width: float = SCREEN_WIDTH,
    font_size: float = SCREEN_FONT_SIZE,
) -> Figure | None:
    """Performance profiles: the fraction of runs whose score exceeds tau, per entry.

    Agarwal et al.'s run-score distribution (2021, Section 4; rliable's
    ``create_performance_profile``), which pools every run of every game: the axis says "runs"
    where some game has several runs and "games" where every game has one score (a per-game
    table's), and each legend entry says how many games (and runs) its curve covers.

    Args:
        data: the report.
        figure_width: the figure's width in inches (3.25: a paper's column).
        font_size: the size of every text, in points (titles one more).
    """
    games = data.games()
    curves: list[tuple[Entry, NDArray[np.float64]]] = []
    for entry in data.per_game_entries():
        matrix = data.run_matrix(entry, games)
        matrix = matrix[:, ~np.all(np.isnan(matrix), axis=0)]
        if matrix.shape[1]:
            curves.append((entry, matrix))
    if not curves:
        return None
    from matplotlib.lines import Line2D

    width, size = figure_width, font_size
    values = np.concatenate([m.ravel() for _, m in curves])
    norm = data.normalisation(data.metric)
    percent = norm is not None
    log = needs_log(values, percent)
    taus = _tau_grid(values, log, percent)
    figure = new_figure(width, 3.0)
    ax = figure.add_subplot()
    plot = width - 5 * size / 72.0  # the plot's width beside the tick labels, about
    banded = False
    runs = any(int((~np.isnan(m)).sum(axis=0).max()) > 1 for _, m in curves)
    handles: list[Artist] = []
    for entry, matrix in curves:
        c = colour(data.colour_index(entry.name))
        point = _profile(matrix, taus)
        per_game = (~np.isnan(matrix)).sum(axis=0)
        if data.reps > 0 and per_game.max() >= 2:
            seed = np.random.SeedSequence([data.seed, zlib.crc32(entry.name.encode("utf-8"))])
            samples = bootstrap_distribution(
                matrix,
                lambda x: _profile(x, taus),
                reps=data.reps,
                seed=np.random.default_rng(seed),
            )
            low, high = percentile_interval(samples, data.level)
            ax.fill_between(taus, low, high, color=c, alpha=0.2, linewidth=0)
            banded = True
        style: Literal["--", "-"] = "--" if entry.kind == "reference" else "-"
        ax.plot(taus, point, color=c, linewidth=1.5, linestyle=style)
        handles.append(
            Line2D([], [], color=c, linewidth=1.5, linestyle=style, label=_covers(entry, per_game))
        )
    if norm is not None:
        dashed: dict[str, Any] = {"color": "black", "linestyle": "--", "linewidth": 0.9}
        ax.axvline(100.0, **dashed, zorder=1)
        text = f"100 % = {norm.reference.replace('_', ' ')}"
        handles.append(Line2D([], [], **dashed, label=text))
    _x_ticks(ax, plot, size, (taus[0], taus[-1]) if log else None)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(taus[0], taus[-1])
    ax.grid(color="0.9", linewidth=0.6)
    metric = data.metric
    scale = " (symmetric log scale)" if log else ""
    ax.set_xlabel(wrap(f"threshold \u03c4: {metric_label(data.spec, metric)}{scale}", size, plot))
    height = min(max(0.55 * width, 2.0), 4.2)
    pooled = "runs" if runs else "games"
    ax.set_ylabel(wrap(f"fraction of {pooled} with score > \u03c4", size, height))
    band = f", {data.level * 100:g} % bootstrap bands" if banded else ""
    what = metric.upper() if norm is not None else "score"
    title = f"{data.protocol} \u2014 performance profile of {what}{band}"
    figure.suptitle(fit_title(figure, title, size + 1), fontsize=size + 1)
    fit_legend(figure, handles, size)
    return finish(figure, size, height)


def _covers(entry: Entry, per_game: NDArray[np.int_]) -> str:
    """A legend entry: the name and what it covers: ``SPR (26 games)``, ``x (2 games, 6 runs)``.

    Example:
        >>> _covers(Entry("SPR", {}), np.array([1, 1, 1]))
        'SPR (3 games)'
        >>> _covers(Entry("dqn", {}), np.array([2, 3]))
        'dqn (2 games, 5 runs)'
    """
    games = count(len(per_game), "game")
    runs = int(per_game.sum())
    return f"{label(entry.name)} ({games}{f', {runs:,} runs' if runs > len(per_game) else ''})"


# -- probability of improvement -------------------------------------------------------------------


@sized
def improvement_figure(
    data: ReportData,
    *,
    figure_width: float = SCREEN_WIDTH,
    font_size: float = SCREEN_FONT_SIZE,
) -> Figure | None:
    """P(X > Y) of every pair of results: a point and its interval per pair, X left, Y right.

    Agarwal et al. (2021); rliable's ``plot_probability_of_improvement`` layout: one row per
    pair, the 0.5 line where neither is better, X named on the left axis (in its colour) and Y
    on the right.

    Args:
        data: the report.
        figure_width: the figure's width in inches (3.25: a paper's column).
        font_size: the size of every text, in points (titles one more).
    """
    if not data.comparisons:
        return None
    comparisons = list(data.comparisons)
    from matplotlib.patches import Patch

    width, size = figure_width, font_size
    n = len(comparisons)
    em = size / 72.0
    side = max(0.2 * width, 7 * em)  # room for a name on each side
    xs = [fit_label(label(c["x"], 80), size, side) for c in comparisons]
    ys = [fit_label(label(c["y"], 80), size, side) for c in comparisons]
    sides = [max(text_width(t, size) for t in names) + 2.5 * em for names in (xs, ys)]
    plot = width - sum(sides)  # beside the names, the axis labels and the pads on both sides
    below = plot + 2 * min(sides)  # the x label, centred under the plot, may reach as far
    figure = new_figure(width, 3.0)
    ax = figure.add_subplot()
    banded = False
    for k, comparison in enumerate(comparisons):
        c = colour(data.colour_index(str(comparison["x"])))
        interval = comparison.get("ci")
        banded = banded or interval is not None
        _estimate(ax, k, float(comparison["probability"]), c, size, interval, interval is not None)
    ax.axvline(0.5, color="black", linestyle="--", linewidth=0.9)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(n - 0.5, -0.5)
    _x_ticks(ax, plot, size)
    ax.set_yticks(range(n), xs)
    for tick, comparison in zip(ax.get_yticklabels(), comparisons, strict=True):
        tick.set_color(colour(data.colour_index(str(comparison["x"]))))
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    right.set_yticks(range(n), ys)
    ax.set_ylabel("algorithm X")
    right.set_ylabel("algorithm Y")
    ax.set_xlabel(
        wrap(
            "P(X > Y): how often a run of X beats a run of Y on a game (ties count half)",
            size,
            below,
        )
    )
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    metric = str(comparisons[0].get("metric", data.metric))
    band = f", {data.level * 100:g} % bootstrap CIs" if banded else ""
    title = f"{data.protocol} \u2014 probability of improvement, per-run {metric.upper()}{band}"
    figure.suptitle(fit_title(figure, title, size + 1), fontsize=size + 1)
    if banded:
        fit_legend(
            figure,
            [Patch(color="0.6", alpha=0.5, label=f"{data.level * 100:g} % bootstrap CI")],
            size,
        )
    lines = max(t.count("\n") + 1 for t in [*xs, *ys])
    pitch = line_height(size, max(1.8, 1.1 * lines + 0.5))
    return finish(figure, size, max(n * pitch, line_height(size, 8)))


# -- the per-game table as a figure ---------------------------------------------------------------


_CELL_PAD = 0.4  # the room on each side of a table cell's text, in font sizes


@sized
def game_table_figure(
    data: ReportData,
    *,
    figure_width: float = SCREEN_WIDTH,
    font_size: float = SCREEN_FONT_SIZE,
) -> Figure | None:
    """Every game's score of every entry as a table figure, the best of each row in bold.

    The report's metric (a normalised score in %, else points), the mean over runs, with its
    bootstrap interval where the game has several runs; for a paper's appendix as a PDF. The
    columns are as wide as their widest text; where they do not all fit beside the games'
    names, the table is cut into blocks of columns stacked under each other, each with the
    games' names, and where not even one column with its intervals fits, the intervals go (the
    title says so).

    Args:
        data: the report.
        figure_width: the figure's width in inches (3.25: a paper's column).
        font_size: the size of every text, in points (the title one more).
    """
    entries, games = _scored(data)
    if not entries or not games:
        return None
    from matplotlib.table import Table
    from matplotlib.transforms import Bbox

    width, size = figure_width, font_size
    percent = data.normalisation(data.metric) is not None
    values = [[entry.value(game, data.metric) for entry in entries] for game in games]
    best = [_best(row) for row in values]
    room = width - 0.15  # the layout's pads and a margin
    pad = _CELL_PAD * size / 72.0
    names = [label(g, 28) for g in games]
    names_width = max(text_width(n, size) for n in ["game", *names]) + 2 * pad
    header_width = max(0.7, (room - names_width) / min(len(entries), 3) - 2 * pad)
    headers = [fit_label(label(e.name, 60), size, header_width) for e in entries]
    for intervals in (True, False):
        text = [
            [
                _table_cell(entry, game, data.metric, v, percent, intervals)
                for entry, v in zip(entries, row, strict=True)
            ]
            for game, row in zip(games, values, strict=True)
        ]
        widths = [
            max(
                text_width(headers[j], size, bold=True),
                *(text_width(row[j], size, bold=j in b) for row, b in zip(text, best, strict=True)),
            )
            + 2 * pad
            for j in range(len(entries))
        ]
        if names_width + max(widths) <= room:
            break
    blocks: list[list[int]] = [[]]
    for j, column in enumerate(widths):
        if blocks[-1] and names_width + sum(widths[k] for k in blocks[-1]) + column > room:
            blocks.append([])
        blocks[-1].append(j)
    header_lines = max(h.count("\n") + 1 for h in headers)
    row = line_height(size, 1.45)
    header = line_height(size, header_lines + 0.45)
    figure = new_figure(width, 3.0)
    axes = figure.subplots(len(blocks), 1, squeeze=False)[:, 0]
    for ax, block in zip(axes, blocks, strict=True):
        ax.axis("off")
        used = names_width + sum(widths[j] for j in block)
        table = Table(ax, bbox=Bbox.from_bounds(0.0, 0.0, used / room, 1.0))  # as wide as the text
        table.auto_set_font_size(False)
        table.add_cell(0, 0, names_width, header, text="game", loc="left")
        for r, name in enumerate(names, start=1):
            table.add_cell(r, 0, names_width, row, text=name, loc="left")
        for c, j in enumerate(block, start=1):
            cell = table.add_cell(0, c, widths[j], header, text=headers[j], loc="center")
            cell.get_text().set_color(colour(data.colour_index(entries[j].name)))
            cell.get_text().set_fontweight("bold")
            for r, game_row in enumerate(text, start=1):
                cell = table.add_cell(r, c, widths[j], row, text=game_row[j], loc="right")
                if j in best[r - 1]:
                    cell.get_text().set_fontweight("bold")
        table.set_fontsize(size)
        for cell in table.get_celld().values():
            cell.PAD = pad / cell.get_width()  # matplotlib's PAD is a fraction of the width
            cell.set_linewidth(0.3)
            cell.set_edgecolor("0.8")
        ax.add_table(table)
    unit = "%" if percent else "points"
    has = any(e.game_interval(g, data.metric) is not None for e in entries for g in games)
    interval = f" [{data.level * 100:g} % CI]" if has and intervals else ""
    dropped = "; CIs left out at this width" if has and not intervals else ""
    title = (
        f"{data.protocol} \u2014 per-game {data.metric.upper()} ({unit}): the mean over runs"
        f"{interval}; bold: the best of each row{dropped}"
    )
    figure.suptitle(fit_title(figure, title, size + 1), fontsize=size + 1)
    return finish(figure, size, len(blocks) * (header + len(games) * row))


def _best(row: list[float | None]) -> set[int]:
    """The columns of a row's largest value, where it has two values or more."""
    present = [v for v in row if v is not None]
    return {j for j, v in enumerate(row) if v == max(present)} if len(present) > 1 else set()


def _table_cell(
    entry: Entry, game: str, metric: str, value: float | None, percent: bool, intervals: bool
) -> str:
    """One cell of the per-game table: ``41.5%``, ``41.5% [38.0, 45.1]`` or a dash."""
    if value is None:
        return "\u2014"
    shown = format_cell(value, 1) + ("%" if percent else "")
    interval = entry.game_interval(game, metric) if intervals else None
    if interval is not None:
        shown += f" [{format_cell(interval[0], 1)}, {format_cell(interval[1], 1)}]"
    return shown
