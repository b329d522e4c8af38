"""Reading episode logs in the tests: every record of a log, every run's episodes in a directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def records(path: str | Path) -> list[dict[str, Any]]:
    """Every line of one log, decoded (the header first, when it has one)."""
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def episodes(log_dir: str | Path, *, skip_cut_lines: bool = False) -> dict[tuple[str, str], list]:
    """``{(game, run): [(episode, return, steps, frames, total_frames, complete)]}`` of every log.

    ``skip_cut_lines``: leave out a last line a killed process cut short (the reader does too).
    """
    found = {}
    for path in sorted(Path(log_dir).rglob("*.jsonl")):
        lines = path.read_text().splitlines()
        if skip_cut_lines:
            lines = [line for line in lines if line.endswith("}")]
        found[(path.parent.name, path.stem)] = [
            (r["episode"], r["return"], r["steps"], r["frames"], r["total_frames"], r["complete"])
            for r in map(json.loads, lines)
            if r["kind"] == "episode"
        ]
    return found
