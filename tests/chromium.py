"""Headless Chromium (Debian's) for the tests that open pages: the flags, the DOM, the console.

``dump_dom`` loads a page as a reader's browser would, without network or GPU, and returns the
DOM after its scripts ran and every console message it logged: a page that errors in a browser
fails the test that opened it.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Debian's chromium: apt-get install chromium"
)


def dump_dom(url: str, profile: Path, *flags: str) -> tuple[str, list[str]]:
    """The DOM of ``url`` once loaded, and the console messages it logged."""
    assert CHROMIUM is not None
    done = subprocess.run(
        [CHROMIUM, *FLAGS, *flags, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return done.stdout, console
