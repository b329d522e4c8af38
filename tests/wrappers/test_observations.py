"""Standard observations: the Atari mode equals Gymnasium's AtariPreprocessing + frame stack on
the same seed and actions without touching the protocol; the retro composition equals the
baselines' WarpFrame + stack."""

from __future__ import annotations

import re
import warnings

import cv2
import gymnasium as gym
import numpy as np
import pytest
from ale_py.env import AtariEnv
from fuzzing import fuzz
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation, GrayscaleObservation
from hypothesis import given
from hypothesis import strategies as st

import arcadebench  # noqa: F401  (registers the ids)
from arcadebench.wrappers import (
    CvGrayscaleObservation,
    InvalidArgument,
    StandardAtariEnv,
    standard_retro_observations,
)
from arcadebench.wrappers.observations import _BandedAreaResize

NATIVE = {
    "repeat_action_probability": 0.25,
    "full_action_space": True,
    "max_num_frames_per_episode": 108_000,
}


def reference(game, frameskip=4, **native):
    """Gymnasium's pipeline over a one-frame-per-step AtariEnv with the same ALE settings."""
    env = AtariEnv(game, frameskip=1, **(NATIVE | native))
    env = AtariPreprocessing(
        env, frame_skip=frameskip, noop_max=0, screen_size=84, terminal_on_life_loss=False
    )
    return FrameStackObservation(env, 4)


def compare(ours, theirs, actions, seed):
    """Step both with ``actions``; assert equal up to the episode's end; return steps compared."""
    obs_a, info_a = ours.reset(seed=seed)
    obs_b, info_b = theirs.reset(seed=seed)
    assert np.array_equal(obs_a, obs_b)
    for step, action in enumerate(actions, 1):
        obs_a, r_a, term_a, trunc_a, info_a = ours.step(action)
        obs_b, r_b, term_b, trunc_b, info_b = theirs.step(action)
        assert (r_a, term_a, trunc_a) == (r_b, term_b, trunc_b), step
        assert info_a["episode_frame_number"] == info_b["episode_frame_number"], step
        if term_a or trunc_a:
            # AtariPreprocessing stops mid-skip on a terminal frame and keeps stale buffers;
            # ale-py stops emulating there: the last observation may differ, nothing else does
            return step
        assert np.array_equal(obs_a, obs_b), step
    return len(actions)


@pytest.mark.parametrize("game", ["pong", "asteroids", "space_invaders"])  # the last two flicker
def test_standard_atari_env_equals_atari_preprocessing_plus_frame_stack(game):
    ours = StandardAtariEnv(game, frameskip=4, **NATIVE)
    theirs = reference(game)
    rng = np.random.default_rng(0)
    try:
        steps = compare(ours, theirs, rng.integers(18, size=400), seed=3)
        assert steps == 400
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("game", ["breakout", "seaquest", "ms_pacman", "qbert"])
def test_the_banded_resize_gives_opencvs_frames_in_more_games(game):
    """Every observation's newest frame is cv2.resize(max of the last two grayscale frames)."""
    ours = StandardAtariEnv(game, frameskip=4, **NATIVE)
    plain = AtariEnv(game, frameskip=1, obs_type="grayscale", **NATIVE)
    rng = np.random.default_rng(1)
    try:
        ours.reset(seed=2)
        plain.reset(seed=2)
        for _ in range(600):
            action = int(rng.integers(18))
            frames = [plain.step(action)[0] for _ in range(4)]
            obs, _, terminated, truncated, _ = ours.step(action)
            if terminated or truncated:
                break
            pooled = np.maximum(frames[-1], frames[-2])
            expected = cv2.resize(pooled, (84, 84), interpolation=cv2.INTER_AREA)
            assert np.array_equal(obs[-1], expected)
    finally:
        ours.close()
        plain.close()


@pytest.mark.parametrize("size", [42, 64, 84, 100])  # 42, 2 and 42 bands; 100: none (10 rows/band)
def test_other_screen_sizes_resize_like_opencv(size):
    ours = StandardAtariEnv("space_invaders", frameskip=4, screen_size=size, **NATIVE)
    plain = AtariEnv("space_invaders", frameskip=1, obs_type="grayscale", **NATIVE)
    try:
        ours.reset(seed=0)
        plain.reset(seed=0)
        for action in np.random.default_rng(2).integers(6, size=150).tolist():
            frames = [plain.step(action)[0] for _ in range(4)]
            obs = ours.step(action)[0]
            expected = cv2.resize(
                np.maximum(frames[-1], frames[-2]), (size, size), interpolation=cv2.INTER_AREA
            )
            assert np.array_equal(obs[-1], expected)
    finally:
        ours.close()
        plain.close()


@fuzz(300)
@given(
    seed=st.integers(0, 2**32 - 1),
    changes=st.lists(st.tuples(st.integers(0, 209), st.integers(1, 40)), max_size=12),
)
def test_banded_updates_equal_whole_resizes(seed, changes):
    """Random frames changed in random row ranges: few bands, many runs, most of the frame."""
    rng = np.random.default_rng(seed)
    previous = rng.integers(0, 256, (210, 160), dtype=np.uint8)
    frame = previous.copy()
    for start, rows in changes:
        frame[start : start + rows] = rng.integers(0, 256, (min(rows, 210 - start), 160))
    resize = _BandedAreaResize(210, 160, 84)
    out = cv2.resize(previous, (84, 84), interpolation=cv2.INTER_AREA)
    resize.update(frame, previous, out)
    assert np.array_equal(out, cv2.resize(frame, (84, 84), interpolation=cv2.INTER_AREA))


def test_bands_are_used_only_where_they_are_exact():
    assert _BandedAreaResize(210, 160, 84)._bands == 42
    assert _BandedAreaResize(210, 160, 64)._bands == 2
    assert _BandedAreaResize(210, 160, 100)._bands == 0  # 10 output rows a band: not dyadic
    assert _BandedAreaResize(210, 160, 210)._bands == 0  # no resize at all: one row a band


def test_it_equals_the_reference_up_to_a_game_over_too():
    ours = StandardAtariEnv(
        "breakout", frameskip=4, **(NATIVE | {"repeat_action_probability": 0.0})
    )
    theirs = reference("breakout", repeat_action_probability=0.0)
    try:
        assert compare(ours, theirs, [1] * 200, seed=0) == 122  # FIRE only: over at frame 485
    finally:
        ours.close()
        theirs.close()


def test_frameskip_one_has_no_max_pool():
    ours = StandardAtariEnv("asteroids", frameskip=1, **NATIVE)
    theirs = reference("asteroids", frameskip=1)
    try:
        assert compare(ours, theirs, np.random.default_rng(1).integers(18, size=200), seed=5) == 200
    finally:
        ours.close()
        theirs.close()


def test_the_standard_mode_does_not_change_the_protocol():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NonCompliantWarning: obs_type is not a protocol setting
        standard = gym.make("arcadebench/SABER-Breakout-v0", obs_type="standard")
    rgb = gym.make("arcadebench/SABER-Breakout-v0")
    rng = np.random.default_rng(2)
    try:
        assert standard.observation_space.shape == (4, 84, 84)
        assert [w.name for w in standard.spec.additional_wrappers] == [
            w.name for w in rgb.spec.additional_wrappers
        ]
        ale_a, ale_b = standard.unwrapped.ale, rgb.unwrapped.ale
        for key in ("repeat_action_probability",):
            assert ale_a.getFloat(key) == ale_b.getFloat(key) == 0.25
        assert ale_a.getInt("max_num_frames_per_episode") == ale_b.getInt(
            "max_num_frames_per_episode"
        )
        assert standard.reset(seed=4)[1].keys() == rgb.reset(seed=4)[1].keys()
        for action in rng.integers(18, size=500):
            a = standard.step(action)
            b = rgb.step(action)
            assert a[1:4] == b[1:4]
            assert a[4]["episode_frame_number"] == b[4]["episode_frame_number"]
            assert a[4]["arcadebench"] == b[4]["arcadebench"]
            assert "lives" not in a[4]
            if a[2] or a[3]:
                break
    finally:
        standard.close()
        rgb.close()


def test_observations_are_fresh_arrays():
    env = StandardAtariEnv("pong")
    try:
        first, _ = env.reset(seed=0)
        kept = first.copy()
        second = env.step(0)[0]
        env.step(0)
        assert np.array_equal(first, kept) and second is not first
        assert np.array_equal(second[:3], first[1:])  # the stack shifts by one frame per step
    finally:
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"obs_type": "rgb"}, "`obs_type` must be left out for StandardAtariEnv, got 'rgb'"),
        ({"continuous": True}, "`continuous` must be False for StandardAtariEnv, got True"),
        ({"frameskip": (2, 5)}, "`frameskip` must be an integer >= 1, got (2, 5)"),
        ({"screen_size": 0}, "`screen_size` must be an integer >= 1, got 0"),
    ],
)
def test_standard_atari_env_rejects_what_it_does_not_support(kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        StandardAtariEnv("pong", **kwargs)


# --- stable-retro (Sonic baselines) ----------------------------------------------------------


def warp(frame):
    """baselines' WarpFrame: OpenCV luma, then INTER_AREA to 84x84."""
    return cv2.resize(
        cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY), (84, 84), interpolation=cv2.INTER_AREA
    )


def test_retro_observations_are_warp_frame_stacked_by_four(retro_env):
    env = standard_retro_observations(retro_env)
    obs, _ = env.reset(seed=0)
    reset_frame = warp(retro_env.get_screen())
    assert obs.shape == (4, 84, 84) and all(np.array_equal(f, reset_frame) for f in obs)
    rng = np.random.default_rng(0)
    frames = [reset_frame]
    for _ in range(6):
        obs = env.step(rng.integers(0, 2, 12).astype(np.uint8))[0]
        frames.append(warp(retro_env.get_screen()))
        assert np.array_equal(obs[-1], frames[-1])
    assert np.array_equal(obs, np.stack(frames[-4:]))


def test_opencv_grayscale_is_not_gymnasiums(retro_env):
    ours = CvGrayscaleObservation(retro_env)
    frame = ours.reset(seed=0)[0]
    rgb = retro_env.get_screen()
    assert np.array_equal(frame, cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    gymnasium_gray = GrayscaleObservation(retro_env).observation(rgb)
    assert not np.array_equal(frame, gymnasium_gray)
    with pytest.raises(
        InvalidArgument, match=re.escape("`env` must have (height, width, 3) RGB observations")
    ):
        CvGrayscaleObservation(ours)
