"""What every page of a board's site is made of, where each page is, and the front pages.

Every piece of text goes through :func:`~arcadebench.benchmarks.report.markup.element`, as in
the report, so a submitter's metadata (a name ``<script>...``) can only ever be text; links
out of the site are ``http(s)`` URLs only (anything else is shown as text). Links and images
*within* the site are relative paths checked against :data:`LOCAL_PATH` (lower-case names,
no ``..`` segment), so the site works from files, with no server and no network; its
Content-Security-Policy allows nothing but the inline style sheet and the site's own images.
The pages use the report's style sheet and cells
(:mod:`arcadebench.benchmarks.report.page`), so that they look like the report.

The site's layout is here, so that the pages and the JSON data name the same files:
:func:`protocol_path`, :func:`check_path`, :func:`report_path`, :func:`clip_path`. The
protocols' pages are :mod:`~arcadebench.benchmarks.leaderboard.ranking_page`'s, the
submissions' :mod:`~arcadebench.benchmarks.leaderboard.submission_page`'s.

Classes: Clip.
Functions: index_page, rejected_page, document, local, external, pairs, badge, badge_text,
units, aggregate_label, notes_section, spec_text, text_of, as_mapping, protocol_path,
check_path, report_path, clip_path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arcadebench._table import count
from arcadebench.benchmarks.leaderboard.board import BoardSettings, Submission
from arcadebench.benchmarks.leaderboard.rankings import ProtocolPage, short_hash
from arcadebench.benchmarks.report.markup import Markup, element, safe_url
from arcadebench.benchmarks.report.page import html_page, number_cell, page_section, scroll_table
from arcadebench.benchmarks.report.report_data import stat_label
from arcadebench.benchmarks.scoring.tables import in_units
from arcadebench.errors import InvalidArgument

__all__ = [
    "LOCAL_PATH",
    "Clip",
    "aggregate_label",
    "as_mapping",
    "badge",
    "badge_text",
    "check_path",
    "clip_path",
    "document",
    "external",
    "index_page",
    "local",
    "notes_section",
    "pairs",
    "protocol_path",
    "rejected_page",
    "report_path",
    "spec_text",
    "text_of",
    "units",
]

LOCAL_PATH = re.compile(r"(?:\.\./)?(?:[a-z0-9][a-z0-9._-]*/)*[a-z0-9][a-z0-9._-]*")
"""A link or image within the site: a relative path of lower-case names, no ``..`` segment."""

_CSP = (
    "default-src 'none'; img-src 'self' file:; style-src 'unsafe-inline'; base-uri 'none'; "
    "form-action 'none'"
)
_EXTRA_CSS = """
.badge{display:inline-block;padding:0 .45em;border-radius:.3em;background:#e3f1e3;
color:#1d5e20;font-size:.85em;white-space:nowrap}.badge.rerun{background:#dcebf7;color:#0b4f86}
.unverified{font-style:italic;color:#7a4b00}.ok{color:#1d5e20}.failed{color:#b00020}
"""


def protocol_path(spec: str) -> str:
    """A protocol's page."""
    return f"{spec}.html"


def check_path(name: str) -> str:
    """A submission's check page."""
    return f"submissions/{name}.html"


def report_path(name: str) -> str:
    """The copy of a submission's full report."""
    return f"reports/{name}.html"


def clip_path(name: str, file: str) -> str:
    """A copy of one of a submission's episode clips."""
    return f"clips/{name}/{file}"


@dataclass(frozen=True)
class Clip:
    """One episode clip of a submission, copied into the site.

    Attributes:
        game: the game, as the clip's file names it.
        which: ``best`` or ``worst``.
        path: where it is in the site.
    """

    game: str
    which: str
    path: str


def as_mapping(value: object) -> Mapping[str, Any]:
    """A part of a record that should be a mapping, or an empty one (a damaged record's)."""
    return value if isinstance(value, Mapping) else {}


def badge_text(submission: Submission) -> str:
    """The badge, and that only a sample of each log was replayed where it was."""
    shown = submission.badge or "none"
    sample = as_mapping(submission.verification).get("sample")
    return f"{shown} (replayed: a sample of {sample} episodes a log)" if sample else shown


# -- building blocks ------------------------------------------------------------------------------


def local(tag: str, target: str, depth: int, *children: object, **attributes: object) -> Markup:
    """``<a href>`` or ``<img src>`` to a file of the site, from a page ``depth`` folders deep."""
    path = "../" * depth + target
    if tag not in ("a", "img") or not LOCAL_PATH.fullmatch(path):
        raise InvalidArgument(f"`target` must be a path within the site, got {path!r}")
    markup = element(tag, *children, **attributes)
    name = "href" if tag == "a" else "src"
    return Markup(f'<{tag} {name}="{path}"' + markup[len(tag) + 1 :])


def external(text: object, url: object) -> Markup | str:
    """A link out of the site where ``url`` is an http(s) URL, else the text alone."""
    if safe_url(url):
        return element("a", text, href=url, rel="nofollow noopener")
    return "" if text is None else str(text)


def document(title: str, heading: str, depth: int, *body: object, sub: object = None) -> str:
    """A whole page: the report's style, the site's CSP, a link home, ``heading`` and ``sub``.

    ``depth``: how many folders below the site's the page is (its links go up as many).
    """
    nav = element("nav", local("a", "index.html", depth, "board"))
    page = element("body", nav, element("h1", heading), element("p", sub, class_="sub"), body)
    return html_page(title, page, _CSP, _EXTRA_CSS)


def text_of(value: Any) -> str:
    """A metadata value as text (a list of authors joined)."""
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value))
    return "" if value is None else str(value)


def badge(submission: Submission) -> Markup:
    """The badge as a label, with the sample replayed below it where only a sample was."""
    rerun = submission.badge == "re-executed on hidden seeds"
    sample = as_mapping(submission.verification).get("sample")
    return element(
        "span",
        submission.badge or "none",
        element("small", f"replayed: a sample of {sample} episodes a log") if sample else None,
        class_="badge rerun" if rerun else "badge",
    )


def units(
    percent: frozenset[str], path: Sequence[str], value: Any, interval: Any
) -> tuple[Any, Any]:
    """A value and its interval in the tables' units (normalised scores in percent)."""
    if interval is not None:
        interval = [in_units(path, bound, percent) for bound in interval]
    return in_units(path, value, percent), interval


def aggregate_label(path: Sequence[str]) -> str:
    """An aggregate's name by its path (``SABER median``, ``Atari-5 estimate``)."""
    return stat_label(path[0], path[1] if len(path) > 1 else None)


def pairs(rows: Sequence[tuple[str, object]]) -> Markup:
    """A two-column table of ``(name, value)`` rows, as the report's protocol card."""
    body = [element("tr", element("th", name), element("td", value)) for name, value in rows]
    return element("table", element("tbody", body), class_="card")


# -- the index and the rejected page --------------------------------------------------------------


def index_page(
    settings: BoardSettings,
    pages: Sequence[ProtocolPage],
    rejected: int,
    notes: Sequence[str] = (),
) -> str:
    """The board's front page: its settings, the secret's digest, a link per protocol."""
    revealed: list[tuple[str, object]] = []
    if settings.secret is not None:
        text = (
            "Its SHA-256 is the digest above. Each re-executed submission's seed is "
            "hidden_seed(secret, name, policy_sha256) of "
            "arcadebench.benchmarks.leaderboard.secret, from its name and the "
            "policy's SHA-256 on its check page: recompute it to check every draw."
        )
        revealed = [
            ("secret (revealed)", [element("code", settings.secret), element("small", text)])
        ]
    published = (
        "Published when the board opened; the secret itself, from which the seeds of every "
        "re-execution are drawn, is revealed when it closes."
    )
    rows: list[tuple[str, object]] = [
        ("opened", settings.opened),
        ("closed", settings.closed or "open: taking submissions"),
        (
            "secret's SHA-256",
            [element("code", settings.secret_sha256), element("small", published)],
        ),
        *revealed,
        ("re-execution", f"{settings.episodes} episodes a game, Holm's α = {settings.alpha:g}"),
        (
            "replay",
            "every episode"
            if settings.sample is None
            else f"every episode; a sample of {settings.sample} a log for runs over "
            f"{settings.sample_above_frames:,} frames",
        ),
    ]
    protocols = [
        element(
            "tr",
            element("td", local("a", protocol_path(p.spec.name), 0, p.spec.name)),
            element("td", p.spec.title),
            element("td", f"v{p.record.get('version')} ({short_hash(p.record.get('hash'))})"),
            number_cell(p.rows),
            element("td", local("a", f"data/{p.spec.name}.json", 0, "JSON")),
        )
        for p in pages
    ]
    return document(
        f"{settings.title} \u2014 arcadebench leaderboard",
        settings.title,
        0,
        page_section("board", "The board", pairs(rows)),
        page_section(
            "protocols",
            "Protocols",
            element("p", "One page per protocol: rows are only ranked within one.", class_="sub"),
            scroll_table(["protocol", "title", "version", "rows", "data"], protocols)
            if protocols
            else element("p", "No submission accepted yet."),
        ),
        page_section(
            "rejected",
            "Rejected submissions",
            element(
                "p",
                local("a", "rejected.html", 0, count(rejected, "rejected submission")),
                " \u00b7 ",
                local("a", "data/rejected.json", 0, "JSON"),
                " \u00b7 the board's settings: ",
                local("a", "data/board.json", 0, "JSON"),
            ),
        ),
        notes_section(notes),
        sub="arcadebench leaderboard: every row verified by replaying its episodes",
    )


def rejected_page(settings: BoardSettings, rejected: Sequence[Submission]) -> str:
    """Every rejection: its name, date, protocol where known and the reason."""
    rows = [
        element(
            "tr",
            element("td", r.name),
            element("td", r.added),
            element("td", spec_text(r.spec)),
            element("td", r.reason or ""),
        )
        for r in rejected
    ]
    return document(
        f"Rejected \u2014 {settings.title}",
        "Rejected submissions",
        0,
        scroll_table(["name", "date", "protocol", "reason"], rows)
        if rows
        else element("p", "None."),
        sub=f"{settings.title} \u00b7 {count(len(rows), 'rejection')}; nothing of these runs "
        "is kept but the reason",
    )


def notes_section(notes: Sequence[str]) -> Markup | None:
    """The notes of a page, or nothing without any."""
    if not notes:
        return None
    return page_section(
        "notes", "Notes", element("ul", [element("li", n) for n in notes], class_="notes")
    )


def spec_text(record: object) -> str:
    """A recorded spec as ``saber v2 (e8f835bcbf3b)``, or ``unknown``."""
    spec = as_mapping(record)
    if not spec:
        return "unknown"
    return f"{spec.get('name')} v{spec.get('version')} ({short_hash(spec.get('hash'))})"
