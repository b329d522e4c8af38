"""The progress display's lines: what each job played, and which limit ended it."""

from __future__ import annotations

import io

from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.messages import (
    EpisodeEnded,
    EpisodeStarted,
    JobDone,
    JobStarted,
    Steps,
)
from arcadebench.benchmarks.runner.progress import RunProgress
from arcadebench.specs import load_spec


def episode(index, steps, frames, total_steps, total_frames, complete=True, end="game_over"):
    return {
        "episode": index,
        "index": index,
        "return": -21.0,
        "steps": steps,
        "frames": frames,
        "total_steps": total_steps,
        "total_frames": total_frames,
        "complete": complete,
        "end_reason": end,
        "wall_time": 1.5,
    }


def lines(spec, jobs, quota, unit, events):
    """What a run of ``events`` prints in lines mode, each line without its overall summary."""
    stream = io.StringIO()
    with RunProgress(jobs, quota, unit, spec=load_spec(spec), stream=stream, mode="lines") as shown:
        for event in events:
            shown(event)
    return [line.split("  [")[0] for line in stream.getvalue().splitlines()]


def test_a_step_quota_is_named_as_what_ended_the_job():
    job = Job("hwr", "breakout", 0, "logs", "random", steps=500)
    done = {"episodes": 1, "total_steps": 500, "total_frames": 2000, "budget": True}
    assert lines(
        "hwr",
        [job],
        500,
        "steps",
        [
            JobStarted("breakout/0", 0, 0, 0),
            EpisodeEnded("breakout/0", episode(0, 300, 1200, 300, 1200)),
            EpisodeEnded("breakout/0", episode(1, 200, 800, 500, 2000, False, "budget")),
            JobDone("breakout/0", done),
        ],
    ) == [
        "breakout/0 episode 0: return -21, 300 steps, 1,200 frames, 1.5 s",
        "breakout/0 episode 1: return -21, 200 steps, 800 frames, 1.5 s "
        "(incomplete: the 500-step quota is reached)",
        # was: "breakout/0 done: 1 episode, 2,000 frames (the protocol's budget is used up)"
        "breakout/0 done: 1 complete episode, 500 steps, 2,000 frames "
        "(the 500-step quota is reached)",
    ]


def test_an_episode_the_protocols_cap_ended_says_so():
    job = Job("saber", "pong", 0, "logs", "random", episodes=1)
    done = {"episodes": 1, "total_steps": 4500, "total_frames": 18000, "budget": False}
    assert lines(
        "saber",
        [job],
        1,
        "episodes",
        [
            JobStarted("pong/0", 0, 0, 0),
            EpisodeEnded("pong/0", episode(0, 4500, 18000, 4500, 18000, True, "stuck")),
            JobDone("pong/0", done),
        ],
    ) == [
        "pong/0 episode 0: return -21, 4,500 steps, 18,000 frames, 1.5 s "
        "(ended by the stuck limit: 18,000 frames without reward)",
        "pong/0 done: 1 episode, 4,500 steps, 18,000 frames (the 1-episode quota is reached)",
    ]


def test_a_learner_shows_its_training_then_its_evaluation_episodes():
    job = Job("atari100k", "pong", 0, "logs", "me", episodes=3, steps=2000)
    done = {"episodes": 3, "total_steps": 2400, "total_frames": 9600, "budget": False}
    evaluation = [
        EpisodeEnded("pong/0", episode(i, 800, 3200, 800 * (i + 1), 3200 * (i + 1)))
        for i in range(3)
    ]
    assert lines(
        "atari100k",
        [job],
        3,
        "episodes",
        [
            JobStarted("pong/0", 0, 0, 0),
            Steps("pong/0", 150, 600),  # below a tenth of 2,000 steps: no line
            Steps("pong/0", 512, 2048),  # 2 tenths
            Steps("pong/0", 1000, 4000),  # 5 tenths
            Steps("pong/0", 1024, 4096),  # still 5: no line
            Steps("pong/0", 2000, 8000),
            EpisodeStarted("pong/0", 0),
            *evaluation,
            JobDone("pong/0", done),
        ],
    ) == [
        "pong/0 training: 512 of 2,000 steps, 2,048 frames",
        "pong/0 training: 1,000 of 2,000 steps, 4,000 frames",
        "pong/0 training: 2,000 of 2,000 steps, 8,000 frames",
        "pong/0 trained: 2,000 steps, 8,000 frames (the 2,000-step quota is reached); "
        "now 3 evaluation episodes",
        "pong/0 episode 0: return -21, 800 steps, 3,200 frames, 1.5 s",
        "pong/0 episode 1: return -21, 800 steps, 3,200 frames, 1.5 s",
        "pong/0 episode 2: return -21, 800 steps, 3,200 frames, 1.5 s",
        "pong/0 done: 3 evaluation episodes, 2,400 steps, 9,600 frames "
        "(the 3-episode quota is reached)",
    ]


def test_a_policy_under_a_protocol_scored_after_training_plays_its_evaluation_only():
    job = Job("atari100k", "pong", 0, "logs", "random", episodes=100, phase="evaluation")
    done = {"episodes": 100, "total_steps": 80000, "total_frames": 320000, "budget": False}
    shown = lines(
        "atari100k",
        [job],
        100,
        "episodes",
        [JobStarted("pong/0", 0, 0, 0), Steps("pong/0", 512, 2048), JobDone("pong/0", done)],
    )
    assert shown == [
        "pong/0 done: 100 evaluation episodes, 80,000 steps, 320,000 frames "
        "(the protocol's 100 evaluation episodes are played)"
    ]


def test_the_frame_rate_counts_the_training_and_the_evaluation_frames():
    job = Job("atari100k", "pong", 0, "logs", "me", episodes=1, steps=2000)
    shown = RunProgress([job], 1, "episodes", spec=load_spec("atari100k"), mode="off")
    for event in [
        JobStarted("pong/0", 0, 0, 0),
        Steps("pong/0", 2000, 8000),
        EpisodeStarted("pong/0", 0),
        EpisodeEnded("pong/0", episode(0, 800, 3200, 800, 3200)),
    ]:
        shown(event)
    assert shown.frames["pong/0"] == 8000 + 3200  # the evaluation log counts from 0
    assert shown.completed == 1 and shown.training == {}
