"""The runner through its API: logs and results, determinism, resume, and jobs that fail alone."""

from __future__ import annotations

import io
import sys
import threading
import warnings

import pytest
from log_helpers import episodes, played, records

import arcadebench
from arcadebench.benchmarks.runner import backends
from arcadebench.benchmarks.runner.messages import FailureKind
from arcadebench.benchmarks.scoring.results import Results
from arcadebench.errors import (
    ArcadebenchError,
    IncompatibleAgent,
    JobsFailed,
    NonCompliantWarning,
)
from arcadebench.records import episode_seeds

SHORT = {"max_episode_frames": 2000}  # <= 500 steps an episode (non-compliant: fine for tests)
SCORED_AS = " [max_episode_frames=2000]"  # runs of other settings are an algorithm of their own
FROZEN = SCORED_AS.replace("]", ", frozen policy]")  # and an agent that does not learn is apart
GAMES = ["qbert", "phoenix", "battle_zone"]  # the misbehaving test agents act up in phoenix, game 2


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        yield


def run(tmp, agent="random", games=GAMES, **kwargs):
    kwargs = {"episodes": 2, "env_kwargs": SHORT, "progress": "off", "reps": 0, **kwargs}
    return arcadebench.evaluate(agent, "atari5", games, log_dir=tmp, **kwargs)


def test_evaluate_plays_every_job_writes_logs_and_scores_them(tmp_path):
    with pytest.warns(NonCompliantWarning, match="max_episode_frames=2000"):
        results = run(tmp_path, games=["qbert", "phoenix"], seeds=[0, 1], workers=2, command="test")
    logs = played(tmp_path)
    assert sorted(logs) == [("phoenix", "0"), ("phoenix", "1"), ("qbert", "0"), ("qbert", "1")]
    assert all([e[0] for e in eps] == [0, 1] and all(e[5] for e in eps) for eps in logs.values())
    assert isinstance(results, Results)
    assert Results.from_json(tmp_path / "results.json").algorithms == results.algorithms
    qbert = results.algorithms["random" + SCORED_AS]["games"]["qbert"]
    assert qbert["runs"] == [
        pytest.approx((logs[("qbert", r)][0][1] + logs[("qbert", r)][1][1]) / 2) for r in "01"
    ]
    provenance = results.provenance
    assert (
        provenance["agent"] == "random"
        and provenance["seeds"] == [0, 1]
        and provenance["command"] == "test"
    )
    assert provenance["episodes"] == 2 and provenance["ale_py"] and provenance["gymnasium"]
    assert results.spec["name"] == "atari5" and results.spec["hash"].startswith("sha256:")
    assert not list(tmp_path.rglob("*.stderr.txt"))  # worker output is kept only for failed jobs


def test_the_same_seeds_give_the_same_episodes_whatever_the_workers_and_after_a_resume(tmp_path):
    run(tmp_path / "a", episodes=4, workers=2)
    run(tmp_path / "b", episodes=2, workers=1, num_envs=1)
    before = played(tmp_path / "b")
    run(tmp_path / "b", episodes=4, workers=1, resume=True, num_envs=3)
    after = played(tmp_path / "b")
    assert after == played(tmp_path / "a")
    assert all(after[key][:2] == before[key] for key in before)  # nothing finished was replayed
    assert len({eps[0][1:4] for eps in after.values()}) == 3  # the games differ, of course


@pytest.mark.skipif(sys.platform != "linux", reason="workers fork on Linux only")
def test_progress_bars_leave_one_thread_so_the_workers_of_a_builtin_agent_fork(
    tmp_path, monkeypatch
):
    chosen = []

    def spy(agent):
        chosen.append(start(agent))
        return chosen[-1]

    start = backends.start_method
    monkeypatch.setattr(backends, "start_method", spy)
    monkeypatch.delitem(sys.modules, "stable_retro", raising=False)
    monkeypatch.delitem(sys.modules, "torch", raising=False)  # another test's, in this process
    monkeypatch.setattr(sys, "stderr", io.StringIO())  # where the bars go
    threads = []
    results = run(
        tmp_path,
        games=["qbert", "phoenix"],
        episodes=1,
        workers=2,
        progress="bars",
        on_event=lambda event: threads.append(threading.active_count()),
    )
    assert chosen == ["fork"] and set(threads) == {1}  # no refresh thread
    assert "all jobs" in sys.stderr.getvalue()
    assert set(results.algorithms["random" + SCORED_AS]["games"]) == {"qbert", "phoenix"}


def test_episode_seeds_depend_only_on_the_job_seed_and_episode():
    assert episode_seeds(3, 5) == episode_seeds(3, 5)
    assert len({episode_seeds(s, e) for s in range(4) for e in range(50)}) == 200


def test_a_rerun_plays_nothing_and_gives_the_same_results(tmp_path):
    first = run(tmp_path, games=["qbert", "phoenix"])
    log = tmp_path / "random" / "atari5" / "qbert" / "0.jsonl"
    before = log.read_bytes()
    events = []
    again = run(tmp_path, games=["qbert", "phoenix"], on_event=events.append)
    assert events == [] and log.read_bytes() == before  # no worker started, nothing written
    assert again.algorithms == first.algorithms
    assert again.provenance["jobs"] == {"played": 0, "already_complete": 2}
    resumed = run(tmp_path, games=["qbert", "phoenix"], resume=True, on_event=events.append)
    assert events == [] and resumed.algorithms == first.algorithms


def test_a_log_holding_less_than_asked_is_continued_only_with_resume(tmp_path):
    run(tmp_path, games=["qbert"])
    log = tmp_path / "random" / "atari5" / "qbert" / "0.jsonl"
    before = log.read_bytes()
    with pytest.raises(
        ArcadebenchError,
        match=r"1 run of random hold less than asked \(.*qbert/0.jsonl: 2 of 3 episodes\); "
        r"continue them with resume=True",
    ):
        run(tmp_path, games=["qbert"], episodes=3)
    assert log.read_bytes() == before
    results = run(tmp_path, games=["qbert"], episodes=3, resume=True)
    assert [e[0] for e in played(tmp_path)[("qbert", "0")]] == [0, 1, 2]
    assert results.algorithms["random" + SCORED_AS]["games"]["qbert"]["episodes"] == 3


def test_agents_share_an_output_directory_one_column_each(tmp_path):
    run(tmp_path, games=["qbert"], seeds=[0, 1])
    results = run(tmp_path, agent="noop", games=["qbert"])
    assert set(results.algorithms) == {"random" + SCORED_AS, "noop" + SCORED_AS}
    assert len(results.algorithms["random" + SCORED_AS]["games"]["qbert"]["runs"]) == 2
    assert results.algorithms["noop" + SCORED_AS]["games"]["qbert"]["runs"] == [0.0]
    assert (tmp_path / "noop" / "atari5" / "qbert" / "0.jsonl").exists()
    assert "noop" in results.table().splitlines()[1]  # a column of the table
    with pytest.raises(ArcadebenchError, match=r"played with other settings \(max_episode_frames"):
        run(tmp_path, agent="noop", games=["qbert"], env_kwargs={})


def test_logs_of_earlier_versions_are_continued_where_they_are(tmp_path):
    """Before agents had folders, logs were <out>/<spec>/<game>/<seed>.jsonl: a rerun finds them."""
    run(tmp_path, games=["qbert"])
    (tmp_path / "random" / "atari5").rename(tmp_path / "atari5")
    (tmp_path / "random").rmdir()
    events = []
    assert run(tmp_path, games=["qbert"], on_event=events.append).algorithms["random" + SCORED_AS]
    assert events == []
    run(tmp_path, games=["qbert"], episodes=3, resume=True)
    assert len(episodes(tmp_path)[("qbert", "0")]) == 3
    assert not (tmp_path / "random").exists()


def test_a_raising_agent_fails_its_job_only_and_keeps_its_finished_episodes(tmp_path):
    with pytest.raises(JobsFailed) as failed:
        run(tmp_path, agent="runner_agents:RaisingAgent", episodes=4, workers=2)
    ((key, failure),) = failed.value.failures
    reason = failure.message
    assert failure.kind is FailureKind.AGENT_RAISED
    assert key == "phoenix/0"
    assert "the agent raised in phoenix run '0' episode 2 (step 9): ValueError: boom" in reason
    logs = episodes(tmp_path)
    assert [e[0] for e in logs[("phoenix", "0")]] == [0, 1]
    assert (
        [e[0] for e in logs[("qbert", "0")]]
        == [e[0] for e in logs[("battle_zone", "0")]]
        == [0, 1, 2, 3]
    )
    results = failed.value.results
    assert set(results.algorithms["runner_agents:RaisingAgent" + FROZEN]["games"]) == set(GAMES)
    assert results.provenance["failures"] == [f"phoenix/0: {reason}"]
    stderr = tmp_path / "runner_agents_RaisingAgent" / "atari5" / "phoenix" / "0.stderr.txt"
    assert "ValueError: boom" in stderr.read_text()  # the traceback
    assert "phoenix/0" in str(failed.value) and "resume=True" in str(failed.value)


@pytest.mark.parametrize(
    ("agent", "death"), [("KilledAgent", "SIGKILL"), ("CrashingAgent", "SIGSEGV")]
)
def test_a_worker_that_dies_fails_its_job_only(tmp_path, agent, death):
    with pytest.raises(JobsFailed) as failed:
        run(tmp_path, agent=f"runner_agents:{agent}", episodes=3, workers=2)
    ((key, failure),) = failed.value.failures
    reason = failure.message
    assert failure.kind is FailureKind.WORKER_DIED
    assert key == "phoenix/0" and f"the worker process died ({death})" in reason
    if death == "SIGSEGV":
        assert "Segmentation fault" in reason  # faulthandler's trace, from the worker's stderr
    logs = episodes(tmp_path)
    assert [e[0] for e in logs[("phoenix", "0")]] == [0, 1]
    assert len(logs[("qbert", "0")]) == len(logs[("battle_zone", "0")]) == 3


def test_the_episodes_are_the_same_whatever_the_batch_and_the_workers(tmp_path):
    """Episode i of (game, seed) is seeded from (seed, i), whatever plays it."""
    for envs, workers in ((1, 1), (8, 2), (3, 1)):
        run(
            tmp_path / f"{envs}-{workers}", episodes=3, seeds=[0, 1], num_envs=envs, workers=workers
        )
    first = played(tmp_path / "1-1")
    assert len(first) == 6 and all([e[0] for e in eps] == [0, 1, 2] for eps in first.values())
    assert played(tmp_path / "8-2") == first == played(tmp_path / "3-1")
    # and the scores, which do not depend on the order the episodes finished in
    scored = [
        Results.from_json(tmp_path / f"{n}/results.json").algorithms for n in ("1-1", "8-2", "3-1")
    ]
    assert scored[0] == scored[1] == scored[2]


def test_an_agent_that_raises_in_a_batch_fails_its_job_only(tmp_path):
    with pytest.raises(JobsFailed) as failed:
        run(tmp_path, agent="runner_agents:BatchedRaisingAgent", episodes=4, workers=2)
    ((key, failure),) = failed.value.failures
    reason = failure.message
    assert failure.kind is FailureKind.AGENT_RAISED
    assert key == "phoenix/0"  # one call per job's agent: no other job's rows in it
    assert reason.startswith("the agent raised in ") and reason.endswith(": ValueError: boom")
    assert "phoenix run '0' episode 2 (step 9)" in reason  # alone, or with its batch's others
    logs = played(tmp_path)
    assert 2 not in [e[0] for e in logs[("phoenix", "0")]]  # the others may have finished
    assert (
        [e[0] for e in logs[("qbert", "0")]]
        == [e[0] for e in logs[("battle_zone", "0")]]
        == [
            0,
            1,
            2,
            3,
        ]
    )
    stderr = tmp_path / "runner_agents_BatchedRaisingAgent" / "atari5" / "phoenix" / "0.stderr.txt"
    assert "ValueError: boom" in stderr.read_text()  # the traceback


def test_a_worker_that_dies_in_a_batch_fails_the_jobs_it_was_playing(tmp_path):
    with pytest.raises(JobsFailed) as failed:
        run(tmp_path, agent="runner_agents:BatchedKilledAgent", episodes=3, workers=2)
    assert {f.kind for _, f in failed.value.failures} == {FailureKind.WORKER_DIED}
    failures = {key: failure.message for key, failure in failed.value.failures}
    assert "phoenix/0" in failures
    assert all("the worker process died (SIGKILL)" in reason for reason in failures.values())
    logs = played(tmp_path)
    for game in GAMES:  # a job it was not playing finished in the other worker or its successor
        if f"{game}/0" not in failures:
            assert [e[0] for e in logs[(game, "0")]] == [0, 1, 2]
    assert 2 not in [e[0] for e in logs[("phoenix", "0")]]


def test_a_hanging_batch_is_stopped_by_the_episode_time_limit(tmp_path):
    with pytest.raises(JobsFailed) as failed:
        run(
            tmp_path,
            agent="runner_agents:BatchedHangingAgent",
            games=["phoenix"],
            episodes=3,
            workers=1,
            episode_time_limit=3,
            env_kwargs={"max_episode_frames": 400},
        )
    ((key, failure),) = failed.value.failures
    reason = failure.message
    assert failure.kind is FailureKind.WORKER_HUNG
    assert key == "phoenix/0" and "ran past the wall-clock limit of 3 s" in reason


def test_an_action_outside_the_action_set_fails_the_job_in_one_line(tmp_path):
    """A model of ALE's 18 actions under a 6-action protocol never has its actions reinterpreted."""
    with pytest.raises(JobsFailed) as failed:
        arcadebench.evaluate(
            "runner_agents:OutOfRange",
            "atari100k",
            ["pong"],
            episodes=1,
            log_dir=tmp_path,
            progress="off",
            reps=0,
        )
    ((key, failure),) = failed.value.failures
    reason = failure.message
    assert failure.kind is FailureKind.INVALID_ACTION
    assert key == "pong/0"
    assert reason.startswith(
        "the agent chose action 17 in pong run '0' episode 0 (step 0), outside the environment's "
        "Discrete(6) (6 actions): was it trained on another action set?"
    )
    assert "\n" not in reason and not list(tmp_path.rglob("0.eval.jsonl"))[0].read_text().count(
        '"kind": "episode"'
    )


def test_an_agent_that_says_it_was_trained_on_other_actions_is_refused_before_playing(tmp_path):
    with pytest.raises(IncompatibleAgent) as refused:
        arcadebench.evaluate(
            "runner_agents:Declares18",
            "atari100k",
            ["pong"],
            episodes=1,
            log_dir=tmp_path,
            progress="off",
            reps=0,
        )
    assert str(refused.value).startswith(
        "runner_agents:Declares18 chooses among 18 actions, but the atari100k environment of pong "
        "has 6 actions (its minimal action set): train it under the protocol's action set, or "
        "evaluate it with map_actions=True"
    )
    assert not [p for p in tmp_path.rglob("*.jsonl") if '"episode"' in p.read_text()]


def test_a_hanging_agent_is_stopped_by_the_episode_time_limit(tmp_path):
    with pytest.raises(JobsFailed) as failed:
        run(
            tmp_path,
            agent="runner_agents:HangingAgent",
            games=["qbert", "phoenix"],
            episodes=3,
            workers=2,
            episode_time_limit=3,
            env_kwargs={"max_episode_frames": 400},  # 100 steps: far inside 3 s, even under load
        )
    ((key, failure),) = failed.value.failures
    reason = failure.message
    assert failure.kind is FailureKind.WORKER_HUNG
    assert key == "phoenix/0"
    assert "episode 2 of phoenix run '0' ran past the wall-clock limit of 3 s" in reason
    logs = episodes(tmp_path)
    assert len(logs[("phoenix", "0")]) == 2 and len(logs[("qbert", "0")]) == 3


def test_a_step_quota_is_exact_and_cuts_the_last_episode(tmp_path, capsys):
    results = run(
        tmp_path, games=["qbert", "phoenix"], episodes=None, steps=700, workers=2, progress="lines"
    )
    shown = capsys.readouterr().err
    for (game, _), eps in episodes(tmp_path).items():
        last = eps[-1]
        assert sum(e[2] for e in eps) == 700
        assert all(e[5] for e in eps[:-1]) and (
            last[5] or sum(e[2] for e in eps[:-1]) + last[2] == 700
        )
        # the quota, not "the protocol's budget", ended it
        frames = sum(e[3] for e in eps)
        complete = sum(bool(e[5]) for e in eps)
        assert (
            f"{game}/0 done: {complete} complete episode{'s' * (complete != 1)}, 700 steps, "
            f"{frames:,} frames (the 700-step quota is reached)"
        ) in shown.splitlines()
    assert results.provenance["steps"] == 700


def test_a_learning_agent_is_driven_through_act_and_observe(tmp_path):
    results = run(tmp_path, agent="runner_agents:LearningAgent", games=["qbert"], episodes=1)
    afresh = "resumed jobs start runner_agents:LearningAgent afresh"
    with pytest.warns(RuntimeWarning, match=afresh):
        results = run(tmp_path, agent="runner_agents:LearningAgent", games=["qbert"], resume=True)
    learner = results.algorithms["runner_agents:LearningAgent" + SCORED_AS]
    assert learner["games"]["qbert"]["episodes"] == 2


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"episodes": 2, "steps": 10}, "`episodes` and `steps` are alternatives"),
        ({"episodes": None}, "`episodes` or `steps` must be given for the 'atari5' spec"),
        ({"episodes": 0}, "`episodes` must be a positive integer, got 0"),
        ({"seeds": [0, 0]}, "`seeds` must be distinct non-negative integers, got [0, 0]"),
        ({"seeds": [-1]}, "`seeds` must be distinct non-negative integers"),
        ({"workers": 0}, "`workers` must be a positive integer, got 0"),
        ({"backend": "spark"}, "`backend` must be 'local' or 'ray', got 'spark'"),
        ({"address": "ray://x:10001"}, "`address` must only be given with backend='ray'"),
        (
            {"episode_time_limit": -1},
            "`episode_time_limit` must be a positive number of seconds, got -1",
        ),
        ({"games": ["pnog"]}, "'pnog' is not a game of the 'atari5' spec. Did you mean: 'pong'"),
        ({"env_kwargs": {"run": "x"}}, "`env_kwargs` must not set run"),
        ({"agent": "nope:Agent"}, "cannot import agent module 'nope'"),
        ({"progress": "loud"}, "`progress` must be 'auto', 'bars', 'lines' or 'off'"),
    ],
)
def test_bad_arguments_fail_before_anything_runs(tmp_path, kwargs, message):
    with pytest.raises(
        ArcadebenchError, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
    ):
        run(tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()


def test_evaluate_works_in_a_script_read_from_stdin(tmp_path):
    import subprocess
    import sys

    script = (
        f"import arcadebench\narcadebench.evaluate('random', 'atari5', ['qbert'], episodes=1, "
        f"log_dir={str(tmp_path)!r}, progress='off', reps=0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert len(episodes(tmp_path)[("qbert", "0")]) == 1


# -- a protocol scored on evaluation episodes after training (Atari 100k, DQN 2015) -------------


def test_a_learner_trains_for_its_steps_then_plays_the_evaluation_episodes(tmp_path, capsys):
    results = arcadebench.evaluate(
        "runner_agents:EvaluatingLearner",
        "atari100k",
        ["breakout"],
        steps=600,
        episodes=2,
        log_dir=tmp_path,
        progress="lines",
        reps=0,
    )
    shown = [line.split("  [")[0] for line in capsys.readouterr().err.splitlines()]
    folder = tmp_path / "runner_agents_EvaluatingLearner" / "atari100k" / "breakout"
    training, evaluation = records(folder / "0.jsonl"), records(folder / "0.eval.jsonl")
    assert training[0]["budget"]["steps"] == 600 and training[-1]["total_steps"] == 600
    assert {r["end_reason"] for r in training[1:]} >= {"life_lost"}  # the training signal
    assert evaluation[0]["phase"] == "evaluation"
    assert evaluation[0]["policy"] == "greedy after 600 observed steps"  # its evaluation()
    assert [r["end_reason"] for r in evaluation[1:]] == ["game_over", "game_over"]
    game = results.algorithms["runner_agents:EvaluatingLearner"]["games"]["breakout"]
    assert game["episodes"] == 2
    assert game["raw"] == sum(r["return"] for r in evaluation[1:]) / 2  # the evaluation's mean
    assert game["frames"] == training[-1]["total_frames"]  # the experience behind it
    # the training is shown, and what ended it, before the evaluation episodes
    trained = training[-1]["total_frames"]
    assert [line for line in shown if line.startswith("breakout/0 t")][-2:] == [
        f"breakout/0 training: 600 of 600 steps, {trained:,} frames",
        f"breakout/0 trained: 600 steps, {trained:,} frames (the 600-step quota is reached); "
        "now 2 evaluation episodes",
    ]
    played = sum(r["steps"] for r in evaluation[1:]), sum(r["frames"] for r in evaluation[1:])
    assert shown[-1] == (
        f"breakout/0 done: 2 evaluation episodes, {played[0]:,} steps, {played[1]:,} frames "
        "(the 2-episode quota is reached)"
    )
    events = []
    again = arcadebench.evaluate(
        "runner_agents:EvaluatingLearner",
        "atari100k",
        ["breakout"],
        steps=600,
        episodes=2,
        log_dir=tmp_path,
        progress="off",
        reps=0,
        on_event=events.append,
    )
    assert events == [] and again.algorithms == results.algorithms  # a rerun plays nothing
    with pytest.raises(ArcadebenchError, match="its evaluation must be of the agent its training"):
        arcadebench.evaluate(
            "runner_agents:EvaluatingLearner",
            "atari100k",
            ["breakout"],
            steps=600,
            episodes=3,
            log_dir=tmp_path,
            resume=True,
            progress="off",
        )


def test_a_policy_is_evaluated_directly(tmp_path):
    results = arcadebench.evaluate(
        "random", "dqn2015", ["pong"], episodes=1, log_dir=tmp_path, progress="off", reps=0
    )
    folder = tmp_path / "random" / "dqn2015" / "pong"
    assert [p.name for p in folder.glob("*.jsonl")] == ["0.eval.jsonl"]  # no training
    header, *episodes = records(folder / "0.eval.jsonl")
    assert header["policy"] == "the policy as given (no training)"
    assert len(episodes) == 1 and episodes[0]["frames"] <= 18_000  # Nature's 5-minute cap
    assert results.algorithms["random"]["games"]["pong"]["episodes"] == 1
