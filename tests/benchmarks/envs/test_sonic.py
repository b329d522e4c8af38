"""The Sonic benchmark on stable-retro: level registration and listing, the level builder (save
state, headless, action sets, sticky frame skip, limits), ROM checks, one emulator per process,
vector envs and the joint training env (the runner path: ``test_sonic_run.py``).

Everything that does not need Sonic's RAM runs through the same code path on the bundled
Airstriker ROM (``tests/data/specs/sonic_airstriker.yaml``, see ``sonic_helpers``); the Sonic
reward itself is tested on scripted RAM traces in ``test_wrappers_rewards.py``. Tests marked
``sonic_rom`` play the real levels whenever the ROMs are imported.
"""

from __future__ import annotations

import gc
import os
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import EnvSpec
from sonic_helpers import (
    AIRSTRIKER_SHA1,
    IMPORT,
    NOROM_LEVEL,
    NOROM_MISSING,
    SONIC,
    SONIC1_MISSING,
    sonic_rom,
    write_sonic_airstriker,
)
from wrapper_helpers import TraceEnv, button_code

import arcadebench
from arcadebench.benchmarks.envs.ids import env_id
from arcadebench.benchmarks.envs.joint import JOINT_ENV_ID, JointSonicEnv
from arcadebench.benchmarks.envs.roms import require_roms, rom_status
from arcadebench.benchmarks.envs.sonic import check_retro_settings, progress_reward
from arcadebench.errors import EmulatorInUse, InvalidArgument, NonCompliantWarning, RomNotFound
from arcadebench.specs import load_spec
from arcadebench.wrappers import SonicProgressReward
from arcadebench.wrappers.monitor import find_monitor


def layers(env):
    names = []
    while True:
        names.append(type(env).__name__)
        if not isinstance(env, gym.Wrapper):
            return names
        env = env.env


def record_frames(env):
    """Record the button vector of every emulator frame (instrumenting the real RetroEnv)."""
    retro = env.unwrapped
    frames, step = [], retro.step

    def recording(action):
        frames.append(button_code(action))
        return step(action)

    retro.step = recording
    return frames


@pytest.fixture(scope="module")
def spec_path(tmp_path_factory):
    return str(write_sonic_airstriker(tmp_path_factory.mktemp("sonic-airstriker")))


# -- registration and the level list ---------------------------------------------------------------


def test_all_58_levels_are_registered_and_levels_lists_the_47_11_split():
    assert all(env_id(SONIC, level) in gym.registry for level in SONIC.games)
    assert len(SONIC.games) == 58
    train, test = arcadebench.levels("sonic", split="train"), arcadebench.levels("sonic", "test")
    assert (len(train), len(test), len(arcadebench.levels())) == (47, 11, 58)
    assert [r.name for r in test] == list(SONIC.games_of("test"))
    first = test[0]
    assert (first.name, first.game, first.integration, first.state, first.split) == (
        "SonicTheHedgehog-SpringYardZone.Act1",
        "SonicTheHedgehog-Genesis",
        "SonicTheHedgehog-Genesis-v0",
        "SpringYardZone.Act1",
        "test",
    )
    assert (first.zone, first.act) == (4, 0)
    assert first.env_id == "arcadebench/Sonic-SonicTheHedgehog-SpringYardZone.Act1-v0"
    assert {r.integration for r in train + test} == {
        "SonicTheHedgehog-Genesis-v0",
        "SonicTheHedgehog2-Genesis-v0",
        "SonicAndKnuckles3-Genesis-v0",
    }
    for record in train + test:
        assert record.playable == sonic_rom(record.game)
    assert JOINT_ENV_ID in gym.registry


def test_levels_of_a_spec_with_integration_directories(spec_path):
    records = arcadebench.levels(spec_path)
    assert [(r.name, r.split, r.playable) for r in records] == [
        ("AirstrikerA-Zone0", "train", True),
        ("AirstrikerA-Zone1", "train", True),
        ("AirstrikerB-Zone0", "train", True),
        ("AirstrikerA-Zone2", "test", True),
        ("AirstrikerB-Zone3", "test", True),
        ("NoRom-Zone0", "test", False),
    ]
    assert records[0].integration == "Airstriker-Genesis-v0"
    assert rom_status(load_spec(spec_path), "AirstrikerA-Genesis").sha1 == AIRSTRIKER_SHA1


def test_levels_refuses_a_bad_split_and_a_non_retro_spec():
    with pytest.raises(
        InvalidArgument,
        match=re.escape("`split` must be 'train', 'test', 'all' or None, got 'validation'"),
    ):
        arcadebench.levels("sonic", split="validation")
    with pytest.raises(
        InvalidArgument,
        match=re.escape(
            "`spec` must be a retro protocol with levels (e.g. 'sonic'), got 'saber' (atari; its "
            "games are spec.games)"
        ),
    ):
        arcadebench.levels("saber")
    with pytest.raises(InvalidArgument, match=re.escape("`spec` must be a retro spec")):
        check_retro_settings(load_spec("saber").environment)


# -- missing ROMs ----------------------------------------------------------------------------------


@pytest.mark.skipif(sonic_rom(), reason="the Sonic 1 ROM is imported here")
def test_gym_make_without_the_rom_is_one_line_naming_game_sha1_and_command():
    with pytest.raises(RomNotFound) as error:
        gym.make("arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act2-v0")
    assert str(error.value) == SONIC1_MISSING


def test_a_missing_rom_of_a_spec_is_the_same_one_line_error(spec_path):
    with pytest.raises(RomNotFound) as error:
        arcadebench.make(spec_path, NOROM_LEVEL)
    assert str(error.value) == NOROM_MISSING
    assert "\n" not in str(error.value)


def test_require_roms_names_every_missing_game_in_one_line():
    bad = [game for game in SONIC.retro_games if not sonic_rom(game)]
    if len(bad) < 2:
        pytest.skip("fewer than two Sonic ROMs are missing here")
    with pytest.raises(RomNotFound) as error:
        require_roms(SONIC, SONIC.games)
    message = str(error.value)
    assert message.startswith(f"{len(bad)} ROMs of the 'sonic' levels are not imported")
    assert "\n" not in message and IMPORT in message
    for game in bad:
        assert f"{game}-v0 (SHA-1 {' or '.join(SONIC.retro_games[game].rom_sha1)})" in message


# -- the level environment -------------------------------------------------------------------------


def test_a_level_is_the_protocol_stack_at_its_save_state_headless(spec_path):
    env = arcadebench.make(spec_path, "AirstrikerB-Zone3")
    try:
        assert layers(env) == [
            "OrderEnforcing",  # Gymnasium's make: a spec file's env is gym.make'd too
            "PassiveEnvChecker",
            "EpisodeMonitor",
            "TimeLimit",
            "ButtonDiscretizer",
            "StickyFrameSkip",
            "SonicProgressReward",
            "RetroEnv",
        ]
        assert env.unwrapped.render_mode is None
        assert env.observation_space.shape == (224, 320, 3)
        assert env.action_space == gym.spaces.Discrete(8)  # essential8, Section 3.7
        obs, info = env.reset(seed=0)
        assert obs.shape == (224, 320, 3) and obs.dtype == np.uint8
        assert info["arcadebench"] == {"progress": 0.0} and info["episode_frame_number"] == 0
        _, _, _, _, info = env.step(0)
        assert (info["zone"], info["act"], info["lives"]) == (3, 1, 3)  # the level's save state
        assert info["episode_frame_number"] == 4
        assert env.unwrapped.statename == "Zone3.state"
    finally:
        env.close()


def test_the_reward_is_the_spec_tables_with_the_resolved_settings(spec_path):
    ram = {"x": 100, "zone": 0, "act": 0, "lives": 3}
    reward = progress_reward(TraceEnv(ram, []), SONIC, "SonicTheHedgehog2-Genesis")
    arguments = reward._saved_kwargs  # what env.spec.additional_wrappers shows
    assert arguments["level_end_x"]["zone=0,act=0"] == 0x2A40
    assert arguments["end_when"] == {"game_mode": 16}
    contest = ("progress_scale", "completion_bonus", "bonus_horizon_frames")
    assert [arguments[key] for key in contest] == [9000.0, 1000.0, 18_000]  # Section 3.8
    with pytest.raises(InvalidArgument, match=re.escape("`game` must be one of")):
        progress_reward(TraceEnv(ram, []), SONIC, "Airstriker-Genesis")
    with pytest.warns(NonCompliantWarning, match="completion_bonus=500"):
        env = arcadebench.make(spec_path, "AirstrikerB-Zone3", completion_bonus=500)
    try:
        layer = env
        while not isinstance(layer, SonicProgressReward):
            layer = layer.env
        arguments = layer._saved_kwargs
        assert arguments["level_end_x"] == {"zone=0,act=0": 60, "zone=3,act=1": 100}
        assert [arguments[key] for key in contest] == [9000.0, 500.0, 18_000]
    finally:
        env.close()


@pytest.mark.parametrize(
    ("action_set", "space"),
    [("baseline7", gym.spaces.Discrete(7)), ("buttons", gym.spaces.MultiBinary(12))],
)
def test_the_action_set_can_be_chosen_without_a_deviation(spec_path, action_set, space):
    # Section 3.7: actions are button vectors; a named combination set is the agent's choice.
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonCompliantWarning)
        env = arcadebench.make(spec_path, "AirstrikerA-Zone2", action_set=action_set)
    try:
        assert env.action_space == space
        assert ("ButtonDiscretizer" in layers(env)) == (action_set != "buttons")
        env.reset(seed=0)
        env.step(env.action_space.sample())
    finally:
        env.close()


def test_rgb_array_renders_and_human_is_refused(spec_path):
    env = arcadebench.make(spec_path, "AirstrikerA-Zone2", render_mode="rgb_array")
    try:
        env.reset(seed=0)
        assert env.render().shape == (224, 320, 3)
    finally:
        env.close()
    with pytest.raises(
        InvalidArgument,
        match=re.escape(
            "`render_mode` must be one of None, 'rgb_array' (stable-retro's 'human' opens a "
            "window and needs a display; render frames yourself from 'rgb_array'), got 'human'"
        ),
    ):
        arcadebench.make(spec_path, "AirstrikerA-Zone2", render_mode="human")


def test_bad_options_are_refused_before_the_emulator_starts(spec_path):
    with pytest.raises(
        InvalidArgument, match=re.escape("`obs_type` is not an option of sonic-airstriker")
    ):
        arcadebench.make(spec_path, "AirstrikerA-Zone2", obs_type="ram")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        with pytest.raises(
            InvalidArgument,
            match=re.escape(
                "`end_on_life_loss` must be True (the contest reward ends episodes on a life loss "
                "and on completion, Section 3.5), got False"
            ),
        ):
            arcadebench.make(spec_path, "AirstrikerA-Zone2", end_on_life_loss=False)
        with pytest.raises(
            InvalidArgument,
            match=re.escape("`observation_shape` must be the console's (224, 320, 3)"),
        ):
            arcadebench.make(spec_path, "AirstrikerA-Zone2", observation_shape=[84, 84, 1])
        with pytest.raises(
            InvalidArgument,
            match=re.escape(
                "`action_set` must be one of buttons, essential8, baseline7, got 'all'"
            ),
        ):
            arcadebench.make(spec_path, "AirstrikerA-Zone2", action_set="all")
    arcadebench.make(spec_path, "AirstrikerA-Zone2").close()  # nothing was left open


def test_sticky_frame_skip_through_the_builder(spec_path):
    env = arcadebench.make(spec_path, "AirstrikerA-Zone2")
    try:
        frames = record_frames(env)
        combos = load_spec(spec_path).action_sets["essential8"]
        code = {
            i: sum(
                1
                << [
                    "B",
                    "A",
                    "MODE",
                    "START",
                    "UP",
                    "DOWN",
                    "LEFT",
                    "RIGHT",
                    "C",
                    "Y",
                    "X",
                    "Z",
                ].index(b)
                for b in combo
            )
            for i, combo in enumerate(combos)
        }
        env.reset(seed=7)
        delayed = eligible = steps = 0
        previous = None
        while steps < 500:
            action = 1 + steps % 2  # LEFT, RIGHT, LEFT, ...: every step changes the action
            start = len(frames)
            _, _, terminated, truncated, info = env.step(action)
            played = frames[start:]
            assert len(played) == 4 or terminated  # Section 3.4: 4 frames a step
            assert all(f == code[action] for f in played[1:])  # frames 1-3: the new action
            if previous is None:
                assert played[0] == code[action]  # first step of an episode: no delay
            else:
                eligible += 1
                delayed += played[0] == code[previous]
            previous = action
            steps += 1
            if terminated or truncated:
                env.reset()
                previous = None
        assert eligible > 400
        assert 0.17 < delayed / eligible < 0.33  # p = 0.25 (Section 3.4)
    finally:
        env.close()


def test_the_same_seed_replays_the_same_episode(spec_path):
    def play(seed):
        env = arcadebench.make(spec_path, "AirstrikerA-Zone2")
        try:
            env.reset(seed=seed)
            rng = np.random.default_rng(0)
            out = []
            for _ in range(150):
                obs, reward, terminated, truncated, info = env.step(int(rng.integers(8)))
                out.append((float(reward), int(obs.sum()), info["episode_frame_number"]))
                if terminated or truncated:
                    break
            return out
        finally:
            env.close()

    assert play(3) == play(3)


def test_episode_limit_and_return_through_the_builder(spec_path):
    with pytest.warns(NonCompliantWarning, match=r"max_episode_timesteps=5 \(spec: 4500\)"):
        env = arcadebench.make(spec_path, "AirstrikerA-Zone2", max_episode_timesteps=5)
    try:
        assert env.spec is None or env.spec.max_episode_steps is None
        env.reset(seed=0)
        ends = [env.step(0)[2:4] for _ in range(5)]
        assert ends == [(False, False)] * 4 + [(False, True)]
        assert env.unwrapped.data.lookup_all()["lives"] == 3
        assert find_monitor(env).last_episode["end_reason"] == "time_limit"
        assert find_monitor(env).last_episode["frames"] == 20
    finally:
        env.close()
    env = arcadebench.make(spec_path, "AirstrikerA-Zone2")  # the protocol's 4,500-step limit
    try:
        limit = [w for w in iter_layers(env) if type(w).__name__ == "TimeLimit"][0]
        assert limit._max_episode_steps == 4500
        env.reset(seed=1)
        rng, total = np.random.default_rng(1), 0.0
        while True:
            _, reward, terminated, truncated, info = env.step(int(rng.integers(8)))
            total += reward
            if terminated or truncated:
                break
        reason, progress = info["arcadebench"]["end_reason"], info["arcadebench"]["progress"]
        assert reason in ("life_lost", "level_complete")
        if reason == "life_lost":  # Section 3.8: the return is 9000 x progress
            assert total == pytest.approx(9000 * progress)
            assert info["lives"] == 2
    finally:
        env.close()


def iter_layers(env):
    while isinstance(env, gym.Wrapper):
        yield env
        env = env.env
    yield env


# -- one emulator per process ----------------------------------------------------------------------


def test_a_second_emulator_in_the_process_says_how_to_vectorise(spec_path):
    message = (
        "stable-retro allows one emulator per process and this process already has one, so "
        "Airstriker-Genesis-v0 cannot start: close the other environment first (env.close()), or "
        "run environments in parallel in their own processes: gym.make_vec(id, num_envs=N, "
        'vectorization_mode="async") or `arcadebench run` (one worker process per level)'
    )
    first = arcadebench.make(spec_path, "AirstrikerA-Zone2")
    try:
        with pytest.raises(EmulatorInUse) as error:
            arcadebench.make(spec_path, "AirstrikerB-Zone3")
        assert str(error.value) == message
        del error
        sync = EnvSpec(
            "arcadebench-test/SonicAirstriker-v0",
            entry_point="arcadebench.benchmarks.envs.factory:make_protocol_env",
            kwargs={"spec": spec_path, "game": "AirstrikerA-Zone2"},
        )
        first.close()
        with pytest.raises(EmulatorInUse, match=re.escape("gym.make_vec(id, num_envs=N")):
            gym.make_vec(sync, num_envs=2, vectorization_mode="sync")
    finally:
        first.close()
    gc.collect()
    arcadebench.make(spec_path, "AirstrikerA-Zone2").close()  # the process is free again


def test_an_async_vector_env_runs_one_emulator_per_process(spec_path):
    spec = EnvSpec(
        "arcadebench-test/SonicAirstriker-v0",
        entry_point="arcadebench.benchmarks.envs.factory:make_protocol_env",
        kwargs={"spec": spec_path, "game": "AirstrikerA-Zone2"},
    )
    envs = gym.make_vec(spec, num_envs=2, vectorization_mode="async")
    try:
        obs, _ = envs.reset(seed=[1, 2])
        assert obs.shape == (2, 224, 320, 3)
        for _ in range(20):
            obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())
        assert reward.shape == (2,)
        pids = {process.pid for process in envs.processes}
        assert len(pids) == 2 and os.getpid() not in pids
    finally:
        envs.close()
    arcadebench.make(spec_path, "AirstrikerA-Zone2").close()  # none was left in this process


def test_make_vec_of_a_sonic_id_without_the_rom_fails_with_the_rom_message():
    if sonic_rom():
        pytest.skip("the Sonic 1 ROM is imported here")
    with pytest.raises(RomNotFound, match=re.escape(SONIC1_MISSING)):
        gym.make_vec(
            "arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act2-v0",
            num_envs=2,
            vectorization_mode="async",
        )


# -- the joint training env ------------------------------------------------------------------------


def test_the_joint_env_samples_a_training_level_per_episode(spec_path):
    env = gym.make(JOINT_ENV_ID, spec=spec_path)
    try:
        joint = env.unwrapped
        assert isinstance(joint, JointSonicEnv)
        assert joint.pool == ("AirstrikerA-Zone0", "AirstrikerA-Zone1", "AirstrikerB-Zone0")
        assert env.action_space == gym.spaces.Discrete(8)
        zones = {"AirstrikerA-Zone0": 0, "AirstrikerA-Zone1": 1, "AirstrikerB-Zone0": 0}
        games = {"AirstrikerA-Zone0": "a", "AirstrikerA-Zone1": "a", "AirstrikerB-Zone0": "b"}
        seen, emulators = [], []
        _, info = env.reset(seed=5)
        for _ in range(24):
            level = info["arcadebench"]["level"]
            seen.append(level)
            emulators.append((level, joint._env.unwrapped))
            _, _, _, _, step_info = env.step(0)
            assert step_info["zone"] == zones[level]  # the level's save state was loaded
            assert step_info["arcadebench"]["level"] == level
            _, info = env.reset()
        assert set(seen) == set(zones)
        for (a, emu_a), (b, emu_b) in zip(emulators, emulators[1:], strict=False):
            assert (emu_a is emu_b) == (games[a] == games[b])  # same game: the state only
        env.reset(seed=5)
        first = [env.unwrapped.level]
        for _ in range(23):
            env.reset()
            first.append(env.unwrapped.level)
        assert first == seen  # the seed fixes the level sequence
        _, info = env.reset(options={"level": "AirstrikerA-Zone1"})
        assert info["arcadebench"]["level"] == "AirstrikerA-Zone1"
    finally:
        env.close()
    arcadebench.make(spec_path, "AirstrikerA-Zone2").close()


def test_the_joint_env_pool_and_its_roms(spec_path):
    env = JointSonicEnv(spec_path, levels=["AirstrikerB-Zone3", "AirstrikerB-Zone0"])
    try:
        assert env.pool == ("AirstrikerB-Zone3", "AirstrikerB-Zone0")
        assert {env.reset(seed=s)[1]["arcadebench"]["level"] for s in range(8)} == set(env.pool)
    finally:
        env.close()
    with pytest.raises(gym.error.ResetNeeded, match="the environment is closed"):
        env.step(0)
    env.reset(seed=0)  # a closed joint env starts its level's emulator again
    try:
        assert env.step(0)[4]["arcadebench"]["level"] in env.pool
    finally:
        env.close()
    with pytest.raises(RomNotFound, match=re.escape(NOROM_MISSING)):
        JointSonicEnv(spec_path, split="test")
    with pytest.raises(
        InvalidArgument, match=re.escape("`split` must be 'train', 'test' or 'all', got 'dev'")
    ):
        JointSonicEnv(spec_path, split="dev")


# -- the real levels (run whenever the ROMs are imported) ------------------------------------------


@pytest.mark.sonic_rom
@pytest.mark.parametrize("level", SONIC.games_of("test"))
def test_every_test_level_starts_at_its_save_state(level):
    game = SONIC.levels[level].game
    if not sonic_rom(game):
        pytest.skip(f"the {game} ROM is not imported")
    env = gym.make(env_id(SONIC, level))
    try:
        assert env.observation_space.shape == (224, 320, 3)
        obs, info = env.reset(seed=0)
        total = 0.0
        for _ in range(50):
            obs, reward, terminated, truncated, info = env.step(2)  # RIGHT
            total += reward
            if terminated or truncated:
                break
        assert (info["zone"], info["act"]) == (SONIC.levels[level].zone, SONIC.levels[level].act)
        assert total == pytest.approx(9000 * info["arcadebench"]["progress"])
        assert info["episode_frame_number"] > 0
    finally:
        env.close()


@pytest.mark.sonic_rom
def test_real_level_in_an_async_vector_env():
    envs = gym.make_vec(
        "arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act2-v0",
        num_envs=2,
        vectorization_mode="async",
    )
    try:
        obs, _ = envs.reset(seed=[0, 1])
        assert obs.shape == (2, 224, 320, 3)
        envs.step(np.array([2, 2]))
    finally:
        envs.close()
