"""``arcadebench verify``: re-simulate a run's episodes and check them, and its results, as a whole.

Human world records are accepted only with a replay as evidence; this is the same for agents.
What verifying proves: the logged episodes reproduce in the emulator under the protocol the log
declares (its spec, built-in or custom, and the deviations it declares), none is missing,
repeated or of another seed, and the results file's numbers follow from them. What it cannot
prove: that a given agent played them (a consistent forgery of log and recording replays
fine); that needs the agent re-run on seeds it could not know, which ``arcadebench run`` on the
submitted policy does. What is checked:

- the header against the spec: written for this spec's content hash, and its settings giving
  the deviations it declares (a header claiming none while its settings differ is caught);
- each episode line against the header: the same spec, game, run and deviations (a line of
  another spec, setting or run spliced into the log is caught, by line);
- the log as a whole (:mod:`~.completeness`): a runner job's indices ``0 .. n - 1`` once each,
  each from its index's seed; every stream's episodes without gaps, its totals growing by each
  one; no recording logged twice;
- each recording against the emulator, step by step (:mod:`~.simulate`): the rewards, and the
  emulator's state against the recording's digests of it, so the first step where the replay
  departs is named, also where the rewards agree;
- each log line against the replay: a return, a length, a frame count or an end edited;
- a results file's every number, recomputed by this version's scorer from its logs
  (:mod:`~.claims`).

A verdict per episode: *verified*, *diverged* (with the step and what departed),
*unverifiable* (no recording, a damaged one, a start nothing can re-create), *duplicate* or
*wrong seed*. A log that cannot be read is named in one line and the others still get their
verdicts; the exit status is the worst of all: 2 for unreadable input, 1 for any failure, 0
when everything was verified. Episodes are replayed independently where they start from a seed
or a snapshot, so they are spread over every core (a worker the emulator crashes costs its
episodes, which are unverifiable, and no other's); an episode that continues the one before it
(the game after a lost life, a batched emulator's next episode) is replayed after it, in the
same process.

Classes: EpisodeCheck, RunCheck, Verification.
Functions: verify.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from arcadebench._table import count, render_table
from arcadebench.benchmarks.replay.claims import (
    ResultsCheck,
    ResultsClaim,
    check_results,
    named_spec,
    read_claim,
)
from arcadebench.benchmarks.replay.completeness import Findings, check_completeness
from arcadebench.benchmarks.replay.logs import LoggedEpisode, RecordedRun, find_logs, read_run
from arcadebench.benchmarks.replay.processes import map_on_cores
from arcadebench.errors import ArcadebenchError, InvalidArgument, ReplayDamaged, first_line
from arcadebench.records import DIGEST_EVERY, REPLAY_FORMATS, decode_replay, load_replay
from arcadebench.specs import Spec, load_spec, spec_reference

__all__ = ["EpisodeCheck", "RunCheck", "Verification", "verify"]

Verdict = Literal["verified", "diverged", "unverifiable", "duplicate", "wrong seed"]


@dataclass(frozen=True)
class EpisodeCheck:
    """One episode's verdict.

    Attributes:
        episode: how it is named (its stream's episode number, and its runner index).
        line: its line in the log.
        verdict: one of ``verified``, ``diverged``, ``unverifiable``, ``duplicate``,
            ``wrong seed``.
        step: the first step where it departed (``None``: not a step's fault, or verified).
        reason: what departed, or why it cannot be replayed.
    """

    episode: str
    line: int
    verdict: Verdict
    step: int | None = None
    reason: str = ""


def _verdict(
    episode: LoggedEpisode, verdict: Verdict, step: int | None = None, reason: str = ""
) -> EpisodeCheck:
    return EpisodeCheck(episode.name, episode.line, verdict, step, reason)


@dataclass(frozen=True)
class RunCheck:
    """The verdicts of one log, and what they were checked against.

    Attributes:
        log: the log file.
        spec: the spec its header names.
        spec_source: ``built-in``, ``custom (<file>)``, or why there is none to replay it with.
        spec_hash: the spec's content hash the episodes were checked against.
        game: its game.
        run: its run id.
        deviations: the settings its header declares it changed from the spec.
        checks: what was checked, in words.
        problems: the run's own failures (header, missing episodes).
        episodes: each checked episode's verdict, in log order.
        unreadable: why the log could not be read at all (``None``: it was).
    """

    log: str
    spec: str | None
    spec_source: str = ""
    spec_hash: str | None = None
    game: str | None = None
    run: str | None = None
    deviations: Mapping[str, Any] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    episodes: list[EpisodeCheck] = field(default_factory=list)
    unreadable: str | None = None

    def tally(self, verdict: Verdict) -> int:
        """How many episodes have ``verdict``."""
        return sum(e.verdict == verdict for e in self.episodes)

    @property
    def ok(self) -> bool:
        """Whether the log was read, the run holds and every episode checked was verified."""
        return (
            self.unreadable is None
            and not self.problems
            and all(e.verdict == "verified" for e in self.episodes)
        )

    def first_problem(self) -> str:
        """The run's first problem, or its first episode that was not verified."""
        if self.unreadable is not None:
            return f"unreadable: {self.unreadable}"
        if self.problems:
            return self.problems[0]
        for check in self.episodes:
            if check.verdict != "verified":
                at = f", step {check.step}" if check.step is not None else ""
                return f"{check.verdict}: {check.episode} (line {check.line}{at}): {check.reason}"
        return ""

    def spec_label(self) -> str:
        """``saber (built-in, e8f835bc)``: the spec and which one it is."""
        if self.spec is None:
            return "-"
        short = (self.spec_hash or "").removeprefix("sha256:")[:8]
        return f"{self.spec} ({self.spec_source}{', ' + short if short else ''})"


@dataclass(frozen=True)
class Verification:
    """Every log's verdicts and every results file's: a table, JSON, and the exit status.

    Attributes:
        runs: each log's verdicts.
        results: each results file's recomputation.
        sample: the episodes replayed per log (``None``: all).
        sample_seed: the seed the sample was drawn with (``--sample-seed`` repeats it).
    """

    runs: list[RunCheck]
    results: list[ResultsCheck] = field(default_factory=list)
    sample: int | None = None
    sample_seed: int | None = None

    @property
    def ok(self) -> bool:
        """Whether every log, episode and results file checked was verified."""
        return all(run.ok for run in self.runs) and all(r.ok for r in self.results)

    @property
    def exit_status(self) -> int:
        """2 when some input could not be read, else 1 when something failed, else 0."""
        if any(run.unreadable for run in self.runs) or any(r.unreadable for r in self.results):
            return 2
        return 0 if self.ok else 1

    def table(self) -> str:
        """One row per log (spec, deviations, episodes by verdict, first problem), then more.

        Below the rows: each results file's recomputation, and what was checked.
        """
        rows = [
            [
                run.log,
                run.spec_label(),
                _deviations(run.deviations),
                len(run.episodes),
                run.tally("verified"),
                len(run.episodes) - run.tally("verified"),
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
        if self.sample is not None:
            title += (
                f" (a sample of at most {self.sample} a log, drawn with --sample-seed "
                f"{self.sample_seed})"
            )
        table = render_table(
            ["log", "spec", "deviations", "episodes", "verified", "failed", "first problem"],
            rows,
            title=title,
            wrap={"first problem": 60, "deviations": 40},
        )
        lines = [table, *(r.summary() for r in self.results)]
        for checks, logs in _checks_by_log(self.runs).items():
            lines.append(f"checked ({logs}): {checks}")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        """The verdicts as plain data (what :meth:`to_json` writes)."""
        return {
            "format": "arcadebench-verification/2",
            "ok": self.ok,
            "exit_status": self.exit_status,
            "sample": self.sample,
            "sample_seed": self.sample_seed,
            "runs": [asdict(r) for r in self.runs],
            "results": [asdict(r) for r in self.results],
        }

    def to_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`as_dict` as JSON."""
        Path(path).write_text(json.dumps(self.as_dict(), indent=1, default=list) + "\n")


def _deviations(deviations: Mapping[str, Any]) -> str:
    """``repeat_action_probability=0.0 (spec 0.25)``, or ``-``."""
    if not deviations:
        return "-"
    return "; ".join(
        f"{key}={value.get('used')!r} (spec {value.get('spec')!r})"
        if isinstance(value, Mapping)
        else f"{key}={value!r}"
        for key, value in deviations.items()
    )


def _checks_by_log(runs: Sequence[RunCheck]) -> dict[str, str]:
    """Each distinct list of checks, and which logs it was (``all logs``, or how many)."""
    found: dict[str, list[str]] = {}
    for run in runs:
        if run.checks:
            found.setdefault(", ".join(run.checks), []).append(run.log)
    if len(found) == 1:
        return {checks: "all logs" for checks in found}
    return {checks: count(len(logs), "log") for checks, logs in found.items()}


# -- what a run's log says before anything is played -------------------------------------------
def _spec_of(run: RecordedRun, given: Spec | None) -> tuple[Spec | None, str]:
    """The run's spec and which one it is (``built-in``, ``custom (<file>)``), or why none."""
    name = run.spec_name
    if name is None:
        return None, "the log has no header: the spec and settings it was played under are unknown"
    spec, problem = named_spec(name, given)
    if spec is None:
        return None, problem
    builtin = spec is not given or spec_reference(given) == given.name
    return spec, "built-in" if builtin else f"custom ({Path(spec.source).name})"


def _header_problems(run: RecordedRun, spec: Spec) -> list[str]:
    """Where the header disagrees with the spec (its hash, its settings and deviations)."""
    from arcadebench.benchmarks.envs.resolve import resolve

    header = run.header
    if header.get("spec_hash") != spec.hash:
        return [
            f"the header says spec hash {header.get('spec_hash')!r}, but {spec.name} is "
            f"{spec.hash!r}: the log was written under another version of the spec"
        ]
    settings = header.get("settings")
    if not isinstance(settings, dict):
        return [f"the header's settings are not an object: {repr(settings)[:60]}"]
    try:
        resolved = resolve(spec, dict(settings))
        if resolved.options:
            raise InvalidArgument(f"{', '.join(resolved.options)} are no protocol settings")
        found = _plain(resolved.deviations)
    except Exception as error:  # the header is someone else's input: any failure is a verdict
        return [f"the header's settings are not the spec's to make: {first_line(error)}"]
    declared = _plain(header.get("deviations") or {})
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
    replays: str
    spec: str
    header: Mapping[str, Any]
    engine: str
    episodes: list[LoggedEpisode] = field(default_factory=list)
    suspect: dict[int, str] = field(default_factory=dict)  # line -> why its line is not the run's
    lines: list[bytes] | None = None  # the recordings themselves, for a node without the files


def _segments(
    run: RecordedRun,
    spec: Spec,
    ready: list[LoggedEpisode],
    checks: dict[int, EpisodeCheck],
    suspect: dict[int, str],
) -> list[_Segment]:
    """The recorded episodes in the chains they must be replayed in, one chain per start."""
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
                current = _Segment(str(run.replay_file), reference, run.header, replay.engine)
                current.suspect = suspect
                segments.append(current)
            elif current is None or current.episodes[-1].key[1] != before:
                why = f"it continues episode {before}, whose recording is missing"
                checks[episode.line] = _verdict(episode, "unverifiable", reason=why)
                continue
            current.episodes.append(episode)
    return segments


def _replay_segment(segment: _Segment) -> list[EpisodeCheck]:
    """Play a chain of episodes in one environment; each one's verdict (in a worker)."""
    from arcadebench.benchmarks.replay.simulate import Player

    checks: list[EpisodeCheck] = []
    player: Any = None
    broken: str | None = None
    previous: str | None = None
    try:
        for position, episode in enumerate(segment.episodes):
            if broken is not None:
                checks.append(_verdict(episode, "unverifiable", reason=broken))
                continue
            try:
                replay = _decoded(segment, position)
            except ReplayDamaged as error:
                why = f"its recording is damaged: {error}"
                checks.append(_verdict(episode, "unverifiable", reason=why))
                broken = f"it continues {episode.name}, whose recording is damaged"
                continue
            if player is None:
                try:
                    spec = load_spec(segment.spec)
                    player = Player(spec, segment.header, segment.engine, None, replay.digests)
                except Exception as error:  # the header is someone else's input
                    broken = f"no environment: {first_line(error)}"
                    checks.append(_verdict(episode, "unverifiable", reason=broken))
                    continue
            check = _check(player, episode, replay, previous, segment.suspect.get(episode.line))
            checks.append(check)
            previous = str(episode.record.get("end_reason"))
            if check.verdict != "verified":
                broken = f"it continues {episode.name}, which did not re-simulate as logged"
    finally:
        if player is not None:
            player.close()
    return checks


def _decoded(segment: _Segment, position: int) -> Any:
    """The recording of the segment's ``position``-th episode, decoded now."""
    if segment.lines is not None:
        return decode_replay(segment.lines[position])
    entry = segment.episodes[position].replay
    if entry is None:  # pragma: no cover - only recorded episodes are in segments
        raise ReplayDamaged("no recording")
    return load_replay(segment.replays, entry)


def _check(
    player: Any,
    episode: LoggedEpisode,
    replay: Any,
    previous: str | None,
    suspect: str | None = None,
) -> EpisodeCheck:
    """One episode replayed and compared with its line.

    ``suspect``: its line is not the run's (another spec or setting spliced in); the replay,
    under the run's settings, then says where the recording departs.
    """
    record = episode.record
    try:
        outcome = player.play(replay, previous)
    except ArcadebenchError as error:
        return _verdict(episode, "unverifiable", reason=str(error))
    except Exception as error:  # whatever a hostile recording makes the emulator raise
        why = f"replaying it failed: {type(error).__name__}: {first_line(error)}"
        return _verdict(episode, "unverifiable", reason=why)
    if suspect is not None:
        step, what = outcome.departed or (None, "")
        under = (
            f"; under the run's settings it departs at step {step}: {what}"
            if step is not None
            else "; under the run's settings it re-simulates as its line says"
        )
        return _verdict(episode, "diverged", step, suspect + under)
    if outcome.departed is not None:
        return _verdict(episode, "diverged", *outcome.departed)
    if outcome.end_reason is None and record.get("complete"):
        why = f"the recording ends at step {outcome.steps}, but the episode goes on"
        return _verdict(episode, "diverged", outcome.steps, why)
    expected_end = record.get("end_reason") if record.get("complete") else None
    compared = (
        ("return", float(record["return"]), outcome.episode_return),
        ("steps", int(record["steps"]), outcome.steps),
        ("frames", int(record["frames"]), outcome.frames),
        ("end reason", expected_end, outcome.end_reason),
    )
    for what, logged, replayed in compared:
        if logged != replayed:
            return _verdict(
                episode,
                "diverged",
                outcome.steps,
                f"the log says {what} {logged!r}; its recording, re-simulated, gives "
                f"{replayed!r}: the log line was changed",
            )
    return _verdict(episode, "verified")


# -- the whole ------------------------------------------------------------------------------
def _check_run(
    run: RecordedRun,
    given: Spec | None,
    sample: int | None,
    rng: random.Random,
    claimed: int | None,
) -> tuple[RunCheck, list[_Segment], dict[int, EpisodeCheck]]:
    """A run's checks that need no emulator, and the segments to replay."""
    spec, source = _spec_of(run, given)
    header = run.header
    checks: dict[int, EpisodeCheck] = {}
    deviations = header.get("deviations")
    found = RunCheck(
        str(run.log),
        run.spec_name,
        source if spec is not None else "",
        spec.hash if spec is not None else None,
        _text(header.get("game")),
        _text(header.get("run")),
        deviations if isinstance(deviations, dict) else {},
    )
    if spec is None:
        found.problems.append(source)
        for episode in run.episodes:
            checks[episode.line] = _verdict(episode, "unverifiable", reason=source)
        return found, [], checks
    found.problems.extend(_header_problems(run, spec))
    if spec.evaluation.scored == "after_training" and header.get("phase") != "evaluation":
        claimed = None  # a training log's episodes are no job's quota
    elif claimed is None and header.get("phase") == "evaluation":
        claimed = spec.evaluation.episodes
    findings = check_completeness(run, claimed)
    found.problems.extend(findings.problems)
    found.checks.extend(_checks(run, findings))
    chosen: list[LoggedEpisode] = []
    for episode in run.episodes:  # the verdicts the log's structure gives: no replay needed
        line = episode.line
        if episode.malformed is not None:
            why = f"its line: {episode.malformed}"
            checks[line] = _verdict(episode, "unverifiable", reason=why)
        elif line in findings.duplicates:
            checks[line] = _verdict(episode, "duplicate", None, findings.duplicates[line])
        elif line in findings.wrong_seeds:
            checks[line] = _verdict(episode, "wrong seed", None, findings.wrong_seeds[line])
        else:
            chosen.append(episode)
    if sample is not None and len(chosen) > sample:
        chosen = sorted(rng.sample(chosen, sample), key=lambda e: e.line)
        chosen = _with_predecessors(run, chosen)
    ready: list[LoggedEpisode] = []
    suspect: dict[int, str] = {}
    damaged = dict(run.replays.damaged) if run.replays is not None else {}
    for episode in chosen:
        problem = _line_problem(episode, run)
        if problem is not None and episode.replay is None:
            checks[episode.line] = _verdict(episode, "diverged", reason=problem)
        elif episode.replay is None:
            why = (
                "no recording (recorded with record_actions=False, or before recordings)"
                if not run.recorded or not damaged
                else "its recording is damaged or missing ("
                + "; ".join(f"line {k}: {v}" for k, v in list(damaged.items())[:2])
                + ")"
            )
            checks[episode.line] = _verdict(episode, "unverifiable", reason=why)
        else:
            ready.append(episode)
            if problem is not None:
                suspect[episode.line] = problem
    return found, _segments(run, spec, ready, checks, suspect), checks


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _checks(run: RecordedRun, findings: Findings) -> list[str]:
    """What is checked of a log, in words."""
    entries = [e.replay for e in run.episodes if e.replay is not None]
    digested = [e for e in entries if e.digested]
    if not entries:
        states = "no recordings"
    elif len(digested) == len(entries):
        states = f"state digests every {DIGEST_EVERY} steps"
    elif digested:
        states = f"state digests where recorded ({len(entries) - len(digested)} recordings of "
        states += f"{REPLAY_FORMATS[0]} have none)"
    else:
        states = f"no state digests ({REPLAY_FORMATS[0]} recordings: rewards only)"
    return [
        "header against spec",
        "lines against header",
        *findings.checks,
        "rewards",
        states,
        "return, steps, frames, end",
    ]


def _with_predecessors(run: RecordedRun, chosen: list[LoggedEpisode]) -> list[LoggedEpisode]:
    """``chosen`` and the episodes each one's chain of ``continues`` needs replayed before it.

    A broken chain keeps its episode alone: replaying it says it cannot be.
    """
    needed = {e.key: e for e in chosen}
    for episode in chosen:
        try:
            needed.update({e.key: e for e in run.chain(episode)})
        except ArcadebenchError:
            continue
    return sorted(needed.values(), key=lambda e: e.line)


def verify(
    paths: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    sample: int | None = None,
    sample_seed: int | None = None,
    workers: int | None = None,
    spec: str | os.PathLike[str] | Spec | None = None,
    backend: Literal["local", "ray"] = "local",
) -> Verification:
    """Re-simulate the recorded episodes of logs, check them, and results files as a whole.

    What is checked, and what it proves, is the module docstring's.

    Args:
        paths: logs (``.jsonl``), directories of logs, or results files (their inputs, and
            every number in them recomputed).
        sample: replay this many episodes of each log, not all (the structure of every log,
            and a results file's numbers, are still checked whole).
        sample_seed: the seed of the sample's draw (default: fresh entropy, reported in
            :attr:`Verification.sample_seed` so the draw can be repeated).
        workers: processes replaying at once (default: one per CPU core).
        spec: the YAML file (or spec) of logs written under a spec that is not built in.
        backend: ``"local"`` processes, or ``"ray"``: a task per chain of episodes on any node
            of the Ray cluster this process is connected to (else ``RAY_ADDRESS``'s, or a local
            instance); the recordings travel with the tasks, no node needs the logs.

    Returns:
        The verdicts, per log and per episode, and per results file.

    Raises:
        ArcadebenchError: bad arguments, or a path that is no log, directory or results file.
    """
    if sample is not None and (type(sample) is not int or sample < 1):
        raise InvalidArgument(f"`sample` must be a positive integer, got {sample!r}")
    if sample_seed is not None and (type(sample_seed) is not int or sample_seed < 0):
        raise InvalidArgument(f"`sample_seed` must be a non-negative integer, got {sample_seed!r}")
    if workers is not None and (type(workers) is not int or workers < 1):
        raise InvalidArgument(f"`workers` must be a positive integer, got {workers!r}")
    if backend not in ("local", "ray"):
        raise InvalidArgument(f"`backend` must be 'local' or 'ray', got {backend!r}")
    given = load_spec(spec) if spec is not None else None
    path_list = [paths] if isinstance(paths, str | os.PathLike) else list(paths)
    if sample is not None and sample_seed is None:
        sample_seed = secrets.randbelow(2**32)
    rng = random.Random(sample_seed)
    claims = [read_claim(p) for p in path_list if Path(p).suffix == ".json"]
    logs: dict[Path, ResultsClaim | None] = {}
    for claim in claims:
        for log in claim.logs:
            logs.setdefault(log, claim)
    for log in find_logs([p for p in path_list if Path(p).suffix != ".json"]):
        logs.setdefault(log, None)
    runs: list[RunCheck] = []
    jobs: list[tuple[int, _Segment]] = []
    settled: list[dict[int, EpisodeCheck]] = []
    for log, by in logs.items():
        try:
            run = read_run(log)
        except ArcadebenchError as error:
            runs.append(RunCheck(str(log), None, unreadable=str(error)))
            settled.append({})
            continue
        ours = by is not None and run.header.get("algorithm") == by.agent
        claimed = by.episodes if ours and by is not None else None
        found, segments, checks = _check_run(run, given, sample, rng, claimed)
        jobs.extend((len(runs), s) for s in segments)
        runs.append(found)
        settled.append(checks)
    segments = [s for _, s in jobs]
    replays = (
        _on_ray(segments)
        if backend == "ray"
        else map_on_cores(_replay_segment, segments, workers, _crashed)
    )
    for (position, _), replayed in zip(jobs, replays, strict=True):
        settled[position].update({check.line: check for check in replayed})
    checked = [
        dataclasses.replace(run, episodes=[checks[k] for k in sorted(checks)])
        for run, checks in zip(runs, settled, strict=True)
    ]
    return Verification(
        checked, [check_results(claim, given) for claim in claims], sample, sample_seed
    )


def _on_ray(segments: Sequence[_Segment]) -> list[list[EpisodeCheck]]:
    """Replay the segments as Ray tasks, a CPU each, on any node; the recordings go along."""
    if not segments:
        return []
    from arcadebench.benchmarks.training.ray_run import import_ray

    ray = import_ray("`verify --backend ray`")
    if not ray.is_initialized():
        ray.init()
    task = ray.remote(num_cpus=1, max_retries=1)(_replay_segment)
    found: list[list[EpisodeCheck]] = ray.get([task.remote(_with_lines(s)) for s in segments])
    return found


def _with_lines(segment: _Segment) -> _Segment:
    """The segment with its recordings' lines read, for a process that cannot read the files."""
    lines: list[bytes] = []
    with open(segment.replays, "rb") as handle:
        for episode in segment.episodes:
            entry = episode.replay
            if entry is None:  # pragma: no cover - only recorded episodes are in segments
                lines.append(b"")
                continue
            handle.seek(entry.offset)
            lines.append(handle.read(entry.length))
    segment.lines = lines
    return segment


def _crashed(segment: _Segment) -> list[EpisodeCheck]:
    """The verdicts of a segment whose replay killed its process."""
    why = "replaying its chain of episodes crashed the emulator's process"
    return [_verdict(e, "unverifiable", reason=why) for e in segment.episodes]
