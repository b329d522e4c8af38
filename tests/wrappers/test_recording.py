"""What the monitors record for replays, and that a snapshot re-creates an unseeded reset.

Snapshots are checked the only way that matters: an episode played after an unseeded reset in
one environment is played again, step for step, in a fresh one restored from the snapshot (no-op
starts, sticky actions and the stuck-time and frame limits included).
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import arcadebench
from arcadebench.records import read_replays, replay_path
from arcadebench.wrappers.recording import restore_snapshot, snapshot


def play(env, actions):
    total, steps = 0.0, 0
    for action in actions:
        _, reward, terminated, truncated, info = env.step(int(action))
        total, steps = total + reward, steps + 1
        if terminated or truncated:
            return total, steps, info["episode_frame_number"], info["arcadebench"]["end_reason"]
    return total, steps, None, None


@pytest.mark.parametrize(
    ("spec", "game", "phase"),
    [
        ("saber", "pong", "training"),
        ("atari100k", "breakout", "evaluation"),
        ("dqn2015", "qbert", "evaluation"),
    ],
)
def test_a_snapshot_replays_an_unseeded_reset_exactly(spec, game, phase):
    actions = np.random.default_rng(1).integers(4, size=20_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = arcadebench.make(spec, game, log_dir=False, phase=phase)
        fresh = arcadebench.make(spec, game, log_dir=False, phase=phase)
    try:
        env.reset(seed=5)
        play(env, actions)
        taken = json.loads(json.dumps(snapshot(env)))  # as a replay line carries it
        env.reset()
        original = play(env, actions[500:])
        restore_snapshot(fresh, taken)
        fresh.reset()
        assert play(fresh, actions[500:]) == original
        assert original[1] > 50  # a real episode, to the game's end
    finally:
        env.close()
        fresh.close()


def test_the_monitor_records_each_logged_episode_beside_its_line(tmp_path):
    env = arcadebench.make("saber", "pong", log_dir=tmp_path, run="r", max_episode_frames=800)
    rng = np.random.default_rng(0)
    played = []
    try:
        for seed in (3, None, None):
            env.reset(seed=seed)
            actions = []
            while True:
                actions.append(int(rng.integers(18)))
                *_, terminated, truncated, _ = env.step(actions[-1])
                if terminated or truncated:
                    break
            played.append(actions)
    finally:
        env.close()
    log = tmp_path / "saber" / "pong" / "r.jsonl"
    found, damaged = read_replays(replay_path(log))
    assert damaged == 0 and sorted(found) == [(0, 0), (0, 1), (0, 2)]
    assert found[(0, 0)].start == {"seed": 3}
    assert set(found[(0, 1)].start) == {"snapshot"} and set(found[(0, 1)].start["snapshot"]) == {
        "ale",
        "np_random",
    }
    assert [found[(0, e)].actions.tolist() for e in range(3)] == played
    assert found[(0, 0)].actions.dtype == np.uint8  # a byte a step


def test_a_lost_life_that_goes_on_is_recorded_as_continuing_the_episode_before(tmp_path):
    env = arcadebench.make("atari100k", "breakout", log_dir=tmp_path, run="t")
    try:
        env.reset(seed=1)
        ends = []
        while len(ends) < 2:
            *_, terminated, truncated, info = env.step(1)
            if terminated or truncated:
                ends.append(info["arcadebench"]["end_reason"])
                env.reset()
    finally:
        env.close()
    assert ends[0] == "life_lost"
    found, _ = read_replays(replay_path(tmp_path / "atari100k" / "breakout" / "t.jsonl"))
    assert found[(0, 1)].start == {"continues": 0}


def test_nothing_is_recorded_without_a_log_or_when_switched_off(tmp_path):
    env = arcadebench.make("saber", "pong", log_dir=tmp_path, run="off", record_actions=False)
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
    env.reset()
    env.close()
    assert not replay_path(tmp_path / "saber" / "pong" / "off.jsonl").exists()
    with pytest.raises(
        arcadebench.ArcadebenchError, match="`record_actions` must be True or False"
    ):
        arcadebench.make("saber", "pong", log_dir=False, record_actions="yes")


def test_a_batched_emulator_records_each_envs_seed_and_actions(tmp_path):
    envs = arcadebench.make_vec(
        "saber", "pong", 2, log_dir=tmp_path, run="v", max_episode_frames=400
    )
    rng = np.random.default_rng(0)
    sent = []
    try:
        envs.reset()  # unseeded: seeds are drawn so the episodes can be replayed
        for _ in range(250):
            sent.append(rng.integers(18, size=2))
            envs.step(sent[-1])
    finally:
        envs.close()
    found, _ = read_replays(replay_path(tmp_path / "saber" / "pong" / "v.jsonl"))
    assert sorted(found) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert set(found[(0, 0)].start) == {"seed"} and found[(0, 1)].start == {"continues": 0}
    assert found[(1, 0)].engine == "ale-vector"
    assert found[(1, 0)].actions.tolist() == [int(a[1]) for a in sent[:100]]  # 400 frames
    assert found[(1, 1)].actions.tolist() == [int(a[1]) for a in sent[100:200]]
