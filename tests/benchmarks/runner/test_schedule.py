"""The scheduler's bookkeeping when a worker is lost: what fails and what goes back to the queue.

The Ray cluster test kills a node for real (test_ray_cluster.py); these pin the rule it relies on
without the timing: work a lost worker had begun fails, work it had only been sent is given again
when the loss was not the agent's doing (``requeue_unstarted``), and fails otherwise.
"""

from __future__ import annotations

from arcadebench.benchmarks.runner.schedule import Scheduler
from arcadebench.benchmarks.runner.worker import Job


def lanes_job(seed: int, todo: tuple[int, ...], log_dir: str) -> Job:
    return Job("saber", "pong", seed, log_dir, None, "random", episodes=len(todo), todo=todo)


def whole_job(seed: int, log_dir: str) -> Job:
    return Job("saber", "pong", seed, log_dir, None, "random", episodes=2)


def reason(key: str, episode: int | None) -> str:
    return f"{key} lost at episode {episode}"


def sent(messages: list[tuple]) -> list[tuple[str, int]]:
    return [(m[0], m[2]) for m in messages if m[0] == "play"]


def test_a_lost_workers_unbegun_episodes_go_back_and_the_begun_one_fails(tmp_path):
    events: list[tuple] = []
    job = lanes_job(0, (0, 1, 2), str(tmp_path))
    scheduler = Scheduler([job], lanes=1, depth=2, on_event=events.append)  # Ray's depth
    scheduler.add_worker(0)
    assert sent(scheduler.fill()[0]) == [("play", 0), ("play", 1)]  # one index ahead
    scheduler.lost(0, reason, requeue_unstarted=True)  # sent, none begun
    assert not [e for e in events if e[0] == "failed"]
    scheduler.add_worker(1)
    assert sent(scheduler.fill()[1]) == [("play", 0), ("play", 1)]  # the same indices, in order
    scheduler.receive(1, ("episode_start", "pong/0", 0, 0))
    scheduler.lost(1, reason, requeue_unstarted=True)
    assert [e for e in events if e[0] == "failed"] == [
        ("failed", "pong/0", "pong/0 lost at episode 0")
    ]
    assert scheduler.finished


def test_a_worker_that_crashed_fails_even_what_it_had_not_begun(tmp_path):
    """No requeue for a crash: an agent that kills every worker must end the run, not loop."""
    events: list[tuple] = []
    scheduler = Scheduler([lanes_job(0, (0, 1), str(tmp_path))], lanes=1, on_event=events.append)
    scheduler.add_worker(0)
    scheduler.fill()
    scheduler.lost(0, reason)
    assert ("failed", "pong/0", "pong/0 lost at episode 0") in events and scheduler.finished


def test_a_whole_job_goes_back_until_an_episode_of_it_began(tmp_path):
    events: list[tuple] = []
    jobs = [whole_job(0, str(tmp_path)), whole_job(1, str(tmp_path))]
    scheduler = Scheduler(jobs, lanes=1, on_event=events.append)
    scheduler.add_worker(0)
    assert [m[1].key for m in scheduler.fill()[0]] == ["pong/0"]
    scheduler.lost(0, reason, requeue_unstarted=True)
    scheduler.add_worker(1)
    assert [m[1].key for m in scheduler.fill()[1]] == ["pong/0"]  # first again
    scheduler.receive(1, ("episode_start", "pong/0", 0))
    scheduler.receive(1, ("episode", "pong/0", {"complete": True}))
    scheduler.lost(1, reason, requeue_unstarted=True)  # between episodes: it had begun
    assert ("failed", "pong/0", "pong/0 lost at episode 0") in events
    assert not scheduler.finished  # pong/1 is still to play


def test_a_whole_job_that_reported_its_start_has_begun(tmp_path):
    """A learner's training sends ``start`` and ``steps``, no ``episode_start``: it has begun."""
    events: list[tuple] = []
    scheduler = Scheduler([whole_job(0, str(tmp_path))], lanes=1, on_event=events.append)
    scheduler.add_worker(0)
    scheduler.fill()
    scheduler.receive(0, ("ready",))  # loading the agent is not the job
    scheduler.receive(0, ("start", "pong/0", 0, 0, 0))
    scheduler.lost(0, reason, requeue_unstarted=True)
    assert ("failed", "pong/0", "pong/0 lost at episode None") in events and scheduler.finished
