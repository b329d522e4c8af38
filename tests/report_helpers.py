"""Fixture inputs for the report tests: results scored by arcadebench.score, small monitor logs."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import arcadebench

HOSTILE = "<script>document.title='PWNED'</script>"
HOSTILE_ATTR = '"><img src=x onerror="document.title=\'PWNED2\'">'
HOSTILE_GAME = "<b>evil</b> & 'game'"


def atari5_csv(path: Path) -> Path:
    """One algorithm, one run per game, a game missing (qbert) and infinite gameplay (pong)."""
    path.write_text(
        "game,score,algorithm\n"
        "Battle Zone,37187.5,csv-agent\n"
        "Double Dunk,-16.4,csv-agent\n"
        "Name This Game,8049,csv-agent\n"
        "Phoenix,7242.6,csv-agent\n"
        "Pong,inf,csv-agent\n",
        encoding="utf-8",
    )
    return path


def atari5_runs() -> dict:
    """Two algorithms with several runs (so CIs), one of them without Q*bert."""
    return {
        "agent-a": {
            "battle_zone": [3000.0, 5000.0, 4000.0],
            "double_dunk": [-18.0, -20.0, -19.0],
            "name_this_game": [3000.0, 2500.0, 2800.0],
            "phoenix": [800.0, 900.0, 1000.0],
            "qbert": [200.0, 300.0, 250.0],
        },
        "agent-b": {
            "battle_zone": [20000.0, 30000.0],
            "double_dunk": [-10.0, 0.0],
            "name_this_game": [6000.0, 7000.0],
            "phoenix": [5000.0, 4000.0],
            "pong": [float("inf"), 21.0],
        },
    }


def write_results(path: Path, spec: str, scores, reps: int = 200) -> Path:
    """Score ``scores`` with the scorer and write the results JSON."""
    arcadebench.score(spec, scores, reps=reps).to_json(path)
    return path


def write_log(
    root: Path,
    spec_name: str,
    algorithm: str,
    game: str,
    run: str,
    returns,
    frames_per_episode: int,
) -> Path:
    """A monitor log in the runner's layout ``<root>/<spec>/<game>/<run>.jsonl``."""
    spec = arcadebench.load_spec(spec_name)
    path = root / spec_name / game / f"{run}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"kind": "header", "algorithm": algorithm})]
    total = 0
    for i, value in enumerate(returns):
        total += frames_per_episode
        lines.append(
            json.dumps(
                {
                    "kind": "episode",
                    "spec": spec.name,
                    "spec_version": spec.version,
                    "spec_hash": spec.hash,
                    "env_id": f"arcadebench/{spec.id_prefix}-x-v0",
                    "game": game,
                    "run": run,
                    "seed": 0,
                    "episode": i,
                    "return": float(value),
                    "steps": frames_per_episode // 4,
                    "frames": frames_per_episode,
                    "total_steps": total // 4,
                    "total_frames": total,
                    "end_reason": "game_over",
                    "complete": True,
                    "rollover_rewards": [],
                    "deviations": {},
                    "wall_time": 0.1,
                    "time": 0.0,
                }
            )
        )
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def saber_logs(root: Path) -> Path:
    """Two algorithms x two games x two runs; 30 episodes of 500k frames pass the 10M checkpoint."""
    for algorithm, slope in (("dqn", 0.5), ("ppo", 1.0)):
        for game in ("pong", "breakout"):
            for run in ("0", "1"):
                returns = [slope * i + (1.0 if run == "1" else 0.0) for i in range(30)]
                write_log(root / algorithm, "saber", algorithm, game, run, returns, 500_000)
    return root


def hostile_results(path: Path) -> Path:
    write_results(path, "atari5", {HOSTILE: {"pong": [1.0, 2.0]}, HOSTILE_ATTR: {"pong": 3.0}})
    data = json.loads(path.read_text())
    for entry in data["algorithms"].values():  # a hand-edited results file with an odd game
        entry["games"][HOSTILE_GAME] = dict(entry["games"]["pong"])
    data["provenance"]["command"] = "</pre><script>alert(1)</script>"
    path.write_text(json.dumps(data))
    return path


def png_size(path: Path) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk, after checking the signature."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])
