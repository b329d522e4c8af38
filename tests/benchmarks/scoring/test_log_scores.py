"""Episode logs in: the protocols' rules on synthetic logs with known answers; robustness."""

from __future__ import annotations

import json
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
from fuzzing import fuzz
from hypothesis import given
from hypothesis import strategies as st

import arcadebench
from arcadebench import load_spec
from arcadebench.benchmarks.scoring.inputs import read_scores
from arcadebench.benchmarks.scoring.log_scores import read_logs, run_scores
from arcadebench.benchmarks.scoring.raw_scores import ScoreCollector
from arcadebench.errors import InputError, NoScores, OtherSpec
from arcadebench.records import LogWarning, RunLog, parse_log
from arcadebench.specs.model import Evaluation

SABER = load_spec("saber")
ATARI5 = load_spec("atari5")
SONIC = load_spec("sonic")


def episode(
    spec,
    game,
    run,
    i,
    ret,
    frames,
    steps=None,
    total_frames=None,
    total_steps=None,
    complete=True,
    **extra,
):
    record = {
        "kind": "episode",
        "spec": spec.name,
        "spec_version": spec.version,
        "spec_hash": spec.hash,
        "env_id": f"arcadebench/{spec.id_prefix}-{game}-v0",
        "game": game,
        "run": run,
        "seed": 0,
        "episode": i,
        "return": ret,
        "steps": steps or frames // 4,
        "frames": frames,
        "total_steps": total_steps if total_steps is not None else (i + 1) * (steps or frames // 4),
        "total_frames": total_frames if total_frames is not None else (i + 1) * frames,
        "end_reason": "game_over" if complete else "budget",
        "complete": complete,
        "rollover_rewards": [],
        "deviations": {},
        "wall_time": 1.0,
        "time": 1764100000.0 + i,
    }
    record.update(extra)
    return record


def write_log(path: Path, records, header: dict | bool | None = None, tail: str = "") -> Path:
    """A log of ``records``, after ``header`` or, by default, one naming their spec (``False``:
    none, as a log that lost its first line)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if header is None and records:
        header = {
            k: records[0][k] for k in ("spec", "spec_version", "spec_hash") if k in records[0]
        }
        header = {"kind": "header", **header}
    lines = [json.dumps(header)] if header else []
    lines += [json.dumps(r) for r in records]
    path.write_text("".join(line + "\n" for line in lines) + tail)
    return path


def saber_run(game="pong", run="0", n=2500, frames=80_000, offset=0.0):
    """Episode i returns i + offset and uses 80,000 frames: 2,500 episodes reach 200M frames."""
    return [episode(SABER, game, run, i, float(i) + offset, frames) for i in range(n)]


# -- SABER: mean of the last k = 100 episodes before each checkpoint -----------------------------


def test_saber_checkpoints_known_answers(tmp_path):
    # checkpoint C holds the first C / 80,000 episodes: 125, 625, 1250, 2500
    # -> means of returns 25..124, 525..624, 1150..1249, 2400..2499
    records = saber_run()
    records.append(
        episode(SABER, "pong", "0", 2500, 1e9, 80_000, complete=False)
    )  # cut by the budget
    log = write_log(
        tmp_path / "ppo" / "saber" / "pong" / "0.jsonl",
        records,
        header={"kind": "header", "agent": "ppo"},
    )
    (run,) = parse_log(SABER, log)
    assert run.algorithm == "ppo" and run.game == "pong" and run.run == "0" and run.line == 2
    scores = run_scores(run, SABER.evaluation)
    assert scores == {
        None: (2449.5, 200_000_000, 100),
        10_000_000: (74.5, 10_000_000, 100),
        50_000_000: (574.5, 50_000_000, 100),
        100_000_000: (1199.5, 100_000_000, 100),
        200_000_000: (2449.5, 200_000_000, 100),
    }


def test_checkpoints_not_reached_are_absent_and_short_windows_average_what_there_is(tmp_path):
    # 60 episodes of 1M frames: the run reaches 10M and 50M only; 10M has 10 episodes (< k)
    records = [episode(SABER, "pong", "0", i, float(i), 1_000_000) for i in range(60)]
    (run,) = parse_log(SABER, write_log(tmp_path / "r.jsonl", records))
    scores = run_scores(run, SABER.evaluation)
    assert sorted(k for k in scores if k) == [10_000_000, 50_000_000]
    assert scores[10_000_000] == (4.5, 10_000_000, 10)  # mean of 0..9
    assert scores[50_000_000] == (24.5, 50_000_000, 50)  # mean of 0..49
    assert scores[None] == (29.5, 60_000_000, 60)  # the end: all 60 (fewer than k)


def three_episodes() -> RunLog:
    """Returns 5, 7 (complete) and 100 (cut) ending at 10, 20 and 30 frames; the run is at 35."""
    return RunLog(
        "a",
        "pong",
        "0",
        "f",
        1,
        np.array([5.0, 7.0, 100.0]),
        np.array([10, 20, 30]),
        np.array([1, 2, 3]),
        np.array([True, True, False]),
        35,
    )


def test_run_scores_by_hand():
    log = three_episodes()
    assert run_scores(log, Evaluation("mean")) == {None: (6.0, 35, 2)}
    assert run_scores(log, Evaluation("mean", budget_frames=15)) == {None: (5.0, 15, 1)}
    assert run_scores(log, Evaluation("last_k", k=1, checkpoints=(10, 25, 40))) == {
        None: (7.0, 35, 1),
        10: (5.0, 10, 1),
        25: (7.0, 25, 1),
    }
    nothing = RunLog(
        "a",
        "pong",
        "0",
        "f",
        1,
        np.array([1.0]),
        np.array([10]),
        np.array([1]),
        np.array([False]),
        10,
    )
    assert run_scores(nothing, Evaluation("mean")) == {}


def test_a_run_scored_at_the_points_of_a_curve_by_hand():
    log = three_episodes()
    # mean: the episodes ended by each point; none before 5; 40 is beyond the run
    assert run_scores(log, Evaluation("mean"), at=(5, 15, 25, 40)) == {
        None: (6.0, 35, 2),
        15: (5.0, 15, 1),
        25: (6.0, 25, 2),
    }
    # last_k: the points join the checkpoints; nothing beyond the budget
    last = Evaluation("last_k", k=1, checkpoints=(10,), budget_frames=30)
    assert run_scores(log, last, at=(20, 35)) == {
        None: (7.0, 30, 1),
        10: (5.0, 10, 1),
        20: (7.0, 20, 1),
    }


def test_the_curves_points_are_the_checkpoints_rule_at_more_frames(tmp_path):
    folder = tmp_path / "logs"
    write_log(folder / "ppo" / "saber" / "pong" / "0.jsonl", saber_run(n=130))
    collector = ScoreCollector()
    read_logs(SABER, sorted(folder.rglob("*.jsonl")), collector, curve=[4_000_000])
    ppo = collector.build(SABER).algorithms["ppo"]
    # 130 episodes of 80,000 frames: 50 ended by 4M (returns 0..49), 125 by the 10M checkpoint
    assert ppo.curve[4_000_000]["pong"].scores == (24.5,)
    assert ppo.curve[10_000_000]["pong"].scores == ppo.checkpoints[10_000_000]["pong"].scores
    assert set(ppo.checkpoints) == {10_000_000}  # a curve's point is no checkpoint
    none = ScoreCollector()
    read_logs(SABER, sorted(folder.rglob("*.jsonl")), none)
    assert not none.build(SABER).algorithms["ppo"].curve


def test_saber_log_end_to_end_with_two_runs(tmp_path):
    folder = tmp_path / "logs"
    write_log(folder / "ppo" / "saber" / "pong" / "0.jsonl", saber_run())
    write_log(folder / "ppo" / "saber" / "pong" / "1.jsonl", saber_run(run="1", offset=10.0))
    write_log(folder / "ppo" / "saber" / "breakout" / "0.jsonl", saber_run("breakout", n=130))
    results = arcadebench.score("saber", folder, reps=300)
    ppo = results.algorithms["ppo"]
    assert (
        ppo["games"]["pong"]["runs"] == [2449.5, 2459.5] and ppo["games"]["pong"]["episodes"] == 200
    )
    assert ppo["games"]["breakout"]["raw"] == 79.5  # end: last 100 of 0..129
    assert set(ppo["checkpoints"]) == {"10000000", "50000000", "100000000", "200000000"}
    assert ppo["checkpoints"]["10000000"]["games"]["pong"]["runs"] == [74.5, 84.5]
    assert ppo["checkpoints"]["10000000"]["games"]["breakout"]["raw"] == 74.5
    assert "breakout" not in ppo["checkpoints"]["50000000"]["games"]  # stopped at 10.4M frames
    pong = SABER.constants["pong"]
    expected = (
        100 * (79.5 - pong.random) / (pong.world_record - pong.random)
    )  # mean of the runs 74.5, 84.5
    assert ppo["checkpoints"]["10000000"]["games"]["pong"]["hwrns"] == pytest.approx(expected)
    assert ppo["checkpoints"]["10000000"]["games"]["pong"]["ci"]["raw"] == [74.5, 84.5]
    assert "ci" in ppo["checkpoints"]["10000000"]["aggregates"]


# -- Atari-5 and Sonic: the mean of the complete episodes ------------------------------------------


def test_atari5_mean_of_complete_episodes(tmp_path):
    records = [
        episode(ATARI5, "battle_zone", "0", i, r, 10_000)
        for i, r in enumerate([1000.0, 3000.0, 5000.0])
    ]
    records.append(
        episode(ATARI5, "battle_zone", "0", 3, 1e6, 500, total_frames=30_500, complete=False)
    )
    write_log(tmp_path / "atari5" / "battle_zone" / "0.jsonl", records)
    raw = read_scores(ATARI5, tmp_path)
    games = raw.algorithms[tmp_path.name].games
    assert games["battle_zone"].scores == (3000.0,) and games["battle_zone"].episodes == (3,)
    assert not raw.algorithms[tmp_path.name].checkpoints


def test_episodes_cut_by_an_early_reset_are_not_scored_and_warn(tmp_path):
    records = [episode(ATARI5, "qbert", "0", 0, 100.0, 4_000)]
    records.append(
        episode(
            ATARI5,
            "qbert",
            "0",
            1,
            -50.0,
            400,
            total_frames=4_400,
            complete=False,
            end_reason="reset",
        )
    )
    path = write_log(tmp_path / "atari5" / "qbert" / "0.jsonl", records)
    with pytest.warns(LogWarning, match=r"1 episode\(s\) were cut short by a reset"):
        (log,) = parse_log(ATARI5, path)
    assert run_scores(log, ATARI5.evaluation) == {None: (100.0, 4_400, 1)}


def test_sonic_mean_within_the_step_budget(tmp_path):
    level = "SonicTheHedgehog-GreenHillZone.Act2"
    steps = [400_000, 900_000, 1_000_000, 1_000_001]  # the last ends past the 1M budget
    records = [
        episode(SONIC, level, "0", i, 1000.0 * (i + 1), 4 * s, total_steps=s, total_frames=4 * s)
        for i, s in enumerate(steps)
    ]
    write_log(tmp_path / "sonic" / "lv" / "0.jsonl", records)
    game = read_scores(SONIC, tmp_path).algorithms[tmp_path.name].games[level]
    assert game.scores == (2000.0,) and game.episodes == (3,)


def test_sonic_results_have_level_means_and_the_test_mean(tmp_path):
    test_levels = SONIC.games_of("test")
    train = SONIC.games_of("train")[0]
    data = {
        "jerk": {**{lv: [1000.0 * (i + 1)] for i, lv in enumerate(test_levels)}, train: 99999.0}
    }
    results = arcadebench.score("sonic", data, reps=0)
    aggregates = results.algorithms["jerk"]["aggregates"]
    assert aggregates["test"] == {"mean": 6000.0, "n_games": 11}
    assert aggregates["train"] == {"mean": 99999.0, "n_games": 1}
    assert aggregates["raw"]["n_games"] == 12
    assert "hns" not in aggregates and "hwrb" not in aggregates
    table = results.table()
    assert (
        "published results (Table 1)" in table
        and "jerk (score table)" in table
        and "6,000.00" in table
    )


# -- robustness ----------------------------------------------------------------------------------


def test_truncated_last_line_is_ignored_with_a_warning(tmp_path):
    records = saber_run(n=150)
    full = write_log(tmp_path / "full.jsonl", records)
    cut = write_log(
        tmp_path / "cut.jsonl",
        records,
        tail=json.dumps(episode(SABER, "pong", "0", 150, 1e6, 80_000))[:57],
    )
    with pytest.warns(LogWarning, match=r"cut\.jsonl:152: the last line is cut off"):
        (run,) = parse_log(SABER, cut)
    (reference,) = parse_log(SABER, full)
    assert run.returns.tolist() == reference.returns.tolist() and len(run.returns) == 150


def test_corrupt_line_in_the_middle_is_an_error(tmp_path):
    path = write_log(tmp_path / "r.jsonl", saber_run(n=5))
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2][:40] + "\n"
    path.write_text("".join(lines))
    with pytest.raises(
        InputError, match=r"r\.jsonl:3: is not a JSON record: the log is corrupt here"
    ):
        parse_log(SABER, path)


def test_unknown_kinds_and_blank_lines_are_skipped(tmp_path):
    records = saber_run(n=3)
    records.insert(1, {"kind": "checkpoint", "whatever": [1, 2]})
    path = write_log(
        tmp_path / "r.jsonl", records, header={"kind": "header", "versions": {}}, tail="\n  \n"
    )
    (run,) = parse_log(SABER, path)
    assert run.returns.tolist() == [0.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"spec": "hwr"}, "was written for spec 'hwr', not 'saber'; score it with that spec"),
        (
            {"spec_hash": "sha256:" + "0" * 64},
            "was written with a different version of the 'saber' spec",
        ),
        (
            {"game": "pnog"},
            "unknown game: 'pnog' is not a game of the 'saber' spec. Did you mean: 'pong'?",
        ),
        ({"return": "12"}, '"return" must be a finite number'),
        ({"return": None}, '"return" must be a finite number'),
        ({"total_frames": 1.5}, '"total_frames" and "total_steps" must be non-negative integers'),
        ({"total_steps": -1}, '"total_frames" and "total_steps" must be non-negative integers'),
        ({"complete": 1}, '"complete" must be true or false'),
        ({"episode": "2"}, '"episode" must be an integer'),
        ({"run": [0]}, '"run" must be a string or an integer'),
        ({"game": 5}, '"game" must be a string'),
        ({"kind": None}, 'has no "kind"'),
    ],
)
def test_bad_records_are_input_errors_with_the_line(tmp_path, change, message):
    records = saber_run(n=4)
    records[2].update(change)
    with pytest.raises(InputError) as info:
        parse_log(SABER, write_log(tmp_path / "r.jsonl", records))
    assert info.value.line == 4 and message in str(info.value), str(info.value)  # after the header


def test_missing_field_and_non_object_lines(tmp_path):
    records = saber_run(n=2)
    del records[1]["total_frames"]
    with pytest.raises(InputError, match=r':3: episode record has no "total_frames" field'):
        parse_log(SABER, write_log(tmp_path / "a.jsonl", records))
    path = tmp_path / "b.jsonl"
    path.write_text("[1, 2]\n")
    with pytest.raises(InputError, match=r"b\.jsonl:1: is not a JSON object but list"):
        parse_log(SABER, path)


def test_repeated_episode_and_frames_going_back_are_errors(tmp_path):
    records = saber_run(n=4)
    records.insert(3, dict(records[1]))
    with pytest.raises(
        InputError, match=r":5: episode 1 of pong run '0' comes after episode 2 \(line 4\)"
    ):
        parse_log(SABER, write_log(tmp_path / "a.jsonl", records))
    records = saber_run(n=4)
    records[3]["total_frames"] = 10
    with pytest.raises(InputError, match=r"went back from 240000 to 10"):
        parse_log(SABER, write_log(tmp_path / "b.jsonl", records))


def test_same_run_in_two_files_is_refused(tmp_path):
    header = {"kind": "header", "agent": "same"}
    a = write_log(tmp_path / "a.jsonl", saber_run(n=3), header=header)
    b = write_log(tmp_path / "b.jsonl", saber_run(n=3), header=header)
    with pytest.raises(
        InputError, match=r"b\.jsonl:2: run '0' of pong \(same\) is also logged in .*a\.jsonl"
    ):
        read_logs(SABER, [a, b], ScoreCollector())


def test_deviations_warn_and_empty_runs_warn(tmp_path):
    records = saber_run(n=3)
    records[1]["deviations"] = {"repeat_action_probability": 0.0}
    with pytest.warns(
        LogWarning,
        match=r"deviates from the 'saber' protocol: \{\"repeat_action_probability\": 0.0\}",
    ):
        parse_log(SABER, write_log(tmp_path / "a.jsonl", records))
    only_cut = [episode(SABER, "pong", "0", 0, 5.0, 100, complete=False)]
    with pytest.warns(LogWarning, match="has no complete episode within the budget"):
        collector = ScoreCollector()
        read_logs(SABER, [write_log(tmp_path / "b.jsonl", only_cut)], collector)
    assert collector.build(SABER).algorithms == {}


def test_a_directory_of_several_protocols_is_scored_on_its_logs_of_the_spec(tmp_path):
    write_log(tmp_path / "ppo" / "saber" / "pong" / "0.jsonl", saber_run(n=2))
    atari5 = arcadebench.load_spec("atari5")
    write_log(
        tmp_path / "ppo" / "atari5" / "pong" / "0.jsonl", [episode(atari5, "pong", "0", 0, 1.0, 9)]
    )
    results = arcadebench.score("saber", tmp_path, reps=0)  # the atari5 log is skipped
    assert results.algorithms["ppo"]["games"]["pong"]["runs"] == [0.5]
    with pytest.raises(OtherSpec, match="was written for spec 'atari5', not 'saber'"):
        arcadebench.score("saber", tmp_path / "ppo" / "atari5" / "pong" / "0.jsonl")  # named
    with pytest.raises(NoScores, match="has no logs of the 'hwr' spec \\(2 of other specs\\)"):
        arcadebench.score("hwr", tmp_path)


def test_algorithm_name_from_header_or_layout(tmp_path):
    plain = write_log(tmp_path / "mine.jsonl", saber_run(n=1))
    assert parse_log(SABER, plain)[0].algorithm == "mine"
    layout = write_log(tmp_path / "dqn" / "saber" / "pong" / "3.jsonl", saber_run(n=1))
    assert parse_log(SABER, layout)[0].algorithm == "dqn"
    named = write_log(
        tmp_path / "n.jsonl", saber_run(n=1), header={"kind": "header", "algorithm": "Rainbow-IQN"}
    )
    assert parse_log(SABER, named)[0].algorithm == "Rainbow-IQN"


def test_unreadable_log(tmp_path):
    with pytest.raises(InputError, match="cannot read the log"):
        parse_log(SABER, tmp_path / "nope.jsonl")


# -- fuzzing: only InputError (and LogWarning) may escape ----------------------------------------

_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 10**12),
    st.floats(),
    st.text(max_size=6),
    st.sampled_from(["pong", "Pong", "saber", SABER.hash, "episode", "header"]),
)
_records = st.fixed_dictionaries(
    {},
    optional={
        f: _values
        for f in (
            "kind",
            "spec",
            "spec_hash",
            "game",
            "run",
            "episode",
            "return",
            "total_frames",
            "total_steps",
            "complete",
            "deviations",
        )
    },
)


@fuzz(1000)
@given(
    lines=st.lists(st.one_of(_records.map(json.dumps), st.text(max_size=30)), max_size=8),
    newline=st.booleans(),
)
def test_fuzz_jsonl_only_input_errors(lines, newline):
    good = [json.dumps(r) for r in saber_run(n=2)]
    text = "\n".join(good + lines) + ("\n" if newline else "")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.jsonl"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LogWarning)
                read_scores(SABER, path)
        except InputError as error:
            assert str(error).startswith(str(path))


@fuzz(300)
@given(blob=st.binary(max_size=400))
def test_fuzz_jsonl_bytes_only_input_errors(blob):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.jsonl"
        path.write_bytes(blob)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", LogWarning)
                read_scores(SABER, path)
        except InputError:
            pass


def test_a_log_without_episodes_warns_and_nothing_to_score_is_an_error(tmp_path):
    path = write_log(tmp_path / "empty.jsonl", [], header={"kind": "header", "algorithm": "x"})
    with pytest.warns(LogWarning, match="has no episode records"):
        with pytest.raises(InputError, match=r"empty\.jsonl: has no scores"):
            read_scores(SABER, path)


def test_deviations_and_unreached_checkpoints_travel_with_the_scores(tmp_path):
    deviation = {"repeat_action_probability": {"spec": 0.25, "used": 0.0}}
    records = [
        episode(SABER, "pong", "0", i, float(i), 4_000, deviations=deviation) for i in range(3)
    ]
    write_log(tmp_path / "ppo" / "saber" / "pong" / "0.jsonl", records)
    with pytest.warns(LogWarning, match="deviates from the 'saber' protocol"):
        results = arcadebench.score("saber", tmp_path / "ppo", reps=0)
    ppo = results.algorithms["ppo [repeat_action_probability=0.0]"]
    assert ppo["deviations"] == {"pong": {"0": deviation}}
    assert ppo["notes"] == [
        "non-compliant: pong run '0': repeat_action_probability=0.0 (spec: 0.25)",
        "frames reached 12,000 of the 10,000,000-frame checkpoint (and of 3 later ones): "
        "scored at the end of the log there, not at the checkpoint",
    ]
    table = results.table()
    assert "notes\n- ppo [repeat_action_probability=0.0]: non-compliant: pong run '0'" in table
    assert "frames reached 12,000" in table
    again = arcadebench.benchmarks.scoring.results.Results.from_json(
        _write(tmp_path / "r.json", results.to_json())
    )
    # the results file keeps them
    assert again.algorithms["ppo [repeat_action_probability=0.0]"]["notes"] == ppo["notes"]
    page = arcadebench.report([again], tmp_path / "report", reps=0)
    html = page.read_text()
    assert 'class="banner"' in html and "repeat_action_probability=0.0 (spec: 0.25)" in html


def _write(path, text):
    path.write_text(text)
    return path


def test_runs_under_other_settings_are_never_pooled_into_one_bootstrap(tmp_path):
    deviation = {"repeat_action_probability": {"spec": 0.25, "used": 0.0}}
    for run, changed in (("0", {}), ("1", {}), ("2", deviation)):
        records = [episode(SABER, "pong", run, 0, float(run), 4_000, deviations=changed)]
        write_log(tmp_path / "ppo" / "saber" / "pong" / f"{run}.jsonl", records)
    with pytest.warns(LogWarning, match="deviates"):
        results = arcadebench.score("saber", tmp_path, reps=0)
    assert results.algorithms["ppo"]["games"]["pong"]["runs"] == [0.0, 1.0]
    assert results.algorithms["ppo [repeat_action_probability=0.0]"]["games"]["pong"]["runs"] == [
        2.0
    ]


def test_runs_pooled_under_their_directory_name_get_a_note(tmp_path):
    for run in ("ppo-seed1", "dqn-seed1"):
        records = [episode(SABER, "pong", run, 0, 1.0, 4_000)]
        write_log(tmp_path / "logs" / "saber" / "pong" / f"{run}.jsonl", records)
    results = arcadebench.score("saber", tmp_path / "logs", reps=0)
    (note,) = results.algorithms["logs"]["notes"][:1]
    assert note.startswith(
        "2 runs (pong 'dqn-seed1', pong 'ppo-seed1') name no algorithm in their logs and are "
        "pooled under their directory's name 'logs'"
    )
    assert "- logs: 2 runs" in results.table()
    named = {"kind": "header", "algorithm": "ppo"}
    for run in ("0", "1"):
        records = [episode(SABER, "pong", run, 0, 1.0, 4_000)]
        write_log(tmp_path / "named" / "saber" / "pong" / f"{run}.jsonl", records, header=named)
    results = arcadebench.score("saber", tmp_path / "named", reps=0)
    assert not any("pooled" in n for n in results.algorithms["ppo"].get("notes", []))


def test_a_protocol_scored_after_training_scores_the_evaluation_episodes(tmp_path):
    spec = load_spec("atari100k")
    header = {"kind": "header", "algorithm": "ppo"}
    training = [episode(spec, "pong", "0", i, -21.0, 4_000) for i in range(3)]
    write_log(tmp_path / "ppo" / "atari100k" / "pong" / "0.jsonl", training, header=header)
    evaluation = [episode(spec, "pong", "0.eval", i, float(i), 3_000) for i in range(4)]
    evaluation[-1] = episode(spec, "pong", "0.eval", 3, 100.0, 3_000, complete=False)
    write_log(
        tmp_path / "ppo" / "atari100k" / "pong" / "0.eval.jsonl",
        evaluation,
        header={**header, "phase": "evaluation"},
    )
    results = arcadebench.score("atari100k", tmp_path, reps=0)
    pong = results.algorithms["ppo"]["games"]["pong"]
    assert pong["runs"] == [1.0]  # (0 + 1 + 2) / 3: the complete evaluation episodes
    assert pong["episodes"] == 3 and pong["frames"] == 12_000  # the training run's frames
    with pytest.warns(LogWarning, match="evaluation episodes of run '0.eval' are not scored"):
        write_log(
            tmp_path / "s" / "saber" / "pong" / "0.eval.jsonl",
            [episode(SABER, "pong", "0.eval", 0, 1.0, 4_000)],
            header={"kind": "header", "phase": "evaluation"},
        )
        write_log(tmp_path / "s" / "saber" / "pong" / "1.jsonl", saber_run(n=1))
        saber = arcadebench.score("saber", tmp_path / "s", reps=0)
    assert list(saber.algorithms["s"]["games"]["pong"]["runs"]) == [0.0]  # run 1 only


# -- the mixing guard: a log's header is its spec's, and a log without one is scored apart ------


def test_a_log_whose_header_has_another_spec_hash_is_refused_not_scored(tmp_path):
    """A log written under an edited copy of the spec (same name and version, other hash)."""
    edited = {
        "kind": "header",
        "spec": "saber",
        "spec_version": 2,
        "spec_hash": "sha256:" + "1" * 64,
    }
    log = write_log(tmp_path / "ppo" / "saber" / "pong" / "0.jsonl", saber_run(n=3), header=edited)
    write_log(tmp_path / "ppo" / "saber" / "pong" / "1.jsonl", saber_run(run="1", n=3))
    with pytest.raises(InputError) as refused:
        arcadebench.score("saber", tmp_path, reps=0)  # the directory too: never pooled
    assert str(refused.value).startswith(
        f"{log}:1: was written with a different version of the 'saber' spec ('sha256:1111"
    )
    assert str(refused.value).endswith("score it with the spec file that wrote it")


def test_a_log_whose_header_names_another_spec_is_skipped_in_a_directory(tmp_path):
    other = {"kind": "header", "spec": "atari5", "spec_hash": ATARI5.hash}
    write_log(tmp_path / "x" / "saber" / "pong" / "0.jsonl", saber_run(n=3), header=other)
    write_log(tmp_path / "x" / "saber" / "pong" / "1.jsonl", saber_run(run="1", n=3))
    with pytest.warns(LogWarning, match=r"not scoring 1 log of other specs \(atari5: 1\)"):
        results = arcadebench.score("saber", tmp_path, reps=0)
    assert results.algorithms["x"]["games"]["pong"]["runs"] == [1.0]  # run 1: mean of 0, 1, 2


def test_a_log_without_its_header_is_scored_apart_with_a_note_and_a_warning(tmp_path):
    folder = tmp_path / "ppo" / "saber" / "pong"
    write_log(folder / "0.jsonl", saber_run(n=3))  # returns 0, 1, 2: scores 1.0
    write_log(folder / "1.jsonl", saber_run(run="1", n=3, offset=10.0))  # 11.0
    lost = write_log(folder / "2.jsonl", saber_run(run="2", n=3, offset=20.0), header=False)
    with pytest.warns(LogWarning) as caught:
        results = arcadebench.score("saber", tmp_path, reps=0)
    (warning,) = [str(w.message) for w in caught if "header" in str(w.message)]
    assert warning == (
        f"{lost}:1: has no header line, so the settings, seed and budget its run was played "
        "under are unknown; it is scored apart, as 'ppo [no header]', never pooled with runs "
        "whose log has one; restore the header line the monitor wrote"
    )
    assert list(results.algorithms) == ["ppo", "ppo [no header]"]
    assert results.algorithms["ppo"]["games"]["pong"]["runs"] == [1.0, 11.0]
    apart = results.algorithms["ppo [no header]"]
    assert apart["games"]["pong"]["runs"] == [21.0]
    assert apart["notes"][0] == (
        "1 run (pong '2') logged without a header line: the settings, seed and budget played "
        "under are unknown, so they are scored apart from runs whose log has one"
    )
    assert not any("header" in note for note in results.algorithms["ppo"].get("notes", []))
    assert "- ppo [no header]: 1 run (pong '2') logged without a header line" in results.table()


def test_an_evaluation_log_without_its_header_is_not_taken_for_one(tmp_path):
    spec = load_spec("atari100k")
    evaluation = [episode(spec, "pong", "0.eval", i, float(i), 3_000) for i in range(2)]
    folder = tmp_path / "ppo" / "atari100k" / "pong"
    write_log(folder / "0.jsonl", [episode(spec, "pong", "0", 0, -21.0, 4_000)])
    write_log(folder / "0.eval.jsonl", evaluation, header=False)  # its phase was in the header
    with pytest.warns(LogWarning, match=r"0\.eval\.jsonl:1: has no header line") as caught:
        with pytest.raises(NoScores):
            arcadebench.score("atari100k", tmp_path, reps=0)
    assert any(
        "it is read as training episodes (the phase is in the header), so it is not scored"
        in str(w.message)
        for w in caught
    )
