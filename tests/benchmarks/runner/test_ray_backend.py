"""The Ray backend's relay, without Ray: a job that sends its lines to a driver's receiver.

A Ray actor plays :func:`run_job` with a :class:`~arcadebench.records.Relay` whose lines go to
the driver's :class:`~arcadebench.records.RunReceiver`; here both ends run in this process, with
the lines passed by hand, so the log can be compared with the one a local worker writes itself.
"""

from __future__ import annotations

import json
import re

import pytest

from arcadebench.benchmarks.envs.factory import make
from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.reference import resolve_agent
from arcadebench.benchmarks.runner.worker import run_job
from arcadebench.errors import ArcadebenchError, InputError
from arcadebench.records import Relay, RunReceiver, log_path, read_totals, replay_path
from arcadebench.specs import load_spec
from arcadebench.wrappers.monitor import find_monitor

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")

SPEC = load_spec("atari5")
SHORT = {"max_episode_frames": 2000}
VOLATILE = {"time", "wall_time", "versions"}
RANDOM = resolve_agent("random", SPEC).load()


def job(tmp, episodes, resume=False):
    return Job(
        "atari5",
        "qbert",
        0,
        str(tmp),
        "random",
        episodes=episodes,
        resume=resume,
        env_kwargs=SHORT,
    )


def lines(tmp):
    path = log_path(tmp, "atari5", "qbert", "0")
    return [
        {k: v for k, v in json.loads(line).items() if k not in VOLATILE}
        for line in path.read_text().splitlines()
    ]


def relayed(played, sent=None):
    """Play ``played`` as a Ray task would, its lines written by a receiver in this process."""
    path = log_path(played.log_dir, "atari5", played.game, played.run)
    receiver = RunReceiver(SPEC, played.game, played.run, path, resume=played.resume)
    send = (
        receiver.append
        if sent is None
        else (lambda line: (sent.append(line), receiver.append(line)))
    )
    try:
        relay = Relay(receiver.start, send)
        return receiver.start, run_job(played, lambda event: None, RANDOM, {"training": relay})
    finally:
        receiver.close()


def test_a_relayed_job_logs_what_a_local_worker_logs(tmp_path):
    run_job(job(tmp_path / "local", 2), lambda event: None, RANDOM)
    sent = []
    start, summary = relayed(job(tmp_path / "relayed", 2), sent)
    assert start.slot == 0 and start.header and start.streams == {0: (0, 0, 0, 0)}
    assert lines(tmp_path / "relayed") == lines(tmp_path / "local")
    kinds = [json.loads(line)["kind"] for line in sent]
    assert kinds == ["header", "replay", "episode", "replay", "episode"]  # a recording each
    log = log_path(tmp_path / "relayed", "atari5", "qbert", "0")
    assert (
        replay_path(log).read_bytes()
        == replay_path(log_path(tmp_path / "local", "atari5", "qbert", "0")).read_bytes()
    )
    assert summary["log"] == str(log) and summary["episodes"] == 2
    assert read_totals(log) == read_totals(log_path(tmp_path / "local", "atari5", "qbert", "0"))


def test_a_relayed_job_resumes_from_the_driver_log(tmp_path):
    run_job(job(tmp_path / "local", 3), lambda event: None, RANDOM)
    relayed(job(tmp_path / "relayed", 1))
    start, summary = relayed(job(tmp_path / "relayed", 3, resume=True))
    first = lines(tmp_path / "relayed")[1]
    assert not start.header
    assert start.streams == {0: (first["env_steps"], first["env_frames"], 1, 1)}
    assert summary["played"] == 2 and summary["episodes"] == 3
    assert lines(tmp_path / "relayed") == lines(tmp_path / "local")  # one header, 3 episodes


def test_the_receiver_refuses_what_a_local_worker_would_and_stray_lines(tmp_path):
    relayed(job(tmp_path, 1))
    path = log_path(tmp_path, "atari5", "qbert", "0")
    with pytest.raises(ArcadebenchError, match=re.escape("continue that run with resume=True")):
        RunReceiver(SPEC, "qbert", "0", path, resume=False)
    with pytest.raises(ArcadebenchError, match="holds qbert run '0', not qbert run '1'"):
        RunReceiver(SPEC, "qbert", "1", path, resume=True)
    receiver = RunReceiver(SPEC, "qbert", "0", path, resume=True)
    try:
        for line in (b"not json\n", b'{"kind": "episode"}', b'{"kind": "other"}\n'):
            with pytest.raises(InputError, match="must send whole header, replay or episode lines"):
                receiver.append(line)
        other = dict(json.loads(path.read_text().splitlines()[1]), env=3)
        with pytest.raises(InputError, match="holds stream 0, got a record of stream 3"):
            receiver.append((json.dumps(other) + "\n").encode())
    finally:
        receiver.close()
    assert len(path.read_text().splitlines()) == 2  # nothing stray was written


def test_a_local_environment_joining_a_relayed_run_sees_its_episodes(tmp_path):
    path = log_path(tmp_path, "atari5", "qbert", "0")
    receiver = RunReceiver(SPEC, "qbert", "0", path, resume=False)
    try:
        relay = Relay(receiver.start, receiver.append)
        run_job(job(tmp_path, 1), lambda event: None, RANDOM, {"training": relay})
        env = make(SPEC, "qbert", log_dir=tmp_path, run="0", **SHORT)
        try:
            mon = find_monitor(env)
            episode = lines(tmp_path)[1]
            assert mon.stream == 1  # the driver's receiver holds stream 0
            assert mon.run_totals == (episode["total_steps"], episode["total_frames"])
        finally:
            env.close()
    finally:
        receiver.close()
