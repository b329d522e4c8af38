"""Write a report: the figures as PNG files and one self-contained ``report.html``.

Functions: report, write_report.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from arcadebench.benchmarks.report.curves import (
    learning_curve_figure,
    levels_figure,
    sample_efficiency_figure,
)
from arcadebench.benchmarks.report.episodes import remove_stale_clips, write_episode_clips
from arcadebench.benchmarks.report.figures import (
    aggregates_figure,
    classes_figure,
    improvement_figure,
    per_game_figure,
    profile_figure,
)
from arcadebench.benchmarks.report.page import FigureFile, render_page
from arcadebench.benchmarks.report.report_data import ReportData
from arcadebench.benchmarks.report.sources import load_report_data
from arcadebench.benchmarks.report.style import require_matplotlib, save_png, writing
from arcadebench.benchmarks.scoring.results import Results
from arcadebench.specs import Spec

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["FIGURES", "HTML_FILE", "report", "write_report"]

HTML_FILE = "report.html"

#: A function drawing one figure of the report from its data, or returning ``None`` where the
#: data does not allow that figure.
Draw = Callable[[ReportData], "Figure | None"]

#: ``(file stem, drawing function, title, caption)`` of every figure, in report order.
FIGURES: tuple[tuple[str, Draw, str, str], ...] = (
    (
        "per_game",
        per_game_figure,
        "Per-game normalised scores",
        "Each game's normalised score (the mean over runs), one bar per entry; whiskers are "
        "bootstrap CIs, \u221e marks infinite gameplay, the dashed line the 100 % reference.",
    ),
    (
        "levels",
        levels_figure,
        "Per-level scores against the published baselines",
        "Each level's mean episode return, one bar per entry; vertical lines are the published "
        "baselines' means over the test levels.",
    ),
    (
        "classes",
        classes_figure,
        "Class histogram",
        "How many games fall into each class of the normalised score.",
    ),
    (
        "aggregates",
        aggregates_figure,
        "Aggregate estimates",
        "Point estimates (ticks) with their intervals (bands): bootstrap CIs for results, the "
        "published errors for references, and for Atari-X estimates the paper's expected error.",
    ),
    (
        "profile",
        profile_figure,
        "Performance profile",
        "The fraction of runs (each game's runs pooled, as rliable does) scoring above each "
        "threshold \u03c4 (Agarwal et al. 2021); bands are stratified bootstrap CIs when there "
        "are several runs.",
    ),
    (
        "improvement",
        improvement_figure,
        "Probability of improvement",
        "P(X > Y) of every pair of results (Agarwal et al. 2021): how often a run of X beats a "
        "run of Y on a game, averaged over the games both have; bars are stratified bootstrap "
        "CIs, the dashed line is 0.5.",
    ),
    (
        "sample_efficiency",
        sample_efficiency_figure,
        "Sample efficiency",
        "The protocol's aggregates scored from the logs at several training frame counts (IQM "
        "and the protocol's own), with stratified bootstrap bands; dashed: published curves "
        "compared against; dotted: the protocol's checkpoints; a count (HWRB) is drawn only "
        "where it changes.",
    ),
    (
        "learning_curves",
        learning_curve_figure,
        "Learning curves",
        "Episode returns over training from the monitor logs, with the running mean and the "
        "protocol's checkpoints and budget.",
    ),
)


def write_report(data: ReportData, out: str | os.PathLike[str], *, episodes: bool = False) -> Path:
    """Draw every figure the data allows into ``out`` and write ``out/report.html``.

    With ``episodes``, the best and the worst episode of each result's games are replayed from
    the logs' recordings into GIFs beside the figures and shown on the page
    (:mod:`~arcadebench.benchmarks.report.episodes`). Figures and clips of an earlier report in
    ``out`` that this one does not write are removed, so the directory never mixes two reports.

    Returns:
        The path of ``report.html``.

    Raises:
        MissingDependency: matplotlib is not installed.
        InputError: ``out`` cannot be created or written.
    """
    require_matplotlib()
    out = Path(out)
    with writing(out, "cannot create the report directory", "--out"):
        out.mkdir(parents=True, exist_ok=True)
    figures: list[FigureFile] = []
    with writing(out, "cannot write the report", "--out"):
        for name, draw, title, caption in FIGURES:
            path = out / f"{name}.png"
            figure = draw(data)
            if figure is None:
                path.unlink(missing_ok=True)
                continue
            figures.append(FigureFile(name, save_png(figure, path), title, caption))
        clips, clip_notes = write_episode_clips(data, out) if episodes else ([], [])
        remove_stale_clips(out, clips)
        html = out / HTML_FILE
        html.write_text(render_page(data, figures, clips, clip_notes), encoding="utf-8")
    return html


def report(
    inputs: Sequence[str | os.PathLike[str] | Results],
    out: str | os.PathLike[str] = "report",
    *,
    spec: str | os.PathLike[str] | Spec | None = None,
    references: Sequence[str] | str | None = None,
    metric: str | None = None,
    ci: float = 0.95,
    reps: int = 2000,
    seed: int = 0,
    episodes: bool = False,
    compare: Sequence[str] | None = None,
) -> Path:
    """Report results, logs or score files, with published references, as PNGs and HTML.

    Args:
        inputs: results JSONs, episode logs or log directories, score CSV/JSON files (scored
            with :func:`arcadebench.score` first), or ``Results`` objects.
        out: the directory to write ``report.html`` and the figures to.
        spec: the spec (default: the one the inputs name; needed for score files).
        references: published references to show alongside, by name
            (``arcadebench report --list-references SPEC``), or ``"none"``; ``None``: the
            first four the spec has of its own protocol (``Spec.default_references``).
        compare: deprecated: the old name of ``references`` (its names are added to them).
        metric: the per-game metric of the figures (default: the spec's headline metric).
        ci: confidence level for inputs scored here.
        reps: bootstrap repetitions (scoring and the performance-profile bands).
        seed: bootstrap seed.
        episodes: show the best and the worst episode of each result's games, replayed from
            the logs' recordings (logs or a run's directory must be among the inputs).

    Returns:
        The path of ``report.html``.

    Raises:
        MissingDependency: matplotlib is not installed (checked before anything is read).
        ArcadebenchError: bad inputs, an unknown reference or spec.
    """
    require_matplotlib()
    if compare is not None:
        warnings.warn(
            "`compare` is deprecated: pass `references` (the same names)",
            DeprecationWarning,
            stacklevel=2,
        )
        given = [references] if isinstance(references, str) else list(references or ())
        references = [*given, *compare]
    data = load_report_data(
        inputs, spec=spec, references=references, metric=metric, ci=ci, reps=reps, seed=seed
    )
    return write_report(data, out, episodes=episodes)
