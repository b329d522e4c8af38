"""``arcadebench run``: the README's main job, exit statuses, Ctrl-C, SIGKILL and --resume."""

from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
from log_helpers import episodes as read_episodes
from log_helpers import played
from testdata import PYTHONPATH_WITH_TESTS, TESTS

import arcadebench
from arcadebench.benchmarks.runner.messages import FailureKind
from arcadebench.benchmarks.scoring.results import Results
from arcadebench.cli import main
from arcadebench.cli.run_command import ADVICE, summary

ARCADEBENCH = [sys.executable, "-m", "arcadebench"]
ENV = {**os.environ, "PYTHONPATH": PYTHONPATH_WITH_TESTS}


episodes = functools.partial(read_episodes, skip_cut_lines=True)  # killed runs: a cut last line


def count_episodes(log_dir):
    return sum(len(v) for v in episodes(log_dir).values()) if Path(log_dir).exists() else 0


# A terminal's foreground job gets Ctrl-C whatever its parent's signal state: SIGINT unblocked
# and at its default, so the test does not depend on how the suite itself was started (a
# background shell ignores SIGINT in what it starts; a child inherits an ignored or blocked
# signal). Once, on a fresh CI machine, the run went on after the SIGINT: a timeout now fails
# with the process's signal masks and its last output.
AS_A_TERMINAL_JOB = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
    "signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT}); "
    "os.execv(sys.executable, [sys.executable, '-m', 'arcadebench', *sys.argv[1:]])"
)


def signal_state(pid):
    """The process's ignored and blocked signal masks, for a failure message."""
    try:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return "unknown"
    return ", ".join(line for line in status if line.startswith(("SigBlk", "SigIgn")))


def start(args, out):
    """Start `arcadebench run` in a session of its own, as a terminal does (Ctrl-C: the group)."""
    return subprocess.Popen(
        [sys.executable, "-c", AS_A_TERMINAL_JOB, "run", *args, "--out", str(out)],
        env=ENV,
        cwd=TESTS,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_episodes(out, n, process, timeout=60):
    deadline = time.monotonic() + timeout
    while count_episodes(out) < n:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no episode was logged in time"
        time.sleep(0.05)


def group_gone(pgid, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def test_the_main_job_plays_the_five_games_and_prints_the_atari5_estimate(tmp_path):
    started = time.monotonic()
    done = subprocess.run(
        [
            *ARCADEBENCH,
            "run",
            "atari5",
            "--agent",
            "random",
            "--episodes",
            "1",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    aggregates = lines.index("per game")
    assert any(line.split()[:1] == ["atari5"] for line in lines[:aggregates])  # aggregates first
    per_game = " ".join(lines[aggregates:])
    for game in ("battle_zone", "double_dunk", "name_this_game", "phoenix", "qbert"):
        assert game in per_game
        assert len(episodes(tmp_path)[(game, "0")]) == 1
    results = json.loads((tmp_path / "results.json").read_text())
    assert "atari5" in results["algorithms"]["random"]["aggregates"]
    assert results["provenance"]["command"].startswith(
        "arcadebench run atari5 --agent random --episodes 1"
    )
    print(f"main job: {elapsed:.1f} s")  # measured, not asserted (see perf/)


def test_the_main_job_run_twice_plays_once_and_another_agent_adds_a_column(tmp_path, capsys):
    """Reruns are normal: nothing replayed, the same table, exit 0; then noop beside random."""
    args = ["run", "atari5", "--episodes", "1", "--games", "qbert", "--out", str(tmp_path)]
    args += ["--progress", "off", "--reps", "0"]
    assert main([*args, "--agent", "random"]) == 0
    first = capsys.readouterr().out
    log = tmp_path / "random" / "atari5" / "qbert" / "0.jsonl"
    before = log.read_bytes()
    assert main([*args, "--agent", "random"]) == 0
    out, err = capsys.readouterr()
    assert out == first and log.read_bytes() == before
    assert "nothing to play: 1 job asked for, all complete in" in err
    assert main([*args, "--agent", "noop"]) == 0
    header = capsys.readouterr().out.splitlines()[1].split()
    assert header[:1] == ["metric"] and {"random", "noop"} <= set(header)
    assert main([*args[:3], "2", *args[4:], "--agent", "noop"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "1 of 2 episodes); continue them with --resume, or choose another `--out`" in err


SCREEN = 30  # lines: what a one-game run prints, progress off, stdout and stderr together


@pytest.mark.parametrize(
    ("spec", "headline", "published"),
    [
        ("atari5", "hns", "published results (Table 3): median over 1 game"),
        ("saber", "hwrns", 'published results (Table 3, "No limit (SABER)")'),
        ("hwr", "hwrns", "published results (Tables 3 and 7)"),
    ],
)
def test_a_one_game_run_prints_a_screen_and_verbose_prints_every_table(
    spec, headline, published, tmp_path, capsys
):
    """The headline's aggregates, the scores per game, one published block, where the files are.

    Every aggregate and published block (SABER's four printed tables, each repeating our row)
    is what --verbose prints: the table `arcadebench score` prints of the results.
    """
    args = ["run", spec, "--games", "Pong", "--agent", "random", "--episodes", "1"]
    args += ["--out", str(tmp_path), "--progress", "off"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert len((out + err).splitlines()) <= SCREEN, out + err
    rows = [line.split()[:2] for line in out.split("\n\n")[0].splitlines()[3:]]
    assert [headline, "median"] in rows and ["missing", "games"] in rows
    assert {row[0] for row in rows} <= {headline, "missing", "hwrb", "frames", "game"}
    assert "\nper game\n" in out and re.search(rf"\n +{headline} +[-\d.]+%\n", out)
    assert out.count("published ") == 1 and published in out
    assert out.count("random (this run)") == 1
    assert err.endswith(
        f"logs and results.json in {tmp_path} (every table: the same command with --verbose)\n"
    )

    assert main([*args, "--verbose"]) == 0  # nothing to play again: the same results, in full
    verbose = capsys.readouterr().out
    assert verbose == Results.from_json(tmp_path / "results.json").table() + "\n"
    blocks = len(arcadebench.load_spec(spec).published)
    assert verbose.count("published results (") == blocks and len(verbose) > len(out)
    assert verbose.count("random (this run)") >= blocks


def test_the_summary_keeps_the_headline_metric_in_every_table(tmp_path):
    """SABER's checkpoints and per-game scores too; the published block keeps its columns."""
    from report_helpers import saber_logs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the logs' runs fall short of SABER's checkpoints
        results = arcadebench.score("saber", str(saber_logs(tmp_path)), reps=0)
    brief, full = summary(results).split("\n\n"), results.table().split("\n\n")

    def labels(tables, title):
        (table,) = (t for t in tables if t.startswith(title))
        return [line.split()[0] for line in table.splitlines()[3:] if line[:1] != " "]

    for title in ("saber v2", "aggregates by training frames"):
        assert set(labels(brief, title)) == {"hwrns", "hwrb", "missing"}
        assert {"saber", "hns", "classes"} <= set(labels(full, title))
    assert [row for row in brief if row.startswith("per game")] == [
        "per game\ngame      metric  dqn     ppo\n--------  ------  ------  ------\n"
        "breakout  raw       7.75   15.00\n          hwrns    0.72%   1.57%\n"
        "          runs         2       2\npong      raw       7.75   15.00\n"
        "          hwrns   67.95%  85.49%\n          runs         2       2"
    ]
    published = [t for t in brief if t.startswith("published")]
    assert len(published) == 1 and "saber.median  saber.mean  hwrb" in published[0]
    assert published[0] in full


def test_cli_errors_name_the_options_not_the_parameters(tmp_path, capsys):
    assert main(["run", "atari5", "--episodes", "0", "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "arcadebench: error: `--episodes` must be a positive integer, got 0\n"
    )
    assert main(["run", "saber", "--out", str(tmp_path)]) == 2
    assert "got neither; e.g. --episodes 3" in capsys.readouterr().err


def test_bad_input_is_one_line_and_exit_status_2(tmp_path, capsys):
    assert (
        main(["run", "atari5", "--agent", "nope:Agent", "--episodes", "1", "--out", str(tmp_path)])
        == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "arcadebench: error: cannot import agent module 'nope'"
    )
    assert (
        main(["run", "atari5", "--games", "pnog", "--episodes", "1", "--out", str(tmp_path)]) == 2
    )
    assert "Did you mean: 'pong'?" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_backend_ray_without_ray_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if Ray were not installed
    assert (
        main(["run", "atari5", "--episodes", "1", "--backend", "ray", "--out", str(tmp_path)]) == 2
    )
    err = capsys.readouterr().err
    assert (
        err == "arcadebench: error: `--backend ray` needs Ray, which is not installed: "
        "pip install ray (in a clone of arcadebench: pip install -e '.[ray]')\n"
    )


def test_an_unreachable_ray_address_is_one_line_and_exit_status_2(tmp_path, capsys):
    pytest.importorskip("ray")
    out = tmp_path / "out"
    args = ["run", "atari5", "--episodes", "1", "--backend", "ray", "--address", "127.0.0.1:1"]
    assert main([*args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcadebench: error: `--address` must be a running Ray cluster's head")
    assert err.count("\n") == 1 and not out.exists()


def test_failed_jobs_are_listed_and_the_exit_status_is_1(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    status = main(
        [
            "run",
            "atari5",
            "--agent",
            "runner_agents:RaisingAgent",
            "--episodes",
            "3",
            "--games",
            "qbert",
            "phoenix",
            "--out",
            str(tmp_path),
            "--reps",
            "0",
        ]
    )
    out, err = capsys.readouterr()
    assert status == 1
    assert "per game" in out and "qbert" in out  # the finished jobs are scored
    assert (
        "1 job failed" in err and "phoenix/0: the agent raised in phoenix run '0' episode 2" in err
    )
    assert "--resume" in err


@pytest.mark.parametrize(
    ("agent", "where", "kind"),
    [
        ("RaisingAgent", ["atari5", "--games", "phoenix"], FailureKind.AGENT_RAISED),
        ("OutOfRange", ["atari100k", "--games", "pong"], FailureKind.INVALID_ACTION),
        ("KilledAgent", ["atari5", "--games", "phoenix"], FailureKind.WORKER_DIED),
        ("BreakingEmulator", ["atari5", "--games", "phoenix"], FailureKind.ENVIRONMENT),
        ("BreakingEmulatorInBatches", ["atari5", "--games", "phoenix"], FailureKind.ENVIRONMENT),
        (
            "HangingAgent",
            ["atari5", "--games", "phoenix", "--episode-time-limit", "3"],
            FailureKind.WORKER_HUNG,
        ),
    ],
)
def test_the_advice_on_failed_jobs_follows_why_they_failed(
    tmp_path, capsys, monkeypatch, agent, where, kind
):
    """Each kind of failure gets its own advice, decided by its kind, never by its wording."""
    monkeypatch.syspath_prepend(str(TESTS))
    args = ["run", *where, "--agent", f"runner_agents:{agent}", "--episodes", "3"]
    assert main([*args, "--out", str(tmp_path), "--reps", "0"]) == 1
    printed = set(capsys.readouterr().err.splitlines())
    advice = {k for k, line in ADVICE.items() if line.format(out=tmp_path) in printed}
    assert advice == {kind}


def test_every_kind_of_failure_has_its_advice():
    assert set(ADVICE) == set(FailureKind)
    assert {kind for kind in FailureKind if kind.agents_fault} == {
        FailureKind.AGENT_RAISED,
        FailureKind.INVALID_ACTION,
    }


def test_sigint_stops_the_run_within_seconds_and_keeps_finished_episodes(tmp_path):
    process = start(
        [
            "atari5",
            "--agent",
            "runner_agents:SlowRandom",
            "--episodes",
            "20",
            "--games",
            "qbert",
            "phoenix",
            "--workers",
            "2",
        ],
        tmp_path,
    )
    wait_for_episodes(tmp_path, 1, process)
    state = signal_state(process.pid)
    sent = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)  # Ctrl-C in a terminal: the whole foreground group
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"no stop 30 s after SIGINT ({state}):\n{err[-2000:]}")
    stopped = time.monotonic() - sent
    assert process.returncode == 130, err
    assert stopped < 10, f"took {stopped:.1f} s to stop"
    assert "interrupted; the finished episodes are kept" in err and "Traceback" not in err
    assert group_gone(process.pid), "worker processes were left behind"
    kept = episodes(tmp_path)
    assert sum(len(v) for v in kept.values()) >= 1
    assert all(
        e[5] for eps in kept.values() for e in eps
    )  # every kept record is a finished episode
    # and the run continues from there
    done = subprocess.run(
        [
            *ARCADEBENCH,
            "run",
            "atari5",
            "--agent",
            "runner_agents:SlowRandom",
            "--episodes",
            "1",
            "--games",
            "qbert",
            "phoenix",
            "--out",
            str(tmp_path),
            "--resume",
        ],
        env=ENV,
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    resumed = episodes(tmp_path)
    assert all(resumed[key][: len(eps)] == eps for key, eps in kept.items())


def test_a_run_killed_with_sigkill_and_resumed_equals_an_uninterrupted_run(tmp_path):
    args = [
        "atari5",
        "--agent",
        "runner_agents:SlowRandom",
        "--episodes",
        "3",
        "--games",
        "qbert",
        "phoenix",
        "--workers",
        "2",
        "--seeds",
        "0",
        "1",
    ]
    process = start(args, tmp_path / "killed")
    wait_for_episodes(tmp_path / "killed", 2, process)
    os.killpg(process.pid, signal.SIGKILL)  # the parent, the workers, everything
    process.wait(timeout=10)
    assert group_gone(process.pid)
    assert count_episodes(tmp_path / "killed") < 12, "the run finished before it could be killed"
    done = subprocess.run(
        [*ARCADEBENCH, "run", *args, "--out", str(tmp_path / "killed"), "--resume"],
        env=ENV,
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    arcadebench.evaluate(
        "random",
        "atari5",
        ["qbert", "phoenix"],
        episodes=3,
        seeds=[0, 1],
        workers=2,
        log_dir=tmp_path / "whole",
        progress="off",
        reps=0,
    )
    # the random agent plays in lanes, SlowRandom one episode at a time: the same episodes
    resumed, whole = played(tmp_path / "killed"), played(tmp_path / "whole")
    assert resumed == whole
    assert all(len(eps) == 3 for eps in whole.values())
    # the recordings survived the kill as the log did: every logged episode re-simulates
    assert arcadebench.verify(tmp_path / "killed", workers=1).ok
