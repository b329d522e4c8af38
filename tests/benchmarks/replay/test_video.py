"""``replay``: an episode rendered from its recording, its frames the emulator's own."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from PIL import Image

import arcadebench
from arcadebench.benchmarks.replay.logs import read_run
from arcadebench.benchmarks.replay.simulate import Player
from arcadebench.benchmarks.replay.video import BAND, choose_episode, render_episode
from arcadebench.errors import ArcadebenchError, InvalidArgument

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
    player = Player(arcadebench.load_spec("saber"), run.header, obs_type="rgb")
    screens = []
    try:
        player.play(episode.replay, None, lambda obs, *_: screens.append(np.asarray(obs)))
    finally:
        player.close()
    return screens


def game_pixels(image):
    """The game's screen in a rendered image: below the band, scaled back down."""
    return image[BAND:][::2, ::2]


def test_replay_best_writes_a_playable_mp4_of_the_emulators_frames(log, tmp_path):
    rendered = render_episode(log, tmp_path / "best.mp4", which="best")
    run = read_run(log)
    best = max(run.episodes, key=lambda e: e.record["return"])
    assert rendered.episode == best.name and rendered.episode_return == best.record["return"]
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
    last = choose_episode(run, which="last")
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


def test_an_episode_is_chosen_by_its_number_and_bad_requests_are_one_line(log, tmp_path):
    rendered = render_episode(log, tmp_path / "one.mkv", episode=1)
    assert rendered.episode.endswith("index 1") and rendered.path.stat().st_size > 0
    with pytest.raises(ArcadebenchError, match="has no recorded episode 7; it has 3"):
        render_episode(log, tmp_path / "x.mp4", episode=7)
    with pytest.raises(InvalidArgument, match=r"`video` must end in \.mp4, \.mkv, \.gif"):
        render_episode(log, tmp_path / "x.avi", which="best")
