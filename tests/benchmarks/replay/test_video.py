"""``replay``: an episode rendered from its recording, its frames the emulator's own."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

import arcadebench
from arcadebench.benchmarks.replay.logs import LoggedEpisode, RecordedRun, read_run
from arcadebench.benchmarks.replay.simulate import Player
from arcadebench.benchmarks.replay.video import (
    BAND,
    choose_episode,
    gif_durations,
    render_episode,
)
from arcadebench.errors import ArcadebenchError, InvalidArgument
from arcadebench.records import ReplayEntry, load_replay

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    """Three Breakout episodes of the runner's random agent, 1,200 frames at most."""
    out = tmp_path_factory.mktemp("episodes")
    arcadebench.evaluate(
        "random", "saber", ["breakout"], episodes=3, log_dir=out, progress="off", reps=0,
        env_kwargs={"max_episode_frames": 1200},
    )  # fmt: skip
    (path,) = out.rglob("*.jsonl")
    return path


def emulator_frames(log, episode):
    """The screens of ``episode`` as the emulator gives them, replayed apart."""
    run = read_run(log)
    replay = load_replay(run.replay_file, episode.replay)
    player = Player(arcadebench.load_spec("saber"), run.header, obs_type="rgb")
    screens = []
    try:
        player.play(replay, None, lambda obs, *_: screens.append(np.asarray(obs)))
    finally:
        player.close()
    return screens


def game_pixels(image):
    """The game's screen in a rendered image: below the band, scaled back down."""
    return image[BAND:][::2, ::2]


def test_replay_best_writes_a_playable_mp4_of_the_emulators_frames(log, tmp_path):
    rendered = render_episode(log, tmp_path / "best.mp4", which="best")
    run = read_run(log)
    top = max(e.record["return"] for e in run.episodes)
    best = next(e for e in run.episodes if e.record["return"] == top)  # the first of the best
    assert rendered.episode == best.name and rendered.episode_return == best.record["return"]
    assert rendered.disagreement is None
    expected = emulator_frames(log, best)
    video = cv2.VideoCapture(str(rendered.path))
    assert video.get(cv2.CAP_PROP_FPS) == 15.0  # 60 frames a second over the frame skip of 4
    decoded = []
    while True:
        ok, frame = video.read()
        if not ok:
            break
        decoded.append(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
    assert len(decoded) == len(expected) == best.record["steps"] + 1  # the reset's, each step's
    errors = [
        np.abs(game_pixels(d).astype(int) - e).mean()
        for d, e in zip(decoded, expected, strict=True)
    ]
    assert max(errors) < 4  # mp4v is lossy: close, pixel for pixel
    assert np.std([e.mean() for e in expected]) > 0  # the frames do change


def test_a_gif_holds_the_emulators_frames_exactly(log, tmp_path):
    run = read_run(log)
    _, last = choose_episode(run, which="last")
    assert last is run.episodes[-1]
    rendered = render_episode(log, tmp_path / "last.gif", which="last")
    expected = emulator_frames(log, last)
    gif = Image.open(rendered.path)
    decoded = []
    for index in range(gif.n_frames):
        gif.seek(index)
        decoded.append(np.asarray(gif.convert("RGB")))
    assert len(decoded) == len(expected)
    assert all(np.array_equal(game_pixels(d), e) for d, e in zip(decoded, expected, strict=True))
    band = decoded[-1][:BAND]
    assert band.max() == 255  # the return and frame counter are written in the band
    # a GIF keeps centiseconds: 70, 70, 60 ms, ... keeps 15 images a second on average
    durations = []
    for index in range(gif.n_frames):
        gif.seek(index)
        durations.append(gif.info["duration"])
    assert set(durations) <= {60, 70}
    assert abs(sum(durations) - len(durations) * 1000 / 15) < 10
    assert durations[:6] == [70, 70, 60, 70, 70, 60]


def test_gif_durations_are_centiseconds_on_the_protocols_clock():
    assert gif_durations(3, 15.0) == [70, 70, 60]  # 66.7 ms a step (Atari's frame skip of 4)
    assert gif_durations(4, 60.0) == [20, 20, 10, 20]  # 16.7 ms: 20, 40, 50, 70 ms
    assert gif_durations(5, 20.0) == [50] * 5  # a pace of whole centiseconds is exact
    for fps in (15.0, 60.0 / 7, 12.0):
        durations = gif_durations(1000, fps)
        assert abs(sum(durations) - 1000 * 1000 / fps) < 10


def test_an_episode_is_chosen_by_its_number_and_bad_requests_are_one_line(log, tmp_path):
    rendered = render_episode(log, tmp_path / "one.mkv", episode=1)
    assert rendered.episode.endswith("index 1") and rendered.path.stat().st_size > 0
    with pytest.raises(ArcadebenchError, match="has no recorded episode 7; it has 3"):
        render_episode(log, tmp_path / "x.mp4", episode=7)
    with pytest.raises(InvalidArgument, match=r"`video` must end in \.mp4, \.mkv, \.gif"):
        render_episode(log, tmp_path / "x.avi", which="best")


def episode(line, number, returned, *, complete=True, recorded=True):
    """A logged episode line of stream 0 and, if ``recorded``, where its recording is."""
    ending = "game_over" if complete else "budget"
    record = {"episode": number, "return": returned, "steps": 1, "frames": 4,
              "complete": complete, "end_reason": ending}  # fmt: skip
    entry = ReplayEntry(0, number, {"seed": number}, 1, "single", "f", "", line, 0, 1)
    return LoggedEpisode(line, record, entry if recorded else None)


def test_best_worst_and_last_rank_complete_recorded_episodes_the_first_of_a_tie_winning(tmp_path):
    first = RecordedRun(tmp_path / "0.jsonl", {}, [
        episode(2, 0, 1.0), episode(3, 1, 3.0), episode(4, 2, 3.0),
        episode(5, 3, 9.0, recorded=False), episode(6, 4, -5.0, complete=False),
    ])  # fmt: skip
    second = RecordedRun(tmp_path / "1.jsonl", {}, [
        episode(2, 0, 3.0), episode(3, 1, -1.0), episode(4, 2, -1.0),
    ])  # fmt: skip
    runs = [first, second]
    assert choose_episode(runs, which="best") == (first, first.episodes[1])
    assert choose_episode(runs, which="worst") == (second, second.episodes[1])
    assert choose_episode(runs, which="last") == (second, second.episodes[2])
    assert choose_episode(second, episode=1) == (second, second.episodes[1])
    cut = RecordedRun(tmp_path / "2.jsonl", {}, [episode(2, 0, 5.0, complete=False)])
    with pytest.raises(ArcadebenchError, match=r"no complete episode with a recording \(its 1 "):
        choose_episode(cut, which="best")
    assert choose_episode(cut, episode=0) == (cut, cut.episodes[0])  # by number: any recorded


def test_unusable_paths_are_one_line_errors_before_anything_is_played(log, tmp_path):
    (tmp_path / "file").write_text("")
    (tmp_path / "folder.gif").mkdir()
    cases = {
        tmp_path / "file" / "x.gif": "file is a file, so no folder can be made there",
        tmp_path / "file" / "deeper" / "x.mp4": "file is a file, so no folder can be made there",
        tmp_path / "folder.gif": "it is a directory; name a file in it",
    }
    for video, why in cases.items():
        with pytest.raises(InvalidArgument, match="`video` must be a file path this user can "):
            render_episode(tmp_path / "no log", video, which="best")  # the video is checked first
        with pytest.raises(InvalidArgument, match=why):
            render_episode(log, video, which="best")
    with pytest.raises(InvalidArgument, match=r"a directory; pass one of its logs, such as "):
        render_episode(log.parent, tmp_path / "x.gif", which="best")
    with pytest.raises(InvalidArgument, match="`log` must be an episode log file .* no such file"):
        render_episode(tmp_path / "none.jsonl", tmp_path / "x.gif", which="best")
    rendered = render_episode(log, tmp_path / "new" / "folders" / "x.gif", episode=0, scale=1)
    assert rendered.path.stat().st_size > 0  # missing folders are made


def test_a_folder_that_cannot_be_written_is_refused(log, tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    if os.geteuid() != 0:  # root writes in any folder, but not in /proc
        with pytest.raises(InvalidArgument, match="locked is not writable"):
            render_episode(log, locked / "sub" / "x.gif", which="best")
    with pytest.raises(InvalidArgument, match="`video` must be a file path this user can write"):
        render_episode(log, Path("/proc/arcadebench-clips/x.gif"), which="best")


def test_a_damaged_recording_is_a_one_line_error_and_costs_its_episode_only(log, tmp_path):
    copy = tmp_path / "0.jsonl"
    shutil.copy(log, copy)
    lines = log.with_suffix(".replay").read_text().splitlines()
    damaged = json.loads(lines[0])
    damaged["actions"] = "AAAA"  # base64, but no zlib data
    lines[0] = json.dumps(damaged)
    copy.with_suffix(".replay").write_text("\n".join(lines) + "\n")
    run = read_run(copy)
    (target,) = [e for e in run.episodes if e.key == (damaged["env"], damaged["episode"])]
    with pytest.raises(ArcadebenchError) as raised:
        render_episode(copy, tmp_path / "x.gif", episode=target.index)
    message = str(raised.value)
    assert "\n" not in message and "is damaged" in message and "not zlib data" in message
    other = next(e for e in run.episodes if e is not target)
    assert render_episode(copy, tmp_path / "y.gif", episode=other.index, scale=1).images > 1
