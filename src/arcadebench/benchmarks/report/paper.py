r"""A paper's figure set: rliable's four figures and the per-game table, as PDF and PNG.

``arcadebench report --paper DIR`` (:func:`write_paper`) writes the four figures Agarwal et al.
(2021, "Deep RL at the Edge of the Statistical Precipice") recommend and rliable draws, plus the
per-game table, each as a vector PDF for the paper and a PNG for slides:

- ``aggregates``: the aggregates' point estimates with their intervals (interval estimates);
- ``profile``: performance profiles with bootstrap bands;
- ``improvement``: the probability of improvement of every pair of results;
- ``sample_efficiency``: the aggregates against training frames (from logs, or results scored
  with ``--curve``);
- ``per_game_table``: every game's score, the best of each row in bold;

and ``tables.tex`` / ``tables.md``, the tables ``arcadebench score --format latex|markdown``
prints, of the same results (results of other protocols in tables of their own). One style for
all: the report's figures, each algorithm in one colour throughout, PDF fonts embedded as
TrueType (``pdf.fonttype`` 42: conference templates refuse Type 3 fonts), and no creation date,
so that a rerun writes the same files.

The figures are drawn at the size they are printed: ``figure_width`` inches wide (a column of
a two-column template by default, 3.25 in; 6.75 in for both columns) with every text in
``font_size`` points (8 by default), so ``\includegraphics[width=\linewidth]`` neither shrinks
nor enlarges them; each figure's height follows from what it holds. The PNGs are the same
figures at :data:`PNG_DPI` dots per inch.

Functions: write_paper.
Data: PAPER_FIGURES, PAPER_STYLE, PNG_DPI.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from arcadebench.benchmarks.report.curves import sample_efficiency_figure
from arcadebench.benchmarks.report.figures import (
    aggregates_figure,
    game_table_figure,
    improvement_figure,
    profile_figure,
)
from arcadebench.benchmarks.report.report_data import ReportData
from arcadebench.benchmarks.report.style import (
    PAPER_FONT_SIZE,
    SINGLE_COLUMN,
    check_size,
    require_matplotlib,
    save_png,
    writing,
)
from arcadebench.benchmarks.scoring.results import Results

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["PAPER_FIGURES", "PAPER_STYLE", "PNG_DPI", "PaperFigure", "write_paper"]


class PaperFigure(Protocol):
    """A figure of the paper's set: the report's data at a width in inches and a font size."""

    def __call__(self, data: ReportData, *, figure_width: float, font_size: float) -> Figure | None:
        """The figure, or ``None`` where the data has nothing for it to draw."""


#: ``(file stem, drawing function)`` of the paper's figures, in the order a paper shows them.
PAPER_FIGURES: tuple[tuple[str, PaperFigure], ...] = (
    ("aggregates", aggregates_figure),
    ("profile", profile_figure),
    ("improvement", improvement_figure),
    ("sample_efficiency", sample_efficiency_figure),
    ("per_game_table", game_table_figure),
)

#: matplotlib settings of the paper's files, which embed fonts as TrueType (the sizes are the
#: figures' own, from ``font_size``).
PAPER_STYLE: dict[str, Any] = {"pdf.fonttype": 42, "ps.fonttype": 42}

#: Resolution of the paper's PNGs, at which a 3.25 in figure is 975 pixels wide, sharp on a slide.
PNG_DPI = 300


def write_paper(
    data: ReportData,
    out: str | os.PathLike[str],
    *,
    figure_width: float = SINGLE_COLUMN,
    font_size: float = PAPER_FONT_SIZE,
) -> list[Path]:
    """Write the paper's figures (PDF and PNG) and tables (LaTeX, Markdown) into ``out``.

    A figure the data cannot draw (no pair of results, no curve) is not written, and an earlier
    one of that name in ``out`` is removed, so the directory never mixes two sets.

    Args:
        data: the report.
        out: the directory to write to (made if missing).
        figure_width: every figure's width in inches, from 2 to 8: 3.25 for a column of a
            two-column template, 6.75 for both columns.
        font_size: the size of every text of the figures in points, from 6 to 12 (titles one
            more).

    Returns:
        The files written, in order.

    Raises:
        InvalidArgument: ``figure_width`` or ``font_size`` out of range.
        MissingDependency: matplotlib is not installed.
        InputError: ``out`` cannot be created or written.
    """
    check_size(figure_width, font_size, widths=(2.0, 8.0), sizes=(6.0, 12.0))
    require_matplotlib()
    from matplotlib import rc_context

    out = Path(out)
    written: list[Path] = []
    with writing(out, "cannot write the paper's figures", "--paper"):
        out.mkdir(parents=True, exist_ok=True)
        with rc_context(cast("dict[Any, Any]", PAPER_STYLE)):
            for name, draw in PAPER_FIGURES:
                figure = draw(data, figure_width=figure_width, font_size=font_size)
                pdf, png = out / f"{name}.pdf", out / f"{name}.png"
                if figure is None:
                    pdf.unlink(missing_ok=True)
                    png.unlink(missing_ok=True)
                    continue
                figure.savefig(pdf, format="pdf", metadata={"CreationDate": None})
                written += [pdf, save_png(figure, png, dpi=PNG_DPI)]
        results = _results(data)
        others = [_results(other.data) for other in data.others]
        chosen = _table_references(data)
        for name, text in (
            ("tables.tex", results.to_latex(others=others, references=chosen)),
            ("tables.md", results.to_markdown(others=others, references=chosen)),
        ):
            (out / name).write_text(text, encoding="utf-8")
            written.append(out / name)
    return written


def _table_references(data: ReportData) -> list[str] | str:
    """The report's references that are the spec's own published ones: those its tables show.

    The constants and the data set's rows are in the figures only; ``"none"`` where no entry is
    one of the spec's (``--references none``, or only constants chosen).
    """
    own = set(data.spec.reference_names())
    chosen = [e.name for e in data.entries if e.kind == "reference" and e.name in own]
    return chosen or "none"


def _results(data: ReportData) -> Results:
    """The report's results of one protocol as one :class:`Results`, for its tables."""
    spec = data.spec
    return Results(
        spec=spec.identity,
        settings={"ci": data.level, "reps": data.reps, "seed": data.seed},
        algorithms={e.name: e.block for e in data.entries if e.kind == "result"},
        provenance={},
        comparisons=data.comparisons,
        protocol=spec,
    )
