"""Which limit ended a job, its training or an episode, in the words the progress display prints.

A job stops at the first of several limits, and a user who asked for 2,000 steps must not read
that the protocol's budget is used up: the quota given (``--episodes``, ``--steps``),
the protocol's budget (SABER's and HWR's 200M frames, Sonic's 1M steps, Atari 100k's 100k
steps), or, for one episode, the protocol's cap (Atari-5's 108,000 frames, SABER's 18,000 frames
without reward). The monitor knows only that the run's budget, which a step quota tightens, is
used up; these functions tell which limit that was from the totals and the limits themselves.

Functions: job_limit, episode_end.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from arcadebench.benchmarks.runner.job import Job
from arcadebench.specs import Spec
from arcadebench.specs.model import AtariSettings, RetroSettings

__all__ = ["episode_end", "job_limit"]


def job_limit(
    spec: Spec, job: Job, *, steps: int, frames: int, exhausted: bool, evaluation: bool = False
) -> str:
    """The limit that ended ``job`` (or its training) at ``steps`` and ``frames``, in words.

    Args:
        spec: the protocol.
        job: the job, with its quota (``episodes`` or ``steps``).
        steps: the run's agent steps when it ended.
        frames: the run's emulator frames when it ended.
        exhausted: the monitor's budget (the protocol's, tightened by a step quota) is used up.
        evaluation: the job's evaluation episodes ended (a protocol scored after training).

    Example:
        >>> from arcadebench.specs import load_spec
        >>> job = Job("hwr", "breakout", 0, "logs", "random", steps=2000)
        >>> job_limit(load_spec("hwr"), job, steps=2000, frames=7982, exhausted=True)
        'the 2,000-step quota is reached'
        >>> job_limit(load_spec("sonic"), job, steps=1_000_000, frames=4_000_000, exhausted=True)
        "the protocol's budget of 1,000,000 steps is used up"
    """
    budget = spec.evaluation
    if evaluation:
        wanted = job.episodes or budget.episodes or 0
        if wanted == budget.episodes:
            return f"the protocol's {wanted:,} evaluation episodes are played"
        return f"the {wanted:,}-episode quota is reached"
    if exhausted:
        if budget.budget_steps is not None and steps >= budget.budget_steps:
            return f"the protocol's budget of {budget.budget_steps:,} steps is used up"
        if budget.budget_frames is not None and frames >= budget.budget_frames:
            return f"the protocol's budget of {budget.budget_frames:,} frames is used up"
        if job.steps is not None:  # the step quota is the budget the monitor was given
            return f"the {job.steps:,}-step quota is reached"
        return "the protocol's budget is used up"
    if job.episodes is not None:
        return f"the {job.episodes:,}-episode quota is reached"
    return ""


def episode_end(
    spec: Spec,
    job: Job,
    settings: AtariSettings | RetroSettings | None,
    record: Mapping[str, Any],
) -> str:
    """Why an episode ended when a limit, not the game, ended it (``""`` when the game did).

    An episode cut by the run's budget or quota is incomplete (scores ignore it); one ended by
    the protocol's cap is complete and scored, but its return is not a whole game's.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> saber = load_spec("saber")
        >>> job = Job("saber", "pong", 0, "logs", "random", episodes=1)
        >>> episode_end(saber, job, saber.environment, {"complete": True, "end_reason": "stuck"})
        'ended by the stuck limit: 18,000 frames without reward'
    """
    reason = record.get("end_reason")
    if not record.get("complete"):
        if reason == "budget":
            steps = int(record.get("total_steps") or 0)
            frames = int(record.get("total_frames") or 0)
            return f"incomplete: {job_limit(spec, job, steps=steps, frames=frames, exhausted=True)}"
        return f"incomplete: {reason}"
    if reason == "frame_limit" and isinstance(settings, AtariSettings):
        return f"ended by the {settings.max_episode_frames or 0:,}-frame cap"
    if reason == "stuck" and isinstance(settings, AtariSettings):
        return f"ended by the stuck limit: {settings.max_stuck_frames or 0:,} frames without reward"
    if reason == "time_limit":
        if isinstance(settings, RetroSettings):
            return f"ended by the {settings.max_episode_timesteps:,}-step time limit"
        return "ended by a time limit"
    return ""
