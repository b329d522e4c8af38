"""``arcadebench replay LOG --best --video best.mp4``: render a logged episode from its recording.

Exit status: 0 when the video was written, 2 on bad input (no such episode, no recording, a
video format other than .mp4, .mkv or .gif).
"""

from __future__ import annotations

import argparse
import sys

from arcadebench.benchmarks.replay.video import Choice, render_episode

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` sub-command."""
    parser = subparsers.add_parser(
        "replay",
        help="render a logged episode to a video from its recording (.mp4, .mkv, .gif)",
        description=(
            "Play one recorded episode of a log again in the spec's emulator and write its "
            "screens, at the protocol's pace, under a band with the return so far and the frame "
            "counter: .mp4 (mp4v, lossy), .mkv (FFV1, lossless) or .gif. Example: arcadebench "
            "replay results/random/saber/pong/0.jsonl --best --video best.mp4"
        ),
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
    which.add_argument("--best", action="store_true", help="the complete episode of best return")
    which.add_argument("--worst", action="store_true", help="the complete episode of worst return")
    which.add_argument("--last", action="store_true", help="the last complete episode")
    parser.add_argument(
        "--stream", type=int, default=0, help="the stream of --episode in a log of many (default 0)"
    )
    parser.add_argument("--video", required=True, help="where to write: .mp4, .mkv or .gif")
    parser.add_argument(
        "--scale", type=int, default=2, help="screen pixels per game pixel (default 2)"
    )
    parser.set_defaults(handler=_replay, python_words={"scale": "--scale", "video": "--video"})


def _replay(args: argparse.Namespace) -> int:
    which: Choice | None = (
        "best" if args.best else "worst" if args.worst else "last" if args.last else None
    )
    rendered = render_episode(
        args.log,
        args.video,
        episode=args.episode,
        stream=args.stream,
        which=which,
        scale=args.scale,
    )
    print(
        f"{rendered.path}: {rendered.episode} of {args.log}, return {rendered.episode_return:g}, "
        f"{rendered.frames:,} frames, {rendered.images:,} images",
        file=sys.stderr,
    )
    return 0
