"""A run held by one process, its streams relayed: one log, the holder's totals, one budget.

The transport is Ray's in a cluster (tests/benchmarks/training/); here the holder and the
streams run in this process and the calls are made by hand, so the order of every report and
line is known and the budget's bound is checked exactly: streams playing at the same pace stop
within one step each of the budget, an idle stream within the steps it was granted.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from log_helpers import records
from testdata import DATA

from arcadebench.benchmarks.envs.factory import make_protocol_env
from arcadebench.errors import BudgetExhausted, InputError
from arcadebench.records import Relay, RunHolder, RunReceiver, RunRecorder, log_path
from arcadebench.specs import load_spec
from arcadebench.wrappers.monitor import find_monitor

SPEC = load_spec(DATA / "specs" / "ray_training.yaml")  # 400-frame episodes, budget 4,000 frames
BUDGET, FRAMES_PER_STEP, SYNC = 4000, 4, 16


class Stream:
    """A protocol env whose episodes go to ``holder`` (what an env creator builds on a node)."""

    def __init__(self, holder: RunHolder, seed: int) -> None:
        self.env = make_protocol_env(SPEC, "pong", log_dir=False, obs_type="ram")
        self.monitor = find_monitor(self.env)
        self.monitor.set_budget(frames=holder.budget_frames)
        start = holder.join()
        self.slot = start.slot
        self.reports: list[int] = []  # the stream's steps at each report (a line is one too)

        def report(steps, frames):
            self.reports.append(steps)
            return holder.report(self.slot, steps, frames)

        def send(line):
            self.reports.append(self.monitor.recorder.total_steps)
            return holder.append(self.slot, line)

        relay = Relay(
            start,
            send,
            report,
            lambda: holder.leave(self.slot),
        )
        self.monitor.open_log(holder.log, relay=relay)
        self.rng = np.random.default_rng(seed)
        self.env.reset(seed=seed)
        self.stopped = False

    def step(self) -> None:
        """One random step; the run's budget ends the stream."""
        *_, terminated, truncated, info = self.env.step(int(self.rng.integers(18)))
        if info["arcadebench"].get("end_reason") == "budget":
            self.stopped = True
        elif terminated or truncated:
            _, info = self.env.reset()  # after an episode that used the budget up, none starts
            self.stopped = bool(info.get("arcadebench", {}).get("budget_exhausted"))


def holder_of(tmp_path, **kwargs) -> RunHolder:
    return RunHolder(
        SPEC, "pong", "0", log_path(tmp_path, SPEC.name, "pong", "0"), resume=False, **kwargs
    )


def test_streams_at_the_same_pace_are_one_run_stopped_within_a_step_each(tmp_path):
    holder = holder_of(tmp_path, sync_steps=SYNC)
    streams = [Stream(holder, seed) for seed in (0, 1)]
    while not all(s.stopped for s in streams):
        for stream in streams:
            if not stream.stopped:
                stream.step()
    for stream in streams:
        with pytest.raises(BudgetExhausted):
            stream.env.step(0)
        stream.env.close()
    held = holder.totals()
    holder.close()

    lines = records(holder.log)
    assert [r["kind"] for r in lines].count("header") == 1 and lines[0]["kind"] == "header"
    episodes = lines[1:]
    assert {r["env"] for r in episodes} == {0, 1}
    for env in (0, 1):
        mine = [r for r in episodes if r["env"] == env]
        assert [r["episode"] for r in mine] == list(range(len(mine)))
    totals = [r["total_frames"] for r in episodes]
    assert totals == sorted(totals)  # the holder's totals, whichever stream's line came
    # every frame is in a logged episode, and the budget stopped both within a step each
    assert totals[-1] == sum(r["frames"] for r in episodes) == held[1]
    assert BUDGET <= totals[-1] < BUDGET + 2 * FRAMES_PER_STEP
    # a stream reports at most every SYNC steps (the second one first after its first step)
    assert streams[0].reports[0] == 0 and streams[1].reports[0] == 1  # the first: its header
    for stream in streams:
        assert max(np.diff([0, *stream.reports])) <= SYNC


def test_an_idle_stream_plays_at_most_what_it_was_granted(tmp_path):
    holder = holder_of(tmp_path, sync_steps=SYNC)
    busy, idle = Stream(holder, 0), Stream(holder, 1)
    idle.step()  # its first report: it may now play up to SYNC steps unreported
    while not busy.stopped:
        busy.step()
    over = holder.totals()[1]
    assert over >= BUDGET  # the busy stream played on until the holder's count reached it
    played = 0
    while not idle.stopped:
        idle.step()
        played += 1
    assert played <= SYNC
    final = records(holder.log)[-1]["total_frames"]
    assert final <= over + SYNC * FRAMES_PER_STEP
    for stream in (busy, idle):
        stream.env.close()
    holder.close()


def test_one_header_and_only_held_streams(tmp_path):
    holder = holder_of(tmp_path)
    first, second = holder.join(), holder.join()
    assert first.header and second.header  # no header has arrived yet: both may send one
    header = json.dumps({"kind": "header", "run": "0"}) + "\n"
    holder.append(second.slot, header.encode())
    holder.append(first.slot, header.encode())  # a second header is dropped
    with pytest.raises(InputError, match="this holder holds stream 0, 1, got a record of stream 7"):
        holder.report(7, 10, 40)
    holder.leave(second.slot)
    assert holder.join().slot == second.slot  # a left stream's slot is free again
    holder.close()
    assert holder.log.read_text() == header


def test_streams_of_one_run_on_two_receivers_write_its_header_first(tmp_path):
    """The Ray runner's shape: each stream of a job has a receiver (a holder) of its own."""
    log = log_path(tmp_path, SPEC.name, "pong", "0")
    receivers = [RunReceiver(SPEC, "pong", "0", log, resume=False) for _ in range(2)]
    assert [r.start.header for r in receivers] == [True, True]  # no header written yet
    players = []
    for receiver in reversed(receivers):  # the second stream's lines arrive first
        player = RunRecorder(SPEC, "pong")
        player.open(log, resume=False, relay=Relay(receiver.start, receiver.append))
        player.finish(
            episode_return=1.0, steps=10, frames=40, end_reason="game_over", complete=True,
            rollover_rewards=[], wall_time=0.1,
        )  # fmt: skip
        players.append(player)
    for player in players:
        player.close()
    for receiver in receivers:
        receiver.close()
    found = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["kind"], r.get("env")) for r in found] == [
        ("header", None),
        ("episode", 1),
        ("episode", 0),
    ]
