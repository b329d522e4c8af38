"""Episode boundaries on real ale-py games (and Airstriker for the step limit): stuck time in
frames, frame caps as truncations with their reason, no life information, the non-compliant
episodic-life trick."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from ale_py.env import AtariEnv
from wrapper_helpers import RewardInjector

import arcadebench  # noqa: F401  (registers the ids)
from arcadebench.errors import NonCompliantWarning
from arcadebench.wrappers import (
    EpisodeFrameLimit,
    EpisodicLife,
    InvalidArgument,
    LifeLossTerminal,
    MaxStuckTime,
    NoLifeInformation,
    StickyFrameSkip,
    TimeLimit,
)

PROTOCOL_IDS = [
    "arcadebench/SABER-Breakout-v0",
    "arcadebench/HWR-Breakout-v0",
    "arcadebench/Atari5-Breakout-v0",
]


def run_episode(env, policy, seed=0, max_steps=100_000):
    _, info = env.reset(seed=seed)
    steps = 0
    while steps < max_steps:
        _, reward, terminated, truncated, info = env.step(policy(steps))
        steps += 1
        if terminated or truncated:
            return steps, terminated, truncated, info
    raise AssertionError("episode did not end")


# --- MaxStuckTime ---------------------------------------------------------------------------


def test_a_noop_agent_in_saber_breakout_is_stuck_after_exactly_18000_frames():
    env = gym.make("arcadebench/SABER-Breakout-v0")
    try:
        steps, terminated, truncated, info = run_episode(env, lambda _: 0)  # never FIRE
        assert (steps, terminated, truncated) == (4500, False, True)
        assert info["episode_frame_number"] == 18_000
        assert info["arcadebench"]["stuck_frames"] == 18_000
        assert info["arcadebench"]["end_reason"] == "stuck"
    finally:
        env.close()


def test_stuck_frames_count_frames_since_the_last_nonzero_reward():
    env = MaxStuckTime(AtariEnv("pong", frameskip=4, repeat_action_probability=0.25), 100_000)
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=0)
        last_reward_frame, rewarded = 0, 0
        for _ in range(600):
            _, reward, terminated, truncated, info = env.step(int(rng.integers(6)))
            if reward != 0:
                last_reward_frame, rewarded = info["episode_frame_number"], rewarded + 1
            assert (
                info["arcadebench"]["stuck_frames"]
                == info["episode_frame_number"] - last_reward_frame
            )
        assert rewarded >= 3
    finally:
        env.close()


def test_a_reward_just_before_the_limit_restarts_the_count():
    # a reward on step 99 (frame 400): the NOOP episode now ends at frame 400 + 18,000
    env = MaxStuckTime(RewardInjector(AtariEnv("breakout", frameskip=4), {99: 1.0}), 18_000)
    try:
        steps, terminated, truncated, info = run_episode(env, lambda _: 0)
        assert (steps, truncated, info["episode_frame_number"]) == (4600, True, 18_400)
    finally:
        env.close()


def test_a_game_over_on_the_stuck_frame_stays_a_termination():
    # FIRE only in Breakout: no brick is ever hit, and the game is over at frame 485
    def fire_only(env):
        return run_episode(env, lambda _: 1)

    plain = AtariEnv("breakout", frameskip=4, repeat_action_probability=0.0)
    try:
        frames = fire_only(plain)[3]["episode_frame_number"]
    finally:
        plain.close()
    assert frames == 485
    env = MaxStuckTime(AtariEnv("breakout", frameskip=4, repeat_action_probability=0.0), frames)
    try:
        steps, terminated, truncated, info = fire_only(env)
        assert info["arcadebench"]["stuck_frames"] == frames  # the limit is reached on this step...
        assert (terminated, truncated) == (True, False)  # ...but the game ended: no "stuck"
        assert "end_reason" not in info["arcadebench"]
    finally:
        env.close()


# --- EpisodeFrameLimit ------------------------------------------------------------------------


def test_the_native_frame_cap_truncates_and_is_labelled_frame_limit():
    with pytest.warns(NonCompliantWarning, match="max_episode_frames=400"):
        env = gym.make("arcadebench/HWR-Pong-v0", max_episode_frames=400)
    try:
        assert env.unwrapped.ale.getInt("max_num_frames_per_episode") == 400
        steps, terminated, truncated, info = run_episode(env, lambda _: 0)
        assert (steps, terminated, truncated, info["episode_frame_number"]) == (
            100,
            False,
            True,
            400,
        )
        assert info["arcadebench"]["end_reason"] == "frame_limit"
    finally:
        env.close()


def test_the_wrapper_truncates_at_the_first_step_reaching_the_cap_without_a_native_cap():
    env = EpisodeFrameLimit(AtariEnv("pong", frameskip=3), max_episode_frames=400)
    try:
        steps, terminated, truncated, info = run_episode(env, lambda _: 0)
        assert (steps, terminated, truncated, info["episode_frame_number"]) == (
            134,
            False,
            True,
            402,
        )
        assert info["arcadebench"] == {"end_reason": "frame_limit"}
    finally:
        env.close()


def test_a_game_over_is_a_termination_with_no_limit_reason():
    env = gym.make("arcadebench/HWR-Breakout-v0")
    rng = np.random.default_rng(0)
    try:
        steps, terminated, truncated, info = run_episode(env, lambda _: int(rng.integers(18)))
        assert terminated and not truncated
        # no limit wrapper claims it (the monitor, outermost, records "game_over")
        assert info["arcadebench"].get("end_reason", "game_over") == "game_over"
    finally:
        env.close()


@pytest.mark.parametrize(
    ("id", "cap"),
    [
        ("arcadebench/SABER-Pong-v0", 21_600_000),
        ("arcadebench/HWR-Pong-v0", 108_000),
        ("arcadebench/Atari5-Phoenix-v0", 108_000),
    ],
)
def test_each_protocol_caps_its_episodes_natively_and_in_the_wrapper(id, cap):
    env = gym.make(id)
    try:
        assert env.unwrapped.ale.getInt("max_num_frames_per_episode") == cap
        limits = [w.kwargs for w in env.spec.additional_wrappers if w.name == "EpisodeFrameLimit"]
        assert limits == [{"max_episode_frames": cap}]
    finally:
        env.close()


# --- TimeLimit (the Sonic step limit), on Airstriker -------------------------------------------


def test_the_step_limit_truncates_after_max_episode_steps_and_says_time_limit(retro_env):
    env = TimeLimit(StickyFrameSkip(retro_env), max_episode_steps=5)
    env.reset(seed=0)
    ends = [env.step(np.zeros(12, np.uint8)) for _ in range(5)]
    assert [e[3] for e in ends] == [False] * 4 + [True]
    assert not any(e[2] for e in ends)
    assert ends[-1][4]["arcadebench"] == {"end_reason": "time_limit"}
    assert ends[-1][4]["episode_frame_number"] == 20
    assert "arcadebench" not in ends[-2][4]


# --- life information --------------------------------------------------------------------------


@pytest.mark.parametrize("id", PROTOCOL_IDS)
def test_lives_are_absent_from_info_in_every_atari_protocol(id):
    env = gym.make(id)
    try:
        _, info = env.reset(seed=0)
        assert "lives" not in info
        for _ in range(20):
            info = env.step(env.action_space.sample())[4]
            assert "lives" not in info
        assert env.unwrapped.ale.lives() == 5  # the game still has them; the agent is not told
    finally:
        env.close()


def test_no_life_information_leaves_episodes_to_game_over():
    env = NoLifeInformation(AtariEnv("breakout", frameskip=4, repeat_action_probability=0.0))
    try:
        env.reset(seed=0)
        lives = []
        while True:
            _, _, terminated, truncated, info = env.step(1)  # FIRE only: every ball is lost
            lives.append(env.unwrapped.ale.lives())
            if terminated or truncated:
                break
        assert terminated and lives[-1] == 0 and len(set(lives)) == 6  # 5 lives lost, one episode
    finally:
        env.close()


def test_episodic_life_warns_and_ends_episodes_at_each_life_loss():
    with pytest.warns(NonCompliantWarning, match="EpisodicLife ends episodes on life loss"):
        env = EpisodicLife(NoLifeInformation(AtariEnv("breakout", repeat_action_probability=0.0)))
    try:
        env.reset(seed=0)
        reasons, lives = [], []
        for _ in range(5):
            steps, terminated, truncated, info = run_episode(env, lambda _: 1, seed=None)
            reasons.append(info.get("arcadebench", {}).get("end_reason"))
            lives.append(env.unwrapped.ale.lives())
        assert reasons == ["life_lost"] * 4 + [None]  # the fifth is the real game over
        assert lives == [4, 3, 2, 1, 0]
        env.reset()
        assert env.unwrapped.ale.lives() == 5  # after game over, a real reset
    finally:
        env.close()


def test_a_lost_life_ends_the_learners_episode_and_the_game_goes_on():
    """DQN 2015 and Atari 100k training: life_lost episodes, one game, no frame counted twice."""
    env = LifeLossTerminal(NoLifeInformation(AtariEnv("breakout", repeat_action_probability=0.0)))
    try:
        _, info = env.reset(seed=0)
        assert info["episode_frame_number"] == 0
        episodes = []
        for _ in range(5):
            steps, terminated, truncated, info = run_episode(env, lambda _: 1, seed=None)
            episodes.append(
                (info.get("arcadebench", {}).get("end_reason"), env.unwrapped.ale.lives())
            )
            assert terminated and not truncated
            # each learner episode's own frames (a game over ends the last step's frames early)
            assert 4 * (steps - 1) < info["episode_frame_number"] <= 4 * steps
        assert episodes == [
            ("life_lost", 4),
            ("life_lost", 3),
            ("life_lost", 2),
            ("life_lost", 1),
        ] + [(None, 0)]
        assert env.unwrapped.ale.getEpisodeFrameNumber() > 4 * steps  # one game all along
        _, info = env.reset()
        assert env.unwrapped.ale.lives() == 5 and info["episode_frame_number"] == 0  # new game
        run_episode(env, lambda _: 1, seed=None)  # a life lost, then a seeded reset: a new game
        env.reset(seed=1)
        assert env.unwrapped.ale.lives() == 5
    finally:
        env.close()


# --- arguments -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda env: MaxStuckTime(env, 0), "`max_stuck_frames` must be an integer >= 1, got 0"),
        (
            lambda env: EpisodeFrameLimit(env, "1h"),
            "`max_episode_frames` must be an integer >= 1, got '1h'",
        ),
        (lambda env: TimeLimit(env, -1), "`max_episode_steps` must be an integer >= 1, got -1"),
    ],
)
def test_bad_arguments_are_named(make, message):
    env = AtariEnv("pong")
    try:
        with pytest.raises(InvalidArgument, match=re.escape(message)):
            make(env)
    finally:
        env.close()


def test_frame_rules_need_the_frame_counter(retro_env):
    env = MaxStuckTime(retro_env, 18_000)  # a raw RetroEnv has no episode_frame_number
    env.reset(seed=0)
    with pytest.raises(
        InvalidArgument, match=re.escape("info['episode_frame_number'] for MaxStuckTime")
    ):
        env.step(np.zeros(12, np.uint8))
