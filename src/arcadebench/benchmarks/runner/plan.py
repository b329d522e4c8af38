"""Which jobs a run still has to play, in an output directory that may hold earlier runs.

An output directory is one experiment: any number of agents, each in a folder of its own,

    <out>/<agent>/<spec>/<game>/<seed>.jsonl      (the monitor's layout under <out>/<agent>)

so that ``run --agent noop`` after ``run --agent random`` adds a column to the same table, and
the scorer's default algorithm name (a log directory's name) is the agent's. Rerunning is
normal, as ``make`` with nothing to do: a job whose log already meets its quota is not played
again, and a run whose jobs are all complete only prints its table. A job whose log holds fewer
episodes than asked is continued only when the caller says so (``resume``), because a learning
agent restarts afresh; and a log played with other settings is never continued.

A run's name (the agent's, or the one the caller gives) is one column of results, so every
log under it must have been played by the same agent: a log of another model, even one saved at
the same path, is refused before anything is played (:mod:`~.identity`), unless the caller
overwrites the name's logs (:func:`remove_logs`).

Logs of earlier versions, written straight under ``<out>/<spec>/``, are still found: an agent
that wrote them keeps writing there.

Classes: Plan.
Functions: agent_log_dir, plan_jobs, plays_in_lanes, remove_logs.
"""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcadebench._table import count
from arcadebench.benchmarks.runner.identity import AgentIdentity, check_logged_agents, named_logs
from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.reference import AgentRef
from arcadebench.errors import ArcadebenchError
from arcadebench.records import (
    RunLog,
    counters_path,
    log_path,
    package_versions,
    parse_log,
    phase_run,
    replay_path,
)
from arcadebench.specs import Spec
from arcadebench.specs.model import AtariSettings

__all__ = ["Plan", "agent_log_dir", "plan_jobs", "plays_in_lanes", "remove_logs"]


@dataclass(frozen=True)
class Plan:
    """The jobs of a run: those to play, and those whose logs already meet their quota."""

    to_run: list[Job] = field(default_factory=list)
    complete: list[Job] = field(default_factory=list)


def _folder_name(algorithm: str) -> str:
    """An agent's folder: its name with anything but letters, digits, ``.``, ``_``, ``-`` as ``_``.

    Example:
        >>> _folder_name("my_agents:MyAgent"), _folder_name("random")
        ('my_agents_MyAgent', 'random')
    """
    return re.sub(r"[^A-Za-z0-9._-]+", "_", algorithm).strip("._-") or "agent"


def _log_state(spec: Spec, path: Path) -> RunLog | None:
    """The run already logged at ``path`` (the scorer's reader), or ``None``."""
    if not path.exists():
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runs = parse_log(spec, path)
    return runs[0] if runs else None


def agent_log_dir(out: Path, spec: Spec, algorithm: str) -> Path:
    """Where ``algorithm``'s logs of ``spec`` go in the output directory ``out``.

    ``<out>/<agent>``; or ``<out>`` itself when the agent's logs are already there, in the layout
    of earlier versions (``<out>/<spec>/<game>/<seed>.jsonl``), so a rerun continues them.
    """
    for path in sorted(out.glob(f"{spec.name}/*/*.jsonl")):
        state = _log_state(spec, path)
        if state is not None and state.algorithm == algorithm:
            return out
    return out / _folder_name(algorithm)


def remove_logs(log_dir: Path, spec: Spec, algorithm: str) -> int:
    """Remove every log of ``spec`` scored under ``algorithm`` and the files beside each.

    What a run of the name recorded goes: the log, its replay file, its counters and a failed
    job's worker output. Returns how many logs were removed.

    Raises:
        InputError: a log whose first line cannot be read (its owner is unknown: not removed).
    """
    logs = [path for path, _ in named_logs(log_dir, spec.name, algorithm)]
    for log in logs:
        for path in (log, replay_path(log), counters_path(log), log.with_suffix(".stderr.txt")):
            path.unlink(missing_ok=True)
    return len(logs)


def _finished(state: RunLog, spec: Spec, episodes: int | None, steps: int | None) -> bool:
    if spec.evaluation.scored == "after_training":
        return state.phase == "evaluation" and int(state.complete.sum()) >= (episodes or 0)
    total_steps, total_frames = int(state.total_steps[-1]), int(state.total_frames[-1])
    budget = spec.evaluation
    if (budget.budget_steps is not None and total_steps >= budget.budget_steps) or (
        budget.budget_frames is not None and total_frames >= budget.budget_frames
    ):
        return True
    if episodes is not None:
        return int(state.complete.sum()) >= episodes
    return total_steps >= (steps or 0)


def _progress(state: RunLog, episodes: int | None, steps: int | None) -> str:
    if episodes is not None:
        return f"{int(state.complete.sum())} of {episodes} episodes"
    return f"{int(state.total_steps[-1]):,} of {steps or 0:,} steps"


def _settings(deviations: Mapping[str, Any]) -> str:
    """``"the spec's"``, or the changed settings as ``key=value``."""
    if not deviations:
        return "the spec's"
    return ", ".join(
        f"{key}={change.get('used') if isinstance(change, Mapping) else change!r}"
        for key, change in deviations.items()
    )


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


def plays_in_lanes(agent: AgentRef, spec: Spec, episodes: int | None, steps: int | None) -> bool:
    """Whether a run's episodes are spread over lanes (:mod:`~.lanes`) rather than played whole.

    Only episodes that do not depend on each other can be: a batched agent that does not learn,
    a quota of episodes (a step quota ends wherever the steps run out, one episode after the
    other), and an environment in which every episode starts a new game (a training life-loss
    signal continues the game in the next episode).

    Example:
        >>> from arcadebench.benchmarks.runner.reference import resolve_agent
        >>> from arcadebench.specs import load_spec
        >>> saber = load_spec("saber")
        >>> plays_in_lanes(resolve_agent("random", saber), saber, 2, None)
        True
        >>> plays_in_lanes(resolve_agent("random", saber), saber, None, 2000)
        False
    """
    settings = spec.environment
    continued = (
        isinstance(settings, AtariSettings)
        and settings.life_loss_terminal_in_training
        and spec.evaluation.scored != "after_training"
    )
    return agent.batched and not agent.learns and episodes is not None and not continued


def _with_todo(job: Job, state: RunLog | None, episodes: int) -> Job:
    """``job`` with the episode indices it still has to play and what its log holds."""
    if state is None:
        return dataclasses.replace(job, todo=tuple(range(episodes)))
    played = set(state.indices[state.complete].tolist())
    return dataclasses.replace(
        job,
        todo=tuple(i for i in range(episodes) if i not in played),
        before=(
            int(state.complete.sum()),
            int(state.total_steps[-1]),
            int(state.total_frames[-1]),
        ),
    )


def plan_jobs(
    spec: Spec,
    games: Sequence[str],
    seeds: Sequence[int],
    *,
    log_dir: Path,
    spec_ref: str,
    algorithm: str,
    episodes: int | None,
    steps: int | None,
    resume: bool,
    env_kwargs: dict[str, Any],
    deviations: Mapping[str, Any],
    learns: bool = False,
    lanes: bool = False,
    agent: AgentIdentity | None = None,
) -> Plan:
    """Split the (game, seed) jobs into those to play and those already complete.

    Args:
        spec: the protocol.
        games: canonical games or levels.
        seeds: one job per game and seed.
        log_dir: the agent's log directory (:func:`agent_log_dir`).
        spec_ref: what a worker passes to ``load_spec``.
        algorithm: the agent's name (log headers, results).
        episodes: complete episodes per job (or ``None``).
        steps: agent steps per job (or ``None``).
        resume: continue logs that hold less than the quota.
        env_kwargs: extra ``make`` arguments of every job.
        deviations: the settings this run changes from the spec (the resolve step's).
        learns: the agent learns (a protocol scored after training trains it first).
        lanes: the jobs' episodes are spread over lanes: each job says which indices it still
            has to play (``todo``: those of ``range(episodes)`` not complete in its log).
        agent: what plays (default: an unknown agent, which no log is checked against); every
            log of ``algorithm`` must have been played by it.

    A protocol scored on evaluation episodes after training (Atari 100k, DQN 2015) has a job's
    episodes in its evaluation log (``<seed>.eval.jsonl``): the job is complete when that log
    holds ``episodes`` complete ones. A learning agent's unfinished job cannot be continued:
    what the agent learnt is gone with its process, and its evaluation must be of that agent.

    Raises:
        ArcadebenchError: a log holds fewer episodes than asked and ``resume`` is off; a log was
            written by another agent (another name, or another model under this name), or
            played with other settings.
        InputError: a log is corrupt or belongs to another spec.
    """
    if agent is not None:
        versions = {**package_versions(), **agent.versions}
        check_logged_agents(named_logs(log_dir, spec.name, algorithm), agent, versions, algorithm)
    plan = Plan()
    unfinished: list[tuple[Path, str]] = []
    after_training = spec.evaluation.scored == "after_training"
    for game in games:
        for seed in seeds:
            path = log_path(log_dir, spec.name, game, str(seed))
            state = _log_state(spec, path)
            if after_training:  # the evaluation's log says how far the job got
                evaluated = log_path(log_dir, spec.name, game, phase_run(str(seed), "evaluation"))
                if state is not None or evaluated.exists():
                    path, state = evaluated, _log_state(spec, evaluated) or state
            job = Job(
                spec=spec_ref,
                game=game,
                seed=seed,
                log_dir=str(log_dir),
                algorithm=algorithm,
                episodes=episodes,
                steps=steps,
                resume=state is not None,
                env_kwargs=env_kwargs,
                phase="evaluation" if after_training and not learns else "training",
                agent=agent or AgentIdentity(),
            )
            if lanes:
                job = _with_todo(job, state, episodes or 0)
            if state is None:
                plan.to_run.append(job)
                continue
            if state.algorithm != algorithm:
                raise ArcadebenchError(
                    f"{path} was written by agent {state.algorithm!r}, not {algorithm!r}; "
                    "use another `log_dir` for this agent"
                )
            if not _same(state.deviations, deviations):
                raise ArcadebenchError(
                    f"{path} was played with other settings ({_settings(state.deviations)}) "
                    f"than this run ({_settings(deviations)}); the two cannot be continued or "
                    "pooled: use another `log_dir`"
                )
            if _finished(state, spec, episodes, steps):
                plan.complete.append(job)
            elif resume and after_training and learns:
                raise ArcadebenchError(
                    f"{path} holds an unfinished job of {algorithm}, a learning agent: its "
                    "evaluation must be of the agent its training made, which is gone; play it "
                    "again in another `log_dir`"
                )
            elif resume:
                plan.to_run.append(job)
            else:
                unfinished.append((path, _progress(state, episodes, steps)))
    if unfinished:
        path, progress = unfinished[0]
        more = f"; and {len(unfinished) - 1} more" if len(unfinished) > 1 else ""
        raise ArcadebenchError(
            f"{count(len(unfinished), 'run')} of {algorithm} hold less than asked "
            f"({path}: {progress}{more}); continue them with resume=True, or choose another "
            "`log_dir`"
        )
    return plan
