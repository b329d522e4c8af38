"""A job of the runner: one game or level under one seed, and how much of it to play.

Jobs are plain values: the plan makes them, the scheduler hands them (or their episode
indices) to workers, and a worker plays them with the agent it loaded once
(:class:`~arcadebench.benchmarks.runner.reference.AgentRef`); a job never carries the agent.

Classes: Job.
Functions: job_summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from arcadebench.benchmarks.runner.identity import AgentIdentity

__all__ = ["Job", "job_summary"]


@dataclass(frozen=True)
class Job:
    """What one (game, seed) of a run plays.

    Attributes:
        spec: a built-in spec name or a spec YAML path (loaded in the worker).
        game: the canonical game or level.
        seed: the job seed (also the run id).
        log_dir: the root of the episode logs.
        algorithm: the agent's name, for the log header and the results.
        episodes: complete episodes to play (or ``None``).
        steps: agent steps to play (or ``None``).
        resume: continue the job's existing log.
        env_kwargs: extra ``make`` arguments (e.g. what the agent needs).
        todo: the episode indices still to play, spread over lanes; ``None``: the job is played
            one episode at a time, in one worker.
        before: ``(complete episodes, steps, frames)`` already in its log.
        phase: the environment its episodes are played in (``"evaluation"``: a policy of a
            protocol scored after training, evaluated directly).
        agent: what its log header records of the agent that plays it.

    Example:
        >>> Job("saber", "pong", 3, "logs", "random", episodes=2).key
        'pong/3'
    """

    spec: str
    game: str
    seed: int
    log_dir: str
    algorithm: str
    episodes: int | None = None
    steps: int | None = None
    resume: bool = False
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    todo: tuple[int, ...] | None = None
    before: tuple[int, int, int] = (0, 0, 0)
    phase: str = "training"
    agent: AgentIdentity = field(default_factory=AgentIdentity)

    @property
    def run(self) -> str:
        """The run id, which is the seed."""
        return str(self.seed)

    @property
    def key(self) -> str:
        """The job's name in progress and failure reports, ``game/run``."""
        return f"{self.game}/{self.run}"


def job_summary(
    *, episodes: int, played: int, steps: int, frames: int, budget: bool, log: str
) -> dict[str, Any]:
    """What a finished job reports (:class:`~.messages.JobDone`), however it was played.

    Args:
        episodes: complete episodes in its log.
        played: episodes played by this run.
        steps: the run's steps.
        frames: the run's frames.
        budget: whether the protocol's budget ended it.
        log: its log file.
    """
    return {
        "episodes": episodes,
        "played": played,
        "total_steps": steps,
        "total_frames": frames,
        "budget": budget,
        "log": log,
    }
