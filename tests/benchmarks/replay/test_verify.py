"""``verify``: a run's episodes re-simulated from their recordings and checked against the log.

A runner job, a make_vec training run of 4 envs and an SB3 run each verify 100 %; an edited
return, an episode of another setting or spec spliced in, an edited header, and recordings that
are missing or damaged are each caught, with the episode and the step.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sonic_helpers import TEST_LEVELS, write_sonic_airstriker
from testdata import DATA

import arcadebench
from arcadebench.benchmarks.replay import verify
from arcadebench.errors import InputError
from arcadebench.records import replay_path

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")
SHORT = {"max_episode_frames": 1200}


@pytest.fixture(scope="module")
def runner_out(tmp_path_factory):
    """A runner's output: two Atari-5 games, two episodes each, the random agent."""
    out = tmp_path_factory.mktemp("runner")
    arcadebench.evaluate(
        "random", "atari5", ["qbert", "phoenix"], episodes=2, log_dir=out, env_kwargs=SHORT,
        progress="off", reps=0, workers=2,
    )  # fmt: skip
    return out


def one_log(folder):
    (log,) = sorted(folder.rglob("*.jsonl"))
    return log


def test_a_runner_job_verifies_every_episode(runner_out):
    found = verify(runner_out, workers=2)
    assert found.ok and found.exit_status == 0
    assert [run.tally("verified") for run in found.runs] == [2, 2]
    assert "4 episodes of 4 re-simulated and verified, in 2 logs" in found.table()
    results = json.loads((runner_out / "results.json").read_text())
    assert results["provenance"]["inputs"]  # the results file names its logs: verifiable too
    assert verify(runner_out / "results.json").ok


def test_a_make_vec_training_run_of_four_envs_verifies(tmp_path):
    envs = arcadebench.make_vec("saber", "pong", 4, log_dir=tmp_path, run="v", **SHORT)
    rng = np.random.default_rng(0)
    envs.reset(seed=7)
    for _ in range(700):  # 300 steps an episode: two per env, the second continuing the first
        envs.step(rng.integers(18, size=4))
    envs.close()
    found = verify(tmp_path)
    assert found.ok and found.runs[0].tally("verified") == 8


def test_an_sb3_run_verifies(tmp_path):
    torch = pytest.importorskip("torch")
    from stable_baselines3 import PPO

    from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env

    torch.set_num_threads(1)
    envs = make_sb3_vec_env(
        "saber", "pong", 4, log_dir=tmp_path, run="sb3", algorithm="ppo", **SHORT
    )
    model = PPO("CnnPolicy", envs, n_steps=160, batch_size=64, n_epochs=1, device="cpu", seed=0)
    model.learn(1280)  # SB3 resets without a seed: the run's seeds are drawn, and recorded
    envs.close()
    found = verify(tmp_path)
    assert found.ok and found.runs[0].tally("verified") >= 4


def edit(log, line, change):
    """Change one line of a log (0-based, the header is line 0)."""
    lines = log.read_text().splitlines()
    record = json.loads(lines[line])
    change(record)
    lines[line] = json.dumps(record)
    log.write_text("\n".join(lines) + "\n")


def test_an_edited_return_is_caught_with_its_episode_and_step(runner_out, tmp_path):
    copy = tmp_path / "copy"
    log = one_log(runner_out / "random" / "atari5" / "qbert")
    copy.mkdir()
    (copy / log.name).write_text(log.read_text())
    (copy / replay_path(log).name).write_text(replay_path(log).read_text())
    edited = json.loads(log.read_text().splitlines()[2])
    edit(copy / log.name, 2, lambda r: r.update({"return": r["return"] + 1000}))
    found = verify(copy)
    assert not found.ok and found.exit_status == 1
    (check,) = [c for c in found.runs[0].episodes if c.verdict != "verified"]
    assert check.line == 3 and check.step == edited["steps"]
    assert check.reason.startswith(f"the log says return {edited['return'] + 1000}")
    assert check.reason.endswith("the log line was changed")


def test_an_episode_of_another_setting_or_spec_spliced_in_is_caught(tmp_path):
    run = tmp_path / "run"
    other = tmp_path / "other"
    for folder, kwargs in ((run, {}), (other, {"repeat_action_probability": 0.0})):
        # Breakout, where where the paddle is decides the score (Pong's first points do not)
        env = arcadebench.make("saber", "breakout", log_dir=folder, run="r", **kwargs)
        rng = np.random.default_rng(1)
        for seed in (1, 2):
            env.reset(seed=seed)
            while True:
                *_, terminated, truncated, _ = env.step(int(rng.integers(18)))
                if terminated or truncated:
                    break
        env.close()
    log, foreign = one_log(run), one_log(other)
    lines = [json.loads(text) for text in foreign.read_text().splitlines()[1:3]]
    replays = [json.loads(text) for text in replay_path(foreign).read_text().splitlines()[:2]]
    spliced = [
        dict(lines[0], episode=2),  # declares its settings: caught by its line
        dict(lines[1], episode=3, deviations={}),  # claims the run's: caught by the emulator
    ]
    with open(log, "a") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in spliced)
    with open(replay_path(log), "a") as handle:
        handle.writelines(
            json.dumps(dict(replay, episode=e)) + "\n"
            for e, replay in zip((2, 3), replays, strict=True)
        )
    checks = verify(run).runs[0].episodes
    assert [c.verdict for c in checks] == ["verified", "verified", "diverged", "diverged"]
    assert checks[2].line == 4 and "an episode of other settings" in checks[2].reason
    assert checks[2].step is not None and "under the run's settings it departs" in checks[2].reason
    assert checks[3].line == 5 and checks[3].step is not None  # sticky actions: another game
    assert "the emulator's" in checks[3].reason or "ended there" in checks[3].reason
    other_spec = dict(lines[0], spec="atari5", episode=4)  # no recording: its line says it all
    with open(log, "a") as handle:
        handle.write(json.dumps(other_spec) + "\n")
    last = verify(run).runs[0].episodes[-1]
    assert (
        last.verdict == "diverged" and "its spec is 'atari5', the run's is 'saber'" in last.reason
    )


def test_an_edited_header_and_missing_recordings_are_reported(runner_out, tmp_path):
    log = one_log(runner_out / "random" / "atari5" / "phoenix")
    copy = tmp_path / "0.jsonl"
    copy.write_text(log.read_text())
    found = verify(copy)  # no replay file beside it
    assert [c.verdict for c in found.runs[0].episodes] == ["unverifiable", "unverifiable"]
    assert "no recording" in found.runs[0].episodes[0].reason
    replay_path(copy).write_text(replay_path(log).read_text().splitlines()[0][:60] + "\n")
    assert "damaged" in verify(copy).runs[0].episodes[0].reason
    edit(copy, 0, lambda h: h["settings"].update({"repeat_action_probability": 0.0}))
    problems = verify(copy).runs[0].problems
    assert problems and "make deviations" in problems[0] and "the header was edited" in problems[0]


def test_a_sample_checks_that_many_episodes_of_each_log(runner_out):
    found = verify(runner_out, sample=1, workers=1)
    assert [len(run.episodes) for run in found.runs] == [1, 1] and found.ok


def test_paths_that_hold_no_log_are_one_line_errors(tmp_path):
    with pytest.raises(InputError, match="holds no episode log"):
        verify(tmp_path)
    with pytest.raises(arcadebench.ArcadebenchError, match="`sample` must be a positive integer"):
        verify(tmp_path, sample=0)


def test_sonic_episodes_verify_on_airstriker(tmp_path):
    spec = write_sonic_airstriker(tmp_path / "spec")
    env = arcadebench.make(str(spec), TEST_LEVELS[0], log_dir=tmp_path / "logs", run="s")
    rng = np.random.default_rng(0)
    try:
        env.reset(seed=4)
        episodes = 0
        while episodes < 2:  # the second from an unseeded reset: the sticky draws' generator
            *_, terminated, truncated, _ = env.step(int(rng.integers(env.action_space.n)))
            if terminated or truncated:
                episodes += 1
                env.reset()
    finally:
        env.close()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = verify(tmp_path / "logs", spec=spec, workers=1)
    assert found.ok and found.runs[0].tally("verified") == 2
    assert "not built in" in verify(tmp_path / "logs", workers=1).runs[0].problems[0]


def test_a_custom_spec_verifies_with_its_file(tmp_path):
    spec = str(DATA / "specs" / "short_episodes.yaml")
    arcadebench.evaluate(
        "random", spec, ["pong"], episodes=2, log_dir=tmp_path, progress="off", reps=0
    )
    assert verify(tmp_path, spec=spec).ok
