"""A worker's lanes: the environments in which a batched agent plays many episodes at once.

SB3's ``evaluate_policy`` is fast because it calls the policy once per step of a batch of
environments; one ``predict`` per environment step costs 2.4 times more, and a process per job costs
far more again (13x slower than SB3, measured by perf/bench_evaluation.py). So a worker process
holds up to ``lanes`` environments, each playing one episode of some job, and each step calls the
agent once for all of them (once per agent: jobs whose factory makes an agent each are called
apart).

A lane is one stream of a job's run (:mod:`arcadebench.records.live`): it opens the job's
environment and log when the parent gives it the job, plays the episode indices it is given one
after another, each reset with the seeds of its index (:func:`~arcadebench.records.episode_seeds`)
and recorded with ``index``, and keeps its environment for the job's next index. Each row of a batch
draws its random numbers from its own episode's generator, so an episode is the same whatever shares
its batch, the number of lanes or workers, or the backend.

Failures stay with their lanes: an agent that raises fails the lanes whose rows were in that
call; an environment that raises fails its lane. An agent that does not fit an environment's
spaces is refused (:mod:`~.compatibility`), which stops the run.

Classes: Lanes.
"""

from __future__ import annotations

import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arcadebench.benchmarks.envs.factory import make
from arcadebench.benchmarks.runner.agents import Actor
from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.messages import (
    EpisodeEnded,
    EpisodeStarted,
    Exhausted,
    Failure,
    FailureKind,
    JobFailed,
    failure_of,
)
from arcadebench.benchmarks.runner.reference import LoadedAgent
from arcadebench.benchmarks.runner.worker import (
    Send,
    attach_log,
    checked_actions,
    environment_raised,
    event_fields,
    job_actor,
)
from arcadebench.errors import AgentError, ArcadebenchError, IncompatibleAgent
from arcadebench.records import Relay, episode_seeds
from arcadebench.specs import Spec, load_spec

__all__ = ["Lanes"]


@dataclass
class _Lane:
    """One environment of the worker, the job it plays, and the episode in flight."""

    id: int
    job: Job
    env: Any
    mon: Any
    actor: Actor
    queue: deque[int] = field(default_factory=deque)
    index: int | None = None
    obs: Any = None
    rng: np.random.Generator | None = None
    steps: int = 0

    def where(self, step: int | None = None) -> str:
        at = f" (step {self.steps if step is None else step})"
        return f"{self.job.game} run {self.job.run!r} episode {self.index}{at}"


class Lanes:
    """The batched lanes of one worker process (module docstring).

    Args:
        loaded: the worker's agent: one object every job plays (a saved model, loaded once),
            or one made for each job (a factory).
        send: where events go (the parent).
        line_sender: for a stream whose log the parent holds (Ray), how its lines go there.
    """

    def __init__(
        self,
        loaded: LoadedAgent,
        send: Send,
        line_sender: Callable[[int], Callable[[bytes], Any]] | None = None,
    ) -> None:
        self.loaded = loaded
        self.send = send
        self.line_sender = line_sender
        self.lanes: dict[int, _Lane] = {}
        self._actors: dict[str, Actor] = {}
        self._policies: dict[str, str] = {}

    @property
    def busy(self) -> bool:
        """Whether some lane has an episode in flight or waiting."""
        return any(lane.index is not None or lane.queue for lane in self.lanes.values())

    # -- what the parent says ----------------------------------------------------------------
    def open(self, lane_id: int, job: Job, start: Any = None, stream: int | None = None) -> None:
        """Make ``job``'s environment in lane ``lane_id`` and join its run (a new stream).

        Raises:
            IncompatibleAgent: the agent does not fit the environment (the run stops).
        """
        self.close(lane_id)
        spec = load_spec(job.spec)
        try:
            env = make(spec, job.game, phase=job.phase, **job.env_kwargs)
        except ArcadebenchError as error:
            self.send(JobFailed(job.key, failure_of(error), lane=lane_id))
            return
        try:
            actor = self._actor(job, env, spec)
            policy = self._policy(job, actor)
        except IncompatibleAgent:
            env.close()
            raise
        except ArcadebenchError as error:
            env.close()
            self.send(JobFailed(job.key, failure_of(error), lane=lane_id))
            return
        except Exception as error:
            env.close()
            message = f"the agent raised in {job.game} run {job.run!r}: {type(error).__name__}: "
            failure = Failure(FailureKind.AGENT_RAISED, message + str(error))
            self.send(JobFailed(job.key, failure, traceback.format_exc(), lane_id))
            return
        relay = None
        if start is not None and self.line_sender is not None and stream is not None:
            relay = Relay(start, self.line_sender(stream))
        try:
            mon = attach_log(env, job, relay, steps=None, policy=policy, resume=True)
        except Exception as error:  # the log refused it (in use, another run's), or the env's
            env.close()  # monitor failed: not the agent's doing
            trace = "" if isinstance(error, ArcadebenchError) else traceback.format_exc()
            self.send(JobFailed(job.key, failure_of(error), trace, lane_id))
            return
        self.lanes[lane_id] = _Lane(lane_id, job, env, mon, actor)

    def play(self, lane_id: int, index: int) -> None:
        """Queue episode ``index`` of the lane's job (started when the lane is free)."""
        lane = self.lanes.get(lane_id)
        if lane is None:  # the lane failed: its job is failed in the parent, nothing to play
            return
        lane.queue.append(index)
        if lane.index is None:
            self._begin(lane)

    def close(self, lane_id: int) -> None:
        """Close the lane's environment (an episode in flight is not logged)."""
        lane = self.lanes.pop(lane_id, None)
        if lane is not None:
            lane.env.close()

    def close_all(self) -> None:
        """Close every lane."""
        for lane_id in list(self.lanes):
            self.close(lane_id)

    # -- playing -------------------------------------------------------------------------------
    def step(self) -> None:
        """One step of every episode in flight: one agent call per agent, then the envs."""
        groups: dict[int, list[_Lane]] = {}
        for lane in self.lanes.values():
            if lane.index is not None:
                groups.setdefault(id(lane.actor.agent), []).append(lane)
        for group in groups.values():
            actions = self._act(group)
            if actions is None:
                continue
            for lane, action in zip(group, actions, strict=True):
                self._step(lane, action)

    def _act(self, group: list[_Lane]) -> Any:
        actor = group[0].actor
        rngs = [lane.rng for lane in group]
        try:
            obs = group[0].obs[None] if len(group) == 1 else np.stack([g.obs for g in group])
            out = actor.act_rows(obs, rngs)  # type: ignore[arg-type]  # set when it began
            return checked_actions(
                out, group[0].env.action_space, len(group), lambda row: group[row].where()
            )
        except AgentError as error:
            for lane in group:
                self._fail(lane, failure_of(error), traceback.format_exc())
        except Exception as error:
            where = (
                group[0].where()
                if len(group) == 1
                else f"a batch of {len(group)} episodes ({', '.join(g.where() for g in group)})"
            )
            message = f"the agent raised in {where}: {type(error).__name__}: {error}"
            for lane in group:
                self._fail(lane, Failure(FailureKind.AGENT_RAISED, message), traceback.format_exc())
        return None

    def _step(self, lane: _Lane, action: Any) -> None:
        try:
            obs, _, terminated, truncated, _ = lane.env.step(action)
        except Exception as error:
            self._env_failed(lane, error)
            return
        lane.steps += 1
        lane.obs = obs
        if terminated or truncated or lane.mon.exhausted:
            self._finished(lane)

    def _begin(self, lane: _Lane) -> None:
        index = lane.queue.popleft()
        env_seed, agent_seed = episode_seeds(lane.job.seed, index)
        lane.index, lane.steps = index, 0
        lane.rng = np.random.default_rng(agent_seed)
        lane.mon.recorder.index = index
        self.send(EpisodeStarted(lane.job.key, index, lane.id))
        try:
            lane.obs, info = lane.env.reset(seed=env_seed)
        except Exception as error:
            self._env_failed(lane, error)
            return
        if info.get("arcadebench", {}).get("budget_exhausted"):
            lane.index = None
            lane.queue.clear()
            self.send(Exhausted(lane.job.key, lane.id))

    def _finished(self, lane: _Lane) -> None:
        self.send(EpisodeEnded(lane.job.key, event_fields(lane.mon), lane.id))
        lane.index = None
        if lane.mon.exhausted:
            lane.queue.clear()
            self.send(Exhausted(lane.job.key, lane.id))
        elif lane.queue:
            self._begin(lane)

    def _env_failed(self, lane: _Lane, error: Exception) -> None:
        """Fail the lane's job for what its environment raised (its own error, or a fault)."""
        if not isinstance(error, ArcadebenchError):
            error = environment_raised(lane.where(), error)
        self._fail(lane, failure_of(error), traceback.format_exc())

    def _fail(self, lane: _Lane, failure: Failure, trace: str) -> None:
        self.send(JobFailed(lane.job.key, failure, trace, lane.id))
        self.close(lane.id)

    # -- agents --------------------------------------------------------------------------------
    def _actor(self, job: Job, env: Any, spec: Spec) -> Actor:
        """The job's actor (of the shared agent, or of one made for it), checked on ``env``."""
        actor = self._actors.get(job.key)
        if actor is None:
            actor = self._actors[job.key] = job_actor(self.loaded, job, env, spec)
        return actor

    def _policy(self, job: Job, actor: Actor) -> str | None:
        """The evaluation policy's description, asked once per job (``None``: training)."""
        if job.phase != "evaluation":
            return None
        if job.key not in self._policies:
            self._policies[job.key] = actor.evaluation_policy()
        return self._policies[job.key]
