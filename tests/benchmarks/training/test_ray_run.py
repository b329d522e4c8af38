"""A training run on Ray with the suite's own gymnasium (the newest): owner, env creator, budget.

The cluster tests (test_ray_cluster_training.py) run RLlib and the Ape-X example on two nodes in
RLlib's environment (gymnasium 1.2.2). Here a local Ray instance holds the run's owner (an
actor), and this process builds the environments with the run's env creator, as the driver's
own env runner would: two streams of one run, stopped by the budget within a step each, the
one made for RLlib idling afterwards; then the run is continued by a new owner with
``resume=True``, and refused without it.
"""

from __future__ import annotations

import numpy as np
import pytest
from log_helpers import records
from testdata import DATA

from arcadebench.errors import ArcadebenchError, BudgetExhausted, InvalidArgument
from arcadebench.records import RunHolder

ray = pytest.importorskip("ray", reason="a training run on Ray needs `pip install ray`")

from arcadebench.benchmarks.training.ray_run import RayRun, RLlibObservation  # noqa: E402

SPEC = DATA / "specs" / "ray_training.yaml"  # 400-frame episodes, checkpoints 1,600 and 3,200
FRAMES_PER_STEP = 4


@pytest.fixture(scope="module")
def local_ray():
    ray.init(
        address="local",
        num_cpus=1,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    yield
    ray.shutdown()


def play(envs, rng):
    """Random steps round the envs until the budget stops each; the steps each played."""
    stopped, steps = [False] * len(envs), [0] * len(envs)
    while not all(stopped):
        for i, env in enumerate(envs):
            if stopped[i]:
                continue
            *_, terminated, truncated, info = env.step(int(rng.integers(18)))
            steps[i] += 1
            if info["arcadebench"].get("end_reason") == "budget":
                stopped[i] = True
            elif terminated or truncated:
                _, info = env.reset()
                stopped[i] = bool(info.get("arcadebench", {}).get("budget_exhausted"))
    return steps


def test_a_run_on_ray_is_one_log_stopped_by_its_budget_and_continued_by_resume(tmp_path, local_ray):
    rng = np.random.default_rng(0)
    with RayRun(SPEC, "pong", tmp_path, budget_frames=2000, algorithm="probe") as run:
        with pytest.raises(InvalidArgument, match="`env_kwargs` must not set log_dir, run"):
            run.env_creator(log_dir="elsewhere", run="1")
        plain = run.env_creator(obs_type="ram", idle_after_budget=False)()
        for_rllib = run.env_creator(obs_type="standard", wrappers=[RLlibObservation])()
        assert for_rllib.observation_space.shape == (84, 84, 4)
        plain.reset(seed=0)
        first, _ = for_rllib.reset(seed=1)
        assert first.dtype == np.float32 and -1.0 <= first.min() <= first.max() < 1.0
        play([plain, for_rllib], rng)
        with pytest.raises(BudgetExhausted):
            plain.step(0)
        # the RLlib env plays nothing now: one-step truncated episodes, no frame counted
        obs, info = for_rllib.reset()
        assert info["arcadebench"]["budget_exhausted"]
        *_, reward, terminated, truncated, _ = for_rllib.step(0)
        assert (reward, terminated, truncated) == (0.0, False, True)
        view = run.progress()
        assert view["budget_used_up"] and run.totals() == (view["run_steps"], view["run_frames"])
        assert 2000 <= view["run_frames"] < 2000 + 2 * FRAMES_PER_STEP
        assert sorted(view["checkpoints"]) == [1600]  # scored from the log, as `score` does
        plain.close()
        for_rllib.close()

    lines = records(run.log)
    assert lines[0]["kind"] == "header" and lines[0]["algorithm"] == "probe"
    episodes = lines[1:]
    assert {r["env"] for r in episodes} == {0, 1}
    assert episodes[-1]["total_frames"] == view["run_frames"] == sum(r["frames"] for r in episodes)

    with pytest.raises(ArcadebenchError, match="continue that run with resume=True") as refused:
        RayRun(SPEC, "pong", tmp_path, algorithm="probe")
    assert "\n" not in str(refused.value)  # the owner's own one line, not Ray's traceback

    with RayRun(SPEC, "pong", tmp_path, resume=True) as run:  # the spec's 4,000 frames now
        envs = [run.env_creator(obs_type="ram", idle_after_budget=False)() for _ in range(2)]
        for seed, env in enumerate(envs):
            env.reset(seed=seed)
        play(envs, rng)
        for env in envs:
            env.close()
        assert 4000 <= run.totals()[1] < 4000 + 2 * FRAMES_PER_STEP
    lines = records(run.log)
    assert [r["kind"] for r in lines].count("header") == 1
    for env in (0, 1):  # each stream's numbering goes on where the first owner left it
        numbers = [r["episode"] for r in lines[1:] if r["env"] == env]
        assert numbers == list(range(len(numbers)))
    totals = [r["total_frames"] for r in lines[1:]]
    assert totals == sorted(totals) and totals[-1] == sum(r["frames"] for r in lines[1:])
    # the counters are a cache: a holder reading the log sees the same run
    holder = RunHolder(run.spec, "pong", "0", run.log, resume=True)
    assert holder.totals()[1] == totals[-1]
    holder.close()
