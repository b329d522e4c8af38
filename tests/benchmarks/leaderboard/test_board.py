"""A leaderboard built from real runs, honest and not, and opened in headless Chromium.

One board gets: a random agent's and a noop agent's SABER runs (accepted, replay-verified), a
saved SB3 policy's evaluation submitted with its policy (accepted, re-executed on the board's
hidden seed), a copy of the random run whose results.json was edited and one whose best
episode was duplicated (both rejected, the reasons kept), and a run of another protocol (a page
of its own). The built site is opened in Chromium: the ranking, the badges and the rejected
page. Bad input is refused in one line and records nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from chromium import dump_dom, needs_chromium
from stable_baselines3 import PPO

import arcadebench
from arcadebench.benchmarks.leaderboard import (
    add_submission,
    build_site,
    load_board,
    open_board,
)
from arcadebench.benchmarks.leaderboard.secret import hidden_seed, read_secret
from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env
from arcadebench.cli import main
from arcadebench.errors import ArcadebenchError

GAME = "Boxing"  # a two-minute bout: every agent's episode ends by the clock, quickly


def _run(agent: str, spec: str, out: Path, **kwargs) -> Path:
    arcadebench.evaluate(
        agent, spec, [kwargs.pop("game", GAME)], log_dir=out, progress="off", reps=0, **kwargs
    )
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The board after every submission, its secret file, the runs and the records."""
    root = tmp_path_factory.mktemp("leaderboard")
    secret = root / "board.secret"
    board = open_board(root / "board", secret, title="Test board", episodes=8)
    runs = root / "runs"
    random_run = _run("random", "saber", runs / "random", episodes=2, seeds=(0, 1))
    noop_run = _run("noop", "saber", runs / "noop", episodes=2, seeds=(0, 1))
    envs = make_sb3_vec_env("saber", "Breakout", 2, log_dir=False)
    model = PPO("CnnPolicy", envs, n_steps=32, batch_size=64, n_epochs=1, device="cpu", seed=0)
    model.learn(64)
    envs.close()
    model.save(root / "ppo_tiny.zip")
    policy = f"sb3:PPO:{root / 'ppo_tiny.zip'}:stochastic"  # acts like random: short episodes
    sb3_run = _run(policy, "saber", runs / "sb3", game="Breakout", episodes=4)
    edited = runs / "edited"
    shutil.copytree(random_run, edited)
    document = json.loads((edited / "results.json").read_text())
    (block,) = document["algorithms"].values()
    block["games"]["boxing"]["raw"] = 99.0
    (edited / "results.json").write_text(json.dumps(document))
    duplicated = runs / "duplicated"
    shutil.copytree(random_run, duplicated)
    log = next(duplicated.rglob("0.jsonl"))
    lines = log.read_text().splitlines()
    best = max(lines[1:], key=lambda line: json.loads(line)["return"])
    log.write_text("\n".join([*lines, best]) + "\n")
    other = _run("random", "machado2018", runs / "machado", game="Breakout", episodes=2)
    records = {
        "random": add_submission(board.path, random_run, meta={"name": "random", "authors": "A"}),
        "noop": add_submission(board.path, noop_run),
        "sb3": add_submission(board.path, sb3_run, policy=policy, secret_file=secret),
        "edited": add_submission(board.path, edited, name="edited"),
        "duplicated": add_submission(board.path, duplicated, name="duplicated"),
        "machado": add_submission(board.path, other, name="machado-random"),
    }
    return board.path, secret, root, records


def test_honest_runs_are_accepted_with_what_was_checked(made):
    _, _, _, records = made
    for name in ("random", "noop", "machado"):
        record = records[name]
        assert record.status == "accepted", record.reason
        assert record.badge == "replay-verified"
        verification = record.verification
        assert verification["verified"] == verification["episodes"] > 0
        assert (record.folder / "run" / "results.json").is_file()
        assert list((record.folder / "report").glob("episode_*_best.gif"))  # clips, cached
    assert records["random"].scored == "training"
    assert records["machado"].spec["name"] == "machado2018"


def test_a_policy_is_re_executed_on_the_hidden_seed(made):
    board, secret, _, records = made
    record = records["sb3"]
    assert record.status == "accepted", record.reason
    assert record.badge == "re-executed on hidden seeds" and record.scored == "evaluation"
    reexecution = record.reexecution
    digest = record.agent["sha256"]
    assert reexecution["seed"] == hidden_seed(read_secret(secret), record.name, digest)
    assert reexecution["episodes"] == 8 and all(g["reproduced"] for g in reexecution["games"])
    assert record.agent["sha256"] == reexecution["policy_sha256"]


def test_an_edited_or_cherry_picked_run_is_rejected_with_its_reason(made):
    board, _, _, records = made
    edited, duplicated = records["edited"], records["duplicated"]
    assert edited.status == duplicated.status == "rejected"
    assert edited.reason.startswith("verification failed") and "raw" in edited.reason
    assert "duplicate" in duplicated.reason
    kept = {r.name: r.reason for r in load_board(board).rejected()}
    assert kept == {"edited": edited.reason, "duplicated": duplicated.reason}
    assert not (Path(board) / "submissions" / "edited").exists()  # nothing of the run stays
    assert not (Path(board) / ".incoming").exists()


def test_a_taken_name_another_version_and_mixed_protocols_are_rejected(made, tmp_path):
    board, _, root, _ = made
    again = add_submission(board, root / "runs" / "random", name="noop")
    assert again.status == "rejected" and "taken" in again.reason
    mixed = tmp_path / "mixed"
    shutil.copytree(root / "runs" / "random", mixed)
    shutil.copytree(root / "runs" / "machado" / "random", mixed / "other")
    rejected = add_submission(board, mixed, name="mixed")
    assert rejected.status == "rejected" and rejected.reason.startswith("mixed protocols")
    damaged = tmp_path / "damaged"
    shutil.copytree(root / "runs" / "noop", damaged)
    (damaged / "results.json").write_text("{")
    assert "damaged folder" in add_submission(board, damaged, name="damaged").reason


def test_a_resubmission_a_link_or_inputs_outside_the_folder_are_rejected(made, tmp_path):
    board, _, root, _ = made
    again = add_submission(board, root / "runs" / "noop", name="noop-again")
    assert again.status == "rejected" and "the same episodes as the accepted 'noop'" in again.reason
    linked = tmp_path / "linked"
    shutil.copytree(root / "runs" / "random", linked)
    (linked / "notes.txt").symlink_to("/etc/hostname")
    assert "notes.txt is a link" in add_submission(board, linked, name="linked").reason
    outside = tmp_path / "outside"
    shutil.copytree(root / "runs" / "random", outside)
    document = json.loads((outside / "results.json").read_text())
    theirs = [str(p) for p in (root / "runs" / "random").rglob("*.jsonl")]
    document["provenance"]["inputs"] = [os.path.relpath(p, outside) for p in theirs]
    (outside / "results.json").write_text(json.dumps(document))
    reason = add_submission(board, outside, name="outside").reason
    assert reason.startswith("results.json was scored from inputs outside its folder"), reason


def test_bad_input_is_one_line_and_records_nothing(made, tmp_path, capsys):
    path, _, root, _ = made
    board = str(path)
    before = sorted(p.name for p in (path / "rejected").iterdir())
    assert main(["leaderboard", "add", str(tmp_path / "no-board"), str(root)]) == 2
    assert main(["leaderboard", "add", board, str(tmp_path / "no-run")]) == 2
    policy_without_secret = ["--policy", "random"]
    assert (
        main(["leaderboard", "add", board, str(root / "runs" / "noop"), *policy_without_secret])
        == 2
    )
    wrong = tmp_path / "wrong.secret"
    wrong.write_text("0" * 64)
    assert (
        main(
            [
                "leaderboard",
                "add",
                board,
                str(root / "runs" / "sb3"),
                "--policy",
                "random",
                "--secret-file",
                str(wrong),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert all(line.startswith("arcadebench: error: ") for line in err.splitlines()), err
    assert sorted(p.name for p in (path / "rejected").iterdir()) == before


def test_the_command_line_says_accepted_or_rejected(made, tmp_path, capsys):
    _, _, root, _ = made
    secret = tmp_path / "s.secret"
    board = tmp_path / "cli-board"
    assert main(["leaderboard", "open", str(board), "--secret-file", str(secret)]) == 0
    assert main(["leaderboard", "add", str(board), str(root / "runs" / "noop")]) == 0
    assert main(["leaderboard", "add", str(board), str(root / "runs" / "edited")]) == 1
    out, err = capsys.readouterr()
    assert "accepted noop" in out and "replay-verified" in out
    # named after its agent, and said in one line
    assert (
        err.startswith("arcadebench: rejected random: verification failed") and err.count("\n") == 1
    )
    assert main(["leaderboard", "close", str(board), "--secret-file", str(secret)]) == 0
    assert load_board(board).settings.secret == read_secret(secret)
    with pytest.raises(ArcadebenchError, match="closed"):
        add_submission(board, root / "runs" / "random")


def test_two_adds_at_once_take_turns_and_one_name_is_given_once(made, tmp_path):
    _, _, root, _ = made
    board = tmp_path / "busy-board"
    open_board(board, tmp_path / "busy.secret")
    adds = [
        subprocess.Popen(
            [sys.executable, "-m", "arcadebench", "leaderboard", "add", str(board), str(run)]
            + ["--name", "same"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for run in (root / "runs" / "random", root / "runs" / "noop")
    ]
    done = [(add.wait(timeout=600), *add.communicate()) for add in adds]
    assert sorted(code for code, _, _ in done) == [0, 1], done
    (rejection,) = [err for code, _, err in done if code == 1]
    assert "the name 'same' is taken" in rejection and "Traceback" not in rejection
    (accepted,) = load_board(board).accepted()
    assert accepted.name == "same" and not (board / ".incoming").exists()


@needs_chromium
def test_the_site_ranks_badges_and_lists_rejections_in_chromium(made, tmp_path):
    board, _, _, records = made
    site = tmp_path / "site"
    index = build_site(board, site)
    home, console = dump_dom(index.resolve().as_uri(), tmp_path / "profile")
    assert console == [], console
    assert "Test board" in home and "saber.html" in home and "machado2018.html" in home
    saber, console = dump_dom((site / "saber.html").resolve().as_uri(), tmp_path / "profile")
    assert console == [], console
    assert "replay-verified" in saber and "re-executed on hidden seeds" in saber
    assert "published (not verified)" in saber
    assert "machado-random" not in saber  # another protocol's row is on its own page
    random_at, noop_at = saber.index(">random<"), saber.index(">noop<")
    assert random_at < noop_at  # random boxes better than standing still
    rejected, console = dump_dom((site / "rejected.html").resolve().as_uri(), tmp_path / "p")
    assert console == [], console
    for name in ("edited", "duplicated"):
        assert name in rejected and records[name].reason.split(":")[0] in rejected


def test_a_long_run_replays_a_stated_sample_and_metadata_reads_as_yaml(made, tmp_path):
    _, _, root, _ = made
    board = open_board(tmp_path / "b", tmp_path / "s.secret", sample=1, sample_above_frames=1)
    meta = tmp_path / "meta.yaml"
    meta.write_text("name: Noop, sampled\nauthors: [A, B]\ndate: 2026-11-28\n")
    record = add_submission(board.path, root / "runs" / "noop", meta=meta)
    assert record.status == "accepted" and record.name == "noop-sampled"
    assert record.meta == {"name": "Noop, sampled", "authors": ["A", "B"], "date": "2026-11-28"}
    assert record.verification["sample"] == 1 and record.verification["verified"] == 2  # 2 logs
    assert "a sample of at most 1 episode a log" in record.checks[1]["detail"]
    meta.write_text("name: x\nprice: 3\n")
    with pytest.raises(ArcadebenchError, match="unknown keys \\['price'\\]"):
        add_submission(board.path, root / "runs" / "random", meta=meta)
