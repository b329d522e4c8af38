"""The replay record: encoded, decoded, and read back from a file with cut or edited lines."""

from __future__ import annotations

import json

import numpy as np

from arcadebench.records import read_replays, replay_fields, replay_path
from arcadebench.records.replay_format import decode_array, encode_array


def line(env, episode, **fields):
    return json.dumps({"kind": "replay", "env": env, "episode": episode, **fields}) + "\n"


def test_a_replay_line_round_trips_its_start_actions_and_reward_trail(tmp_path):
    actions = np.array([0, 3, 17, 17, 2], dtype=np.uint8)
    fields = replay_fields(
        start={"seed": 12},
        actions=actions,
        reward_steps=np.array([1, 4]),
        rewards=np.array([-1.0, 21.5]),
    )
    assert fields["steps"] == 5 and fields["dtype"] == "|u1" and fields["shape"] == []
    path = tmp_path / "0.replay"
    path.write_text(line(0, 0, **fields) + line(1, 3, **fields, engine="ale-vector"))
    found, damaged = read_replays(path)
    assert damaged == 0 and sorted(found) == [(0, 0), (1, 3)]
    first = found[(0, 0)]
    assert first.start == {"seed": 12} and first.actions.tolist() == [0, 3, 17, 17, 2]
    assert first.reward_steps.tolist() == [1, 4] and first.rewards.tolist() == [-1.0, 21.5]
    assert first.engine == "single" and found[(1, 3)].engine == "ale-vector"


def test_multi_dimensional_actions_keep_their_shape():
    buttons = np.array([[0, 1, 1], [1, 0, 0]], dtype=np.int8)
    assert decode_array(encode_array(buttons), "|i1", (3,)).tolist() == buttons.tolist()


def test_a_cut_or_edited_line_costs_its_episode_only(tmp_path):
    good = replay_fields(
        start={"seed": 1},
        actions=np.zeros(3, np.uint8),
        reward_steps=np.zeros(0, np.int64),
        rewards=np.zeros(0),
    )
    edited = dict(good, steps=4)  # the actions are 3
    not_base64 = dict(good, actions="!!")
    path = tmp_path / "0.replay"
    path.write_text(
        line(0, 0, **good)
        + line(0, 1, **edited)
        + line(0, 2, **not_base64)
        + "not json\n"
        + line(0, 4, **good)[:40]  # cut by a crash
    )
    found, damaged = read_replays(path)
    assert list(found) == [(0, 0)] and damaged == 4
    assert read_replays(tmp_path / "missing.replay") == ({}, 0)


def test_the_replay_file_sits_beside_the_log():
    assert replay_path("logs/saber/pong/0.jsonl").name == "0.replay"
    assert replay_path("logs/atari100k/pong/3.eval.jsonl").name == "3.eval.replay"
