"""`arcadebench verify` and `arcadebench replay`: tables, videos and exit statuses (0, 1, 2)."""

from __future__ import annotations

import json

import pytest

import arcadebench
from arcadebench.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    arcadebench.evaluate(
        "random", "atari5", ["qbert"], episodes=2, log_dir=folder, progress="off", reps=0,
        env_kwargs={"max_episode_frames": 1000},
    )  # fmt: skip
    return folder


def test_verify_prints_a_table_writes_json_and_exits_0_when_everything_matches(
    out, tmp_path, capsys
):
    assert main(["verify", str(out), "--json", str(tmp_path / "v.json")]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("2 episodes of 2 re-simulated and verified, in 1 log")
    report = json.loads((tmp_path / "v.json").read_text())
    assert report["ok"] is True and report["runs"][0]["episodes"][0]["verdict"] == "verified"


def test_verify_exits_1_on_an_edited_log_and_2_on_bad_input(out, tmp_path, capsys):
    (log,) = out.rglob("*.jsonl")
    copy = tmp_path / "0.jsonl"
    lines = log.read_text().splitlines()
    record = json.loads(lines[1])
    record["steps"] += 1
    copy.write_text("\n".join([lines[0], json.dumps(record), *lines[2:]]) + "\n")
    (tmp_path / "0.replay").write_text(log.with_suffix(".replay").read_text())
    assert main(["verify", str(copy), "--json", str(tmp_path / "v.json")]) == 1
    assert "re-simulated and verified" in capsys.readouterr().out
    (checked,) = json.loads((tmp_path / "v.json").read_text())["runs"]
    assert checked["problems"][0].endswith(
        "(line 2): episodes are missing before it, or a line was edited"
    )
    assert checked["episodes"][0]["reason"].startswith("the log says steps")
    assert main(["verify", str(tmp_path / "nothing")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("arcadebench: error:") and "is no log" in line
    assert main(["verify", str(out), "--sample", "0"]) == 2
    assert "`--sample` must be a positive integer" in capsys.readouterr().err


def test_replay_writes_the_video_and_refuses_what_it_cannot_render(out, tmp_path, capsys):
    (log,) = out.rglob("*.jsonl")
    assert main(["replay", str(log), "--worst", "--video", str(tmp_path / "w.gif")]) == 0
    assert (tmp_path / "w.gif").stat().st_size > 0
    assert "w.gif: episode" in capsys.readouterr().err
    assert main(["replay", str(log), "--episode", "9", "--video", str(tmp_path / "n.mp4")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "has no recorded episode 9" in line
