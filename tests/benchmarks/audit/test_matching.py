"""The audit's verdicts per spec (`audit/matching.py`): which part of a rule differs, said."""

from __future__ import annotations

from audit_helpers import measured, reset, step

from arcadebench.benchmarks.audit.matching import match_spec
from arcadebench.specs import load_spec

ATARI5, ATARI100K = load_spec("atari5"), load_spec("atari100k")


def life(spec, *events):
    properties = list(measured(*events).values())
    verdict = match_spec(spec, properties, "pong").verdicts["life information"]
    return verdict.status, verdict.note


GAME_OVER_ONLY = (  # ale-py v5: two lives lost in one episode, lives in info
    reset(),
    step(lost=True),
    step(lost=True),
    step(over=True, ends=True),
)
LIFE_ENDS_EPISODE = (  # stable-baselines3's EpisodicLifeEnv: the game goes on after each
    reset(),
    step(lost=True, ends=True),
    reset(False, [1]),
    step(lost=True, ends=True),
    reset(False, [1]),
    step(over=True, ends=True),
)


def test_a_game_over_only_env_with_lives_in_info_differs_in_that_part_only():
    assert life(ATARI5, *GAME_OVER_ONLY) == (
        "differs",
        "info carries 'lives', which atari5 withholds "
        "(none of 2 lost lives ended the episode, as declared)",
    )
    assert life(ATARI100K, *GAME_OVER_ONLY) == (
        "differs",
        "info carries 'lives', which atari100k withholds "
        "(none of 2 lost lives ended the episode, as atari100k's evaluation env does)",
    )


def test_an_env_ending_episodes_on_a_lost_life_says_so_beside_the_lives():
    assert life(ATARI5, *LIFE_ENDS_EPISODE) == (
        "differs",
        "2 of 2 lost lives ended the episode, where atari5 ends it at game over only; "
        "info carries 'lives', which atari5 withholds",
    )
    assert life(ATARI100K, *LIFE_ENDS_EPISODE) == (
        "differs",
        "info carries 'lives', which atari100k withholds "
        "(2 of 2 lost lives ended the episode and the game went on, as atari100k's training "
        "env does)",
    )


def test_lives_in_info_without_a_life_lost_leave_the_rest_unseen():
    assert life(ATARI5, reset(), step(over=True, ends=True)) == (
        "differs",
        "info carries 'lives', which atari5 withholds; no life was lost, so the rest of the "
        "rule was not seen",
    )


def test_a_match_prints_as_one_line_of_what_differs():
    """`print(report.closest)`: the spec and the rules, not every verdict and constant."""
    properties = list(measured(*GAME_OVER_ONLY).values())
    match = match_spec(ATARI5, properties, "pong")
    assert repr(match) == (
        "SpecMatch(Spec('atari5' v1, sha256:90863c63e974, atari, 57 games) differs in action "
        "set, life information; not verified: sticky actions, reward, episode cap)"
    )
    evaluation = match_spec(ATARI100K, properties, "pong")
    assert "\n" not in repr(evaluation) and len(repr([match, evaluation])) < 2 * 200
