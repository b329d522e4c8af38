"""One job of the runner: an agent plays one game/level under one seed, in its own process.

A job is ``(game, seed)``: it makes the protocol environment, attaches the monitor's log
(``<log_dir>/<spec>/<game>/<seed>.jsonl``), and plays until its quota (``episodes`` complete
episodes, or ``steps`` agent steps) or the protocol's budget is reached. It reports progress as
small tuples through ``send`` (a pipe to the parent, or the Ray driver's mailbox); the log,
written and fsynced by the monitor, is the record. A local worker writes the log itself; a Ray
task, which may run on a machine that cannot see it, plays through a
:class:`~arcadebench.records.Relay` and the driver writes it
(:mod:`~arcadebench.benchmarks.runner.ray_backend`).

Determinism: episode ``i`` of a job is reset with a seed, and the agent seeded with another,
both derived from ``(job seed, i)`` by :func:`episode_seeds`. Episodes therefore do not depend
on the ones before them (for agents that do not learn), so a resumed job, which continues at
the first episode missing from its log, plays exactly the episodes an uninterrupted job would,
whatever the number of workers or the backend.

Classes: Job.
Functions: episode_seeds, run_job, worker_main.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arcadebench.errors import AgentError, ArcadebenchError
from arcadebench.records import Relay

__all__ = ["HEARTBEAT_STEPS", "Job", "episode_seeds", "run_job", "worker_main"]

HEARTBEAT_STEPS = 512  # progress message every this many steps (frames/s in the display)


@dataclass(frozen=True)
class Job:
    """What one worker plays.

    Attributes:
        spec: a built-in spec name or a spec YAML path (loaded in the worker).
        game: the canonical game or level.
        seed: the job seed (also the run id).
        log_dir: the root of the episode logs.
        agent: what :func:`~arcadebench.benchmarks.runner.agents.check_agent` returned.
        algorithm: the agent's name, for the log header and the results.
        episodes: complete episodes to play (or ``None``).
        steps: agent steps to play (or ``None``).
        resume: continue the job's existing log.
        env_kwargs: extra ``make`` arguments (e.g. what the agent needs).
    """

    spec: str
    game: str
    seed: int
    log_dir: str
    agent: Any
    algorithm: str
    episodes: int | None = None
    steps: int | None = None
    resume: bool = False
    env_kwargs: dict[str, Any] = field(default_factory=dict)

    @property
    def run(self) -> str:
        """The run id: the seed."""
        return str(self.seed)

    @property
    def key(self) -> str:
        """``game/run``: the job's name in progress and failure reports."""
        return f"{self.game}/{self.run}"


def episode_seeds(job_seed: int, episode: int) -> tuple[int, int]:
    """The (environment reset seed, agent seed) of episode ``episode`` of a job.

    Example:
        >>> episode_seeds(0, 0) == episode_seeds(0, 0) != episode_seeds(0, 1)
        True
    """
    state = np.random.SeedSequence(entropy=job_seed, spawn_key=(episode,)).generate_state(2)
    return int(state[0]), int(state[1])


def run_job(
    job: Job, send: Callable[[tuple[Any, ...]], None], relay: Relay | None = None
) -> dict[str, Any]:
    """Play ``job`` to its quota; returns a summary (also sent as the ``"done"`` event).

    A protocol scored on its training episodes (SABER, HWR, Atari-5, Machado et al. 2018,
    Sonic) plays ``episodes`` or ``steps`` of training. One scored on evaluation episodes after
    training (Atari 100k, DQN 2015) trains a learning agent for ``steps`` (the protocol's budget
    by default) in the training environment, then plays ``episodes`` evaluation episodes (the
    protocol's number by default) in the evaluation environment with the agent's evaluation
    policy; a policy that does not learn is evaluated directly.

    With ``relay`` the log is the caller's (a Ray driver's): the episodes are sent there, and
    the job starts where the driver's log says.

    Raises:
        AgentError: the agent raised (names game, run and episode; earlier episodes are logged).
        ArcadebenchError: bad input (the log is in use, belongs to another run...).
    """
    from arcadebench.benchmarks.envs.factory import make
    from arcadebench.benchmarks.runner.agents import make_actor
    from arcadebench.specs import load_spec

    spec = load_spec(job.spec)
    env = make(spec, job.game, **job.env_kwargs)
    try:
        actor = make_actor(job.agent, env, spec, job.game, job.seed)
        if spec.evaluation.scored == "training":
            mon = _attach(env, job, relay, steps=job.steps)
            send(("start", job.key, mon.complete_episodes, mon.total_steps, mon.total_frames))
            played = _play(env, mon, actor, job, send, episodes=job.episodes, learn=True)
            return _summary(mon, played)
        played = 0
        if actor.observe is not None:  # a learner trains first, for the budget
            mon = _attach(env, job, relay, steps=job.steps)
            send(("start", job.key, 0, mon.total_steps, mon.total_frames))
            # its episodes are not the job's: the progress counts the evaluation's
            played += _play(env, mon, actor, job, send, episodes=None, learn=True, quiet=True)
        env.close()
        env = make(spec, job.game, phase="evaluation", **job.env_kwargs)
        policy = actor.evaluation_policy()
        mon = _attach(env, job, relay, steps=None, policy=policy)
        if actor.observe is None:
            send(("start", job.key, mon.complete_episodes, mon.total_steps, mon.total_frames))
        episodes = job.episodes or spec.evaluation.episodes
        played += _play(env, mon, actor, job, send, episodes=episodes, learn=False)
        return _summary(mon, played)
    finally:
        env.close()


def _attach(
    env: Any, job: Job, relay: Relay | None, *, steps: int | None, policy: str | None = None
) -> Any:
    """The env's monitor, logging the job's run (a step quota tightens the budget)."""
    from arcadebench.wrappers.monitor import find_monitor, monitor

    mon = find_monitor(env)
    if mon is None:  # pragma: no cover - every protocol env has one
        raise ArcadebenchError(f"the {job.game} environment has no episode monitor")
    mon.recorder.policy = policy
    if steps is not None:  # before the log opens, so that its header says it
        mon.set_budget(steps=steps)
    monitor(
        env,
        log_dir=job.log_dir,
        run=job.run,
        seed=job.seed,
        resume=job.resume,
        algorithm=job.algorithm,
        relay=relay,
    )
    return mon


def _play(
    env: Any,
    mon: Any,
    actor: Any,
    job: Job,
    send: Callable[[tuple[Any, ...]], None],
    *,
    episodes: int | None,
    learn: bool,
    quiet: bool = False,
) -> int:
    """Play episodes until ``episodes`` are complete or the budget is used; returns how many.

    Each new game is reset with the seeds of its episode index (:func:`episode_seeds`); an
    episode that ended at a lost life (a training life-loss signal) continues the game with an
    unseeded reset. ``learn``: the agent observes every step; ``quiet``: progress reports steps
    only (a training phase whose episodes are not the job's quota).
    """
    act, observe = actor.act, actor.observe if learn else None
    played = 0
    continues = False
    while not mon.exhausted and (episodes is None or mon.complete_episodes < episodes):
        episode = mon.episode
        env_seed, agent_seed = episode_seeds(job.seed, episode)
        if not quiet:
            send(("episode_start", job.key, episode))
        step = 0
        try:
            actor.begin_episode(agent_seed)
            obs, info = env.reset() if continues else env.reset(seed=env_seed)
            while True:
                action = act(obs)
                obs, reward, terminated, truncated, info = env.step(action)
                if observe is not None:
                    observe(obs, reward, terminated, truncated, info)
                step += 1
                if terminated or truncated or mon.exhausted:
                    break
                if not step % HEARTBEAT_STEPS:
                    send(("steps", job.key, mon.total_steps, mon.total_frames))
        except ArcadebenchError:
            raise
        except Exception as error:
            raise AgentError(
                f"the agent raised in {job.game} run {mon.run!r} episode {episode} "
                f"(step {step}): "
                f"{type(error).__name__}: {error}"
            ) from error
        played += 1
        record: dict[str, Any] = dict(mon.last_episode or {})
        continues = record.get("end_reason") == "life_lost"
        if quiet:
            send(("steps", job.key, mon.total_steps, mon.total_frames))
        else:
            event = {k: record.get(k) for k in _EVENT_FIELDS} | {"rss_kb": _rss_kb()}
            send(("episode", job.key, event))
    return played


_EVENT_FIELDS = (
    "episode",
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
    return {
        "episodes": mon.complete_episodes,
        "played": played,
        "total_steps": mon.total_steps,
        "total_frames": mon.total_frames,
        "budget": mon.exhausted,
        "log": str(mon.log),
    }


def _rss_kb() -> int | None:
    """Resident memory of this process in KiB (Linux), for the soak test."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
    except (OSError, ValueError, IndexError):
        return None


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def worker_main(job: Job, conn: Any, stderr_path: str | None = None) -> None:
    """Entry point of a local worker process: play ``job``, report through ``conn``.

    SIGINT is ignored (the parent decides when to stop); SIGTERM exits through ``finally``, so
    the environment and its log are closed. Output goes to ``stderr_path`` so emulator banners
    do not break the parent's progress display.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    if stderr_path is not None:
        os.makedirs(os.path.dirname(stderr_path) or ".", exist_ok=True)
        fd = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
    faulthandler.enable()  # an emulator crash leaves its trace in stderr_path

    def send(message: tuple[Any, ...]) -> None:
        try:
            conn.send(message)
        except OSError:  # the parent is gone: stop (the log is closed on the way out)
            raise SystemExit(1) from None

    try:
        summary = run_job(job, send)
        send(("done", job.key, summary))
    except Exception as error:
        traceback.print_exc()
        send(
            (
                "error",
                job.key,
                str(error)
                if isinstance(error, ArcadebenchError)
                else f"{type(error).__name__}: {error}",
            )
        )
        sys.exit(1)
    finally:
        try:
            conn.close()
        except OSError:
            pass
