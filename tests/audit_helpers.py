"""Recorded plays for the audit's tests: records as the emulator tap makes them, step by step."""

from __future__ import annotations

from ale_py import Action

from arcadebench.benchmarks.audit.facts import ResetFacts, StepFacts, action_id
from arcadebench.benchmarks.audit.properties import measure
from arcadebench.benchmarks.audit.sessions import Play

NOOP, FIRE = action_id(Action.NOOP), action_id(Action.FIRE)


def step(reward=0.0, raw=None, *, lost=False, over=False, ends=False, info=None, frame=0):
    """One agent step of 4 NOOP frames; ``raw`` is the game's reward (default: ``reward``)."""
    return StepFacts(
        action=0,
        reward=reward,
        terminated=ends,
        truncated=False,
        info={"lives": 3} if info is None else info,
        frames=4,
        played=(NOOP,) * 4,
        raw_reward=reward if raw is None else raw,
        lost_life=lost,
        game_over=over,
        game_frame=frame,
    )


def reset(fresh=True, played=()):
    """A reset that started a new game (``fresh``) or went on with one, playing ``played``."""
    return ResetFacts(info={"lives": 3}, fresh=fresh, played=(tuple(played),))


def measured(*events):
    """Every property of one random play of Pong (6 actions) made of ``events``, by name."""
    properties = measure([Play("random", list(events), "emulator")], "pong", 6)
    return {p.name: p for p in properties}


def end(score_info, reward=0.0):
    """The step that ends the game, with ``score_info`` in its ``info``."""
    return step(reward, over=True, ends=True, info={"lives": 0, **score_info})
