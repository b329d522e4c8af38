"""``arcadebench verify``: re-simulate a run's episodes and check them against their log.

Human world records are accepted only with a replay as evidence; this is the same for agents.
Every logged episode that has a recording (:mod:`arcadebench.records.replay_format`) is played again
in the spec's emulator with the settings its log's header names (:mod:`~.simulate`), and its
return, length, frames and end reason are checked against its log line. What is checked:

- the header against the spec: written for this spec's content hash, and its settings giving
  the deviations it declares (a header claiming none while its settings differ is caught);
- each episode line against the header: the same spec and hash, the same deviations (an episode
  of another spec or setting spliced into the log is caught, by line);
- each recording against the emulator, step by step: the first step where the emulator's reward
  differs from the recording's, where the episode ends before the recording does, or where the
  recording ends before the episode does, is named;
- each log line against the replay: a return, a length or a frame count edited afterwards.

An episode is *verified*, *diverged* (with the step and what departed) or *unverifiable* (no
recording, a damaged one, a start nothing can re-create). Episodes are replayed independently
where they start from a seed or a snapshot, so they are spread over every core; an episode that
continues the one before it (the game after a lost life, a batched emulator's next episode) is
replayed after it, in the same process.

Classes: EpisodeCheck, RunCheck, Verification.
Functions: verify.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from arcadebench._table import count, render_table
from arcadebench.benchmarks.replay.logs import LoggedEpisode, RecordedRun, find_logs, read_run
from arcadebench.errors import ArcadebenchError, InvalidArgument
from arcadebench.specs import Spec, list_specs, load_spec

__all__ = ["EpisodeCheck", "RunCheck", "Verification", "verify"]

Verdict = Literal["verified", "diverged", "unverifiable"]


@dataclass(frozen=True)
class EpisodeCheck:
    """One episode's verdict.

    Attributes:
        episode: how it is named (its stream's episode number, and its runner index).
        line: its line in the log.
        verdict: ``verified``, ``diverged`` or ``unverifiable``.
        step: the first step where it departed (``None``: not a step's fault, or verified).
        reason: what departed, or why it cannot be replayed.
    """

    episode: str
    line: int
    verdict: Verdict
    step: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class RunCheck:
    """The verdicts of one log."""

    log: str
    spec: str | None
    game: str | None
    run: str | None
    problems: list[str] = field(default_factory=list)
    episodes: list[EpisodeCheck] = field(default_factory=list)

    def tally(self, verdict: Verdict) -> int:
        """How many episodes have ``verdict``."""
        return sum(e.verdict == verdict for e in self.episodes)

    @property
    def ok(self) -> bool:
        """Whether the header holds and every episode checked was verified."""
        return not self.problems and all(e.verdict == "verified" for e in self.episodes)

    def first_problem(self) -> str:
        """The run's first problem, or its first episode that was not verified."""
        if self.problems:
            return self.problems[0]
        for check in self.episodes:
            if check.verdict != "verified":
                at = f", step {check.step}" if check.step is not None else ""
                return f"{check.episode} (line {check.line}{at}): {check.reason}"
        return ""


@dataclass(frozen=True)
class Verification:
    """Every log's verdicts: a table, JSON, and the exit status of ``arcadebench verify``."""

    runs: list[RunCheck]

    @property
    def ok(self) -> bool:
        """Whether every run and every episode checked was verified."""
        return all(run.ok for run in self.runs)

    @property
    def exit_status(self) -> int:
        """0 when everything checked was verified, 1 otherwise."""
        return 0 if self.ok else 1

    def table(self) -> str:
        """One row per log: its episodes by verdict and its first problem."""
        rows = [
            [
                run.log,
                len(run.episodes),
                run.tally("verified"),
                run.tally("diverged"),
                run.tally("unverifiable"),
                run.first_problem() or "-",
            ]
            for run in self.runs
        ]
        verified = sum(run.tally("verified") for run in self.runs)
        checked = sum(len(run.episodes) for run in self.runs)
        title = (
            f"{count(verified, 'episode')} of {checked:,} re-simulated and verified, in "
            f"{count(len(self.runs), 'log')}"
        )
        return render_table(
            ["log", "episodes", "verified", "diverged", "unverifiable", "first problem"],
            rows,
            title=title,
            wrap={"first problem": 70},
        )

    def as_dict(self) -> dict[str, Any]:
        """The verdicts as plain data (what :meth:`to_json` writes)."""
        return {
            "format": "arcadebench-verification/1",
            "ok": self.ok,
            "runs": [asdict(r) for r in self.runs],
        }

    def to_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`as_dict` as JSON."""
        Path(path).write_text(json.dumps(self.as_dict(), indent=1) + "\n")


# -- what a run's log says before anything is played -------------------------------------------
def _spec_of(run: RecordedRun, given: Spec | None) -> Spec | str:
    """The run's spec, or why there is none to replay it with."""
    name = run.spec_name
    if name is None:
        return "the log has no header: the spec and settings it was played under are unknown"
    if given is not None and given.name == name:
        return given
    if name in list_specs():
        return load_spec(name)
    return f"its spec {name!r} is not built in: pass its YAML file (--spec)"


def _header_problems(run: RecordedRun, spec: Spec) -> list[str]:
    """Where the header disagrees with the spec (its hash, its settings and deviations)."""
    from arcadebench.benchmarks.envs.resolve import resolve

    header = run.header
    if header.get("spec_hash") != spec.hash:
        return [
            f"the header says spec hash {header.get('spec_hash')!r}, but {spec.name} is "
            f"{spec.hash!r}: the log was written under another version of the spec"
        ]
    settings = dict(header.get("settings") or {})
    try:
        resolved = resolve(spec, settings)
    except ArcadebenchError as error:
        return [f"the header's settings are not the spec's to make: {error}"]
    declared = _plain(header.get("deviations") or {})
    found = _plain(resolved.deviations)
    if declared != found:
        return [
            f"the header's settings make deviations {json.dumps(found)}, but it declares "
            f"{json.dumps(declared)}: the header was edited"
        ]
    return []


def _plain(value: Any) -> Any:
    """``value`` as JSON gives it back (tuples as lists), to compare a log's with a spec's."""
    return json.loads(json.dumps(value, default=list))


def _line_problem(episode: LoggedEpisode, run: RecordedRun) -> str | None:
    """Where an episode line disagrees with its run's header (a line spliced in)."""
    record, header = episode.record, run.header
    for key in ("spec", "spec_hash", "game", "run"):
        if record.get(key) != header.get(key):
            return (
                f"its {key} is {record.get(key)!r}, the run's is {header.get(key)!r}: "
                "a line of another run was spliced in"
            )
    if _plain(record.get("deviations") or {}) != _plain(header.get("deviations") or {}):
        return (
            f"it was played with deviations {json.dumps(record.get('deviations'))}, the run "
            f"with {json.dumps(header.get('deviations'))}: an episode of other settings"
        )
    return None


# -- segments: episodes replayed one after another in one environment ------------------------
@dataclass
class _Segment:
    log: str
    spec: str
    header: Mapping[str, Any]
    engine: str
    episodes: list[LoggedEpisode] = field(default_factory=list)
    suspect: dict[int, str] = field(default_factory=dict)  # line -> why its line is not the run's


def _segments(
    run: RecordedRun,
    spec: Spec,
    ready: list[LoggedEpisode],
    checks: dict[int, EpisodeCheck],
    suspect: dict[int, str],
) -> list[_Segment]:
    """The recorded episodes in the chains they must be replayed in, one chain per start."""
    from arcadebench.specs import spec_reference

    reference = spec_reference(spec)
    by_stream: dict[int, list[LoggedEpisode]] = {}
    for episode in ready:
        by_stream.setdefault(episode.key[0], []).append(episode)
    segments: list[_Segment] = []
    for episodes in by_stream.values():
        current: _Segment | None = None
        for episode in sorted(episodes, key=lambda e: e.key[1]):
            replay = episode.replay
            if replay is None:  # pragma: no cover - only recorded episodes are ready
                continue
            before = replay.start.get("continues")
            if before is None:
                current = _Segment(str(run.log), reference, run.header, replay.engine)
                current.suspect = suspect
                segments.append(current)
            elif current is None or current.episodes[-1].key[1] != before:
                checks[episode.line] = EpisodeCheck(
                    episode.name,
                    episode.line,
                    "unverifiable",
                    reason=f"it continues episode {before}, whose recording is missing",
                )
                continue
            current.episodes.append(episode)
    return segments


def _replay_segment(segment: _Segment) -> list[EpisodeCheck]:
    """Play a chain of episodes in one environment; each one's verdict (in a worker)."""
    from arcadebench.benchmarks.replay.simulate import Player

    try:
        player = Player(load_spec(segment.spec), segment.header, segment.engine)
    except ArcadebenchError as error:
        return [
            EpisodeCheck(e.name, e.line, "unverifiable", reason=f"no environment: {error}")
            for e in segment.episodes
        ]
    checks: list[EpisodeCheck] = []
    previous: str | None = None
    broken: str | None = None
    try:
        for episode in segment.episodes:
            if broken is not None:
                checks.append(
                    EpisodeCheck(episode.name, episode.line, "unverifiable", reason=broken)
                )
                continue
            check = _check(player, episode, previous, segment.suspect.get(episode.line))
            checks.append(check)
            previous = str(episode.record.get("end_reason"))
            if check.verdict != "verified" and check.step is not None:
                broken = f"it continues {episode.name}, which departed from its recording"
    finally:
        player.close()
    return checks


def _check(
    player: Any, episode: LoggedEpisode, previous: str | None, suspect: str | None = None
) -> EpisodeCheck:
    """One episode replayed and compared with its line.

    ``suspect``: its line is not the run's (another spec or setting spliced in); the replay,
    under the run's settings, then says where the recording departs.
    """
    replay, record = episode.replay, episode.record
    if replay is None:  # pragma: no cover - only recorded episodes are replayed
        return EpisodeCheck(episode.name, episode.line, "unverifiable", reason="no recording")
    try:
        outcome = player.play(replay, previous)
    except ArcadebenchError as error:
        return EpisodeCheck(episode.name, episode.line, "unverifiable", reason=str(error))
    if suspect is not None:
        step, what = outcome.departed or (None, "")
        under = (
            f"; under the run's settings it departs at step {step}: {what}"
            if step is not None
            else "; under the run's settings it re-simulates as its line says"
        )
        return EpisodeCheck(episode.name, episode.line, "diverged", step, suspect + under)
    if outcome.departed is not None:
        step, what = outcome.departed
        return EpisodeCheck(episode.name, episode.line, "diverged", step, what)
    if outcome.end_reason is None and record.get("complete"):
        return EpisodeCheck(
            episode.name,
            episode.line,
            "diverged",
            outcome.steps,
            f"the recording ends at step {outcome.steps}, but the episode goes on",
        )
    expected_end = record.get("end_reason") if record.get("complete") else None
    compared = (
        ("return", float(record.get("return", 0.0)), outcome.episode_return),
        ("steps", int(record.get("steps", -1)), outcome.steps),
        ("frames", int(record.get("frames", -1)), outcome.frames),
        ("end reason", expected_end, outcome.end_reason),
    )
    for what, logged, replayed in compared:
        if logged != replayed:
            return EpisodeCheck(
                episode.name,
                episode.line,
                "diverged",
                outcome.steps,
                f"the log says {what} {logged!r}; its recording, re-simulated, gives "
                f"{replayed!r}: the log line was changed",
            )
    return EpisodeCheck(episode.name, episode.line, "verified")


# -- the whole ------------------------------------------------------------------------------
def _check_run(
    run: RecordedRun, given: Spec | None, sample: int | None, rng: random.Random
) -> tuple[RunCheck, list[_Segment], dict[int, EpisodeCheck]]:
    """A run's checks that need no emulator, and the segments to replay."""
    spec = _spec_of(run, given)
    header = run.header
    checks: dict[int, EpisodeCheck] = {}
    name = str(run.log)
    if isinstance(spec, str):
        found = RunCheck(name, run.spec_name, header.get("game"), header.get("run"), [spec])
        for episode in run.episodes:
            checks[episode.line] = EpisodeCheck(
                episode.name, episode.line, "unverifiable", reason=spec
            )
        return found, [], checks
    found = RunCheck(
        name, spec.name, header.get("game"), header.get("run"), _header_problems(run, spec)
    )
    chosen = run.episodes
    if sample is not None and len(chosen) > sample:
        chosen = sorted(rng.sample(chosen, sample), key=lambda e: e.line)
        chosen = _with_predecessors(chosen, run.episodes)
    ready: list[LoggedEpisode] = []
    suspect: dict[int, str] = {}
    for episode in chosen:
        problem = _line_problem(episode, run)
        if problem is not None and episode.replay is None:
            checks[episode.line] = EpisodeCheck(
                episode.name, episode.line, "diverged", reason=problem
            )
        elif episode.replay is None:
            why = (
                "no recording (recorded with record_actions=False, or before recordings)"
                if not run.recorded or not run.damaged
                else "its recording is damaged or missing"
            )
            checks[episode.line] = EpisodeCheck(
                episode.name, episode.line, "unverifiable", reason=why
            )
        else:
            ready.append(episode)
            if problem is not None:
                suspect[episode.line] = problem
    return found, _segments(run, spec, ready, checks, suspect), checks


def _with_predecessors(
    chosen: list[LoggedEpisode], episodes: list[LoggedEpisode]
) -> list[LoggedEpisode]:
    """``chosen`` and the episodes each one's chain of ``continues`` needs replayed before it."""
    by_key = {e.key: e for e in episodes}
    needed = {e.key: e for e in chosen}
    for episode in chosen:
        current = episode
        while current.replay is not None and "continues" in current.replay.start:
            key = (current.key[0], int(current.replay.start["continues"]))
            if key in needed or key not in by_key:
                break
            current = needed[key] = by_key[key]
    return sorted(needed.values(), key=lambda e: e.line)


def verify(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    sample: int | None = None,
    workers: int | None = None,
    spec: str | os.PathLike[str] | Spec | None = None,
    seed: int = 0,
    backend: Literal["local", "ray"] = "local",
) -> Verification:
    """Re-simulate the recorded episodes of logs and check them (module docstring).

    Args:
        paths: logs (``.jsonl``), directories of logs, or results files (their inputs).
        sample: check this many episodes of each log (chosen with ``seed``), not all.
        workers: processes replaying at once (default: one per CPU core).
        spec: the YAML file (or spec) of logs written under a spec that is not built in.
        seed: the generator of ``sample``'s choice.
        backend: ``"local"`` processes, or ``"ray"``: a task per chain of episodes on any node
            of the Ray cluster this process is connected to (else ``RAY_ADDRESS``'s, or a local
            instance); the recordings travel with the tasks, no node needs the logs.

    Returns:
        The verdicts, per log and per episode.

    Raises:
        ArcadebenchError: bad arguments, or a path that holds no log.
        InputError: a log that cannot be read at all.
    """
    if sample is not None and (type(sample) is not int or sample < 1):
        raise InvalidArgument(f"`sample` must be a positive integer, got {sample!r}")
    if workers is not None and (type(workers) is not int or workers < 1):
        raise InvalidArgument(f"`workers` must be a positive integer, got {workers!r}")
    if backend not in ("local", "ray"):
        raise InvalidArgument(f"`backend` must be 'local' or 'ray', got {backend!r}")
    given = load_spec(spec) if spec is not None else None
    path_list = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    rng = random.Random(seed)
    runs: list[RunCheck] = []
    jobs: list[_Segment] = []
    settled: list[dict[int, EpisodeCheck]] = []
    for log in find_logs(path_list):
        found, segments, checks = _check_run(read_run(log), given, sample, rng)
        runs.append(found)
        settled.append(checks)
        jobs.extend(segments)
    replays = _on_ray(jobs) if backend == "ray" else _run_all(jobs, workers)
    for segment, replayed in zip(jobs, replays, strict=True):
        index = next(i for i, r in enumerate(runs) if r.log == segment.log)
        settled[index].update({check.line: check for check in replayed})
    return Verification(
        [
            RunCheck(
                run.log,
                run.spec,
                run.game,
                run.run,
                run.problems,
                [checks[k] for k in sorted(checks)],
            )
            for run, checks in zip(runs, settled, strict=True)
        ]
    )


def _on_ray(segments: Sequence[_Segment]) -> list[list[EpisodeCheck]]:
    """Replay the segments as Ray tasks, a CPU each, on any node."""
    from arcadebench.benchmarks.training.ray_run import import_ray

    ray = import_ray()
    if not ray.is_initialized():
        ray.init()
    task = ray.remote(num_cpus=1, max_retries=1)(_replay_segment)
    found: list[list[EpisodeCheck]] = ray.get([task.remote(s) for s in segments])
    return found


def _run_all(segments: Sequence[_Segment], workers: int | None) -> list[list[EpisodeCheck]]:
    """Replay the segments on every core (here when there is one segment or one core)."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(segments) <= 1:
        return [_replay_segment(segment) for segment in segments]
    import multiprocessing

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    context = multiprocessing.get_context(method)
    with ProcessPoolExecutor(min(workers, len(segments)), mp_context=context) as pool:
        return list(pool.map(_replay_segment, segments))
