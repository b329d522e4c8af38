"""No-op starts in the emulator: raw no-op frames after each reset, their number seeded."""

from __future__ import annotations

import re

import numpy as np
import pytest
from ale_py import Action
from ale_py.env import AtariEnv

from arcadebench.benchmarks.envs.reload_free import ReloadFreeAtariEnv, ReloadFreeStandardAtariEnv
from arcadebench.errors import InvalidArgument
from arcadebench.wrappers.noop_starts import NoopStarts


def test_the_number_of_noop_frames_is_drawn_in_range_from_the_reset_seed():
    # the protocol's class: a seeded reset restores a saved emulator instead of reloading the ROM
    env = ReloadFreeAtariEnv("pong", noop_starts=(1, 30), repeat_action_probability=0.0)
    try:
        counts = [env.reset(seed=seed)[1]["episode_frame_number"] for seed in range(60)]
        assert min(counts) >= 1 and max(counts) <= 30
        assert len(set(counts)) >= 20  # drawn, not fixed
        assert [env.reset(seed=seed)[1]["episode_frame_number"] for seed in range(60)] == counts
        unseeded = {env.reset()[1]["episode_frame_number"] for _ in range(20)}
        assert len(unseeded) > 1  # the generator goes on between unseeded resets
    finally:
        env.close()


def test_the_reset_observation_is_the_screen_after_the_noop_frames():
    """The same as resetting a plain AtariEnv and playing the frames by hand."""
    env = NoopStarts("breakout", noop_starts=(0, 29), repeat_action_probability=0.0)
    plain = AtariEnv("breakout", repeat_action_probability=0.0)
    try:
        obs, info = env.reset(seed=5)
        frames = info["episode_frame_number"]
        plain.reset(seed=5)
        for _ in range(frames):
            plain.ale.act(Action.NOOP)
        assert np.array_equal(obs, plain.ale.getScreenRGB())
        assert np.array_equal(env.step(1)[0], plain.step(1)[0])  # and the game goes on alike
    finally:
        env.close()
        plain.close()


def test_the_standard_observation_starts_after_the_noop_frames():
    env = ReloadFreeStandardAtariEnv(
        "breakout", noop_starts=(3, 3), repeat_action_probability=0.0, frameskip=4
    )
    try:
        obs, info = env.reset(seed=0)
        assert info["episode_frame_number"] == 3
        assert obs.shape == (4, 84, 84) and all(np.array_equal(obs[0], f) for f in obs)
    finally:
        env.close()


@pytest.mark.parametrize("bad", [(5, 1), (-1, 3), (0.5, 3), "30", (1, 2, 3)])
def test_bad_noop_starts_are_named(bad):
    with pytest.raises(InvalidArgument, match=re.escape("`noop_starts` must be (least, most)")):
        NoopStarts("pong", noop_starts=bad)
