"""Rewards: the SABER rollover guard on real ale-py games, the Sonic contest reward on scripted
RAM traces and against stable-retro's own contest script.lua, and the opt-in shaping."""

from __future__ import annotations

import re

import gymnasium as gym
import numpy as np
import pytest
from ale_py.env import AtariEnv
from gymnasium.wrappers import ClipReward
from hypothesis import given, settings
from hypothesis import strategies as st
from wrapper_helpers import (
    SONIC_GAMES,
    InnerReward,
    RamWriter,
    RewardInjector,
    TraceEnv,
    contest_airstriker,
    level_max_x,
    run_trace,
)

import arcadebench  # noqa: F401  (registers the ids)
from arcadebench.benchmarks.envs.sonic import progress_reward
from arcadebench.specs import load_spec
from arcadebench.wrappers import (
    AllowBacktracking,
    ContestProgress,
    InvalidArgument,
    RolloverGuard,
    SonicProgressReward,
)

SONIC = load_spec("sonic")
START = {"x": 100, "zone": 0, "act": 0, "lives": 3, "screen_x": 0}
END_X = 1100  # a 1,000-pixel level starting at x = 100


# the contest reward's settings (sonic.yaml environment.reward; Section 3.8)
CONTEST = {
    "progress_scale": SONIC.environment.progress_scale,
    "completion_bonus": SONIC.environment.completion_bonus,
    "bonus_horizon_frames": SONIC.environment.bonus_horizon_frames,
}


def sonic(frames, reset_ram=START, **kwargs):
    kwargs.setdefault("level_end_x", {(0, 0): END_X})
    kwargs = CONTEST | kwargs
    return SonicProgressReward(TraceEnv(reset_ram, frames), **kwargs)


def asterix_near_rollover(env):
    """Set Asterix's BCD score (RAM 0xDE, 0xDF, 0xE0) to 999,950; it soon wraps past 999,999."""
    for address, value in ((0xDE, 0x99), (0xDF, 0x99), (0xE0, 0x50)):
        env.unwrapped.ale.setRAM(address - 0x80, value)


# --- RolloverGuard ----------------------------------------------------------------------------


SABER_ROLLOVER = {"threshold": -900_000.0, "correction": 1_000_000.0}


def test_an_injected_wrap_is_corrected_and_recorded():
    env = RolloverGuard(
        RewardInjector(AtariEnv("pong", frameskip=4), {3: -999_975.0, 5: -900_000.0}),
        **SABER_ROLLOVER,
    )
    try:
        env.reset(seed=0)
        steps = [env.step(0) for _ in range(7)]
        assert [s[1] for s in steps] == [0.0, 0.0, 0.0, 25.0, 0.0, -900_000.0, 0.0]
        assert steps[3][4]["arcadebench"]["rollover_rewards"] == [-999_975.0]
        # -900,000 is not *below* the threshold; steps without a rollover carry no record
        assert all(
            "rollover_rewards" not in s[4].get("arcadebench", {})
            for i, s in enumerate(steps)
            if i != 3
        )
        assert env.episode_rollovers == 1
        env.reset(seed=0)
        assert env.episode_rollovers == 0
    finally:
        env.close()


def play_asterix_to_rollover(env_id):
    env = gym.make(env_id)
    try:
        env.reset(seed=0)
        asterix_near_rollover(env)
        rewards, infos = [], []
        for _ in range(200):
            _, reward, terminated, truncated, info = env.step(1)
            rewards.append(reward)
            infos.append(info)
            if reward < -1000 or "rollover_rewards" in info.get("arcadebench", {}):
                break
        return rewards, infos
    finally:
        env.close()


def test_a_real_asterix_score_wrap_yields_the_true_increment_in_the_saber_env():
    rewards, infos = play_asterix_to_rollover("arcadebench/SABER-Asterix-v0")
    assert rewards[0] == 999_950.0  # the RAM edit itself shows as one large positive reward
    # 999,950 + 50 wraps to 0: the emulator reports -999,950, the agent scored 50
    assert rewards[-1] == 50.0
    assert infos[-1]["arcadebench"]["rollover_rewards"] == [-999_950.0]


@pytest.mark.parametrize(
    ("game", "penalty"),
    [("Skiing", -9000.0), ("JourneyEscape", -2000.0)],  # missed gates; a collision
)
def test_genuine_rewards_below_minus_1000_reach_the_saber_return_unchanged(game, penalty):
    # Appendix C's "-1,000" wording would drop these; the authors' code (and this spec) keeps them
    protocol = gym.make(f"arcadebench/SABER-{game}-v0")
    raw = gym.make(
        f"ALE/{game}-v5", full_action_space=True, repeat_action_probability=0.25, frameskip=4
    )
    try:
        protocol.reset(seed=0)
        raw.reset(seed=0)
        actions = np.random.default_rng(0).integers(protocol.action_space.n, size=20_000)
        ours, theirs = [], []
        for action in actions.tolist():
            _, reward, terminated, truncated, info = protocol.step(action)
            ours.append(reward)
            theirs.append(raw.step(action)[1])
            if terminated or truncated:
                break
        assert info["arcadebench"]["end_reason"] == "game_over"
        assert ours == theirs and penalty in ours
        assert "rollover_rewards" not in info["arcadebench"]
    finally:
        protocol.close()
        raw.close()


def test_protocols_without_the_guard_pass_the_rollover_through():
    rewards, infos = play_asterix_to_rollover("arcadebench/HWR-Asterix-v0")
    assert rewards[-1] == -999_950.0
    assert "rollover_rewards" not in infos[-1].get("arcadebench", {})


def test_rollover_guard_rejects_a_bad_threshold_or_correction():
    with pytest.raises(
        InvalidArgument, match=re.escape("`threshold` must be a finite number, got 'x'")
    ):
        RolloverGuard(AtariEnv("pong"), threshold="x", correction=1e6)
    with pytest.raises(
        InvalidArgument, match=re.escape("`correction` must be a finite number, got inf")
    ):
        RolloverGuard(AtariEnv("pong"), threshold=-9e5, correction=float("inf"))


# --- SonicProgressReward on scripted RAM traces ----------------------------------------------


def test_a_level_finished_on_the_first_frame_returns_10000_minus_one_frame_of_bonus():
    rewards, terminated, info, steps = run_trace(sonic([{"x": END_X}]))
    assert steps == 1 and terminated
    assert info["arcadebench"] == {"progress": 1.0, "end_reason": "level_complete"}
    assert sum(rewards) == pytest.approx(10_000 - 1000 / 18_000, abs=1e-9)  # 9999.944...


def test_an_instant_finish_frame_zero_is_worth_exactly_10000():
    rule = ContestProgress({(0, 0): END_X}, **CONTEST)
    rule.reset(START)
    reward, done, reason, progress = rule.update(START | {"x": END_X}, frame=0)
    assert (reward, done, reason, progress) == (10_000.0, True, "level_complete", 1.0)


def test_finishing_early_earns_the_linearly_decaying_bonus():
    frames = [{"x": 100 + 10 * i} for i in range(1, 101)]  # reaches 1100 on frame 100
    rewards, terminated, info, steps = run_trace(sonic(frames))
    assert steps == 100 and terminated
    assert sum(rewards) == pytest.approx(9000 + 1000 * (1 - 100 / 18_000))
    assert rewards[0] == pytest.approx(90.0)


def test_finishing_at_the_limit_earns_no_bonus():
    frames = [{"x": 100}] * 17_999 + [{"x": END_X}]
    rewards, terminated, info, steps = run_trace(sonic(frames))
    assert steps == 18_000 and terminated
    assert sum(rewards) == pytest.approx(9000.0)
    assert rewards[-1] == pytest.approx(9000.0)


def test_going_backwards_is_negative_and_floored_at_the_start():
    frames = [{"x": 600}, {"x": 300}, {"x": 40}, {"x": -50}, {"x": 350}]
    rewards, terminated, info, _ = run_trace(sonic(frames), steps=5)
    assert rewards == pytest.approx([4500, -2700, -1800, 0, 2250])
    assert not terminated
    assert info["arcadebench"]["progress"] == pytest.approx(0.25)


def test_losing_a_life_ends_the_episode_below_9000():
    frames = [{"x": 900}, {"x": 1000}, {"x": 1050, "lives": 2}]
    rewards, terminated, info, steps = run_trace(sonic(frames))
    assert steps == 3 and terminated
    assert info["arcadebench"]["end_reason"] == "life_lost"
    assert sum(rewards) == pytest.approx(9000 * 0.95)


def test_a_life_gained_is_not_a_life_lost():
    frames = [{"x": 200, "lives": 4}, {"x": 300, "lives": 4}]
    _, terminated, _, steps = run_trace(sonic(frames), steps=2)
    assert steps == 2 and not terminated


def test_the_bonus_stage_and_special_stage_end_the_episode_as_special_stage():
    s2 = sonic(
        [{"x": 200}, {"x": 200, "game_mode": 16}],
        START | {"game_mode": 12},
        end_when={"game_mode": 16},
    )
    rewards, terminated, info, steps = run_trace(s2)
    assert steps == 2 and terminated and info["arcadebench"]["end_reason"] == "special_stage"
    s3k = sonic(
        [{"x": 200}, {"x": 200, "special_stage": 1}],
        START | {"special_stage": 0},
        end_when_not={"special_stage": 0},
    )
    _, terminated, info, steps = run_trace(s3k)
    assert steps == 2 and terminated and info["arcadebench"]["end_reason"] == "special_stage"


def test_s3k_act_change_shifts_the_origin_by_the_screen_jump():
    # Mid-level act change (S3K): x and screen_x jump back together by 0x2000
    start = {"x": 0x100, "zone": 0, "act": 0, "lives": 3, "screen_x": 0x80, "special_stage": 0}
    frames = [
        {"x": 0x2100, "screen_x": 0x2080},
        {"x": 0x2200, "screen_x": 0x2180},
        {"x": 0x0200, "screen_x": 0x0180, "act": 1},
        {"x": 0x0300, "screen_x": 0x0280, "act": 1},
    ]
    kwargs = {
        "level_end_x": SONIC.retro_games["SonicAndKnuckles3-Genesis"].level_end_x,
        "act_change_offset": True,
        "end_when_not": {"special_stage": 0},
    }
    rewards, terminated, info, _ = run_trace(sonic(frames, start, **kwargs), steps=4)
    end_x = 0x40C9 - 0x100  # Angel Island Act 1, keyed by the first frame's zone and act
    assert not terminated
    assert rewards[2] == 0.0  # the jump is compensated: no progress lost
    assert rewards[3] == pytest.approx(9000 * 0x100 / end_x)
    assert info["arcadebench"]["progress"] == pytest.approx(0x2200 / end_x)
    without = sonic(frames, start, **(kwargs | {"act_change_offset": False}))
    rewards, _, info, _ = run_trace(without, steps=4)
    assert rewards[2] == pytest.approx(-9000 * 0x2000 / end_x)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-200, max_value=1099), min_size=1, max_size=300))
def test_a_level_never_finished_returns_9000_times_the_final_progress(xs):
    rewards, terminated, info, steps = run_trace(sonic([{"x": x} for x in xs]), steps=len(xs))
    assert not terminated and steps == len(xs)
    final = min(max(xs[-1] - 100, 0), 1000) / 1000
    assert sum(rewards) == pytest.approx(9000 * final, abs=1e-6)
    assert sum(rewards) <= 9000


def test_the_reset_frame_is_the_origin_and_the_first_frame_counts_as_frame_one():
    # stable-retro evaluates the scenario at reset (frame 0); the first step is frame 1
    rule = ContestProgress({(0, 0): END_X}, **CONTEST)
    rule.reset(START)
    assert rule.update(START | {"x": END_X}, frame=1)[0] == pytest.approx(
        9000 + 1000 * (1 - 1 / 18000)
    )


def test_fewer_than_three_lives_at_reset_ends_the_first_frame_as_in_the_script():
    # script.lua starts prev_lives at 3, and a loss at reset leaves it there
    rewards, terminated, info, steps = run_trace(
        sonic([{"x": 200, "lives": 2}], START | {"lives": 2})
    )
    assert steps == 1 and terminated and info["arcadebench"]["end_reason"] == "life_lost"


def test_missing_level_and_missing_variables_are_named():
    with pytest.raises(InvalidArgument, match=re.escape("no entry for zone=3, act=1")):
        sonic([{"x": 200}], START | {"zone": 3, "act": 1}).reset(seed=0)
    env = sonic([{"x": 200}], {"x": 100, "zone": 0, "act": 0})  # no lives
    with pytest.raises(InvalidArgument, match=re.escape("RAM variable 'lives'")):
        run_trace(env)
    with pytest.raises(
        InvalidArgument, match=re.escape("`level_end_x` must be a non-empty mapping")
    ):
        sonic([], level_end_x={})


# --- agreement with stable-retro's contest script.lua ------------------------------------------


@pytest.mark.parametrize("game", SONIC_GAMES)
def test_spec_level_end_x_equals_the_installed_contest_script(game):
    assert dict(SONIC.retro_games[game].level_end_x) == level_max_x(game)


def lua_traces(game):
    """Two traces: forward, backtracking, (S3K) an act change, then past the end; and a death."""
    xs = [0x200 + 6 * i for i in range(300)] + [0x200 + 1800 - 9 * i for i in range(200)]
    finish = level_max_x(game)[(0, 0)]
    xs += list(range(xs[-1], finish + 40, 40))
    frames = [{"x": x, "screen_x": x - 0xA0} for x in xs]
    if game == "SonicAndKnuckles3-Genesis":
        for frame in frames[350:]:  # act 1 -> 2 on frame 351: x and screen_x jump back together
            frame.update(act=1, x=frame["x"] - 0x100, screen_x=frame["screen_x"] - 0x100)
    dying = frames[:120] + [frames[120] | {"lives": 2}]
    return frames, dying


@pytest.mark.parametrize("game", SONIC_GAMES)
def test_agrees_with_the_contest_lua_frame_by_frame_on_airstriker(game, tmp_path):
    start = {"x": 0x200, "zone": 0, "act": 0, "lives": 3, "screen_x": 0x160}
    if game == "SonicTheHedgehog2-Genesis":
        start["game_mode"] = 12
    env = contest_airstriker(game, tmp_path / game, start)
    try:
        for frames, reason in zip(lua_traces(game), ("level_complete", "life_lost"), strict=True):
            wrapped = progress_reward(InnerReward(RamWriter(env, frames)), SONIC, game)
            wrapped.reset()
            ours, lua = [], []
            for _ in frames:
                _, reward, terminated, truncated, info = wrapped.step(np.zeros(12, np.uint8))
                ours.append((reward, terminated))
                lua.append(info["inner"])
                if terminated:
                    break
            assert [t for _, t in ours] == [t for _, t in lua]
            assert info["arcadebench"]["end_reason"] == reason
            assert len(ours) == (len(frames) if reason == "level_complete" else 121)
            # stable-retro returns the Lua reward as a float32
            np.testing.assert_allclose(
                [r for r, _ in ours], [r for r, _ in lua], rtol=1e-6, atol=1e-3
            )
            assert sum(r for r, _ in ours) == pytest.approx(sum(r for r, _ in lua), abs=0.05)
    finally:
        env.close()


# --- training aids -----------------------------------------------------------------------------


def test_allow_backtracking_pays_only_new_maxima_of_progress():
    frames = [{"x": 600}, {"x": 300}, {"x": 500}, {"x": 700}, {"x": 650}]
    env = AllowBacktracking(sonic(frames))
    rewards, *_ = run_trace(env, steps=5)
    assert rewards == pytest.approx([4500, 0, 0, 900, 0])
    assert sum(rewards) == pytest.approx(9000 * 0.6)  # the best progress, 0.6


def test_clipping_for_training_is_gymnasiums_clip_reward_outside_the_protocol():
    env = ClipReward(
        RewardInjector(gym.make("arcadebench/SABER-Pong-v0"), {0: 5.0, 1: -3.0}), -1.0, 1.0
    )
    try:
        env.reset(seed=0)
        assert [env.step(0)[1] for _ in range(3)] == [1.0, -1.0, 0.0]
    finally:
        env.close()


@pytest.mark.sonic_rom
def test_agrees_with_the_contest_scenario_on_the_real_rom():
    import stable_retro

    env = stable_retro.make(
        "SonicTheHedgehog-Genesis-v0",
        state="GreenHillZone.Act1",
        scenario="contest",
        render_mode=None,
    )
    try:
        wrapped = progress_reward(InnerReward(env), SONIC, "SonicTheHedgehog-Genesis")
        wrapped.reset(seed=0)
        right = np.zeros(12, np.uint8)
        right[7] = 1  # RIGHT
        for frame in range(3000):
            right[0] = frame % 40 < 8  # jump now and then
            _, reward, terminated, _, info = wrapped.step(right)
            lua_reward, lua_done = info["inner"]
            assert reward == pytest.approx(lua_reward, rel=1e-6, abs=1e-3)
            assert terminated == lua_done
            if terminated:
                break
    finally:
        env.close()
