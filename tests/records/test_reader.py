"""The episode-log reader (`records/reader.py`): a log's header belongs to its spec, as its
episodes do; a log that lost its header says so."""

from __future__ import annotations

import json

import pytest

from arcadebench.errors import InputError, OtherSpec
from arcadebench.records import parse_log
from arcadebench.specs import load_spec

SABER = load_spec("saber")
EDITED = "sha256:" + "1" * 64  # the hash of an edited copy of saber (same name and version)


def header(**change):
    return {
        "kind": "header",
        "format": "arcadebench-episodes/2",
        "spec": "saber",
        "spec_version": 2,
        "spec_hash": SABER.hash,
        "algorithm": "ppo",
        **change,
    }


def episode(i):
    return {
        "kind": "episode",
        "spec": "saber",
        "spec_version": 2,
        "spec_hash": SABER.hash,
        "game": "pong",
        "run": "0",
        "episode": i,
        "return": float(i),
        "total_frames": 1000 * (i + 1),
        "total_steps": 250 * (i + 1),
        "complete": True,
    }


def write(path, *records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_header_of_another_version_of_the_spec_is_refused_at_its_line(tmp_path):
    log = write(tmp_path / "r.jsonl", header(spec_hash=EDITED), episode(0), episode(1))
    with pytest.raises(InputError) as refused:
        parse_log(SABER, log)
    assert refused.value.line == 1 and not isinstance(refused.value, OtherSpec)
    assert str(refused.value) == (
        f"{log}:1: was written with a different version of the 'saber' spec ({EDITED!r}, this "
        f"one is {SABER.hash!r}); score it with the spec file that wrote it"
    )


def test_a_header_of_another_spec_is_another_specs_log(tmp_path):
    log = write(tmp_path / "r.jsonl", header(spec="hwr"), episode(0))
    with pytest.raises(OtherSpec, match=r"r\.jsonl:1: was written for spec 'hwr', not 'saber'"):
        parse_log(SABER, log)


def test_a_header_that_names_no_spec_and_later_headers_are_read_too(tmp_path):
    bare = {"kind": "header", "algorithm": "ppo"}  # says nothing that could contradict
    (run,) = parse_log(SABER, write(tmp_path / "a.jsonl", bare, episode(0)))
    assert run.headed and run.named and run.algorithm == "ppo"
    late = write(tmp_path / "b.jsonl", header(), episode(0), header(spec_hash=EDITED), episode(1))
    with pytest.raises(InputError, match=r"b\.jsonl:3: was written with a different version"):
        parse_log(SABER, late)


def test_a_log_without_its_header_says_so(tmp_path):
    (run,) = parse_log(SABER, write(tmp_path / "r.jsonl", episode(0), episode(1)))
    assert not run.headed and not run.named and run.returns.tolist() == [0.0, 1.0]
    (run,) = parse_log(SABER, write(tmp_path / "h.jsonl", header(), episode(0)))
    assert run.headed and run.named
