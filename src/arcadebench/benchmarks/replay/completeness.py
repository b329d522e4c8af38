"""Whether a log holds *all* the episodes that were played, each once: checks without an emulator.

Re-simulating each episode shows that it happened as logged; it cannot show that none was
dropped, repeated or replaced, which is how honest-looking logs mislead (the best episode
logged three times, the worst one deleted, one of another seed in its place). The log's own
structure can, since every episode line carries what fixes its place:

- **a runner's job** (its lines have ``index``): the indices are ``0 .. n - 1``, each once, ``n``
  being at least the count the results file claims or the spec's evaluation episodes, and the
  largest index found plus one (a rerun asking for fewer episodes plays none; trimming a job's
  *last* episodes, with the results file edited to match, is then invisible: only re-running the
  agent finds it); each episode that starts from a seed starts from
  :func:`~arcadebench.records.episode_seeds` of its job's seed and its index;
- **every stream** (one environment of the run): its episodes are numbered ``0, 1, 2 ...``
  without a gap or a repeat, and its totals grow by each episode's steps and frames
  (``env_steps``, ``env_frames``), so a line removed and the rest renumbered still leaves a
  jump; the run's totals never go back along the file;
- **a recording logged twice**: the same start and the same actions in two lines of a log.

Classes: Findings.
Functions: check_completeness.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from arcadebench.benchmarks.replay.logs import LoggedEpisode, RecordedRun
from arcadebench.records import episode_seeds

__all__ = ["Findings", "check_completeness"]


@dataclass
class Findings:
    """What the structure of a log says: the run's problems, and episodes that fail.

    Attributes:
        problems: the run's failures (missing episodes, totals that jump).
        duplicates: line -> why the episode there is one already logged.
        wrong_seeds: line -> how its start differs from its index's seed.
        checks: what was checked, in words (for the report of what was verified).
    """

    problems: list[str] = field(default_factory=list)
    duplicates: dict[int, str] = field(default_factory=dict)
    wrong_seeds: dict[int, str] = field(default_factory=dict)
    checks: list[str] = field(default_factory=list)


def _ranges(numbers: Iterable[int]) -> str:
    """``1, 3-5, 9``: sorted numbers as runs."""
    found = sorted(numbers)
    parts: list[str] = []
    start = previous = found[0]
    for number in [*found[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    shown = parts[:6]
    return ", ".join(shown) + (f" and {len(parts) - 6} more" if len(parts) > 6 else "")


def check_completeness(run: RecordedRun, claimed: int | None = None) -> Findings:
    """The checks of the module docstring on ``run``'s well-formed episode lines.

    Args:
        run: the log.
        claimed: the episodes each job of the runner played, as a results file claims them
            (its ``--episodes``), else the spec's fixed count where it has one.
    """
    found = Findings()
    episodes = [e for e in run.episodes if e.malformed is None]
    if not episodes:
        return found
    _repeated_recordings(episodes, found)
    indexed = [e for e in episodes if e.index is not None]
    if indexed and len(indexed) != len(episodes):
        found.problems.append(
            f"{len(indexed)} of its {len(episodes)} episodes have a runner index and the others "
            "none: episodes of another run were added"
        )
    elif indexed:
        _job(run, indexed, claimed, found)
    _streams(episodes, found)
    return found


def _repeated_recordings(episodes: list[LoggedEpisode], found: Findings) -> None:
    found.checks.append("no recording twice")
    first: dict[str, int] = {}
    for episode in episodes:
        if episode.replay is None:
            continue
        line = first.setdefault(episode.replay.fingerprint, episode.line)
        if line != episode.line:
            found.duplicates[episode.line] = (
                f"its recording (start and actions) is line {line}'s: an episode logged twice"
            )


def _job(
    run: RecordedRun, episodes: list[LoggedEpisode], claimed: int | None, found: Findings
) -> None:
    """A runner's job: indices 0..n-1 once each, and each start its index's seed."""
    found.checks.append("indices and seeds")
    first: dict[int, int] = {}
    for episode in episodes:
        index = episode.index
        if index is None:  # pragma: no cover - the caller passes indexed episodes
            continue
        line = first.setdefault(index, episode.line)
        if line != episode.line:
            found.duplicates.setdefault(
                episode.line, f"index {index} was already logged at line {line}: a repeat"
            )
    count = max(claimed or 0, max(first) + 1)  # a rerun asking for fewer plays none
    missing = set(range(count)) - set(first)
    if missing:
        found.problems.append(
            f"incomplete: the job's episodes {_ranges(missing)} of 0-{count - 1} are missing"
        )
    job_seed = _job_seed(run, episodes, found)
    if job_seed is None:
        return
    for episode in episodes:
        replay, index = episode.replay, episode.index
        if replay is None or index is None or "continues" in replay.start:
            continue  # a lost life's game goes on from the episode before it
        expected = episode_seeds(job_seed, index)[0]
        start = replay.start.get("seed")
        if start != expected:
            what = f"seed {start}" if start is not None else f"a {next(iter(replay.start))}"
            found.wrong_seeds[episode.line] = (
                f"it starts from {what}, index {index} of job {job_seed} from seed "
                f"{expected}: an episode of another seed"
            )


def _job_seed(run: RecordedRun, episodes: list[LoggedEpisode], found: Findings) -> int | None:
    """The job's seed: its run id (``<seed>`` or ``<seed>.eval``), which every line repeats."""
    name = str(run.header.get("run", episodes[0].record.get("run", "")))
    number = name.removesuffix(".eval")
    if not number.isdigit():
        found.problems.append(f"its run id {name!r} is no runner job's seed")
        return None
    seed = int(number)
    for episode in episodes:
        if episode.record.get("seed") != seed:
            found.problems.append(
                f"line {episode.line} says seed {episode.record.get('seed')!r}, the job is "
                f"seed {seed}: a line of another job"
            )
            break
    return seed


def _streams(episodes: list[LoggedEpisode], found: Findings) -> None:
    """Each stream's episodes numbered without gaps or repeats, its totals growing by each."""
    found.checks.append("streams without gaps")
    by_stream: dict[int, list[LoggedEpisode]] = {}
    for episode in episodes:
        by_stream.setdefault(episode.key[0], []).append(episode)
    for stream, lines in sorted(by_stream.items()):
        where = f"stream {stream}" if len(by_stream) > 1 or stream else "the run"
        numbers: dict[int, int] = {}
        for episode in lines:
            line = numbers.setdefault(episode.key[1], episode.line)
            if line != episode.line:
                found.duplicates.setdefault(
                    episode.line,
                    f"{where}'s episode {episode.key[1]} was already logged at line {line}",
                )
        missing = set(range(max(numbers) + 1)) - set(numbers)
        if missing:
            found.problems.append(f"incomplete: {where} has no episodes {_ranges(missing)}")
        _totals(where, lines, found)
    totals = [(e.line, int(e.record.get("total_frames", 0))) for e in episodes]
    for (_, before), (line, after) in zip(totals, totals[1:], strict=False):
        if after < before:
            found.problems.append(
                f"the run's total frames go back at line {line} ({before:,} to {after:,}): "
                "its lines were re-ordered or edited"
            )
            break


def _totals(where: str, lines: list[LoggedEpisode], found: Findings) -> None:
    """A stream's totals grow by exactly each episode's steps and frames."""
    totalled = [e for e in lines if "env_steps" in e.record and "env_frames" in e.record]
    if not totalled:
        return  # format 1: one stream, no stream totals
    if len(totalled) != len(lines):
        (bare,) = [e for e in lines if e not in totalled][:1]
        found.problems.append(
            f"line {bare.line} lacks {where}'s totals that its other lines have: it was edited"
        )
        return
    steps = frames = 0
    previous: int | None = None
    for episode in sorted(lines, key=lambda e: e.key[1]):
        number = episode.key[1]
        record = episode.record
        if number == previous:
            continue  # a repeat, found above
        steps += int(record["steps"])
        frames += int(record["frames"])
        if (previous is None and number == 0) or previous == number - 1:
            jump = int(record["env_steps"]) - steps, int(record["env_frames"]) - frames
            if jump != (0, 0):
                found.problems.append(
                    f"incomplete: {where}'s totals jump by {jump[0]:,} steps and {jump[1]:,} "
                    f"frames at its episode {number} (line {episode.line}): episodes are "
                    "missing before it, or a line was edited"
                )
                return
        steps, frames = int(record["env_steps"]), int(record["env_frames"])
        previous = number
