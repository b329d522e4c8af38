"""The self-contained ``report.html``: protocol card, tables and the figures inlined.

One file to mail or archive: no network access (the Content-Security-Policy allows nothing but
inlined images and the inline style sheet, and there is no script), figures as base64 PNGs.
Every piece of text goes through :func:`~arcadebench.benchmarks.report.markup.element`, so
whatever the inputs contain is shown as text.

Sections: the protocol card (:func:`arcadebench.specs.card.protocol_card`, the data behind
``arcadebench show``), the entries and their sources, the aggregates with intervals, the Atari-X
estimates with the paper's expected error (Atari-5 Table 2), the probability of improvement of
every pair of results (Agarwal et al. 2021), the spec's published results, the
aggregates at each training checkpoint, every game, the figures, notes and provenance.

Results of another protocol never share a table or figure with the report's: each such protocol
gets a section "Results under <spec> (a different protocol)" of its own, headed by a banner
listing the differences :func:`arcadebench.specs.diff` finds that change scores. References
obtained under another protocol are labelled in every table they appear in.

The style sheet and the cells, tables and sections are public for the leaderboard's site
(``arcadebench.benchmarks.leaderboard.site``), which looks like the report.

Functions: render_page, html_page, number_cell, scroll_table, page_section. Data: CSS.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arcadebench._table import count, format_cell
from arcadebench._version import __version__
from arcadebench.benchmarks.report.episodes import EpisodeClip
from arcadebench.benchmarks.report.markup import Markup, element, safe_url
from arcadebench.benchmarks.report.report_data import (
    Entry,
    OtherProtocol,
    ReportData,
    expected_range,
    stat_label,
)
from arcadebench.benchmarks.scoring.results import subset_key
from arcadebench.benchmarks.scoring.tables import aggregate_paths, dig, in_units
from arcadebench.specs.card import protocol_card
from arcadebench.specs.diff import Row

__all__ = [
    "CSS",
    "FigureFile",
    "html_page",
    "number_cell",
    "page_section",
    "render_page",
    "scroll_table",
]

_CSP = (
    "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'"
)
CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1b1b;
max-width:1280px;margin:0 auto;padding:0 1.2em 3em}
h1{font-size:1.6em;margin:1em 0 .2em}h2{margin-top:2em;border-bottom:2px solid #0072B2;
padding-bottom:.15em}h3{margin:1.2em 0 .3em;font-size:1.05em}
.sub{color:#555;margin:0 0 1em}nav a{margin-right:1em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.9em}
th,td{padding:.25em .6em;border-bottom:1px solid #ddd;vertical-align:top;text-align:left}
thead th{background:#f2f5f8;position:sticky;top:0}
tbody tr:nth-child(even){background:#fafafa}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
small{display:block;color:#555;font-size:.82em}
.missing{color:#999}.ref{font-style:italic}.card th{width:14em;color:#333}
figure{margin:1.5em 0}figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{color:#444;font-size:.9em;max-width:60em}
.notes li{color:#7a4b00}code,pre{font-size:.88em;background:#f4f4f4}
.banner{background:#fde8e8;border:2px solid #b00020;color:#7a0014;padding:.6em 1em;
margin:1em 0}.banner ul{margin:.3em 0 0}
.protocols{background:#fff6e0;border:2px solid #b06000;color:#5a3500;padding:.6em 1em;
margin:1em 0}.protocols ul{margin:.3em 0 0}
section.other{border-left:6px solid #b06000;padding-left:1em}
pre{padding:.6em;white-space:pre-wrap;word-break:break-all}
.clips{display:flex;flex-wrap:wrap;gap:1.5em}.clips figure{margin:.3em 0}
.clips img{width:320px;image-rendering:pixelated}.clips figcaption{max-width:320px}
"""
"""The report's style sheet, inlined in its ``<style>``; other pages of the project (the
leaderboard's site) use it too, so that they look like the report."""
_SCALAR_LABELS = {
    "hwrb": "HWRB: games with HWRNS \u2265 100 %",
    "breakthroughs": "breakthroughs",
    "frames": "mean training frames",
    "game_time_days": "game time (days)",
}
_STAT_NAMES = {"n_games": "games"}


@dataclass(frozen=True)
class FigureFile:
    """A figure written next to the report: its file, title and caption."""

    name: str
    path: Path
    title: str
    caption: str


def number_cell(
    value: Any, interval: Any = None, note: str | None = None, title: str | None = None
) -> Markup:
    """A right-aligned ``<td>`` of a number, its ``[low, high]`` interval and a note below it.

    ``None`` is a grey dash titled ``title`` (or "not available"); numbers are formatted as the
    text tables format them (``format_cell``, percentages with ``%``).
    """
    if value is None:
        return element("td", "\u2014", class_="num missing", title=title or "not available")
    lines: list[Markup | str] = [format_cell(value)]
    if interval is not None:
        lines.append(element("small", f"[{format_cell(interval[0])}, {format_cell(interval[1])}]"))
    if note:
        lines.append(element("small", note))
    return element("td", lines, class_="num", title=title)


def _in_units(
    data: ReportData, path: Sequence[str], value: Any, interval: Any = None
) -> tuple[Any, Any]:
    """A value and its interval as the tables show them (normalised scores in percent)."""
    percent = {n.name for n in data.spec.scoring.normalised} | {
        subset_key(s.name) for s in data.spec.subsets.values()
    }
    if interval is not None:
        interval = [in_units(path, bound, percent) for bound in interval]
    return in_units(path, value, percent), interval


def scroll_table(
    head: Sequence[Markup | str], rows: Sequence[Markup], head2: Markup | None = None
) -> Markup:
    """A table in a horizontally scrolling ``div``, as every table of the report is.

    ``head``: the header cells (``<th>`` markup, or text made a ``<th>``); ``head2``: a second
    header row; ``rows``: the body's ``<tr>`` rows.
    """
    header = [element("tr", [h if isinstance(h, Markup) else element("th", h) for h in head])]
    if head2 is not None:
        header.append(head2)
    return element(
        "div", element("table", element("thead", header), element("tbody", rows)), class_="scroll"
    )


def _sub(*text: object) -> Markup:
    """A paragraph of explanation, in grey."""
    return element("p", *text, class_="sub")


def page_section(anchor: str, title: str, *body: object) -> Markup:
    """A ``<section id=anchor>`` headed by ``title`` (an ``<h2>``), the page's navigation target."""
    return element("section", element("h2", title), body, id=anchor)


def _head(entry: Entry, colspan: int | None = None) -> Markup:
    """A column header naming ``entry``, labelled when its numbers come from another protocol."""
    other = entry.protocol is not None
    return element(
        "th",
        entry.name,
        element("small", "another protocol") if other else None,
        colspan=colspan,
        title=f"obtained under another protocol: {entry.protocol}" if other else None,
    )


# -- sections -------------------------------------------------------------------------------------


def _card(data: ReportData) -> Markup:
    parts = []
    for section, rows in protocol_card(data.spec).items():
        body = []
        for name, value in rows:
            shown = element("a", value, href=value) if name == "URL" and safe_url(value) else value
            body.append(element("tr", element("th", name), element("td", shown)))
        parts += [element("h3", section), element("table", element("tbody", body), class_="card")]
    return page_section("card", "Protocol card", parts)


def _entry_row(entry: Entry, protocol: str) -> Markup:
    runs = max((len(c.get("runs", [])) for c in entry.games.values()), default=0)
    return element(
        "tr",
        element("td", entry.name, class_="ref" if entry.kind == "reference" else None),
        element("td", "published reference" if entry.kind == "reference" else "result"),
        element("td", protocol),
        number_cell(len(entry.games) if entry.per_game else None, title="aggregates only"),
        number_cell(runs or None),
        element("td", entry.source),
    )


def _entries(data: ReportData) -> Markup:
    own = f"{data.spec.name} (this report's)"
    rows = [_entry_row(e, own if e.protocol is None else e.protocol) for e in data.entries]
    for other in data.others:
        label = f"{other.data.spec.name}: a different protocol, reported apart"
        rows.extend(_entry_row(entry, label) for entry in other.data.entries)
    return page_section(
        "entries",
        "Algorithms and references",
        scroll_table(["name", "kind", "protocol", "games", "runs", "source / citation"], rows),
    )


def _aggregate_rows(entries: Sequence[Entry]) -> list[tuple[str, str, tuple[str, ...]]]:
    """``(key, label, path)`` of every aggregate any entry has, in first-seen order."""
    rows = []
    for path in aggregate_paths(entry.aggregates for entry in entries):
        key, stat = path[0], path[-1]
        if key == "classes":
            text = f"{stat} games"
        elif key == "learning_efficiency":
            text = f"{stat_label(path[1], stat)} per training frame (a fraction, Eq. 7)"
        elif key == "missing":
            text = "missing games"
        elif len(path) == 1:
            text = _SCALAR_LABELS.get(key, stat_label(key, None))
        elif stat == "n_games":
            text = f"{key if key in ('raw', 'train', 'test') else key.upper()} games"
        else:
            text = stat_label(key, stat)
        rows.append((".".join(path), text, path))
    return rows


def _aggregate_cell(entry: Entry, path: tuple[str, ...]) -> tuple[Any, Any]:
    """``(value, interval)`` of one aggregate of an entry (intervals of metrics only)."""
    if path == ("missing",):
        missing = entry.aggregates.get("missing")
        return (len(missing) if missing is not None else None), None
    if path[0] in ("classes", "learning_efficiency"):
        return dig(entry.aggregates, path), None
    return entry.aggregate(*path)


def _aggregates_table(
    data: ReportData, prefix: str = "", columns: list[tuple[str, Entry]] | None = None
) -> Markup:
    """Every aggregate of every entry; ``prefix`` keeps the row keys of a section apart.

    ``columns``: the checkpoints' ``(head, aggregates)`` instead, without the entries' notes
    (the expected range of an Atari-X estimate, the names of the missing games).
    """
    notes = columns is None
    heads = [(_head(e), e) for e in data.entries] if columns is None else columns
    relative = {subset_key(s.name): s.relative_error for s in data.spec.subsets.values()}
    rows = []
    for key, text, path in _aggregate_rows([e for _, e in heads]):
        cells = []
        for _, entry in heads:
            value, interval = _in_units(data, path, *_aggregate_cell(entry, path))
            note = None
            error = relative.get(key) if notes else None
            if error is not None and isinstance(value, float):
                low, high = _in_units(data, path, None, expected_range(value, error))[1]
                note = f"expected {format_cell(low)}\u2013{format_cell(high)}"
            title = None
            if notes and key == "missing" and entry.aggregates.get("missing"):
                title = ", ".join(map(str, entry.aggregates["missing"]))
            cells.append(number_cell(value, interval, note, title))
        rows.append(element("tr", element("th", text), cells, data_key=prefix + key))
    return scroll_table(["aggregate", *(head for head, _ in heads)], rows)


def _aggregates(data: ReportData) -> Markup:
    level = f"{data.level * 100:g} %"
    explain = _sub(
        f"Intervals: {level} stratified bootstrap CIs of results with several runs per game; "
        "published \u00b1 errors of references. \u201cexpected\u201d: the range the Atari-X "
        "estimate's error typically spans (cross-validated relative error, Atari-5 Table 2). "
        "References with per-game scores are scored on the games of the results, so their "
        "aggregates are over the same games; published aggregates (Table 1, Table 3) are the "
        "papers' own."
    )
    return page_section("aggregates", "Aggregates", explain, _aggregates_table(data))


def _estimates(data: ReportData) -> Markup | None:
    subsets = [
        s
        for s in data.spec.subsets.values()
        if any(e.aggregate(subset_key(s.name))[0] is not None for e in data.entries)
    ]
    if not subsets:
        return None
    rows = []
    for subset in subsets:
        key = subset_key(subset.name)
        for entry in data.entries:
            value, interval = entry.aggregate(key)
            if value is None:
                continue
            expected = (
                expected_range(value, subset.relative_error) if subset.relative_error else None
            )
            value, interval = _in_units(data, (key,), value, interval)
            expected = _in_units(data, (key,), None, expected)[1]
            rows.append(
                element(
                    "tr",
                    element("td", subset.name),
                    element("td", entry.name),
                    number_cell(value, interval),
                    number_cell(
                        f"\u00b1 {subset.relative_error:g} %" if subset.relative_error else None
                    ),
                    *(number_cell(bound) for bound in expected or (None, None)),
                    number_cell(f"{subset.r2:g}" if subset.r2 is not None else None),
                    data_key=f"{key}:{entry.name}",
                )
            )
    text = _sub(
        "Each estimate predicts the 57-game median HNS from a few games (Aitchison et al. 2023, "
        "Eq. 4 with the Table 9 weights). The paper's cross-validated relative error (Table 2) "
        "says how far the true median typically lies: the expected range is "
        "(1 + estimate) \u00d7 e^(\u2213error) \u2212 1."
    )
    head = [
        "subset",
        "entry",
        "estimate [CI]",
        "expected error (Table 2)",
        "expected low",
        "expected high",
        "R\u00b2 (Table 2)",
    ]
    return page_section(
        "estimates", "Atari-X estimates of the 57-game median", text, scroll_table(head, rows)
    )


def _improvement(data: ReportData) -> Markup | None:
    """P(X > Y) of every pair of results, with its interval (the figure's numbers)."""
    if not data.comparisons:
        return None
    rows = []
    for comparison in data.comparisons:
        interval = comparison.get("ci")
        rows.append(
            element(
                "tr",
                element("td", str(comparison["x"])),
                element("td", str(comparison["y"])),
                number_cell(
                    f"{float(comparison['probability']):.2f}",
                    [f"{interval[0]:.2f}", f"{interval[1]:.2f}"] if interval else None,
                ),
                number_cell(len(comparison.get("games", {}))),
                data_key=f"improvement:{comparison['x']}>{comparison['y']}",
            )
        )
    metric = str(data.comparisons[0].get("metric", data.metric)).upper()
    text = _sub(
        f"P(X > Y), Agarwal et al. (2021): on each game the probability that a run of X scores "
        f"above a run of Y in {metric} (the Mann-Whitney U statistic over the number of pairs, "
        "ties counting half), averaged over the games both have; 0.5 means neither is better. "
        f"Intervals: {data.level * 100:g} % stratified bootstrap CIs, each algorithm's runs "
        "resampled independently."
    )
    return page_section(
        "improvement",
        "Probability of improvement",
        text,
        scroll_table(["X", "Y", "P(X > Y) [CI]", "games"], rows),
    )


def _published(data: ReportData) -> Markup | None:
    """Each table of printed aggregates, with this report's results in the same columns."""
    tables: list[object] = []
    for published in data.spec.published:
        rows = []
        for entry in (e for e in data.entries if e.kind == "result"):
            cells = [
                number_cell(*_in_units(data, path, dig(entry.aggregates, path)))
                if path
                else number_cell(None)
                for path in published.paths
            ]
            rows.append(element("tr", element("td", f"{entry.name} (this report)"), cells))
        for name, theirs in published.rows.items():
            cells = [
                number_cell(*_in_units(data, path, value)) if path else number_cell(value)
                for path, value in zip(published.paths, theirs, strict=True)
            ]
            rows.append(element("tr", element("td", name, class_="ref"), cells))
        tables.append(element("h3", published.source))
        if published.protocol:
            tables.append(_sub(f"Obtained under another protocol: {published.protocol}"))
        tables.append(scroll_table(["", *published.columns], rows))
    if not tables:
        return None
    return page_section(
        "published",
        "Published results",
        _sub(data.spec.citation),
        tables,
    )


def _checkpoints_table(data: ReportData, prefix: str = "") -> Markup | None:
    columns: list[tuple[str, Entry]] = []
    for entry in data.entries:
        for frames, block in entry.block.get("checkpoints", {}).items():
            columns.append(
                (f"{entry.name} @ {format_cell(int(frames))} frames", Entry(entry.name, block))
            )
        if entry.block.get("checkpoints"):
            columns.append((f"{entry.name} @ end", entry))
    if not columns:
        return None
    return _aggregates_table(data, f"{prefix}checkpoint:", columns)


def _games_table(data: ReportData, prefix: str = "") -> Markup | None:
    """Every game of every entry with per-game scores, one column group per entry."""
    entries = data.per_game_entries()
    games = data.games()
    if not entries or not games:
        return None
    played = [cell for e in entries for cell in e.games.values()]
    named = ["raw", *(n.name for n in data.spec.scoring.normalised), "class", "episodes"]
    columns = [*(c for c in named if any(c in cell for cell in played)), "runs"]
    top = element(
        "tr",
        element("th", "game", rowspan=2),
        [_head(e, colspan=len(columns)) for e in entries],
    )
    sub = element(
        "tr",
        [
            element("th", c.upper() if c not in ("raw", "class", "episodes", "runs") else c)
            for _ in entries
            for c in columns
        ],
    )
    rows = []
    for game in games:
        cells = []
        for entry in entries:
            cell = entry.games.get(game)
            for column in columns:
                if cell is None:
                    cells.append(number_cell(None, title="missing"))
                elif column == "runs":
                    cells.append(number_cell(len(cell.get("runs", [])) or None))
                elif column == "class":
                    cells.append(element("td", cell.get("class", "\u2014")))
                else:
                    interval = (
                        cell.get("ci", {}).get(column)
                        if isinstance(cell.get("ci"), Mapping)
                        else None
                    )
                    cells.append(
                        number_cell(*_in_units(data, (column,), cell.get(column), interval))
                    )
        rows.append(element("tr", element("th", game), cells, data_game=prefix + game))
    aggregate_only = [e.name for e in data.entries if not e.per_game]
    note = (
        _sub("Aggregates only (no per-game scores published): " + ", ".join(aggregate_only))
        if aggregate_only
        else None
    )
    table = element(
        "div", element("table", element("thead", top, sub), element("tbody", rows)), class_="scroll"
    )
    return element("div", note, table)


def _image(path: Path, kind: str, alt: str) -> Markup:
    """An ``<img>`` of the ``kind`` (``png``, ``gif``) file at ``path``, inlined in base64."""
    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    return element("img", src=f"data:image/{kind};base64,{encoded}", alt=alt)


def _figures(data: ReportData, figures: Sequence[FigureFile]) -> Markup | None:
    if not figures:
        return None
    parts: list[Markup] = []
    elsewhere = [e.name for e in data.entries if e.protocol is not None]
    if elsewhere:
        parts.append(
            _sub(
                "Obtained under another protocol (see Algorithms and references): "
                + ", ".join(elsewhere)
            )
        )
    if data.others:
        parts.append(
            _sub(
                f"The figures show the results of {data.spec.name} only; results under "
                + ", ".join(o.data.spec.name for o in data.others)
                + " are in their own sections."
            )
        )
    for figure in figures:
        parts.append(
            element(
                "figure",
                _image(figure.path, "png", figure.title),
                element(
                    "figcaption",
                    element("strong", figure.title),
                    " \u2014 ",
                    figure.caption,
                    f" ({figure.path.name})",
                ),
                id=f"figure-{figure.name}",
            )
        )
    return page_section("figures", "Figures", parts)


def _episodes(clips: Sequence[EpisodeClip], notes: Sequence[str]) -> Markup | None:
    """The best and worst episode of each result's games, as GIFs replayed from the logs."""
    if not clips and not notes:
        return None
    parts: list[Markup] = [
        _sub(
            "Each result's best and worst complete episode of every game, played again in the "
            "emulator from its log's recording (the scored evaluation episodes where the "
            "protocol scores after training). The band shows the return so far and the frame "
            "counter."
        )
    ]
    groups: dict[tuple[str, str], list[EpisodeClip]] = {}
    for clip in clips:
        groups.setdefault((clip.game, clip.entry), []).append(clip)
    for (game, entry), group in groups.items():
        figures = []
        for clip in group:
            faster = (
                f"; one screen in {clip.speed}, {clip.speed}\u00d7 speed" if clip.speed > 1 else ""
            )
            figures.append(
                element(
                    "figure",
                    _image(clip.path, "gif", f"{game} {clip.which}"),
                    element(
                        "figcaption",
                        element("strong", clip.which),
                        f": return {format_cell(clip.episode_return)}, "
                        f"{clip.frames:,} frames{faster} \u2014 {clip.episode} of "
                        f"{clip.log.name} ({clip.path.name})",
                    ),
                )
            )
        parts += [element("h3", f"{game} \u2014 {entry}"), element("div", figures, class_="clips")]
    if notes:
        parts.append(_note_list(notes))
    return page_section("episodes", "Episodes", parts)


def _difference(row: Row) -> Markup:
    setting = f"{row.setting} ({row.detail})" if row.detail else row.setting
    return element(
        "li",
        element("strong", setting),
        f": {row.a} vs {row.b}",
        element("small", f"Evidence: {row.evidence}") if row.evidence else None,
    )


def _other_protocol(anchor: str, data: ReportData, other: OtherProtocol) -> Markup:
    """One other protocol's results, apart: a banner of what differs, then their own tables."""
    theirs, changing = other.data.spec, other.diff.score_changing
    prefix = f"{theirs.name}:"  # keeps its rows' data keys apart from the report's
    if changing:
        head = (
            f"Not comparable with the {data.spec.name} results above: "
            f"{count(len(changing), 'difference')} between the protocols change scores "
            f"(arcadebench diff {data.spec.name} {theirs.name})"
        )
    else:
        head = (
            f"{theirs.name} differs from {data.spec.name} in what it reports only "
            f"(arcadebench diff {data.spec.name} {theirs.name}); it is still reported apart"
        )
    banner = _box("banner", head, [_difference(row) for row in changing], role="alert")
    notes = _note_lines(other.data, compliance=True)
    checkpoints = _checkpoints_table(other.data, prefix)
    games = _games_table(other.data, prefix)
    return element(
        "section",
        element("h2", f"Results under {theirs.name} (a different protocol)"),
        banner,
        _sub(
            f"spec {theirs.name} v{theirs.version} ({theirs.short_hash}) \u00b7 {theirs.title} "
            f"\u00b7 {count(len(other.data.entries), 'result')}; kept out of every table and "
            f"figure of {data.spec.name}"
        ),
        element("h3", "Aggregates"),
        _aggregates_table(other.data, prefix),
        element("h3", "Aggregates at the training checkpoints") if checkpoints else None,
        checkpoints,
        element("h3", "Per game") if games else None,
        games,
        element("h3", "Notes") if notes else None,
        _note_list(notes) if notes else None,
        id=anchor,
        class_="other",
    )


def _protocols(data: ReportData) -> Markup | None:
    """At the top: the page holds results of several protocols, and where each is."""
    if not data.others:
        return None
    items = [
        element(
            "li",
            element("a", other.data.spec.name, href=f"#protocol-{k}"),
            f": {count(len(other.data.entries), 'result')}, "
            f"{count(len(other.diff.score_changing), 'difference')} that change scores",
        )
        for k, other in enumerate(data.others, start=1)
    ]
    head = (
        f"These inputs hold results of {len(data.others) + 1} protocols. This report is for "
        f"{data.spec.name}; results under another protocol are in a section of their own and "
        "are never ranked with its results:"
    )
    return _box("protocols", head, items)


def _provenance(data: ReportData) -> Markup:
    parts = [element("p", "Inputs: ", ", ".join(data.inputs) or "\u2014")]
    sources = list(data.provenance)
    for other in data.others:
        name = other.data.spec.name
        sources += [(f"{source} (under {name})", p) for source, p in other.data.provenance]
    for source, provenance in sources:
        text = json.dumps(dict(provenance), indent=1, default=str, ensure_ascii=False)
        parts += [element("h3", source), element("pre", text)]
    return page_section("provenance", "Provenance", parts)


def _banner(data: ReportData) -> Markup | None:
    """A visible warning when a result's runs deviate from the protocol: not comparable."""
    lines = [
        f"{entry.name}: {note.removeprefix('non-compliant: ')}"
        for entry in data.entries
        if entry.kind == "result"
        for note in entry.block.get("notes", ())
        if note.startswith("non-compliant:")
    ]
    if not lines:
        return None
    head = (
        f"Non-compliant: these runs deviate from the {data.spec.name} protocol, so their "
        "scores are not comparable with published ones"
    )
    return _box("banner", head, [element("li", line) for line in lines], role="alert")


def _box(kind: str, head: str, items: Sequence[Markup], role: str | None = None) -> Markup:
    """A ``div`` of class ``kind``: ``head`` in bold over the list of ``items`` (if any)."""
    ul = element("ul", items) if items else None
    return element("div", element("strong", head), ul, class_=kind, role=role)


def _note_lines(data: ReportData, compliance: bool = False) -> list[str]:
    """The notes of the inputs, their results' notes and missing games.

    ``compliance``: include the non-compliance notes too (the report's own are in its banner).
    """
    notes = list(data.notes)
    for entry in (e for e in data.entries if e.kind == "result"):
        notes.extend(
            f"{entry.name}: {note}"
            for note in entry.block.get("notes", ())
            if compliance or not note.startswith("non-compliant:")
        )
        missing = entry.aggregates.get("missing")
        if missing:
            notes.append(
                f"{entry.name} has no score for {len(missing)} of the spec's default games "
                f"({', '.join(map(str, missing[:12]))}{', ...' if len(missing) > 12 else ''}); "
                "its aggregates are over the games it has"
            )
    return notes


def _note_list(notes: Sequence[str]) -> Markup:
    return element("ul", [element("li", note) for note in notes], class_="notes")


def _section(anchor: str, title: str, body: Markup | None) -> Markup | None:
    """:func:`page_section` of ``body``, or ``None`` without one."""
    return None if body is None else page_section(anchor, title, body)


def render_page(
    data: ReportData,
    figures: Sequence[FigureFile],
    clips: Sequence[EpisodeClip] = (),
    clip_notes: Sequence[str] = (),
) -> str:
    """The complete HTML document of the report (``clips``: its episodes, and why any is not)."""
    spec = data.spec
    notes = _note_lines(data)
    # the answer first (aggregates, the paper's numbers, the figures), the details after, and
    # the protocol's definition and the provenance last, for whoever checks them
    sections = [
        ("aggregates", "aggregates", _aggregates(data)),
        ("estimates", "Atari-X estimates", _estimates(data)),
        ("improvement", "P(X > Y)", _improvement(data)),
        ("published", "published", _published(data)),
        ("figures", "figures", _figures(data, figures)),
        ("episodes", "episodes", _episodes(clips, clip_notes)),
        (
            "checkpoints",
            "checkpoints",
            _section(
                "checkpoints", "Aggregates at the training checkpoints", _checkpoints_table(data)
            ),
        ),
        ("games", "per game", _section("games", "Per game", _games_table(data))),
        *(
            (
                f"protocol-{k}",
                f"under {other.data.spec.name}",
                _other_protocol(f"protocol-{k}", data, other),
            )
            for k, other in enumerate(data.others, start=1)
        ),
        ("entries", "entries", _entries(data)),
        ("notes", "notes", _section("notes", "Notes", _note_list(notes) if notes else None)),
        ("card", "protocol", _card(data)),
        ("provenance", "provenance", _provenance(data)),
    ]
    shown = [(anchor, text, markup) for anchor, text, markup in sections if markup is not None]
    nav = element("nav", [element("a", text, href=f"#{anchor}") for anchor, text, _ in shown])
    results = sum(e.kind == "result" for e in data.entries)
    references = len(data.entries) - results
    body = element(
        "body",
        element("h1", f"arcadebench report \u2014 {spec.title}"),
        _sub(
            f"spec {spec.name} v{spec.version} ({spec.short_hash}) \u00b7 "
            f"{count(results, 'result')}, {count(references, 'reference')} \u00b7 "
            + (
                f"{count(sum(len(o.data.entries) for o in data.others), 'result')} under "
                f"{count(len(data.others), 'other protocol')} \u00b7 "
                if data.others
                else ""
            )
            + f"arcadebench {__version__}",
        ),
        _banner(data),
        _protocols(data),
        nav,
        [markup for _, _, markup in shown],
    )
    return html_page(f"arcadebench report \u2014 {spec.name} v{spec.version}", body)


def html_page(title: str, body: Markup, csp: str = _CSP, extra_css: str = "") -> str:
    """A whole page: ``body`` under the head (charset, ``csp``, viewport, ``title``, the style)."""
    head = element(
        "head",
        element("meta", charset="utf-8"),
        element("meta", http_equiv="Content-Security-Policy", content=csp),
        element("meta", name="viewport", content="width=device-width, initial-scale=1"),
        element("title", title),
        element("style", Markup(CSS + extra_css)),
    )
    return "<!DOCTYPE html>\n" + element("html", head, body, lang="en") + "\n"
