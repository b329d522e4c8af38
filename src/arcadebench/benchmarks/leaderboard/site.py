"""``arcadebench leaderboard build BOARD --out SITE``: a board as a static site, and as JSON.

The site, all relative links, working from files with no server and no network::

    SITE/index.html                   the board: its title, the secret's SHA-256 (and the secret
                                      once closed), a link per protocol, the rejected page
    SITE/<spec>.html                  a protocol's page: a ranking per kind of row (training
                                      episodes, evaluations), per-game tables, the published
                                      references beside, marked "published (not verified)"
    SITE/submissions/<name>.html      a submission's check page: every check, the verification,
                                      the re-execution's tests, its best and worst episodes
    SITE/reports/<name>.html          the submission's full report, as the board keeps it
    SITE/clips/<name>/*.gif           its episode clips, from its report
    SITE/rejected.html                every rejection and its reason
    SITE/data/<spec>.json             the same numbers for other tools: each row's rank, badge,
    SITE/data/rejected.json           headline and interval, P(X > Y) against the top row,
    SITE/data/board.json              per-game scores and links; the rejections; the board
    SITE/.arcadebench-site            marks the folder as a site, and lists its files

The numbers come from :mod:`~arcadebench.benchmarks.leaderboard.rankings`, the pages from
:mod:`~arcadebench.benchmarks.leaderboard.site_html` (the front pages and what every page is
made of), :mod:`~arcadebench.benchmarks.leaderboard.ranking_page` and
:mod:`~arcadebench.benchmarks.leaderboard.submission_page`. A site is a function of its board:
nothing in it says when it was built, so building the same board again gives the same bytes.
Building into a previous site replaces it, and removes the files of that build that this one
does not write (the marker lists them); any other folder must be new or empty.

Functions: build_site, page_data.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.leaderboard.board import NAME, Board, Submission, load_board, load_json
from arcadebench.benchmarks.leaderboard.ranking_page import protocol_page
from arcadebench.benchmarks.leaderboard.rankings import ProtocolPage, Row, rank_board
from arcadebench.benchmarks.leaderboard.site_html import (
    LOCAL_PATH,
    Clip,
    aggregate_label,
    as_mapping,
    badge_text,
    check_path,
    clip_path,
    index_page,
    protocol_path,
    rejected_page,
    report_path,
)
from arcadebench.benchmarks.leaderboard.submission_page import check_page
from arcadebench.benchmarks.report.build import HTML_FILE
from arcadebench.benchmarks.report.episodes import CLIP_PREFIX
from arcadebench.benchmarks.report.markup import safe_url
from arcadebench.errors import InputError, InvalidArgument

__all__ = ["DATA_FORMAT", "SITE_FORMAT", "SITE_MARKER", "build_site", "page_data"]

SITE_MARKER = ".arcadebench-site"
"""The file that marks a folder as a site built by :func:`build_site`, listing its files."""
SITE_FORMAT = "arcadebench-site/1"
"""The ``format`` of the marker."""
DATA_FORMAT = "arcadebench-leaderboard/1"
"""The ``format`` of the site's JSON data."""

_CLIP = re.compile(re.escape(CLIP_PREFIX) + r"\d+_([a-z0-9-]+)_(best|worst)\.gif")
_GIF = (b"GIF87a", b"GIF89a")

Content = bytes | Path  # a file's bytes, or the board's file to copy


def build_site(
    board: str | os.PathLike[str] | Board, out: str | os.PathLike[str], *, reps: int = 2000
) -> Path:
    """Write the board's static site into ``out``; the path of its index page.

    Args:
        board: the board, or its folder.
        out: the site's folder: new, empty, or a site built before (which is replaced).
        reps: bootstrap repetitions of the rankings' intervals (``0``: none).

    Raises:
        InvalidArgument: ``out`` is the board's folder or holds it, is a file, or is a
            non-empty folder that is no site; ``reps`` is not a non-negative integer.
        InputError: a damaged record or marker.
    """
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 0:
        raise InvalidArgument(
            f"`reps` must be a non-negative integer (0: no intervals), got {reps!r}"
        )
    found = board if isinstance(board, Board) else load_board(board)
    target = Path(out)
    previous = _previous_site(found.path, target)
    pages, orphans = rank_board(found, reps=reps)
    rejected = found.rejected()
    settings = found.settings
    ranked = {row.name: (row, r.headline) for p in pages for r in p.rankings for row in r.rows}
    files: dict[str, Content] = {}
    links: dict[str, dict[str, str | None]] = {}
    for submission in found.accepted():
        if not NAME.fullmatch(submission.name) or check_path(submission.name) in files:
            continue
        clips, report = _assets(submission, files)
        links[submission.name] = {"check": check_path(submission.name), "report": report}
        row, headline = ranked.get(submission.name, (None, None))
        files[check_path(submission.name)] = check_page(
            settings, submission, row, headline, clips, report is not None
        ).encode("utf-8")
    reports = frozenset(name for name, link in links.items() if link["report"])
    for page in pages:
        files[protocol_path(page.spec.name)] = protocol_page(settings, page, reports).encode()
        files[f"data/{page.spec.name}.json"] = _json(page_data(page, links))
    files["rejected.html"] = rejected_page(settings, rejected).encode("utf-8")
    files["data/rejected.json"] = _json(
        {"format": DATA_FORMAT, "rejected": [_rejection(r) for r in rejected]}
    )
    files["data/board.json"] = _json(_board_data(found, pages, len(rejected), orphans))
    files["index.html"] = index_page(settings, pages, len(rejected), orphans).encode("utf-8")
    _write(target, files, previous)
    return target / "index.html"


def page_data(
    page: ProtocolPage, links: Mapping[str, Mapping[str, str | None]] | None = None
) -> dict[str, Any]:
    """A protocol page's numbers as ``data/<spec>.json`` holds them (JSON-ready).

    ``links``: each submission's pages in the site (``{"check", "report"}``), relative to the
    site's folder.
    """
    spec = page.spec
    tables = [
        {
            "scored": ranking.scored,
            "headline": {
                "path": list(ranking.headline),
                "label": aggregate_label(ranking.headline),
            },
            "top": ranking.top.name,
            "settings": dict(ranking.results.settings),
            "rows": [_row_data(page, row, (links or {}).get(row.name, {})) for row in ranking.rows],
        }
        for ranking in page.rankings
    ]
    references = [
        {
            "name": entry.name,
            "status": "published (not verified)",
            "source": entry.source,
            "protocol": entry.protocol,
            "per_game": entry.per_game,
            "headline": {
                ".".join(r.headline): _pair(*entry.aggregate(*r.headline)) for r in page.rankings
            },
            "aggregates": entry.aggregates,
        }
        for entry in page.references
    ]
    data: dict[str, Any] = _plain(
        {
            "format": DATA_FORMAT,
            "spec": {**page.record, "title": spec.title},
            "installed_spec_hash": spec.hash,
            "metric": page.metric,
            "tables": tables,
            "references": references,
            "notes": list(page.notes),
            "page": protocol_path(spec.name),
        }
    )
    return data


def _row_data(page: ProtocolPage, row: Row, links: Mapping[str, str | None]) -> dict[str, Any]:
    submission = row.submission
    meta = as_mapping(submission.meta)
    per_game = {}
    for game, cell in row.block.get("games", {}).items():
        kept = {key: cell[key] for key in ("raw", page.metric, "runs") if key in cell}
        interval = {k: v for k, v in cell.get("ci", {}).items() if k in ("raw", page.metric)}
        per_game[game] = {**kept, "ci": interval} if interval else kept
    improvement = row.improvement
    return {
        "rank": row.rank,
        "name": row.name,
        "algorithm": submission.algorithm,
        "badge": submission.badge,
        "badge_text": badge_text(submission),
        "sample": as_mapping(submission.verification).get("sample"),
        "added": submission.added,
        "meta": dict(meta),
        "headline": _pair(row.value, row.interval),
        "games": row.games,
        "runs": list(row.runs),
        "improvement": None
        if improvement is None
        else {k: improvement.get(k) for k in ("x", "y", "metric", "probability", "ci", "games")},
        "per_game": per_game,
        "links": {
            "check": links.get("check"),
            "report": links.get("report"),
            "paper": meta.get("paper") if safe_url(meta.get("paper")) else None,
            "code": meta.get("code") if safe_url(meta.get("code")) else None,
        },
    }


def _board_data(
    board: Board, pages: Sequence[ProtocolPage], rejected: int, notes: Sequence[str]
) -> dict[str, Any]:
    keys = "title opened closed secret_sha256 secret episodes alpha sample sample_above_frames"
    return {
        "format": DATA_FORMAT,
        **{key: getattr(board.settings, key) for key in keys.split()},
        "protocols": [
            {
                "spec": page.spec.name,
                "version": page.record.get("version"),
                "hash": page.record.get("hash"),
                "rows": page.rows,
                "page": protocol_path(page.spec.name),
                "data": f"data/{page.spec.name}.json",
            }
            for page in pages
        ],
        "rejected": rejected,
        "notes": list(notes),
    }


def _rejection(record: Submission) -> dict[str, Any]:
    return {
        "name": record.name,
        "added": record.added,
        "spec": dict(as_mapping(record.spec)) or None,
        "reason": record.reason,
    }


def _assets(submission: Submission, files: dict[str, Content]) -> tuple[list[Clip], str | None]:
    """Add the submission's clips and full report to ``files``; the clips, the report's path."""
    folder = submission.report_folder
    if folder is None or not folder.is_dir():
        return [], None
    clips: list[tuple[str, int, str, Clip]] = []
    for source in sorted(folder.glob(f"{CLIP_PREFIX}*.gif")):
        match = _CLIP.fullmatch(source.name)
        if match is None or not _regular(source) or source.read_bytes()[:6] not in _GIF:
            continue
        game, which = match.groups()
        path = clip_path(submission.name, source.name)
        files[path] = source
        clips.append((game, which != "best", source.name, Clip(game, which, path)))
    report = None
    if _regular(folder / HTML_FILE):
        report = report_path(submission.name)
        files[report] = folder / HTML_FILE
    return [clip for *_, clip in sorted(clips)], report


def _regular(path: Path) -> bool:
    """A plain file, not a symbolic link (a board's files are linked or copied, never followed)."""
    return path.is_file() and not path.is_symlink()


def _pair(value: Any, interval: Any) -> dict[str, Any]:
    return {"value": value, "ci": list(interval) if interval is not None else None}


def _plain(value: Any) -> Any:
    """JSON-ready: mappings as dicts, tuples as lists, NaN as null, infinities as ``"inf"``."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _json(data: Any) -> bytes:
    return (json.dumps(_plain(data), indent=1, ensure_ascii=False, allow_nan=False) + "\n").encode()


# -- the site's folder ----------------------------------------------------------------------------


def _previous_site(board: Path, out: Path) -> set[str]:
    """The files of the site ``out`` holds (none for a new or empty folder), or a refusal."""
    if out.exists() and not out.is_dir():
        raise InvalidArgument(f"`out` must be a folder for the site, got {str(out)!r}: a file")
    if board.resolve().is_relative_to(out.resolve()):
        raise InvalidArgument(
            f"`out` must be outside the board's folder, got {str(out)!r}: it is the board's "
            "folder or holds it, which a build would overwrite; give a folder of its own"
        )
    if not out.exists() or not any(out.iterdir()):
        return set()
    marker = out / SITE_MARKER
    if not marker.is_file():
        raise InvalidArgument(
            f"`out` must be a new or empty folder, or a site built before, got {str(out)!r}: "
            f"it holds other files and no {SITE_MARKER}; give a folder of its own"
        )
    data = load_json(marker)
    if not isinstance(data, Mapping) or data.get("format") != SITE_FORMAT:
        raise InputError(str(marker), None, f"is not a site's marker ({SITE_FORMAT})")
    listed = data.get("files")
    return {f for f in listed if isinstance(f, str)} if isinstance(listed, list) else set()


def _write(out: Path, files: Mapping[str, Content], previous: set[str]) -> None:
    """Write the site, then remove the previous build's files it no longer has."""
    out.mkdir(parents=True, exist_ok=True)
    marker = out / SITE_MARKER
    _mark(marker, previous | set(files))  # whatever happens next, every file is listed
    for name, content in files.items():
        path = out / name
        path.unlink(missing_ok=True)  # never written through: it may be a link to the board's
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            _link_or_copy(content, path)
        else:
            path.write_bytes(content)
    root = out.resolve()
    for name in sorted(previous - set(files)):
        path = out / name
        inside = LOCAL_PATH.fullmatch(name) and path.parent.resolve().is_relative_to(root)
        if not inside or not (path.is_file() or path.is_symlink()):
            continue
        path.unlink()
        for folder in path.parents:
            if folder == out or any(folder.iterdir()):
                break
            folder.rmdir()
    _mark(marker, set(files))


def _link_or_copy(source: Path, path: Path) -> None:
    """A board's file (a clip, a report) in the site: a hard link where the file system allows.

    A board of 50 rows of 57 games holds 2.6 GB of clips; linked, a site costs its pages only.
    """
    try:
        os.link(source, path)
    except OSError:  # another file system, or links not allowed: a copy
        shutil.copyfile(source, path)


def _mark(marker: Path, files: set[str]) -> None:
    marker.write_bytes(_json({"format": SITE_FORMAT, "files": sorted(files)}))
