"""The Ray backend on a real two-node cluster whose worker node cannot see the driver's files.

One machine plays the cluster: a head started with no CPUs for tasks, and a worker node started
inside a mount namespace of its own (``unshare --mount``, also a PID namespace so that killing
its handle kills the whole node), with a tmpfs mounted over the test's directory. Whatever a task
writes under that directory lands in the node's tmpfs, never on the driver's disk (checked by a
canary task), as on a cluster without a shared file system. The tests run ``arcadebench run``
as a user would, kill the worker node mid-run, and resume.

Every process is started in a session of its own and stopped by its handle (the head's process
group, the worker node's PID namespace), never with ``ray stop``, which would stop every Ray
instance on the machine (other tests' included).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the Ray backend needs `pip install 'arcadebench[ray]'`")

BIN = Path(sys.executable).parent
RAY_ENV = {
    "RAY_AUTH_MODE": "disabled",  # Ray 2.60 asks nodes for a token by default
    "RAY_USAGE_STATS_ENABLED": "0",
    # a dead node is noticed in 1-2 s instead of 12-15 s (running tasks fail at once either way)
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}
START_TIMEOUT = 90.0


def _namespaces_work() -> str | None:
    """Why this machine cannot create the worker node's namespaces, or ``None``."""
    if shutil.which("unshare") is None:
        return "`unshare` (util-linux) is not installed"
    try:
        done = subprocess.run(
            ["unshare", "--mount", "--propagation", "private", "--pid", "--fork", "true"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except OSError as error:
        return f"`unshare` cannot run: {error}"
    if done.returncode != 0:
        return f"cannot create mount and PID namespaces ({done.stderr.strip()[:200]}); run as root"
    return None


pytestmark = pytest.mark.skipif(
    _namespaces_work() is not None,
    reason=f"a worker node that cannot see the driver's files needs namespaces: "
    f"{_namespaces_work()}",
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(path: Path, needle: str, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if path.exists() and needle in path.read_text(errors="replace"):
            return
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode}): {path.read_text()[-2000:]}")
        time.sleep(0.1)
    raise TimeoutError(f"{what} did not start in {START_TIMEOUT:g} s: {path.read_text()[-2000:]}")


class Cluster:
    """A head with no task CPUs and worker nodes that see a tmpfs where ``hidden`` is."""

    def __init__(self, hidden: Path, logs: Path) -> None:
        self.hidden = hidden
        self.logs = logs
        self.temp = Path(tempfile.mkdtemp(prefix="abr", dir="/tmp"))  # short: socket paths
        self.port = _free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"} | RAY_ENV
        self.head: subprocess.Popen | None = None
        self.node: subprocess.Popen | None = None
        self.nodes = 0

    def _start(self, command: list[str], name: str) -> tuple[subprocess.Popen, Path]:
        log = self.logs / f"{name}.log"
        with open(log, "w") as out:
            process = subprocess.Popen(
                command,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # the head's processes: one group, killed together
            )
        return process, log

    def start_head(self) -> None:
        self.head, log = self._start(
            [
                str(BIN / "ray"),
                "start",
                "--head",
                "--block",
                "--num-cpus=0",
                f"--port={self.port}",
                f"--temp-dir={self.temp}",
                "--include-dashboard=false",
                "--disable-usage-stats",
            ],
            "head",
        )
        _wait_for(log, "block forever", self.head, "the Ray head")

    def start_node(self, cpus: int = 2) -> None:
        """A worker node in its own mount and PID namespaces, a tmpfs over ``hidden``."""
        inner = (
            f"mount -t tmpfs tmpfs {self.hidden} && mkdir {self.hidden}/tmp && "
            f"TMPDIR={self.hidden}/tmp exec {BIN / 'ray'} start --block "
            f"--address={self.address} --num-cpus={cpus} --temp-dir={self.temp} "
            "--disable-usage-stats"
        )
        self.nodes += 1
        self.node, log = self._start(
            [
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "--pid",
                "--fork",
                "--kill-child",  # unshare killed: its namespace's init, hence every process, too
                "--mount-proc",
                "bash",
                "-c",
                inner,
            ],
            f"node{self.nodes}",
        )
        _wait_for(log, "block forever", self.node, "the Ray worker node")

    def stop_node(self) -> None:
        """SIGKILL the node's handle: the kernel kills every process of its PID namespace."""
        if self.node is not None and self.node.poll() is None:
            self.node.kill()
        if self.node is not None:
            self.node.wait(30)
        self.node = None

    def stop(self) -> None:
        self.stop_node()
        if self.head is not None:
            try:
                os.killpg(self.head.pid, signal.SIGKILL)  # gcs, raylet, workers: one group
            except ProcessLookupError:
                pass
            self.head.wait(30)
        shutil.rmtree(self.temp, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray_cluster")
    hidden = root / "shared"  # the driver's output directories live here
    hidden.mkdir()
    logs = tmp_path_factory.mktemp("ray_cluster_logs")
    cluster = Cluster(hidden, logs)
    try:
        cluster.start_head()
        cluster.start_node()
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
    records = [json.loads(line) for line in log.read_text().splitlines()]
    return [
        (r["episode"], r["return"], r["steps"], r["frames"], r["total_frames"], r["complete"])
        for r in records
        if r["kind"] == "episode"
    ]


def run_on_the_node(cluster, code: str) -> str:
    """Run ``code`` as a Ray task on the worker node (from a driver of its own); its result."""
    driver = (
        "import ray, os\n"
        f"ray.init(address={cluster.address!r}, log_to_driver=False)\n"
        "@ray.remote(num_cpus=1, max_retries=0)\n"
        "def task():\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "print(ray.get(task.remote(), timeout=120))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", driver], env=cluster.env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


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
    assert [e[0] for e in found] == [0, 1] and all(e[5] for e in found)
    assert not list(out.rglob("*.stderr.txt"))


def started(log: Path) -> bool:
    """Whether a job's task has started: its header reached the driver's log."""
    return log.exists() and log.stat().st_size > 0


def test_a_node_that_dies_mid_run_fails_only_its_jobs_and_resume_completes_them(cluster):
    if cluster.node is None:
        cluster.start_node()
    out = cluster.hidden / "killed"
    logs = [out / "random" / "saber" / "pong" / f"{seed}.jsonl" for seed in range(3)]
    quota = 5
    # three jobs on two CPUs: two run, the third waits for a CPU
    run = arcadebench_run(cluster, out, episodes=quota, seeds=(0, 1, 2), wait=False)
    try:
        deadline = time.monotonic() + 180
        while sum(map(started, logs)) < 2 or not any(started(g) and episodes(g) for g in logs):
            assert run.poll() is None, run.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no episode reached the driver's logs"
            time.sleep(0.05)
        cluster.stop_node()
        running = [log for log in logs if started(log)]
        kept = {log: log.read_text() for log in running}
        cluster.start_node()  # the job still waiting runs on the new node
        stdout, stderr = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, stderr[-3000:]
    failed = [line for line in stderr.splitlines() if line.startswith("  pong/")]
    assert len(failed) == 2, stderr[-3000:]
    assert all("the Ray node running it died (NodeDiedError)" in line for line in failed)
    (waiting,) = set(logs) - set(running)
    assert len(episodes(waiting)) == quota
    for log, text in kept.items():
        assert log.read_text().startswith(text)  # the finished episodes are kept
        assert len(episodes(log)) < quota
    assert sum(len(episodes(log)) for log in running) > 0

    status, stdout, stderr = arcadebench_run(
        cluster, out, "--resume", episodes=quota, seeds=(0, 1, 2)
    )
    assert status == 0, stderr[-3000:]
    for log in logs:
        found = episodes(log)
        assert [e[0] for e in found] == list(range(quota)) and all(e[5] for e in found)
        frames = [e[3] for e in found]
        assert [e[4] for e in found] == [sum(frames[: i + 1]) for i in range(quota)]
    for log, text in kept.items():
        assert log.read_text().startswith(text)
    results = json.loads((out / "results.json").read_text())
    assert results["algorithms"]["random"]["games"]["pong"]["episodes"] == 3 * quota


NO_CPU_DRIVER = """
import json, sys, time
import ray
from arcadebench.benchmarks.runner.ray_backend import run_ray
from arcadebench.benchmarks.runner.worker import Job

ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)
deadline = time.monotonic() + 60
while ray.cluster_resources().get("CPU", 0) and time.monotonic() < deadline:
    time.sleep(0.1)  # the head notices the dead node within 1-2 s
jobs = [Job("saber", "pong", seed, sys.argv[2], "random", "random", episodes=1) for seed in (0, 1)]
events = []
outcomes = run_ray(jobs, workers=1, on_event=events.append, cpu_wait=1)
print(json.dumps([[[o.job.key, o.status, o.message] for o in outcomes], events]))
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
    assert [(key, status) for key, status, _ in outcomes] == [
        ("pong/0", "failed"),
        ("pong/1", "failed"),
    ]
    for _, _, message in outcomes:
        assert message.startswith("no node of the Ray cluster had a CPU for 1 s")
    assert [e[0] for e in events] == ["waiting", "failed", "failed"]
    assert "wait up to 1 s for one (start a worker node" in events[0][2]
    # nothing was played: the logs the driver opened hold nothing
    assert all(not p.read_text() for p in out.rglob("*.jsonl"))
