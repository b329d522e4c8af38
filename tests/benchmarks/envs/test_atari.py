"""The Atari protocol envs: wrappers composed from the spec in the documented order, visible in
``env.spec``, through Gymnasium's checker and an async vector env."""

from __future__ import annotations

import dataclasses
import json

import gymnasium as gym
import numpy as np
import pytest
from ale_py.env import AtariEnv
from gymnasium.utils.env_checker import check_env

import arcadebench  # noqa: F401  (registers the ids)
from arcadebench.benchmarks.envs.atari import make_atari_env
from arcadebench.errors import InvalidArgument
from arcadebench.specs import load_spec

ONE_PER_PROTOCOL = [
    "arcadebench/SABER-Pong-v0",
    "arcadebench/HWR-Pong-v0",
    "arcadebench/Atari5-Phoenix-v0",
]


def protocol_wrappers(env):
    """(name, kwargs) of the protocol wrappers, inner to outer (the monitor is not ours)."""
    return [(w.name, w.kwargs) for w in env.spec.additional_wrappers if w.name != "EpisodeMonitor"]


@pytest.mark.parametrize(
    ("id", "expected"),
    [
        (
            "arcadebench/SABER-Pong-v0",
            [
                ("RolloverGuard", {"threshold": -900000.0, "correction": 1000000.0}),
                ("MaxStuckTime", {"max_stuck_frames": 18_000}),
                ("EpisodeFrameLimit", {"max_episode_frames": 21_600_000}),
                ("NoLifeInformation", {}),
            ],
        ),
        (
            "arcadebench/HWR-Pong-v0",
            [("EpisodeFrameLimit", {"max_episode_frames": 108_000}), ("NoLifeInformation", {})],
        ),
        (
            "arcadebench/Atari5-Phoenix-v0",
            [("EpisodeFrameLimit", {"max_episode_frames": 108_000}), ("NoLifeInformation", {})],
        ),
        (
            "arcadebench/Atari100k-Pong-v0",  # the training environment: the life-loss signal
            [
                ("EpisodeFrameLimit", {"max_episode_frames": 108_000}),
                ("LifeLossTerminal", {}),
                ("NoLifeInformation", {}),
            ],
        ),
        (
            "arcadebench/DQN2015-Pong-v0",
            [
                ("EpisodeFrameLimit", {"max_episode_frames": 18_000}),
                ("LifeLossTerminal", {}),
                ("NoLifeInformation", {}),
            ],
        ),
    ],
)
def test_wrappers_follow_the_spec_in_the_documented_order(id, expected):
    env = gym.make(id)
    try:
        assert protocol_wrappers(env) == expected
        assert env.spec.additional_wrappers[-1].name == "EpisodeMonitor"  # outermost
        assert gym.envs.registration.EnvSpec.from_json(env.spec.to_json()) == env.spec
    finally:
        env.close()


def test_every_setting_selects_its_wrapper():
    settings = dataclasses.replace(
        load_spec("saber").environment,
        rollover_threshold=None,
        rollover_correction=None,
        max_stuck_frames=600,
        max_episode_frames=None,
        life_information=True,
    )
    env = make_atari_env("pong", settings)
    try:
        # the ALE env itself (ale-py's AtariEnv, seeding without a ROM reload) right below
        assert type(env).__name__ == "MaxStuckTime" and isinstance(env.env, AtariEnv)
        assert not isinstance(env.env, gym.Wrapper)
        assert env.unwrapped.ale.getInt("max_num_frames_per_episode") == 0  # no cap
        assert "lives" in env.reset(seed=0)[1]
    finally:
        env.close()


@pytest.mark.parametrize("id", ONE_PER_PROTOCOL)
@pytest.mark.parametrize("obs_type", ["rgb", "standard"])
@pytest.mark.filterwarnings("ignore:.*different from the unwrapped")
def test_check_env_passes(id, obs_type):
    env = gym.make(id, obs_type=obs_type)
    try:
        # the render check would make a "human" env, which opens a window
        check_env(env, skip_render_check=True)
    finally:
        env.close()


def test_an_async_vector_env_of_a_protocol_id():
    envs = gym.make_vec("arcadebench/SABER-Breakout-v0", num_envs=2, vectorization_mode="async")
    try:
        obs, info = envs.reset(seed=[0, 1])
        assert obs.shape == (2, 210, 160, 3) and "lives" not in info
        for _ in range(50):
            obs, reward, terminated, truncated, info = envs.step(np.zeros(2, dtype=np.int64))
        assert info["episode_frame_number"].tolist() == [200, 200]
        assert info["arcadebench"]["stuck_frames"].tolist() == [200, 200]
    finally:
        envs.close()


def test_an_async_vector_env_with_standard_observations():
    envs = gym.make_vec(
        "arcadebench/HWR-Pong-v0", num_envs=2, vectorization_mode="async", obs_type="standard"
    )
    try:
        obs, _ = envs.reset(seed=0)
        obs = envs.step(np.array([0, 1]))[0]
        assert obs.shape == (2, 4, 84, 84) and obs.dtype == np.uint8
    finally:
        envs.close()


@pytest.mark.parametrize("spec", ["atari100k", "dqn2015"])
def test_training_and_evaluation_environments_of_a_protocol_scored_after_training(spec, tmp_path):
    """Training: life-loss terminals, the budget; evaluation: game over only, its own log."""
    settings = load_spec(spec).environment
    game = "breakout"
    train = arcadebench.make(spec, game, log_dir=tmp_path, run="r")
    evaluate = arcadebench.make(spec, game, phase="evaluation", log_dir=tmp_path, run="r")
    try:
        assert [name for name, _ in protocol_wrappers(evaluate)] == [
            "EpisodeFrameLimit",
            "NoLifeInformation",
        ]
        assert evaluate.spec.kwargs["phase"] == "evaluation"
        assert train.unwrapped.action_space.n == 4  # Breakout's minimal set, not 18
        for env, reasons in ((train, {"life_lost"}), (evaluate, {"game_over"})):
            _, info = env.reset(seed=0)
            least, most = settings.noop_starts
            assert least <= info["episode_frame_number"] <= most  # the no-op frames
            ends = set()
            while True:
                *_, terminated, truncated, info = env.step(1)  # FIRE: each ball is lost
                if terminated or truncated:
                    ends.add(info["arcadebench"]["end_reason"])
                    if ends == reasons:
                        break
                    env.reset()
        assert train.spec.kwargs["life_loss_terminal_in_training"] is True
    finally:
        train.close()
        evaluate.close()
    folder = tmp_path / spec / game
    assert {p.name for p in folder.glob("*.jsonl")} == {"r.jsonl", "r.eval.jsonl"}
    header = json.loads((folder / "r.eval.jsonl").read_text().splitlines()[0])
    assert header["phase"] == "evaluation" and header["run"] == "r.eval"
    assert header["budget"] == {"steps": None, "frames": None}  # the budget is the training's
    budget = json.loads((folder / "r.jsonl").read_text().splitlines()[0])["budget"]
    assert budget == {
        "steps": load_spec(spec).evaluation.budget_steps,
        "frames": None,
    }


def test_a_phase_that_does_not_exist_is_refused():
    with pytest.raises(InvalidArgument, match="`phase` must be one of 'training', 'evaluation'"):
        gym.make("arcadebench/Atari100k-Pong-v0", phase="test")


def test_the_batched_path_plays_the_training_signal_and_native_noop_starts():
    envs = arcadebench.make_vec("atari100k", "breakout", 2, log_dir=False)
    try:
        _, info = envs.reset(seed=0)
        assert all(0 <= f <= 29 for f in info["episode_frame_number"])  # ale-py's own no-ops
        ended, frames = [], []
        while len(ended) < 10:
            _, _, terminated, truncated, info = envs.step(np.ones(2, dtype=np.int64))
            episodes = info["arcadebench"].get("episode")
            for i in np.flatnonzero(info["arcadebench"].get("_episode", [])):
                ended.append(episodes[i]["end_reason"])
                frames.append((episodes[i]["frames"], episodes[i]["run_frames"]))
        assert ended[:8] == ["life_lost"] * 8 and "game_over" in ended
        assert all(0 < f < 500 for f, _ in frames)  # each learner episode's own frames
    finally:
        envs.close()
    with pytest.raises(InvalidArgument, match="no-op starts from 0 frames for make_vec"):
        arcadebench.make_vec("dqn2015", "breakout", 2, log_dir=False)
