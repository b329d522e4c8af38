"""The Ray backend on a real two-node cluster whose worker node cannot see the driver's files.

One machine plays the cluster (tests/ray_cluster_helpers.py): a head started with no CPUs for
tasks, and a worker node in mount and PID namespaces of its own with a tmpfs over the test's
directory, so whatever a task writes there lands in the node's tmpfs, never on the driver's disk
(checked by a canary task), as on a cluster without a shared file system. The tests run
``arcadebench run`` as a user would, kill the worker node mid-run, and resume.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ray_cluster_helpers import namespaces_missing, run_on_the_node, start_cluster

ray = pytest.importorskip("ray", reason="the Ray backend needs `pip install 'arcadebench[ray]'`")

pytestmark = pytest.mark.skipif(
    namespaces_missing() is not None,
    reason=f"a worker node that cannot see the driver's files needs namespaces: "
    f"{namespaces_missing()}",
)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = start_cluster(tmp_path_factory)
    try:
        yield cluster
    finally:
        cluster.stop()


def arcadebench_run(cluster, out, *extra, wait=True, episodes=2, seeds=(0,)):
    command = [
        sys.executable,
        "-m",
        "arcadebench",
        "run",
        "saber",
        "--games",
        "Pong",
        "--agent",
        "random",
        "--episodes",
        str(episodes),
        "--seeds",
        *map(str, seeds),
        "--out",
        str(out),
        "--progress",
        "lines",
        "--reps",
        "0",
        "--backend",
        "ray",
        "--address",
        cluster.address,
        *extra,
    ]
    process = subprocess.Popen(
        command,
        env=cluster.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if not wait:
        return process
    stdout, stderr = process.communicate(timeout=300)
    return process.returncode, stdout, stderr


def episodes(log: Path) -> list[tuple]:
    """``(index, return, steps, frames, complete)`` of each episode, by index."""
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return sorted(
        (r["index"], r["return"], r["steps"], r["frames"], r["complete"])
        for r in records
        if r["kind"] == "episode"
    )


def test_a_run_on_a_node_that_cannot_see_the_output_directory_is_logged_by_the_driver(cluster):
    out = cluster.hidden / "first"
    out.mkdir()
    # the arrangement: a task sees none of the driver's files there, and what it writes there
    # stays on its node
    mine, canary = out / "driver.txt", out / "canary.txt"
    mine.write_text("driver")
    seen = run_on_the_node(
        cluster,
        f"os.makedirs({str(out)!r}, exist_ok=True)\n"
        f"open({str(canary)!r}, 'w').write('node')\n"
        f"return os.path.exists({str(mine)!r}), os.path.exists({str(canary)!r})",
    )
    assert seen == "(False, True)" and not canary.exists()

    status, stdout, stderr = arcadebench_run(cluster, out)
    assert status == 0, stderr[-3000:]
    log = out / "random" / "saber" / "pong" / "0.jsonl"
    results = json.loads((out / "results.json").read_text())
    assert results["provenance"]["backend"] == "ray"
    assert results["algorithms"]["random"]["games"]["pong"]["episodes"] == 2
    header = json.loads(log.read_text().splitlines()[0])
    assert header["kind"] == "header" and header["env_id"] == "arcadebench/SABER-Pong-v0"
    found = episodes(log)  # the same as the local backend's (test_backends.py checks it)
    assert [e[0] for e in found] == [0, 1] and all(e[4] for e in found)
    assert not list(out.rglob("*.stderr.txt"))


def started(log: Path) -> bool:
    """Whether a job's task has started: its header reached the driver's log."""
    return log.exists() and log.stat().st_size > 0


def test_a_node_that_dies_mid_run_fails_only_its_jobs_and_resume_completes_them(cluster):
    if cluster.node is None:
        cluster.start_node()
    out = cluster.hidden / "killed"
    logs = [out / "random" / "saber" / "pong" / f"{seed}.jsonl" for seed in range(3)]
    # one environment per worker, two workers, episodes handed out job by job: when the node
    # dies right after pong/0's first episode reached the log, pong/0 is being played and pong/2
    # has not started. Eight episodes a job keep that true on an idle machine too, where a
    # random Pong episode takes 0.2 s (with three, pong/0 sometimes finished first)
    quota = 8
    run = arcadebench_run(cluster, out, "--envs", "1", episodes=quota, seeds=(0, 1, 2), wait=False)
    try:
        deadline = time.monotonic() + 180
        while not (started(logs[0]) and episodes(logs[0])):
            assert run.poll() is None, run.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no episode reached the driver's logs"
            time.sleep(0.05)
        cluster.stop_node()
        kept = {log: log.read_text() for log in logs if started(log)}
        cluster.start_node()  # the jobs not started yet run on the new node
        stdout, stderr = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, stderr[-3000:]
    failed = [line for line in stderr.splitlines() if line.startswith("  pong/")]
    assert failed and all("the Ray node running it died" in line for line in failed), stderr
    assert "  pong/2: " not in stderr  # it had not started: it ran on the new node
    assert len(episodes(logs[2])) == quota
    for log, text in kept.items():
        assert log.read_text().startswith(text)  # the finished episodes are kept
    assert 0 < len(episodes(logs[0])) < quota

    status, stdout, stderr = arcadebench_run(
        cluster, out, "--resume", episodes=quota, seeds=(0, 1, 2)
    )
    assert status == 0, stderr[-3000:]
    for log in logs:
        found = episodes(log)
        assert [e[0] for e in found] == list(range(quota)) and all(e[4] for e in found)
    for log, text in kept.items():
        assert log.read_text().startswith(text)
    results = json.loads((out / "results.json").read_text())
    assert results["algorithms"]["random"]["games"]["pong"]["episodes"] == 3 * quota


NO_CPU_DRIVER = """
import json, sys, time
import ray
from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.pool import PoolSettings
from arcadebench.benchmarks.runner.ray_backend import RayBackend
from arcadebench.benchmarks.runner.reference import resolve_agent
from arcadebench.specs import load_spec

ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)
deadline = time.monotonic() + 60
while ray.cluster_resources().get("CPU", 0) and time.monotonic() < deadline:
    time.sleep(0.1)  # the head notices the dead node within 1-2 s
jobs = [Job("saber", "pong", seed, sys.argv[2], "random", episodes=1) for seed in (0, 1)]
events = []
agent = resolve_agent("random", load_spec("saber"))
backend = RayBackend(cpu_wait=1)
outcomes = backend.run(jobs, agent, PoolSettings(workers=1), events.append)
print(json.dumps([
    [[o.job.key, o.status, o.failure.kind.name, o.failure.message] for o in outcomes],
    [[type(e).__name__, getattr(e, "message", "")] for e in events],
]))
"""


def test_jobs_waiting_for_a_cpu_fail_with_the_reason_when_no_node_has_one(cluster):
    cluster.stop_node()
    out = cluster.hidden / "no_cpu"
    # a driver of its own, as `arcadebench run` is (Ray keeps one authentication mode a process)
    done = subprocess.run(
        [sys.executable, "-c", NO_CPU_DRIVER, cluster.address, str(out)],
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    outcomes, events = json.loads(done.stdout.strip().splitlines()[-1])
    assert [(key, status, kind) for key, status, kind, _ in outcomes] == [
        ("pong/0", "failed", "NO_CPU"),
        ("pong/1", "failed", "NO_CPU"),
    ]
    for *_, message in outcomes:
        assert message.startswith("no node of the Ray cluster had a CPU for 1 s")
    assert [e[0] for e in events] == ["Waiting", "JobFailed", "JobFailed"]
    assert "wait up to 1 s for one (start a worker node" in events[0][1]
    # nothing was played: the logs the driver opened hold nothing
    assert all(not p.read_text() for p in out.rglob("*.jsonl"))
