"""The audit's measured properties (`audit/properties.py`) on recorded plays with known answers.

The plays here are records as the emulator tap makes them (`audit/facts.py`), written out step
by step, so that every number in a cell can be counted by hand. What each cell may claim: what
the plays showed, and what they could not show said as such.
"""

from __future__ import annotations

from audit_helpers import FIRE, NOOP, end, measured, reset, step


def test_continuing_resets_show_the_range_they_drew_not_one_sequence():
    """Three resets after a lost life played 1, 29 and 5 NOOPs and a FIRE: not `NOOPx29, FIREx1`."""
    events = [reset()]
    for noops in (1, 29, 5):
        events += [step(lost=True, ends=True), reset(False, [NOOP] * noops + [FIRE])]
    events.append(step(over=True, ends=True))
    life = measured(*events)["life information"]
    assert life.evidence == (
        "3 lives lost, 3 ended the episode; the next reset continued the game (3), playing "
        "NOOPx1-29, FIREx1 (3 resets, the counts drawn); info carries 'lives'"
    )
    same = [reset()]
    for _ in range(2):
        same += [step(lost=True, ends=True), reset(False, [NOOP] * 4 + [FIRE] * 4)]
    life = measured(*same)["life information"]
    assert life.evidence.endswith(
        ", playing NOOPx4, FIREx4 each time (2 resets); info carries 'lives'"
    )


def test_rewards_within_one_say_clipping_could_not_be_seen():
    reward = measured(reset(), step(1.0), step(-1.0), step(1.0, over=True, ends=True))["reward"]
    assert reward.value == "raw or clipped"
    assert reward.cell == "equal to the game's, all within -1..1: clipping not observable"
    assert reward.evidence == (
        "3 rewarded steps, the game's rewards up to 1: the env's reward equalled them, as it "
        "would clipped to -1..1 too"
    )
    scored = measured(reset(), step(20.0), step(80.0, over=True, ends=True))["reward"]
    assert (scored.value, scored.cell) == ("raw", "the game's score")
    clipped = measured(reset(), step(1.0, 20.0), step(1.0, 80.0, over=True, ends=True))["reward"]
    assert (clipped.value, clipped.cell) == ("clipped", "clipped to -1..1")


def test_a_flag_that_equals_a_score_of_one_is_not_taken_for_the_score():
    """envpool's `terminated` is 1 at every end: a game scoring 1 matches it by coincidence."""
    info = measured(reset(), step(1.0), end({"terminated": 1}))["info"]
    assert info.value["returns"] == ""
    assert info.evidence == (
        "no per-episode return; info['terminated'] equalled the game's score (1) only where a "
        "flag or the step's reward would too: not taken for it"
    )


def test_a_field_is_the_score_only_if_it_matched_everywhere_and_where_it_could_have_differed():
    # a score of 20 ends with a step that gave nothing: `episode.r` could have differed, did not
    info = measured(reset(), step(20.0), end({"episode.r": 20.0}))["info"]
    assert info.value["returns"] == "info['episode.r'] = the game's score (= the return)"
    # the flag matched the first game (1) but not the second (21): no claim, not even doubt
    flag = measured(
        reset(),
        step(1.0),
        end({"terminated": 1}),
        reset(),
        step(20.0),
        step(1.0),
        end({"terminated": 1}),
    )["info"]
    assert flag.evidence == "no per-episode return"
    # the game's score where the env's return differs (clipped rewards)
    clipped = measured(reset(), step(1.0, 20.0), step(1.0, 80.0), end({"episode.r": 100.0}))
    assert clipped["info"].value["returns"] == "info['episode.r'] = the game's score"
    # a score that is the last step's own reward tells nothing: envpool's per-step `reward`
    last = measured(reset(), step(0.0, 0.0), end({"reward": 20.0}, reward=20.0))["info"]
    assert "= the game's score" not in last.evidence
    assert "info['reward'] equalled the game's score (20) only where" in last.evidence


def test_a_per_step_reward_field_needs_a_reward_no_flag_gives():
    ones = measured(reset(), step(1.0, info={"lives": 3, "reward": 1}), end({}))["info"]
    assert "the game's reward each step" not in ones.evidence  # a flag set on rewarded steps
    twenties = measured(reset(), step(20.0, info={"lives": 3, "reward": 20}), end({}))["info"]
    assert twenties.evidence.endswith("info['reward'] = the game's reward each step")
