"""One job of the runner: an agent plays one game/level under one seed.

A job is ``(game, seed)``: its episodes go to the log ``<log_dir>/<spec>/<game>/<seed>.jsonl``
through the environments' monitors, which write and fsync every line. A job is played in one of
two ways, by a worker process that lives for the whole run (:mod:`~.serve`):

- **one episode at a time** (:func:`run_job`): a learning agent, whose episodes depend on the
  ones before; a step quota; any agent that does not answer batches. The job plays until its
  quota (``episodes`` complete episodes, or ``steps`` agent steps) or the protocol's budget;
- **spread over lanes** (:mod:`~.lanes`): a batched agent that does not learn plays the job's
  missing episodes in the environments of every worker at once, the rows of one call per step.

Determinism: episode ``i`` of a job is reset with a seed, and the agent seeded with another,
both derived from ``(job seed, i)`` by :func:`~arcadebench.records.episode_seeds`, and its
record says ``index: i``.
Episodes therefore do not depend on the ones before them (for agents that do not learn), nor
on the batch, the number of workers or the backend, so a resumed job, which plays the indices
missing from its log, plays exactly the episodes an uninterrupted job would.

Progress goes to the parent as typed messages (:mod:`~.messages`) through ``send``; the log is
the record. A job whose log another process holds (a Ray driver) plays through a
:class:`~arcadebench.records.Relay` per phase.

Functions: run_job, job_actor, attach_log, checked_actions, environment_raised, event_fields,
full_action_space.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.envs.factory import make
from arcadebench.benchmarks.runner.agents import Actor
from arcadebench.benchmarks.runner.compatibility import check_compatible
from arcadebench.benchmarks.runner.job import Job, job_summary
from arcadebench.benchmarks.runner.messages import (
    EpisodeEnded,
    EpisodeStarted,
    JobStarted,
    Report,
    Steps,
)
from arcadebench.benchmarks.runner.reference import LoadedAgent
from arcadebench.errors import AgentError, ArcadebenchError, InvalidAction
from arcadebench.records import Relay, episode_seeds
from arcadebench.specs import Spec, load_spec

Send = Callable[[Report], None]
"""How a worker's reports reach the parent."""

__all__ = [
    "HEARTBEAT_STEPS",
    "attach_log",
    "checked_actions",
    "environment_raised",
    "event_fields",
    "full_action_space",
    "job_actor",
    "run_job",
]

HEARTBEAT_STEPS = 512  # progress message every this many steps (frames/s in the display)


def checked_actions(
    actions: Any, space: gym.Space[Any], rows: int, where: Callable[[int], str]
) -> Any:
    """``actions`` as the environments take them, or an :class:`AgentError` naming the bad one.

    A model of 18 actions under a protocol of 6 would otherwise have its action 7 fail deep in
    ALE (``IndexError``) or, worse, a valid index of another meaning played silently; so every
    action is checked against the environment's space. ``rows`` actions are expected
    (``rows == 0``: one, not in a batch); ``where(row)`` names the episode.

    Example:
        >>> checked_actions([1, 2], gym.spaces.Discrete(4), 2, str).tolist()
        [1, 2]
    """
    if not isinstance(space, gym.spaces.Discrete):
        return actions
    array = np.asarray(actions)
    wanted = (rows,) if rows else ()
    if array.shape != wanted and array.size == max(rows, 1):
        array = array.reshape(wanted)
    low, high = int(space.start), int(space.start) + int(space.n)
    if array.shape == wanted and array.dtype.kind in "iub":
        if rows == 0:
            if low <= array < high:
                return int(array)
        elif low <= array.min() and array.max() < high:
            return array
        bad = np.flatnonzero((array < low) | (array >= high))
        row = int(bad[0])  # the range check above failed: some row is out of range
        found: Any = array[row] if rows else array
        raise InvalidAction(
            f"the agent chose action {int(found)} in {where(row)}, outside the environment's "
            f"{space} ({int(space.n)} actions): was it trained on another action set? "
            "Give it the environment's action set, or evaluate it with map_actions=True"
        )
    raise InvalidAction(
        f"the agent returned {actions!r} in {where(0)}: expected "
        + (f"{rows} integer actions (one per row)" if rows else "one integer action")
        + f" of {space}"
    )


def event_fields(mon: Any) -> dict[str, Any]:
    """What the parent hears of the monitor's last episode (the progress display's fields)."""
    record = mon.last_episode or {}
    return {k: record.get(k) for k in _EVENT_FIELDS} | {"rss_kb": _rss_kb()}


def run_job(
    job: Job,
    send: Send,
    loaded: LoadedAgent,
    relays: Mapping[str, Relay] | None = None,
) -> dict[str, Any]:
    """Play ``job`` one episode at a time to its quota; returns its summary (:class:`JobDone`'s).

    A protocol scored on its training episodes (SABER, HWR, Atari-5, Machado et al. 2018,
    Sonic) plays ``episodes`` or ``steps`` of training. One scored on evaluation episodes after
    training (Atari 100k, DQN 2015) trains a learning agent for ``steps`` (the protocol's budget
    by default) in the training environment, then plays ``episodes`` evaluation episodes (the
    protocol's number by default) in the evaluation environment with the agent's evaluation
    policy; a policy that does not learn is evaluated directly.

    With ``relays`` (by phase: ``"training"``, ``"evaluation"``) the logs are the caller's (a
    Ray driver's): the episodes are sent there, and the job starts where the driver's log says.
    ``loaded`` is the worker's agent: it gives the job its object (a factory's fresh one, a
    learner's fresh copy, or the shared one).

    Raises:
        AgentError: the agent raised (names game, run and episode; earlier episodes are logged).
        IncompatibleAgent: the agent does not fit the environment's spaces.
        ArcadebenchError: bad input (the log is in use, belongs to another run...).
    """
    relays = relays or {}
    spec = load_spec(job.spec)
    env = make(spec, job.game, **job.env_kwargs)
    try:
        actor = job_actor(loaded, job, env, spec)
        if spec.evaluation.scored == "training":
            mon = attach_log(env, job, relays.get("training"), steps=job.steps)
            send(JobStarted(job.key, mon.complete_episodes, mon.total_steps, mon.total_frames))
            played = _play(env, mon, actor, job, send, episodes=job.episodes, learn=True)
            return _summary(mon, played)
        played = 0
        if actor.observe is not None:  # a learner trains first, for the budget
            mon = attach_log(env, job, relays.get("training"), steps=job.steps)
            send(JobStarted(job.key, 0, mon.total_steps, mon.total_frames))
            # its episodes are not the job's: the progress counts the evaluation's
            played += _play(env, mon, actor, job, send, episodes=None, learn=True, quiet=True)
        env.close()
        env = make(spec, job.game, phase="evaluation", **job.env_kwargs)
        policy = actor.evaluation_policy()
        mon = attach_log(env, job, relays.get("evaluation"), steps=None, policy=policy)
        if actor.observe is None:
            send(JobStarted(job.key, mon.complete_episodes, mon.total_steps, mon.total_frames))
        episodes = job.episodes or spec.evaluation.episodes
        played += _play(env, mon, actor, job, send, episodes=episodes, learn=False)
        return _summary(mon, played)
    finally:
        env.close()


def job_actor(loaded: LoadedAgent, job: Job, env: Any, spec: Spec) -> Actor:
    """The :class:`Actor` of ``job``'s agent on ``env``, checked against its spaces.

    Raises:
        IncompatibleAgent: the agent does not fit the environment.
    """
    agent = loaded.make(
        action_space=env.action_space,
        observation_space=env.observation_space,
        spec=spec,
        game=job.game,
        seed=job.seed,
    )
    check_compatible(
        agent,
        env.observation_space,
        env.action_space,
        label=loaded.ref.name,
        spec=spec,
        game=job.game,
        full_action_space=full_action_space(env),
    )
    return Actor(agent, job.game, job.seed)


def full_action_space(env: Any) -> bool | None:
    """The env's ALE action set (``None``: not an Atari env), as its log header records it."""
    from arcadebench.wrappers.monitor import find_monitor

    mon = find_monitor(env)
    value = mon.recorder.settings.get("full_action_space") if mon is not None else None
    return value if isinstance(value, bool) else None


def attach_log(
    env: Any,
    job: Job,
    relay: Relay | None,
    *,
    steps: int | None,
    policy: str | None = None,
    resume: bool | None = None,
) -> Any:
    """The env's monitor, logging the job's run (a step quota tightens the budget)."""
    from arcadebench.wrappers.monitor import find_monitor, monitor

    mon = find_monitor(env)
    if mon is None:  # pragma: no cover - every protocol env has one
        raise ArcadebenchError(f"the {job.game} environment has no episode monitor")
    mon.recorder.policy = policy
    mon.recorder.agent = dict(job.agent.record)
    mon.recorder.agent_versions = dict(job.agent.versions)
    if steps is not None:  # before the log opens, so that its header says it
        mon.set_budget(steps=steps)
    monitor(
        env,
        log_dir=job.log_dir,
        run=job.run,
        seed=job.seed,
        resume=job.resume if resume is None else resume,
        algorithm=job.algorithm,
        relay=relay,
    )
    return mon


def environment_raised(where: str, error: Exception) -> ArcadebenchError:
    """What an environment raised (an emulator's fault), as its failure, never the agent's."""
    return ArcadebenchError(f"the environment raised in {where}: {type(error).__name__}: {error}")


def _play(
    env: Any,
    mon: Any,
    actor: Any,
    job: Job,
    send: Send,
    *,
    episodes: int | None,
    learn: bool,
    quiet: bool = False,
) -> int:
    """Play episodes until ``episodes`` are complete or the budget is used; returns how many.

    Each new game is reset with the seeds of its episode index
    (:func:`~arcadebench.records.episode_seeds`); an episode that ended at a lost life (a training
    life-loss signal) continues the game with an unseeded reset. ``learn``: the agent observes every
    step; ``quiet``: progress reports steps only (a training phase whose episodes are not the job's
    quota).
    """
    act, observe = actor.act, actor.observe if learn else None
    space = env.action_space
    played = 0
    continues = False
    while not mon.exhausted and (episodes is None or mon.complete_episodes < episodes):
        episode = mon.episode
        env_seed, agent_seed = episode_seeds(job.seed, episode)
        if not quiet:
            send(EpisodeStarted(job.key, episode))
        step = 0

        def where(_: int) -> str:  # called at once, with this episode's and step's values
            return f"{job.game} run {mon.run!r} episode {episode} (step {step})"  # noqa: B023

        try:
            actor.begin_episode(agent_seed)
            mon.recorder.index = episode
            try:
                obs, info = env.reset() if continues else env.reset(seed=env_seed)
            except ArcadebenchError:
                raise
            except Exception as error:
                raise environment_raised(where(0), error) from error
            while True:
                action = checked_actions(act(obs), space, 0, where)
                try:
                    obs, reward, terminated, truncated, info = env.step(action)
                except ArcadebenchError:
                    raise
                except Exception as error:
                    raise environment_raised(where(0), error) from error
                if observe is not None:
                    observe(obs, reward, terminated, truncated, info)
                step += 1
                if terminated or truncated or mon.exhausted:
                    break
                if not step % HEARTBEAT_STEPS:
                    send(Steps(job.key, mon.total_steps, mon.total_frames))
        except ArcadebenchError:
            raise
        except Exception as error:
            raise AgentError(
                f"the agent raised in {where(0)}: {type(error).__name__}: {error}"
            ) from error
        played += 1
        continues = (mon.last_episode or {}).get("end_reason") == "life_lost"
        if quiet:
            send(Steps(job.key, mon.total_steps, mon.total_frames))
        else:
            send(EpisodeEnded(job.key, event_fields(mon)))
    return played


_EVENT_FIELDS = (
    "episode",
    "index",
    "return",
    "steps",
    "frames",
    "total_steps",
    "total_frames",
    "complete",
    "end_reason",
    "wall_time",
)


def _summary(mon: Any, played: int) -> dict[str, Any]:
    return job_summary(
        episodes=mon.complete_episodes,
        played=played,
        steps=mon.total_steps,
        frames=mon.total_frames,
        budget=mon.exhausted,
        log=str(mon.log),
    )


def _rss_kb() -> int | None:
    """Resident memory of this process in KiB (Linux), for the soak test."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return None
