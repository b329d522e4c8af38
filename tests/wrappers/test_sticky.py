"""StickyFrameSkip on stable-retro's Airstriker: the statistics of the delay, reproducibility,
mid-skip ends, the frame counter; and the retro wrapper stack through Gymnasium's checker and an
async vector env."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.wrappers import TimeLimit as GymTimeLimit
from wrapper_helpers import ActionRecorder, button_code, register_airstriker

from arcadebench.wrappers import InvalidArgument, StickyFrameSkip


def distinct_actions(rng, count):
    """``count`` random 12-button vectors, each different from the one before it."""
    codes = [int(rng.integers(4096))]
    while len(codes) < count:
        code = int(rng.integers(4096))
        if code != codes[-1]:
            codes.append(code)
    return [((code >> np.arange(12)) & 1).astype(np.uint8) for code in codes]


def test_first_frames_are_delayed_with_probability_one_quarter_and_later_frames_never(retro_env):
    recorder = ActionRecorder(retro_env)
    env = StickyFrameSkip(recorder, n=4, stickprob=0.25)
    actions = distinct_actions(np.random.default_rng(1), 4_000)
    env.reset(seed=123)
    previous, first_step, episode_steps = None, True, 0
    delayed = eligible = first_steps = mid_skip_ends = 0
    frames_since_reset = 0
    for action in actions:
        new = button_code(action)
        start = len(recorder.actions)
        _, _, terminated, truncated, info = env.step(action)
        played, ends = recorder.actions[start:], recorder.ends[start:]
        frames_since_reset += len(played)
        assert info["episode_frame_number"] == frames_since_reset
        # frames after the first always play the new action
        assert played[1:] == [new] * (len(played) - 1)
        if first_step:
            first_steps += 1
            assert played[0] == new  # never sticky on the first step after reset
        else:
            eligible += 1
            assert played[0] in (new, previous)
            delayed += played[0] == previous
        # a step plays 4 frames unless the episode ends, and then it stops at that frame
        assert ends == [False] * (len(played) - 1) + [terminated or truncated]
        if not (terminated or truncated):
            assert len(played) == 4
        elif len(played) < 4:
            mid_skip_ends += 1
        previous, first_step = new, False
        episode_steps += 1
        if terminated or truncated or episode_steps == 500:
            env.reset()  # unseeded: the generator continues
            first_step, episode_steps, frames_since_reset = True, 0, 0
    # about 3,980 eligible steps: the standard error of the share is 0.0069, so this is 3.6 of them
    assert abs(delayed / eligible - 0.25) <= 0.025
    assert first_steps >= 8 and mid_skip_ends >= 1, (first_steps, mid_skip_ends)


def play(env, recorder, seed, actions):
    start = len(recorder.actions)
    env.reset(seed=seed)
    for action in actions:
        if any(env.step(action)[2:4]):
            env.reset()
    return recorder.actions[start:]


def test_the_same_seed_applies_the_same_frame_actions(retro_env):
    recorder = ActionRecorder(retro_env)
    env = StickyFrameSkip(recorder)
    actions = distinct_actions(np.random.default_rng(2), 300)
    first = play(env, recorder, 7, actions)
    assert play(env, recorder, 7, actions) == first
    assert play(env, recorder, 8, actions) != first
    assert len(first) == 1200


def test_an_episode_ending_mid_skip_stops_at_that_frame(retro_env):
    recorder = ActionRecorder(retro_env)
    env = StickyFrameSkip(GymTimeLimit(recorder, max_episode_steps=6), n=4)
    _, info = env.reset(seed=0)
    assert info["episode_frame_number"] == 0
    action = np.zeros(12, np.uint8)
    assert env.step(action)[3] is False
    _, _, terminated, truncated, info = env.step(action)
    assert (terminated, truncated, info["episode_frame_number"], len(recorder.actions)) == (
        False,
        True,
        6,
        6,
    )


def test_rewards_of_the_frames_are_summed(retro_env):
    env = StickyFrameSkip(retro_env, n=4, stickprob=0.0)  # no delay: frames = the action x 4
    actions = distinct_actions(np.random.default_rng(3), 250)
    env.reset(seed=0)
    step_rewards = [env.step(action)[1] for action in actions]
    retro_env.reset(seed=0)  # replay the same 1,000 frames one by one
    frame_rewards = [retro_env.step(action)[1] for action in actions for _ in range(4)]
    assert step_rewards == [sum(frame_rewards[i : i + 4]) for i in range(0, 1000, 4)]
    assert sum(step_rewards) > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "`n` must be an integer >= 1, got 0"),
        ({"n": 4.0}, "`n` must be an integer >= 1, got 4.0"),
        ({"stickprob": 1.5}, "`stickprob` must be a probability in [0, 1], got 1.5"),
    ],
)
def test_bad_arguments_are_named(retro_env, kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        StickyFrameSkip(retro_env, **kwargs)


# --- the retro wrapper stack (Airstriker stands in for Sonic, whose ROMs do not ship) ---------


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped")
def test_check_env_passes_for_airstriker_with_the_retro_wrappers():
    env = gym.make(register_airstriker())
    try:
        # the render check would open a window (render_mode "human") and the close check makes a
        # second emulator, which stable-retro forbids in one process
        check_env(env, skip_render_check=True, skip_close_check=True)
        assert [w.name for w in env.spec.additional_wrappers] == [
            "StickyFrameSkip",
            "ButtonDiscretizer",
            "TimeLimit",
        ]
        assert env.spec.additional_wrappers[0].kwargs == {"n": 4, "stickprob": 0.25}
    finally:
        env.close()


def test_an_async_vector_env_runs_one_emulator_per_worker():
    envs = gym.make_vec(register_airstriker(), num_envs=2, vectorization_mode="async")
    try:
        obs, info = envs.reset(seed=[1, 2])
        assert obs.shape == (2, 224, 320, 3)
        for step in range(1, 6):
            obs, reward, terminated, truncated, info = envs.step(np.array([2, 7]))
            assert info["episode_frame_number"].tolist() == [4 * step, 4 * step]
    finally:
        envs.close()


@pytest.mark.filterwarnings("ignore:.*different from the unwrapped")
def test_the_whole_sonic_stack_in_the_documented_order_passes_check_env(tmp_path):
    env = gym.make(register_airstriker(), contest_dir=str(tmp_path), step_limit=30)
    try:
        check_env(env, skip_render_check=True, skip_close_check=True)
        assert [w.name for w in env.spec.additional_wrappers] == [
            "SonicProgressReward",
            "StickyFrameSkip",
            "ButtonDiscretizer",
            "TimeLimit",
        ]
        env.reset(seed=0)
        for _ in range(30):
            _, reward, terminated, truncated, info = env.step(2)
        # Airstriker never moves the Sonic x it does not know about: no progress, 30 steps, cut
        assert (reward, terminated, truncated) == (0.0, False, True)
        assert info["episode_frame_number"] == 120
        assert info["arcadebench"] == {"progress": 0.0, "end_reason": "time_limit"}
    finally:
        env.close()
