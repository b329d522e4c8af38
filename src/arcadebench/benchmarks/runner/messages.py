"""Every message of a run, typed: the parent's work orders, the workers' reports, the progress.

A run's processes talk in small frozen values (pickled over a pipe locally, sent through a
mailbox actor on Ray) so that a reader sees every message a worker can send in one place,
as Gymnasium's ``AsyncVectorEnv`` keeps its commands a small closed set:

- the parent to a worker (:data:`Order`): :class:`PlayJob` (a whole job, one episode at a
  time), :class:`OpenLane` / :class:`PlayEpisode` / :class:`CloseLane` (the episode indices of
  batched lanes), :class:`Stop`;
- a worker to the parent (:data:`Report`): :class:`Ready` or :class:`Refused` once the agent is
  loaded, then its jobs' :data:`Progress` and :class:`Exhausted`;
- the progress the caller of :func:`~arcadebench.evaluate` sees (``on_event``): :class:`JobStarted`,
  :class:`EpisodeStarted`, :class:`EpisodeEnded`, :class:`Steps`, :class:`JobDone`,
  :class:`JobFailed`, and on Ray :class:`Waiting`;
- on Ray, what an actor's transport adds (:class:`ActorStarted`, :class:`Line`, :class:`Ended`).

A failure carries its :class:`FailureKind`, decided where it happened (:func:`failure_of` turns
an exception into one), so what the command line advises depends on the kind, never on the
wording of a message.

Classes: FailureKind, Failure, PlayJob, OpenLane, PlayEpisode, CloseLane, Stop, Ready, Refused,
JobStarted, EpisodeStarted, EpisodeEnded, Steps, JobDone, JobFailed, Exhausted, Waiting,
ActorStarted, Line, Ended.
Functions: failure_of.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from arcadebench.benchmarks.runner.job import Job
from arcadebench.errors import AgentError, ArcadebenchError, InputError, InvalidAction, LogInUse

__all__ = [
    "ActorStarted",
    "CloseLane",
    "Ended",
    "EpisodeEnded",
    "EpisodeStarted",
    "Exhausted",
    "Failure",
    "FailureKind",
    "JobDone",
    "JobFailed",
    "JobStarted",
    "Line",
    "OpenLane",
    "Order",
    "PlayEpisode",
    "PlayJob",
    "Progress",
    "Ready",
    "Refused",
    "Report",
    "Steps",
    "Stop",
    "Waiting",
    "failure_of",
]


class FailureKind(enum.Enum):
    """Why a job failed: what decides the advice, and whether resuming can help."""

    AGENT_RAISED = "the agent raised"
    INVALID_ACTION = "the agent chose an invalid action"
    ENVIRONMENT = "the environment failed"
    LOG = "the job's log refused it"
    WORKER_DIED = "its worker died"
    WORKER_HUNG = "an episode hung"
    NODE_LOST = "its Ray node was lost"
    NO_CPU = "the cluster had no CPU"
    NOT_PLAYED = "it was not played"

    @property
    def agents_fault(self) -> bool:
        """Whether the agent must be fixed before the job can be played (resuming cannot help)."""
        return self in (FailureKind.AGENT_RAISED, FailureKind.INVALID_ACTION)


@dataclass(frozen=True)
class Failure:
    """A job's failure: its kind and the one line that says what happened."""

    kind: FailureKind
    message: str

    def __str__(self) -> str:
        return self.message


def failure_of(error: BaseException) -> Failure:
    """The failure an exception in a job is (its kind from its type, its first words).

    Example:
        >>> failure_of(InvalidAction("the agent chose action 7")).kind
        <FailureKind.INVALID_ACTION: 'the agent chose an invalid action'>
    """
    if isinstance(error, InvalidAction):
        return Failure(FailureKind.INVALID_ACTION, str(error))
    if isinstance(error, AgentError):
        return Failure(FailureKind.AGENT_RAISED, str(error))
    if isinstance(error, (LogInUse, InputError)):
        return Failure(FailureKind.LOG, str(error))
    if isinstance(error, ArcadebenchError):
        return Failure(FailureKind.ENVIRONMENT, str(error))
    return Failure(FailureKind.ENVIRONMENT, f"{type(error).__name__}: {error}")


# -- the parent's orders ----------------------------------------------------------------------
@dataclass(frozen=True)
class PlayJob:
    """Play a whole job, one episode at a time; ``starts``: its streams by phase (Ray)."""

    job: Job
    starts: dict[str, tuple[Any, int]] | None = None


@dataclass(frozen=True)
class OpenLane:
    """Make ``job``'s environment in lane ``lane`` and join its run (``start``/``stream``: Ray)."""

    lane: int
    job: Job
    start: Any = None
    stream: int | None = None


@dataclass(frozen=True)
class PlayEpisode:
    """Play episode ``index`` of the lane's job when the lane is free."""

    lane: int
    index: int


@dataclass(frozen=True)
class CloseLane:
    """Close the lane's environment."""

    lane: int


@dataclass(frozen=True)
class Stop:
    """Close everything and end."""


# -- what workers report --------------------------------------------------------------------
@dataclass(frozen=True)
class Ready:
    """The worker loaded its agent and can play."""


@dataclass(frozen=True)
class Refused:
    """The agent cannot play (its spaces do not fit, it does not load): the run stops."""

    message: str


@dataclass(frozen=True)
class JobStarted:
    """A job began, with ``complete`` episodes, ``steps`` and ``frames`` already in its log."""

    key: str
    complete: int
    steps: int
    frames: int


@dataclass(frozen=True)
class EpisodeStarted:
    """Episode ``index`` of a job began (``lane``: which lane of its worker, if batched)."""

    key: str
    index: int
    lane: int | None = None


@dataclass(frozen=True)
class EpisodeEnded:
    """An episode of a job ended: its record's progress fields."""

    key: str
    record: dict[str, Any]
    lane: int | None = None


@dataclass(frozen=True)
class Steps:
    """A whole job's run totals so far (a heartbeat while it trains or plays)."""

    key: str
    steps: int
    frames: int


@dataclass(frozen=True)
class JobDone:
    """A job reached its quota (or its budget): its summary."""

    key: str
    summary: dict[str, Any]


@dataclass(frozen=True)
class JobFailed:
    """A job failed; ``trace`` is what its worker printed (``lane``: the lane that failed)."""

    key: str
    failure: Failure
    trace: str = field(default="", repr=False)
    lane: int | None = None


@dataclass(frozen=True)
class Exhausted:
    """A job's run used its protocol budget: nothing more of it is played."""

    key: str
    lane: int


@dataclass(frozen=True)
class Waiting:
    """The jobs wait (for a Ray node with a CPU): why."""

    message: str


# -- a Ray actor's transport ------------------------------------------------------------------
@dataclass(frozen=True)
class ActorStarted:
    """A Ray actor runs, on ``node``, its output in ``stderr`` there."""

    node: str
    stderr: str


@dataclass(frozen=True)
class Line:
    """A log line of stream ``stream``, for the driver to write."""

    stream: int
    line: bytes


@dataclass(frozen=True)
class Ended:
    """A Ray actor's last message."""


Order: TypeAlias = PlayJob | OpenLane | PlayEpisode | CloseLane | Stop
"""What the parent sends a worker."""

Progress: TypeAlias = JobStarted | EpisodeStarted | EpisodeEnded | Steps | JobDone | JobFailed
"""What a job's progress is made of (the caller's ``on_event`` also sees :class:`Waiting`)."""

Report: TypeAlias = Ready | Refused | Progress | Exhausted
"""What a worker sends the parent."""
