"""A real two-node Ray cluster on one machine, whose worker node cannot see the driver's files.

A head started with no CPUs for tasks, and worker nodes started inside a mount namespace of
their own (``unshare --mount``, also a PID namespace so that killing a node's handle kills the
whole node), with a tmpfs mounted over ``hidden``, the directory the tests' drivers write to.
Whatever a task or actor writes under that directory lands in the node's tmpfs, never on the
driver's disk (the evaluation test checks it with a canary task), as on a cluster without a
shared file system.

Every process is started in a session of its own and stopped by its handle (the head's process
group, the worker node's PID namespace), never with ``ray stop``, which would stop every Ray
instance on the machine (other tests' included). The cluster runs the Ray of a given ``bin``
directory (a virtual environment's), so its workers run that environment's Python: the main
one for the evaluation tests, RLlib's own for the training tests (``rllib_venv.py``).

Used by tests/benchmarks/runner/test_ray_cluster.py and
tests/benchmarks/training/test_ray_cluster_training.py.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
RAY_ENV = {
    "RAY_AUTH_MODE": "disabled",  # Ray 2.60 asks nodes for a token by default
    "RAY_USAGE_STATS_ENABLED": "0",
    # a dead node is noticed in 1-2 s instead of 12-15 s (running tasks fail at once either way)
    "RAY_health_check_period_ms": "500",
    "RAY_health_check_failure_threshold": "3",
}
START_TIMEOUT = 90.0


@functools.cache
def namespaces_missing() -> str | None:
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(path: Path, needle: str, process: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if path.exists() and needle in path.read_text(errors="replace"):
            return
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited ({process.returncode}): {path.read_text()[-2000:]}")
        time.sleep(0.1)
    raise TimeoutError(f"{what} did not start in {START_TIMEOUT:g} s: {path.read_text()[-2000:]}")


class Cluster:
    """A head with no task CPUs and worker nodes that see a tmpfs where ``hidden`` is.

    ``bin`` is the directory of the ``ray`` and ``python`` to run (a virtual environment's).
    """

    def __init__(self, hidden: Path, logs: Path, bin: Path = BIN) -> None:
        self.hidden = hidden
        self.logs = logs
        self.bin = bin
        self.python = str(bin / "python")
        self.temp = Path(tempfile.mkdtemp(prefix="abr", dir="/tmp"))  # short: socket paths
        self.port = free_port()
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
                str(self.bin / "ray"),
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
        wait_for(log, "block forever", self.head, "the Ray head")

    def start_node(self, cpus: int = 2) -> None:
        """A worker node in its own mount and PID namespaces, a tmpfs over ``hidden``."""
        inner = (
            f"mount -t tmpfs tmpfs {self.hidden} && mkdir {self.hidden}/tmp && "
            f"TMPDIR={self.hidden}/tmp exec {self.bin / 'ray'} start --block "
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
        wait_for(log, "block forever", self.node, "the Ray worker node")

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


def start_cluster(tmp_path_factory, bin: Path = BIN) -> Cluster:
    """A cluster whose drivers write under ``<tmp>/shared`` (hidden from its worker nodes)."""
    root = tmp_path_factory.mktemp("ray_cluster")
    hidden = root / "shared"  # the drivers' output directories live here
    hidden.mkdir()
    cluster = Cluster(hidden, tmp_path_factory.mktemp("ray_cluster_logs"), bin)
    try:
        cluster.start_head()
        cluster.start_node()
    except BaseException:
        cluster.stop()
        raise
    return cluster


def run_on_the_node(cluster: Cluster, code: str) -> str:
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
        [cluster.python, "-c", driver], env=cluster.env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]
