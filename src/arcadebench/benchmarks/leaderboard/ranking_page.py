"""A protocol's page of a board's site: its rankings, their games, the references beside.

One table per kind of row (training episodes, evaluations), each ranked by the protocol's
headline aggregate with its interval and P(X > Y) against its top row
(:mod:`~arcadebench.benchmarks.leaderboard.rankings`); then each table's per-game scores; then
the spec's own published references, marked "published (not verified)" and never ranked.

Functions: protocol_page.
"""

from __future__ import annotations

from arcadebench._table import count
from arcadebench.benchmarks.leaderboard.board import BoardSettings
from arcadebench.benchmarks.leaderboard.rankings import ProtocolPage, Ranking, Row, short_hash
from arcadebench.benchmarks.leaderboard.site_html import (
    aggregate_label,
    as_mapping,
    badge,
    check_path,
    document,
    external,
    local,
    notes_section,
    report_path,
    text_of,
    units,
)
from arcadebench.benchmarks.report.markup import Markup, element
from arcadebench.benchmarks.report.page import number_cell, page_section, scroll_table
from arcadebench.benchmarks.scoring.tables import percent_metrics
from arcadebench.specs.names import display_name
from arcadebench.specs.statistics import STATISTICS

__all__ = ["protocol_page"]

_SCORED_TITLES = {
    "training": "Scored on training episodes",
    "evaluation": "Evaluations: scored after training, or a frozen policy's episodes",
}
_SCORED_TEXT = {
    "training": "Each row's score is of the episodes of its training run, as the protocol "
    "scores them.",
    "evaluation": "Each row's score is of evaluation episodes: the episodes the protocol plays "
    "after training, or a policy that no longer learns. Not comparable with scores of training "
    "episodes, so ranked apart.",
}


def protocol_page(settings: BoardSettings, page: ProtocolPage, reports: frozenset[str]) -> str:
    """A protocol's page: a ranking per kind of row, the per-game tables, the references.

    ``reports``: the submissions whose full report is in the site.
    """
    spec = page.spec
    blocks = [row.block for r in page.rankings for row in r.rows]
    percent = percent_metrics([*blocks, *(e.block for e in page.references)])
    return document(
        f"{spec.name} \u2014 {settings.title}",
        spec.title,
        0,
        [_ranking(page, ranking, percent, reports) for ranking in page.rankings],
        [_games(page, ranking, percent) for ranking in page.rankings],
        _references(page, percent),
        notes_section(page.notes),
        sub=[
            f"{settings.title} \u00b7 spec {spec.name} v{page.record.get('version')} "
            f"({short_hash(page.record.get('hash'))}) \u00b7 {count(page.rows, 'row')} \u00b7 ",
            local("a", f"data/{spec.name}.json", 0, "the data as JSON"),
        ],
    )


def _ranking(
    page: ProtocolPage, ranking: Ranking, percent: frozenset[str], reports: frozenset[str]
) -> Markup:
    metric = page.metric.upper()
    top = ranking.top
    level = f"{float(ranking.results.settings.get('ci', 0.95)) * 100:g} %"
    reps = int(ranking.results.settings.get("reps", 0))
    text = element(
        "p",
        _SCORED_TEXT[ranking.scored],
        f" Ranked by {aggregate_label(ranking.headline)}; the rows are scored together from their "
        f"per-run raw scores ({level} stratified bootstrap CIs, {reps:,} repetitions, seed 0, "
        "where a game has several runs). P(X > top): the probability that a run of the row "
        f"scores above a run of {top.name} on a game, in {metric}, averaged over the games "
        "both have (Agarwal et al. 2021).",
        class_="sub",
    )
    head = [
        "rank",
        "submission",
        "badge",
        f"{aggregate_label(ranking.headline)} [CI]",
        f"P(X > {top.name}) [CI]",
        "games",
        "runs",
        "added",
        "submitter",
        "paper",
        "code",
    ]
    rows = [_row(row, ranking, percent, reports) for row in ranking.rows]
    return page_section(
        f"ranking-{ranking.scored}",
        _SCORED_TITLES[ranking.scored],
        text,
        scroll_table(head, rows),
    )


def _row(row: Row, ranking: Ranking, percent: frozenset[str], reports: frozenset[str]) -> Markup:
    meta = as_mapping(row.submission.meta)
    improvement = row.improvement
    if row is ranking.top:
        better = number_cell(None, title="the top row")
    elif improvement is None:
        better = number_cell(None, title="no game in common with the top row")
    else:
        interval = improvement.get("ci")
        better = number_cell(
            f"{float(improvement['probability']):.2f}",
            [f"{interval[0]:.2f}", f"{interval[1]:.2f}"] if interval else None,
        )
    low, high = row.runs
    report = local("a", report_path(row.name), 0, "full report") if row.name in reports else None
    return element(
        "tr",
        number_cell(row.rank, title=None if row.rank else "no value of the headline"),
        element(
            "td",
            local("a", check_path(row.name), 0, row.name),
            element("small", text_of(meta.get("name"))) if meta.get("name") else None,
            element("small", report) if report else None,
        ),
        element("td", badge(row.submission)),
        number_cell(*units(percent, ranking.headline, row.value, row.interval)),
        better,
        number_cell(row.games),
        number_cell(f"{low}" if low == high else f"{low}\u2013{high}"),
        element("td", row.submission.added),
        element(
            "td",
            text_of(meta.get("authors")),
            element("small", f"dated {text_of(meta.get('date'))}") if meta.get("date") else None,
        ),
        element("td", external("paper", meta.get("paper")) if meta.get("paper") else ""),
        element("td", external("code", meta.get("code")) if meta.get("code") else ""),
        data_row=row.name,
    )


def _games(page: ProtocolPage, ranking: Ranking, percent: frozenset[str]) -> Markup:
    """Each game's raw score and headline metric of every row of one table."""
    metrics = ["raw"] if page.metric == "raw" else ["raw", page.metric]
    games = sorted(
        {game for row in ranking.rows for game in row.block.get("games", {})},
        key=lambda game: display_name(game).lower(),
    )
    sub = element(
        "tr", [element("th", m if m == "raw" else m.upper()) for _ in ranking.rows for m in metrics]
    )
    body = []
    for game in games:
        cells = [
            number_cell(None, title="not played")
            if (cell := row.block.get("games", {}).get(game)) is None
            else number_cell(
                *units(percent, (metric,), cell.get(metric), cell.get("ci", {}).get(metric))
            )
            for row in ranking.rows
            for metric in metrics
        ]
        body.append(element("tr", element("th", display_name(game)), cells, data_game=game))
    head = [element("th", "game", rowspan=2)]
    head += [element("th", row.name, colspan=len(metrics)) for row in ranking.rows]
    return page_section(
        f"games-{ranking.scored}",
        f"Per game: {_SCORED_TITLES[ranking.scored].split(':')[0].lower()}",
        element("p", "Mean over runs, with its CI where a game has several runs.", class_="sub"),
        scroll_table(head, body, sub),
    )


def _references(page: ProtocolPage, percent: frozenset[str]) -> Markup | None:
    """The spec's own published references: beside the rankings, never in them."""
    if not page.references:
        return None
    stats = page.spec.scoring.aggregates
    paths = list(
        dict.fromkeys([*(r.headline for r in page.rankings), *((page.metric, s) for s in stats)])
    )
    over_runs = {key for key, statistic in STATISTICS.items() if statistic.over == "runs"}
    rows = []
    for entry in page.references:
        cells = []
        for path in paths:
            value, interval = entry.aggregate(*path)
            title = None
            if value is None and path[-1] in over_runs and entry.per_game:
                title = "needs per-run scores: the reference publishes per-game means"
            cells.append(number_cell(*units(percent, path, value, interval), title=title))
        rows.append(
            element(
                "tr",
                element("td", entry.name, class_="ref"),
                element("td", "published (not verified)", class_="unverified"),
                cells,
                number_cell(len(entry.games) if entry.per_game else None, title="aggregates only"),
                element("td", entry.source),
                data_reference=entry.name,
            )
        )
    text = element(
        "p",
        f"The {page.spec.name} spec's own published results (the references arcadebench report "
        "shows by default), as printed, or scored on the games of the rows above where they "
        "give per-game scores; a statistic over runs (IQM, optimality gap) only where they "
        "publish each run. Not verified by this board and never ranked with its rows.",
        class_="sub",
    )
    head = ["reference", "status", *(aggregate_label(p) for p in paths), "games", "source"]
    return page_section(
        "references", "Published references (not verified)", text, scroll_table(head, rows)
    )
