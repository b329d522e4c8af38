"""Which limit ended a job, its training or an episode: the quota, the budget or the cap."""

from __future__ import annotations

import dataclasses

import pytest

from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.limits import episode_end, job_limit
from arcadebench.specs import load_spec


def job(spec, game="pong", **quota):
    return Job(spec, game, 0, "logs", "random", **quota)


@pytest.mark.parametrize(
    ("spec", "quota", "steps", "frames", "said"),
    [
        # `run hwr --games Breakout --steps 2000`: the quota ends it, not the protocol's budget
        ("hwr", {"steps": 2000}, 2000, 7982, "the 2,000-step quota is reached"),
        # HWR's 200M frames come first: 4 frames a step, so 50M steps of a 60M-step quota
        (
            "hwr",
            {"steps": 60_000_000},
            50_000_000,
            200_000_000,
            "the protocol's budget of 200,000,000 frames is used up",
        ),
        # the default quota is the budget: Sonic's 1M steps, Atari 100k's 100k
        (
            "sonic",
            {"steps": 1_000_000},
            1_000_000,
            4_000_000,
            "the protocol's budget of 1,000,000 steps is used up",
        ),
        (
            "atari100k",
            {"steps": 100_000, "episodes": 100},
            100_000,
            400_000,
            "the protocol's budget of 100,000 steps is used up",
        ),
        # episodes asked for, and the budget used up before them
        (
            "saber",
            {"episodes": 50_000},
            49_000_000,
            200_000_000,
            "the protocol's budget of 200,000,000 frames is used up",
        ),
    ],
)
def test_a_used_up_budget_is_named_by_the_limit_that_was_reached(spec, quota, steps, frames, said):
    loaded = load_spec(spec)
    assert job_limit(loaded, job(spec, **quota), steps=steps, frames=frames, exhausted=True) == said


def test_episodes_asked_for_are_a_quota_and_evaluation_episodes_the_protocols_or_a_quota():
    saber, atari100k = load_spec("saber"), load_spec("atari100k")
    two = job("saber", episodes=2)
    assert job_limit(saber, two, steps=1600, frames=6400, exhausted=False) == (
        "the 2-episode quota is reached"
    )
    three = job("atari100k", steps=2000, episodes=3)
    assert job_limit(
        atari100k, three, steps=2493, frames=10008, exhausted=False, evaluation=True
    ) == ("the 3-episode quota is reached")
    hundred = job("atari100k", steps=2000, episodes=100)  # atari100k's own number
    assert job_limit(atari100k, hundred, steps=0, frames=0, exhausted=False, evaluation=True) == (
        "the protocol's 100 evaluation episodes are played"
    )


@pytest.mark.parametrize(
    ("spec", "record", "said"),
    [
        ("saber", {"complete": True, "end_reason": "game_over"}, ""),
        # SABER Table 1: 5 minutes (18,000 frames) without reward
        (
            "saber",
            {"complete": True, "end_reason": "stuck"},
            "ended by the stuck limit: 18,000 frames without reward",
        ),
        # Atari-5: 30 minutes at 60 frames a second
        (
            "atari5",
            {"complete": True, "end_reason": "frame_limit"},
            "ended by the 108,000-frame cap",
        ),
        (
            "sonic",
            {"complete": True, "end_reason": "time_limit"},
            "ended by the 4,500-step time limit",
        ),
        ("sonic", {"complete": True, "end_reason": "level_complete"}, ""),
        ("hwr", {"complete": False, "end_reason": "reset"}, "incomplete: reset"),
    ],
)
def test_an_episode_a_cap_ended_says_which(spec, record, said):
    loaded = load_spec(spec)
    assert episode_end(loaded, job(spec, episodes=1), loaded.environment, record) == said


def test_an_episode_cut_by_a_step_quota_says_so():
    hwr = load_spec("hwr")
    record = {"complete": False, "end_reason": "budget", "total_steps": 2000, "total_frames": 7982}
    assert episode_end(hwr, job("hwr", steps=2000), hwr.environment, record) == (
        "incomplete: the 2,000-step quota is reached"
    )


def test_a_changed_cap_is_the_one_named():
    atari5 = load_spec("atari5")
    settings = atari5.environment
    shorter = dataclasses.replace(settings, max_episode_frames=2000)  # env_kwargs' override
    record = {"complete": True, "end_reason": "frame_limit"}
    assert episode_end(atari5, job("atari5", episodes=1), shorter, record) == (
        "ended by the 2,000-frame cap"
    )
