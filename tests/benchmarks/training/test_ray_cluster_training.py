"""Training on a real two-node Ray cluster whose worker node cannot see the driver's files.

What a run on a cluster must survive, in RLlib's own environment (tests/rllib_venv.py:
``ray[rllib]`` 2.60 pins gymnasium 1.2.2, the package's oldest supported; the rest of the suite runs
the newest): the cluster of tests/ray_cluster_helpers.py runs that environment's Ray, with a head
that has no CPUs for tasks, so every environment plays on the worker node, whose view of the output
directory is a tmpfs of its own. Each example trains a SABER-like game (100-step episodes,
checkpoints at 1,600 and 3,200 frames) to a 4,000-frame budget: RLlib's PPO with its env runner on
the worker node, and the Ape-X example with two explorer actors there. Mid-run the worker node is
killed and a new one started: the run goes on with the streams made again there, and ends with one
log on the driver whose frames are the sum over every stream, no episode twice, the finished
episodes of the dead node kept, the budget stopping it, the checkpoint scores reported at the
driver, and ``arcadebench score`` (the suite's environment) scoring it.

These are the docs' commands (docs/guides/train.md, "On a Ray cluster"), at the test's scale:
``python examples/rllib_ppo.py --game Pong --frames ... --out ... --address ...``, the same with
``examples/apex_ray.py``, then ``arcadebench score``.
"""

from __future__ import annotations

import json
import re
import subprocess
import time

import pytest
from ray_cluster_helpers import namespaces_missing, start_cluster
from rllib_venv import rllib_venv
from testdata import DATA, REPO

from arcadebench.cli import main

pytest.importorskip("ray", reason="a training run on Ray needs `pip install ray`")

pytestmark = pytest.mark.skipif(
    namespaces_missing() is not None,
    reason=f"a worker node that cannot see the driver's files needs namespaces: "
    f"{namespaces_missing()}",
)

SPEC = str(DATA / "specs" / "ray_training.yaml")
BUDGET, EPISODE_FRAMES, SYNC_STEPS, FRAMES_PER_STEP = 4000, 400, 128, 4


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = start_cluster(tmp_path_factory, rllib_venv())
    try:
        yield cluster
    finally:
        cluster.stop()


def lines_of(log):
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def train_killing_the_node(cluster, example, out, log, *args):
    """Run ``example`` on the cluster, kill the worker node once two episodes are logged, start
    a new one; what the run printed, and the log as it was at the kill."""
    command = [cluster.python, str(REPO / "examples" / example), "--spec", SPEC, "--game", "pong"]
    command += ["--frames", str(BUDGET), "--out", str(out), "--address", cluster.address, *args]
    run = subprocess.Popen(
        command, env=cluster.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 240
        # counted, not parsed: the owner may be writing the last line
        while not log.exists() or log.read_text().count('"kind": "episode"') < 2:
            assert run.poll() is None, run.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no episode reached the driver's log"
            time.sleep(0.05)
        cluster.stop_node()
        kept = log.read_text()
        cluster.start_node()  # the streams are made again there
        stdout, stderr = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, stderr[-3000:]
    return stdout, kept


def check_the_run(log, kept, algorithm, initial, past):
    """One log on the driver: the run of every stream, the dead node's episodes kept, no
    episode twice, its frames the sum over the streams, stopped by the budget.

    ``initial`` streams played on the node that was killed; the streams made again on the new
    node have the next slots. The run ends fewer than ``past`` frames past the budget."""
    assert log.read_text().startswith(kept)  # what reached the driver before the kill stays
    header, *episodes = lines_of(log)
    assert header["kind"] == "header" and header["algorithm"] == algorithm
    assert header["budget"]["frames"] == BUDGET
    streams = {r["env"] for r in episodes}
    assert max(streams) >= initial, "no stream was made again on the new node"
    for env in streams:  # numbered in order, none twice
        numbers = [r["episode"] for r in episodes if r["env"] == env]
        assert numbers == list(range(len(numbers)))
    totals = [r["total_frames"] for r in episodes]
    assert totals == sorted(totals)
    assert BUDGET <= totals[-1] < BUDGET + past  # the budget stopped the run
    # the sum of every stream's frames: the episodes logged, and what the dead node's streams
    # had played of their episode in flight when they last reported it (less than an episode)
    lost = totals[-1] - sum(r["frames"] for r in episodes)
    assert 0 <= lost < initial * EPISODE_FRAMES
    return episodes


def score(out, capsys):
    """``arcadebench score`` of the run (in this process: the suite's newest gymnasium)."""
    capsys.readouterr()
    assert main(["score", SPEC, str(out), "--reps", "0"]) == 0
    return capsys.readouterr().out


def test_rllib_ppo_on_the_worker_node_trains_to_the_budget_through_the_nodes_death(cluster, capsys):
    out = cluster.hidden / "ppo"
    log = out / "raytraining" / "pong" / "ppo-seed1.jsonl"
    stdout, kept = train_killing_the_node(
        cluster,
        "rllib_ppo.py",
        out,
        log,
        *("--env-runners", "1", "--obs-type", "ram", "--rollout", "200", "--epochs", "1"),
    )
    # one env runner plays at the end: it reports at every step near the budget (its share
    # leaves room for the dead one's last grant), so it stops within one step
    check_the_run(log, kept, "rllib-ppo", initial=1, past=FRAMES_PER_STEP)
    # the callback's view at the driver, each iteration: the run's frames and the checkpoints
    iterations = [line for line in stdout.splitlines() if line.startswith("iteration")]
    assert re.search(r"run frames +4,00\d", iterations[-1]), iterations[-1]
    assert "checkpoint 1,600:" in iterations[-1] and "checkpoint 3,200:" in iterations[-1]
    assert "the run's budget of 4,000 frames is used up" in stdout
    scored = score(out, capsys)
    assert "rllib-ppo" in scored and "pong" in scored and "@1.6k" in scored


def test_the_apex_example_on_the_worker_node_trains_to_the_budget_through_the_nodes_death(
    cluster, capsys
):
    if cluster.node is None:
        cluster.start_node()
    out = cluster.hidden / "apex"
    log = out / "raytraining" / "pong" / "apex-seed1.jsonl"
    stdout, kept = train_killing_the_node(cluster, "apex_ray.py", out, log, "--explorers", "2")
    # two explorers play at the end, each idle while the learner learns: either may still play
    # what it was granted before (the bound: fewer than SYNC_STEPS steps each)
    check_the_run(log, kept, "apex-linear", initial=2, past=2 * SYNC_STEPS * FRAMES_PER_STEP)
    assert "the run's budget of 4,000 frames is used up" in stdout
    scored = score(out, capsys)
    assert "apex-linear" in scored and "pong" in scored
