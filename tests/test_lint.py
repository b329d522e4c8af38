"""The style rules are checked, not hoped for: ruff's lint (no asserts outside tests, Google
docstrings, sorted imports, line length 100) and its formatter, over the whole repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["src", "tests", "examples", "perf", "docs", "dev.py"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, *PATHS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_ruff_check_is_clean():
    done = _ruff("check", "--output-format", "concise")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_clean():
    done = _ruff("format", "--check")
    assert done.returncode == 0, done.stdout + done.stderr
