"""The episode log's records, declared once: their fields, types and constructors.

A log is JSON Lines (DEVELOPING.md, "Episode log"): a ``header`` line first, then one
``episode`` line per finished episode, written by the monitors (:mod:`arcadebench.wrappers`)
and read by the scorer (:mod:`arcadebench.records.reader`). Readers skip records of unknown
``kind``, so later formats can add kinds without breaking older readers.

Classes: RunIdentity, HeaderRecord, EpisodeRecord.
Functions: header_record, episode_record, episode_seeds.
"""

from __future__ import annotations

import time
from typing import Any, Literal, NamedTuple, TypedDict, get_args

import numpy as np
from typing_extensions import NotRequired  # typing's own from Python 3.11

__all__ = [
    "END_REASONS",
    "EPISODE_FIELDS",
    "LOG_FORMAT",
    "EndReason",
    "EpisodeRecord",
    "HeaderRecord",
    "RunIdentity",
    "episode_record",
    "episode_seeds",
    "header_record",
]

LOG_FORMAT = "arcadebench-episodes/2"
"""Format 2, in which a run is written by many environments (``env``, ``env_steps``,
``env_frames``); 1 had one."""

EndReason = Literal[
    "game_over",
    "life_lost",
    "level_complete",
    "special_stage",
    "stuck",
    "frame_limit",
    "time_limit",
    "budget",  # the run's budget ran out mid-episode (monitor; the episode is incomplete)
    "reset",  # the agent reset before the episode ended (monitor; the episode is incomplete)
]
END_REASONS: tuple[str, ...] = get_args(EndReason)


class HeaderRecord(TypedDict, total=False):
    """The first line of a log: what the run is (``algorithm`` only when known)."""

    kind: Literal["header"]
    format: str
    spec: str
    spec_version: int
    spec_hash: str
    env_id: str | None
    game: str
    run: str
    seed: int | None
    algorithm: str
    budget: dict[str, int | None]
    settings: dict[str, Any]
    deviations: dict[str, Any]
    phase: Literal["evaluation"]  # only in the evaluation log of a run scored after training
    policy: str  # the evaluation's policy, as the agent described it
    agent: dict[str, Any]  # the runner's: kind, name, reference, file and sha256 of what played
    versions: dict[str, str]
    time: float


EpisodeRecord = TypedDict(
    "EpisodeRecord",
    {
        "kind": Literal["episode"],
        "spec": str,
        "spec_version": int,
        "spec_hash": str,
        "env_id": str | None,
        "game": str,
        "run": str,
        "env": int,  # the stream: which of the run's environments played it
        "seed": int | None,
        "episode": int,  # numbered per stream
        # the runner's index of the episode in its job, from which its seeds derive (its
        # episodes are spread over many streams); absent where no runner numbered it
        "index": NotRequired[int],
        "return": float,  # the protocol return: after the rollover guard, before agent clipping
        "steps": int,
        "frames": int,
        "env_steps": int,  # the stream's, this episode included
        "env_frames": int,
        "total_steps": int,  # the run's (every stream's, the episodes in flight included)
        "total_frames": int,
        "end_reason": str,
        "complete": bool,  # false: cut by the budget or by a reset (never scored)
        "rollover_rewards": list[float],
        "deviations": dict[str, Any],
        "wall_time": float,
        "time": float,
    },
)
"""One finished episode line (the functional form, because ``return`` is a keyword)."""

EPISODE_FIELDS: tuple[str, ...] = tuple(
    name for name in EpisodeRecord.__annotations__ if name in EpisodeRecord.__required_keys__
)
"""The fields every episode line has, in the order they are written (``index`` is optional)."""


class RunIdentity(NamedTuple):
    """What the lines of one run's log repeat about the run (``seed`` is the stream's)."""

    spec: str
    spec_version: int
    spec_hash: str
    env_id: str | None
    game: str
    run: str
    seed: int | None
    algorithm: str | None
    settings: dict[str, Any]
    deviations: dict[str, Any]


def _identity_fields(run: RunIdentity) -> dict[str, Any]:
    """The fields that open every line of a log: the spec and the run."""
    return {
        "spec": run.spec,
        "spec_version": run.spec_version,
        "spec_hash": run.spec_hash,
        "env_id": run.env_id,
        "game": run.game,
        "run": run.run,
        "seed": run.seed,
    }


def header_record(
    run: RunIdentity,
    budget: tuple[int | None, int | None],
    versions: dict[str, str],
    **extra: Any,
) -> HeaderRecord:
    """A log's header line; ``budget`` is ``(steps, frames)``, ``extra`` goes before versions.

    Example:
        >>> run = RunIdentity("saber", 2, "sha256:0", None, "pong", "0", 1, None, {}, {})
        >>> list(header_record(run, (None, 200), {}))[:3]
        ['kind', 'format', 'spec']
    """
    header: dict[str, Any] = {"kind": "header", "format": LOG_FORMAT, **_identity_fields(run)}
    if run.algorithm:
        header["algorithm"] = run.algorithm
    header.update(
        {
            "budget": {"steps": budget[0], "frames": budget[1]},
            "settings": run.settings,
            "deviations": run.deviations,
            **extra,
            "versions": versions,
            "time": round(time.time(), 3),
        }
    )
    return header  # type: ignore[return-value]  # built key by key, **extra included


def episode_record(
    run: RunIdentity,
    *,
    env: int,
    episode: int,
    episode_return: float,
    steps: int,
    frames: int,
    env_steps: int,
    env_frames: int,
    total_steps: int,
    total_frames: int,
    end_reason: str,
    complete: bool,
    rollover_rewards: list[float],
    wall_time: float,
    index: int | None = None,
) -> EpisodeRecord:
    """An episode line, its fields in :data:`EPISODE_FIELDS` order (``index`` after ``episode``).

    Example:
        >>> run = RunIdentity("saber", 2, "sha256:0", None, "pong", "0", 1, None, {}, {})
        >>> record = episode_record(run, env=0, episode=0, episode_return=-21.0, steps=800,
        ...     frames=3200, env_steps=800, env_frames=3200, total_steps=800, total_frames=3200,
        ...     end_reason="game_over", complete=True, rollover_rewards=[], wall_time=1.0)
        >>> tuple(record) == EPISODE_FIELDS
        True
    """
    fields = _identity_fields(run)
    seed = fields.pop("seed")
    record = {
        "kind": "episode",
        **fields,
        "env": env,
        "seed": seed,
        "episode": episode,
        **({"index": index} if index is not None else {}),
        "return": episode_return,
        "steps": steps,
        "frames": frames,
        "env_steps": env_steps,
        "env_frames": env_frames,
        "total_steps": total_steps,
        "total_frames": total_frames,
        "end_reason": end_reason,
        "complete": complete,
        "rollover_rewards": rollover_rewards,
        "deviations": run.deviations,
        "wall_time": round(wall_time, 4),
        "time": round(time.time(), 3),
    }
    return record  # type: ignore[return-value]  # a dict literal is not a TypedDict to mypy


def episode_seeds(job_seed: int, index: int) -> tuple[int, int]:
    """The (environment reset seed, agent seed) of the episode of ``index`` in a runner's job.

    Part of the log's contract: an episode line's ``index`` and its job's ``seed`` fix where
    the episode started, so a run whose episodes were re-ordered, repeated, dropped or replaced
    by one of another seed is seen as such (``arcadebench verify``).

    Example:
        >>> episode_seeds(0, 0) == episode_seeds(0, 0) != episode_seeds(0, 1)
        True
    """
    state = np.random.SeedSequence(entropy=job_seed, spawn_key=(index,)).generate_state(2)
    return int(state[0]), int(state[1])
