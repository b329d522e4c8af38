"""Figures of runs and levels: learning curves from monitor logs, Sonic per-level scores.

- :func:`learning_curve_figure`: one panel per game, episode returns (dots) over the run's
  cumulative training frames (timesteps for step-budgeted specs such as Sonic), with the mean of
  the last ``k`` episodes as a line (the protocol's own ``k`` for SABER/HWR), the protocol's frame
  checkpoints (SABER Section 3.2) and budget marked. Entries without logs are not drawn.
- :func:`levels_figure`: per-level mean return of every entry (Sonic Section 3.9), against the
  published baselines' test means (Sonic Table 1) as vertical lines.
- :func:`sample_efficiency_figure`: the protocol's aggregates against training frames with
  stratified-bootstrap bands, one line per algorithm (Agarwal et al. 2021; rliable's
  ``plot_sample_efficiency_curve``), and the published curves compared against.

Functions: learning_curve_figure, levels_figure, sample_efficiency_figure, running_mean.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from arcadebench._table import count
from arcadebench.benchmarks.report.report_data import Entry, ReportData, stat_label
from arcadebench.benchmarks.report.style import (
    SCREEN_FONT_SIZE,
    SCREEN_WIDTH,
    colour,
    compact,
    entry_bars,
    finish,
    fit_legend,
    fit_title,
    label,
    new_figure,
    sized,
    whiskers,
    wrap,
)
from arcadebench.benchmarks.scoring.sample_efficiency import (
    ReferenceCurve,
    curve_name,
    curve_paths,
)
from arcadebench.benchmarks.scoring.tables import dig
from arcadebench.specs.model import RetroSettings
from arcadebench.specs.names import subset_key

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.artist import Artist
    from matplotlib.figure import Figure

__all__ = ["learning_curve_figure", "levels_figure", "running_mean", "sample_efficiency_figure"]

_MAX_POINTS = 3000  # dots drawn per run (the running mean uses every episode)
_DEFAULT_WINDOW = 10
_MIN_CURVE_EPISODES = 10  # fewer episodes in every run: no learning curve is drawn
_FRAME_UNITS = (("B", 1e9), ("M", 1e6), ("k", 1e3))
_BASELINE_STYLES = ("--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 1)), (0, (6, 2, 1, 2)))


def running_mean(values: NDArray[np.float64], window: int) -> NDArray[np.float64]:
    """Mean of the last ``window`` values at every position (fewer at the start).

    Example:
        >>> running_mean(np.array([1.0, 3.0, 5.0, 7.0]), 2).tolist()
        [1.0, 2.0, 4.0, 6.0]
    """
    sums = np.cumsum(np.concatenate([[0.0], values]))
    ends = np.arange(1, len(values) + 1)
    starts = np.maximum(ends - window, 0)
    means: NDArray[np.float64] = (sums[ends] - sums[starts]) / (ends - starts)
    return means


def learning_curve_figure(data: ReportData) -> Figure | None:
    """Episode returns over training frames, one panel per game, with the protocol's checkpoints."""
    from matplotlib.lines import Line2D
    from matplotlib.ticker import EngFormatter

    entries = [(i, e) for i, e in enumerate(data.entries) if e.curves]
    longest = max((len(run.returns) for _, e in entries for run in e.curves), default=0)
    if longest < _MIN_CURVE_EPISODES:  # an evaluation of a few episodes has no curve to show
        return None
    games = list(dict.fromkeys(run.game for _, e in entries for run in e.curves))
    order = {g: k for k, g in enumerate(data.spec.games)}
    games.sort(key=lambda g: order.get(g, len(order)))
    evaluation = data.spec.evaluation
    steps = evaluation.budget_steps is not None and evaluation.budget_frames is None
    unit = "timesteps" if steps else "frames"
    budget = evaluation.budget_steps if steps else evaluation.budget_frames
    window = evaluation.k or _DEFAULT_WINDOW
    ncols = min(3, len(games))
    nrows = math.ceil(len(games) / ncols)
    figure = new_figure(4.4 * ncols, 3.2 * nrows + 1.3)
    axes = figure.subplots(nrows, ncols, squeeze=False)
    beyond: set[int] = set()
    budget_drawn = False
    for ax, game in zip(axes.flat, games, strict=False):
        right = 0.0
        for i, entry in entries:
            for run in (r for r in entry.curves if r.game == game):
                x = (run.total_steps if steps else run.total_frames).astype(float)
                y = run.returns
                done = run.complete
                right = max(right, float(x.max(initial=0.0)))
                keep = np.flatnonzero(done)
                shown = (
                    keep[np.linspace(0, len(keep) - 1, _MAX_POINTS).astype(int)]
                    if len(keep) > _MAX_POINTS
                    else keep
                )
                ax.scatter(
                    x[shown],
                    y[shown],
                    s=7,
                    color=colour(i),
                    alpha=0.45,
                    linewidths=0,
                    rasterized=True,
                )
                if (~done).any():
                    ax.scatter(
                        x[~done], y[~done], s=16, marker="x", color=colour(i), linewidths=0.8
                    )
                if len(keep) >= 2:
                    ax.plot(
                        x[keep],
                        running_mean(y[keep], window),
                        color=colour(i),
                        linewidth=1.5,
                        linestyle="--" if entry.kind == "reference" else "-",
                    )
        for checkpoint in evaluation.checkpoints if not steps else ():
            if checkpoint <= right:
                ax.axvline(checkpoint, color="0.3", linestyle=":", linewidth=1.0)
                ax.text(
                    checkpoint,
                    1.0,
                    f" {compact(checkpoint, _FRAME_UNITS)}",
                    rotation=90,
                    va="top",
                    ha="right",
                    fontsize=7,
                    transform=ax.get_xaxis_transform(),
                    color="0.3",
                )
            else:
                beyond.add(checkpoint)
        if budget is not None and budget <= right:
            ax.axvline(budget, color="#D55E00", linestyle="--", linewidth=1.0)
            budget_drawn = True
        ax.set_title(label(game, 40), fontsize=10)
        ax.set_xlabel(f"training {unit}")
        ax.set_ylabel("episode return (points)")
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.grid(color="0.92", linewidth=0.6)
    for ax in axes.flat[len(games) :]:
        ax.set_visible(False)
    handles = [
        Line2D([], [], color=colour(i), marker="o", markersize=4, label=label(e.name))
        for i, e in entries
    ]
    if evaluation.checkpoints and not steps and len(beyond) < len(evaluation.checkpoints):
        handles.append(Line2D([], [], color="0.3", linestyle=":", label="protocol checkpoint"))
    if budget_drawn:
        handles.append(Line2D([], [], color="#D55E00", linestyle="--", label="budget"))
    figure.legend(
        handles=handles,
        loc="outside lower center",
        ncols=min(len(handles), 4),
        fontsize=8,
        frameon=False,
    )
    title = (
        f"{data.protocol} \u2014 episode returns over training {unit} "
        f"(dots: episodes; lines: mean of the last {window})"
    )
    if beyond:
        marks = ", ".join(compact(c, _FRAME_UNITS) for c in sorted(beyond))
        title += f"\ncheckpoints at {marks} {unit} lie beyond these runs"
    figure.suptitle(fit_title(figure, title, 11), fontsize=11)
    return figure


def levels_figure(data: ReportData) -> Figure | None:
    """Per-level mean return bars (Sonic), test levels first, against the published baselines."""
    spec = data.spec
    if not spec.levels:
        return None
    entries = [
        e
        for e in data.entries
        if e.per_game and any(e.value(g, "raw") is not None for g in e.games)
    ]
    levels = [g for g in data.games() if g in spec.levels]
    levels.sort(key=lambda g: spec.levels[g].split != "test")
    if not entries or not levels:
        return None
    n = len(entries)
    bar = 0.8 / n
    figure = new_figure(9.5, len(levels) * (0.17 * n + 0.16) + 2.4)
    ax = figure.add_subplot()
    y = np.arange(len(levels), dtype=float)
    for k, entry in enumerate(entries):
        values = np.array([np.nan if (v := entry.value(g, "raw")) is None else v for g in levels])
        xerr = whiskers(values, [entry.game_interval(g, "raw") for g in levels], math.inf)
        offset = (k - (n - 1) / 2) * bar
        entry_bars(ax, y + offset, values, bar, xerr, data.colour_index(entry.name), entry, "white")
    published = next((p for p in spec.published if "score" in p.columns), None)
    if published is not None:
        column = published.columns.index("score")
        for s, (row, cells) in enumerate(published.rows.items()):
            mean = cells[column]
            if mean is None:
                continue
            ax.axvline(
                mean,
                color=f"{0.1 + 0.1 * (s % 5):.1f}",
                linestyle=_BASELINE_STYLES[s % len(_BASELINE_STYLES)],
                linewidth=1.1,
                label=f"{label(row, 24)}: {mean:,.0f} ({published.source} test mean)",
                zorder=3,
            )
    ax.set_yticks(y, [f"{label(g, 40)} ({spec.levels[g].split})" for g in levels])
    ax.set_ylim(len(levels) - 0.5, -0.5)
    env = spec.environment
    scale = ""
    if isinstance(env, RetroSettings):
        scale = (
            f"; level end = {env.progress_scale:,.0f} + completion bonus up to "
            f"{env.completion_bonus:,.0f}"
        )
    ax.set_xlabel(f"mean episode return (points{scale})")
    ax.set_ylabel("level (split)")
    ax.grid(axis="x", color="0.9", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(
        fit_title(
            figure,
            f"{data.protocol} \u2014 per-level mean return against the published baselines",
            12,
        )
    )
    figure.legend(loc="outside upper center", ncols=3, fontsize=8, frameon=False)
    return figure


_CURVE_PANEL_EMS = 13.0  # the narrowest sample-efficiency panel, in font sizes


@sized
def sample_efficiency_figure(
    data: ReportData,
    *,
    figure_width: float = SCREEN_WIDTH,
    font_size: float = SCREEN_FONT_SIZE,
) -> Figure | None:
    """The protocol's aggregates against training frames, one panel each, a line per algorithm.

    The panels are IQM of the report's metric (Agarwal et al.'s recommendation) and the
    protocol's own headline aggregates
    (:func:`~arcadebench.benchmarks.scoring.sample_efficiency.curve_paths`: SABER's median,
    Atari-5's estimate...), each with its stratified-bootstrap band where there are several
    runs. A count among the protocol's columns (SABER's HWRB, the games past the world record)
    is a panel only where it changes along some curve: it is no
    aggregate with an interval, a flat count says nothing the tables do not, and it is in every
    table of the report. The published curves compared against are dashed, with a marker at
    each published point, and labelled when obtained under another protocol; the protocol's
    checkpoints are dotted. Each legend entry says how many games its curve is of.

    Args:
        data: the report.
        figure_width: the figure's width in inches (3.25: a paper's column).
        font_size: the size of every text, in points (titles one more).
    """
    curved = [e for e in data.entries if e.kind == "result" and e.block.get("curve")]
    if not curved:
        return None
    series = [
        [b["aggregates"] for _, b in sorted((int(f), b) for f, b in e.block["curve"].items())]
        for e in curved
    ] + [list(curve.points.values()) for curve in data.reference_curves]
    subsets = {subset_key(name) for name in data.spec.subsets}
    paths = []
    for path in curve_paths(data.spec, data.metric):
        values = [[dig(a, path) for a in points] for points in series]
        if not any(v is not None for line in values for v in line):
            continue
        count_path = len(path) == 1 and path[0] not in subsets  # HWRB: games, not a statistic
        if count_path and not any(len({v for v in line if v is not None}) > 1 for line in values):
            continue
        paths.append(path)
    if not paths:
        return None
    from matplotlib.lines import Line2D
    from matplotlib.ticker import EngFormatter, MaxNLocator

    width, size = figure_width, font_size
    em = size / 72.0
    ncols = max(1, min(len(paths), 3, int(width // (_CURVE_PANEL_EMS * em))))
    nrows = math.ceil(len(paths) / ncols)
    panel = width / ncols - 5.5 * em  # a panel's plot beside its tick labels, about
    height = min(0.72 * panel, 3.2)
    figure = new_figure(width, 3.0)
    axes = figure.subplots(nrows, ncols, squeeze=False)
    banded = False
    right = 0.0
    for ax, path in zip(axes.flat, paths, strict=False):
        for entry in curved:
            c = colour(data.colour_index(entry.name))
            points = sorted((int(f), b["aggregates"]) for f, b in entry.block["curve"].items())
            x = np.array([f for f, _ in points], dtype=float)
            y = np.array([_number(dig(a, path)) for _, a in points])
            right = max(right, float(x.max(initial=0.0)))
            bounds = [dig(a, ("ci", *path)) for _, a in points]
            if all(isinstance(b, list) and len(b) == 2 for b in bounds):
                low = np.array([float(b[0]) for b in bounds])
                high = np.array([float(b[1]) for b in bounds])
                ax.fill_between(x, low, high, color=c, alpha=0.2, linewidth=0)
                banded = True
            ax.plot(x, y, color=c, linewidth=1.5, marker="o", markersize=0.3 * size)
        for k, curve in enumerate(data.reference_curves):
            c = colour(_curve_colour(data, curve.name, k))
            points = sorted(curve.points.items())
            x = np.array([f for f, _ in points], dtype=float)
            y = np.array([_number(dig(a, path)) for _, a in points])
            right = max(right, float(x.max(initial=0.0)))
            ax.plot(
                x, y, color=c, linewidth=1.2, linestyle="--", marker="s", markersize=0.45 * size
            )
        for checkpoint in data.spec.evaluation.checkpoints:
            if checkpoint <= right:
                ax.axvline(checkpoint, color="0.3", linestyle=":", linewidth=0.9)
        title = stat_label(path[0], path[1] if len(path) > 1 else None)
        ax.set_title(wrap(label(title, 60), size + 1, panel), fontsize=size + 1)
        ax.set_xlabel("training frames")
        if data.normalisation(path[0]) is not None:
            unit = f"{path[0].upper()} (%)"
        elif path[0] in subsets:
            unit = "estimated 57-game median HNS (%)"
        elif len(path) == 1:
            unit = "games (count)"
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        else:
            unit = "points"
        ax.set_ylabel(wrap(unit, size, height))
        ax.xaxis.set_major_locator(MaxNLocator(nbins=max(2, int(panel / (3.5 * em)))))
        if len(path) > 1 or path[0] in subsets:
            ax.yaxis.set_major_locator(MaxNLocator(nbins=max(2, int(height / (2.5 * em)))))
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
        ax.grid(color="0.92", linewidth=0.6)
    for ax in axes.flat[len(paths) :]:
        ax.set_visible(False)
    handles: list[Artist] = [
        Line2D(
            [],
            [],
            color=colour(data.colour_index(e.name)),
            marker="o",
            markersize=0.3 * size,
            label=f"{label(e.name)} ({_curve_games(e)})",
        )
        for e in curved
    ]
    for k, curve in enumerate(data.reference_curves):
        where = ", another protocol" if curve.protocol else ""
        games = _published_games(curve, paths)
        handles.append(
            Line2D(
                [],
                [],
                color=colour(_curve_colour(data, curve.name, k)),
                linestyle="--",
                marker="s",
                markersize=0.45 * size,
                label=f"{label(curve.name, 60)} ({games}{where})",
            )
        )
    if data.spec.evaluation.checkpoints:
        handles.append(Line2D([], [], color="0.3", linestyle=":", label="protocol checkpoint"))
    fit_legend(figure, handles, size)
    band = f"; bands: {data.level * 100:g} % stratified bootstrap CIs" if banded else ""
    title = f"{data.protocol} \u2014 sample efficiency{band}"
    figure.suptitle(fit_title(figure, title, size + 1), fontsize=size + 1)
    return finish(figure, size, nrows * height)


def _curve_games(entry: Entry) -> str:
    """How many games a result's curve is of: those of its last point (every point has them)."""
    last = max(entry.block["curve"], key=int)
    return count(len(entry.block["curve"][last].get("games", {})), "game")


def _published_games(curve: ReferenceCurve, paths: list[tuple[str, ...]]) -> str:
    """How many games a published curve is scored on: its last point's ``n_games``."""
    last = curve.points[max(curve.points)]
    for path in paths:
        group = last.get(path[0])
        if isinstance(group, Mapping) and isinstance(group.get("n_games"), int):
            return count(group["n_games"], "game")
    return "games unknown"


def _curve_colour(data: ReportData, name: str, k: int) -> int:
    """A published curve's colour: the compared reference's it comes from, else one after all."""
    for entry in data.entries:
        if entry.kind == "reference" and curve_name(entry.name) == name:
            return data.colour_index(entry.name)
    return len(data.entries) + k


def _number(value: object) -> float:
    return (
        float(value) if isinstance(value, int | float) and not isinstance(value, bool) else np.nan
    )
