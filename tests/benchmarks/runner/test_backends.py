"""The backends: how local workers start (forked or from the forkserver), and Ray.

Local workers fork from the caller when nothing of it can reach them, else from the forkserver;
either way they play the same episodes, report failures the same way and write their output to
their own stderr file. The Ray backend, on a local Ray instance, gives the same logs and results
as the local one: the actors send their records to the driver, which writes the logs (and a
failed job's stderr), on one machine as on a cluster without a shared file system
(test_ray_cluster.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import sys
import threading
import types
import warnings

import pytest
from log_helpers import episodes, played
from testdata import PYTHONPATH_WITH_TESTS

import arcadebench
from arcadebench.benchmarks.replay import verify
from arcadebench.benchmarks.runner.agents import RandomAgent
from arcadebench.benchmarks.runner.backends import LocalBackend, start_method
from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.messages import EpisodeEnded, FailureKind
from arcadebench.benchmarks.runner.pool import PoolSettings
from arcadebench.benchmarks.runner.reference import resolve_agent
from arcadebench.errors import JobsFailed, NonCompliantWarning
from arcadebench.specs import load_spec

SHORT = {"max_episode_frames": 2000}
ATARI5 = load_spec("atari5")
linux = pytest.mark.skipif(sys.platform != "linux", reason="workers fork on Linux only")


def job(tmp, game="qbert", **kwargs):
    return Job(
        spec="atari5",
        game=game,
        seed=0,
        log_dir=str(tmp),
        algorithm="test",
        episodes=kwargs.pop("episodes", 1),
        env_kwargs=SHORT,
        **kwargs,
    )


def play(jobs, method, agent="random", tick=None):
    events = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        ref = resolve_agent(agent, ATARI5)
        backend = LocalBackend(method)
        outcomes = backend.run(jobs, ref, PoolSettings(workers=2), events.append, tick)
    return outcomes, events


def method_of(agent):
    return start_method(resolve_agent(agent, ATARI5))


@linux
def test_workers_fork_from_the_caller_only_when_nothing_of_it_can_reach_them(monkeypatch):
    monkeypatch.delitem(sys.modules, "stable_retro", raising=False)
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    saved = dataclasses.replace(resolve_agent("random", ATARI5), kind="saved", framework="torch")
    assert method_of("random") == "fork"
    assert method_of("noop") == "fork"
    assert start_method(saved) == "fork"  # the runner loads it, in the worker
    # user code (a path or an object) runs in the worker: it gets a fresh process
    assert method_of("runner_agents:RaisingAgent") == "forkserver"
    assert method_of(RandomAgent) == "forkserver"
    # another thread might hold a lock a forked worker would then wait for forever
    release = threading.Event()
    thread = threading.Thread(target=release.wait)
    thread.start()
    try:
        assert method_of("random") == "forkserver"
    finally:
        release.set()
        thread.join()
    assert method_of("random") == "fork"
    monkeypatch.setitem(sys.modules, "torch", types.ModuleType("torch"))
    assert start_method(saved) == "forkserver"  # its thread pools, a GPU context
    monkeypatch.delitem(sys.modules, "torch")
    monkeypatch.setitem(sys.modules, "stable_retro", types.ModuleType("stable_retro"))
    assert method_of("random") == "forkserver"  # one emulator per process


@linux
def test_forked_and_forkserver_workers_play_the_same_episodes(tmp_path):
    for method in ("fork", "forkserver"):
        jobs = [job(tmp_path / method, game, episodes=2) for game in ("qbert", "phoenix")]
        ticks = []
        outcomes, events = play(jobs, method, tick=functools.partial(ticks.append, 1))
        assert [o.status for o in outcomes] == ["done", "done"]
        assert sum(isinstance(e, EpisodeEnded) for e in events) == 4
        assert ticks  # the display's redraws are called back while the jobs run
    assert episodes(tmp_path / "fork") == episodes(tmp_path / "forkserver")
    assert len(episodes(tmp_path / "fork")) == 2


class _Chatty(RandomAgent):
    """The random agent, which prints and warns at its first step."""

    def act(self, obs):
        if not getattr(self, "spoke", False):
            self.spoke = True
            print("printed by the worker")
            warnings.warn("warned in the worker", UserWarning, stacklevel=1)
        return super().act(obs)


class _ChattyFailing(_Chatty):
    """Prints and warns, then fails its job: what it wrote is kept with the failure."""

    def act(self, obs):
        super().act(obs)
        raise RuntimeError("after talking")


@linux
def test_a_forked_worker_writes_its_output_and_warnings_to_its_own_file(tmp_path):
    captured = io.StringIO()
    # what the CLI (warnings collected) and a progress display (streams replaced) do here
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(captured):
        warnings.simplefilter("always")
        outcomes, _ = play([job(tmp_path)], "fork", agent=_ChattyFailing)
    failure = outcomes[0].failure
    assert failure is not None and failure.kind is FailureKind.AGENT_RAISED
    assert outcomes[0].status == "failed" and "RuntimeError: after talking" in failure.message
    assert "RuntimeError: after talking" in outcomes[0].trace  # the traceback, for the job's file
    assert not captured.getvalue() and not [w for w in caught if "worker" in str(w.message)]


@linux
@pytest.mark.parametrize(
    ("agent", "kind", "reason"),
    [
        (
            "RaisingAgent",
            FailureKind.AGENT_RAISED,
            "the agent raised in phoenix run '0' episode 2 (step 9): ValueError",
        ),
        (
            "CrashingAgent",
            FailureKind.WORKER_DIED,
            "the worker process died (SIGSEGV): Fatal Python error",
        ),
    ],
)
def test_a_forked_worker_that_fails_fails_its_job_only(tmp_path, agent, kind, reason):
    jobs = [job(tmp_path, game, episodes=3) for game in GAMES]
    outcomes, _ = play(jobs, "fork", agent=f"runner_agents:{agent}")
    assert [o.status for o in outcomes] == ["done", "failed"]
    assert outcomes[1].failure.kind is kind and reason in outcomes[1].failure.message
    assert len(episodes(tmp_path)[("phoenix", "0")]) == 2


GAMES = ("qbert", "phoenix")


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip(
        "ray", reason="the Ray backend needs `pip install 'arcadebench[ray]'`"
    )
    # Ray workers import `runner_agents` from the tests: the instance's processes inherit the
    # PYTHONPATH it starts with (a runtime_env would start each max_calls=1 worker through
    # Ray's setup_worker, 0.3 CPU-s more a job)
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PYTHONPATH", PYTHONPATH_WITH_TESTS)
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            log_to_driver=False,
            configure_logging=False,
        )
    yield
    ray.shutdown()


def run(tmp, backend, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        return arcadebench.evaluate(
            "random",
            "atari5",
            ["qbert", "phoenix"],
            episodes=2,
            seeds=[0, 1],
            workers=2,
            log_dir=tmp,
            backend=backend,
            env_kwargs=SHORT,
            progress="off",
            reps=200,
            **kwargs,
        )


def test_ray_and_local_backends_give_the_same_episodes_and_results(tmp_path, local_ray):
    on_ray = run(tmp_path / "ray", "ray")  # 8 environments per actor
    local = run(tmp_path / "local", "local", num_envs=1)  # one episode at a time per worker
    assert played(tmp_path / "ray") == played(tmp_path / "local")
    assert len(played(tmp_path / "ray")) == 4
    assert on_ray.algorithms == local.algorithms  # CIs included: same seeds, same bootstrap
    # the recordings travelled to the driver with the lines: every episode re-simulates
    assert verify(tmp_path / "ray", workers=1).ok
    assert verify(tmp_path / "ray", backend="ray").ok  # re-simulated as Ray tasks
    assert on_ray.provenance["backend"] == "ray"


def test_protocols_scored_after_training_run_on_ray(tmp_path, local_ray):
    """Atari 100k on Ray: a policy evaluated directly, a learner trained and then evaluated."""
    for backend in ("ray", "local"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonCompliantWarning)
            arcadebench.evaluate(
                "random", "atari100k", ["pong"], episodes=2, backend=backend, workers=2,
                log_dir=tmp_path / backend / "policy", progress="off", reps=0,
            )  # fmt: skip
            arcadebench.evaluate(
                "runner_agents:EvaluatingLearner", "atari100k", ["breakout"], steps=300,
                episodes=1, backend=backend, workers=1, log_dir=tmp_path / backend / "learner",
                progress="off", reps=0,
            )  # fmt: skip
    assert played(tmp_path / "ray") == played(tmp_path / "local")
    found = played(tmp_path / "ray")
    assert sorted(found) == [("breakout", "0"), ("breakout", "0.eval"), ("pong", "0.eval")]
    assert [e[0] for e in found[("pong", "0.eval")]] == [0, 1]
    learner = tmp_path / "ray" / "learner" / "runner_agents_EvaluatingLearner" / "atari100k"
    evaluation = (learner / "breakout" / "0.eval.jsonl").read_text().splitlines()
    assert '"policy": "greedy after 300 observed steps"' in evaluation[0]  # relayed header


def failing_run(tmp, agent, **kwargs) -> JobsFailed:
    """Three episodes of Q*bert and Phoenix on Ray with an agent whose Phoenix job fails."""
    with pytest.raises(JobsFailed) as failed:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NonCompliantWarning)
            arcadebench.evaluate(
                agent,
                "atari5",
                ["qbert", "phoenix"],
                episodes=3,
                workers=2,
                log_dir=tmp,
                backend="ray",
                env_kwargs=kwargs.pop("env_kwargs", SHORT),
                progress="off",
                reps=0,
                **kwargs,
            )
    return failed.value


def test_a_ray_job_that_fails_fails_alone(tmp_path, local_ray):
    failed = failing_run(tmp_path, "runner_agents:RaisingAgent")
    ((key, reason),) = failed.failures
    assert key == "phoenix/0" and "episode 2 (step 9): ValueError: boom" in reason.message
    assert reason.kind is FailureKind.AGENT_RAISED
    assert [len(v) for v in episodes(tmp_path).values()] == [2, 3]
    # the task's stderr came back with its result: the traceback is on the driver
    logs = tmp_path / "runner_agents_RaisingAgent" / "atari5"
    assert "ValueError: boom" in (logs / "phoenix" / "0.stderr.txt").read_text()
    assert not (logs / "qbert" / "0.stderr.txt").exists()


def test_a_ray_worker_that_crashes_fails_its_job_with_its_last_words(tmp_path, local_ray):
    failed = failing_run(tmp_path, "runner_agents:CrashingAgent")
    ((key, reason),) = failed.failures
    assert key == "phoenix/0" and reason.kind is FailureKind.WORKER_DIED
    assert "the Ray worker process died (ActorDiedError)" in reason.message
    assert "Segmentation fault" in reason.message  # faulthandler's trace, read on its node
    stderr = tmp_path / "runner_agents_CrashingAgent" / "atari5" / "phoenix" / "0.stderr.txt"
    assert "Segmentation fault" in stderr.read_text()
    assert [len(v) for v in episodes(tmp_path).values()] == [2, 3]


def test_a_hanging_ray_task_is_cancelled_by_the_episode_time_limit(tmp_path, local_ray):
    # 100-step episodes: a few ms each, far inside the limit even on a loaded machine, where a
    # fresh Ray worker's first seeded reset alone can take a second
    failed = failing_run(
        tmp_path,
        "runner_agents:HangingAgent",
        episode_time_limit=5,
        env_kwargs={"max_episode_frames": 400},
    )
    ((key, reason),) = failed.failures
    assert key == "phoenix/0" and reason.kind is FailureKind.WORKER_HUNG
    assert "episode 2 of phoenix run '0' ran past the wall-clock limit of 5 s" in reason.message
    assert [len(v) for v in episodes(tmp_path).values()] == [2, 3]
