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
  HTML report embeds).

Classes: Rendered.
Functions: choose_episode, episode_images, frame_rate, render_episode, write_frames.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from arcadebench.benchmarks.replay.logs import LoggedEpisode, RecordedRun, read_run
from arcadebench.errors import ArcadebenchError, InvalidArgument, MissingDependency, install_hint
from arcadebench.specs import Spec, list_specs, load_spec

if TYPE_CHECKING:  # pragma: no cover - the emulator is loaded when an episode is played
    from arcadebench.benchmarks.replay.simulate import Outcome

__all__ = [
    "BAND",
    "Choice",
    "Rendered",
    "choose_episode",
    "episode_images",
    "frame_rate",
    "render_episode",
    "write_frames",
]

Choice = Literal["best", "worst", "last"]
BAND = 24
"""Rows above the game's screen for the return and the frame counter."""
_FORMATS = (".mp4", ".mkv", ".gif")


@dataclass(frozen=True)
class Rendered:
    """An episode written to a video file."""

    path: Path
    episode: str
    episode_return: float
    frames: int
    images: int


def choose_episode(
    run: RecordedRun,
    *,
    episode: int | None = None,
    stream: int = 0,
    which: Choice | None = None,
) -> LoggedEpisode:
    """The episode to render: number ``episode``, or the ``best``, ``worst`` or ``last`` one.

    ``episode`` is the runner's index where the log has one (what its progress lines call the
    episode), else the episode number of stream ``stream``; ``best``, ``worst`` and ``last`` look
    at the complete episodes.

    Raises:
        ArcadebenchError: no such episode, or none with a recording.
    """
    recorded = [e for e in run.episodes if e.replay is not None]
    if not recorded:
        raise ArcadebenchError(
            f"{run.log} has no recorded episode (a log written with record_actions=False, or "
            "before recordings): there is nothing to replay"
        )
    if episode is not None:
        for found in recorded:
            number = found.record.get("index", found.record["episode"])
            if number == episode and (
                found.record.get("index") is not None or found.key[0] == stream
            ):
                return found
        raise ArcadebenchError(
            f"{run.log} has no recorded episode {episode}"
            + (f" in stream {stream}" if stream else "")
            + f"; it has {len(recorded)}: choose with --best, --worst or --last"
        )
    complete = [e for e in recorded if e.record.get("complete")] or recorded
    if which == "best":
        return max(complete, key=lambda e: float(e.record["return"]))
    if which == "worst":
        return min(complete, key=lambda e: float(e.record["return"]))
    return complete[-1]


def _chain(run: RecordedRun, target: LoggedEpisode) -> list[LoggedEpisode]:
    """``target`` and the episodes it continues, first to last (they are replayed first)."""
    by_key = {e.key: e for e in run.episodes}
    chain = [target]
    while chain[0].replay is not None and "continues" in chain[0].replay.start:
        key = (chain[0].key[0], int(chain[0].replay.start["continues"]))
        if key not in by_key:
            raise ArcadebenchError(
                f"{target.name} of {run.log} continues episode {key[1]}, whose recording is "
                "missing: it cannot be replayed"
            )
        chain.insert(0, by_key[key])
    return chain


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

    Raises:
        InvalidArgument: a video format other than .mp4, .mkv or .gif, or a bad ``scale``.
        ArcadebenchError: no such episode, or it cannot be replayed.
    """
    path = Path(video)
    if path.suffix.lower() not in _FORMATS:
        raise InvalidArgument(f"`video` must end in {', '.join(_FORMATS)}, got {str(video)!r}")
    if type(scale) is not int or not 1 <= scale <= 8:
        raise InvalidArgument(f"`scale` must be an integer from 1 to 8, got {scale!r}")
    run = read_run(log)
    name = run.spec_name
    if name is None or name not in list_specs():
        raise ArcadebenchError(
            f"{run.log}: its header names no built-in spec ({name!r}), so its emulator settings "
            "are unknown here"
        )
    target = choose_episode(run, episode=episode, stream=stream, which=which)
    images, outcome = episode_images(load_spec(name), run, target, scale=scale)
    write_frames(images, path, frame_rate(run))
    return Rendered(path, target.name, outcome.episode_return, outcome.frames, len(images))


def frame_rate(run: RecordedRun) -> float:
    """The protocol's pace in agent steps a second: 60 frames over the run's frame skip."""
    return 60.0 / max(1, int(run.header.get("settings", {}).get("frameskip", 4)))


def episode_images(
    spec: Spec, run: RecordedRun, target: LoggedEpisode, *, scale: int = 2, every: int = 1
) -> tuple[list[np.ndarray], Outcome]:
    """Replay ``target`` (after the episodes it continues) and keep every ``every``-th screen.

    Each screen kept is scaled up ``scale`` times under the band with the return so far and
    the frame counter; the last screen is always kept, so the final return shows.

    Raises:
        ArcadebenchError: it cannot be replayed.
    """
    from arcadebench.benchmarks.replay.simulate import Player

    chain = _chain(run, target)
    engine = target.replay.engine if target.replay is not None else "single"
    player = Player(spec, run.header, engine, obs_type="rgb")
    images: list[np.ndarray] = []
    last = len(target.replay.actions) if target.replay is not None else 0
    frame_numbers = [0]

    def keep(obs: Any, step: int, total: float, info: dict[str, Any]) -> None:
        frames = np.asarray(info.get("episode_frame_number", frame_numbers[-1])).reshape(-1)
        frame_numbers.append(int(frames[0]))
        if step % every and step != last:
            return
        screen = np.asarray(obs).reshape(np.asarray(obs).shape[-3:])
        images.append(_with_band(screen, total, frame_numbers[-1], scale))

    try:
        previous: str | None = None
        for found in chain:
            recording = found.replay
            if recording is None:  # pragma: no cover - a chain holds recorded episodes
                raise ArcadebenchError(f"{found.name} has no recording")
            outcome = player.play(recording, previous, keep if found is target else None)
            previous = str(found.record.get("end_reason"))
    finally:
        player.close()
    return images, outcome


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


def write_frames(images: Sequence[np.ndarray], path: Path, fps: float) -> None:
    """Write RGB ``images`` to ``path`` (its suffix chooses the format: module docstring).

    Raises:
        MissingDependency: a GIF without Pillow.
        ArcadebenchError: the video cannot be written there.
    """
    if not images:
        raise ArcadebenchError(f"no frame to write to {path}")
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".gif":
        try:
            from PIL import Image
        except ImportError:
            raise MissingDependency(
                "a GIF needs Pillow: " + install_hint("report", "pillow")
            ) from None
        pictures = [Image.fromarray(image) for image in images]
        pictures[0].save(
            path, save_all=True, append_images=pictures[1:], duration=round(1000 / fps), loop=0
        )
        return
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
