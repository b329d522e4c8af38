"""report.html in a real headless browser (Debian's chromium): renders cleanly, runs nothing.

Chromium loads the page from disk with ``--dump-dom`` (the DOM after loading) and
``--enable-logging=stderr --v=0``, which writes every console message, uncaught exception and
Content-Security-Policy violation to stderr as a ``CONSOLE`` line. The report has no script and
no external resource, so a clean render means no such line at all. Algorithm and game names
carrying ``<script>`` and attribute-breaking quotes must arrive in the DOM as text: no script or
event-handler element appears and the page title is the report's.
"""

from __future__ import annotations

from html.parser import HTMLParser

from chromium import dump_dom, needs_chromium
from report_helpers import (
    HOSTILE,
    HOSTILE_ATTR,
    HOSTILE_GAME,
    hostile_results,
    saber_logs,
    write_results,
)

import arcadebench
from arcadebench.benchmarks.report import report

pytestmark = needs_chromium


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self._in_title = False
        self.title = ""

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag):
        self._in_title = False

    def handle_data(self, data):
        self.text.append(data)
        if self._in_title:
            self.title += data


def render(page, profile):
    html, console = dump_dom(page.resolve().as_uri(), profile)
    dom = _Dom()
    dom.feed(html)
    return dom, console


def test_report_renders_without_console_errors_and_names_stay_text(tmp_path):
    results = hostile_results(tmp_path / "r.json")
    logs = saber_logs(tmp_path / "logs")
    first = report([results], tmp_path / "atari5", references=["random"], reps=50)
    second = report([logs / "dqn", logs / "ppo"], tmp_path / "saber", reps=50)
    for page in (first, second):
        figures = len(list(page.parent.glob("*.png")))  # every figure written is on the page
        assert figures >= 3
        dom, console = render(page, tmp_path / "profile")
        assert console == [], console  # no console message, CSP violation or exception
        assert dom.title.startswith("arcadebench report")  # no injected script changed it
        images = [a for t, a in dom.tags if t == "img"]
        assert len(images) == figures
        assert all(a["src"].startswith("data:image/png;base64,") for a in images)
        assert [t for t, _ in dom.tags if t == "script"] == []
        assert not any(name.startswith("on") for _, a in dom.tags for name in a)
        assert any(t == "table" for t, _ in dom.tags)
    dom, _ = render(first, tmp_path / "profile")
    text = "".join(dom.text)
    for name in (HOSTILE, HOSTILE_ATTR, HOSTILE_GAME):
        assert name in text  # shown verbatim, as text
    assert "PWNED" not in dom.title


def test_a_report_of_two_protocols_renders_cleanly_with_its_sections(tmp_path):
    saber = write_results(tmp_path / "s.json", "saber", {"x": {"pong": [1.0, 2.0]}}, reps=0)
    other = write_results(tmp_path / "a.json", "atari100k", {HOSTILE: {"pong": [3.0]}}, reps=0)
    page = report([saber, other], tmp_path / "out", reps=0)
    dom, console = render(page, tmp_path / "profile")
    assert console == [], console
    assert [t for t, _ in dom.tags if t == "script"] == []
    sections = [a.get("id") for t, a in dom.tags if t == "section"]
    assert "protocol-1" in sections and "aggregates" in sections
    text = "".join(dom.text)
    assert "Results under atari100k (a different protocol)" in text and HOSTILE in text
    assert "PWNED" not in dom.title


def test_a_report_with_episodes_renders_its_gifs_cleanly(tmp_path):
    arcadebench.evaluate(
        "random", "atari5", ["qbert"], episodes=3, log_dir=tmp_path / "run", progress="off",
        reps=0, env_kwargs={"max_episode_frames": 800},
    )  # fmt: skip
    page = report([tmp_path / "run"], tmp_path / "out", reps=0, episodes=True)
    dom, console = render(page, tmp_path / "profile")
    assert console == [], console  # the CSP lets the inlined GIFs load, and nothing else
    gifs = [a for t, a in dom.tags if t == "img" and a["src"].startswith("data:image/gif;")]
    assert [a["alt"] for a in gifs] == ["qbert best", "qbert worst"]
