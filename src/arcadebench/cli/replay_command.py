"""``arcadebench replay LOG --best --video best.mp4``: render a logged episode from its recording.

The episode is chosen by its log line (``--best`` and ``--worst`` by the log's return), then
played again; the video shows the replay. A log line is a claim, so where the replay disagrees
with it (it departs from its recording, or reaches another return, length, frame count or end
reason) the video is still written, and one line says what the log claims and what the replay
gives.

Exit status: 0 when the video was written and the replay agrees with the episode's log line; 1
when the video was written but the replay disagrees with it; 2 on bad input, before anything is
replayed where it can be known then (a LOG that is a directory or no file, no such episode, no
recording or a damaged one, a video format other than .mp4, .mkv or .gif, a --video path that
is a directory, under a file or in a folder that cannot be written).
"""

from __future__ import annotations

import argparse
import sys

from arcadebench.benchmarks.replay.video import Choice, render_episode
from arcadebench.cli import options

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` sub-command."""
    parser = options.add_command(
        subparsers,
        "replay",
        help="render a logged episode to a video (.mp4, .mkv, .gif)",
        description=(
            "Play one recorded episode of a log again in the spec's emulator and write its "
            "screens, at the protocol's pace, under a band with the return so far and the frame "
            "counter: .mp4 (mp4v, lossy), .mkv (FFV1, lossless) or .gif. Exit status 0 when the "
            "replay agrees with the episode's log line; 1 when it does not (the video, of the "
            "replay, is still written, and one line says what the log claims and what the "
            "replay gives); 2 on bad input."
        ),
        example="arcadebench replay results/random/saber/pong/0.jsonl --best --video best.mp4",
    )
    parser.add_argument("log", help="the episode log (.jsonl); its recording is beside it")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--episode",
        type=int,
        metavar="N",
        help="episode N (the runner's index, as its progress lines number them; else the "
        "stream's episode number)",
    )
    for end in ("best", "worst"):
        said = f"the complete recorded episode of {end} logged return"
        which.add_argument(f"--{end}", action="store_true", help=said)
    which.add_argument("--last", action="store_true", help="the last complete recorded episode")
    parser.add_argument(
        "--stream",
        type=int,
        default=0,
        metavar="N",
        help="the stream of --episode in a log of many (default: 0)",
    )
    parser.add_argument(
        "--video", required=True, metavar="FILE", help="where to write: .mp4, .mkv or .gif"
    )
    parser.add_argument(
        "--scale",
        type=int,
        default=2,
        metavar="N",
        help="screen pixels per game pixel (default: 2)",
    )
    parser.set_defaults(
        handler=_replay,
        python_words=options.python_words("scale", "video", "episode", log="LOG"),
    )


def _replay(args: argparse.Namespace) -> int:
    which: Choice | None = (
        "best" if args.best else "worst" if args.worst else "last" if args.last else None
    )
    passed = options.keywords(args, "episode", "stream", "scale")
    rendered = render_episode(args.log, args.video, which=which, **passed)
    print(
        f"{rendered.path}: {rendered.episode} of {args.log}, return {rendered.episode_return:g}, "
        f"{rendered.frames:,} frames, {rendered.images:,} images",
        file=sys.stderr,
    )
    if rendered.disagreement is not None:
        print(f"arcadebench: {rendered.disagreement}", file=sys.stderr)
        return 1
    return 0
