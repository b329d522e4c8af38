"""``arcadebench replay``: watch any logged episode after the fact, rendered from its recording.

Video usually has to be switched on before training (``RecordVideo``, SB3's
``VecVideoRecorder``) and costs time on every step, so it rarely is; the best episode, or the one
where the return collapsed, is then out of sight. A recorded episode
(:mod:`arcadebench.records.replay_format`) is played again instead (:mod:`~.simulate`), and its
screens written at the protocol's pace (60 frames a second over the frame skip: 15 for Atari's
4), each above a band with the return so far and the frame counter, so the game's pixels are
the emulator's own:

- ``.mp4``: OpenCV's ``mp4v`` (MPEG-4 Part 2: lossy, plays in common players);
- ``.mkv``: OpenCV's FFV1 (lossless);
- ``.gif``: Pillow (lossless: the consoles' palettes have far fewer than 256 colours; what the
  HTML report embeds). A GIF stores each frame's duration in centiseconds, so the durations are
  whole multiples of 10 ms whose running sum follows the protocol's clock (15 steps a second:
  70, 70, 60 ms, again and again), not one rounded duration that drifts by 5 % over a clip.

An episode is chosen by its number, or as the best, worst or last *complete recorded* episode
by its log's return (:func:`choose_episode`, which the report's best and worst clips use too, so
the two never pick different episodes). Its recording is decoded only when it is played. The
log's line is a claim and the replay is the evidence: where they disagree (the replay departs
from the recording, or reaches another return, length, frame count or end reason), the video
shows the replay and :attr:`Rendered.disagreement` says both, so an edited log line cannot pass
for the episode it names. Whatever is wrong with the inputs (the log, the output path, a damaged
recording) is a one-line error before anything is played where it can be known then.

Classes: Rendered.
Functions: choose_episode, disagreement, episode_images, frame_rate, gif_durations,
render_episode, write_frames.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from arcadebench.benchmarks.replay.logs import LoggedEpisode, RecordedRun, read_run
from arcadebench.errors import ArcadebenchError, InvalidArgument, MissingDependency, install_hint
from arcadebench.records import Replay, load_replay
from arcadebench.specs import Spec, list_specs, load_spec

if TYPE_CHECKING:  # pragma: no cover - the emulator is loaded when an episode is played
    from arcadebench.benchmarks.replay.simulate import Outcome, Player

__all__ = [
    "BAND",
    "Choice",
    "Rendered",
    "choose_episode",
    "disagreement",
    "episode_images",
    "frame_rate",
    "gif_durations",
    "render_episode",
    "write_frames",
]

Choice = Literal["best", "worst", "last"]
BAND = 24
"""Rows above the game's screen for the return and the frame counter."""
_FORMATS = (".mp4", ".mkv", ".gif")


@dataclass(frozen=True)
class Rendered:
    """An episode written to a video file.

    Attributes:
        path: the video.
        episode: how the log names the episode.
        episode_return: the return the replay reached.
        frames: the emulator frames the replay played.
        images: the images written.
        disagreement: where the replay disagrees with the episode's log line (``None``: it
            agrees); the video shows the replay.
    """

    path: Path
    episode: str
    episode_return: float
    frames: int
    images: int
    disagreement: str | None = None


# -- which episode ---------------------------------------------------------------------------
def choose_episode(
    runs: RecordedRun | Sequence[RecordedRun],
    *,
    episode: int | None = None,
    stream: int = 0,
    which: Choice | None = None,
) -> tuple[RecordedRun, LoggedEpisode]:
    """The episode to render, and its run: number ``episode``, or the best, worst or last one.

    ``episode`` is the runner's index where the log has one (what its progress lines call the
    episode), else the episode number of stream ``stream`` (the first run's that has it).
    ``best`` and ``worst`` rank the complete recorded episodes by their logs' return, ties going
    to the earlier one (the first run's, then the first line's); ``last`` (the default) is the
    last of them.

    Raises:
        ArcadebenchError: no such episode, or none with a recording.
    """
    runs = [runs] if isinstance(runs, RecordedRun) else list(runs)
    where = str(runs[0].log) if len(runs) == 1 else f"the {len(runs)} logs"
    recorded = [(run, e) for run in runs for e in run.episodes if e.replay is not None]
    if not recorded:
        raise ArcadebenchError(
            f"{where} has no recorded episode (written with record_actions=False, or before "
            "arcadebench recorded episodes): there is nothing to replay"
        )
    if episode is not None:
        return _numbered(recorded, episode, stream, where)
    complete = [(run, e) for run, e in recorded if e.record.get("complete") is True]
    if not complete:
        raise ArcadebenchError(
            f"{where} has no complete episode with a recording (its {len(recorded)} recorded "
            "one(s) were cut short by the budget or a reset): choose one by number, episode=N"
        )
    if which == "best":
        return max(complete, key=lambda pair: float(pair[1].record["return"]))
    if which == "worst":
        return min(complete, key=lambda pair: float(pair[1].record["return"]))
    return complete[-1]


def _numbered(
    recorded: list[tuple[RecordedRun, LoggedEpisode]], episode: int, stream: int, where: str
) -> tuple[RecordedRun, LoggedEpisode]:
    """The recorded episode of index ``episode``, else of number ``episode`` in ``stream``."""
    for run, found in recorded:
        if found.index is not None:
            if found.index == episode:
                return run, found
        elif found.key == (stream, episode):
            return run, found
    raise ArcadebenchError(
        f"{where} has no recorded episode {episode}"
        + (f" in stream {stream}" if stream else "")
        + f"; it has {len(recorded)}: choose with --best, --worst or --last"
    )


# -- rendering -------------------------------------------------------------------------------
def render_episode(
    log: str | os.PathLike[str],
    video: str | os.PathLike[str],
    *,
    episode: int | None = None,
    stream: int = 0,
    which: Choice | None = None,
    scale: int = 2,
) -> Rendered:
    """Replay one episode of ``log`` and write it to ``video`` (module docstring).

    The video is written even where the replay disagrees with the episode's log line; the
    result says so (:attr:`Rendered.disagreement`).

    Raises:
        InvalidArgument: a video format other than .mp4, .mkv or .gif, a video path that cannot
            be written (a directory, under a file, a folder this user cannot write), a bad
            ``scale``, or a ``log`` that is no log file.
        ArcadebenchError: no such episode, or it cannot be replayed (a damaged recording, a
            start the emulator refuses).
    """
    path = _video_path(video)
    if type(scale) is not int or not 1 <= scale <= 8:
        raise InvalidArgument(f"`scale` must be an integer from 1 to 8, got {scale!r}")
    run = read_run(_log_path(log))
    name = run.spec_name
    if name is None or name not in list_specs():
        raise ArcadebenchError(
            f"{run.log}: its header names no built-in spec ({name!r}), so its emulator settings "
            "are unknown here"
        )
    run, target = choose_episode(run, episode=episode, stream=stream, which=which)
    images, outcome = episode_images(load_spec(name), run, target, scale=scale)
    write_frames(images, path, frame_rate(run))
    differs = disagreement(target, outcome)
    if differs is not None:
        differs = f"{target.name} of {run.log} does not replay as its log line says: {differs}"
    return Rendered(path, target.name, outcome.episode_return, outcome.frames, len(images), differs)


def _video_path(video: str | os.PathLike[str]) -> Path:
    """``video`` as a path that can be written, checked before anything is played."""
    path = Path(video)
    if path.suffix.lower() not in _FORMATS:
        raise InvalidArgument(f"`video` must end in {', '.join(_FORMATS)}, got {str(video)!r}")
    rule = f"`video` must be a file path this user can write, got {str(video)!r}"
    try:
        problem = _unwritable(path)
    except OSError as error:
        problem = f"{error.filename or path}: {error.strerror or error}"
    if problem is not None:
        raise InvalidArgument(f"{rule}: {problem}")
    return path


def _unwritable(path: Path) -> str | None:
    """Why a video cannot be written at ``path`` (its folders made as needed), or ``None``."""
    if path.is_dir():
        return "it is a directory; name a file in it"
    folder = next(p for p in (path.parent, *path.parent.parents) if p.exists())
    if not folder.is_dir():
        return f"{folder} is a file, so no folder can be made there"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{folder} is not writable"
    if path.exists() and not os.access(path, os.W_OK):
        return f"{path} is not writable"
    path.parent.mkdir(parents=True, exist_ok=True)  # where permissions do not tell (/proc)
    return None


def _log_path(log: str | os.PathLike[str]) -> Path:
    """``log`` as an existing episode log file (what to pass instead where it is not)."""
    path = Path(log)
    rule = f"`log` must be an episode log file (.jsonl), got {str(log)!r}"
    if path.is_dir():
        inside = next(iter(sorted(path.rglob("*.jsonl"))), None)
        example = f", such as {inside}" if inside is not None else " (it holds none)"
        raise InvalidArgument(f"{rule}: a directory; pass one of its logs{example}")
    if not path.is_file():
        raise InvalidArgument(f"{rule}: no such file")
    return path


def frame_rate(run: RecordedRun) -> float:
    """The protocol's pace in agent steps a second: 60 frames over the run's frame skip."""
    return 60.0 / max(1, int(run.header.get("settings", {}).get("frameskip", 4)))


def disagreement(episode: LoggedEpisode, outcome: Outcome) -> str | None:
    """Where ``outcome``, the replay of ``episode``, disagrees with its log line, or ``None``.

    The line claims a return, a length, frames and (for a complete episode) an end reason; the
    replay must reach them without departing from the recording's rewards and states.

    Example:
        >>> from arcadebench.benchmarks.replay.simulate import Outcome
        >>> line = LoggedEpisode(2, {"episode": 0, "return": 9.0, "steps": 5, "frames": 20,
        ...     "complete": True, "end_reason": "game_over"}, None)
        >>> disagreement(line, Outcome(2.0, 5, 20, "game_over", None))
        'the log says return 9, the replay gives return 2'
    """
    record = episode.record
    compared = [
        ("return", float(record["return"]), outcome.episode_return),
        ("steps", record["steps"], outcome.steps),
        ("frames", record["frames"], outcome.frames),
        ("end reason", _ending(record), outcome.end_reason),
    ]
    differ = [(what, logged, found) for what, logged, found in compared if logged != found]
    parts = []
    if differ:
        said = ", ".join(f"{what} {_shown(logged)}" for what, logged, _ in differ)
        gives = ", ".join(f"{what} {_shown(found)}" for what, _, found in differ)
        parts.append(f"the log says {said}, the replay gives {gives}")
    if outcome.departed is not None:
        step, what = outcome.departed
        parts.append(f"the replay departs from its recording at step {step}: {what}")
    return "; ".join(parts) or None


def _ending(record: Any) -> str | None:
    """The end reason a line claims: a complete episode's own, else none (it was cut)."""
    return record.get("end_reason") if record.get("complete") else None


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.10g}"
    return "none (the recording ends first)" if value is None else str(value)


def episode_images(
    spec: Spec, run: RecordedRun, target: LoggedEpisode, *, scale: int = 2, every: int = 1
) -> tuple[list[np.ndarray], Outcome]:
    """Replay ``target`` (after the episodes it continues) and keep every ``every``-th screen.

    Each screen kept is scaled up ``scale`` times under the band with the return so far and
    the frame counter; the last screen played is always kept, so the final return shows. Each
    recording is decoded just before it is played.

    Raises:
        ArcadebenchError: it cannot be replayed (a damaged recording, a start or action the
            emulator refuses, a header no environment can be made of).
    """
    screens = _Screens(scale, every)
    player: Player | None = None
    previous: str | None = None
    try:
        for found in run.chain(target):
            replay = _decoded(run, found)
            if player is None:  # the run's settings, rendering RGB screens
                from arcadebench.benchmarks.replay.simulate import Player

                player = Player(spec, run.header, replay.engine, "rgb", replay.digests)
            outcome = player.play(replay, previous, screens if found is target else None)
            previous = str(found.record.get("end_reason"))
    finally:
        if player is not None:
            player.close()
    return screens.finish(), outcome


def _decoded(run: RecordedRun, found: LoggedEpisode) -> Replay:
    """The recording of ``found``, decoded now (a damaged one is a one-line error)."""
    if found.replay is None:  # pragma: no cover - a chain holds recorded episodes
        raise ArcadebenchError(f"{found.name} of {run.log} has no recording")
    try:
        return load_replay(run.replay_file, found.replay)
    except ArcadebenchError as error:
        raise ArcadebenchError(
            f"the recording of {found.name} of {run.log} is damaged ({run.replay_file} line "
            f"{found.replay.line}: {error}): it cannot be replayed"
        ) from None


class _Screens:
    """The ``on_frame`` of a replay: every ``every``-th screen under its band, and the last."""

    def __init__(self, scale: int, every: int) -> None:
        self.scale, self.every = scale, max(1, every)
        self.images: list[np.ndarray] = []
        self._frame = 0
        self._pending: tuple[np.ndarray, float, int] | None = None

    def __call__(self, obs: Any, step: int, total: float, info: dict[str, Any]) -> None:
        frames = np.asarray(info.get("episode_frame_number", self._frame)).reshape(-1)
        self._frame = int(frames[0])
        screen = np.array(obs)
        self._pending = (screen.reshape(screen.shape[-3:]), total, self._frame)
        if step % self.every == 0:
            self._flush()

    def _flush(self) -> None:
        if self._pending is not None:
            self.images.append(_with_band(*self._pending, self.scale))
            self._pending = None

    def finish(self) -> list[np.ndarray]:
        """The images kept, the last screen played included."""
        self._flush()
        return self.images


def _with_band(screen: np.ndarray, total: float, frame: int, scale: int) -> np.ndarray:
    """The screen scaled up, under a band with the return and the frame counter (RGB)."""
    import cv2

    if screen.ndim == 2:
        screen = np.repeat(screen[:, :, None], 3, axis=2)
    big = np.repeat(np.repeat(screen, scale, axis=0), scale, axis=1)
    band = np.zeros((BAND, big.shape[1], 3), dtype=np.uint8)
    text = f"return {total:g}   frame {frame:,}"
    cv2.putText(band, text, (4, BAND - 7), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 255), 1)
    return np.concatenate([band, big], axis=0)


# -- writing ---------------------------------------------------------------------------------
def gif_durations(count: int, fps: float) -> list[int]:
    """Each of ``count`` GIF frames' duration in ms: whole centiseconds on the ``fps`` clock.

    Frame ``i`` starts at ``i * 1000 / fps`` ms rounded up to the centisecond, so the running
    sum never drifts from the protocol's clock by 10 ms or more.

    Example:
        >>> gif_durations(6, 15.0)
        [70, 70, 60, 70, 70, 60]
    """
    starts = [math.ceil(round(i * 100 / fps, 6)) * 10 for i in range(count + 1)]
    return [after - before for before, after in zip(starts, starts[1:], strict=False)]


def write_frames(images: Sequence[np.ndarray], path: Path, fps: float) -> None:
    """Write RGB ``images`` to ``path`` (its suffix chooses the format: module docstring).

    Raises:
        MissingDependency: a GIF without Pillow.
        ArcadebenchError: the video cannot be written there.
    """
    if not images:
        raise ArcadebenchError(f"no frame to write to {path}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix.lower() == ".gif":
            _write_gif(images, path, fps)
        else:
            _write_video(images, path, fps)
    except OSError as error:
        raise ArcadebenchError(
            f"the video cannot be written to {path}: {error.strerror or error}"
        ) from None


def _write_gif(images: Sequence[np.ndarray], path: Path, fps: float) -> None:
    try:
        from PIL import Image
    except ImportError:
        raise MissingDependency("a GIF needs Pillow: " + install_hint("report", "pillow")) from None
    indexed = palette_indices(images)
    if indexed is None:  # more colours than a GIF's palette: Pillow chooses 256 a frame
        pictures = [Image.fromarray(image) for image in images]
    else:
        palette, frames = indexed
        pictures = []
        for frame in frames:
            picture = Image.fromarray(frame, mode="P")
            picture.putpalette(palette.tobytes())
            pictures.append(picture)
    pictures[0].save(
        path,
        save_all=True,
        append_images=pictures[1:],
        duration=gif_durations(len(pictures), fps),
        loop=0,
    )


def palette_indices(
    images: Sequence[np.ndarray],
) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """One palette for every image, and each image as indices into it; ``None`` past 256 colours.

    Console screens have few colours (the Atari 2600's palette has 128, an episode shows a
    few dozen), so one palette holds an episode exactly and the GIF is lossless, without
    Pillow's per-frame colour reduction, which took most of a clip's time. Each colour is looked
    up in a table of all 2**24, so the work is two passes over the pixels.

    Example:
        >>> red, blue = np.array([[[255, 0, 0]]], np.uint8), np.array([[[0, 0, 255]]], np.uint8)
        >>> palette, frames = palette_indices([red, blue])
        >>> palette.tolist(), [f.tolist() for f in frames]
        ([[0, 0, 255], [255, 0, 0]], [[[1]], [[0]]])
    """
    codes = [
        (image[..., 0].astype(np.uint32) << 16)
        | (image[..., 1].astype(np.uint32) << 8)
        | image[..., 2]
        for image in images
    ]
    present = np.zeros(1 << 24, dtype=bool)
    for code in codes:
        present[code] = True
    colours = np.flatnonzero(present)
    if len(colours) > 256:
        return None
    table = np.zeros(1 << 24, dtype=np.uint8)
    table[colours] = np.arange(len(colours), dtype=np.uint8)
    palette = np.stack([colours >> 16, (colours >> 8) & 255, colours & 255], axis=1)
    return palette.astype(np.uint8), [table[code] for code in codes]


def _write_video(images: Sequence[np.ndarray], path: Path, fps: float) -> None:
    import cv2

    fourcc = "FFV1" if path.suffix.lower() == ".mkv" else "mp4v"
    height, width = images[0].shape[:2]
    code = cv2.VideoWriter.fourcc(*fourcc)
    writer = cv2.VideoWriter(str(path), code, fps, (width, height))
    if not writer.isOpened():
        raise ArcadebenchError(f"OpenCV cannot write a {fourcc} video to {path}; try a .gif")
    try:
        for image in images:
            writer.write(cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    finally:
        writer.release()
