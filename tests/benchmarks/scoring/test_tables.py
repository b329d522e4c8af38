"""The text tables of results (`scoring/tables.py`): what `score` and `run` print, in its units."""

from __future__ import annotations

import json

import arcadebench
from arcadebench.benchmarks.scoring.results import score
from arcadebench.benchmarks.scoring.tables import percent_metrics

ONE_RUN = {"rainbow": {"pong": 20.0, "breakout": 30.5}}
NO_INTERVALS = "no 95% confidence intervals: the bootstrap resamples runs, and every game has one"


def rows(table: str) -> dict[str, list[str]]:
    return {line.split()[0]: line.split()[1:] for line in table.splitlines() if line.strip()}


def test_intervals_asked_for_but_impossible_are_explained_in_one_line():
    table = score("saber", ONE_RUN, reps=100).table()
    (line,) = [line for line in table.splitlines() if "confidence intervals" in line]
    assert line.startswith(f"- {NO_INTERVALS} run (intervals need at least two runs of a game)")
    assert "90% CI" not in table and "95% CI" not in table


def test_no_explanation_where_intervals_were_made_or_not_asked_for():
    assert "confidence intervals" not in score("saber", ONE_RUN, reps=0).table()
    two_runs = {"rainbow": {"pong": [20.0, 18.0], "breakout": [30.5, 30.5]}}
    table = score("saber", two_runs, reps=100).table()
    assert "rainbow 95% CI" in table and "confidence intervals" not in table
    mixed = score("saber", {**two_runs, "dqn": {"pong": 1.0}}, reps=100).table()
    (line,) = [line for line in mixed.splitlines() if "confidence intervals" in line]
    assert line.startswith(f"- dqn: {NO_INTERVALS}")  # only the algorithm without them


def test_a_score_file_is_labelled_as_one_beside_the_published_results(tmp_path):
    (tmp_path / "rainbow.csv").write_text("game,score\nBattle Zone,62010\nQ*bert,33817.5\n")
    table = score("atari5", tmp_path / "rainbow.csv", reps=0).table()
    assert "rainbow (score table)" in table and "(this run)" not in table


def test_episode_logs_are_this_run_beside_the_published_results(tmp_path):
    spec = arcadebench.load_spec("atari5")
    header = {"kind": "header", "spec": "atari5", "spec_hash": spec.hash, "algorithm": "random"}
    episode = {
        "kind": "episode",
        "spec": "atari5",
        "spec_hash": spec.hash,
        "game": "qbert",
        "run": "0",
        "episode": 0,
        "return": 250.0,
        "total_frames": 1000,
        "total_steps": 250,
        "complete": True,
    }
    log = tmp_path / "0.jsonl"
    log.write_text(json.dumps(header) + "\n" + json.dumps(episode) + "\n")
    table = score("atari5", log, reps=0).table()
    assert "random (this run)" in table and "(score table)" not in table


CUSTOM_SPEC = """\
name: three-tasks
id_prefix: Three
title: three tasks and a one-task subset
version: 1
citation: a test suite
platform: none
constants:
  columns: [random, human]
  rows:
    a: [0.0, 100.0]
    b: [0.0, 100.0]
    c: [0.0, 100.0]
subsets:
  Three-1:
    games: [a]
    coefficients: [1.0]
scoring:
  normalised:
    hns: {reference: human}
  log_transform: "log10(1 + max(0, x))"
"""


def test_a_custom_subsets_estimate_is_a_percentage_as_atari5s_is(tmp_path):
    (tmp_path / "three.yaml").write_text(CUSTOM_SPEC)
    results = score(str(tmp_path / "three.yaml"), {"me": {"a": 40.0, "b": 10.0}}, reps=0)
    # 10 ** (1.0 * log10(1 + 40)) - 1 = 40 % of human, as Atari-5's estimates are
    assert round(results.algorithms["me"]["aggregates"]["three1"], 6) == 40.0
    assert rows(results.table())["three1"] == ["40.00%"]
    rainbow = {"battle_zone": 62010, "double_dunk": -0.3, "name_this_game": 12542}
    rainbow |= {"phoenix": 108528.6, "qbert": 33817.5}  # the README's rainbow.csv
    atari5 = score("atari5", {"rainbow": rainbow}, reps=0).table()
    assert rows(atari5)["atari5"] == ["221.19%"]


def test_counts_frames_and_days_are_no_percentages():
    block = {
        "games": {"pong": {"raw": 1.0, "hwrns": 5.0, "runs": [1.0], "frames": 2e8}},
        "aggregates": {"hwrb": 0, "frames": 2e8, "game_time_days": 38.6, "atari5": 7.5},
    }
    assert percent_metrics([block]) == {"hwrns", "atari5"}


def test_the_probability_of_improvement_of_each_pair_is_a_table_of_its_own():
    two = {"a": {"pong": [1.0, 2.0]}, "b": {"pong": [0.0, 3.0]}}
    table = score("atari5", two, reps=100).table()
    head, line = table.split("probability of improvement (per-run hns scores")[1].splitlines()[
        1:4:2
    ]
    assert head.split() == ["P(X", ">", "Y)", "95%", "CI", "games"]
    assert line.split()[:4] == ["a", ">", "b", "0.50"] and line.split()[-1] == "1"
    assert "probability of improvement" not in score("atari5", {"a": {"pong": 1.0}}, reps=0).table()


def test_a_curve_is_a_table_per_aggregate_with_the_published_curves(tmp_path):
    from report_helpers import write_log

    for run, offset in (("0", 0.0), ("1", 2.0)):
        returns = [offset + i for i in range(30)]
        write_log(tmp_path, "machado2018", "me", "pong", run, returns, 500_000)
    table = score("machado2018", [tmp_path], reps=50, curve=[5_000_000]).table()
    curve = table.split("sample-efficiency curve: hns iqm by training frames")[1]
    lines = rows(curve.split("\n\n")[0])
    # at 5M frames: returns 0..9 (run 0) and 2..11 (run 1): means 4.5 and 6.5, HNS IQM of both
    pong = arcadebench.load_spec("machado2018").constants["pong"]
    iqm = 100 * (5.5 - pong.random) / (pong.human - pong.random)
    assert lines["5M"][0] == f"{iqm:.2f}%"
    assert "DQN (Dopamine) (another protocol)" in curve.splitlines()[1]
    assert lines["10M"][0] != "-" and lines["199M"][:2] == ["-", "-"]  # Dopamine's last point
    assert "sample-efficiency curve: hns median" in table


def test_the_published_block_names_the_games_of_each_statistic():
    """MuZero's median is over Atari-5's 57 games, ours over the 5 we played: the title says so."""
    five = {g: [1000.0, 2000.0] for g in arcadebench.load_spec("atari5").default_games}
    table = score("atari5", {"me": five}, reps=0).table()
    assert "published results (Table 3): median over 5 games (ours) / 57 games (published)\n" in (
        table
    )
    sonic = score("sonic", {"me": {"SonicTheHedgehog-SpringYardZone.Act1": 3000.0}}, reps=0)
    assert "score over 1 game (ours) / 11 games (published)" in sonic.table()  # the test levels
    uneven = score("atari5", {"me": five, "you": {"pong": 0.0}}, reps=0).table()
    assert "median over 5 games (me), 1 game (you) (ours) / 57 games (published)" in uneven


def test_references_are_chosen_by_name_or_none():
    results = score("atari100k", {"me": {"pong": [1.0, 5.0], "qbert": [300.0, 900.0]}}, reps=0)
    every = results.table()
    assert "BBF" in every and "DER" in every  # the plain table lists every reference by default
    chosen = results.table(references=["der", "SPR (SPR paper, Table 1)"])
    assert "DER" in chosen and "BBF" not in chosen and "DrQ(eps)" not in chosen
    block = chosen.split("published results (SPR paper, Table 1)")[1]
    assert "\nSPR " in block and "\nCURL " not in block  # only the row named
    assert "means of 5  this one" in chosen  # DER: per-game means of 5 runs
    none = results.table(references="none")
    assert "published" not in none
