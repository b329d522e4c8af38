"""A training run is many environments: every way of building parallel envs writes one run.

What one run of many environments must do: with a spec of a 20,000-frame budget and checkpoints at
8,000 and 16,000 frames, each path runs 4 envs into one run whose frames are the sum over its envs,
stops within one vector step past 20,000 frames, and is scored with checkpoint episode sets equal to
the ones recomputed from the log's episode order; a ``kill -9`` of a worker then a resume loses
nothing but the episode in flight and duplicates nothing.
"""

from __future__ import annotations

import functools
import os
import signal
import warnings

import gymnasium as gym
import numpy as np
import pytest
from log_helpers import records
from stable_baselines3.common.env_util import make_atari_env, make_vec_env
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv
from testdata import DATA

import arcadebench
from arcadebench.errors import BudgetExhausted, NonCompliantWarning
from arcadebench.records import read_totals

SPEC = str(DATA / "specs" / "run_budget.yaml")  # budget 20,000 frames; checkpoints 8k, 16k; k 3
GAME = "breakout"
ENV_ID = "arcadebench-test/RunBudget-Breakout-v0"
BUDGET, CHECKPOINTS, K = 20_000, (8_000, 16_000), 3
N = 4

# SB3's SubprocVecEnv starts its workers from a fresh forkserver, where this module's id is not
# registered: they build the env from this picklable callable (users' ids are registered by
# `import arcadebench`, or by writing them "arcadebench:arcadebench/SABER-Pong-v0")
TEST_ENV = functools.partial(arcadebench.make, SPEC, GAME)

gym.register(
    ENV_ID,
    entry_point="arcadebench.benchmarks.envs.factory:make_protocol_env",
    kwargs={"spec": SPEC, "game": GAME},
)


def ends(info, n):
    """The end reasons of a vector step's info, per env (None where no episode ended)."""
    protocol = info.get("arcadebench", {})
    if "end_reason" not in protocol:
        return [None] * n
    reasons, marked = protocol["end_reason"], protocol["_end_reason"]
    return [r if m else None for r, m in zip(reasons, marked, strict=True)]


# -- the paths: each plays random actions on 4 envs of one run until the budget stops it --------


def single_envs(log_dir, seed=0):
    envs = [arcadebench.make(SPEC, GAME, log_dir=log_dir, run="r") for _ in range(N)]
    rng = np.random.default_rng(seed)
    for i, env in enumerate(envs):
        env.reset(seed=seed * 10 + i)
    try:
        while True:
            stop = False
            for env in envs:
                *_, terminated, truncated, info = env.step(int(rng.integers(18)))
                stop |= info["arcadebench"].get("end_reason") == "budget"
                if terminated or truncated:
                    env.reset()
            if stop:
                return 4
    finally:
        for env in envs:
            env.close()


def gym_vector(mode):
    def play(log_dir, seed=0):
        envs = gym.make_vec(
            ENV_ID, N, vectorization_mode=mode, log_dir=str(log_dir), run="r", obs_type="ram"
        )
        return _drive_gym_vector(envs, seed)

    return play


def cleanrl_sync(log_dir, seed=0):
    def make_env(i):
        return lambda: gym.make(ENV_ID, log_dir=str(log_dir), run="r", obs_type="ram")

    return _drive_gym_vector(gym.vector.SyncVectorEnv([make_env(i) for i in range(N)]), seed)


def _drive_gym_vector(envs, seed):
    rng = np.random.default_rng(seed)
    try:
        envs.reset(seed=seed)
        while True:
            try:
                *_, info = envs.step(rng.integers(18, size=N))
            except BudgetExhausted:  # an env reset by next-step autoreset was stepped again
                return 4
            if "budget" in ends(info, N):
                return 4
    finally:
        envs.close()


def batched(log_dir, seed=0):
    envs = arcadebench.make_vec(SPEC, GAME, N, log_dir=log_dir, run="r", obs_type="grayscale")
    try:
        envs.reset(seed=seed)
        while True:
            *_, info = envs.step(np.random.default_rng(seed).integers(18, size=N))
            if "budget" in ends(info, N):
                return 4
    finally:
        envs.close()


def sb3(vec_env_cls, atari=False):
    def play(log_dir, seed=0):
        kwargs = dict(log_dir=str(log_dir), run="r")
        if atari:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", NonCompliantWarning)
                envs = make_atari_env(ENV_ID, n_envs=N, seed=seed, env_kwargs=kwargs)
        else:
            envs = make_vec_env(
                TEST_ENV if vec_env_cls is SubprocVecEnv else ENV_ID,
                n_envs=N,
                seed=seed,
                vec_env_cls=vec_env_cls,
                env_kwargs={**kwargs, "obs_type": "ram"},
            )
        rng = np.random.default_rng(seed)
        frames_per_step = 16 if atari else 4  # AtariWrapper plays 4 protocol steps per step
        try:
            envs.reset()
            while True:
                try:
                    _, _, _, infos = envs.step(rng.integers(18, size=N))
                except BudgetExhausted:  # AtariWrapper's reset plays actions: refused at once
                    return frames_per_step
                if any(i.get("arcadebench", {}).get("end_reason") == "budget" for i in infos):
                    return frames_per_step
        finally:
            envs.close()

    return play


PATHS = {
    "gym.make x4": single_envs,
    "gym.make_vec sync": gym_vector("sync"),
    "gym.make_vec async": gym_vector("async"),
    "CleanRL SyncVectorEnv": cleanrl_sync,
    "arcadebench.make_vec": batched,
    "SB3 DummyVecEnv": sb3(DummyVecEnv),
    "SB3 SubprocVecEnv": sb3(SubprocVecEnv),
    "SB3 make_atari_env": sb3(DummyVecEnv, atari=True),
}


def recomputed_checkpoints(episodes):
    """The last-k rule from the log's episode order, written out plainly."""
    found = {}
    for checkpoint in CHECKPOINTS:
        before = [
            r["return"] for r in episodes if r["complete"] and r["total_frames"] <= checkpoint
        ]
        found[checkpoint] = float(np.mean(before[-K:]))
    return found


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """Each path's run with seed 0, played once for the module: the budget test reads its log and
    the determinism test plays it again (both tests need a first run; one is enough)."""
    runs = {}

    def run(path):
        if path not in runs:
            log_dir = tmp_path_factory.mktemp("run")
            runs[path] = log_dir, PATHS[path](log_dir)
        return runs[path]

    return run


@pytest.mark.parametrize("path", list(PATHS), ids=list(PATHS))
def test_every_path_writes_one_run_that_stops_at_the_budget(played, path):
    log_dir, frames_per_step = played(path)
    log = log_dir / "runbudget" / GAME / "r.jsonl"
    assert [p.name for p in log.parent.glob("*.jsonl")] == ["r.jsonl"]  # one log: one run
    header, *episodes = records(log)
    assert header["kind"] == "header" and {r["env"] for r in episodes} == set(range(N))
    totals = [r["total_frames"] for r in episodes]
    assert totals == sorted(totals)  # the run's frames, in the order episodes finished
    # the run's frames are the sum over its envs, and the budget stops the run within one
    # vector step past it (at most one step per env)
    last = episodes[-1]["total_frames"]
    assert BUDGET <= last < BUDGET + N * frames_per_step
    assert read_totals(log)[1] <= last  # closed envs leave only logged frames in the counters
    assert {r["end_reason"] for r in episodes if not r["complete"]} == {"budget"}
    per_env = {env: [r for r in episodes if r["env"] == env] for env in range(N)}
    for mine in per_env.values():
        assert [r["episode"] for r in mine] == list(range(len(mine)))
        assert [r["env_frames"] for r in mine] == np.cumsum([r["frames"] for r in mine]).tolist()
    # scored as one run; the checkpoint scores are the last k episodes before each checkpoint
    results = arcadebench.score(SPEC, log, reps=0)
    (algorithm,) = results.algorithms.values()
    assert len(algorithm["games"][GAME]["runs"]) == 1
    expected = recomputed_checkpoints(episodes)
    for checkpoint in CHECKPOINTS:
        cell = algorithm["checkpoints"][str(checkpoint)]["games"][GAME]
        assert cell["raw"] == pytest.approx(expected[checkpoint])


@pytest.mark.parametrize("path", ["gym.make x4", "arcadebench.make_vec", "SB3 DummyVecEnv"])
def test_the_same_seeds_give_the_same_run_in_the_sync_paths(tmp_path, played, path):
    kept = ("env", "episode", "return", "steps", "frames", "total_frames", "end_reason")
    first, _ = played(path)  # seed 0, the budget test's run
    PATHS[path](tmp_path, seed=0)
    runs = []
    for log_dir in (first, tmp_path):
        episodes = records(log_dir / "runbudget" / GAME / "r.jsonl")[1:]
        runs.append([{k: r[k] for k in kept} for r in episodes])
    assert runs[0] == runs[1]


def test_a_killed_worker_then_a_resume_loses_only_its_episode_in_flight(tmp_path):
    # two workers: one killed, one whose stream goes on (each worker is a fresh interpreter that
    # imports SB3 and torch, and the rule is the same for two streams as for four)
    n = 2
    kwargs = dict(log_dir=str(tmp_path), run="k", obs_type="ram")
    log = tmp_path / "runbudget" / GAME / "k.jsonl"
    envs = make_vec_env(TEST_ENV, n_envs=n, seed=0, vec_env_cls=SubprocVecEnv, env_kwargs=kwargs)
    rng = np.random.default_rng(0)
    envs.reset()
    while not log.exists() or len(records(log)) < 1 + 2 * n:
        envs.step(rng.integers(18, size=n))
    victim = envs.processes[1]
    os.kill(victim.pid, signal.SIGKILL)
    victim.join()
    with pytest.raises((EOFError, BrokenPipeError, ConnectionResetError)):
        for _ in range(100):  # the dead worker's pipe fails on the next exchange
            envs.step(rng.integers(18, size=n))
    for process in envs.processes:
        process.kill()
    before = log.read_bytes()
    # resume the run with new workers: the streams go on where the log left them
    envs = make_vec_env(
        TEST_ENV,
        n_envs=n,
        seed=1,
        vec_env_cls=SubprocVecEnv,
        env_kwargs={**kwargs, "resume": True},
    )
    envs.reset()
    while len(records(log)) < len(before.splitlines()) + 2 * n:
        envs.step(rng.integers(18, size=n))
    envs.close()
    after = log.read_bytes()
    assert after.startswith(before)  # nothing logged before the kill was lost
    episodes = records(log)[1:]
    for env in range(n):
        numbers = [r["episode"] for r in episodes if r["env"] == env]
        assert numbers == list(range(len(numbers)))  # none repeated, none skipped
    totals = [r["total_frames"] for r in episodes]
    assert totals == sorted(totals)  # the run's frames never go back, across the resume
    assert sum(1 for line in after.splitlines() if b'"kind": "header"' in line) == 1


def test_a_run_of_another_process_is_joined_and_an_old_one_needs_resume(tmp_path):
    env = arcadebench.make(SPEC, GAME, log_dir=tmp_path, run="o")
    env.reset(seed=0)
    while not any(env.step(0)[2:4]):
        pass
    env.close()
    with pytest.raises(arcadebench.ArcadebenchError, match="continue that run with resume=True"):
        arcadebench.make_vec(SPEC, GAME, 2, log_dir=tmp_path, run="o")
    envs = arcadebench.make_vec(SPEC, GAME, 2, log_dir=tmp_path, run="o", resume=True)
    assert envs.streams == [0, 1] and envs.episodes.tolist() == [1, 0]
    envs.close()
