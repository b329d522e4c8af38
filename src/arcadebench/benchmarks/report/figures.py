"""Score figures: per-game bars, the SABER class histogram, aggregates, the performance profile.

Each function takes the :class:`~arcadebench.benchmarks.report.report_data.ReportData` and returns a
matplotlib figure, or ``None`` when the data has nothing to draw (e.g. no classes in the spec).
Every figure puts all entries side by side in one colour each, names protocol and metric in its
title, labels its axes with units, and marks the 100 % reference where a normalised score has one.

- :func:`per_game_figure`: per-game normalised score, one horizontal bar per entry (a dot plot
  beyond four entries), bootstrap CIs as whiskers, a symmetric log axis when the scores span
  orders of magnitude, ``inf`` (infinite gameplay) as a bar to the edge marked with the sign.
- :func:`classes_figure`: games per class (SABER Section 3.2).
- :func:`aggregates_figure`: each aggregate's point estimate with its interval (rliable's
  interval-estimate plot); Atari-X estimates also carry the paper's expected error (Table 2).
- :func:`profile_figure`: fraction of games scoring above tau (Agarwal et al. 2021, Section 4),
  with stratified bootstrap bands when there are runs.
- :func:`improvement_figure`: the probability of improvement P(X > Y) of every pair of results
  with its interval (Agarwal et al. 2021; rliable's ``plot_probability_of_improvement``).
- :func:`game_table_figure`: the per-game table drawn as a figure, for a paper's appendix.

Every entry keeps one colour in all of them (:meth:`ReportData.colour_index`).

Functions: per_game_figure, classes_figure, aggregates_figure, profile_figure,
improvement_figure, game_table_figure, aggregate_keys.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from arcadebench._table import count, format_cell
from arcadebench.benchmarks.report.report_data import (
    Entry,
    Interval,
    ReportData,
    expected_range,
    metric_label,
    stat_label,
)
from arcadebench.benchmarks.report.style import (
    colour,
    fit_title,
    hatch,
    label,
    needs_log,
    new_figure,
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


def _reference_line(ax: Axes, data: ReportData, vertical: bool = True) -> None:
    norm = data.normalisation(data.metric)
    if norm is None:
        return
    text = f"100 % = {norm.reference.replace('_', ' ')}"
    if vertical:
        ax.axvline(100.0, color="black", linestyle="--", linewidth=1.0, label=text, zorder=1)
    else:
        ax.axhline(100.0, color="black", linestyle="--", linewidth=1.0, label=text, zorder=1)


def _symlog(ax: Axes, axis: str = "x") -> None:
    from matplotlib.ticker import FuncFormatter

    formatter = FuncFormatter(lambda v, _: f"{v:,.0f}")
    if axis == "x":
        ax.set_xscale("symlog", linthresh=_LINTHRESH)
        ax.xaxis.set_major_formatter(formatter)
    else:
        ax.set_yscale("symlog", linthresh=_LINTHRESH)
        ax.yaxis.set_major_formatter(formatter)


def _whiskers(
    values: NDArray[np.float64], bounds: Sequence[Interval | None], cap: float
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


# -- per game -------------------------------------------------------------------------------------


def per_game_figure(data: ReportData) -> Figure | None:
    """Per-game normalised score bars of every entry, games top to bottom in the spec's order."""
    metric = data.metric
    entries = [
        e for e in data.per_game_entries() if any(e.value(g, metric) is not None for g in e.games)
    ]
    games = [g for g in data.games() if any(e.value(g, metric) is not None for e in entries)]
    percent = data.normalisation(metric) is not None
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
        xerr = _whiskers(values[i], bounds, edge)
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
        else:
            ax.barh(
                y + offset,
                np.nan_to_num(shown),
                height=bar * 0.92,
                xerr=xerr,
                hatch=hatch(c, entry),
                edgecolor="white" if entry.kind == "result" else "0.25",
                linewidth=0.4,
                error_kw={"elinewidth": 0.9, "capsize": 1.5, "ecolor": "0.15"},
                zorder=2,
                color=colour(c),
                label=label(entry.name),
            )
        for j in np.flatnonzero(np.isposinf(values[i])):
            ax.text(edge, y[j] + offset, " \u221e", va="center", fontsize=9, color=colour(c))
        for j in np.flatnonzero(np.isnan(values[i])) if not dots else ():
            ax.text(0.0, y[j] + offset, " missing", va="center", fontsize=7, color="0.35")
    _reference_line(ax, data)
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
        keys += [("test", "mean"), ("train", "mean")]
    if data.normalisation(data.metric) is None:
        keys.append(("raw", "mean"))
    results = [e for e in data.entries if e.kind == "result"]
    for group in (results, data.entries):  # panels the results have; else the references'
        present = [k for k in keys if any(e.aggregate(*k)[0] is not None for e in group)]
        if ("raw", "mean") in present and len(present) > 1:
            present.remove(("raw", "mean"))  # Sonic: the split means say it all
        if present:
            return present
    return []


def aggregates_figure(data: ReportData) -> Figure | None:
    """Aggregate point estimates with intervals, one panel per aggregate, entries as rows."""
    from matplotlib.patches import Patch

    keys = aggregate_keys(data)
    entries = [e for e in data.entries if any(e.aggregate(*k)[0] is not None for k in keys)]
    if not keys or not entries:
        return None
    ncols = min(len(keys), 4)
    nrows = math.ceil(len(keys) / ncols)
    figure = new_figure(2.2 + 2.9 * ncols, nrows * (0.42 * len(entries) + 1.3) + 1.0)
    axes = figure.subplots(nrows, ncols, squeeze=False, sharey=True)
    relative = {subset_key(s.name): s.relative_error for s in data.spec.subsets.values()}
    kinds: set[str] = set()
    for k, (metric, stat) in enumerate(keys):
        ax = axes.flat[k]
        points = [e.aggregate(metric, stat)[0] for e in entries]
        finite = [p for p in points if p is not None and math.isfinite(p)]
        percent = data.normalisation(metric) is not None or stat is None
        low_edge, high_edge = _panel_limits(
            entries, metric, stat, relative.get(metric) if stat is None else None, percent
        )
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
                    fontsize=7,
                    color="0.4",
                )
                continue
            shown = value if math.isfinite(value) else high_edge
            if interval is not None and all(math.isfinite(b) for b in interval):
                kind = "ci" if entry.kind == "result" else "published"
                kinds.add(kind)
                ax.barh(
                    i,
                    interval[1] - interval[0],
                    left=interval[0],
                    height=0.6,
                    color=colour(c),
                    alpha=0.35,
                    hatch="///" if kind == "published" else "",
                    edgecolor=colour(c),
                    linewidth=0.5,
                )
            error = relative.get(metric) if stat is None else None
            if error is not None and math.isfinite(value):
                kinds.add("expected")
                low, high = expected_range(value, error)
                ax.errorbar(
                    value,
                    i,
                    xerr=[[value - low], [high - value]],
                    color="0.1",
                    capsize=3,
                    linewidth=0.9,
                )
            ax.plot(
                [shown],
                [i],
                marker="|" if interval else "o",
                markersize=13 if interval else 6,
                markeredgewidth=2.5,
                color=colour(c),
                linestyle="none",
            )
            if not math.isfinite(value):
                ax.text(shown, i, " \u221e", va="center", color=colour(c))
        if data.normalisation(metric) is not None:
            unit = f"{metric.upper()} (%)"
        elif stat is None:
            unit = "estimated 57-game median HNS (%)"
        else:
            unit = "mean return (points)"
        # an Atari-X estimate (no statistic) is a level of the score, an optimality gap is not
        level = stat is None or stat not in STATISTICS or STATISTICS[stat].level
        if "%" in unit and level:
            ax.axvline(100.0, color="black", linestyle="--", linewidth=0.9)
        log = needs_log(finite, percent) and level
        if log:
            _symlog(ax)
        pad = (high_edge - low_edge) * 0.06
        ax.set_xlim(
            low_edge * (1.5 if log else 1.0) - (2.0 if log else pad),
            high_edge * (1.6 if log else 1.0) + (0.0 if log else pad),
        )
        ax.set_title(stat_label(metric, stat), fontsize=10)
        ax.set_xlabel(unit)
        ax.grid(axis="x", color="0.9", linewidth=0.6)
        ax.set_axisbelow(True)
    for ax in axes.flat[len(keys) :]:
        ax.set_visible(False)
    axes[0, 0].set_yticks(range(len(entries)), [label(e.name, 34) for e in entries])
    axes[0, 0].set_ylim(len(entries) - 0.5, -0.5)
    handles: list[Artist] = []
    if "ci" in kinds:
        handles.append(Patch(color="0.6", alpha=0.5, label=f"{data.level * 100:g} % bootstrap CI"))
    if "published" in kinds:
        handles.append(
            Patch(facecolor="0.85", hatch="///", edgecolor="0.4", label="published \u00b1 error")
        )
    if "expected" in kinds:
        from matplotlib.lines import Line2D

        handles.append(
            Line2D(
                [], [], color="0.1", marker="|", label="Atari-5 paper's expected error (Table 2)"
            )
        )
    what = data.metric.upper() if data.normalisation(data.metric) else "score"
    figure.suptitle(
        fit_title(
            figure, f"{data.protocol} \u2014 aggregate {what}: point estimates and intervals", 12
        )
    )
    if handles:
        figure.legend(
            handles=handles,
            loc="outside lower center",
            ncols=len(handles),
            fontsize=8,
            frameon=False,
        )
    return figure


def _panel_limits(
    entries: list[Entry],
    metric: str,
    stat: str | None,
    relative_error: float | None,
    percent: bool,
) -> tuple[float, float]:
    """The finite range a panel must show: every point, interval and expected range."""
    values: list[float] = []
    for entry in entries:
        value, interval = entry.aggregate(metric, stat)
        if value is None:
            continue
        values.append(value)
        values.extend(interval or ())
        if relative_error is not None and math.isfinite(value):
            values.extend(expected_range(value, relative_error))
    finite = [v for v in values if math.isfinite(v)]
    reference = [0.0, 100.0] if percent else [0.0]
    low = min([*finite, *reference])
    high = max([*finite, *reference, low + 1.0])
    if any(not math.isfinite(v) for v in values):
        high = high * 1.5 if high > 0 else 1.0
    return low, high


# -- performance profile --------------------------------------------------------------------------


def _profile(scores: NDArray[np.float64], taus: NDArray[np.float64]) -> NDArray[np.float64]:
    """Fraction of games above each tau: per game the share of its runs, averaged over games.

    ``scores`` is ``(..., runs, games)`` with NaN padding; returns ``(..., len(taus))``. With
    equal runs per game this is rliable's run-score distribution (the mean over runs of the
    fraction of games above tau).
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


def profile_figure(data: ReportData) -> Figure | None:
    """Performance profiles: the fraction of games whose score exceeds tau, per entry."""
    games = data.games()
    curves: list[tuple[Entry, NDArray[np.float64]]] = []
    for entry in data.entries:
        if not (entry.per_game and entry.games):
            continue
        matrix = data.run_matrix(entry, games)
        matrix = matrix[:, ~np.all(np.isnan(matrix), axis=0)]
        if matrix.shape[1]:
            curves.append((entry, matrix))
    if not curves:
        return None
    values = np.concatenate([m.ravel() for _, m in curves])
    percent = data.normalisation(data.metric) is not None
    log = needs_log(values, percent)
    taus = _tau_grid(values, log, percent)
    figure = new_figure(8.0, 5.2)
    ax = figure.add_subplot()
    banded = False
    for entry, matrix in curves:
        c = colour(data.colour_index(entry.name))
        point = _profile(matrix, taus)
        runs = (~np.isnan(matrix)).sum(axis=0)
        if data.reps > 0 and runs.max() >= 2:
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
        ax.plot(
            taus,
            point,
            color=c,
            linewidth=1.8,
            linestyle="--" if entry.kind == "reference" else "-",
            label=f"{label(entry.name)} ({count(matrix.shape[1], 'game')})",
        )
    _reference_line(ax, data)
    if log:
        _symlog(ax)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlim(taus[0], taus[-1])
    ax.grid(color="0.9", linewidth=0.6)
    metric = data.metric
    ax.set_xlabel(
        f"threshold \u03c4: {metric_label(data.spec, metric)}"
        + (" \u2014 symmetric log scale" if log else "")
    )
    ax.set_ylabel("fraction of games with score > \u03c4")
    band = f", {data.level * 100:g} % bootstrap bands" if banded else ""
    what = metric.upper() if data.normalisation(metric) else "score"
    ax.set_title(
        fit_title(figure, f"{data.protocol} \u2014 performance profile of {what}{band}", 12)
    )
    figure.legend(
        loc="outside lower center", ncols=min(len(curves) + 1, 3), fontsize=8, frameon=False
    )
    return figure


# -- probability of improvement -------------------------------------------------------------------


def improvement_figure(data: ReportData) -> Figure | None:
    """P(X > Y) of every pair of results: a point and its interval per pair, X left, Y right.

    rliable's ``plot_probability_of_improvement`` layout: one row per pair, the 0.5 line where
    neither is better, X named on the left axis (in its colour) and Y on the right.
    """
    from matplotlib.patches import Patch

    comparisons = list(data.comparisons)
    if not comparisons:
        return None
    n = len(comparisons)
    figure = new_figure(7.5, max(2.8, 0.42 * n + 1.9))
    ax = figure.add_subplot()
    banded = False
    for k, comparison in enumerate(comparisons):
        c = colour(data.colour_index(str(comparison["x"])))
        interval = comparison.get("ci")
        if interval is not None:
            banded = True
            ax.barh(
                k,
                interval[1] - interval[0],
                left=interval[0],
                height=0.6,
                color=c,
                alpha=0.35,
                edgecolor=c,
                linewidth=0.5,
            )
        ax.plot(
            [float(comparison["probability"])],
            [k],
            marker="|" if interval is not None else "o",
            markersize=13 if interval is not None else 6,
            markeredgewidth=2.5,
            color=c,
            linestyle="none",
        )
    ax.axvline(0.5, color="black", linestyle="--", linewidth=0.9)
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_yticks(range(n), [label(c["x"], 30) for c in comparisons])
    for tick, comparison in zip(ax.get_yticklabels(), comparisons, strict=True):
        tick.set_color(colour(data.colour_index(str(comparison["x"]))))
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    right.set_yticks(range(n), [label(c["y"], 30) for c in comparisons])
    ax.set_ylabel("algorithm X")
    right.set_ylabel("algorithm Y")
    ax.set_xlabel("P(X > Y): how often a run of X beats a run of Y on a game (ties count half)")
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    metric = str(comparisons[0].get("metric", data.metric))
    band = f", {data.level * 100:g} % bootstrap CIs" if banded else ""
    ax.set_title(
        fit_title(
            figure,
            f"{data.protocol} \u2014 probability of improvement, per-run {metric.upper()}{band}",
            12,
        )
    )
    if banded:
        figure.legend(
            handles=[Patch(color="0.6", alpha=0.5, label=f"{data.level * 100:g} % bootstrap CI")],
            loc="outside lower center",
            fontsize=8,
            frameon=False,
        )
    return figure


# -- the per-game table as a figure ---------------------------------------------------------------


def game_table_figure(data: ReportData) -> Figure | None:
    """Every game's score of every entry as a table figure, the best of each row in bold.

    The report's metric (a normalised score in %, else points), the mean over runs, with its
    bootstrap interval where the game has several runs; for a paper's appendix as a PDF.
    """
    from matplotlib.transforms import Bbox

    entries = [
        e
        for e in data.per_game_entries()
        if any(e.value(g, data.metric) is not None for g in e.games)
    ]
    games = [g for g in data.games() if any(e.value(g, data.metric) is not None for e in entries)]
    if not entries or not games:
        return None
    percent = data.normalisation(data.metric) is not None
    text: list[list[str]] = []
    best: list[set[int]] = []
    for game in games:
        values = [entry.value(game, data.metric) for entry in entries]
        row = []
        for entry, value in zip(entries, values, strict=True):
            shown = format_cell(value, 1) + ("%" if percent and value is not None else "")
            interval = entry.game_interval(game, data.metric)
            if interval is not None:
                shown += f" [{format_cell(interval[0], 1)}, {format_cell(interval[1], 1)}]"
            row.append(shown if value is not None else "\u2014")
        finite = [v for v in values if v is not None]
        top = max(finite, default=None)
        best.append(
            {j for j, v in enumerate(values) if v is not None and v == top and len(finite) > 1}
        )
        text.append(row)
    width = 1.6 + 1.9 * len(entries)
    figure = new_figure(width, 0.22 * (len(games) + 1) + 0.8)
    ax = figure.add_subplot()
    ax.axis("off")
    table = ax.table(
        cellText=text,
        rowLabels=[label(g, 28) for g in games],
        colLabels=[label(e.name, 24) for e in entries],
        cellLoc="right",
        bbox=Bbox.from_bounds(0.0, 0.0, 1.0, 1.0),  # the table fills the axes
    )
    table.auto_set_font_size(False)
    table.set_fontsize(7.5)
    for (line, column), cell in table.get_celld().items():
        cell.set_linewidth(0.3)
        cell.set_edgecolor("0.8")
        if line == 0 and column >= 0:
            cell.get_text().set_color(colour(data.colour_index(entries[column].name)))
            cell.get_text().set_fontweight("bold")
        elif line > 0 and column >= 0 and column in best[line - 1]:
            cell.get_text().set_fontweight("bold")
    unit = "%" if percent else "points"
    ax.set_title(
        fit_title(
            figure,
            f"{data.protocol} ({data.spec.short_hash}) \u2014 per-game {data.metric.upper()} "
            f"({unit}), the mean over runs; bold: the best of each row",
            10,
        ),
        fontsize=10,
    )
    return figure
