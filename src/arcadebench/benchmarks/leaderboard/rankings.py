"""The numbers of a board's site: each protocol's rows ranked by its headline aggregate.

A page ranks the accepted submissions of one protocol, and of one version of it (the spec hash
of its first accepted submission, as
:meth:`~arcadebench.benchmarks.leaderboard.board.Board.page_spec` says).
Rows scored on training episodes and rows that are evaluations (a protocol scored after
training, or a frozen policy's episodes) are ranked in separate tables: a score over a whole
training run and the score of a trained policy are not the same quantity.

The rows of a table are scored *together* from their per-run raw scores, with one
:func:`~arcadebench.benchmarks.scoring.results.score` call over ``{row: {game: [runs]}}``, so
every row is normalised and bootstrapped by the same code with the same settings, whatever
arcadebench version scored each submission's own results file. The point estimates (a first
call without intervals) give the order; a second call gives the intervals and P(X > Y) of each
row against the top one (Agarwal et al. 2021). A table's two calls score every row once each,
however many rows it has.

Published references are scored as the report scores them
(:func:`~arcadebench.benchmarks.report.references.reference_entries`: the spec's own default
references, on the games the rows played, without the statistics over runs where only
per-game means are published), and are never ranked with the verified rows.

Classes: Row, Ranking, ProtocolPage.
Functions: headline_aggregate, rank_board, short_hash.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from arcadebench.benchmarks.leaderboard.board import NAME, Board, Submission
from arcadebench.benchmarks.report.references import reference_entries
from arcadebench.benchmarks.report.report_data import Entry
from arcadebench.benchmarks.scoring.normalise import headline_metric
from arcadebench.benchmarks.scoring.results import Results, score
from arcadebench.errors import UnknownGame
from arcadebench.specs import Spec, list_specs, load_spec
from arcadebench.specs.model import short_hash as digits
from arcadebench.specs.names import subset_key
from arcadebench.specs.statistics import STATISTICS

__all__ = ["ProtocolPage", "Ranking", "Row", "headline_aggregate", "rank_board", "short_hash"]

Scored = Literal["training", "evaluation"]

SCORED: tuple[Scored, ...] = ("training", "evaluation")
"""The two kinds of row, in the order a page shows their tables."""


def headline_aggregate(spec: Spec, results: Results) -> tuple[str, ...]:
    """Where the protocol's headline number sits in an algorithm's ``aggregates``.

    Derived from the spec and what the results hold, in this order:

    1. the estimate of the subset named after the spec, when some algorithm has it (Atari-5:
       ``("atari5",)``, the paper's estimate of the 57-game median HNS, Aitchison et al. 2023,
       Section 3);
    2. the mean of the ``test`` split (Sonic: the benchmark score, Nichol et al. 2018,
       Section 3.9);
    3. the median of the capped ``saber`` score where the spec sorts games into SABER's
       performance classes (SABER's headline, Toromanoff et al. 2019, Section 3.2; HWR reports
       the SABER score too, but leads with the world-record-normalised score, so it falls to 4);
    4. the IQM of the spec's headline metric (Agarwal et al. 2021, Section 4).

    Example:
        >>> from arcadebench import score
        >>> from arcadebench.specs import load_spec
        >>> pong = {"me": {"pong": [1.0, 2.0]}}
        >>> headline_aggregate(load_spec("saber"), score("saber", pong, reps=0))
        ('saber', 'median')
        >>> headline_aggregate(load_spec("atari5"), score("atari5", pong, reps=0))
        ('hns', 'iqm')
    """
    blocks = [block.get("aggregates", {}) for block in results.algorithms.values()]
    own = subset_key(spec.name)
    for subset in spec.subsets.values():
        key = subset_key(subset.name)
        if key == own and any(key in aggregates for aggregates in blocks):
            return (key,)
    candidates = [("test", "mean")] + ([("saber", "median")] if spec.scoring.classes else [])
    for key, stat in candidates:
        if any(isinstance(a.get(key), Mapping) and stat in a[key] for a in blocks):
            return (key, stat)
    return (headline_metric(spec), "iqm")


@dataclass(frozen=True)
class Row:
    """One accepted submission in its table.

    Attributes:
        submission: its record.
        rank: its place by the headline (ties share one), ``None`` without a headline value.
        value: the headline's point estimate (``None`` where the row has none).
        interval: its bootstrap interval, where the row has several runs of a game.
        block: the row's block of the table's scoring (``{"games", "aggregates"...}``).
        improvement: P(X > Y) of this row (X) against the table's top row (Y), the results'
            comparison object; ``None`` for the top row and rows sharing no game with it.
    """

    submission: Submission
    rank: int | None
    value: float | None
    interval: tuple[float, float] | None
    block: Mapping[str, Any]
    improvement: Mapping[str, Any] | None = None

    @property
    def name(self) -> str:
        """The submission's name: the row's label and its check page's name."""
        return self.submission.name

    @property
    def games(self) -> int:
        """How many games the row has scores of."""
        return len(self.block.get("games", {}))

    @property
    def runs(self) -> tuple[int, int]:
        """The fewest and the most runs of any of its games."""
        counts = [len(cell.get("runs", ())) for cell in self.block.get("games", {}).values()]
        return (min(counts), max(counts)) if counts else (0, 0)


@dataclass(frozen=True)
class Ranking:
    """One table of a protocol's page: its rows of one kind, ranked.

    Attributes:
        scored: ``training`` or ``evaluation``: what the rows' scores are of.
        headline: the aggregate ranked by (:func:`headline_aggregate`).
        rows: in rank order, rows without a headline value last.
        results: the table's scoring, intervals and comparisons included.
    """

    scored: Literal["training", "evaluation"]
    headline: tuple[str, ...]
    rows: tuple[Row, ...]
    results: Results

    @property
    def top(self) -> Row:
        """The first row, which every other row is compared with."""
        return self.rows[0]


@dataclass(frozen=True)
class ProtocolPage:
    """Everything one protocol's page shows.

    Attributes:
        spec: the protocol (this installation's, by the page's name).
        record: the page's spec ``{"name", "version", "hash"}``: its first accepted
            submission's.
        metric: the per-game score the page shows beside the raw score and compares rows in.
        rankings: one table per kind of row present, training first.
        references: the spec's default published references, scored on the rows' games: shown
            apart, never ranked.
        notes: what the reader should know: rows left out and why, another installed version.
    """

    spec: Spec
    record: Mapping[str, Any]
    metric: str
    rankings: tuple[Ranking, ...]
    references: tuple[Entry, ...]
    notes: tuple[str, ...] = ()

    @property
    def rows(self) -> int:
        """How many rows the page ranks."""
        return sum(len(ranking.rows) for ranking in self.rankings)


def rank_board(
    board: Board, *, reps: int = 2000, ci: float = 0.95
) -> tuple[tuple[ProtocolPage, ...], tuple[str, ...]]:
    """Each protocol's page of ``board``, in the order of the protocols' names.

    Args:
        board: the board.
        reps: bootstrap repetitions of the intervals (``0``: none).
        ci: their confidence level.

    Returns:
        The pages, and why each submission of no page is not ranked (no spec recorded, a
        protocol this installation does not have). A submission that cannot be a row of its
        protocol's page (another spec hash than the page's, a results file without its runs)
        is left out with a note on that page.
    """
    by_spec: dict[str, list[Submission]] = {}
    orphans: list[str] = []
    for submission in board.accepted():
        name = submission.spec.get("name") if isinstance(submission.spec, Mapping) else None
        if not isinstance(name, str) or name not in list_specs():
            orphans.append(
                f"{submission.name} is not ranked: its protocol "
                f"{'is not recorded' if name is None else repr(name) + ' is not built in'}"
            )
            continue
        by_spec.setdefault(name, []).append(submission)
    pages = tuple(
        _page(load_spec(name), submissions, reps=reps, ci=ci)
        for name, submissions in sorted(by_spec.items())
    )
    return pages, tuple(orphans)


def _page(spec: Spec, submissions: list[Submission], *, reps: int, ci: float) -> ProtocolPage:
    """One protocol's page: its rows of the page's hash, ranked by kind, and its references."""
    record = dict(submissions[0].spec or {})
    notes: list[str] = []
    if record.get("hash") != spec.hash:
        notes.append(
            f"the rows were played under {spec.name} {short_hash(record.get('hash'))}, this "
            f"installation's {spec.name} is {spec.short_hash}: they are scored by its rules"
        )
    groups: dict[Scored, dict[str, tuple[Submission, dict[str, list[float]]]]] = {}
    seen: set[str] = set()
    for submission in submissions:
        why = _left_out(spec, record, submission)
        if submission.name in seen:
            why = "another submission has its name"
        seen.add(submission.name)
        runs = why or _runs(spec, submission)
        if isinstance(runs, str):
            notes.append(f"{submission.name} is not ranked: {runs}")
            continue
        scored: Scored = "evaluation" if submission.scored == "evaluation" else "training"
        groups.setdefault(scored, {})[submission.name] = (submission, runs)
    rankings = tuple(
        _ranking(spec, kind, groups[kind], reps=reps, ci=ci) for kind in SCORED if kind in groups
    )
    played = {game for r in rankings for row in r.rows for game in row.block.get("games", {})}
    references = tuple(reference_entries(spec, spec.default_references(), played)) if played else ()
    return ProtocolPage(
        spec, record, headline_metric(spec), rankings, references, tuple(dict.fromkeys(notes))
    )


def _left_out(spec: Spec, record: Mapping[str, Any], submission: Submission) -> str | None:
    """Why ``submission`` cannot be a row of ``spec``'s page, or ``None``."""
    theirs = submission.spec or {}
    if not NAME.fullmatch(submission.name):
        return "its name is not a submission name (lower-case letters, digits, '.', '_', '-')"
    if theirs.get("hash") != record.get("hash"):
        return (
            f"it was played under {spec.name} {short_hash(theirs.get('hash'))}, the page is "
            f"{short_hash(record.get('hash'))}: rows are only compared within one spec hash"
        )
    if submission.scored not in SCORED:
        return f"its record says its scores are of {submission.scored!r} episodes"
    return None


def _runs(spec: Spec, submission: Submission) -> dict[str, list[float]] | str:
    """The per-run raw scores of each game of the submission's verified results, or why not."""
    file = submission.results_file
    if file is None or not file.is_file():
        return "its run folder has no results.json"
    try:
        document = json.loads(Path(file).read_text(encoding="utf-8"))
        games = document["algorithms"][submission.algorithm]["games"]
    except (OSError, UnicodeDecodeError, ValueError, RecursionError, KeyError, TypeError):
        return f"its results.json has no games of {submission.algorithm!r}"
    runs: dict[str, list[float]] = {}
    for game, cell in games.items() if isinstance(games, Mapping) else ():
        values = cell.get("runs") if isinstance(cell, Mapping) else None
        scores = [_number(v) for v in values] if isinstance(values, list) else []
        if not scores or any(s is None for s in scores):
            return f"its results.json has no per-run scores of {game!r}"
        try:
            runs[spec.resolve_game(str(game))] = [s for s in scores if s is not None]
        except UnknownGame:
            return f"its results.json scores {game!r}, which is no game of {spec.name}"
    return runs or "its results.json scores no game"


def _number(value: Any) -> float | None:
    """A per-run score of a results file (``"inf"`` as written for infinite gameplay)."""
    if value in ("inf", "-inf"):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return None
    return float(value)


def _ranking(
    spec: Spec,
    scored: Scored,
    rows: Mapping[str, tuple[Submission, dict[str, list[float]]]],
    *,
    reps: int,
    ci: float,
) -> Ranking:
    """Rank one table's rows by the headline's point estimate, then score it with intervals."""
    inputs = {name: runs for name, (_, runs) in rows.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rows missing games: every page says which it has
        points = score(spec, inputs, reps=0, seed=0, ci=ci, compare=[])
        headline = headline_aggregate(spec, points)
        direction = STATISTICS[headline[-1]].direction if headline[-1] in STATISTICS else 1
        values = {name: _value(points.algorithms[name], headline)[0] for name in inputs}
        order = sorted(
            inputs, key=lambda n: (values[n] is None, -direction * (values[n] or 0.0))
        )  # stable: ties keep the board's order (when they were added)
        top = order[0]
        metric = headline_metric(spec)
        pairs = [(name, top) for name in order[1:] if _shares_game(points, name, top, metric)]
        results = score(spec, inputs, reps=reps, seed=0, ci=ci, compare=pairs)
    compared = {str(c["x"]): c for c in results.comparisons}
    ranked: list[Row] = []
    for place, name in enumerate(order, start=1):
        block = results.algorithms[name]
        value, interval = _value(block, headline)
        rank = None
        if value is not None:
            tied = ranked[-1] if ranked and ranked[-1].value == value else None
            rank = tied.rank if tied is not None else place
        ranked.append(Row(rows[name][0], rank, value, interval, block, compared.get(name)))
    return Ranking(scored, headline, tuple(ranked), results)


def _value(
    block: Mapping[str, Any], path: Sequence[str]
) -> tuple[float | None, tuple[float, float] | None]:
    """The aggregate at ``path`` of a block and its interval (``None`` where absent or NaN)."""
    value, interval = Entry("", block).aggregate(*path)
    if value is None or math.isnan(float(value)):
        return None, None
    return float(value), interval


def _shares_game(results: Results, x: str, y: str, metric: str) -> bool:
    """Whether ``x`` and ``y`` both have a ``metric`` score of some game (P(X > Y) needs one)."""
    games = [
        {g for g, cell in results.algorithms[name]["games"].items() if metric in cell}
        for name in (x, y)
    ]
    return bool(games[0] & games[1])


def short_hash(digest: Any) -> str:
    """A recorded spec hash as ``Spec.short_hash`` prints it (its first 12 hex digits).

    Example:
        >>> short_hash("sha256:0123456789abcdef"), short_hash(None)
        ('0123456789ab', '(no hash)')
    """
    return digits(digest, missing="(no hash)")
