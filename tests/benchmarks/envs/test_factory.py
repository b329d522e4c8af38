"""Registration: an id for every (protocol, game/level), each Atari id made and stepped for real."""

from __future__ import annotations

import json
import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
from testdata import DATA

import arcadebench
from arcadebench.benchmarks.envs.factory import register_envs
from arcadebench.benchmarks.envs.ids import env_id, parse_env_id
from arcadebench.errors import InvalidArgument, NonCompliantWarning
from arcadebench.specs import list_specs, load_spec

ATARI_SPECS = [name for name in list_specs() if load_spec(name).platform == "atari"]
# every ROM once (SABER has all 61 games, the others' a subset) and every spec once: the ids of
# one game share the entry point, and the conformance sweep plays every game of every spec
ATARI_IDS = sorted(
    {env_id("saber", game) for game in load_spec("saber").games}
    | {env_id(name, "pong") for name in ATARI_SPECS}
)


def test_every_game_and_level_of_every_spec_is_registered():
    ids = register_envs()
    expected = sum(len(load_spec(name).games) for name in list_specs())
    # atari100k, atari5, dqn2015, hwr, machado2018, saber, sonic
    assert len(ids) == len(set(ids)) == expected == 26 + 57 + 49 + 57 + 60 + 61 + 58
    assert all(i in gym.registry for i in ids)


@pytest.mark.parametrize(
    "id",
    [
        "arcadebench/SABER-Pong-v0",
        "arcadebench/Atari5-BattleZone-v0",
        "arcadebench/HWR-MontezumaRevenge-v0",
        "arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act1-v0",
        "arcadebench/Atari100k-Pong-v0",
        "arcadebench/DQN2015-Breakout-v0",
        "arcadebench/Machado2018-Pong-v0",
    ],
)
def test_documented_ids_exist(id):
    assert id in gym.registry


def test_env_id_and_parse_env_id_are_inverse():
    for name in list_specs():
        spec = load_spec(name)
        for game in spec.games:
            prefix, display, version = parse_env_id(env_id(spec, game))
            assert prefix == spec.id_prefix and version == spec.env_version
            assert spec.resolve_game(display) == game


def test_saber_pong_is_configured_exactly_as_table_1():
    env = gym.make("arcadebench/SABER-Pong-v0")
    try:
        ale = env.unwrapped.ale
        assert ale.getFloat("repeat_action_probability") == pytest.approx(0.25)
        assert env.action_space.n == 18
        assert ale.getInt("max_num_frames_per_episode") == 21_600_000
        assert env.spec.kwargs["max_stuck_frames"] == 18_000
    finally:
        env.close()


@pytest.mark.parametrize("id", ATARI_IDS)
def test_every_rom_and_every_atari_spec_can_be_made_and_stepped(id):
    env = gym.make(id)
    try:
        settings = load_spec(env.spec.kwargs["spec"]).environment
        obs, info = env.reset(seed=0)
        assert obs.shape[1:] == (160, 3)  # the height is the ROM's (210 for most, 250 for AirRaid)
        # ale-py 0.12 reports the full set as the ROM's legal set, which has 9 actions for Skiing
        # (ALE issue #691), 18 elsewhere; Atari 100k and DQN 2015 play the minimal set
        ale = env.unwrapped.ale
        legal = ale.getLegalActionSet() if settings.full_action_space else ale.getMinimalActionSet()
        assert env.action_space.n == len(legal)
        if settings.full_action_space:
            assert env.action_space.n == (9 if "Skiing" in id else 18)
        start = info["episode_frame_number"]  # start-up frames and no-op starts
        for _ in range(3):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            assert np.isfinite(reward)
        assert info["episode_frame_number"] - start == 3 * settings.frameskip
        assert "lives" not in info  # no shipped Atari protocol gives the agent its lives
    finally:
        env.close()


def test_overriding_a_protocol_setting_warns_non_compliant():
    with pytest.warns(NonCompliantWarning, match=r"repeat_action_probability=0.0 \(spec: 0.25\)"):
        env = gym.make("arcadebench/SABER-Pong-v0", repeat_action_probability=0.0)
    try:
        assert env.unwrapped.ale.getFloat("repeat_action_probability") == 0.0
    finally:
        env.close()


def test_non_protocol_kwargs_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonCompliantWarning)
        env = gym.make("arcadebench/Atari5-Qbert-v0", render_mode="rgb_array")
    env.close()


def test_make_works_for_a_user_spec_file_and_its_env_has_a_spec(tmp_path):
    path = DATA / "specs" / "minimal_atari.yaml"
    env = arcadebench.make(str(path), "Q*bert", log_dir=False)
    try:
        env.reset(seed=1)
        assert env.unwrapped.ale.getInt("max_num_frames_per_episode") == 108_000
        assert env.spec.id == "arcadebench/Mini-Qbert-v0"
        assert env.spec.kwargs["spec"] == str(path.resolve())
        assert env.spec.kwargs["max_episode_frames"] == 108_000  # the protocol, inspectable
        again = gym.make(env.spec)  # rebuilds the same protocol env
        assert again.spec.id == env.spec.id
        again.close()
    finally:
        env.close()
    clash = tmp_path / "my_saber.yaml"
    clash.write_text(path.read_text().replace("id_prefix: Mini", "id_prefix: SABER"))
    with pytest.raises(InvalidArgument, match="the built-in 'saber' spec's; change id_prefix"):
        arcadebench.make(str(clash), "qbert")


def test_make_of_a_builtin_goes_through_the_registry():
    env = arcadebench.make("atari5", "Battle Zone")
    try:
        assert env.spec.id == "arcadebench/Atari5-BattleZone-v0"
    finally:
        env.close()


def test_unknown_id_suggests_close_matches():
    with pytest.raises(gym.error.NameNotFound, match="Did you mean: `SABER-Pong`"):
        gym.make("arcadebench/SABER-Pongg-v0")


def test_the_agent_is_named_and_a_bad_observation_type_names_the_choices(tmp_path):
    env = gym.make("arcadebench/SABER-Pong-v0", algorithm="ppo", log_dir=tmp_path, run="n")
    env.close()
    header = json.loads((tmp_path / "saber" / "pong" / "n.jsonl").read_text().splitlines()[0])
    assert header["algorithm"] == "ppo"
    with pytest.raises(
        InvalidArgument,
        match=re.escape("`obs_type` must be one of 'rgb', 'grayscale', 'ram', 'standard'"),
    ):
        gym.make("arcadebench/SABER-Pong-v0", obs_type="bogus")
    with pytest.raises(InvalidArgument, match=re.escape("`sticky` is not an option of saber")):
        gym.make("arcadebench/SABER-Pong-v0", sticky=0.1)
    with pytest.raises(
        InvalidArgument,
        match=re.escape("`repeat_action_probability` must be a probability in [0, 1], got 1.5"),
    ):
        gym.make("arcadebench/SABER-Pong-v0", repeat_action_probability=1.5)


@pytest.mark.parametrize("log_dir", [True, 3])
def test_a_log_dir_that_is_no_directory_is_refused_as_make_vec_refuses_it(log_dir):
    with pytest.raises(
        InvalidArgument,
        match=re.escape(f"`log_dir` must be a directory, None or False (no log), got {log_dir}"),
    ):
        gym.make("arcadebench/SABER-Pong-v0", log_dir=log_dir)
