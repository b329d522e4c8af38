"""The board's static site, built from a board of real tiny runs written by hand.

The board (made without ``add``): three SABER runs scored on training episodes (random on seeds
0-1, with its report and clips, and metadata that tries to inject HTML; noop, replayed on a
sample; random on seeds 2-3, re-executed), the noop run again as a frozen-policy evaluation
(ranked apart), the noop run under another SABER hash (left out with a note), an Atari 100k
evaluation (a page of its own) and a rejection. The site's numbers must be those of
``arcadebench.score`` on the same runs; its HTML escaped, its links resolving inside it, its
bytes the same on a rebuild.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

import arcadebench
from arcadebench._table import Percent, format_cell
from arcadebench.benchmarks.leaderboard.board import Submission, close_board, open_board
from arcadebench.benchmarks.leaderboard.rankings import headline_aggregate
from arcadebench.benchmarks.leaderboard.site import SITE_MARKER, build_site
from arcadebench.errors import InvalidArgument
from arcadebench.specs import load_spec

REPS = 200
INJECTED = "<script>alert(1)</script>"


def _play(agent: str, spec: str, games: list[str], seeds: tuple[int, ...], out: Path) -> Path:
    arcadebench.evaluate(
        agent, spec, games, episodes=1, seeds=seeds, log_dir=out, progress="off", reps=0, workers=2
    )
    return out


def _submit(board, name, run, scored, added, **fields):
    """Put ``run`` on the board as ``add`` would have, with a record written by hand."""
    folder = board.submissions_folder / name
    shutil.copytree(run, folder / "run")
    document = json.loads((folder / "run" / "results.json").read_text())
    (algorithm,) = document["algorithms"]
    record = {
        "name": name,
        "status": "accepted",
        "reason": None,
        "added": added,
        "spec": document["spec"],
        "algorithm": algorithm,
        "scored": scored,
        "badge": "replay-verified",
        "checks": ({"name": "replay", "ok": True, "detail": "4 of 4 episodes verified"},),
        "verification": {"logs": 4, "episodes": 4, "verified": 4, "sample": None},
        "agent": {"kind": "builtin", "name": algorithm, "learns": False},
        "versions": {"arcadebench": arcadebench.__version__},
        **fields,
    }
    Submission(**record).write(folder / "submission.json")
    return folder


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The board, its secret file and the runs (by submission name)."""
    root = tmp_path_factory.mktemp("site")
    runs = {
        "random-a": _play("random", "saber", ["Boxing", "Breakout"], (0, 1), root / "a"),
        "noop": _play("noop", "saber", ["Boxing", "Breakout"], (0, 1), root / "noop"),
        "random-b": _play("random", "saber", ["Boxing", "Breakout"], (2, 3), root / "b"),
        "random-100k": _play("random", "atari100k", ["Boxing"], (0, 1), root / "100k"),
    }
    board = open_board(root / "board", root / "board.secret", title="Test <board>")
    folder = _submit(
        board,
        "random-a",
        runs["random-a"],
        "training",
        "2025-01-01T00:00:00Z",
        meta={
            "name": INJECTED,
            "authors": ["Ada", "Grace"],
            "paper": "https://example.org/paper",
            "code": "javascript:alert(1)",
            "date": "2024-12-31",
        },
    )
    arcadebench.report([folder / "run"], folder / "report", episodes=True, reps=0)
    _submit(
        board,
        "noop",
        runs["noop"],
        "training",
        "2025-01-02T00:00:00Z",
        verification={"logs": 4, "episodes": 4, "verified": 2, "sample": 1, "sample_seed": 7},
    )
    tests = [
        {
            "game": "boxing",
            "claimed_episodes": 2,
            "claimed_mean": 1.5,
            "rerun_episodes": 10,
            "rerun_mean": 0.7,
            "p_value": 0.42,
            "adjusted_p": 0.84,
            "reproduced": True,
        }
    ]
    _submit(
        board,
        "random-b",
        runs["random-b"],
        "training",
        "2025-01-03T00:00:00Z",
        badge="re-executed on hidden seeds",
        reexecution={
            "summary": "reproduced on 1 game",
            "policy_sha256": "sha256:" + "ab" * 32,
            "seed": 1234567,
            "episodes": 10,
            "games": tests,
        },
    )
    _submit(board, "noop-frozen", runs["noop"], "evaluation", "2025-01-04T00:00:00Z")
    other = _submit(board, "other-hash", runs["noop"], "training", "2025-01-05T00:00:00Z")
    record = json.loads((other / "submission.json").read_text())
    record["spec"]["hash"] = "sha256:" + "0" * 64
    (other / "submission.json").write_text(json.dumps(record))
    _submit(board, "random-100k", runs["random-100k"], "evaluation", "2025-01-06T00:00:00Z")
    rejection = Submission(
        name="edited",
        status="rejected",
        reason="verification failed: results.json says <b>21</b>",
        added="2025-01-07T00:00:00Z",
        spec={"name": "saber", "version": 2, "hash": "sha256:" + "1" * 64},
    )
    rejection.write(board.rejected_folder / "2025-01-07T00-00-00Z-edited.json")
    return board, root / "board.secret", runs


@pytest.fixture(scope="module")
def site(made, tmp_path_factory):
    board, _, _ = made
    out = tmp_path_factory.mktemp("built") / "site"
    build_site(board.path, out, reps=REPS)
    return out


def _data(site: Path, name: str) -> dict:
    return json.loads((site / "data" / f"{name}.json").read_text())


def _runs(run: Path) -> dict[str, list[float]]:
    document = json.loads((run / "results.json").read_text())
    (block,) = document["algorithms"].values()
    return {game: cell["runs"] for game, cell in block["games"].items()}


def _section(html: str, anchor: str) -> str:
    start = html.index(f'<section id="{anchor}">')
    return html[start : html.index("</section>", start)]


def test_rows_are_ranked_as_score_ranks_the_same_runs_together(made, site):
    _, _, runs = made
    names = ["random-a", "noop", "random-b"]
    expected = arcadebench.score(
        "saber", {n: _runs(runs[n]) for n in names}, reps=REPS, seed=0, compare=[]
    )
    medians = {n: expected.algorithms[n]["aggregates"]["saber"]["median"] for n in names}
    order = sorted(names, key=lambda n: -medians[n])
    (training, evaluation) = _data(site, "saber")["tables"]
    assert training["scored"] == "training" and training["headline"]["path"] == ["saber", "median"]
    assert [row["name"] for row in training["rows"]] == order
    assert [row["rank"] for row in training["rows"]] == [1, 2, 3]
    for row in training["rows"]:
        aggregates = expected.algorithms[row["name"]]["aggregates"]
        assert row["headline"] == {
            "value": medians[row["name"]],
            "ci": aggregates["ci"]["saber"]["median"],
        }
        assert row["games"] == 2 and row["runs"] == [2, 2]
        cell = expected.algorithms[row["name"]]["games"]["boxing"]
        assert row["per_game"]["boxing"]["raw"] == cell["raw"]
        assert row["per_game"]["boxing"]["hwrns"] == cell["hwrns"]
    # the HTML shows the same rows in the same order, with the same numbers
    html = _section((site / "saber.html").read_text(), "ranking-training")
    assert re.findall(r'data-row="([^"]+)"', html) == order
    for row in training["rows"]:
        assert format_cell(Percent(row["headline"]["value"])) in html
    # the evaluation of a frozen policy is ranked apart, alone
    assert evaluation["scored"] == "evaluation"
    assert [(r["name"], r["rank"]) for r in evaluation["rows"]] == [("noop-frozen", 1)]
    evaluations = _section((site / "saber.html").read_text(), "ranking-evaluation")
    assert re.findall(r'data-row="([^"]+)"', evaluations) == ["noop-frozen"]


def test_every_row_has_p_of_improvement_against_the_top_row(made, site):
    _, _, runs = made
    (training, _) = _data(site, "saber")["tables"]
    top, *others = [row["name"] for row in training["rows"]]
    expected = arcadebench.score(
        "saber",
        {n: _runs(runs[n]) for n in ("random-a", "noop", "random-b")},
        reps=REPS,
        seed=0,
        compare=[(row, top) for row in others],
    )
    by_row = {c["x"]: c for c in expected.comparisons}
    for row in training["rows"]:
        if row["name"] == top:
            assert row["improvement"] is None
            continue
        found = row["improvement"]
        assert (found["x"], found["y"], found["metric"]) == (row["name"], top, "hwrns")
        assert found["probability"] == by_row[row["name"]]["probability"]
        assert found["ci"] == by_row[row["name"]]["ci"]
    html = _section((site / "saber.html").read_text(), "ranking-training")
    assert f"P(X &gt; {top}) [CI]" in html


def test_badges_and_a_replayed_sample_are_shown(site):
    (training, _) = _data(site, "saber")["tables"]
    badges = {row["name"]: (row["badge"], row["sample"]) for row in training["rows"]}
    assert badges == {
        "random-a": ("replay-verified", None),
        "noop": ("replay-verified", 1),
        "random-b": ("re-executed on hidden seeds", None),
    }
    html = (site / "saber.html").read_text()
    row = re.search(r'<tr data-row="noop">.*?</tr>', html).group(0)
    assert "replay-verified" in row and "a sample of 1 episodes a log" in row
    row = re.search(r'<tr data-row="random-b">.*?</tr>', html).group(0)
    assert "re-executed on hidden seeds" in row


def test_published_references_are_beside_the_ranking_and_never_in_it(site):
    spec = load_spec("saber")
    data = _data(site, "saber")
    references = [r["name"] for r in data["references"]]
    assert references == list(spec.default_references())
    assert all(r["status"] == "published (not verified)" for r in data["references"])
    ranked = {row["name"] for table in data["tables"] for row in table["rows"]}
    assert not ranked & set(references)
    html = (site / "saber.html").read_text()
    section = _section(html, "references")
    assert "Published references (not verified)" in section
    rows = re.findall(r"<tr data-reference=.*?</tr>", section)
    assert len(rows) == len(references)
    assert all("published (not verified)" in row for row in rows)
    for table in ("ranking-training", "ranking-evaluation"):
        assert "data-reference" not in _section(html, table)
    # Rainbow's Table 3 row is printed aggregates: its SABER median, and nothing over runs
    rainbow = data["references"][0]
    assert rainbow["headline"]["saber.median"]["value"] == 2.83
    assert "iqm" not in json.dumps(rainbow["aggregates"])


def test_two_protocols_get_two_pages_and_a_row_of_another_hash_is_left_out(site):
    index = (site / "index.html").read_text()
    assert '<a href="saber.html">saber</a>' in index and '<a href="atari100k.html">' in index
    board = _data(site, "board")
    assert [(p["spec"], p["rows"]) for p in board["protocols"]] == [("atari100k", 1), ("saber", 4)]
    atari100k = _data(site, "atari100k")
    assert [t["scored"] for t in atari100k["tables"]] == ["evaluation"]
    assert [r["name"] for r in atari100k["tables"][0]["rows"]] == ["random-100k"]
    assert atari100k["tables"][0]["headline"]["path"] == ["hns", "iqm"]
    saber = (site / "saber.html").read_text()
    assert "random-100k" not in saber and 'data-row="other-hash"' not in saber
    assert any(n.startswith("other-hash is not ranked") for n in _data(site, "saber")["notes"])
    assert "other-hash is not ranked" in _section(saber, "notes")


def test_the_rejected_page_lists_each_rejection_and_its_reason(site):
    html = (site / "rejected.html").read_text()
    assert "edited" in html and "results.json says &lt;b&gt;21&lt;/b&gt;" in html
    assert "2025-01-07T00:00:00Z" in html and "saber v2 (111111111111)" in html
    (rejection,) = _data(site, "rejected")["rejected"]
    assert rejection["reason"] == "verification failed: results.json says <b>21</b>"
    assert '<a href="rejected.html">1 rejected submission</a>' in (site / "index.html").read_text()


def test_the_check_page_shows_checks_tests_and_the_clips(made, site):
    board, _, _ = made
    html = (site / "submissions" / "random-b.html").read_text()
    for shown in ("re-executed on hidden seeds", "4 of 4 episodes verified", "Holm-adjusted p"):
        assert shown in html
    assert "0.84" in html and "0.42" in html and "reproduced on 1 game" in html
    assert "ab" * 32 in html and "1234567" in html  # what recomputes the draw once it closes
    assert load_spec("saber").hash in html
    html = (site / "submissions" / "random-a.html").read_text()
    clips = re.findall(r'<img src="\.\./(clips/random-a/[^"]+)"', html)
    report = board.submissions_folder / "random-a" / "report"
    assert {Path(c).name for c in clips} == {p.name for p in report.glob("episode_*.gif")}
    for clip in clips:
        assert (site / clip).read_bytes() == (report / Path(clip).name).read_bytes()
    assert '<a href="../reports/random-a.html">' in html
    assert (site / "reports" / "random-a.html").read_bytes() == (
        report / "report.html"
    ).read_bytes()
    # a row's check page is linked from its protocol's page
    assert '<a href="submissions/random-a.html">random-a</a>' in (site / "saber.html").read_text()


def test_the_json_data_agrees_with_the_pages(site):
    for spec in ("saber", "atari100k"):
        data = _data(site, spec)
        html = (site / f"{spec}.html").read_text()
        for table in data["tables"]:
            section = _section(html, f"ranking-{table['scored']}")
            for row in table["rows"]:
                cells = re.search(rf'<tr data-row="{row["name"]}">(.*?)</tr>', section).group(1)
                assert cells.startswith(f'<td class="num">{row["rank"]}</td>')
                assert f'href="{row["links"]["check"]}"' in cells
                assert (site / row["links"]["check"]).is_file()
                games = _section(html, f"games-{table['scored']}")
                for cell in row["per_game"].values():
                    assert format_cell(cell["raw"]) in games
    (first,) = [r for r in _data(site, "saber")["tables"][0]["rows"] if r["name"] == "random-a"]
    assert first["links"] == {
        "check": "submissions/random-a.html",
        "report": "reports/random-a.html",
        "paper": "https://example.org/paper",
        "code": None,  # not an http(s) URL: never a link
    }


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.found += [value for name, value in attrs if name in ("href", "src")]


def test_every_link_and_image_resolves_to_a_file_of_the_site(site):
    pages = sorted(site.rglob("*.html"))
    assert len(pages) >= 10
    checked = 0
    for page in pages:
        if page.parent.name == "reports":
            continue  # the submissions' own reports, as the board keeps them
        parser = _Links()
        parser.feed(page.read_text())
        for link in parser.found:
            if link.startswith(("https://", "http://", "#")):
                continue
            target = (page.parent / link).resolve()
            assert target.is_file(), (page, link)
            assert target.is_relative_to(site.resolve()), (page, link)
            checked += 1
        assert "script" not in parser.tags, page
    assert checked > 30


def test_whatever_the_metadata_says_is_shown_as_text(site):
    for page in site.rglob("*.html"):
        if page.parent.name != "reports":
            assert "<script" not in page.read_text(), page
    html = (site / "saber.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "Test &lt;board&gt;" in html
    assert 'href="javascript' not in html
    check = (site / "submissions" / "random-a.html").read_text()
    assert "javascript:alert(1)" in check and 'href="javascript' not in check
    assert '<a href="https://example.org/paper" rel="nofollow noopener">' in check


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_rebuild_is_byte_identical_and_removes_only_its_stale_files(made, site, tmp_path):
    board, _, _ = made
    first, kept = _tree(site), _tree(board.path)
    out = tmp_path / "again"
    build_site(board, out, reps=REPS)
    assert _tree(out) == first
    build_site(board.path, out, reps=REPS)  # over the previous site: replaced
    assert _tree(out) == first
    # the clips are hard links to the board's files, and a rebuild never writes through them
    assert all(clip.stat().st_nlink > 1 for clip in (out / "clips").rglob("*.gif"))
    assert _tree(board.path) == kept
    copy = tmp_path / "board"
    shutil.copytree(board.path, copy)
    build_site(copy, tmp_path / "from-a-copy", reps=REPS)  # a board elsewhere: the same site
    assert _tree(tmp_path / "from-a-copy") == first
    shutil.rmtree(copy / "submissions" / "random-a")
    (out / "mine.txt").write_text("not the site's")
    build_site(copy, out, reps=REPS)
    assert not (out / "submissions" / "random-a.html").exists()
    assert not (out / "clips" / "random-a").exists() and not (out / "reports").exists()
    assert (out / "mine.txt").read_text() == "not the site's"
    assert json.loads((out / SITE_MARKER).read_text())["files"] == sorted(
        name for name in _tree(out) if name not in ("mine.txt", SITE_MARKER)
    )


def test_a_closed_board_shows_its_secret_and_how_to_recompute_a_draw(made, site, tmp_path):
    board, secret, _ = made
    copy = tmp_path / "board"
    shutil.copytree(board.path, copy)
    closed = close_board(copy, secret)
    index = (build_site(copy, tmp_path / "site", reps=0)).read_text()
    assert closed.settings.secret in index and closed.settings.secret_sha256 in index
    assert "hidden_seed(secret, name, policy_sha256)" in index
    opened = (site / "index.html").read_text()  # while open: the digest only
    assert board.settings.secret_sha256 in opened and "secret (revealed)" not in opened
    data = _data(tmp_path / "site", "board")
    assert data["secret"] == closed.settings.secret and data["closed"] == closed.settings.closed


def test_a_bad_out_is_refused_in_one_line_before_anything_is_written(made, tmp_path):
    board, _, _ = made
    refusals = {
        board.path: "`out` must be outside the board's folder",
        board.path.parent: "`out` must be outside the board's folder",
    }
    full = tmp_path / "full"
    full.mkdir()
    (full / "thesis.tex").write_text("mine")
    refusals[full] = "`out` must be a new or empty folder, or a site built before"
    file = tmp_path / "file.html"
    file.write_text("mine")
    refusals[file] = "`out` must be a folder for the site"
    for out, message in refusals.items():
        before = _tree(out) if out.is_dir() else out.read_bytes()
        with pytest.raises(InvalidArgument, match=re.escape(message)) as error:
            build_site(board, out, reps=0)
        assert "\n" not in str(error.value)
        assert (_tree(out) if out.is_dir() else out.read_bytes()) == before


@pytest.mark.parametrize(
    ("spec", "games", "expected"),
    [
        ("saber", {"pong": [1.0, 2.0]}, ("saber", "median")),
        ("hwr", {"pong": [1.0, 2.0]}, ("hwrns", "iqm")),  # SABER's classes are SABER's only
        ("atari5", {"pong": [1.0, 2.0]}, ("hns", "iqm")),
        (
            "atari5",
            {
                g: [100.0]
                for g in ("Battle Zone", "Double Dunk", "Name This Game", "Phoenix", "Q*bert")
            },
            ("atari5",),
        ),
        ("machado2018", {"pong": [1.0]}, ("hns", "iqm")),
        ("sonic", {"SonicTheHedgehog-SpringYardZone.Act1": [3000.0]}, ("test", "mean")),
    ],
)
def test_the_headline_aggregate_follows_from_the_spec_and_the_results(spec, games, expected):
    results = arcadebench.score(spec, {"me": games}, reps=0)
    assert headline_aggregate(load_spec(spec), results) == expected
