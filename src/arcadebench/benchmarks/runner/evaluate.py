"""The runner: play an agent through a protocol, in parallel, resumably, and score the logs.

:func:`evaluate` (and ``arcadebench run``) turns a spec into jobs, one per (game or level, seed);
each job runs in a worker process of its own (:mod:`~arcadebench.benchmarks.runner.backends`,
:mod:`~arcadebench.benchmarks.runner.ray_backend`), its episodes logged to
``<log_dir>/<agent>/<spec>/<game>/<seed>.jsonl`` through the environment's monitor (a local
worker writes its log; a Ray task sends its records to this process, which writes them).
When the jobs are over, every log of the spec in ``log_dir`` — this agent's and any other
agent's run there before — is scored by the scorer (:func:`arcadebench.score`), one column per
agent, and the results written to ``<log_dir>/results.json``.

Reruns are normal (:mod:`~arcadebench.benchmarks.runner.plan`): jobs whose logs already meet the
quota are not played again, so running the same command twice plays once and prints the same
table twice.

Failure handling:

- A job whose worker dies (SIGKILL, an emulator crash), whose agent raises, or whose episode runs
  past ``episode_time_limit`` fails alone; the others finish, the results cover what was
  played, and :class:`JobsFailed` lists the failures (the CLI exits 1).
- Ctrl-C stops every worker within a few seconds; finished episodes are in the logs.
- A rerun whose agent is not the one that played the name's logs (a model retrained at the
  same path, an edited module) is refused before anything is played
  (:mod:`~arcadebench.benchmarks.runner.identity`); ``overwrite=True`` removes those logs first.
- ``resume=True`` continues the jobs whose logs fall short of the quota at the first missing
  episode (without it, such a job is refused: a learning agent would restart afresh). Episode
  ``i`` of a job is seeded from ``(seed, i)``
  (:func:`~arcadebench.records.episode_seeds`), so for agents that do not learn a
  resumed run logs exactly the episodes of an uninterrupted one, whatever the number of workers
  or the backend. (A learning agent restarts from a fresh agent when its job is resumed.)

Functions: evaluate.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from arcadebench.benchmarks.envs.resolve import resolve, warn_deviations
from arcadebench.benchmarks.envs.roms import require_roms
from arcadebench.benchmarks.runner.agents import Agent
from arcadebench.benchmarks.runner.backends import LocalBackend
from arcadebench.benchmarks.runner.compatibility import fit_agent
from arcadebench.benchmarks.runner.plan import (
    agent_log_dir,
    plan_jobs,
    plays_in_lanes,
    remove_logs,
)
from arcadebench.benchmarks.runner.pool import Backend, PoolSettings
from arcadebench.benchmarks.runner.progress import ProgressMode, RunProgress
from arcadebench.benchmarks.runner.ray_backend import RayBackend
from arcadebench.benchmarks.runner.reference import resolve_agent
from arcadebench.benchmarks.runner.schedule import Events, JobOutcome
from arcadebench.benchmarks.runner.serve import WorkerOptions
from arcadebench.benchmarks.scoring.results import Results, score
from arcadebench.errors import ArcadebenchError, JobsFailed, NoScores
from arcadebench.records import spec_logs
from arcadebench.specs import Spec, load_spec, spec_reference
from arcadebench.specs.model import Split
from arcadebench.wrappers.monitor import log_path

__all__ = ["DEFAULT_ENVS", "GPU_ENVS", "RESULTS_FILE", "evaluate"]

RESULTS_FILE = "results.json"
DEFAULT_ENVS = 8
"""Environments per worker for a batched agent; a CNN's batch of 8 costs 0.43 ms an observation
on one CPU thread, against 1.2 ms alone (SB3 PPO CnnPolicy, perf/bench_evaluation.py)."""
GPU_ENVS = 32
"""... and on a GPU, where a batch costs about what one observation does, the emulators are the
bottleneck: a bigger batch keeps the device busy while they step."""
_RESERVED_KWARGS = ("log_dir", "run", "resume", "spec", "game")


def _positive_int(name: str, value: object) -> None:
    if value is not None and (type(value) is not int or value <= 0):
        raise ArcadebenchError(f"`{name}` must be a positive integer, got {value!r}")


def evaluate(
    agent: Agent,
    spec: str | os.PathLike[str] | Spec,
    games: Sequence[str] | str | None = None,
    *,
    episodes: int | None = None,
    steps: int | None = None,
    seeds: Sequence[int] | int = (0,),
    workers: int | None = None,
    log_dir: str | os.PathLike[str] = "results",
    backend: Literal["local", "ray"] = "local",
    address: str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    name: str | None = None,
    episode_time_limit: float | None = None,
    split: Split | None = None,
    env_kwargs: dict[str, Any] | None = None,
    num_envs: int | None = None,
    device: str = "cpu",
    map_actions: bool = False,
    progress: ProgressMode = "auto",
    reps: int = 2000,
    command: str | None = None,
    on_event: Events | None = None,
) -> Results:
    """Play ``agent`` through ``spec``'s games in parallel worker processes, and score it.

    Each worker process lives for the whole run and loads the agent once. A batched agent that
    does not learn (a saved model, ``act_batch``, the built-in ``random`` and ``noop``) plays
    the episodes of every job in ``num_envs`` environments per worker, one agent call per step
    for all of them; any other agent plays each (game, seed) job one episode at a time. Either
    way episode ``i`` of a job is seeded from ``(seed, i)``, so the episodes are the same
    whatever ``num_envs``, ``workers`` or the backend.

    Args:
        agent: ``"random"``, ``"noop"``, a saved model (``"sb3:PPO:model.zip"``,
            ``"torchscript:policy.pt"``, ``"onnx:policy.onnx"``), ``"module:attr"``, a factory,
            a learning agent (``act``/``observe``), a batched agent (``act_batch``), an object
            with ``predict`` or a callable ``obs -> action``
            (see :mod:`~arcadebench.benchmarks.runner.agents`).
        spec: a built-in spec name, a spec YAML file or a loaded spec from either.
        games: games or levels (any spelling); default: the spec's ``default_games``.
        episodes: complete episodes per job; for a protocol scored after training (Atari 100k,
            DQN 2015), its evaluation episodes (default: the protocol's number).
        steps: agent steps per job instead (default when neither is given: the spec's step
            budget, e.g. Sonic's 1M). The protocol's budget always applies. For a protocol
            scored after training, the training steps of a learning agent (default: the
            budget); a policy that does not learn is evaluated directly.
        seeds: one job per game and seed; the seed is the run id.
        workers: worker processes (default: one per CPU core).
        log_dir: the output directory: logs (``<log_dir>/<agent>/<spec>/<game>/<seed>.jsonl``)
            and ``results.json``, which scores every agent run there under ``spec``.
        backend: ``"local"`` processes or ``"ray"`` tasks.
        address: an existing Ray cluster's address (default: start a local Ray instance).
        resume: continue logs that hold fewer episodes (or steps) than asked; complete jobs
            are never played again, with or without it.
        overwrite: first remove every log of this run's name under ``spec`` in ``log_dir``
            (and ``results.json``): to play a retrained model under the same name again.
        name: the label of the run in the logs, tables, figures and LaTeX headers (default:
            the agent's name, e.g. ``random`` or a saved model's file stem).
        episode_time_limit: seconds one episode may take before its job is stopped as hung.
        split: a game selection instead of ``games``: ``train``/``test`` (Sonic), ``all``, a subset.
        env_kwargs: extra ``make`` arguments for every job (a changed protocol setting is
            recorded as a deviation and warned about).
        num_envs: environments per worker in which a batched agent plays at once (its batch);
            default 8 (32 on a CUDA ``device``), or 1 for the built-in ``random`` and ``noop``,
            which gain nothing from batches, so their episodes go to whichever worker is free
            (the best balance).
        device: where a saved model runs (``"cpu"``, ``"cuda"``, ``"cuda:1"``...).
        map_actions: play a model trained on another action set (the full 18 actions, or the
            game's minimal set) on that set, so each action keeps its ALE meaning; the changed
            ``full_action_space`` is recorded as a deviation. Without it such a model is
            refused before anything is played.
        progress: ``"auto"``, ``"bars"``, ``"lines"`` or ``"off"``.
        reps: bootstrap repetitions of the scorer.
        command: the command line for the provenance (default: ``sys.argv``).
        on_event: also called with every progress message (:mod:`~.messages`:
            :class:`~.messages.EpisodeEnded` with the episode's record, :class:`~.messages.JobDone`,
            :class:`~.messages.JobFailed` with its :class:`~.messages.Failure`...), e.g. to watch a
            long run. With the Ray backend, they arrive in batches (every quarter second).

    Returns:
        The scored :class:`~arcadebench.benchmarks.scoring.results.Results` of every agent in
        ``log_dir``, also written to ``<log_dir>/results.json``.

    Raises:
        ArcadebenchError: bad arguments (before anything runs); logs under the run's name that
            another agent played (another model at the same path, an edited module).
        IncompatibleAgent: the agent does not fit the environments (observation shape, action
            set, a saved model of another class): before anything is played.
        JobsFailed: some jobs failed (after the others finished and were scored).
        KeyboardInterrupt: interrupted; workers are stopped, finished episodes kept.
    """
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    env_kwargs = dict(env_kwargs or {})
    if spec.platform == "none":
        raise ArcadebenchError(
            f"the {spec.name!r} spec defines scores only, no environments to run"
        )
    if games is not None and split is not None:
        raise ArcadebenchError(
            f"`games` and `split` are alternatives, got both ({games!r}, {split!r})"
        )
    if isinstance(games, str):
        games = [games]
    if games is None:
        games = list(spec.games_of(split) if split is not None else spec.default_games)
    else:
        if not games or not all(isinstance(g, str) for g in games):
            raise ArcadebenchError(f"`games` must be a non-empty list of game names, got {games!r}")
        games = list(dict.fromkeys(spec.resolve_game(g) for g in games))
    _positive_int("episodes", episodes)
    _positive_int("steps", steps)
    _positive_int("num_envs", num_envs)
    if not isinstance(device, str) or not device:
        raise ArcadebenchError(
            f"`device` must be a device name such as 'cpu' or 'cuda', got {device!r}"
        )
    if spec.evaluation.scored == "after_training":  # steps of training, then evaluation episodes
        episodes = episodes or spec.evaluation.episodes
        steps = steps or spec.evaluation.budget_steps
    elif episodes is not None and steps is not None:
        raise ArcadebenchError(
            f"`episodes` and `steps` are alternatives, got both ({episodes!r}, {steps!r})"
        )
    if episodes is None and steps is None:
        if spec.evaluation.budget_steps is None:
            raise ArcadebenchError(
                f"`episodes` or `steps` must be given for the {spec.name!r} spec "
                "(it fixes no step budget), got neither; e.g. episodes=3"
            )
        steps = spec.evaluation.budget_steps
    if (
        steps is not None
        and spec.evaluation.budget_steps is not None
        and steps > spec.evaluation.budget_steps
    ):
        raise ArcadebenchError(
            f"`steps` must be at most the {spec.name!r} budget of "
            f"{spec.evaluation.budget_steps:,} steps, got {steps:,}"
        )
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = [seeds]
    if (
        not isinstance(seeds, Sequence)
        or not seeds
        or not all(type(s) is int and s >= 0 for s in seeds)
        or len(set(seeds)) != len(seeds)
    ):
        raise ArcadebenchError(f"`seeds` must be distinct non-negative integers, got {seeds!r}")
    _positive_int("workers", workers)
    if backend not in ("local", "ray"):
        raise ArcadebenchError(f"`backend` must be 'local' or 'ray', got {backend!r}")
    if address is not None and backend != "ray":
        raise ArcadebenchError(f"`address` must only be given with backend='ray', got {address!r}")
    if episode_time_limit is not None and (
        isinstance(episode_time_limit, bool)
        or not isinstance(episode_time_limit, int | float)
        or not episode_time_limit > 0
    ):
        raise ArcadebenchError(
            f"`episode_time_limit` must be a positive number of seconds, got {episode_time_limit!r}"
        )
    reserved = sorted(set(env_kwargs) & set(_RESERVED_KWARGS))
    if reserved:
        raise ArcadebenchError(
            f"`env_kwargs` must not set {', '.join(reserved)} (the runner does), got {env_kwargs!r}"
        )
    seeds = list(seeds)
    if spec.platform == "retro":  # a missing ROM: one line with the import command, before any job
        require_roms(spec, games)
    if progress not in ("auto", "bars", "lines", "off"):
        raise ArcadebenchError(
            f"`progress` must be 'auto', 'bars', 'lines' or 'off', got {progress!r}"
        )
    if name is not None and (
        not isinstance(name, str) or not name.strip() or not name.isprintable() or len(name) > 80
    ):
        raise ArcadebenchError(
            "`name` must be a label of at most 80 printable characters for the tables and "
            f"figures (e.g. 'PPO (ours)'), got {name!r}"
        )
    if overwrite and resume:
        raise ArcadebenchError(
            "`overwrite` and `resume` are alternatives (overwrite removes what resume would "
            "continue), got both"
        )
    ref = resolve_agent(agent, spec, device)
    algorithm = name.strip() if name is not None else ref.name
    env_kwargs = {**ref.env_kwargs, **env_kwargs}
    env_kwargs = fit_agent(ref, spec, games[0], env_kwargs, map_actions=map_actions)
    resolved = resolve(spec, env_kwargs)
    warn_deviations(resolved, f"this {spec.name} run")
    runs_on: Backend = LocalBackend()
    if backend == "ray":
        runs_on = RayBackend(address)
        runs_on.check()  # fail before anything runs when Ray is missing or unreachable
    out = Path(log_dir)
    agent_dir = agent_log_dir(out, spec, algorithm)
    if overwrite:
        remove_logs(agent_dir, spec, algorithm)
        (out / RESULTS_FILE).unlink(missing_ok=True)
    plan = plan_jobs(
        spec,
        games,
        seeds,
        log_dir=agent_dir,
        spec_ref=spec_reference(spec),
        algorithm=algorithm,
        episodes=episodes,
        steps=steps,
        resume=resume,
        env_kwargs=env_kwargs,
        deviations=resolved.deviations,
        learns=ref.learns,
        lanes=plays_in_lanes(ref, spec, episodes, steps),
        agent=ref.identity,
    )
    to_run = plan.to_run
    if any(job.resume for job in to_run) and ref.learns:
        warnings.warn(
            f"resumed jobs start {algorithm} afresh (what it learnt before the interruption is not "
            "restored), so their remaining episodes differ from an uninterrupted run's",
            RuntimeWarning,
            stacklevel=2,
        )
    out.mkdir(parents=True, exist_ok=True)
    workers = workers if workers is not None else os.cpu_count() or 1
    options = WorkerOptions(device=device, threads=max(1, (os.cpu_count() or 1) // workers))
    if spec.platform == "retro":  # stable-retro runs one emulator per process
        if num_envs not in (None, 1):
            raise ArcadebenchError(
                f"`num_envs` must be 1 for the {spec.name!r} spec (stable-retro runs one "
                f"emulator per process; its workers play in parallel), got {num_envs!r}"
            )
        num_envs = 1
    if num_envs is None:
        builtin = ref.kind == "builtin"
        num_envs = 1 if builtin else GPU_ENVS if device.startswith("cuda") else DEFAULT_ENVS
    # one of the two quotas is set (checked above)
    quota, unit = (episodes, "episodes") if episodes is not None else (steps or 0, "steps")
    outcomes: list[JobOutcome] = []
    if to_run:
        # local workers may fork from this process, which must then run one thread only: the
        # bars are redrawn by the backend's ticks, not by a thread of their own
        local = backend == "local"
        with RunProgress(
            to_run,
            quota,
            unit,
            spec=spec,
            settings=resolved.settings,
            mode=progress,
            auto_refresh=not local,
        ) as display:
            events = display if on_event is None else _both(display, on_event)
            settings = PoolSettings(workers, num_envs, options, episode_time_limit)
            tick = display.tick if local else None
            outcomes = runs_on.run(to_run, ref, settings, events, tick)
    failures = [(o.job.key, o.failure) for o in outcomes if o.failure is not None]
    for outcome in outcomes:
        _keep_output(outcome)
    results = _score(
        spec,
        spec_logs(out, spec.name),
        reps=reps,
        command=command,
        provenance={
            "agent": algorithm,
            "agent_identity": {**ref.identity.record, "versions": dict(ref.identity.versions)},
            "seeds": seeds,
            "games": games,
            "backend": backend,
            **({"episodes": episodes} if episodes is not None else {"steps": steps}),
            **({"env_kwargs": {k: repr(v) for k, v in env_kwargs.items()}} if env_kwargs else {}),
            "jobs": {"played": len(to_run), "already_complete": len(plan.complete)},
            **({"failures": [f"{key}: {reason}" for key, reason in failures]} if failures else {}),
        },
    )
    if results is not None:
        results.to_json(out / RESULTS_FILE)
    if failures:
        raise JobsFailed(results, failures)
    if results is None:
        raise ArcadebenchError(
            f"no complete episode was played, so there is nothing to score in {out}"
        )
    return results


def _keep_output(outcome: JobOutcome) -> None:
    """A failed job's worker output (its traceback, a crash's trace) in ``<log>.stderr.txt``."""
    job = outcome.job
    path = log_path(job.log_dir, load_spec(job.spec).name, job.game, job.run)
    path = path.with_suffix(".stderr.txt")
    if outcome.status == "done" or not outcome.trace:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(outcome.trace)


def _both(first: Events, second: Events) -> Events:
    def call(event: Any) -> None:
        first(event)
        second(event)

    return call


def _score(
    spec: Spec, logs: list[Path], *, reps: int, command: str | None, provenance: dict[str, Any]
) -> Results | None:
    """Score every log of ``spec`` in the output directory; ``None`` when none has an episode."""
    if not logs:
        return None
    command = command if command is not None else shlex.join(sys.argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deviations were warned about before the run
            results = score(spec, [str(p) for p in logs], reps=reps, command=command)
    except NoScores:
        return None
    return dataclasses.replace(results, provenance={**results.provenance, **provenance})
