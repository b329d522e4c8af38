"""One run's bookkeeping, shared by the single-env and the vector monitor.

A monitor counts the steps, frames and rewards of the episode in flight; when an episode ends
it hands the episode to its run's :class:`RunRecorder`, which numbers it, adds it to the run's
totals, writes the record and decides whether the run's budget is used up. The budget rule
(SABER Section 3.2: 200M training frames; Sonic Section 3.9: 1M timesteps per level) and the
record format are therefore written once, whatever drives the environments.

Classes: RunRecorder.
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Any

from arcadebench.errors import ArcadebenchError
from arcadebench.records.reader import RunLog, parse_log
from arcadebench.records.schema import EpisodeRecord, RunIdentity, episode_record, header_record
from arcadebench.records.writer import LogFile, check_run, package_versions, tightest
from arcadebench.specs import Spec

__all__ = ["NO_LIMIT", "RunRecorder", "check_budget"]

NO_LIMIT = sys.maxsize
"""What :meth:`RunRecorder.steps_left` and :meth:`RunRecorder.frames_left` give unbudgeted."""


def check_budget(name: str, value: object) -> int | None:
    """Return ``value`` if it is a positive ``int`` or ``None`` (no budget), else raise."""
    if value is not None and (type(value) is not int or value <= 0):  # type: ignore[operator]
        raise ArcadebenchError(f"`{name}` must be a positive integer or None, got {value!r}")
    return value  # type: ignore[return-value]


class RunRecorder:
    """The episodes of one run: their numbering, the run's totals, its budget and its log.

    The budget (``spec.evaluation.budget_steps`` / ``budget_frames``; the ``budget_*``
    arguments and :meth:`tighten_budget` may only make it smaller) counts the whole run, a
    continued log's episodes included. :meth:`steps_left` and :meth:`frames_left` say how much
    of it the episode in flight may still use; the run is :attr:`exhausted` once an episode
    ends with nothing left.

    Args:
        spec: the protocol.
        game: the canonical game or level.
        run: the run id (it names the log file).
        env_id: the Gymnasium id, for the records.
        seed: the run's seed (default: set later with :meth:`note_seed`).
        algorithm: the agent's name, for the log header.
        settings: the environment settings, for the log header.
        deviations: settings that differ from the spec, written with every record.
        budget_steps: a tighter step budget than the spec's.
        budget_frames: a tighter frame budget than the spec's.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> rec = RunRecorder(load_spec("sonic"), "SonicTheHedgehog-GreenHillZone.Act1",
        ...                   run="0", budget_steps=10)
        >>> record = rec.finish(episode_return=5.0, steps=10, frames=40, end_reason="budget",
        ...                     complete=False, rollover_rewards=[], wall_time=0.1)
        >>> record["total_steps"], rec.exhausted, rec.steps_left()
        (10, True, 0)
    """

    def __init__(
        self,
        spec: Spec,
        game: str,
        *,
        run: str = "0",
        env_id: str | None = None,
        seed: int | None = None,
        algorithm: str | None = None,
        settings: dict[str, Any] | None = None,
        deviations: dict[str, Any] | None = None,
        budget_steps: int | None = None,
        budget_frames: int | None = None,
    ) -> None:
        self.spec = spec
        self.game = game
        self.run = check_run(run)
        self.env_id = env_id
        self.seed = seed
        self.algorithm = algorithm
        self.settings = dict(settings or {})
        self.deviations = dict(deviations or {})
        self.budget_steps = tightest(
            spec.evaluation.budget_steps, check_budget("budget_steps", budget_steps)
        )
        self.budget_frames = tightest(
            spec.evaluation.budget_frames, check_budget("budget_frames", budget_frames)
        )
        self.episode = 0  # index of the next episode
        self.complete_episodes = 0
        self.total_steps = 0  # of the finished episodes
        self.total_frames = 0
        self.exhausted = False
        self.last: EpisodeRecord | None = None
        self._log: LogFile | None = None

    # -- identity and log -----------------------------------------------------------------
    @property
    def identity(self) -> RunIdentity:
        """What every line of the run's log repeats about it."""
        spec = self.spec
        return RunIdentity(
            spec.name,
            spec.version,
            spec.hash,
            self.env_id,
            self.game,
            self.run,
            self.seed,
            self.algorithm,
            self.settings,
            self.deviations,
        )

    @property
    def log(self) -> Path | None:
        """The log file, or ``None`` when nothing is written."""
        return self._log.path if self._log is not None else None

    def note_seed(self, seed: int | None) -> None:
        """The run's seed is the first one it is given."""
        if self.seed is None and seed is not None:
            self.seed = int(seed)

    def open_log(self, path: str | os.PathLike, *, run: str | None = None, resume: bool) -> bool:
        """Start writing to ``path``; with ``resume``, continue the run logged there.

        Returns whether the log is new (empty): a new log still needs its header.

        Raises:
            ArcadebenchError: already logging, or the log holds episodes and ``resume`` is off.
            LogInUse: another writer holds the log.
            InputError: the existing log is corrupt or belongs to another spec.
        """
        if self._log is not None:
            raise ArcadebenchError(
                f"this environment already logs to {self._log.path}; one log per environment"
            )
        run = check_run(run if run is not None else self.run)
        log = LogFile(Path(path))
        try:
            previous = self._previous_run(log.path, run)
            if previous is not None and not resume:
                raise ArcadebenchError(
                    f"{log.path} already holds {len(previous.returns)} episodes of run {run!r}; "
                    "continue that run with resume=True (`arcadebench run --resume`), or start "
                    "a new one under another run id or log directory"
                )
        except BaseException:
            log.close()
            raise
        self._log, self.run = log, run
        if previous is not None:
            self.episode = len(previous.returns)
            self.complete_episodes = int(previous.complete.sum())
            self.total_steps = int(previous.total_steps[-1])
            self.total_frames = int(previous.total_frames[-1])
            self.exhausted = self._budget_used()
        return log.empty

    def _previous_run(self, path: Path, run: str) -> RunLog | None:
        """The run already in ``path``, or ``None``."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # deviations were reported when they were recorded
            runs = parse_log(self.spec, path)
        for found in runs:
            if found.game != self.game or found.run != run:
                raise ArcadebenchError(
                    f"{path} holds {found.game} run {found.run!r}, not {self.game} run {run!r}; "
                    "one log per run: pick another log file"
                )
        return runs[0] if runs else None

    def write_header(self, **extra: Any) -> None:
        """Write the log's header line (``extra`` goes before the package versions)."""
        if self._log is not None:
            header = header_record(
                self.identity, (self.budget_steps, self.budget_frames), package_versions(), **extra
            )
            self._log.append(header)

    def close(self) -> None:
        """Release the log (and its lock)."""
        if self._log is not None:
            self._log.close()
            self._log = None

    # -- the budget -----------------------------------------------------------------------
    def tighten_budget(self, steps: int | None = None, frames: int | None = None) -> None:
        """Tighten the run's budget (the runner's ``steps``); it can never exceed the spec's."""
        self.budget_steps = tightest(self.budget_steps, check_budget("steps", steps))
        self.budget_frames = tightest(self.budget_frames, check_budget("frames", frames))
        self.exhausted = self.exhausted or self._budget_used()

    def steps_left(self) -> int:
        """Agent steps the episode in flight may still take (:data:`NO_LIMIT` without budget)."""
        return NO_LIMIT if self.budget_steps is None else self.budget_steps - self.total_steps

    def frames_left(self) -> int:
        """Emulator frames the episode in flight may still use."""
        return NO_LIMIT if self.budget_frames is None else self.budget_frames - self.total_frames

    def _budget_used(self) -> bool:
        return self.steps_left() <= 0 or self.frames_left() <= 0

    def budget_message(self) -> str:
        """The one-line reason a run that used its budget may not go on."""
        used = []
        if self.budget_steps is not None:
            used.append(f"{self.total_steps:,} of {self.budget_steps:,} steps")
        if self.budget_frames is not None:
            used.append(f"{self.total_frames:,} of {self.budget_frames:,} frames")
        return (
            f"run {self.run!r} of {self.game} has used its budget ({' and '.join(used)}; "
            f"{self.spec.name} evaluation.budget): the protocol allows no more interaction; "
            "start a new run (another run id or log directory) to play on"
        )

    # -- episodes -------------------------------------------------------------------------
    def finish(
        self,
        *,
        episode_return: float,
        steps: int,
        frames: int,
        end_reason: str,
        complete: bool,
        rollover_rewards: list[float],
        wall_time: float,
    ) -> EpisodeRecord:
        """Add an episode that ended to the run: count it, log it, and return its record."""
        self.total_steps += steps
        self.total_frames += frames
        record = episode_record(
            self.identity,
            episode=self.episode,
            episode_return=episode_return,
            steps=steps,
            frames=frames,
            total_steps=self.total_steps,
            total_frames=self.total_frames,
            end_reason=end_reason,
            complete=complete,
            rollover_rewards=rollover_rewards,
            wall_time=wall_time,
        )
        if self._log is not None:
            self._log.append(record)
        self.last = record
        self.episode += 1
        self.complete_episodes += complete
        self.exhausted = self._budget_used()
        return record
