"""The board's secret: its file, its published digest, and the seeds drawn from it."""

from __future__ import annotations

import hashlib
import hmac
import re
import stat

import pytest

from arcadebench.benchmarks.leaderboard.secret import (
    check_secret,
    hidden_seed,
    new_secret,
    read_secret,
    secret_digest,
    write_secret,
)
from arcadebench.benchmarks.replay.verify import verify
from arcadebench.benchmarks.runner.evaluate import evaluate
from arcadebench.errors import InputError, InvalidArgument
from arcadebench.records import log_records

ZEROS = "0" * 64
POLICY = "sha256:" + "ab" * 32  # a policy file's hash, as log headers record it


def test_a_new_secret_is_64_hex_digits_and_its_digest_is_the_sha256_of_its_text():
    secret = new_secret()
    assert re.fullmatch(r"[0-9a-f]{64}", secret) and new_secret() != secret
    assert secret_digest(secret) == "sha256:" + hashlib.sha256(secret.encode()).hexdigest()
    assert secret_digest(ZEROS) == (
        "sha256:60e05bd1b195af2f94112fa7197a5c88289058840ce7c6df9693756bc6250f55"
    )
    check_secret(secret, secret_digest(secret))  # the round trip: no error


def test_the_secret_file_is_its_owners_only_and_reads_back(tmp_path):
    path = tmp_path / "board.secret"
    secret = new_secret()
    write_secret(path, secret)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_secret(path) == secret
    path.write_text(f"\n  {secret}  \n")  # surrounding whitespace, as an editor may leave it
    assert read_secret(path) == secret


def test_an_existing_secret_file_is_never_overwritten(tmp_path):
    path = tmp_path / "board.secret"
    write_secret(path, ZEROS)
    message = (
        "`path` must be a new file (a board's secret is never overwritten: the seeds drawn with "
        f"it could no longer be audited), got {str(path)!r}, which exists; keep it, or give "
        "another path"
    )
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        write_secret(path, new_secret())
    assert read_secret(path) == ZEROS


def test_a_file_without_a_secret_is_refused_in_one_line_that_does_not_quote_it(tmp_path):
    missing = tmp_path / "missing.secret"
    with pytest.raises(InputError, match=re.escape(f"{missing}: no such file; give the board")):
        read_secret(missing)
    for text in ("hunter2", ZEROS.upper().replace("0", "A"), ZEROS + "0"):
        path = tmp_path / "bad.secret"
        path.write_text(text)
        with pytest.raises(InputError) as caught:
            read_secret(path)
        message = str(caught.value)
        assert message.startswith(f"{path}: holds no board secret (64 lowercase hexadecimal")
        assert f"it has {len(text)} characters" in message and text not in message
        assert len(message.splitlines()) == 1
    with pytest.raises(InvalidArgument, match=re.escape("`secret` must be 64 lowercase hex")):
        write_secret(tmp_path / "new.secret", "hunter2")
    assert not (tmp_path / "new.secret").exists()


def test_a_secret_that_is_not_the_published_one_is_refused_in_one_line(tmp_path):
    digest = secret_digest(ZEROS)
    other = "1" * 64
    message = (
        f"the secret in {tmp_path / 'other.secret'} is not the one this board published "
        f"({digest}): use the board's secret file"
    )
    with pytest.raises(InvalidArgument, match=f"^{re.escape(message)}$"):
        check_secret(other, digest, source=tmp_path / "other.secret")
    with pytest.raises(InvalidArgument, match=re.escape("the secret given is not the one")):
        check_secret(other, digest)


def test_a_hidden_seed_is_the_hmac_of_the_submission_and_policy_under_the_secret():
    seed = hidden_seed(ZEROS, "ppo-v1", POLICY)
    message = b"arcadebench-leaderboard/1\0ppo-v1\0" + POLICY.encode()
    mac = hmac.new(ZEROS.encode(), message, hashlib.sha256)
    assert seed == int.from_bytes(mac.digest()[:8], "big") & (2**63 - 1)
    assert hidden_seed(ZEROS, "ppo-v1", POLICY) == seed  # deterministic
    assert hidden_seed(ZEROS, "ppo-v2", POLICY) != seed  # another submission
    assert hidden_seed(ZEROS, "ppo-v1", "sha256:" + "cd" * 32) != seed  # another policy file
    assert hidden_seed("1" * 64, "ppo-v1", POLICY) != seed  # another board
    seeds = {hidden_seed(ZEROS, f"run-{i}", POLICY) for i in range(1000)}
    assert len(seeds) == 1000 and all(0 <= s < 2**63 for s in seeds)
    assert max(seeds) > 2**62  # all 63 bits are used
    with pytest.raises(InvalidArgument, match=re.escape("`submission` must be a non-empty")):
        hidden_seed(ZEROS, "", POLICY)
    with pytest.raises(InvalidArgument, match=re.escape("`policy_sha256` must be")):
        hidden_seed(ZEROS, "ppo-v1", "")


def test_the_runner_plays_and_verify_replays_a_hidden_seed(tmp_path):
    seed = hidden_seed(new_secret(), "random-baseline", POLICY)
    seed |= 1 << 62  # the largest seeds too
    evaluate(
        "random",
        "atari100k",
        ["breakout"],
        episodes=2,
        seeds=(seed,),
        workers=1,
        log_dir=tmp_path,
        progress="off",
        reps=0,
    )
    (log,) = tmp_path.glob("*/atari100k/breakout/*.jsonl")
    assert log.name == f"{seed}.eval.jsonl"
    episodes = [r for _, r in log_records(log) if r["kind"] == "episode"]
    assert [(e["seed"], e["index"]) for e in episodes] == [(seed, 0), (seed, 1)]
    (run,) = verify(log, workers=1).runs
    assert run.tally("verified") == 2  # each episode started from its index's seed
    assert [p for p in run.problems if "episodes 2-99 of 0-99 are missing" not in p] == []
