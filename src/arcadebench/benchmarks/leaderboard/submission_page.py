"""A submission's check page: what the board checked of it, and what its run looks like.

The spec (name, version, hash), the libraries' versions and the agent its logs record; each
check with its outcome; how many episodes replayed and verified, and whether only a sample of
each log was; the re-execution's per-game tests where a policy was played again on the
board's hidden seeds (claimed and re-run means, p and Holm-adjusted p); its best and worst
episode of each game, as clips copied from its report, and its full report.

Functions: check_page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arcadebench._table import format_cell
from arcadebench.benchmarks.leaderboard.board import BoardSettings, Submission
from arcadebench.benchmarks.leaderboard.rankings import Row
from arcadebench.benchmarks.leaderboard.site_html import (
    Clip,
    aggregate_label,
    as_mapping,
    badge,
    badge_text,
    document,
    external,
    local,
    pairs,
    protocol_path,
    report_path,
    spec_text,
    text_of,
)
from arcadebench.benchmarks.report.markup import Markup, element
from arcadebench.benchmarks.report.page import number_cell, page_section, scroll_table
from arcadebench.benchmarks.scoring.tables import in_units, percent_metrics
from arcadebench.specs.names import display_name

__all__ = ["check_page"]

_TESTS = {  # a re-execution's per-game numbers, in the order shown, and their columns
    "claimed_episodes": "claimed episodes",
    "claimed_mean": "claimed mean",
    "rerun_episodes": "re-run episodes",
    "rerun_mean": "re-run mean",
    "p_value": "p",
    "adjusted_p": "Holm-adjusted p",
}
_REEXECUTION = {  # what a re-execution record says, in the order shown, and how it is named
    "summary": "outcome",
    "policy_sha256": "policy's SHA-256",
    "seed": "hidden seed",
    "episodes": "episodes a game",
    "alpha": "family-wise error rate (Holm)",
    "test": "test",
    "untestable": "untestable",
}


def check_page(
    settings: BoardSettings,
    submission: Submission,
    row: Row | None,
    headline: Sequence[str] | None,
    clips: Sequence[Clip],
    report: bool,
) -> str:
    """What was checked of one submission, and what its run looks like.

    ``row`` and ``headline``: its row on its protocol's page and the aggregate ranked by (``None``
    when it is not ranked); ``clips``: its best and worst episodes in the site; ``report``:
    whether its full report is in the site.
    """
    spec = as_mapping(submission.spec)
    meta = as_mapping(submission.meta)
    summary: list[tuple[str, object]] = [
        ("badge", badge(submission)),
        ("scored", f"{submission.scored} episodes" if submission.scored else "\u2014"),
        ("added", submission.added),
        ("protocol", spec_text(spec)),
        ("spec hash", element("code", str(spec.get("hash", "\u2014")))),
        ("algorithm", submission.algorithm or "\u2014"),
    ]
    if row is not None and headline is not None:
        shown = in_units(headline, row.value, percent_metrics([row.block]))
        value = "\u2014" if row.value is None else format_cell(shown)
        rank = "\u2014" if row.rank is None else str(row.rank)
        summary.append(("rank", f"{rank} by {aggregate_label(headline)} ({value})"))
    for key, value in meta.items():
        shown = external(text_of(value), value) if key in ("paper", "code") else text_of(value)
        summary.append((key, shown))
    name = spec.get("name")
    back = [local("a", protocol_path(str(name)), 1, f"{name} page")] if row is not None else []
    return document(
        f"{submission.name} \u2014 {settings.title}",
        submission.name,
        1,
        element("p", back) if back else None,
        page_section("summary", "Submission", pairs(summary)),
        _checks(submission),
        _verification(submission),
        _reexecution(submission),
        page_section(
            "agent",
            "Agent",
            pairs([(k, text_of(v)) for k, v in as_mapping(submission.agent).items()]),
        ),
        page_section(
            "versions",
            "Versions",
            pairs([(k, text_of(v)) for k, v in as_mapping(submission.versions).items()]),
        ),
        _episodes(clips, submission.name if report else None),
        sub=f"{badge_text(submission)} \u00b7 {spec_text(spec)} \u00b7 {settings.title}",
    )


def _checks(submission: Submission) -> Markup:
    rows = [
        element(
            "tr",
            element("td", str(check.get("name", ""))),
            element("td", "passed", class_="ok")
            if check.get("ok") is True
            else element("td", "failed", class_="failed"),
            element("td", str(check.get("detail", ""))),
        )
        for check in map(as_mapping, submission.checks)
    ]
    return page_section("checks", "Checks", scroll_table(["check", "result", "detail"], rows))


def _verification(submission: Submission) -> Markup | None:
    found = as_mapping(submission.verification)
    if not found:
        return None
    sample = found.get("sample")
    rows: list[tuple[str, object]] = [
        ("logs", format_cell(found.get("logs"))),
        (
            "episodes verified",
            f"{format_cell(found.get('verified'))} of {format_cell(found.get('episodes'))} checked",
        ),
        (
            "replayed",
            f"a sample of {sample} episodes a log (seed {found.get('sample_seed')})"
            if sample
            else "every episode",
        ),
    ]
    if found.get("frames") is not None:
        rows.append(("frames", format_cell(found.get("frames"))))
    return page_section("verification", "Verification", pairs(rows))


def _reexecution(submission: Submission) -> Markup | None:
    found = as_mapping(submission.reexecution)
    if not found:
        return None
    about: list[tuple[str, object]] = [
        (label, text_of(found.get(key)))
        for key, label in _REEXECUTION.items()
        if found.get(key) is not None
    ]
    games = found.get("games")
    rows = [
        element(
            "tr",
            element("td", display_name(str(test.get("game", "")))),
            [number_cell(_number(test.get(key))) for key in _TESTS],
            element("td", "yes" if test.get("reproduced") is True else "no"),
        )
        for test in (games if isinstance(games, list) else ())
        if isinstance(test, Mapping)
    ]
    return page_section(
        "reexecution",
        "Re-execution on hidden seeds",
        pairs(about),
        scroll_table(["game", *_TESTS.values(), "reproduced"], rows) if rows else None,
    )


def _episodes(clips: Sequence[Clip], report: str | None) -> Markup | None:
    if not clips and report is None:
        return None
    groups: dict[str, list[Clip]] = {}
    for clip in clips:
        groups.setdefault(clip.game, []).append(clip)
    parts: list[object] = [
        element(
            "p",
            "Each game's best and worst complete episode, played again in the emulator from the "
            "logs' recordings when the submission was checked.",
            class_="sub",
        )
    ]
    if report is not None:
        parts.append(element("p", local("a", report_path(report), 1, "The full report")))
    for game, group in groups.items():
        figures = [
            element(
                "figure",
                local("img", clip.path, 1, alt=f"{game} {clip.which}"),
                element("figcaption", element("strong", clip.which)),
            )
            for clip in group
        ]
        parts.append(element("h3", game))
        parts.append(element("div", figures, class_="clips"))
    return page_section("episodes", "Episodes", parts)


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value
