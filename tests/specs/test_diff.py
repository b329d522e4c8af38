"""`diff`: two protocols side by side, what changes scores, and the evidence for it."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re

import pytest

import arcadebench
from arcadebench.errors import InvalidArgument
from arcadebench.specs import list_specs, load_spec
from arcadebench.specs.diff import EVIDENCE, SCORE_CHANGING, diff

SABER, ATARI100K = load_spec("saber"), load_spec("atari100k")


def _row(compared, setting, detail=""):
    return next(r for r in compared.rows if r.setting == setting and r.detail == detail)


def test_saber_and_atari100k_differ_in_sticky_actions_life_budget_and_evaluation():
    compared = diff(SABER, ATARI100K)
    sticky = compared.row("sticky actions")
    assert (sticky.a, sticky.b, sticky.differs, sticky.changes_scores) == (
        "p = 0.25",
        "none",
        True,
        True,
    )
    assert "Machado et al. 2018 Section 5.2" in sticky.evidence and "Table 2" in sticky.evidence
    life = compared.row("life information")
    assert (life.a, life.b) == ("none: game over only", "lost life ends training episodes")
    assert life.changes_scores and "SABER Section 2.1" in life.evidence
    budget = compared.row("budget")  # 100,000 agent steps x frame skip 4
    assert (budget.a, budget.b) == ("200,000,000 frames", "100,000 agent steps (400,000 frames)")
    assert budget.changes_scores
    phase = compared.row("scored phase")
    assert (phase.a, phase.b, phase.changes_scores) == (
        "training episodes",
        "evaluation episodes after training",
        True,
    )
    episodes = compared.row("evaluation episodes")  # precision, not expectation
    assert (episodes.a, episodes.b, episodes.status) == ("\u2014", "100", "reporting only")
    policy = compared.row("evaluation policy")
    assert policy.b == "epsilon-greedy, epsilon 0.001, final network" and policy.changes_scores
    cap = compared.row("episode cap")
    assert (cap.a, cap.b) == ("21,600,000 frames (100 h)", "108,000 frames (30 min)")
    assert "2.35 % at 5 min, 2.61 % at 30 min" in cap.evidence
    assert compared.row("frame skip").differs is False  # both 4
    games = compared.row("games")
    assert (games.a, games.b, games.detail, games.changes_scores) == ("61", "26", "26 shared", True)
    assert not compared.comparable and not compared.identical


def test_normalised_scores_only_one_protocol_reports_change_reporting_only():
    compared = diff(SABER, ATARI100K)
    hwrns = _row(compared, "normalisation", "HWRNS")
    assert (hwrns.a, hwrns.b, hwrns.status) == ("to world record", "not reported", "reporting only")
    assert _row(compared, "normalisation", "SABER").a == "to world record, cap 200 %"
    assert _row(compared, "normalisation", "HNS").differs is False  # both to human, no clip
    classes = compared.row("classes")
    assert classes.b == "none" and classes.status == "reporting only"


def test_human_scores_at_5_and_30_minutes_differ_in_34_of_49_games():
    dqn2015, atari5 = load_spec("dqn2015"), load_spec("atari5")
    compared = diff(dqn2015, atari5)
    human = compared.row("human scores")
    by_hand = [g for g in dqn2015.games if dqn2015.constants[g].human != atari5.constants[g].human]
    assert len(by_hand) == 34 and len(dqn2015.games) == 49
    assert human.detail == "34 of 49 games differ"
    # the first game of dqn2015's order that differs: Nature's 5-minute Alien vs Table 12's
    assert human.a == "Extended Data Table 2: alien 6,875.4"
    assert human.b == "Table 12: alien 7,127.7"
    assert human.changes_scores and "dqn_zoo issue #28" in human.evidence
    cap = compared.row("episode cap")
    assert (cap.a, cap.b) == ("18,000 frames (5 min)", "108,000 frames (30 min)")
    assert compared.row("no-op starts").a == "1 to 30 frames after a reset"


def test_constants_that_agree_are_no_difference():
    compared = diff(SABER, ATARI100K)
    human = compared.row("human scores")  # SABER Table 5 and rliable: the same 26 human scores
    assert human.detail == "the same in all 26 games" and not human.differs
    random = compared.row("random scores")
    assert random.detail == "26 of 26 games differ"
    assert random.a == "Table 5: alien 211.9"
    assert random.b == "Agarwal et al. 2021 (rliable) constants: alien 227.8"


def test_a_protocol_against_itself_is_identical():
    compared = diff(SABER, SABER)
    assert compared.identical and compared.comparable
    assert compared.differences == () and compared.score_changing == ()
    assert all(row.a == row.b and row.status == "" for row in compared.rows)
    assert compared.summary() == "saber v2 vs saber v2: the same protocol"
    assert "Evidence:" not in compared.table()


def test_a_difference_in_reporting_only_keeps_scores_comparable():
    iris = dataclasses.replace(
        ATARI100K, evaluation=dataclasses.replace(ATARI100K.evaluation, episodes=16)
    )
    compared = diff(ATARI100K, iris)
    assert [r.setting for r in compared.differences] == ["evaluation episodes"]
    assert compared.comparable and not compared.identical
    assert compared.summary() == (
        "atari100k v1 vs atari100k v1: 1 of 21 settings differ, in reporting only"
    )


def test_one_setting_that_changes_scores_is_enough():
    sticky = dataclasses.replace(
        ATARI100K,
        environment=dataclasses.replace(ATARI100K.environment, repeat_action_probability=0.25),
    )
    compared = diff(ATARI100K, sticky)
    assert [r.setting for r in compared.score_changing] == ["sticky actions"]
    assert not compared.comparable
    assert "1 of 21 settings differ, 1 of them change scores" in compared.summary()


def test_atari_against_sonic_says_the_platform_first():
    compared = diff(SABER, load_spec("sonic"))
    first = compared.rows[0]
    assert (first.setting, first.a, first.b, first.changes_scores) == (
        "platform",
        "atari",
        "retro",
        True,
    )
    assert compared.row("games").detail == "0 shared"
    assert compared.row("budget").b == "1,000,000 timesteps a level"


def test_every_difference_between_built_in_specs_cites_its_evidence():
    specs = [load_spec(name) for name in list_specs()]
    for a, b in itertools.permutations(specs, 2):
        for row in diff(a, b).differences:
            assert row.evidence, (a.name, b.name, row.setting)
            assert row.changes_scores == (
                row.setting in SCORE_CHANGING and row.status == "changes scores"
            )
    assert set(SCORE_CHANGING) <= set(EVIDENCE)


def test_table_numbers_the_evidence_and_json_has_every_row():
    compared = diff(SABER, ATARI100K)
    table = compared.table()
    lines = table.splitlines()
    assert lines[0] == (
        "saber v2 vs atari100k v1: 19 of 25 settings differ, 13 of them change scores: "
        "not comparable"
    )
    sticky = next(line for line in lines if " sticky actions " in line)
    assert re.search(r"p = 0\.25\s+none\s+changes scores \[1\]$", sticky)
    assert "\nEvidence:\n[1] Machado et al. 2018 Section 5.2" in table
    data = json.loads(json.dumps(compared.to_dict()))
    assert data["a"] == {"name": "saber", "version": SABER.version, "hash": SABER.hash}
    assert (data["identical"], data["comparable"]) == (False, False)
    assert (data["differences"], data["score_changing"]) == (19, 13)
    assert len(data["rows"]) == 25
    assert data["rows"][1]["setting"] == "sticky actions"


def test_diff_is_exported_and_takes_specs_only():
    assert arcadebench.diff is diff and "diff" in arcadebench.__all__
    with pytest.raises(
        InvalidArgument,
        match=re.escape("`a` must be a Spec (arcadebench.load_spec(name_or_path)), got 'saber'"),
    ):
        diff("saber", ATARI100K)
    with pytest.raises(InvalidArgument, match=r"`setting` must be one of frame skip, "):
        diff(SABER, ATARI100K).row("colour")
