"""The Ray backend on a local Ray instance: the same logs and results as the local backend.

The tasks send their records to the driver, which writes the logs (and a failed job's stderr):
on one machine as on a cluster without a shared file system (test_ray_cluster.py).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from testdata import TESTS

import arcadebench
from arcadebench.errors import JobsFailed, NonCompliantWarning

ray = pytest.importorskip("ray", reason="the Ray backend needs `pip install 'arcadebench[ray]'`")

SHORT = {"max_episode_frames": 2000}


@pytest.fixture(scope="module")
def local_ray():
    tests = str(TESTS)  # Ray workers import `runner_agents` from here
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": tests}},
    )
    yield
    ray.shutdown()


def episodes(log_dir):
    found = {}
    for path in sorted(Path(log_dir).rglob("*.jsonl")):
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        found[(path.parent.name, path.stem)] = [
            (r["episode"], r["return"], r["steps"], r["frames"], r["total_frames"], r["complete"])
            for r in lines
            if r["kind"] == "episode"
        ]
    return found


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
    on_ray = run(tmp_path / "ray", "ray")
    local = run(tmp_path / "local", "local")
    assert episodes(tmp_path / "ray") == episodes(tmp_path / "local")
    assert len(episodes(tmp_path / "ray")) == 4
    assert on_ray.algorithms == local.algorithms  # CIs included: same seeds, same bootstrap
    assert on_ray.provenance["backend"] == "ray"


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
    assert key == "phoenix/0" and "episode 2 (step 9): ValueError: boom" in reason
    assert [len(v) for v in episodes(tmp_path).values()] == [2, 3]
    # the task's stderr came back with its result: the traceback is on the driver
    assert "ValueError: boom" in (tmp_path / "atari5" / "phoenix" / "0.stderr.txt").read_text()
    assert not (tmp_path / "atari5" / "qbert" / "0.stderr.txt").exists()


def test_a_ray_worker_that_crashes_fails_its_job_with_its_last_words(tmp_path, local_ray):
    failed = failing_run(tmp_path, "runner_agents:CrashingAgent")
    ((key, reason),) = failed.failures
    assert key == "phoenix/0"
    assert "the Ray worker process died (WorkerCrashedError)" in reason
    assert "Segmentation fault" in reason  # faulthandler's trace, read on the task's node
    assert "Segmentation fault" in (tmp_path / "atari5" / "phoenix" / "0.stderr.txt").read_text()
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
    assert (
        key == "phoenix/0"
        and "episode 2 of phoenix run '0' ran past the wall-clock limit of 5 s" in reason
    )
    assert [len(v) for v in episodes(tmp_path).values()] == [2, 3]
