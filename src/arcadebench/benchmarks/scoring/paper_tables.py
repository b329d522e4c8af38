"""Tables that paste into a paper: LaTeX (booktabs) and Markdown renderings of results.

What ``arcadebench score --format latex|markdown`` prints and ``Results.to_latex()`` /
``Results.to_markdown()`` return, so that the numbers of a paper's table are the scorer's, with
their intervals and their protocol, and are never typed by hand:

- the aggregate table: every aggregate of every algorithm with its stratified-bootstrap interval
  (Agarwal et al. 2021, Section 4), beside the spec's published references obtained under the
  same protocol (per-game results scored here on the same games, and the aggregates papers
  printed);
- the per-game table: the raw score and the headline normalised score of every game;
- the probability of improvement of the compared pairs, with intervals, when there are some.

Each caption names the protocol, its version and its content hash (the full hash is in a LaTeX
comment above the tables) and says what the brackets are (level, repetitions); the rows and
columns give the units (normalised scores in %, raw scores in points, counts in games), and a
note in small type under each table says the rest (definitions, runs, sources, missing games).
The best number of each row is bold (the lowest, for an optimality gap), among the columns
scored on the same games. Numbers obtained under another protocol never share a table with
these: the references obtained under another protocol (``other_protocols``) and results of
other specs (``others``) come in tables of their own, headed by how they were obtained or by
the differences between the protocols that change scores (:func:`arcadebench.specs.diff`).

One neutral model (``_Table``) and two renderers, so the two formats show the same cells.

Classes: PaperResults.
Functions: latex_tables, markdown_tables.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from arcadebench.benchmarks.scoring.normalise import headline_metric
from arcadebench.benchmarks.scoring.tables import (
    ScoredResults,
    aggregate_paths,
    dig,
    percent_metrics,
)
from arcadebench.errors import InvalidArgument
from arcadebench.specs import Spec
from arcadebench.specs.diff import diff
from arcadebench.specs.model import PublishedScores
from arcadebench.specs.statistics import SPLITS, STATISTICS

__all__ = ["PaperResults", "latex_tables", "markdown_tables"]

_NAMES = {"hns": "HNS", "hwrns": "HWRNS", "saber": "SABER", "chns": "CHNS"}
_SKIPPED = frozenset({"missing", "classes"})
_UNRANKED = frozenset({"frames", "game_time_days"})


class PaperResults(ScoredResults, Protocol):
    """What the tables read of a :class:`~arcadebench.benchmarks.scoring.results.Results`."""

    def reference_blocks(self) -> list[tuple[PublishedScores, Mapping[str, Any]]]:
        """Each published per-game result of the spec, scored on the games of the results."""


# -- the model -------------------------------------------------------------------------------------


@dataclass
class _Cell:
    """One number (or text) of a table, its interval, and whether it is the row's best."""

    value: Any = None
    interval: tuple[float, float] | None = None
    bold: bool = False
    decimals: int | None = None  # the table's digits unless set (probabilities: two at least)


@dataclass
class _Column:
    """A column of numbers: an algorithm of the results or a published reference."""

    name: str
    aggregates: Mapping[str, Any]
    games: Mapping[str, Mapping[str, Any]] | None = None
    reference: bool = False
    printed: bool = False  # aggregates a paper printed, over its own games: not ranked with ours


@dataclass
class _Table:
    """A table of both formats: caption, header, optional spanning groups, labelled rows.

    The caption says what the table is (protocol, hash, brackets, bold); ``notes`` say the rest
    (definitions, sources, missing games), printed in small type under the table, where their
    length does not matter (LaTeX sets a caption in one box first: a long one does not fit).
    """

    key: str
    caption: str
    head: list[str]
    rows: list[tuple[str, list[_Cell]]]
    groups: list[tuple[str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _tables(
    results: PaperResults, *, digits: int, other_protocols: bool, others: Sequence[PaperResults]
) -> list[_Table]:
    """Every table, in order: ours, then each other protocol's in tables of its own."""
    own, foreign = _reference_columns(results)
    tables = _result_tables(results, own, digits)
    if other_protocols and foreign:
        grouped: dict[str, list[str]] = {}
        for column, protocol in foreign:
            grouped.setdefault(protocol, []).append(column.name)
        table = _aggregate_table(results, [c for c, _ in foreign], digits, key="other-protocols")
        table.caption = (
            f"Published results obtained under {len(grouped)} other protocols than "
            f"{_protocol(results)}, each scored on the games of the results: not comparable "
            "with the tables above."
        )
        table.notes[:0] = [
            f"{', '.join(names)}: {how.rstrip('.')}." for how, names in grouped.items()
        ]
        tables.append(table)
    for other in others:
        heading, differences = _difference_heading(results, other)
        for table in _result_tables(other, [], digits, prefix="other-"):
            table.caption = f"{heading} {table.caption}"
            table.notes[:0] = differences
            tables.append(table)
    return tables


def _result_tables(
    results: PaperResults, references: list[_Column], digits: int, prefix: str = ""
) -> list[_Table]:
    ours = [
        _Column(name, block["aggregates"], block["games"])
        for name, block in results.algorithms.items()
    ]
    tables = [_aggregate_table(results, ours + references, digits, key=f"{prefix}aggregates")]
    per_game = _game_table(results, ours + [c for c in references if c.games is not None], digits)
    if per_game is not None:
        per_game.key = f"{prefix}games"
        tables.append(per_game)
    improvement = _improvement_table(results, digits)
    if improvement is not None:
        improvement.key = f"{prefix}improvement"
        tables.append(improvement)
    return tables


def _reference_columns(
    results: PaperResults,
) -> tuple[list[_Column], list[tuple[_Column, str]]]:
    """The published references: under the spec's protocol, and under others (with theirs)."""
    own: list[_Column] = []
    foreign: list[tuple[_Column, str]] = []
    for reference, block in results.reference_blocks():
        column = _Column(reference.name, block["aggregates"], block["games"], reference=True)
        if reference.protocol:
            foreign.append((column, reference.protocol))
        else:
            own.append(column)
    for published in results.published:
        for row, values in published.rows.items():
            aggregates: dict[str, Any] = {}
            for path, value in zip(published.paths, values, strict=True):
                if path is not None and value is not None:
                    _put(aggregates, path, value)
            column = _Column(
                f"{row} ({published.source})", aggregates, None, reference=True, printed=True
            )
            if published.protocol:
                foreign.append((column, published.protocol))
            else:
                own.append(column)
    return own, foreign


def _put(mapping: dict[str, Any], path: Sequence[str], value: Any) -> None:
    for key in path[:-1]:
        mapping = mapping.setdefault(key, {})
    mapping[path[-1]] = value


def _protocol(results: PaperResults) -> str:
    spec = results.spec
    short = str(spec.get("hash", "")).removeprefix("sha256:")[:12]
    return f"{spec.get('name')} v{spec.get('version')} (spec sha256:{short})"


def _difference_heading(results: PaperResults, other: PaperResults) -> tuple[str, list[str]]:
    """What sets another spec's results apart: a heading, and each difference that changes scores.

    The differences are :func:`arcadebench.specs.diff`'s, ``setting: ours vs theirs``.
    """
    mine, theirs = results.protocol, other.protocol
    name = other.spec.get("name")
    if mine is None or theirs is None:
        return (
            f"Results under another protocol, {_protocol(other)}, which this installation cannot "
            f"compare with {_protocol(results)}: not comparable with the tables above.",
            [],
        )
    changing = diff(mine, theirs).score_changing
    if not changing:
        return (
            f"Results under {_protocol(other)}, another protocol whose differences from "
            f"{mine.name} change no score (arcadebench diff {mine.name} {name}).",
            [],
        )
    listed = [
        f"{row.setting}{f' ({row.detail})' if row.detail else ''}: {row.a} ({mine.name}) vs "
        f"{row.b} ({theirs.name})."
        for row in changing
    ]
    return (
        f"Results under {_protocol(other)}, not comparable with the tables above: "
        f"{len(changing)} differences between {mine.name} and {theirs.name} change scores "
        f"(arcadebench diff {mine.name} {theirs.name}).",
        listed,
    )


# -- the three tables ------------------------------------------------------------------------------


def _aggregate_table(
    results: PaperResults, columns: list[_Column], digits: int, key: str
) -> _Table:
    ours = [c for c in columns if not c.reference]
    percent = percent_metrics(results.algorithms.values())
    paths = [
        p
        for p in aggregate_paths(c.aggregates for c in (ours or columns))
        if p[0] not in _SKIPPED and p[-1] != "n_games"
    ]
    rows: list[tuple[str, list[_Cell]]] = []
    for path in paths:
        cells = []
        for column in columns:
            value = dig(column.aggregates, path)
            interval = dig(column.aggregates, ("ci", *path))
            cells.append(
                _Cell(
                    value if _is_number(value) else None,
                    _pair(interval),
                )
            )
        ranked = [cell for cell, c in zip(cells, columns, strict=True) if not c.printed]
        _bold_best(ranked, _direction(path), digits)
        rows.append((_row_label(path, percent), cells))
    games = [_Cell(len(c.games) if c.games is not None else None) for c in columns]
    rows.append(("games", games))
    head = ["", *(_column_name(c) for c in columns)]
    return _Table(
        key, _aggregate_caption(results, columns), head, rows, notes=_notes(results, columns)
    )


def _aggregate_caption(results: PaperResults, columns: list[_Column]) -> str:
    parts = [f"Aggregate scores, protocol {_protocol(results)}{_title(results)}."]
    if any("ci" in c.aggregates for c in columns if not c.reference):
        parts.append(f"Brackets: {_brackets(results)}.")
    stats = {s for v in _metrics(results).values() for s in v}
    lowest = [s.name for s in STATISTICS.values() if s.direction < 0 and s.key in stats]
    best = f" (the lowest {' and '.join(lowest)})" if lowest else ""
    parts.append(f"Bold: the best of each row{best}.")
    return " ".join(parts)


def _metrics(results: PaperResults) -> dict[str, Any]:
    """The results' per-metric aggregates (``{"hns": {"mean": ...}}``), the first block's."""
    block = next(iter(results.algorithms.values()), {})
    aggregates = block.get("aggregates", {})
    return {k: v for k, v in aggregates.items() if isinstance(v, Mapping) and "n_games" in v}


def _notes(results: PaperResults, columns: list[_Column]) -> list[str]:
    """What the aggregate table's numbers are, where the references come from, what is missing."""
    percent = percent_metrics(results.algorithms.values())
    stats = {s for v in _metrics(results).values() for s in v}
    over_games = [s.name for s in STATISTICS.values() if s.over == "games" and s.key in stats]
    over_runs = [s.name for s in STATISTICS.values() if s.over == "runs" and s.key in stats]
    how = []
    if over_games:
        how.append(f"the {' and '.join(over_games)} over games of each game's mean over runs")
    if over_runs:
        how.append(f"the {' and '.join(over_runs)} over all runs (Agarwal et al. 2021)")
    what = "Normalised scores in %" if percent else "Scores in points"
    notes = [f"{what}: {', '.join(how)}." if how else f"{what}."]
    counted = _runs(columns)
    if counted:
        notes.append(f"Runs per game: {counted}.")
    if any(c.reference and not c.printed for c in columns):
        notes.append(
            "\u2020: published per-game results, scored here on the games of the results "
            f"(sources: arcadebench show {results.spec.get('name')})."
        )
    printed = [c.name for c in columns if c.printed]
    if printed:
        notes.append(
            f"{', '.join(printed)}: aggregates as printed, over the paper's games, not ranked "
            "with the others."
        )
    missing = [
        f"{name}: {', '.join(block['aggregates']['missing'])}"
        for name, block in results.algorithms.items()
        if block.get("aggregates", {}).get("missing")
    ]
    if missing:
        notes.append(f"Games of the spec without a score: {'; '.join(missing)}.")
    return notes


def _brackets(results: PaperResults) -> str:
    level = float(results.settings.get("ci", 0.95))
    reps = int(results.settings.get("reps") or 0)
    return f"{100 * level:g}% stratified-bootstrap confidence intervals ({reps:,} repetitions)"


def _runs(columns: list[_Column]) -> str:
    """How many runs the results' games have: ``5``, or ``2-3``; ``""`` without runs."""
    runs = sorted(
        {
            len(cell.get("runs", []))
            for c in columns
            if not c.reference and c.games is not None
            for cell in c.games.values()
        }
        - {0}
    )
    if not runs:
        return ""
    return f"{runs[0]}" if len(runs) == 1 else f"{runs[0]}-{runs[-1]}"


def _game_table(results: PaperResults, columns: list[_Column], digits: int) -> _Table | None:
    games: list[str] = []
    for column in columns:
        if not column.reference and column.games is not None:
            games.extend(g for g in column.games if g not in games)
    if not games:
        return None
    spec = results.protocol
    metric = headline_metric(spec) if spec is not None else None
    metrics = ["raw"] + ([metric] if metric and metric != "raw" else [])
    metrics = [
        m for m in metrics if any(m in (c.games or {}).get(g, {}) for c in columns for g in games)
    ]
    rows: list[tuple[str, list[_Cell]]] = []
    for game in games:
        cells: list[_Cell] = []
        for metric_name in metrics:
            group = []
            for column in columns:
                cell = (column.games or {}).get(game, {})
                value = cell.get(metric_name)
                group.append(_Cell(value if _is_number(value) else None))
            _bold_best(group, 1, digits)
            cells.extend(group)
        rows.append((game, cells))
    names = [_column_name(c) for c in columns]
    groups = [(_metric_unit(spec, m), len(columns)) for m in metrics]
    caption = (
        f"Per-game scores, protocol {_protocol(results)}{_title(results)}, each the mean over "
        "the game's runs. Bold: the best of each row and score."
    )
    notes = [", ".join(_metric_unit(spec, m) for m in metrics) + "."]
    runs = _runs(columns)
    if runs:
        notes.append(f"Runs per game: {runs}.")
    if any(c.reference for c in columns):
        notes.append("\u2020: published per-game results.")
    return _Table("games", caption, ["game", *(names * len(metrics))], rows, groups, notes)


def _improvement_table(results: PaperResults, digits: int) -> _Table | None:
    comparisons = results.comparisons
    if not comparisons:
        return None
    rows = []
    for comparison in comparisons:
        interval = comparison.get("ci")
        rows.append(
            (
                f"{comparison['x']} > {comparison['y']}",
                [
                    _Cell(
                        float(comparison["probability"]),
                        _pair(interval),
                        decimals=max(2, digits),
                    ),
                    _Cell(len(comparison.get("games", {}))),
                ],
            )
        )
    metric = str(comparisons[0].get("metric", ""))
    brackets = (
        f" Brackets: {_brackets(results)}, each algorithm's runs resampled independently."
        if any("ci" in c for c in comparisons)
        else ""
    )
    caption = (
        f"Probability of improvement P(X > Y), protocol {_protocol(results)}{_title(results)}."
        f"{brackets}"
    )
    notes = [
        "P(X > Y) (Agarwal et al. 2021): on each game the probability that a run of X scores "
        "above a run of Y (the Mann-Whitney U statistic over the number of pairs, ties counting "
        f"half), averaged over the games both have, from the per-run {_NAMES.get(metric, metric)} "
        "scores; P(Y > X) = 1 - P(X > Y)."
    ]
    return _Table("improvement", caption, ["", "P(X > Y)", "games"], rows, notes=notes)


def _title(results: PaperResults) -> str:
    """`` ("<the spec's title>")`` to follow the protocol's name, when the spec is at hand."""
    spec = results.protocol
    return f' ("{spec.title}")' if spec is not None else ""


def _metric_unit(spec: Spec | None, metric: str) -> str:
    if metric in SPLITS:
        return f"{SPLITS[metric].name} (points)"
    norm = next((n for n in spec.scoring.normalised if n.name == metric), None) if spec else None
    if norm is None:
        return f"{_NAMES.get(metric, metric.upper())} (%)"
    cap = f", capped at {norm.cap:g}" if norm.cap is not None else ""
    reference = norm.reference.replace("_", " ")
    return f"{_NAMES.get(metric, metric.upper())} (%; 0 = random, 100 = {reference}{cap})"


def _column_name(column: _Column) -> str:
    return f"{column.name} \u2020" if column.reference and not column.printed else column.name


def _row_label(path: tuple[str, ...], percent: frozenset[str]) -> str:
    """The row's name with its unit: ``HNS median (%)``, ``HWRB (games)``."""
    key = path[0]
    if key == "learning_efficiency":
        return f"{_NAMES.get(path[1], path[1])} {_stat_name(path[2], path[2])} per frame"
    if key == "frames":
        return "training frames"
    if key == "game_time_days":
        return "game time (days)"
    if key in ("hwrb", "breakthroughs"):
        return f"{key.upper() if key == 'hwrb' else key} (games)"
    if len(path) == 1:
        name = re.sub(r"^atari(\d+)(_val)?$", r"Atari-\1\2 estimate", key).replace("_val", "-Val")
        return f"{name} (%)" if key in percent else name
    stat = _stat_name(path[1], path[1].replace("_", " "))
    if key in SPLITS:
        return f"{SPLITS[key].name} {stat} (points)"
    unit = " (%)" if key in percent else ""
    return f"{_NAMES.get(key, key.upper())} {stat}{unit}"


def _stat_name(key: str, default: str) -> str:
    """A statistic's printed name (``IQM``), ``default`` for a key that names none."""
    return STATISTICS[key].name if key in STATISTICS else default


def _direction(path: tuple[str, ...]) -> int:
    """How a row ranks: not at all (0: frames, days), by its statistic's direction, else +1."""
    if path[0] in _UNRANKED:
        return 0
    return STATISTICS[path[-1]].direction if path[-1] in STATISTICS else 1


def _bold_best(cells: list[_Cell], direction: int, digits: int) -> None:
    """Bold the best number as shown: equal at ``digits`` decimals, equally bold."""
    numbers = [
        (i, round(float(c.value), digits)) for i, c in enumerate(cells) if _is_number(c.value)
    ]
    if direction == 0 or len(numbers) < 2:
        return
    best = max(direction * v for _, v in numbers)
    for i, value in numbers:
        cells[i].bold = direction * value == best


def _is_number(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and not (isinstance(value, float) and math.isnan(value))
    )


def _pair(value: object) -> tuple[float, float] | None:
    """``value`` as an interval when it is two numbers (a JSON ``[low, high]``), else ``None``."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(map(_is_number, value)):
        return float(value[0]), float(value[1])
    return None


# -- LaTeX -----------------------------------------------------------------------------------------

_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "\u2020": r"\textsuperscript{\dag}",
    "\u2014": "---",
    "\u2013": "--",
    "\u00d7": r"$\times$",
    "\u2264": r"$\leq$",
    "\u2265": r"$\geq$",
    "\u03c4": r"$\tau$",
}


def _latex_text(text: str) -> str:
    r"""``text`` with every LaTeX special character escaped.

    Example:
        >>> print(_latex_text("Q*bert & 50% of #1_a"))
        Q*bert \& 50\% of \#1\_a
    """
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(text))


def _latex_number(value: Any, digits: int) -> str:
    if isinstance(value, float) and math.isinf(value):
        return r"$\infty$" if value > 0 else r"$-\infty$"
    text = _number(value, digits)
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = f"${mantissa}\\times10^{{{int(exponent)}}}$"
    elif text.startswith("-"):
        text = "$-$" + text[1:]
    return text


def _latex_cell(cell: _Cell, digits: int) -> str:
    digits = digits if cell.decimals is None else cell.decimals
    if cell.value is None:
        return "--"
    if not _is_number(cell.value):
        return _latex_text(str(cell.value))
    text = _latex_number(cell.value, digits)
    if cell.bold:
        text = f"\\textbf{{{text}}}"
    if cell.interval is not None:
        low, high = (_latex_number(v, digits) for v in cell.interval)
        text += f" {{\\scriptsize [{low}, {high}]}}"
    return text


def latex_tables(
    results: PaperResults,
    *,
    digits: int = 1,
    other_protocols: bool = False,
    others: Sequence[PaperResults] = (),
) -> str:
    r"""The results' tables as LaTeX ``table`` floats (booktabs rules), ready to ``\input``.

    Needs ``\usepackage{booktabs}`` and ``\usepackage{graphicx}`` in the paper's preamble (said
    in the first lines): a table too wide for a column is scaled to the line's width.

    Args:
        results: the results (a :class:`~arcadebench.benchmarks.scoring.results.Results`).
        digits: decimals of the numbers.
        other_protocols: also a table of the published references obtained under other
            protocols, apart, with how each was obtained.
        others: results of other specs, each in tables of their own headed by the differences
            between the two protocols that change scores.
    """
    _check_digits(digits)
    spec = results.spec
    lines = [
        f"% arcadebench: {_latex_comment(_protocol(results))}, {spec.get('hash')}",
        "% needs \\usepackage{booktabs} and \\usepackage{graphicx} (wide tables: \\resizebox)",
    ]
    name = re.sub(r"[^A-Za-z0-9-]+", "-", str(spec.get("name")))
    for table in _tables(results, digits=digits, other_protocols=other_protocols, others=others):
        width = len(table.head)
        lines += [
            "",
            "\\begin{table}[ht]",
            "\\centering",
            "\\small",
            f"\\caption{{{_latex_text(table.caption)}}}",
            f"\\label{{tab:arcadebench-{name}-{table.key}}}",
        ]
        wide = _characters(table, digits) > _LATEX_WIDE
        if wide:
            lines.append("\\resizebox{\\linewidth}{!}{%")
        lines += [f"\\begin{{tabular}}{{l{'r' * (width - 1)}}}", "\\toprule"]
        if table.groups:
            spans, rules, start = [], [], 2
            for text, span in table.groups:
                spans.append(f"\\multicolumn{{{span}}}{{c}}{{{_latex_text(text)}}}")
                rules.append(f"\\cmidrule(lr){{{start}-{start + span - 1}}}")
                start += span
            lines.append(" & ".join(["", *spans]) + " \\\\")
            lines.append("".join(rules))
        lines.append(" & ".join(_latex_text(h) for h in table.head) + " \\\\")
        lines.append("\\midrule")
        for label, cells in table.rows:
            body = [_latex_text(label), *(_latex_cell(c, digits) for c in cells)]
            lines.append(" & ".join(body) + " \\\\")
        lines += ["\\bottomrule", "\\end{tabular}" + ("}" if wide else "")]
        if table.notes:
            notes = " ".join(_latex_text(n) for n in table.notes)
            lines += ["\\par\\smallskip", f"{{\\footnotesize\\raggedright {notes}\\par}}"]
        lines.append("\\end{table}")
    return "\n".join(lines) + "\n"


#: A table wider than this many characters of its cells is scaled to the line's width: about
#: what a single column of a two-column paper holds in \small type.
_LATEX_WIDE = 70


def _characters(table: _Table, digits: int) -> int:
    """The table's width in characters: its widest cell of each column, and a space between."""
    widths = [len(h) for h in table.head]
    for label, cells in table.rows:
        texts = [label, *(_markdown_cell(c, digits) for c in cells)]
        widths = [max(w, len(t)) for w, t in zip(widths, texts, strict=True)]
    return sum(widths) + 2 * len(widths)


def _latex_comment(text: str) -> str:
    return text.replace("\n", " ")


# -- Markdown --------------------------------------------------------------------------------------


def _markdown_text(text: str) -> str:
    r"""``text`` safe in a pipe table: ``|``, ``*``, ``_`` and backslashes escaped.

    Example:
        >>> print(_markdown_text("a|b *c*"))
        a\|b \*c\*
    """
    return re.sub(r"([\\|*_`<>\[\]])", r"\\\1", " ".join(str(text).split()))


def _markdown_cell(cell: _Cell, digits: int) -> str:
    digits = digits if cell.decimals is None else cell.decimals
    if cell.value is None:
        return "\u2014"
    if not _is_number(cell.value):
        return _markdown_text(str(cell.value))
    text = _markdown_number(cell.value, digits)
    if cell.bold:
        text = f"**{text}**"
    if cell.interval is not None:
        low, high = (_markdown_number(v, digits) for v in cell.interval)
        text += f" [{low}, {high}]"
    return text


def _markdown_number(value: Any, digits: int) -> str:
    if isinstance(value, float) and math.isinf(value):
        return "\u221e" if value > 0 else "\u2212\u221e"
    return _number(value, digits)


def markdown_tables(
    results: PaperResults,
    *,
    digits: int = 1,
    other_protocols: bool = False,
    others: Sequence[PaperResults] = (),
) -> str:
    """The tables of :func:`latex_tables` as Markdown pipe tables, each under its caption."""
    _check_digits(digits)
    parts = []
    tables = _tables(results, digits=digits, other_protocols=other_protocols, others=others)
    for number, table in enumerate(tables, start=1):
        head = list(table.head)
        if table.groups:  # no spanning headers in Markdown: the group names the column
            names = head[1:]
            head = [head[0]]
            start = 0
            for text, span in table.groups:
                short = text.split(" (")[0]
                head += [f"{short}: {n}" for n in names[start : start + span]]
                start += span
        lines = [
            f"**Table {number}.** {_markdown_text(table.caption)}",
            "",
            "| " + " | ".join(_markdown_text(h) for h in head) + " |",
            "|" + "|".join([":--", *("--:" for _ in head[1:])]) + "|",
        ]
        for label, cells in table.rows:
            body = [_markdown_text(label), *(_markdown_cell(c, digits) for c in cells)]
            lines.append("| " + " | ".join(body) + " |")
        if table.notes:
            lines += ["", " ".join(_markdown_text(n) for n in table.notes)]
        parts.append("\n".join(lines))
    return "\n\n".join(parts) + "\n"


# -- numbers ---------------------------------------------------------------------------------------


def _check_digits(digits: int) -> None:
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 6:
        raise InvalidArgument(f"`digits` must be an integer from 0 to 6, got {digits!r}")


def _number(value: Any, digits: int) -> str:
    """A number with ``digits`` decimals and thousands separated; a tiny one in e-notation.

    Example:
        >>> _number(12345.678, 1), _number(7, 1), _number(4.37e-08, 1), _number(-0.04, 1)
        ('12,345.7', '7', '4.37e-08', '-0.0')
    """
    if isinstance(value, int):
        return f"{value:,}"
    number = float(value)
    if number != 0 and abs(number) < 10 ** (-digits) / 2 and abs(number) < 1e-3:
        return f"{number:.2e}"
    return f"{number:,.{digits}f}"
