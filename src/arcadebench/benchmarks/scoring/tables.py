"""The plain-text tables of :class:`~arcadebench.benchmarks.scoring.results.Results` (``.table()``).

What ``arcadebench score`` and ``arcadebench run`` print: the aggregates first (one column per
algorithm, with its interval when there are several runs), the probability of improvement of
each compared pair, then the aggregates at each training frame checkpoint of the episode-log
protocols (SABER/HWR), the sample-efficiency curves (``--curve``) beside the published curves of
the spec, the per-game detail, and the spec's published reference results next to ours.

Functions: results_table, aggregate_paths, dig, in_units, percent_metrics.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Protocol

from arcadebench._table import Percent, format_cell, render_table
from arcadebench.benchmarks.scoring.normalise import headline_metric
from arcadebench.benchmarks.scoring.sample_efficiency import ReferenceCurve, curve_paths
from arcadebench.specs import Spec
from arcadebench.specs.model import Published, PublishedScores, short_hash
from arcadebench.specs.statistics import STATISTICS

__all__ = [
    "ScoredResults",
    "aggregate_paths",
    "dig",
    "in_units",
    "percent_metrics",
    "results_table",
]

_PER_GAME_FIELDS = ("raw", "runs", "ci", "episodes", "frames", "class")
_NOT_SHOWN = ("runs", "ci", "episodes", "frames")  # rows of no per-game metric (runs: a count)
# the single-number aggregates that are no subset estimate: counts, frames, days
_NOT_PERCENT = frozenset({"hwrb", "breakthroughs", "frames", "game_time_days"})


class ScoredResults(Protocol):
    """What the tables read of a :class:`~arcadebench.benchmarks.scoring.results.Results`."""

    @property
    def spec(self) -> Mapping[str, Any]:
        """``{"name", "version", "hash"}`` of the spec."""

    @property
    def settings(self) -> Mapping[str, Any]:
        """``{"ci", "reps", "seed"}`` of the bootstrap."""

    @property
    def algorithms(self) -> Mapping[str, Mapping[str, Any]]:
        """Games, aggregates and checkpoints, per algorithm."""

    @property
    def published(self) -> tuple[Published, ...]:
        """The aggregate tables the spec's papers printed."""

    @property
    def comparisons(self) -> tuple[Mapping[str, Any], ...]:
        """P(X > Y) of pairs of algorithms."""

    @property
    def protocol(self) -> Spec | None:
        """The loaded spec, when this installation has it."""

    def reference_blocks(
        self, names: Collection[str] | None = None, *, intervals: bool = False
    ) -> list[tuple[PublishedScores, Mapping[str, Any]]]:
        """The named published per-game results, scored on our games: their blocks.

        One of per-game means only has no statistic over all runs (IQM, optimality gap).
        """

    def reference_curves(self) -> list[ReferenceCurve]:
        """The spec's published curves, scored on our games."""


def results_table(
    results: ScoredResults,
    digits: int = 2,
    references: Collection[str] | None = None,
    *,
    metrics: Collection[str] | None = None,
) -> str:
    """Plain-text tables: aggregates first, then per game; one column per algorithm.

    Args:
        results: the results.
        digits: decimals of the numbers.
        references: the published references to show beside ours, by their names in the spec
            (:meth:`~arcadebench.specs.model.Spec.reference_names`); ``None``: every one, each
            with the protocol it was obtained under.
        metrics: only the aggregates and per-game scores of these metrics (``{"hns"}``),
            beside the raw scores and the single-number aggregates (a subset's estimate, a
            count, frames, the missing games); ``None``: every one. The published results
            keep their columns.
    """
    names = list(results.algorithms)
    percent = percent_metrics(results.algorithms.values())
    with_ci = [n for n in names if "ci" in results.algorithms[n]["aggregates"]]
    level = f"{100 * float(results.settings.get('ci', 0.95)):g}%"
    head = f"{results.spec['name']} v{results.spec['version']} ({short_hash(results.spec['hash'])})"
    columns = ["metric", ""]
    for n in names:
        columns.append(n)
        if n in with_ci:
            columns.append(f"{n} {level} CI")
    blocks = [(results.algorithms[n], n in with_ci) for n in names]
    agg_rows = _aggregate_rows(blocks, percent, digits, metrics)
    parts = [render_table(columns, agg_rows, title=f"{head} - aggregates", digits=digits)]
    notes = [
        f"{name}: {note}" for name in names for note in results.algorithms[name].get("notes", ())
    ]
    notes += _interval_notes(results, names, with_ci, level)
    if notes:  # non-compliance and unreached checkpoints travel with the numbers
        parts.append("\n".join(["notes", *(f"- {note}" for note in notes)]))
    if results.comparisons:
        parts.append(_improvement_table(results, level, digits))
    checkpoint_table = _checkpoint_table(results, names, percent, digits, metrics)
    if checkpoint_table:
        parts.append(checkpoint_table)
    parts.extend(_curve_tables(results, names, percent, level, digits))
    parts.append(_game_table(results, names, percent, digits, metrics))
    parts.extend(_published_tables(results, names, percent, digits, references))
    return "\n\n".join(parts)


def _shown(path: Sequence[str], metrics: Collection[str] | None) -> bool:
    """Whether the aggregate at ``path`` is of one of ``metrics`` or a single number.

    Example:
        >>> [_shown(p, {"hns"}) for p in [("hns", "iqm"), ("chns", "iqm"), ("atari5",)]]
        [True, False, True]
    """
    return metrics is None or len(path) == 1 or path[0] in metrics


def _aggregate_rows(
    blocks: Sequence[tuple[Mapping[str, Any], bool]],
    percent: Collection[str],
    digits: int,
    metrics: Collection[str] | None,
) -> list[list[Any]]:
    """A row per aggregate shown: each block's value, and its interval where ``True``."""
    rows = []
    for path in aggregate_paths(block["aggregates"] for block, _ in blocks):
        if _shown(path, metrics):
            row: list[Any] = list(_row_label(path))
            for block, with_ci in blocks:
                value, interval = _row_cells(block["aggregates"], path)
                row.append(in_units(path, value, percent))
                if with_ci:
                    row.append(_interval_text(path, interval, percent, digits))
            rows.append(row)
    return rows


def _interval_notes(
    results: ScoredResults, names: Sequence[str], with_ci: Collection[str], level: str
) -> list[str]:
    """Why intervals are missing where they were asked for (``reps > 0``): one line.

    The bootstrap resamples runs within each game (rliable's stratified bootstrap), so one run
    per game leaves nothing to resample: :func:`~arcadebench.benchmarks.scoring.results.score`
    gives intervals only to an algorithm with a game of at least two runs.
    """
    if not int(results.settings.get("reps") or 0):
        return []  # none asked for
    without = [n for n in names if n not in with_ci]
    if not without:
        return []
    why = (
        f"no {level} confidence intervals: the bootstrap resamples runs, and every game has one "
        "run (intervals need at least two runs of a game)"
    )
    if len(without) == len(names):
        return [why]
    return [f"{name}: {why}" for name in without]


def _run_label(name: str, block: Mapping[str, Any]) -> str:
    """How the published-results tables name our column: a run's, or a score table's.

    Scores read from episode logs say how many episodes each averages (``episodes``); a score
    table (a CSV or JSON of scores, a mapping, a results file re-scored) gives scores only, and
    is not "this run".

    Example:
        >>> _run_label("random", {"games": {"pong": {"raw": -20.0, "episodes": 1}}})
        'random (this run)'
        >>> _run_label("rainbow", {"games": {"pong": {"raw": 20.0}}})
        'rainbow (score table)'
    """
    logged = any("episodes" in cell for cell in block.get("games", {}).values())
    return f"{name} ({'this run' if logged else 'score table'})"


def _improvement_table(results: ScoredResults, level: str, digits: int) -> str:
    """P(X > Y) of every compared pair (Agarwal et al. 2021), with its interval."""
    rows = [
        [
            f"{c['x']} > {c['y']}",
            float(c["probability"]),
            "[" + ", ".join(f"{v:.{max(digits, 2)}f}" for v in c["ci"]) + "]"
            if c.get("ci")
            else "-",
            len(c.get("games", {})),
        ]
        for c in results.comparisons
    ]
    metric = results.comparisons[0].get("metric", "")
    return render_table(
        ["", "P(X > Y)", f"{level} CI", "games"],
        rows,
        title=f"probability of improvement (per-run {metric} scores, each game's Mann-Whitney "
        "U over the pairs of runs, averaged over shared games)",
        digits=max(digits, 2),
    )


def _curve_tables(
    results: ScoredResults,
    names: list[str],
    percent: Collection[str],
    level: str,
    digits: int,
) -> list[str]:
    """One table per aggregate a curve shows first: its value at every point, per algorithm.

    Beside ours, the spec's published curves (scored on our games), labelled with the
    protocol they were obtained under.
    """
    curved = [n for n in names if results.algorithms[n].get("curve")]
    if not curved:
        return []
    spec = results.protocol
    paths: list[tuple[str, ...]]
    if spec is not None:
        paths = curve_paths(spec, headline_metric(spec))
    else:
        first = next(iter(results.algorithms[curved[0]]["curve"].values()))["aggregates"]
        paths = [p for p in aggregate_paths([first]) if p[-1] == "iqm"][:1]
    paths = [  # an Atari-5 estimate needs the five games: not every curve has one
        p
        for p in paths
        if any(
            dig(block["aggregates"], p) is not None
            for n in curved
            for block in results.algorithms[n]["curve"].values()
        )
    ]
    references = results.reference_curves()
    tables = []
    for path in paths:
        frames = sorted(
            {int(f) for n in curved for f in results.algorithms[n]["curve"]}
            | {f for curve in references for f in curve.points}
        )
        columns = ["frames", *(c for n in curved for c in (n, f"{n} {level} CI"))]
        columns += [
            f"{c.name} ({'another protocol' if c.protocol else 'published'})" for c in references
        ]
        rows = []
        for f in frames:
            row: list[Any] = [_frames_label(str(f))]
            for n in curved:
                block = results.algorithms[n]["curve"].get(str(f))
                value, interval = _row_cells(block["aggregates"], path) if block else (None, None)
                row += [
                    in_units(path, value, percent),
                    _interval_text(path, interval, percent, digits),
                ]
            for curve in references:
                at = curve.points.get(f)
                row.append(in_units(path, dig(at, path), percent) if at else None)
            rows.append(row)
        label = " ".join(_row_label(path)).strip()
        tables.append(
            render_table(
                columns,
                rows,
                title=f"sample-efficiency curve: {label} by training frames",
                digits=digits,
            )
        )
    return tables


def _game_table(
    results: ScoredResults,
    names: list[str],
    percent: Collection[str],
    digits: int,
    shown: Collection[str] | None = None,
) -> str:
    games = list(dict.fromkeys(g for n in names for g in results.algorithms[n]["games"]))
    found = (m for n in names for cell in results.algorithms[n]["games"].values() for m in cell)
    shown_here = (m for m in found if m not in _NOT_SHOWN and (shown is None or m in shown))
    metrics = [*dict.fromkeys(["raw", *shown_here]), "runs"]
    rows = []
    for game in games:
        first = True
        for metric in metrics:
            cells = [results.algorithms[n]["games"].get(game, {}).get(metric) for n in names]
            if metric == "runs":
                cells = [len(c) if isinstance(c, list) else None for c in cells]
                if all(c is None or c == 1 for c in cells):
                    continue
            if all(c is None for c in cells):
                continue
            cells = [in_units((metric,), c, percent) for c in cells]
            rows.append([game if first else "", metric, *cells])
            first = False
    return render_table(["game", "metric", *names], rows, title="per game", digits=digits)


def _checkpoint_table(
    results: ScoredResults,
    names: list[str],
    percent: Collection[str],
    digits: int,
    metrics: Collection[str] | None = None,
) -> str | None:
    columns, blocks = [], []
    for n in names:
        checkpoints = results.algorithms[n].get("checkpoints", {})
        for label, block in checkpoints.items():
            columns.append(f"{n} @{_frames_label(label)}")
            blocks.append(block)
        if checkpoints:
            columns.append(f"{n} @end")
            blocks.append(results.algorithms[n])
    if not blocks:
        return None
    rows = _aggregate_rows([(block, False) for block in blocks], percent, digits, metrics)
    return render_table(
        ["metric", "", *columns], rows, title="aggregates by training frames", digits=digits
    )


def _published_tables(
    results: ScoredResults,
    names: list[str],
    percent: Collection[str],
    digits: int,
    references: Collection[str] | None = None,
) -> list[str]:
    """Ours beside each table of printed aggregates, then the per-game references scored here.

    A printed aggregate is over the paper's games, ours over the games played: the title names
    both counts (``median over 5 games (ours) / 57 games (published)``), so a median of five
    games is never read as one of 57. A frozen policy's evaluation under a protocol scored on
    training episodes is no number of the protocol's: it is left out of these tables, which say
    so (its own notes say how to get the protocol's number).
    """
    frozen = [n for n in names if results.algorithms[n].get("frozen_policy")]
    names = [n for n in names if n not in frozen]
    apart = (
        f"\n(not here: {', '.join(frozen)}, a frozen policy's evaluation, not the training "
        "episodes the protocol scores)"
        if frozen
        else ""
    )
    tables = []
    for published in results.published:
        printed = {
            name: values
            for name, values in published.rows.items()
            if references is None or f"{name} ({published.source})" in references
        }
        if not printed:
            continue
        lines = [
            (_run_label(n, block), [dig(block["aggregates"], p or ()) for p in published.paths])
            for n in names
            for block in [results.algorithms[n]]
        ]
        rows = [
            [label, *(_cell(p, v, percent) for p, v in zip(published.paths, values, strict=True))]
            for label, values in [*lines, *printed.items()]
        ]
        title = f"published results ({published.source})"
        over = _over_games(results, names, published)
        if over:
            title += f": {over}"
        if published.protocol:
            title += f"\nobtained under another protocol: {published.protocol}"
        title += apart
        tables.append(render_table(["", *published.columns], rows, title=title, digits=digits))
    shown = [(ref, block["aggregates"]) for ref, block in results.reference_blocks(references)]
    if shown:
        paths = _headline_paths(results, shown)
        rows = [
            [_run_label(n, block), *(_cell(p, dig(block["aggregates"], p), percent) for p in paths)]
            + [len(block["games"]), None, ""]
            for n in names
            for block in [results.algorithms[n]]
        ]
        for reference, aggregates in shown:
            cells = [_cell(p, dig(aggregates, p), percent) for p in paths]
            shared = dig(aggregates, (*paths[0][:1], "n_games")) if paths else None
            obtained = "another protocol" if reference.protocol else "this one"
            means = f"means of {reference.runs}" if reference.runs else "means"
            runs = reference.runs if reference.per_run else means
            rows.append([reference.name, *cells, shared, runs, obtained])
        spec = results.spec["name"]
        over_runs = [s.name for s in STATISTICS.values() if s.over == "runs"]
        note = (
            f"\n(runs: per-game means only, without the {' and '.join(over_runs)}, which are over "
            "all runs)"
            if any(not reference.per_run for reference, _ in shown)
            else ""
        )
        tables.append(
            render_table(
                ["", *(".".join(p) for p in paths), "games", "runs", "obtained under"],
                rows,
                title="published per-game results, scored here on the games they share with "
                f"ours (sources: arcadebench show {spec}){note}{apart}",
                digits=digits,
            )
        )
    return tables


def _over_games(results: ScoredResults, names: Sequence[str], published: Published) -> str:
    """What games a printed table's statistics are over, ours and the paper's.

    Example: ``median over 5 games (ours) / 57 games (published)``; ``""`` where no column is a
    statistic over games (a subset estimate predicts the median, over five games or ten).
    """
    over = [
        (column, path)
        for column, path in zip(published.columns, published.paths, strict=True)
        if path is not None and (len(path) == 2 or path[0] in ("hwrb", "breakthroughs"))
    ]
    if not over:
        return ""
    metric = next((path[0] for _, path in over if len(path) == 2), None)
    columns = " and ".join(column for column, _ in over)
    theirs = _games(published.games) if published.games is not None else "the paper's games"
    counts = []
    for n in names:
        block = results.algorithms[n]
        count = dig(block["aggregates"], (metric, "n_games")) if metric else None
        counts.append((n, count if isinstance(count, int) else len(block["games"])))
    if not counts:  # only the paper's numbers are shown
        return f"{columns} over {theirs} (published)"
    if len({c for _, c in counts}) == 1:
        ours = _games(counts[0][1])
    else:
        ours = ", ".join(f"{_games(c)} ({n})" for n, c in counts)
    return f"{columns} over {ours} (ours) / {theirs} (published)"


def _games(count: int) -> str:
    return f"{count} game{'s' if count != 1 else ''}"


def _cell(path: Sequence[str] | None, value: Any, percent: Collection[str]) -> Any:
    return in_units(path, value, percent) if path else value


def _headline_paths(
    results: ScoredResults, references: list[tuple[PublishedScores, Mapping[str, Any]]]
) -> list[tuple[str, ...]]:
    """The columns of the per-game references: the first printed table's, or every statistic."""
    for published in results.published:
        paths = [p for p in published.paths if p is not None and len(p) > 1]
        if paths:
            return paths
    aggregates = references[0][1]
    metric = next(
        (k for k, v in aggregates.items() if isinstance(v, Mapping) and k not in ("ci", "classes")),
        "raw",
    )
    return [(metric, stat) for stat in aggregates.get(metric, {}) if stat != "n_games"]


def _frames_label(label: str) -> str:
    frames = int(label)
    for unit, size in (("B", 10**9), ("M", 10**6), ("k", 10**3)):
        if frames >= size and frames % (size // 10) == 0:
            return f"{frames / size:g}{unit}"
    return str(frames)


def _interval_text(
    path: tuple[str, ...], interval: Any, percent: Collection[str], digits: int
) -> str:
    if not interval:
        return "-"
    return "[" + ", ".join(format_cell(in_units(path, v, percent), digits) for v in interval) + "]"


def percent_metrics(blocks: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """What algorithm blocks hold in percent: normalised metrics and subset estimates.

    The per-game normalised metrics (``hns``, ``saber``...) and every subset's estimate of the
    median normalised score (``atari5``, a custom suite's ``mysuite3``: the only single-number
    aggregates besides counts, frames and days).

    Example:
        >>> block = {"games": {"place": {"raw": 300.0, "hns": 30.7, "runs": [300.0]}},
        ...          "aggregates": {"hns": {"mean": 30.7}, "mysuite3": 29.2, "missing": []}}
        >>> sorted(percent_metrics([block]))
        ['hns', 'mysuite3']
    """
    found: set[str] = set()
    for block in blocks:
        for cell in block.get("games", {}).values():
            found.update(key for key in cell if key not in _PER_GAME_FIELDS)
        found.update(
            key
            for key, value in block.get("aggregates", {}).items()
            if key not in _NOT_PERCENT
            and isinstance(value, int | float)
            and not isinstance(value, bool)
        )
    return frozenset(found)


def in_units(path: Sequence[str], value: Any, percent: Collection[str]) -> Any:
    """``value`` as a :class:`~arcadebench._table.Percent` where its row is a percentage.

    Normalised scores and their statistics are percentages (Eq. 2 of Atari-5, SABER's Eq. 1), as
    are the subsets' estimates of the median normalised score (Atari-5 Section 3, any suite's
    alike); counts, frames, days and the learning efficiency (a fraction per frame, HWR Eq. 7)
    are not. ``percent`` names the percentages (:func:`percent_metrics`).

    Example:
        >>> in_units(("hns", "median"), 12.5, {"hns"}), in_units(("hns", "n_games"), 5, {"hns"})
        (12.5, 5)
        >>> type(in_units(("atari5",), 7.5, {"hns", "atari5"})).__name__
        'Percent'
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or isinstance(value, Percent):
        return value
    key = path[0]
    if key == "frames" and float(value).is_integer():
        return int(value)
    if key in percent and path[-1] != "n_games":
        return Percent(value)
    return value


def aggregate_paths(blocks: Iterable[Mapping[str, Any]]) -> list[tuple[str, ...]]:
    """Where each aggregate any block has sits in its ``aggregates``, in first-seen order.

    ``("hns", "median")`` for a statistic of a metric, ``("atari5",)`` for a single number,
    ``("classes", label)``, ``("learning_efficiency", metric, stat)``, and ``("missing",)``
    last when any block misses games; the intervals (``ci``) are not rows of their own.
    The text tables here and the HTML report list the same rows.
    """
    every = list(blocks)
    paths: dict[tuple[str, ...], None] = {}
    for aggregates in every:
        for key, value in aggregates.items():
            if key in ("ci", "missing"):
                continue
            if key == "learning_efficiency" and isinstance(value, Mapping):
                for metric, stats in value.items():
                    for stat in stats if isinstance(stats, Mapping) else ():
                        paths.setdefault((key, metric, stat))
            elif isinstance(value, Mapping):
                for stat in value:
                    paths.setdefault((key, stat))
            else:
                paths.setdefault((key,))
    if any(aggregates.get("missing") is not None for aggregates in every):
        paths.setdefault(("missing",))
    return list(paths)


def dig(mapping: Any, path: Sequence[str]) -> Any:
    """``mapping[path[0]][path[1]]...``, ``None`` where a level is missing or not a mapping."""
    for key in path:
        if not isinstance(mapping, Mapping):
            return None
        mapping = mapping.get(key)
    return mapping


def _row_label(path: tuple[str, ...]) -> tuple[str, str]:
    """The metric and statistic columns of an aggregate row."""
    if path[0] == "learning_efficiency":
        return f"{path[1]} per frame (fraction)", path[2]
    if path == ("missing",):
        return "missing games", ""
    if path == ("game_time_days",):
        return "game time (days)", ""
    return path[0], path[1] if len(path) > 1 else ""


def _row_cells(aggregates: Mapping[str, Any], path: tuple[str, ...]) -> tuple[Any, Any]:
    """``(value, interval)`` of one aggregate row (``None`` where absent)."""
    value = dig(aggregates, path)
    if path == ("missing",):
        return len(value or []), None
    if path[0] in ("learning_efficiency", "classes"):
        return value, None
    interval = dig(aggregates, ("ci", *path))
    return value, interval if isinstance(interval, list) else None
