"""The episode monitor on real emulators: log format, locks, resume, budgets, cut episodes."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import gymnasium as gym
import numpy as np
import pytest
from ale_py.env import AtariEnv
from log_helpers import records
from testdata import DATA

import arcadebench
from arcadebench.errors import ArcadebenchError, BudgetExhausted, NonCompliantWarning
from arcadebench.records import EPISODE_FIELDS, parse_log
from arcadebench.specs import load_spec
from arcadebench.wrappers.monitor import (
    LOG_DIR_ENV,
    EpisodeMonitor,
    find_monitor,
    log_path,
)

QBERT = "arcadebench/Atari5-Qbert-v0"
MINI = str(DATA / "specs" / "minimal_atari.yaml")  # budget: 5,000 frames


def play(env, seed=None, max_steps=None, rng=None):
    """Play one episode with seeded random actions; returns (summed reward, steps, last info)."""
    rng = rng or np.random.default_rng(0)
    env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        _, reward, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
        total += reward
        steps += 1
        if terminated or truncated or steps == max_steps:
            return total, steps, info


def test_each_episode_is_one_line_in_the_documented_format(tmp_path):
    env = gym.make(QBERT, log_dir=tmp_path, run="a")
    rng = np.random.default_rng(1)
    played = [play(env, seed=s, rng=rng) for s in (1, 2)]
    env.close()
    lines = records(log_path(tmp_path, "atari5", "qbert", "a"))
    assert [r["kind"] for r in lines] == ["header", "episode", "episode"]
    header, first, second = lines
    spec = load_spec("atari5")
    assert header["spec_hash"] == spec.hash and header["settings"]["max_episode_frames"] == 108_000
    assert header["versions"]["ale_py"] and header["budget"] == {"steps": None, "frames": None}
    for record, (total, steps, info), episode in zip((first, second), played, (0, 1), strict=True):
        assert list(record) == list(EPISODE_FIELDS)
        assert record["return"] == total and record["steps"] == steps
        assert record["frames"] == info["episode_frame_number"]
        assert record["episode"] == episode and record["seed"] == 1 and record["run"] == "a"
        assert (
            record["spec"] == "atari5"
            and record["spec_version"] == 1
            and record["spec_hash"] == spec.hash
        )
        assert record["env_id"] == QBERT and record["game"] == "qbert"
        assert (
            record["complete"] is True
            and record["end_reason"] == info["arcadebench"]["end_reason"] == "game_over"
        )
        assert record["rollover_rewards"] == [] and record["deviations"] == {}
        assert record["wall_time"] > 0
    assert second["total_steps"] == first["steps"] + second["steps"]
    assert second["total_frames"] == first["frames"] + second["frames"]
    # the scorer's reader takes it as it is
    (run,) = parse_log(spec, log_path(tmp_path, "atari5", "qbert", "a"))
    assert list(run.returns) == [first["return"], second["return"]]


def test_the_return_is_the_protocol_return_below_agent_side_clipping(tmp_path):
    env = gym.wrappers.TransformReward(
        gym.make("arcadebench/Atari5-Phoenix-v0"), np.sign
    )  # agent-side clipping
    env = arcadebench.monitor(env, log_dir=tmp_path)
    clipped, _, _ = play(env, seed=3)
    env.close()
    (record,) = records(log_path(tmp_path, "atari5", "phoenix", "0"))[1:]
    assert (
        clipped > 0 and record["return"] >= 20 * clipped
    )  # Phoenix pays 20 or more a hit; the agent saw 1


def test_plain_make_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(LOG_DIR_ENV, raising=False)
    env = gym.make(QBERT)
    play(env, seed=0, max_steps=50)
    env.close()
    assert list(tmp_path.iterdir()) == []
    assert find_monitor(env).log is None


def test_the_log_dir_can_come_from_the_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv(LOG_DIR_ENV, str(tmp_path))
    env = gym.make(QBERT, run="7")
    play(env, seed=0)
    env.close()
    assert [r["kind"] for r in records(tmp_path / "atari5" / "qbert" / "7.jsonl")] == [
        "header",
        "episode",
    ]


def test_the_monitor_fills_the_default_end_reasons():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        env = gym.make(QBERT, max_episode_frames=200)  # frame cap: a truncation
    _, _, info = play(env, seed=0)
    assert info["arcadebench"]["end_reason"] in ("frame_limit", "time_limit")
    env.close()
    raw = EpisodeMonitor(AtariEnv("qbert", max_num_frames_per_episode=200), "atari5", "qbert")
    _, _, info = play(raw, seed=0)
    assert info["arcadebench"]["end_reason"] == "time_limit"  # no wrapper said why: truncated
    raw.close()
    raw = EpisodeMonitor(AtariEnv("qbert"), "atari5", "qbert")
    _, _, info = play(raw, seed=0)
    assert info["arcadebench"]["end_reason"] == "game_over"
    raw.close()


def test_deviations_are_recorded_with_every_episode(tmp_path):
    with pytest.warns(NonCompliantWarning):
        env = gym.make(QBERT, log_dir=tmp_path, max_episode_frames=200)
    play(env, seed=0)
    env.close()
    header, record = records(log_path(tmp_path, "atari5", "qbert", "0"))
    assert (
        record["deviations"]
        == header["deviations"]
        == {"max_episode_frames": {"spec": 108000, "used": 200}}
    )
    assert record["frames"] <= 200


def test_rollover_rewards_are_collected_from_info(tmp_path):
    class Rollover(
        gym.Wrapper
    ):  # reports a guarded rollover on steps 3 and 5, as RolloverGuard does
        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            self.n = getattr(self, "n", 0) + 1
            if self.n in (3, 5):
                info["arcadebench"] = {"rollover_rewards": [-990000.0 - self.n]}
            return obs, reward, terminated, truncated, info

    env = arcadebench.monitor(
        Rollover(AtariEnv("qbert")), tmp_path / "x.jsonl", spec="atari5", game="qbert"
    )
    play(env, seed=0)
    env.close()
    assert records(tmp_path / "x.jsonl")[-1]["rollover_rewards"] == [-990003.0, -990005.0]


def test_environments_on_one_log_are_streams_of_one_run(tmp_path):
    # two environments of this process and one of another process: one training run
    first, second = (gym.make(QBERT, log_dir=tmp_path, run="r") for _ in range(2))
    assert (find_monitor(first).stream, find_monitor(second).stream) == (0, 1)
    other = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(f"""
            import sys, numpy as np, gymnasium as gym, arcadebench
            from arcadebench.wrappers.monitor import find_monitor
            env = gym.make({QBERT!r}, log_dir={str(tmp_path)!r}, run="r")
            print(find_monitor(env).stream, flush=True)
            sys.stdin.readline()
            env.reset(seed=7)
            rng = np.random.default_rng(7)
            while not any(env.step(int(rng.integers(18)))[2:4]):
                pass
            env.close()
            """),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert other.stdout.readline().strip() == "2"  # joined the live run as its third stream
        play(first, seed=1)
        other.communicate("go\n", timeout=120)
        play(second, seed=2)
    finally:
        other.kill()
        first.close()
        second.close()
    lines = records(log_path(tmp_path, "atari5", "qbert", "r"))
    assert [r["kind"] for r in lines] == ["header", "episode", "episode", "episode"]
    episodes = lines[1:]
    assert [r["env"] for r in episodes] == [0, 2, 1] and {r["episode"] for r in episodes} == {0}
    assert [r["total_frames"] for r in episodes] == np.cumsum(
        [r["frames"] for r in episodes]
    ).tolist()
    (run,) = parse_log(load_spec("atari5"), log_path(tmp_path, "atari5", "qbert", "r"))
    assert run.envs.tolist() == [0, 2, 1] and sorted(run.streams) == [0, 1, 2]
    game = arcadebench.score("atari5", tmp_path, reps=0).algorithms[tmp_path.name]["games"]
    # one run (one sample for the bootstrap), scored on all three environments' episodes
    assert game["qbert"]["runs"] == [pytest.approx(np.mean([r["return"] for r in episodes]))]


def test_an_existing_log_is_continued_only_on_request(tmp_path):
    env = gym.make(QBERT, log_dir=tmp_path)
    play(env, seed=0)
    play(env, seed=1)
    env.close()
    with pytest.raises(
        ArcadebenchError,
        match="already holds 2 episodes of run '0'; continue that run with resume=True",
    ):
        gym.make(QBERT, log_dir=tmp_path)
    env = gym.make(QBERT, log_dir=tmp_path, resume=True)
    mon = find_monitor(env)
    assert (mon.episode, mon.complete_episodes) == (2, 2)
    play(env, seed=2)
    env.close()
    lines = records(log_path(tmp_path, "atari5", "qbert", "0"))
    assert [r["kind"] for r in lines] == [
        "header",
        "episode",
        "episode",
        "episode",
    ]  # no second header
    episodes = lines[1:]
    assert [r["episode"] for r in episodes] == [0, 1, 2]
    assert episodes[2]["total_steps"] == sum(r["steps"] for r in episodes)
    assert episodes[2]["total_frames"] == sum(r["frames"] for r in episodes)


def test_a_last_line_cut_by_a_crash_is_removed_before_appending(tmp_path):
    env = gym.make(QBERT, log_dir=tmp_path)
    play(env, seed=0)
    env.close()
    path = log_path(tmp_path, "atari5", "qbert", "0")
    intact = path.read_bytes()
    with open(path, "ab") as f:
        f.write(b'{"kind": "episode", "spec": "atari5", "ret')  # killed mid-write
    with pytest.warns(RuntimeWarning, match="last line was cut off"):
        env = gym.make(QBERT, log_dir=tmp_path, resume=True)
    assert path.read_bytes() == intact
    play(env, seed=1)
    env.close()
    assert [r["episode"] for r in records(path)[1:]] == [0, 1]


def test_a_log_of_another_run_or_spec_is_refused(tmp_path):
    env = gym.make(QBERT, log_dir=tmp_path)
    play(env, seed=0)
    env.close()
    source = log_path(tmp_path, "atari5", "qbert", "0")
    other = tmp_path / "other.jsonl"
    other.write_bytes(source.read_bytes())
    with pytest.raises(ArcadebenchError, match="holds qbert run '0', not qbert run 'b'"):
        arcadebench.monitor(gym.make(QBERT), other, run="b", resume=True)
    with pytest.raises(ArcadebenchError, match="written for spec 'atari5', not 'hwr'"):
        arcadebench.monitor(gym.make("arcadebench/HWR-Qbert-v0"), other, resume=True)


def test_an_early_reset_logs_the_cut_episode_as_incomplete(tmp_path):
    env = gym.make(QBERT, log_dir=tmp_path)
    play(env, seed=0, max_steps=30)
    play(env, seed=1)
    env.close()
    cut, whole = records(log_path(tmp_path, "atari5", "qbert", "0"))[1:]
    assert (cut["steps"], cut["complete"], cut["end_reason"]) == (30, False, "reset")
    assert whole["complete"] is True and whole["episode"] == 1
    assert whole["total_steps"] == 30 + whole["steps"]


def test_stepping_past_the_budget_raises_and_logs_the_cut_episode(tmp_path):
    env = arcadebench.make(MINI, "qbert", log_dir=tmp_path)  # the spec's budget: 5,000 frames
    mon = find_monitor(env)
    assert mon.budget_frames == 5000
    rng = np.random.default_rng(0)
    finished = []
    with pytest.raises(
        BudgetExhausted, match=r"run '0' of qbert has used its budget \(5,00\d of 5,000 frames"
    ):
        while True:
            finished.append(play(env, seed=len(finished), rng=rng))
    env.close()
    lines = records(log_path(tmp_path, "mini", "qbert", "0"))[1:]
    assert all(r["complete"] for r in lines[:-1])
    last = lines[-1]
    assert (last["complete"], last["end_reason"]) == (False, "budget")
    assert 5000 <= last["total_frames"] < 5004  # cut on the step that used the budget up
    assert mon.exhausted
    # a continued run starts exhausted: the env still resets (a vector env resets an env whose
    # episode ended), but no episode starts and the next step raises
    env = arcadebench.make(MINI, "qbert", log_dir=tmp_path, resume=True)
    assert env.reset(seed=0)[1]["arcadebench"]["budget_exhausted"] is True
    with pytest.raises(BudgetExhausted):
        env.step(0)
    env.close()


def test_a_step_budget_counts_agent_steps(tmp_path):
    env = gym.make(QBERT, log_dir=tmp_path)
    find_monitor(env).set_budget(steps=100)
    assert (
        play(env, seed=0)[1] == 100
    )  # the 100th step ends the run, the monitor logs the cut episode
    with pytest.raises(BudgetExhausted, match="100 of 100 steps"):
        env.step(0)
    assert env.reset()[1]["arcadebench"]["budget_exhausted"] is True
    with pytest.raises(BudgetExhausted):
        env.step(0)
    env.close()
    (record,) = records(log_path(tmp_path, "atari5", "qbert", "0"))[1:]
    assert (record["steps"], record["total_steps"], record["complete"]) == (100, 100, False)


def test_stepping_after_the_episode_ended_is_an_error():
    env = gym.make(QBERT)
    play(env, seed=0)
    with pytest.raises(ArcadebenchError, match=r"step\(\) after the episode ended: call reset\(\)"):
        env.step(0)
    env.close()


def test_bad_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(ArcadebenchError, match="`run` must be a short name .* got '../x'"):
        gym.make(QBERT, log_dir=tmp_path, run="../x")
    with pytest.raises(ArcadebenchError, match="`log` or `log_dir` must be given"):
        arcadebench.monitor(gym.make(QBERT))
    with pytest.raises(
        ArcadebenchError, match="`budget_steps` must be a positive integer or None, got 0"
    ):
        EpisodeMonitor(AtariEnv("qbert"), "atari5", "qbert", budget_steps=0)
    env = gym.make(QBERT)
    play(env, seed=0, max_steps=3)
    with pytest.raises(ArcadebenchError, match="attach the log before the first step"):
        arcadebench.monitor(env, log_dir=tmp_path)
    env.close()
    assert not any(tmp_path.rglob("*.jsonl"))
