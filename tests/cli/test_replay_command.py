"""``arcadebench replay``: exit 0 if the replay agrees with its log line, 1 if not, 2 if refused."""

from __future__ import annotations

import json
import shutil

import pytest

import arcadebench
from arcadebench.benchmarks.replay.logs import read_run
from arcadebench.cli import main

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """Three Q*bert episodes of the runner's random agent, 600 frames at most."""
    out = tmp_path_factory.mktemp("run")
    arcadebench.evaluate(
        "random", "atari5", ["qbert"], episodes=3, log_dir=out, progress="off", reps=0,
        env_kwargs={"max_episode_frames": 600},
    )  # fmt: skip
    (path,) = out.rglob("*.jsonl")
    return path


def copy_run(log, folder, edit=lambda record: record):
    """The log and its recording copied into ``folder``, every log line through ``edit``."""
    copy = folder / "0.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    copy.write_text("".join(json.dumps(edit(record)) + "\n" for record in lines))
    shutil.copy(log.with_suffix(".replay"), copy.with_suffix(".replay"))
    return copy


def one_error_line(capsys):
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("arcadebench: error: ")
    return line


def test_unusable_video_paths_are_one_line_and_exit_2(log, tmp_path, capsys):
    (tmp_path / "file").write_text("")
    (tmp_path / "folder.mp4").mkdir()
    assert main(["replay", str(log), "--best", "--video", str(tmp_path / "file" / "x.gif")]) == 2
    line = one_error_line(capsys)
    assert "`--video` must be a file path this user can write" in line and "is a file" in line
    assert main(["replay", str(log), "--last", "--video", str(tmp_path / "folder.mp4")]) == 2
    assert "it is a directory; name a file in it" in one_error_line(capsys)
    assert main(["replay", str(log), "--last", "--video", str(tmp_path / "x.avi")]) == 2
    assert "`--video` must end in .mp4, .mkv, .gif" in one_error_line(capsys)
    assert not list(tmp_path.rglob("*.gif"))


def test_a_directory_or_a_missing_log_says_what_to_pass(log, tmp_path, capsys):
    assert main(["replay", str(log.parent), "--best", "--video", str(tmp_path / "x.gif")]) == 2
    line = one_error_line(capsys)
    assert "`LOG` must be an episode log file (.jsonl)" in line
    assert f"a directory; pass one of its logs, such as {log}" in line
    missing = tmp_path / "none.jsonl"
    assert main(["replay", str(missing), "--best", "--video", str(tmp_path / "x.gif")]) == 2
    assert f"got '{missing}': no such file" in one_error_line(capsys)


def test_a_replay_that_disagrees_with_its_line_is_still_written_and_exits_1(log, tmp_path, capsys):
    run = read_run(log)
    edited, other = run.episodes[0], run.episodes[1]
    claimed = max(float(e.record["return"]) for e in run.episodes) + 100

    def edit(record):
        key = (record.get("env"), record.get("episode"))
        if key == edited.key:
            return {**record, "return": claimed}  # the best by its log now
        if key == other.key:
            return {**record, "frames": record["frames"] + 4}
        return record

    copy = copy_run(log, tmp_path, edit)
    assert main(["replay", str(copy), "--best", "--video", str(tmp_path / "best.gif")]) == 1
    assert (tmp_path / "best.gif").stat().st_size > 0
    written, disagrees = capsys.readouterr().err.strip().splitlines()
    assert written.startswith(f"{tmp_path / 'best.gif'}: {edited.name} of {copy}")
    assert disagrees == (
        f"arcadebench: {edited.name} of {copy} does not replay as its log line says: the log "
        f"says return {claimed:g}, the replay gives return {float(edited.record['return']):g}"
    )
    number = str(other.index)
    assert main(["replay", str(copy), "--episode", number, "--video", str(tmp_path / "o.gif")]) == 1
    frames = other.record["frames"]
    assert f"the log says frames {frames + 4}, the replay gives frames {frames}" in (
        capsys.readouterr().err
    )


def test_a_replay_that_departs_from_its_recording_exits_1(log, tmp_path, capsys):
    def edit(record):  # the header now says the episodes were played with a frame skip of 5
        if record.get("kind") != "header":
            return record
        return {**record, "settings": {**record["settings"], "frameskip": 5}}

    copy = copy_run(log, tmp_path, edit)
    assert main(["replay", str(copy), "--last", "--video", str(tmp_path / "last.gif")]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "does not replay as its log line says" in last and "departs from its recording" in last
    assert main(["replay", str(log), "--last", "--video", str(tmp_path / "last.gif")]) == 0
