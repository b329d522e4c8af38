"""The best and the worst episode of each game, replayed from the logs' recordings.

A table says an agent scored 21 on Pong's best episode and -21 on its worst; the report can
show both. Each result whose logs are at hand gets, per game, its best and its worst complete
recorded episode by the logs' returns (over every run of the game, the scored evaluation
episodes where the protocol scores after training), chosen by the rule ``arcadebench replay
--best`` and ``--worst`` use (:func:`~arcadebench.benchmarks.replay.video.choose_episode`), and
played again in the emulator from its recording
(:func:`~arcadebench.benchmarks.replay.video.episode_images`), so the pixels are the emulator's
own and no video had to be switched on during training. Each is a GIF at the emulator's
resolution, inlined in the page like the figures: the consoles' palettes have far fewer than
256 colours, so a GIF is lossless. An episode of more than :data:`MAX_IMAGES` agent steps keeps
every k-th screen, played k times faster, and says so; a 30-minute episode would otherwise be
tens of megabytes.

An episode that cannot be replayed (no recording, a damaged one, a custom spec's emulator not
here) never stops the report: the page says which and why. A clip whose replay disagrees with
its log line (another return, length or end reason, or a departure from its recording) is
shown, since it is what the recording plays, with a note saying what the log claims.

Classes: EpisodeClip.
Functions: write_episode_clips, remove_stale_clips.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from arcadebench.benchmarks.replay.logs import LoggedEpisode, RecordedRun, read_run
from arcadebench.benchmarks.replay.processes import map_on_cores
from arcadebench.benchmarks.replay.video import (
    choose_episode,
    disagreement,
    episode_images,
    frame_rate,
    write_frames,
)
from arcadebench.benchmarks.report.report_data import ReportData
from arcadebench.errors import ArcadebenchError, InvalidArgument
from arcadebench.records import RunLog
from arcadebench.specs import Spec, load_spec, spec_reference

__all__ = [
    "CLIP_PREFIX",
    "MAX_IMAGES",
    "EpisodeClip",
    "remove_stale_clips",
    "write_episode_clips",
]

MAX_IMAGES = 300
"""Screens kept of one episode at most (20 s at Atari's 15 steps a second)."""
CLIP_PREFIX = "episode_"
"""The clips' file names in the report directory start with it (stale ones are removed)."""


@dataclass(frozen=True)
class EpisodeClip:
    """One episode written as a GIF next to the report.

    Attributes:
        entry: the result's name in the report.
        game: the game or level.
        which: ``"best"`` or ``"worst"`` (an only episode is ``"best"``).
        log: the log it was played in.
        episode: how the log names it (:attr:`LoggedEpisode.name`).
        episode_return: the return the replay reached (the log's, unless a note says not).
        frames: the emulator frames of the episode.
        speed: every ``speed``-th screen is kept, so it plays ``speed`` times faster.
        path: the GIF.
    """

    entry: str
    game: str
    which: Literal["best", "worst"]
    log: Path
    episode: str
    episode_return: float
    frames: int
    speed: int
    path: Path


def write_episode_clips(
    data: ReportData, out: Path, workers: int | None = None
) -> tuple[list[EpisodeClip], list[str]]:
    """Replay the best and worst episode of every result's games into GIFs in ``out``.

    The episodes are replayed and encoded on ``workers`` processes (default: one per core):
    each clip is an emulator run of its own, and a 57-game result has 114 of them.

    Returns:
        The clips, in entry and game order, and a note for every episode that could not be
        shown or whose replay disagrees with its log line.
    """
    notes: list[str] = []
    if not any(entry.curves for entry in data.entries):
        notes.append(
            "no episode shown: the inputs hold no episode logs (episodes are replayed from the "
            "logs' recordings: give the logs or the run's directory, not only a score file)"
        )
    try:  # what a worker process loads the spec from (a Spec itself does not pickle)
        spec: Spec | str = spec_reference(data.spec)
    except InvalidArgument:  # a spec made from text: its clips are rendered here
        spec, workers = data.spec, 1
    tasks: list[_ClipTask] = []
    for number, entry in enumerate(data.entries):
        for game, logs in _logs_by_game(entry.curves).items():
            chosen, why = _candidates(logs)
            if why:
                notes.append(f"{entry.name}, {game}: no episode shown: {why}")
            for which, (run, episode) in chosen.items():
                path = out / f"{CLIP_PREFIX}{number}_{_slug(game)}_{which}.gif"
                steps = episode.replay.steps if episode.replay is not None else 0
                speed = max(1, math.ceil((steps + 1) / MAX_IMAGES))
                tasks.append(_ClipTask(spec, entry.name, game, which, run, episode, path, speed))
    clips: list[EpisodeClip] = []
    for task, (clip, problem) in zip(
        tasks, map_on_cores(_render, tasks, workers, _died), strict=True
    ):
        named = f"{task.episode.name} of {task.run.log}"
        where = f"{task.entry}, {task.game}: the {task.which} episode ({named})"
        if clip is None:
            notes.append(f"{where} cannot be replayed: {problem}")
            continue
        clips.append(clip)
        if problem is not None:
            notes.append(f"{where} does not replay as its log line says: {problem}")
    return clips, notes


@dataclass(frozen=True)
class _ClipTask:
    """One clip to render: what a worker process needs, and nothing of the report."""

    spec: Spec | str  # a spec_reference in another process
    entry: str
    game: str
    which: Literal["best", "worst"]
    run: RecordedRun
    episode: LoggedEpisode
    path: Path
    speed: int  # every speed-th screen is kept (MAX_IMAGES at most)


def _died(task: _ClipTask) -> tuple[EpisodeClip | None, str | None]:
    """What a clip whose replay killed its process shows: nothing, and why."""
    return None, "replaying it crashed the emulator's process"


def _render(task: _ClipTask) -> tuple[EpisodeClip | None, str | None]:
    """The episode replayed into a GIF at the task's path, and where it disagrees with its line.

    ``None`` and the error where it cannot be replayed.
    """
    episode, speed = task.episode, task.speed
    try:
        spec = load_spec(task.spec) if isinstance(task.spec, str) else task.spec
        images, outcome = episode_images(spec, task.run, episode, scale=1, every=speed)
        write_frames(images, task.path, frame_rate(task.run))
    except ArcadebenchError as error:
        return None, str(error)
    clip = EpisodeClip(
        task.entry,
        task.game,
        task.which,
        task.run.log,
        episode.name,
        outcome.episode_return,
        outcome.frames,
        speed,
        task.path,
    )
    return clip, disagreement(episode, outcome)


def remove_stale_clips(out: Path, clips: Iterable[EpisodeClip]) -> None:
    """Remove the clips in ``out`` of an earlier report that are not among ``clips``."""
    written = {clip.path for clip in clips}
    for stale in out.glob(f"{CLIP_PREFIX}*.gif"):
        if stale not in written:
            stale.unlink()


def _logs_by_game(runs: Iterable[RunLog]) -> dict[str, list[Path]]:
    """Each game's log files: the evaluation logs where the game has any (they are scored)."""
    by_game: dict[str, dict[Path, str]] = {}
    for run in runs:
        by_game.setdefault(run.game, {})[Path(run.file)] = run.phase
    return {
        game: [f for f, phase in files.items() if phase == "evaluation"] or list(files)
        for game, files in by_game.items()
    }


def _candidates(
    logs: list[Path],
) -> tuple[dict[Literal["best", "worst"], tuple[RecordedRun, LoggedEpisode]], str]:
    """The best and worst recorded complete episode over ``logs``, or why there is none."""
    runs: list[RecordedRun] = []
    unreadable: list[str] = []
    for log in logs:
        try:
            runs.append(read_run(log))
        except ArcadebenchError as error:
            unreadable.append(str(error))
    if not runs:
        return {}, unreadable[0]
    try:
        best = choose_episode(runs, which="best")
        worst = choose_episode(runs, which="worst")
    except ArcadebenchError as error:
        return {}, unreadable[0] if unreadable else str(error)
    chosen: dict[Literal["best", "worst"], tuple[RecordedRun, LoggedEpisode]] = {"best": best}
    if worst[1] is not best[1]:
        chosen["worst"] = worst
    return chosen, ""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-").lower() or "game"
