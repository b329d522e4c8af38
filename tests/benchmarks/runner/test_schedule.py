"""The scheduler's bookkeeping when a worker is lost: what fails and what goes back to the queue.

The Ray cluster test kills a node for real (test_ray_cluster.py); these pin the rule it relies on
without the timing: work a lost worker had begun fails, work it had only been sent is given again
when the loss was not the agent's doing (``requeue_unstarted``), and fails otherwise.
"""

from __future__ import annotations

from arcadebench.benchmarks.runner.job import Job
from arcadebench.benchmarks.runner.messages import (
    EpisodeEnded,
    EpisodeStarted,
    Failure,
    FailureKind,
    JobFailed,
    JobStarted,
    PlayEpisode,
    PlayJob,
    Ready,
)
from arcadebench.benchmarks.runner.schedule import Scheduler


def lanes_job(seed: int, todo: tuple[int, ...], log_dir: str) -> Job:
    return Job("saber", "pong", seed, log_dir, "random", episodes=len(todo), todo=todo)


def whole_job(seed: int, log_dir: str) -> Job:
    return Job("saber", "pong", seed, log_dir, "random", episodes=2)


def reason(key: str, episode: int | None) -> Failure:
    return Failure(FailureKind.WORKER_DIED, f"{key} lost at episode {episode}")


def sent(orders: list) -> list[int]:
    return [order.index for order in orders if isinstance(order, PlayEpisode)]


def failed(events: list) -> list[tuple[str, str]]:
    return [(e.key, e.failure.message) for e in events if isinstance(e, JobFailed)]


def test_a_lost_workers_unbegun_episodes_go_back_and_the_begun_one_fails(tmp_path):
    events: list = []
    job = lanes_job(0, (0, 1, 2), str(tmp_path))
    scheduler = Scheduler([job], lanes=1, depth=2, on_event=events.append)  # Ray's depth
    scheduler.add_worker(0)
    assert sent(scheduler.fill()[0]) == [0, 1]  # one index ahead
    scheduler.lost(0, reason, requeue_unstarted=True)  # sent, none begun
    assert not failed(events)
    scheduler.add_worker(1)
    assert sent(scheduler.fill()[1]) == [0, 1]  # the same indices, in order
    scheduler.receive(1, EpisodeStarted("pong/0", 0, 0))
    scheduler.lost(1, reason, requeue_unstarted=True)
    assert failed(events) == [("pong/0", "pong/0 lost at episode 0")]
    assert scheduler.finished
    (outcome,) = scheduler.outcomes()
    assert outcome.failure is not None and outcome.failure.kind is FailureKind.WORKER_DIED


def test_a_worker_that_crashed_fails_even_what_it_had_not_begun(tmp_path):
    """No requeue for a crash: an agent that kills every worker must end the run, not loop."""
    events: list = []
    scheduler = Scheduler([lanes_job(0, (0, 1), str(tmp_path))], lanes=1, on_event=events.append)
    scheduler.add_worker(0)
    scheduler.fill()
    scheduler.lost(0, reason)
    assert ("pong/0", "pong/0 lost at episode 0") in failed(events) and scheduler.finished


def test_a_whole_job_goes_back_until_an_episode_of_it_began(tmp_path):
    events: list = []
    jobs = [whole_job(0, str(tmp_path)), whole_job(1, str(tmp_path))]
    scheduler = Scheduler(jobs, lanes=1, on_event=events.append)
    scheduler.add_worker(0)
    assert [m.job.key for m in scheduler.fill()[0] if isinstance(m, PlayJob)] == ["pong/0"]
    scheduler.lost(0, reason, requeue_unstarted=True)
    scheduler.add_worker(1)
    assert [m.job.key for m in scheduler.fill()[1] if isinstance(m, PlayJob)] == ["pong/0"]
    scheduler.receive(1, EpisodeStarted("pong/0", 0))
    scheduler.receive(1, EpisodeEnded("pong/0", {"complete": True}))
    scheduler.lost(1, reason, requeue_unstarted=True)  # between episodes: it had begun
    assert ("pong/0", "pong/0 lost at episode 0") in failed(events)
    assert not scheduler.finished  # pong/1 is still to play


def test_a_whole_job_that_reported_its_start_has_begun(tmp_path):
    """A learner's training reports its start and steps, no episode's: it has begun."""
    events: list = []
    scheduler = Scheduler([whole_job(0, str(tmp_path))], lanes=1, on_event=events.append)
    scheduler.add_worker(0)
    scheduler.fill()
    scheduler.receive(0, Ready())  # loading the agent is not the job
    scheduler.receive(0, JobStarted("pong/0", 0, 0, 0))
    scheduler.lost(0, reason, requeue_unstarted=True)
    assert ("pong/0", "pong/0 lost at episode None") in failed(events) and scheduler.finished
