"""Damaged input never crashes ``verify``: every malformed line or field is a verdict.

Ordinary bit rot, a hand edit gone wrong or a hostile file: each case below makes its episode
``unverifiable`` (or its header a problem, or its log unreadable, exit 2) with the reason, while
the other episodes and logs still get their verdicts; memory stays bounded whatever a line
claims. A property-based test mutates replay and log lines at random and checks the same.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest
from fuzzing import fuzz
from hypothesis import given
from hypothesis import strategies as st
from testdata import PYTHONPATH_WITH_TESTS

import arcadebench
from arcadebench.benchmarks.replay import verify
from arcadebench.benchmarks.replay.logs import _malformed
from arcadebench.errors import ReplayDamaged
from arcadebench.records import decode_replay, index_replays, replay_path

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """Three short SABER Pong episodes: two from seeds, the third from an unseeded reset."""
    folder = tmp_path_factory.mktemp("recorded")
    env = arcadebench.make("saber", "pong", log_dir=folder, run="r", max_episode_frames=400)
    rng = np.random.default_rng(0)
    for seed in (1, 2, None):
        env.reset(seed=seed)
        while True:
            *_, terminated, truncated, _ = env.step(int(rng.integers(18)))
            if terminated or truncated:
                break
    env.close()
    return folder / "saber" / "pong" / "r.jsonl"


@pytest.fixture
def log(recorded, tmp_path):
    copy = tmp_path / "r.jsonl"
    shutil.copy(recorded, copy)
    shutil.copy(replay_path(recorded), replay_path(copy))
    return copy


def lines(path: Path) -> list[dict]:
    return [json.loads(text) for text in path.read_text().splitlines()]


def write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def change_replay(log: Path, episode: int, change) -> None:
    records = lines(replay_path(log))
    change(records[episode])
    write(replay_path(log), records)


def verdicts(log: Path) -> list[str]:
    found = verify(log, workers=1)
    assert found.exit_status in (0, 1)
    return [c.verdict for c in found.runs[0].episodes]


def reasons(log: Path) -> list[str]:
    return [c.reason for c in verify(log, workers=1).runs[0].episodes]


def test_the_recorded_run_verifies(log):
    assert verdicts(log) == ["verified"] * 3


def flip_base64(text: str) -> str:
    """One base64 character changed: valid base64, broken zlib (bit rot)."""
    middle = len(text) // 2
    return text[:middle] + ("A" if text[middle] != "A" else "B") + text[middle + 1 :]


@pytest.mark.parametrize("field", ["actions", "rewards"])
def test_a_rotten_array_costs_its_episode_only(log, field):
    change_replay(log, 1, lambda r: r.update({field: flip_base64(r[field])}))
    assert verdicts(log) == ["verified", "unverifiable", "verified"]
    assert "its recording is damaged" in reasons(log)[1]


def test_a_line_nested_ten_thousand_deep_is_damaged(log):
    records = replay_path(log).read_text().splitlines()
    records[0] = records[0][:-1] + ', "x": ' + "[" * 10_000 + "]" * 10_000 + "}"
    replay_path(log).write_text("\n".join(records) + "\n")
    assert verdicts(log) == ["unverifiable", "verified", "verified"]
    assert "nested more than 16 deep" in reasons(log)[0]


def test_an_infinite_number_in_a_replay_or_log_line_is_a_verdict(log):
    text = replay_path(log).read_text().replace('"env":0', '"env":1e999', 1)
    replay_path(log).write_text(text)
    assert verdicts(log)[0] == "unverifiable"
    records = log.read_text().splitlines()
    records[2] = records[2].replace('"env": 0', '"env": 1e999')
    log.write_text("\n".join(records) + "\n")
    assert verdicts(log)[:2] == ["unverifiable", "unverifiable"]
    assert "'env' must be a non-negative integer, got inf" in reasons(log)[1]


def test_a_damaged_snapshot_is_a_verdict(log):
    def damage(record):
        state = bytearray(zlib.decompress(base64.b64decode(record["start"]["snapshot"]["ale"])))
        state[len(state) // 2 :] = bytes(len(state) - len(state) // 2)
        record["start"]["snapshot"]["ale"] = base64.b64encode(zlib.compress(state)).decode()

    change_replay(log, 2, damage)
    assert verdicts(log)[:2] == ["verified", "verified"]
    assert verdicts(log)[2] in ("unverifiable", "diverged")
    change_replay(log, 2, lambda r: r["start"]["snapshot"].update({"np_random": {"x": 1}}))
    assert verdicts(log)[2] == "unverifiable"
    assert "refuses the recorded snapshot" in reasons(log)[2]


def test_a_negative_seed_and_an_action_outside_the_game_are_verdicts(log):
    change_replay(log, 0, lambda r: r.update({"start": {"seed": -1}}))
    assert verdicts(log)[0] == "unverifiable" and "'seed' must be an integer" in reasons(log)[0]

    def action_200(record):
        actions = np.frombuffer(zlib.decompress(base64.b64decode(record["actions"])), np.uint8)
        actions = actions.copy()
        actions[5] = 200
        record["actions"] = base64.b64encode(zlib.compress(actions.tobytes())).decode()

    change_replay(log, 1, action_200)
    assert verdicts(log)[1] == "unverifiable"
    assert "action 200 at step 6 is outside the environment's 18 actions" in reasons(log)[1]


@pytest.mark.parametrize(
    ("key", "value"),
    [("steps", "812"), ("return", "a lot"), ("complete", 1), ("deviations", []), ("seed", 1.5)],
)
def test_a_log_field_of_the_wrong_type_is_a_verdict(log, key, value):
    records = lines(log)
    records[2][key] = value
    write(log, records)
    assert verdicts(log) == ["verified", "unverifiable", "verified"]
    assert f"its {key!r} must be" in reasons(log)[1]


@pytest.mark.parametrize(
    "settings",
    [{"obs_type": "rgb"}, {"log_dir": "/tmp"}, {"frameskip": [4, 5]}, ["not", "an", "object"]],
)
def test_a_header_whose_settings_make_no_environment_is_a_problem(log, settings):
    records = lines(log)
    if isinstance(settings, dict):
        records[0]["settings"].update(settings)
    else:
        records[0]["settings"] = settings
    write(log, records)
    found = verify(log, workers=1)
    assert found.exit_status == 1
    assert "the header's settings" in found.runs[0].problems[0]


def bomb(megabytes: int) -> str:
    """A few hundred KB of zlib that decompress to ``megabytes`` MB."""
    inflate = zlib.compressobj(9)
    chunk = bytes(2**20)
    data = b"".join(inflate.compress(chunk) for _ in range(megabytes)) + inflate.flush()
    return base64.b64encode(data).decode()


def test_decompression_is_bounded_by_what_the_line_declares(log, tmp_path):
    payload = bomb(256)
    records = lines(replay_path(log))
    records[0]["actions"] = payload
    records[1]["rewards"] = payload
    records[2]["digests"]["values"] = payload
    write(replay_path(log), records)
    script = (  # VmHWM: this process's peak resident memory (ru_maxrss outlives an exec)
        "import json, re\n"
        "from arcadebench.benchmarks.replay import verify\n"
        f"found = verify({str(log)!r}, workers=1)\n"
        "status = open('/proc/self/status').read()\n"
        "peak = int(re.search(r'VmHWM:\\s+(\\d+) kB', status).group(1)) // 1024\n"
        "print(json.dumps([[c.verdict, c.reason] for c in found.runs[0].episodes] + [peak]))\n"
    )
    env = {**os.environ, "PYTHONPATH": PYTHONPATH_WITH_TESTS}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    *checks, peak_mb = json.loads(done.stdout.splitlines()[-1])
    assert [v for v, _ in checks] == ["unverifiable"] * 3
    assert all("decompresses to more than" in reason for _, reason in checks)
    assert peak_mb < 512  # 256 MB each, three times, had they been inflated


def test_an_unreadable_log_is_one_line_and_the_others_still_get_verdicts(log, tmp_path):
    good = tmp_path / "good" / "r.jsonl"
    good.parent.mkdir()
    shutil.copy(log, good)
    shutil.copy(replay_path(log), replay_path(good))
    records = log.read_text().splitlines()
    records[1] = records[1][: len(records[1]) // 2]  # a corrupt line before the last
    log.write_text("\n".join(records) + "\n")
    found = verify([log, good], workers=1)
    assert found.exit_status == 2
    assert "is not a JSON record" in found.runs[0].unreadable
    assert found.runs[1].ok and found.runs[1].tally("verified") == 3
    env = {**os.environ, "PYTHONPATH": PYTHONPATH_WITH_TESTS}
    done = subprocess.run(
        [sys.executable, "-m", "arcadebench", "verify", str(log), str(good)],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr + done.stdout
    assert "unreadable: " in done.stdout


# -- property-based: any mutation of a line is a verdict, never an exception -----------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=8,
)


def mutated(record: dict, data) -> bytes:
    """``record`` with a field replaced, removed or added, or a byte of its line changed."""
    how = data.draw(st.sampled_from(["replace", "remove", "add", "byte"]))
    record = json.loads(json.dumps(record))
    keys = sorted(record)
    if how == "replace":
        record[data.draw(st.sampled_from(keys))] = data.draw(JSON)
    elif how == "remove":
        del record[data.draw(st.sampled_from(keys))]
    elif how == "add":
        record[data.draw(st.text(max_size=8))] = data.draw(JSON)
    raw = bytearray(json.dumps(record).encode())
    if how == "byte":
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    return bytes(raw) + b"\n"


@fuzz(400)
@given(data=st.data())
def test_any_mutated_replay_line_is_decoded_or_damaged(recorded, data, tmp_path_factory):
    record = json.loads(
        replay_path(recorded).read_text().splitlines()[data.draw(st.integers(0, 2))]
    )
    raw = mutated(record, data)
    try:
        decode_replay(raw)
    except ReplayDamaged as error:
        assert str(error) and "\n" not in str(error)
    path = tmp_path_factory.mktemp("fuzz") / "x.replay"
    path.write_bytes(raw)
    index = index_replays(path)
    lines_written = [line for line in raw.split(b"\n") if line.strip()]
    assert len(index.entries) + len(index.damaged) == len(lines_written)


@fuzz(400)
@given(data=st.data())
def test_any_mutated_log_line_is_well_formed_or_says_why(recorded, data):
    record = lines(recorded)[data.draw(st.integers(1, 3))]
    try:
        changed = json.loads(mutated(record, data))
    except ValueError:
        return  # a line that is no JSON: the log is unreadable, tested above
    if not isinstance(changed, dict):
        return
    problem = _malformed(changed)
    assert problem is None or problem.startswith("its ")


@fuzz(20)
@given(data=st.data())
def test_verify_gives_a_verdict_for_any_mutated_line(recorded, data, tmp_path_factory):
    folder = tmp_path_factory.mktemp("mutated")
    log = folder / "r.jsonl"
    records = recorded.read_text().splitlines(keepends=True)
    replays = replay_path(recorded).read_text().splitlines(keepends=True)
    line = data.draw(st.integers(0, 5))
    if line < 3:
        replays[line] = mutated(json.loads(replays[line]), data).decode("utf-8", "replace")
    else:
        records[line - 2] = mutated(json.loads(records[line - 2]), data).decode("utf-8", "replace")
    log.write_text("".join(records))
    replay_path(log).write_text("".join(replays))
    found = verify(log, workers=1)
    assert found.exit_status in (0, 1, 2)
    assert found.table()
    json.dumps(found.as_dict(), default=list)
