r"""Tables that paste into a paper: LaTeX (booktabs) and Markdown renderings of results.

What ``arcadebench score --format latex|markdown`` prints and ``Results.to_latex()`` /
``Results.to_markdown()`` return, so that the numbers of a paper's table are the scorer's, with
their intervals and their protocol, and are never typed by hand:

- the aggregate table: every aggregate of every algorithm with its stratified-bootstrap interval
  (Agarwal et al. 2021, Section 4), beside the published references chosen (``references``: by
  default the first four the spec has of its own protocol, ``Spec.default_references``);
- the per-game table: the raw score and the headline normalised score of every game, each game
  named as papers print it (:func:`arcadebench.specs.names.display_name`);
- the probability of improvement of the compared pairs, with intervals, when there are some.

A reference is scored like our results only where its per-run scores are shipped (marked
``‡``): the IQM and the optimality gap are over all runs, so a reference of per-game means only
(marked ``†``) shows the statistics over games alone, never an IQM or a gap made from means.
The best number of each row is bold only among the columns over the same games and protocol:
columns over other games (a reference of fewer games, the aggregates a paper printed over its
own) stand apart in column groups headed by how many games they are over, and printed numbers
are never ranked. Numbers obtained under another protocol never share a table with these: the
references obtained under another protocol (``other_protocols``) and results of other specs
(``others``) come in tables of their own, headed by how they were obtained or by the differences
between the protocols that change scores (:func:`arcadebench.specs.diff`).

Each caption names the protocol, its version and its content hash (the full hash is in a LaTeX
comment above the tables) and says what the brackets are (level, repetitions); the rows and
columns give the units (normalised scores in %, raw scores in points, counts in games), and a
note in small type under each table says the rest (definitions, runs, sources, missing games).

The LaTeX needs only the packages of :data:`PACKAGES` (named in its first lines), is never
scaled (``\resizebox`` would set the numbers in 4-point type): a table is a ``table`` where it
fits a column of a two-column paper and a ``table*`` where it fits the page; one wider than the
page is cut into column parts, and one longer than :data:`MAX_ROWS` rows into row parts, each
with its header, the later ones captioned "(continued)" (booktabs rules only: ``longtable`` does
not work in two-column documents). Any Unicode in a name is written so pdflatex takes it
(``ε`` as ``$\varepsilon$``, quotes as TeX's).

One neutral model (``_Table``) and two renderers, so the two formats show the same cells.

Functions: latex_tables, markdown_tables, chosen_references.
Data: PACKAGES, MAX_ROWS, PaperResults (the protocol the tables read).
"""

from __future__ import annotations

import itertools
import math
import re
import textwrap
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from arcadebench.benchmarks.scoring.normalise import headline_metric
from arcadebench.benchmarks.scoring.tables import (
    ScoredResults,
    _games,
    aggregate_paths,
    dig,
    percent_metrics,
)
from arcadebench.errors import InvalidArgument
from arcadebench.specs import Spec
from arcadebench.specs.diff import diff
from arcadebench.specs.model import short_hash
from arcadebench.specs.names import display_name
from arcadebench.specs.statistics import SPLITS, STATISTICS

__all__ = [
    "MAX_ROWS",
    "PACKAGES",
    "PaperResults",
    "chosen_references",
    "latex_tables",
    "markdown_tables",
]

PACKAGES: tuple[str, ...] = ("booktabs",)
"""The LaTeX packages the tables need, all of them; the output names them in its first lines."""

MAX_ROWS = 45
r"""Rows of a LaTeX table part at most, about what a page holds in ``\small`` type."""

_NAMES = {"hns": "HNS", "hwrns": "HWRNS", "saber": "SABER", "chns": "CHNS"}
_SKIPPED = frozenset({"missing", "classes"})
_UNRANKED = frozenset({"frames", "game_time_days"})
_MARKS = {"runs": "\u2021", "means": "\u2020"}

Kind = Literal["ours", "frozen", "runs", "means", "printed"]


PaperResults = ScoredResults
"""What the tables read of a :class:`~arcadebench.benchmarks.scoring.results.Results`."""


def chosen_references(spec: Spec | None, references: Sequence[str] | str | None) -> tuple[str, ...]:
    """The references a table shows: those named, none for ``"none"``, else the spec's default.

    Names are resolved by :meth:`~arcadebench.specs.model.Spec.resolve_reference` (any
    spelling; an unknown one is one line with the close matches); ``None`` gives the first four
    the spec has of its own protocol (:meth:`~arcadebench.specs.model.Spec.default_references`).

    Example:
        >>> from arcadebench.specs import load_spec
        >>> chosen_references(load_spec("atari5"), ["muzero", "ape-x"])
        ('MuZero (Table 3)', 'Ape-X (Table 3)')
        >>> chosen_references(load_spec("atari5"), "none")
        ()

    Raises:
        InvalidArgument: ``references`` is not names, or mixes ``none`` with names.
        UnknownReference: a name the spec has no reference of.
    """
    if references is None:
        return spec.default_references() if spec is not None else ()
    names = [references] if isinstance(references, str) else references
    if not isinstance(names, Sequence) or not all(isinstance(n, str) for n in names):
        raise InvalidArgument(
            f"`references` must be reference names, or 'none', got {references!r}"
        )
    if any(n.strip().lower() == "none" for n in names):
        if len(names) > 1:
            raise InvalidArgument(
                f"`references` must be reference names or 'none' alone, got {list(names)!r}"
            )
        return ()
    if spec is None:
        return ()
    return tuple(dict.fromkeys(spec.resolve_reference(n) for n in names))


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
    """A column of numbers: an algorithm of the results or a published reference.

    ``kind``: ``ours``; ours but a ``frozen`` policy's evaluation under a protocol that scores
    training episodes; a reference scored over its published ``runs`` or over per-game
    ``means`` only; or aggregates a paper ``printed`` over its own games. ``count`` is how many
    games its aggregates are over and ``over`` which (a printed table: its source), so that only
    columns over the same games are ranked together.
    """

    name: str
    aggregates: Mapping[str, Any]
    games: Mapping[str, Mapping[str, Any]] | None = None
    kind: Kind = "ours"
    count: int | None = None
    over: frozenset[str] | str = frozenset()
    runs: int | None = None

    @classmethod
    def of(
        cls, name: str, block: Mapping[str, Any], kind: Kind, runs: int | None = None
    ) -> _Column:
        """The column of a scored block (``{"games", "aggregates"}``), over its games."""
        games = block["games"]
        return cls(name, block["aggregates"], games, kind, len(games), frozenset(games), runs)

    @property
    def reference(self) -> bool:
        return self.kind not in ("ours", "frozen")

    @property
    def head(self) -> str:
        """The column's header: its name, and the mark of how a reference was scored."""
        mark = _MARKS.get(self.kind)
        return f"{self.name} {mark}" if mark else self.name


@dataclass
class _Table:
    """A table of both formats: caption, header, optional spanning groups, labelled rows.

    The caption says what the table is (protocol, hash, brackets, bold); ``notes`` say the rest
    (definitions, sources, missing games), printed in small type under the table, where their
    length does not matter (LaTeX sets a caption in one box first: a long one does not fit).
    ``groups`` span the columns after the first, ``(text, columns)``; in Markdown, which has no
    spanning header, ``markdown_head`` names each column with its group.
    """

    key: str
    caption: str
    head: list[str]
    rows: list[tuple[str, list[_Cell]]]
    groups: list[tuple[str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    markdown_head: list[str] | None = None

    @property
    def spans(self) -> list[range]:
        """The data columns under each group, as ranges of their indices."""
        return _ranges(span for _, span in self.groups)


def _ranges(spans: Iterable[int]) -> list[range]:
    """Consecutive ranges of the lengths ``spans``: ``[2, 1]`` -> ``[range(0, 2), range(2, 3)]``."""
    return list(itertools.starmap(range, itertools.pairwise([0, *itertools.accumulate(spans)])))


def _tables(
    results: PaperResults,
    digits: int,
    other_protocols: bool,
    others: Sequence[PaperResults],
    references: Sequence[str] | str | None,
) -> list[_Table]:
    """Every table, in order: ours, then each other protocol's in tables of its own."""
    _check_digits(digits)
    names = chosen_references(results.protocol, references)
    if other_protocols and references is None and results.protocol is not None:
        spec = results.protocol  # every reference of another protocol, as before a choice
        names = (*names, *(n for n in spec.reference_names() if spec.reference_protocol(n)))
    own, foreign = _reference_columns(results, names)
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
        _Column.of(name, block, "frozen" if block.get("frozen_policy") else "ours")
        for name, block in results.algorithms.items()
    ]
    tables = [_aggregate_table(results, ours + references, digits, key=f"{prefix}aggregates")]
    per_game = _game_table(results, ours + [c for c in references if c.games is not None], digits)
    for table in (per_game, _improvement_table(results, digits)):
        if table is not None:
            table.key = prefix + table.key
            tables.append(table)
    return tables


def _reference_columns(
    results: PaperResults, names: Sequence[str]
) -> tuple[list[_Column], list[tuple[_Column, str]]]:
    """The chosen references, in their order: under the spec's protocol, and under others."""
    found: dict[str, tuple[_Column, str | None]] = {}
    for reference, block in results.reference_blocks(names, intervals=True):
        kind: Kind = "runs" if reference.per_run else "means"
        column = _Column.of(reference.name, block, kind, reference.runs)
        found[reference.name] = (column, reference.protocol)
    for published in results.published:
        for row, values in published.rows.items():
            name = f"{row} ({published.source})"
            if name not in names:
                continue
            aggregates: dict[str, Any] = {}
            for path, value in zip(published.paths, values, strict=True):
                if path is not None and value is not None:
                    _put(aggregates, path, value)
            column = _Column(name, aggregates, None, "printed", published.games, published.source)
            found[name] = (column, published.protocol)
    chosen = [found[name] for name in names if name in found]
    own = [column for column, protocol in chosen if not protocol]
    return own, [(column, protocol) for column, protocol in chosen if protocol]


def _put(mapping: dict[str, Any], path: Sequence[str], value: Any) -> None:
    for key in path[:-1]:
        mapping = mapping.setdefault(key, {})
    mapping[path[-1]] = value


def _protocol(results: PaperResults) -> str:
    spec = results.spec
    short = short_hash(spec.get("hash"))
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


def _game_sets(columns: list[_Column]) -> list[list[int]]:
    """The columns' indices by the games they are over: the first column's first, printed last.

    Only the columns of one set are ranked together; a printed table's columns are a set of
    their own (its paper's games), as is each other set of games, and the frozen policies' (an
    evaluation, not the protocol's number: never ranked with its references).
    """
    rank = {"": 0, "frozen": 1, "printed": 2}
    sets: dict[tuple[str, frozenset[str] | str], list[int]] = {}
    keyed = [(column.kind if column.kind in rank else "", column.over) for column in columns]
    for i in sorted(range(len(columns)), key=lambda i: rank[keyed[i][0]]):  # stable: in order
        sets.setdefault(keyed[i], []).append(i)
    return list(sets.values())


def _set_name(column: _Column, main: bool) -> str:
    """A column group's header: ``26 games``, ``3 other games``, ``printed, 57 games``."""
    count = "the paper's games" if column.count is None else _games(column.count)
    if column.kind == "printed":
        return f"printed, {count}"
    if column.kind == "frozen":
        return f"frozen policy, {count}"
    return count if main else count.replace(" game", " other game")


def _aggregate_table(
    results: PaperResults, columns: list[_Column], digits: int, key: str
) -> _Table:
    ours = [c for c in columns if not c.reference]
    sets = _game_sets(columns)
    columns = [columns[i] for indices in sets for i in indices]
    ranges = _ranges(len(indices) for indices in sets)
    percent = percent_metrics(results.algorithms.values())
    paths = [
        p
        for p in aggregate_paths(c.aggregates for c in (ours or columns))
        if p[0] not in _SKIPPED and p[-1] != "n_games"
    ]
    rows: list[tuple[str, list[_Cell]]] = []
    for path in paths:
        cells = [
            _Cell(_numeric(dig(c.aggregates, path)), _pair(dig(c.aggregates, ("ci", *path))))
            for c in columns
        ]
        for indices in ranges:
            ranked = [cells[i] for i in indices if columns[i].kind != "printed"]
            _bold_best(ranked, _direction(path), digits)
        rows.append((_row_label(path, percent), cells))
    rows.append(("games", [_Cell(c.count) for c in columns]))
    groups: list[tuple[str, int]] = []
    markdown_head = None
    if len(sets) > 1:
        names = [_set_name(columns[r[0]], k == 0) for k, r in enumerate(ranges)]
        groups = [(name, len(r)) for name, r in zip(names, ranges, strict=True)]
        markdown_head = [""] + [
            columns[i].head
            if k == 0 and columns[r[0]].kind != "printed"
            else f"{columns[i].head} ({names[k]})"
            for k, r in enumerate(ranges)
            for i in r
        ]
    return _Table(
        key,
        _aggregate_caption(results, columns, grouped=len(sets) > 1),
        ["", *(c.head for c in columns)],
        rows,
        groups,
        _notes(results, columns),
        markdown_head,
    )


def _aggregate_caption(results: PaperResults, columns: list[_Column], *, grouped: bool) -> str:
    parts = [f"Aggregate scores, protocol {_protocol(results)}{_title(results)}."]
    if any("ci" in c.aggregates for c in columns):
        parts.append(f"Brackets: {_brackets(results)}.")
    stats = _stats(results)
    lowest = [s.name for s in STATISTICS.values() if s.direction < 0 and s.key in stats]
    best = f" (the lowest {' and '.join(lowest)})" if lowest else ""
    among = " among the columns over the same games" if grouped else ""
    parts.append(f"Bold: the best of each row{best}{among}.")
    return " ".join(parts)


def _stats(results: PaperResults) -> set[str]:
    """The statistics of the results' per-metric aggregates (``{"mean", ...}``): the first's."""
    block = next(iter(results.algorithms.values()), {})
    aggregates = block.get("aggregates", {}).values()
    return {s for v in aggregates if isinstance(v, Mapping) and "n_games" in v for s in v}


def _notes(results: PaperResults, columns: list[_Column]) -> list[str]:
    """What the aggregate table's numbers are, where the references come from, what is missing."""
    percent = percent_metrics(results.algorithms.values())
    stats = _stats(results)
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
    sources = f"sources: arcadebench show {results.spec.get('name')}"
    scored = [c for c in columns if c.kind == "runs"]
    if scored:
        runs = sorted({c.runs for c in scored if c.runs})
        many = f" ({'/'.join(map(str, runs))} per game)" if runs else ""
        notes.append(
            f"{_MARKS['runs']}: the published per-run scores{many}, scored here over their runs "
            f"as ours are, on the games of the results ({sources})."
        )
    if any(c.kind == "means" for c in columns):
        missing = f": no {' or '.join(over_runs)}, which are over all runs" if over_runs else ""
        notes.append(
            f"{_MARKS['means']}: over per-game means: the published per-run scores are not "
            f"shipped{missing} ({sources})."
        )
    frozen = [c.name for c in columns if c.kind == "frozen"]
    if frozen:
        protocol = results.protocol
        spec = protocol.name if protocol is not None else "the protocol"
        notes.append(
            f"{', '.join(frozen)}: a frozen policy's evaluation episodes, not the training "
            f"episodes {spec} scores: not the protocol's number, not ranked with its references."
        )
    printed = [c.name for c in columns if c.kind == "printed"]
    if printed:
        notes.append(
            f"{', '.join(printed)}: aggregates as printed, over the paper's games, not ranked "
            "with the others."
        )
    missing_games = [
        f"{name}: {', '.join(display_name(g) for g in block['aggregates']['missing'])}"
        for name, block in results.algorithms.items()
        if block.get("aggregates", {}).get("missing")
    ]
    if missing_games:
        notes.append(f"Games of the spec without a score: {'; '.join(missing_games)}.")
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
    games = list(dict.fromkeys(g for c in columns if not c.reference for g in c.games or ()))
    if not games:
        return None
    spec = results.protocol
    if spec is not None:  # as the spec lists them (alphabetical for Atari), as papers do
        order = {game: i for i, game in enumerate(spec.games)}
        games.sort(key=lambda g: order.get(g, len(order)))
    metric = headline_metric(spec) if spec is not None else None
    metrics = ["raw"] + ([metric] if metric and metric != "raw" else [])
    metrics = [
        m for m in metrics if any(m in (c.games or {}).get(g, {}) for c in columns for g in games)
    ]
    rows: list[tuple[str, list[_Cell]]] = []
    for game in games:
        cells: list[_Cell] = []
        for metric_name in metrics:
            group = [
                _Cell(_numeric((c.games or {}).get(game, {}).get(metric_name))) for c in columns
            ]
            _bold_best(
                [c for c, k in zip(group, columns, strict=True) if k.kind != "frozen"], 1, digits
            )
            cells.extend(group)
        rows.append((display_name(game), cells))
    names = [c.head for c in columns]
    units = [_metric_unit(spec, m) for m in metrics]
    caption = (
        f"Per-game scores, protocol {_protocol(results)}{_title(results)}, each the mean over "
        "the game's runs. Bold: the best of each row and score"
        + (", a frozen policy's aside." if any(c.kind == "frozen" for c in columns) else ".")
    )
    notes = [", ".join(units) + "."]
    runs = _runs(columns)
    if runs:
        notes.append(f"Runs per game: {runs}.")
    notes += [
        f"{_MARKS[kind]}: {what}."
        for kind, what in (
            ("runs", "the mean of the published per-run scores"),
            ("means", "the published per-game mean"),
        )
        if any(c.kind == kind for c in columns)
    ]
    markdown_head = [
        "game",
        *(f"{unit.split(' (')[0]}: {name}" for unit in units for name in names),
    ]
    return _Table(
        "games",
        caption,
        ["game", *(names * len(metrics))],
        rows,
        [(unit, len(columns)) for unit in units],
        notes,
        markdown_head if len(metrics) > 1 else None,
    )


def _improvement_table(results: PaperResults, digits: int) -> _Table | None:
    comparisons = results.comparisons
    if not comparisons:
        return None
    rows = [
        (
            f"{c['x']} > {c['y']}",
            [
                _Cell(float(c["probability"]), _pair(c.get("ci")), decimals=max(2, digits)),
                _Cell(len(c.get("games", {}))),
            ],
        )
        for c in comparisons
    ]
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


def _numeric(value: Any) -> Any:
    """``value`` where it is a number, else ``None``."""
    return value if _is_number(value) else None


def _pair(value: object) -> tuple[float, float] | None:
    """``value`` as an interval when it is two numbers (a JSON ``[low, high]``), else ``None``."""
    if isinstance(value, list | tuple) and len(value) == 2 and all(map(_is_number, value)):
        return float(value[0]), float(value[1])
    return None


# -- LaTeX text ------------------------------------------------------------------------------------

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
    "|": r"\textbar{}",
    "[": "{[}",  # never an optional argument of the \\ before it
    "]": "{]}",
    "\u00a0": "~",
    "\u2020": r"\dag{}",  # full size: a superscript in \small is 6 points
    "\u2021": r"\ddag{}",
    "\u2014": "---",
    "\u2013": "--",
    "\u2212": "$-$",
    "\u2026": r"\ldots{}",
    "\u201c": "``",
    "\u201d": "''",
    "\u2018": "`",
    "\u2019": "'",
    "\u00ab": "<<",
    "\u00bb": ">>",
    "\u00d7": r"$\times$",
    "\u00f7": r"$\div$",
    "\u00b1": r"$\pm$",
    "\u2213": r"$\mp$",
    "\u00b7": r"$\cdot$",
    "\u2022": r"$\bullet$",
    "\u00b0": r"$^\circ$",
    "\u2264": r"$\leq$",
    "\u2265": r"$\geq$",
    "\u2260": r"$\neq$",
    "\u2248": r"$\approx$",
    "\u221e": r"$\infty$",
    "\u2192": r"$\rightarrow$",
    "\u2190": r"$\leftarrow$",
    "\u00b5": r"$\mu$",
    "\u00a7": r"\S{}",
    "\u00b6": r"\P{}",
    "\u00a9": r"\copyright{}",
    "\u00a3": r"\pounds{}",
    "\u00df": r"\ss{}",
    "\u00e6": r"\ae{}",
    "\u00c6": r"\AE{}",
    "\u0153": r"\oe{}",
    "\u0152": r"\OE{}",
    "\u00f8": r"\o{}",
    "\u00d8": r"\O{}",
    "\u0142": r"\l{}",
    "\u0141": r"\L{}",
    "\u0131": r"\i{}",
    "\u00bf": r"?`",
    "\u00a1": r"!`",
}
# Greek letters by their Unicode names (GREEK SMALL LETTER EPSILON -> \varepsilon, as papers
# write an epsilon-greedy agent's; the capitals Latin lacks as commands)
_GREEK_VARIANTS = {"epsilon": "varepsilon"}
_GREEK_CAPITALS = frozenset(
    {"gamma", "delta", "theta", "lambda", "xi", "pi", "sigma", "upsilon", "phi", "psi", "omega"}
)
# combining accents a letter decomposes into, as TeX's accent commands (\'e, \"o, \c{c}...)
_ACCENTS = {
    "\u0300": "`",
    "\u0301": "'",
    "\u0302": "^",
    "\u0303": "~",
    "\u0304": "=",
    "\u0306": "u",
    "\u0307": ".",
    "\u0308": '"',
    "\u030a": "r",
    "\u030b": "H",
    "\u030c": "v",
    "\u0327": "c",
    "\u0328": "k",
}
_OPENING = frozenset(" \t\n([{<-/\u2014\u2013")


def _latex_text(text: str) -> str:
    r"""``text`` as LaTeX text: special characters escaped, any Unicode as pdflatex takes it.

    Straight quotes become TeX's opening and closing quotes (``"x"`` -> ````x''``), an
    apostrophe stays one; Greek letters, accented letters and common symbols become their
    commands, and a character with none is written as its code point (never a character that
    stops pdflatex).

    Example:
        >>> print(_latex_text("Q*bert & 50% of #1_a"))
        Q*bert \& 50\% of \#1\_a
        >>> print(_latex_text('DrQ(\u03b5) "tuned" \u00b1 Montezuma\'s Caf\u00e9'))
        DrQ($\varepsilon$) ``tuned'' $\pm$ Montezuma's Caf\'{e}
    """
    out = []
    previous = " "
    for ch in str(text):
        if ch == '"':
            out.append("``" if previous in _OPENING else "''")
        elif ch == "'" and previous in _OPENING:
            out.append("`")
        elif ch in _LATEX_ESCAPES:
            out.append(_LATEX_ESCAPES[ch])
        elif ch.isascii():
            out.append(ch if ch.isprintable() else " ")
        else:
            out.append(_latex_unicode(ch))
        previous = ch
    return "".join(out)


def _latex_unicode(ch: str) -> str:
    """One non-ASCII character as LaTeX: a Greek letter, an accented letter, or its code point."""
    name = unicodedata.name(ch, "")
    greek = re.fullmatch(r"GREEK (SMALL|CAPITAL) LETTER ([A-Z]+)", name)
    if greek:
        letter = greek.group(2).lower()
        if greek.group(1) == "SMALL":
            return f"$\\{_GREEK_VARIANTS.get(letter, letter)}$"
        if letter in _GREEK_CAPITALS:
            return f"$\\{letter.capitalize()}$"
        return unicodedata.normalize("NFKD", ch) if ch.isascii() else _code_point(ch)
    if unicodedata.category(ch).startswith("Z"):
        return " "
    decomposed = unicodedata.normalize("NFD", ch)
    base, marks = decomposed[0], decomposed[1:]
    if base.isascii() and base.isalpha() and marks and all(m in _ACCENTS for m in marks):
        text = "\\i" if base == "i" else base
        for mark in marks:
            text = f"\\{_ACCENTS[mark]}{{{text}}}"
        return text
    plain = unicodedata.normalize("NFKD", ch)
    if plain.isascii() and plain.isprintable() and plain:
        return "".join(_LATEX_ESCAPES.get(c, c) for c in plain)
    return _code_point(ch)


def _code_point(ch: str) -> str:
    return f"{{[}}U+{ord(ch):04X}{{]}}"


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


def _formatted(
    cell: _Cell, digits: int, number: Callable[[Any, int], str]
) -> tuple[str, str | None]:
    """A number cell's number and its interval's ``low, high`` (``None`` without), as written."""
    digits = digits if cell.decimals is None else cell.decimals
    interval = (
        None if cell.interval is None else ", ".join(number(v, digits) for v in cell.interval)
    )
    return number(cell.value, digits), interval


def _latex_cell(cell: _Cell, digits: int, stacked: bool) -> str:
    if not _is_number(cell.value):
        return "--" if cell.value is None else _latex_text(str(cell.value))
    text, interval = _formatted(cell, digits, _latex_number)
    text = f"\\textbf{{{text}}}" if cell.bold else text
    if interval is None:
        return text
    interval = f"{{\\scriptsize [{interval}]}}"
    if stacked:  # the interval under its number: half the width
        return f"\\begin{{tabular}}[t]{{@{{}}r@{{}}}}{text}\\\\{interval}\\end{{tabular}}"
    return f"{text} {interval}"


def _latex_lines(text: str, width: int, align: str) -> str:
    """``text`` wrapped at ``width`` characters, the lines stacked in a nested ``tabular``."""
    lines = _wrap(text, width)
    if len(lines) == 1:
        return _latex_text(lines[0])
    body = "\\\\".join(_latex_text(line) for line in lines)
    return f"\\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}{body}\\end{{tabular}}"


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, a parenthesis starting a line.

    Example:
        >>> _wrap("Ape-X (Table 3)", 12), _wrap("SPR (Agarwal et al. 2021, 100 runs)", 12)
        (['Ape-X', '(Table 3)'], ['SPR', '(Agarwal et', 'al. 2021,', '100 runs)'])
    """
    lines: list[str] = []
    for piece in re.split(r" (?=\()", text):
        for line in textwrap.wrap(piece, max(width, 1), break_long_words=False) or [""]:
            if lines and len(lines[-1]) + 1 + len(line) <= width and not line.startswith("("):
                lines[-1] += f" {line}"
            else:
                lines.append(line)
    return lines or [""]


# -- LaTeX layout ----------------------------------------------------------------------------------

#: Widths in points: a column of a two-column paper (3.25 in = 234.9 pt, as ICML's template
#: sets it) and the page (6.75 in = 487.8 pt), each less a margin for the estimate's error
#: (pdflatex sets these tables within 3 % of it).
_COLUMN_POINTS = 225.0
_PAGE_POINTS = 475.0
_SEPARATION = 12.0  # 2\tabcolsep between two columns
_HEAD_CHARS = 12  # a header wraps at this many characters a line
_GROUP_CHARS = 16  # a column group's header, at least this many
#: Glyph widths in points of Computer Modern at \small (9 pt), by pdflatex's measure:
#: digits, lower-case and capital letters (their mean), then the narrow and wide characters;
#: \scriptsize is 0.865 of it and bold 1.15.
_POINTS = {"digit": 4.62, "lower": 4.6, "upper": 6.7, "other": 4.62}
_NARROW = dict.fromkeys(".,:;'`![]", 2.57) | dict.fromkeys("()", 3.6) | dict.fromkeys(" -", 3.08)
_WIDE = dict.fromkeys("+=@%", 7.7) | {"|": 9.25}
_SIZES = {"small": 1.0, "script": 0.865, "bold": 1.15}


def _points(text: str, size: str = "small") -> float:
    r"""How wide ``text`` is set in points (``\small``, ``\scriptsize`` or bold ``\small``).

    Example:
        >>> round(_points("12.5"), 1), round(_points("[1.0, 2.0]", "script"), 1)
        (16.4, 29.8)
    """
    width = 0.0
    for ch in text:
        if ch in _NARROW or ch in _WIDE:
            width += _NARROW.get(ch) or _WIDE[ch]
        elif ch.isascii():
            kind = "digit" if ch.isdigit() else "lower" if ch.islower() else "upper"
            width += _POINTS[kind if ch.isalnum() else "other"]
        else:  # a code point written out is 8 characters, other letters and symbols one
            written = ch in _LATEX_ESCAPES or not _latex_unicode(ch).startswith("{[}")
            width += _POINTS["other"] * (1 if written else 8)
    return width * _SIZES[size]


@dataclass
class _Part:
    """A piece of a table as LaTeX sets it: its columns and rows, and how it is set."""

    columns: list[int]  # indices of the data columns (after the label column)
    rows: list[int]
    stacked: bool
    number: int  # 1 for the first part


def _widths(table: _Table, digits: int, stacked: bool) -> tuple[float, list[float]]:
    """The label column's width and each data column's, in points."""
    label = max(
        [_points(_wrap(table.head[0], _HEAD_CHARS)[0])] + [_points(r) for r, _ in table.rows]
    )
    widths = [max(_points(line) for line in _wrap(h, _HEAD_CHARS)) for h in table.head[1:]]
    for _, cells in table.rows:
        for i, cell in enumerate(cells):
            widths[i] = max(widths[i], _cell_points(cell, digits, stacked))
    for (text, _), span in zip(table.groups, table.spans, strict=True):
        # a group's header wider than its columns widens the last
        columns = sum(widths[i] for i in span) + _SEPARATION * (len(span) - 1)
        lines = _wrap(text, _group_chars(widths, span))
        widths[span[-1]] += max(0.0, max(_points(line) for line in lines) - columns)
    return label, widths


def _group_chars(widths: Sequence[float], columns: Sequence[int]) -> int:
    """How many characters a line of a group's header over ``columns`` may have."""
    points = sum(widths[i] for i in columns) + _SEPARATION * (len(columns) - 1)
    return max(int(points / _POINTS["lower"]), _GROUP_CHARS)


def _cell_points(cell: _Cell, digits: int, stacked: bool) -> float:
    if not _is_number(cell.value):
        return _points(str(cell.value) if cell.value is not None else "--")
    text, interval = _formatted(cell, digits, _markdown_number)
    number = _points(text, "bold" if cell.bold else "small")
    if interval is None:
        return number
    width = _points(f"[{interval}]", "script")
    return max(number, width) if stacked else number + _points(" ") + width


def _span_width(label: float, widths: Sequence[float]) -> float:
    return label + sum(widths) + _SEPARATION * (len(widths) + 1)


def _layout(table: _Table, digits: int) -> tuple[list[_Part], str]:
    """How LaTeX sets ``table``: its parts and the float (``table`` or ``table*``).

    The narrowest float that holds it, intervals beside their numbers where that fits as well
    as under them; a table wider than the page in column parts (each group of columns whole
    where it fits), and one of more than :data:`MAX_ROWS` rows in row parts of equal size.
    """
    fits = {}
    for stacked in (False, True):
        label, widths = _widths(table, digits, stacked)
        total = _span_width(label, widths)
        fits[stacked] = 0 if total <= _COLUMN_POINTS else 1 if total <= _PAGE_POINTS else 2
    stacked = fits[True] < fits[False] or fits[True] == 2  # under their numbers: narrower
    label, widths = _widths(table, digits, stacked)
    chunks = _column_chunks(table, label, widths)
    rows = list(range(len(table.rows)))
    size = math.ceil(len(rows) / math.ceil(len(rows) / MAX_ROWS)) if rows else 0
    row_chunks = [rows[k : k + size] for k in range(0, len(rows), size)] if rows else [[]]
    pieces = [(columns, chunk) for columns in chunks for chunk in row_chunks]
    parts = [_Part(c, r, stacked, n) for n, (c, r) in enumerate(pieces, start=1)]
    widest = max(_span_width(label, [widths[i] for i in p.columns]) for p in parts)
    return parts, "table" if widest <= _COLUMN_POINTS else "table*"


def _column_chunks(table: _Table, label: float, widths: list[float]) -> list[list[int]]:
    """The data columns in pieces that each fit the page, a group whole where it fits."""

    def fits(columns: list[int]) -> bool:
        return _span_width(label, [widths[i] for i in columns]) <= _PAGE_POINTS

    groups = [list(r) for r in table.spans] if table.groups else [[i] for i in range(len(widths))]
    chunks: list[list[int]] = [[]]
    for group in groups:
        together = chunks[-1] + group
        if fits(together) or not chunks[-1]:
            chunks[-1] = together
        else:
            chunks.append(list(group))
        if not fits(chunks[-1]):  # a group wider than the page alone: cut it column by column
            piece: list[int] = []
            for i in chunks.pop():
                if piece and not fits([*piece, i]):
                    chunks.append(piece)
                    piece = []
                piece.append(i)
            chunks.append(piece)
    return [c for c in chunks if c]


def _part_groups(table: _Table, columns: list[int]) -> list[tuple[str, int]]:
    """The spanning groups over a part's columns: each group's text over its columns there."""
    owner = {i: k for k, span in enumerate(table.spans) for i in span}
    return [
        (table.groups[k][0], len(list(run)))
        for k, run in itertools.groupby(owner[i] for i in columns)
    ]


def latex_tables(
    results: PaperResults,
    *,
    digits: int = 1,
    other_protocols: bool = False,
    others: Sequence[PaperResults] = (),
    references: Sequence[str] | str | None = None,
) -> str:
    r"""The results' tables as LaTeX floats (booktabs rules), ready to ``\input``.

    Needs ``\usepackage{booktabs}`` in the paper's preamble, and nothing else (:data:`PACKAGES`,
    said in the first lines). No table is scaled: each is a ``table`` where it fits a column of
    a two-column paper, else a ``table*``, cut into parts where wider or longer than a page.

    Args:
        results: the results (a :class:`~arcadebench.benchmarks.scoring.results.Results`).
        digits: decimals of the numbers.
        other_protocols: also a table of the published references obtained under other
            protocols, apart, with how each was obtained (every one, unless ``references``
            names some).
        others: results of other specs, each in tables of their own headed by the differences
            between the two protocols that change scores.
        references: the spec's published references beside ours, by name (any spelling), or
            ``"none"``; ``None``: the first four obtained under this protocol.

    Raises:
        InvalidArgument: ``digits`` or ``references`` out of range.
        UnknownReference: a reference the spec does not have.
    """
    tables = _tables(results, digits, other_protocols, others, references)
    spec = results.spec
    packages = " and ".join(f"\\usepackage{{{p}}}" for p in PACKAGES)
    lines = [
        f"% arcadebench: {' '.join(_protocol(results).split())}, {spec.get('hash')}",
        f"% needs {packages}",
    ]
    name = re.sub(r"[^A-Za-z0-9-]+", "-", str(spec.get("name")))
    for table in tables:
        parts, environment = _layout(table, digits)
        for part in parts:
            lines += _latex_part(table, part, environment, digits, f"{name}-{table.key}")
            if part is parts[-1] and table.notes:
                notes = " ".join(_latex_text(n) for n in table.notes)
                lines[-1:-1] = ["\\par\\smallskip", f"{{\\footnotesize\\raggedright {notes}\\par}}"]
    return "\n".join(lines) + "\n"


def _latex_part(table: _Table, part: _Part, environment: str, digits: int, label: str) -> list[str]:
    """One part of a table as a float, its notes left to the caller."""
    caption = table.caption if part.number == 1 else f"{table.caption} (continued)"
    suffix = "" if part.number == 1 else f"-{part.number}"
    placement = "ht" if environment == "table" else "tp"
    lines = [
        "",
        f"\\begin{{{environment}}}[{placement}]",
        "\\centering",
        "\\small",
        f"\\caption{{{_latex_text(caption)}}}",
        f"\\label{{tab:arcadebench-{label}{suffix}}}",
        "\\smallskip",  # article's caption above a table touches its top rule without it
        f"\\begin{{tabular}}{{l{'r' * len(part.columns)}}}",
        "\\toprule",
    ]
    if table.groups:
        _, widths = _widths(table, digits, part.stacked)
        spans, rules, at = [], [], 0
        for text, span in _part_groups(table, part.columns):
            header = _latex_lines(text, _group_chars(widths, part.columns[at : at + span]), "c")
            spans.append(f"\\multicolumn{{{span}}}{{c}}{{{header}}}")
            rules.append(f"\\cmidrule(lr){{{at + 2}-{at + span + 1}}}")
            at += span
        lines.append(" & ".join(["", *spans]) + " \\\\")
        lines.append("".join(rules))
    heads = [_latex_lines(table.head[0], _HEAD_CHARS, "l")]
    heads += [_latex_lines(table.head[i + 1], _HEAD_CHARS, "r") for i in part.columns]
    lines.append(" & ".join(heads) + " \\\\")
    lines.append("\\midrule")
    for k in part.rows:
        row_label, cells = table.rows[k]
        body = [_latex_text(row_label)]
        body += [_latex_cell(cells[i], digits, part.stacked) for i in part.columns]
        lines.append(" & ".join(body) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", f"\\end{{{environment}}}"]
    return lines


# -- Markdown --------------------------------------------------------------------------------------


def _markdown_text(text: str) -> str:
    r"""``text`` safe in a pipe table: ``|``, ``*``, ``_`` and backslashes escaped.

    Example:
        >>> print(_markdown_text("a|b *c*"))
        a\|b \*c\*
    """
    return re.sub(r"([\\|*_`<>\[\]])", r"\\\1", " ".join(str(text).split()))


def _markdown_cell(cell: _Cell, digits: int) -> str:
    if not _is_number(cell.value):
        return "\u2014" if cell.value is None else _markdown_text(str(cell.value))
    text, interval = _formatted(cell, digits, _markdown_number)
    text = f"**{text}**" if cell.bold else text
    return text if interval is None else f"{text} [{interval}]"


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
    references: Sequence[str] | str | None = None,
) -> str:
    """The tables of :func:`latex_tables` as Markdown pipe tables, each under its caption."""
    parts = []
    tables = _tables(results, digits, other_protocols, others, references)
    for number, table in enumerate(tables, start=1):
        head = table.markdown_head or table.head
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
