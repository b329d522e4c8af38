"""Reading episode logs in the tests: every record of a log, every run's episodes in a directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def records(path: str | Path) -> list[dict[str, Any]]:
    """Every line of one log, decoded (the header first, when it has one)."""
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def played(log_dir: str | Path) -> dict[tuple[str, str], list]:
    """``{(game, run): [(index, return, steps, frames, end reason, complete)]}``, by index.

    What a run's episodes are, whatever played them: the runner numbers each episode of a job
    with ``index`` (its seeds derive from it) and may spread them over streams and processes, so
    the order they finished in and the run's totals after each depend on the batch.
    """
    found = {}
    for path in sorted(Path(log_dir).rglob("*.jsonl")):
        rows = [
            (
                r.get("index", r["episode"]),
                r["return"],
                r["steps"],
                r["frames"],
                r["end_reason"],
                r["complete"],
            )
            for r in map(json.loads, path.read_text().splitlines())
            if r["kind"] == "episode"
        ]
        found[(path.parent.name, path.stem)] = sorted(rows)
    return found


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
