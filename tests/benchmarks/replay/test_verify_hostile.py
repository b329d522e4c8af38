"""``verify`` tried as a hostile reviewer would: edited, cherry-picked, relabelled, damaged runs.

A SABER run of the random agent (Pong and Breakout, three episodes a job) is submitted as a
results folder; each test changes it the way someone who wants a better number, or a disk that
rots, would, and checks that the verification says so (exit 1 with the line or field named, or
exit 2 for what cannot be read), never "verified", never a traceback.
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
from testdata import DATA, PYTHONPATH_WITH_TESTS

import arcadebench
from arcadebench.benchmarks.replay import verify
from arcadebench.records import episode_seeds, replay_path

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    """``arcadebench run saber --games Pong Breakout --agent random --episodes 3 --out res``."""
    root = tmp_path_factory.mktemp("submitted")
    arcadebench.evaluate(
        "random", "saber", ["pong", "breakout"], episodes=3, log_dir=root / "res",
        progress="off", reps=200, workers=2,
    )  # fmt: skip
    return root / "res"


@pytest.fixture
def res(submitted, tmp_path):
    """A copy of the submitted folder to change."""
    return Path(shutil.copytree(submitted, tmp_path / "res"))


def pong(folder: Path) -> Path:
    return folder / "random" / "saber" / "pong" / "0.jsonl"


def lines(path: Path) -> list[dict]:
    return [json.loads(text) for text in path.read_text().splitlines()]


def write(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": PYTHONPATH_WITH_TESTS}
    return subprocess.run(
        [sys.executable, "-m", "arcadebench", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def failures(found, verdict):
    return [c for run in found.runs for c in run.episodes if c.verdict == verdict]


def test_the_submitted_folder_verifies_whole(submitted):
    found = verify(submitted / "results.json", workers=2)
    assert found.exit_status == 0, found.table()
    (results,) = found.results
    assert results.ok and results.compared > 50  # scores, aggregates, classes, intervals
    assert [run.tally("verified") for run in found.runs] == [3, 3]


def test_an_edited_results_file_fails_with_the_field_named(res, tmp_path):
    document = json.loads((res / "results.json").read_text())
    document["algorithms"]["random"]["games"]["breakout"]["raw"] = 400
    (res / "results.json").write_text(json.dumps(document))
    outcome = cli("verify", str(res / "results.json"), cwd=tmp_path)
    assert outcome.returncode == 1, outcome.stdout + outcome.stderr
    assert "algorithms.random.games.breakout.raw: claimed 400, recomputed" in outcome.stdout
    assert "Traceback" not in outcome.stderr


def test_the_inputs_are_found_beside_the_results_never_in_the_current_directory(res, tmp_path):
    reviewer = tmp_path / "reviewer"
    own = pong(reviewer / "res")
    own.parent.mkdir(parents=True)
    shutil.copy(pong(res), own)  # the reviewer's own copy, which they then edit
    shutil.copy(replay_path(pong(res)), replay_path(own))
    records = lines(pong(res))
    records[1]["return"] = 999.0  # the submitted log claims 999
    write(pong(res), records)
    outcome = cli("verify", str(res / "results.json"), "--json", "verdicts.json", cwd=reviewer)
    assert outcome.returncode == 1, outcome.stdout
    verdicts = json.loads((reviewer / "verdicts.json").read_text())
    (failed,) = [run for run in verdicts["runs"] if not run["episodes"][0]["verdict"] == "verified"]
    assert failed["log"] == str(pong(res))
    assert failed["episodes"][0]["reason"].startswith("the log says return 999.0")


def test_a_copied_folder_is_verified_against_its_own_logs(res, tmp_path):
    copy = Path(shutil.copytree(res, tmp_path / "elsewhere" / "copy"))
    records = lines(pong(res))
    records[2]["return"] = 999.0  # the original changes: the copy does not care
    write(pong(res), records)
    found = verify(copy / "results.json", workers=2)
    assert found.ok, found.table()
    assert {Path(run.log).parent.parent.parent.parent for run in found.runs} == {copy}


def test_a_format_one_results_file_finds_its_inputs_below_it_and_says_so(res, tmp_path):
    document = json.loads((res / "results.json").read_text())
    document["format"] = "arcadebench-results/1"
    document["provenance"]["inputs"] = [
        "old/place/res/" + i for i in document["provenance"]["inputs"]
    ]
    for key in ("curve", "compare"):
        document["settings"].pop(key, None)
    (res / "results.json").write_text(json.dumps(document))
    found = verify(res / "results.json", workers=2)
    assert found.ok, found.table()
    assert "first 3 part(s) of each recorded path dropped" in found.results[0].note
    shutil.rmtree(res / "random" / "saber" / "breakout")
    missing = verify(res / "results.json", workers=2)
    assert missing.exit_status == 2 and "not beside it" in missing.results[0].unreadable


def recording_of(replays: list[dict], record: dict) -> int:
    """The position of an episode line's recording among a replay file's lines."""
    key = (record["env"], record["episode"])
    return next(i for i, r in enumerate(replays) if (r["env"], r["episode"]) == key)


def test_the_best_episode_logged_again_is_a_duplicate(res):
    records, replays = lines(pong(res)), lines(replay_path(pong(res)))
    best = max(records[1:], key=lambda r: r["return"])
    recording = replays[recording_of(replays, best)]
    after = 1 + max(r["episode"] for r in records[1:] if r["env"] == 0)
    for extra in range(3):  # renumbered as a forger would: the next episodes and indices
        records.append(dict(best, env=0, episode=after + extra, index=3 + extra))
        replays.append(dict(recording, env=0, episode=after + extra))
    write(pong(res), records)
    write(replay_path(pong(res)), replays)
    found = verify(res, workers=2)
    assert found.exit_status == 1
    assert [c.line for c in failures(found, "duplicate")] == [5, 6, 7]
    assert f"line {records.index(best) + 1}'s" in failures(found, "duplicate")[0].reason


def test_the_worst_episode_deleted_leaves_the_job_incomplete(res):
    records, replays = lines(pong(res)), lines(replay_path(pong(res)))
    worst = min(records[1:], key=lambda r: r["return"])
    del replays[recording_of(replays, worst)]
    records.remove(worst)
    write(pong(res), records)
    write(replay_path(pong(res)), replays)
    found = verify(res / "results.json", workers=2)
    assert found.exit_status == 1
    (run,) = [r for r in found.runs if r.game == "pong"]
    assert any(f"episodes {worst['index']} of 0-2 are missing" in p for p in run.problems)


def test_an_episode_of_another_seed_is_a_wrong_seed(res, tmp_path):
    records, replays = lines(pong(res)), lines(replay_path(pong(res)))
    other = tmp_path / "other"
    env = arcadebench.make("saber", "pong", log_dir=other, run="0")
    rng = np.random.default_rng(5)
    env.reset(seed=123)  # the same game and settings, not the seed of index 2
    while True:
        *_, terminated, truncated, _ = env.step(int(rng.integers(18)))
        if terminated or truncated:
            break
    env.close()
    played = lines(other / "saber" / "pong" / "0.jsonl")[1]
    (line,) = [i for i, r in enumerate(records) if r.get("index") == 2]
    target = records[line]
    records[line] = {**target, **{k: played[k] for k in ("return", "steps", "frames")}}
    replacement = lines(replay_path(other / "saber" / "pong" / "0.jsonl"))[0]
    key = {"env": target["env"], "episode": target["episode"]}
    replays[recording_of(replays, target)] = dict(replacement, **key)
    write(pong(res), records)
    write(replay_path(pong(res)), replays)
    found = verify(res, workers=2)
    (wrong,) = failures(found, "wrong seed")
    assert wrong.line == line + 1 and f"from seed {episode_seeds(0, 2)[0]}" in wrong.reason


def test_a_run_without_sticky_actions_relabelled_as_saber_diverges(tmp_path):
    """Pong's rewards under SABER agree with a sticky-off run's for 100 steps; its states do not."""
    short = {"max_episode_frames": 240}
    env = arcadebench.make(
        "saber", "pong", log_dir=tmp_path, run="r", repeat_action_probability=0.0, **short
    )
    rng = np.random.default_rng(0)
    for seed in (1, 2):
        env.reset(seed=seed)
        while True:
            *_, terminated, truncated, _ = env.step(int(rng.integers(18)))
            if terminated or truncated:
                break
    env.close()
    log = tmp_path / "saber" / "pong" / "r.jsonl"
    records = lines(log)
    assert all(r["return"] == 0 for r in records[1:])  # not a point scored: rewards agree
    honest = {"max_episode_frames": {"spec": 21600000, "used": 240}}
    records[0]["settings"]["repeat_action_probability"] = 0.25
    for record in records:
        record["deviations"] = honest
    write(log, records)
    found = verify(tmp_path, workers=1)
    diverged = failures(found, "diverged")
    assert len(diverged) == 2 and all("the emulator's state after" in c.reason for c in diverged)
    assert found.runs[0].deviations == honest  # the declared deviation is shown
    assert "max_episode_frames=240 (spec 21600000)" in found.table()


def test_a_flipped_action_that_changes_no_reward_diverges(res):
    replays = lines(replay_path(pong(res)))
    actions = np.frombuffer(zlib.decompress(base64.b64decode(replays[0]["actions"])), np.uint8)
    step = int(np.flatnonzero(actions == 3)[0])  # RIGHT: the paddle moves; make it go LEFT
    assert step < 100  # long before the first point
    flipped = actions.copy()
    flipped[step] = 4
    replays[0]["actions"] = base64.b64encode(zlib.compress(flipped.tobytes())).decode()
    write(replay_path(pong(res)), replays)
    found = verify(pong(res), workers=1)
    (check,) = failures(found, "diverged")
    assert check.step is not None and step < check.step <= step + 16
    assert "state after step" in check.reason


def test_a_sample_is_drawn_afresh_and_catches_an_unsampled_edit(res):
    records = lines(pong(res))
    records[3]["return"] = 99.0
    write(pong(res), records)
    first, second = verify(pong(res), sample=1), verify(pong(res), sample=1)
    assert first.sample_seed != second.sample_seed  # fresh entropy, reported
    assert f"--sample-seed {first.sample_seed}" in first.table()
    caught = [verify(pong(res), sample=1, sample_seed=s, workers=1).ok for s in range(8)]
    assert not all(caught) and any(caught)  # some draws replay line 4, some do not
    repeated = verify(pong(res), sample=1, sample_seed=first.sample_seed, workers=1)
    assert [c.line for c in repeated.runs[0].episodes] == [c.line for c in first.runs[0].episodes]


def test_a_custom_spec_that_shadows_a_built_in_name_is_called_custom(tmp_path):
    spec = tmp_path / "own.yaml"
    text = (arcadebench.specs.loader.SPEC_DIR / "saber.yaml").read_text()
    own = text.replace("repeat_action_probability: 0.25", "repeat_action_probability: 0.0")
    spec.write_text(own.replace("id_prefix: SABER", "id_prefix: OwnSABER"))
    assert arcadebench.load_spec(str(spec)).name == "saber"
    arcadebench.evaluate(
        "random", str(spec), ["pong"], episodes=1, log_dir=tmp_path / "out", progress="off",
        reps=0, env_kwargs={"max_episode_frames": 400},
    )  # fmt: skip
    found = verify(tmp_path / "out", spec=str(spec), workers=1)
    assert found.ok and found.runs[0].spec_source == "custom (own.yaml)"
    assert "saber (custom (own.yaml)" in found.table()


def test_format_one_recordings_still_verify_and_say_what_they_lack(res):
    replays = lines(replay_path(pong(res)))
    for replay in replays:
        replay["format"] = "arcadebench-replay/1"
        del replay["digests"], replay["rewarded"]
    write(replay_path(pong(res)), replays)
    found = verify(pong(res), workers=1)
    assert found.ok
    assert "no state digests (arcadebench-replay/1 recordings: rewards only)" in found.table()


def test_a_batched_run_relabelled_from_other_settings_diverges_on_its_observations(tmp_path):
    envs = arcadebench.make_vec(
        "saber", "pong", 2, log_dir=tmp_path, run="v", repeat_action_probability=0.0,
        max_episode_frames=400,
    )  # fmt: skip
    rng = np.random.default_rng(0)
    envs.reset(seed=7)
    for _ in range(150):
        envs.step(rng.integers(18, size=2))
    envs.close()
    log = tmp_path / "saber" / "pong" / "v.jsonl"
    assert verify(tmp_path, workers=1).ok  # honest: it declares its sticky actions off
    records = lines(log)
    declared = {"max_episode_frames": {"spec": 21600000, "used": 400}}
    records[0]["settings"]["repeat_action_probability"] = 0.25
    for record in records:
        record["deviations"] = declared
    write(log, records)
    diverged = failures(verify(tmp_path, workers=1), "diverged")
    assert diverged and all("state after" in c.reason for c in diverged)


def test_a_custom_spec_run_verifies_with_its_file_named(tmp_path):
    spec = str(DATA / "specs" / "short_episodes.yaml")
    arcadebench.evaluate(
        "random", spec, ["pong"], episodes=2, log_dir=tmp_path, progress="off", reps=0
    )
    found = verify(tmp_path / "results.json", spec=spec, workers=1)
    assert found.ok, found.table()
    assert found.runs[0].spec_source == "custom (short_episodes.yaml)"


def test_a_job_dropped_from_the_results_inputs_is_named(res):
    document = json.loads((res / "results.json").read_text())
    document["provenance"]["inputs"] = [
        i for i in document["provenance"]["inputs"] if "pong" not in i
    ]
    (res / "results.json").write_text(json.dumps(document))
    found = verify(res / "results.json", workers=2)
    assert found.exit_status == 1
    assert any(
        "played pong/0, whose logs are not among its inputs" in p for p in found.results[0].problems
    )
