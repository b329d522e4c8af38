"""The batched path (make_vec on ale-py's AtariVectorEnv) against the single-env protocol path.

Where ALE's vector env can take the seed (its ALE seed is non-negative: about half of all seeds),
every env's episode equals the single env's step for step: observations, rewards, flags,
frames, end reasons and the logged records. Elsewhere the equivalence is statistical, tested on
the episode lengths and returns of a random agent. The wrapper logic the emulator cannot
trigger on demand (rollovers) runs on a scripted batch.
"""

from __future__ import annotations

import re
import warnings

import gymnasium as gym
import numpy as np
import pytest
from ale_py.env import AtariEnv
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space
from log_helpers import records
from testdata import DATA

import arcadebench
from arcadebench.benchmarks.envs.batched import AtariProtocolVectorEnv, ale_seed, make_vec
from arcadebench.errors import (
    ArcadebenchError,
    BudgetExhausted,
    InvalidArgument,
    NonCompliantWarning,
)
from arcadebench.records import EPISODE_FIELDS
from arcadebench.wrappers.vector import (
    VectorEpisodeMonitor,
    VectorMaxStuckTime,
    VectorRolloverGuard,
)

MINI = str(DATA / "specs" / "minimal_atari.yaml")  # budget 5,000 frames


def atari_env_seed(seed: int) -> int:
    """ALE's random_seed in ale-py's AtariEnv.reset(seed=seed)."""
    return int(np.int32(np.random.SeedSequence(seed).generate_state(2)[1]))


ACCEPTED = [s for s in range(40) if atari_env_seed(s) >= 0][:4]  # 1, 4, 6, ...
REFUSED = [s for s in range(40) if atari_env_seed(s) < 0][:3]  # 0, 2, 3


def lockstep(spec, game, seeds, actions, *, log_dir=None, **kwargs):
    """Play the batch and one single env per seed with the same actions until every single env's
    first episode ended; assert they agree step by step; return (batch, singles' last records)."""
    vec = make_vec(spec, game, len(seeds), log_dir=log_dir, **kwargs)
    singles = [arcadebench.make(spec, game, obs_type="standard", **kwargs) for _ in seeds]
    try:
        obs, info = vec.reset(seed=seeds)
        for i, (env, seed) in enumerate(zip(singles, seeds, strict=True)):
            single_obs, single_info = env.reset(seed=seed)
            assert np.array_equal(obs[i], single_obs)
            assert info["episode_frame_number"][i] == single_info["episode_frame_number"]
        running = set(range(len(seeds)))
        for step, action in enumerate(actions(len(seeds)), 1):
            obs, rewards, terminated, truncated, info = vec.step(action)
            protocol = info["arcadebench"]
            for i in sorted(running):
                o, r, te, tr, inf = singles[i].step(int(action[i]))
                assert (r, te, tr) == (rewards[i], terminated[i], truncated[i]), (i, step)
                assert inf["episode_frame_number"] == info["episode_frame_number"][i], (i, step)
                assert inf["arcadebench"].get("stuck_frames") == (
                    protocol["stuck_frames"][i] if "stuck_frames" in protocol else None
                )
                assert "lives" not in info and "lives" not in inf
                if te or tr:
                    assert protocol["_end_reason"][i]
                    assert protocol["end_reason"][i] == inf["arcadebench"]["end_reason"]
                    assert info["_final_obs"][i]
                    # at a game over or mid-skip, ale-py's vector env max-pools other frames
                    # into the final observation's newest frame (documented); the older frames
                    # agree, and so do truncations at a step's end
                    assert np.array_equal(info["final_obs"][i][:-1], o[:-1])
                    if tr and inf["episode_frame_number"] % 4 == 0:
                        assert np.array_equal(info["final_obs"][i], o)
                    running.discard(i)
                else:
                    assert np.array_equal(obs[i], o), (i, step)
            if not running:
                break
        assert not running, "the episodes did not end"
        mine = vec.last_episodes
        theirs = [arcadebench.wrappers.monitor.find_monitor(e).last_episode for e in singles]
        for a, b in zip(mine, theirs, strict=True):
            for key in ("return", "steps", "frames", "end_reason", "complete", "rollover_rewards"):
                assert a[key] == b[key], key
        return vec, mine
    finally:
        for env in singles:
            env.close()


def random_actions(seed=0):
    def actions(n):
        rng = np.random.default_rng(seed)
        while True:
            yield rng.integers(18, size=n)

    return actions


def noops(n):
    while True:
        yield np.zeros(n, dtype=np.int64)


def test_episodes_equal_the_single_env_where_ale_takes_the_seed():
    vec, found = lockstep("saber", "breakout", ACCEPTED[:3], random_actions())
    vec.close()
    assert [r["steps"] for r in found] == [206, 173, 128]  # three different episodes
    vec, found = lockstep("hwr", "pong", ACCEPTED[:2], random_actions(1))
    vec.close()
    assert {r["end_reason"] for r in found} == {"game_over"}


@pytest.mark.parametrize(
    "game",
    [
        "space_invaders",  # flicker: the max-pool matters
        "ms_pacman",
        "air_raid",  # PAL: ALE's other palette, 250-row screens
    ],
)
def test_standard_observations_equal_the_single_envs_byte_for_byte(game):
    """Every observation of the batch (the reset's included) is the single env's standard
    observation for the same seed and actions, until each env's first episode ends; of a final
    observation, all frames but the newest (the documented difference)."""
    seeds = ACCEPTED[:2]
    vec = make_vec("saber", game, 2, log_dir=False)
    singles = [arcadebench.make("saber", game, obs_type="standard", log_dir=False) for _ in seeds]
    rng = np.random.default_rng(3)
    try:
        obs, _ = vec.reset(seed=seeds)
        for i, (env, seed) in enumerate(zip(singles, seeds, strict=True)):
            assert np.array_equal(obs[i], env.reset(seed=seed)[0])
        running = {0, 1}
        while running:
            actions = rng.integers(18, size=2)
            obs, rewards, terminated, truncated, info = vec.step(actions)
            for i in sorted(running):
                o, r, te, tr, _ = singles[i].step(int(actions[i]))
                assert (r, te, tr) == (rewards[i], terminated[i], truncated[i])
                if te or tr:
                    assert np.array_equal(info["final_obs"][i][:-1], o[:-1])
                    running.discard(i)
                else:
                    assert np.array_equal(obs[i], o)
    finally:
        vec.close()
        for env in singles:
            env.close()


def test_episode_frames_agree_on_roms_with_start_up_frames():
    """Air Raid's reset emulates 8 start-up frames, which ale-py's vector env plays within the
    step that ends an episode: they count in the next episode (its frames, its stuck time, the
    run's frames), as in the single env, and not in the one that ended."""
    vec, found = lockstep("saber", "air_raid", ACCEPTED[:2], random_actions(3))
    single = arcadebench.make("saber", "air_raid", obs_type="standard", log_dir=False)
    try:
        after_reset = single.reset(seed=0)[1]["episode_frame_number"]
        first = single.step(0)[4]
        assert (after_reset, first["episode_frame_number"]) == (8, 12)
        # the env whose episode ended on lockstep's last step has just started its next one
        last = int(np.argmax([record["steps"] for record in found]))
        assert vec.total_frames[last] == found[last]["frames"] + after_reset
        info = vec.step(np.zeros(2, dtype=np.int64))[4]
        assert info["episode_frame_number"][last] == first["episode_frame_number"]
        stuck = info["arcadebench"]["stuck_frames"][last]
        assert stuck == first["arcadebench"]["stuck_frames"] == 4
    finally:
        vec.close()
        single.close()


def test_a_stuck_noop_breakout_is_truncated_at_exactly_18000_frames_in_every_env():
    """NOOP never launches the ball: every env, whatever its seed, is stuck at frame 18,000,
    step for step as the single env (compared on the seed ALE takes)."""
    vec = make_vec("saber", "breakout", 3)
    single = arcadebench.make("saber", "breakout", obs_type="standard")
    noop = np.zeros(3, dtype=np.int64)
    try:
        obs, _ = vec.reset(seed=[ACCEPTED[0], *REFUSED[:2]])
        assert np.array_equal(obs[0], single.reset(seed=ACCEPTED[0])[0])
        for step in range(1, 4501):
            obs, rewards, terminated, truncated, info = vec.step(noop)
            o, r, te, tr, inf = single.step(0)
            assert (r, te, tr) == (rewards[0], terminated[0], truncated[0]), step
            assert info["arcadebench"]["stuck_frames"][0] == inf["arcadebench"]["stuck_frames"]
            assert truncated.all() == (step == 4500) and not terminated.any()
        assert np.array_equal(info["final_obs"][0], o)
        assert (
            list(info["arcadebench"]["end_reason"])
            == ["stuck"] * 3
            == [inf["arcadebench"]["end_reason"]] * 3
        )
        for record in vec.last_episodes:
            assert (record["frames"], record["steps"], record["end_reason"]) == (
                18000,
                4500,
                "stuck",
            )
            assert record["return"] == 0.0 and record["complete"]
        # the envs were reset in the same step: the next step is a new episode's first
        _, _, _, _, info = vec.step(noop)
        assert info["episode_frame_number"].tolist() == [4, 4, 4]
        assert info["arcadebench"]["stuck_frames"].tolist() == [4, 4, 4]
    finally:
        vec.close()
        single.close()


def test_the_frame_cap_is_labelled_frame_limit_like_the_single_env():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        vec, found = lockstep(
            "hwr", "pong", ACCEPTED[:2], random_actions(2), max_episode_frames=402
        )
    vec.close()
    for record in found:
        assert (record["frames"], record["steps"], record["end_reason"]) == (
            402,
            101,
            "frame_limit",
        )


def test_refused_seeds_play_their_low_31_bits():
    """A seed whose ALE seed is negative plays AtariEnv's episode for its low 31 bits."""
    seed = REFUSED[0]
    assert ale_seed(seed) == atari_env_seed(seed) & 0x7FFFFFFF
    vec = AtariProtocolVectorEnv("space_invaders", 1, obs_type="rgb", full_action_space=True)
    single = AtariEnv("space_invaders", full_action_space=True, repeat_action_probability=0.25)
    try:
        obs, _ = vec.reset(seed=seed)
        single.ale.setInt("random_seed", ale_seed(seed))
        single.load_game()
        single.ale.reset_game()
        assert np.array_equal(obs[0], single.ale.getScreenRGB())
        for action in np.random.default_rng(3).integers(18, size=300).tolist():
            obs, rewards, *_ = vec.step(np.array([action]))
            single_obs, reward, *_ = single.step(action)
            assert np.array_equal(obs[0], single_obs) and rewards[0] == reward
    finally:
        vec.close()
        single.close()


@pytest.mark.parametrize("obs_type", ["rgb", "grayscale"])
@pytest.mark.parametrize("game", ["qbert", "air_raid"])  # Air Raid: PAL, 250-row screens
def test_screen_observations_are_atari_envs(obs_type, game):
    vec = make_vec("saber", game, 2, obs_type=obs_type, log_dir=False)
    single = arcadebench.make("saber", game, obs_type=obs_type, log_dir=False)
    try:
        obs, _ = vec.reset(seed=ACCEPTED[:2])
        assert obs.shape[1:] == single.observation_space.shape == vec.single_observation_space.shape
        assert np.array_equal(obs[1], single.reset(seed=ACCEPTED[1])[0])
        for action in np.random.default_rng(4).integers(18, size=150).tolist():
            obs, *_ = vec.step(np.array([0, action]))
            assert np.array_equal(obs[1], single.step(action)[0])
    finally:
        vec.close()
        single.close()


def test_later_episodes_are_distributed_like_the_single_envs():
    """Statistical equivalence where step-for-step equality is not available: episodes after the
    first (same-step autoreset, no reseeding) and first episodes of seeds ALE cannot take, against
    the runner's scheme (a single env reset with a new seed every episode). Random agent on
    Breakout; two-sample Kolmogorov-Smirnov tests on lengths and returns (deterministic)."""
    stats = pytest.importorskip("scipy.stats")
    vec = make_vec("saber", "breakout", 4)
    rng = np.random.default_rng(5)
    batched = []
    try:
        vec.reset(seed=REFUSED + [ACCEPTED[0]])
        while len(batched) < 40:
            _, _, terminated, truncated, _ = vec.step(rng.integers(18, size=4))
            batched += [vec.last_episodes[i] for i in np.flatnonzero(terminated | truncated)]
    finally:
        vec.close()
    single = arcadebench.make("saber", "breakout")
    singles = []
    try:
        for seed in range(100, 140):
            single.reset(seed=seed)
            while True:
                *_, terminated, truncated, _ = single.step(int(rng.integers(18)))
                if terminated or truncated:
                    break
            singles.append(arcadebench.wrappers.monitor.find_monitor(single).last_episode)
    finally:
        single.close()
    for key in ("steps", "return"):
        a, b = [r[key] for r in batched], [r[key] for r in singles]
        assert stats.ks_2samp(a, b).pvalue > 0.05, (key, np.mean(a), np.mean(b))
        assert abs(np.mean(a) - np.mean(b)) < 4 * np.hypot(
            np.std(a) / np.sqrt(len(a)), np.std(b) / np.sqrt(len(b))
        )


def test_the_batch_is_one_run_whose_frames_are_the_sum_over_its_envs(tmp_path):
    vec = make_vec("saber", "breakout", 2, log_dir=tmp_path, run="v", algorithm="random")
    rng = np.random.default_rng(6)
    try:
        vec.reset(seed=ACCEPTED[:2])
        while vec.episodes.min() < 2:
            vec.step(rng.integers(18, size=2))
        steps, frames = vec.run_totals
        assert frames == int(vec.total_frames.sum()) and steps == int(vec.total_steps.sum())
    finally:
        vec.close()
    (path,) = (tmp_path / "saber" / "breakout").glob("*.jsonl")
    assert path.name == "v.jsonl"
    header, *episodes = records(path)
    assert header["kind"] == "header" and header["run"] == "v"
    assert header["algorithm"] == "random"
    assert all(list(r) == list(EPISODE_FIELDS) for r in episodes)
    for env in (0, 1):
        mine = [r for r in episodes if r["env"] == env]
        assert len(mine) >= 2 and [r["episode"] for r in mine] == list(range(len(mine)))
        assert {r["seed"] for r in mine} == {ACCEPTED[env]}
        assert [r["env_frames"] for r in mine] == np.cumsum([r["frames"] for r in mine]).tolist()
    # the run's frames when each episode ended: this episode's env, the other env's so far
    totals = [r["total_frames"] for r in episodes]
    assert totals == sorted(totals) and totals[-1] <= sum(r["frames"] for r in episodes) + 8_000
    assert {r["env_id"] for r in episodes} == {"arcadebench/SABER-Breakout-v0"}
    results = arcadebench.score("saber", str(path), reps=0)
    assert len(results.algorithms["random"]["games"]["breakout"]["runs"]) == 1


def test_the_budget_counts_the_runs_frames_and_ends_the_whole_batch(tmp_path):
    vec = make_vec(MINI, "qbert", 4, log_dir=tmp_path)  # the spec's budget: 5,000 frames
    rng = np.random.default_rng(7)
    with pytest.raises(BudgetExhausted, match=r"has used its budget \([\d,]+ of 5,000 frames"):
        vec.reset(seed=ACCEPTED[:4])
        while True:
            vec.step(rng.integers(18, size=4))
    with pytest.raises(BudgetExhausted):
        vec.reset(seed=0)
    vec.close()
    episodes = records(tmp_path / "mini" / "qbert" / "0.jsonl")[1:]
    # the four envs together: stopped within one batch step (4 envs x 4 frames) past 5,000
    assert 5000 <= episodes[-1]["total_frames"] < 5000 + 16
    assert sum(r["frames"] for r in episodes) == episodes[-1]["total_frames"]
    cut = [r for r in episodes if r["end_reason"] == "budget"]
    assert cut and all(not r["complete"] for r in cut)
    assert {r["env"] for r in episodes} == {0, 1, 2, 3}


def test_an_unlogged_batch_is_one_run_for_the_budget():
    # no log, no identity to share with other processes: still one run in memory, not one per env
    vec = make_vec(MINI, "qbert", 4, log_dir=False)  # the spec's budget: 5,000 frames
    rng = np.random.default_rng(7)
    steps = 0
    with pytest.raises(BudgetExhausted, match=r"of 5,000 frames"):
        vec.reset(seed=ACCEPTED[:4])
        while True:
            vec.step(rng.integers(18, size=4))
            steps += 1
    vec.close()
    assert 5000 <= 4 * 4 * steps < 5000 + 2 * 16  # every env plays 4 frames a batch step


def test_a_reset_mid_episode_logs_the_cut_episodes(tmp_path):
    vec = make_vec("atari5", "qbert", 2, log_dir=tmp_path)
    try:
        vec.reset(seed=0)
        for _ in range(10):
            vec.step(np.zeros(2, dtype=np.int64))
        vec.reset(seed=5)
    finally:
        vec.close()
    _, *cuts = records(tmp_path / "atari5" / "qbert" / "0.jsonl")
    assert [c["env"] for c in cuts] == [0, 1]
    for i, cut in enumerate(cuts):
        assert (cut["steps"], cut["frames"], cut["end_reason"], cut["complete"]) == (
            10,
            40,
            "reset",
            False,
        )
        assert cut["seed"] == i  # the stream's seed: the first one its env got


# --- wrapper logic on a scripted batch (rollovers cannot be triggered in the vector env) ------


class ScriptedBatch(VectorEnv):
    """Two envs whose rewards follow a script, 4 frames a step, same-step autoreset."""

    def __init__(self, rewards):
        self.num_envs = 2
        self.single_observation_space = gym.spaces.Box(0, 1, (1,), np.float32)
        self.observation_space = batch_space(self.single_observation_space, 2)
        self.single_action_space = gym.spaces.Discrete(1)
        self.action_space = batch_space(self.single_action_space, 2)
        self._rewards = [np.asarray(r, dtype=np.float64) for r in rewards]
        self._t = 0
        self._frames = np.zeros(2, dtype=np.int64)
        self.resets = []

    def reset(self, *, seed=None, options=None):
        mask = (options or {}).get("reset_mask")
        mask = np.ones(2, dtype=bool) if mask is None else mask
        self._frames[mask] = 0
        self.resets.append(mask.tolist())
        return np.zeros((2, 1), np.float32), {"episode_frame_number": self._frames.copy()}

    def step(self, actions):
        rewards = self._rewards[self._t]
        self._t += 1
        self._frames += 4
        flags = np.zeros(2, dtype=bool)
        return (
            np.full((2, 1), self._t, np.float32),
            rewards,
            flags,
            flags.copy(),
            {"episode_frame_number": self._frames.copy()},
        )


def test_the_guard_sits_below_the_stuck_limit_and_the_monitor_keeps_the_originals(tmp_path):
    script = [[0, 0], [-999950, 0], [0, 0], [0, 0], [0, 0]]
    batch = ScriptedBatch(script)
    guard = VectorRolloverGuard(batch, threshold=-900_000, correction=1_000_000)
    env = VectorEpisodeMonitor(
        VectorMaxStuckTime(guard, max_stuck_frames=12),
        "saber",
        "asterix",
        log_dir=tmp_path,
        run="s",
    )
    env.reset(seed=0)
    steps = [env.step(np.zeros(2, dtype=np.int64)) for _ in range(5)]
    env.close()
    _, rewards, _, _, info = steps[1]
    # the wrap is corrected to the 50 points scored, which restart env 0's stuck count
    assert rewards.tolist() == [50.0, 0.0]
    assert info["arcadebench"]["rollover_rewards"][0] == -999950.0
    assert info["arcadebench"]["_rollover_rewards"].tolist() == [True, False]
    obs, _, _, truncated, info = steps[2]  # env 1: frame 12 without a reward
    assert truncated.tolist() == [False, True]
    assert info["arcadebench"]["end_reason"][1] == "stuck"
    assert info["_final_obs"].tolist() == [False, True] and info["final_obs"][1, 0] == 3
    assert obs[1, 0] == 0 and batch.resets[1] == [False, True]  # reset in the same step
    _, _, _, truncated, info = steps[4]  # env 0: rewarded at frame 8, stuck at frame 20
    assert truncated.tolist() == [True, False]
    record = next(
        r for r in records(tmp_path / "saber" / "asterix" / "s.jsonl")[1:] if r["env"] == 0
    )
    assert (record["return"], record["rollover_rewards"], record["frames"]) == (
        50.0,
        [-999950.0],
        20,
    )
    assert (record["steps"], record["end_reason"], record["seed"]) == (5, "stuck", 0)


# --- arguments ---------------------------------------------------------------------------------


def test_bad_arguments_are_one_line_errors(tmp_path):
    with pytest.raises(InvalidArgument, match="must be an Atari protocol for make_vec"):
        make_vec("sonic", "SonicTheHedgehog-GreenHillZone.Act1", 2)
    with pytest.raises(
        InvalidArgument, match=re.escape("`num_envs` must be an integer >= 1, got 0")
    ):
        make_vec("saber", "pong", 0)
    with pytest.raises(InvalidArgument, match="`obs_type` must be one of"):
        make_vec("saber", "pong", 2, obs_type="pixels")
    with pytest.raises(
        InvalidArgument,
        match=re.escape("`log_dir` must be a directory, None or False (no log), got True"),
    ):
        make_vec("saber", "pong", 2, log_dir=True)
    with pytest.raises(InvalidArgument, match="`sticky` is not an option of saber"):
        make_vec("saber", "pong", 2, sticky=0.1)
    with pytest.warns(NonCompliantWarning, match="repeat_action_probability=0.0"):
        make_vec("saber", "pong", 1, repeat_action_probability=0.0).close()
    vec = make_vec("saber", "pong", 1)
    with pytest.raises(ArcadebenchError, match="reset the envs first"):
        vec.step(np.zeros(1, dtype=np.int64))
    with pytest.raises(InvalidArgument, match="one seed per env reset"):
        vec.reset(seed=[1, 2])
    vec.close()
    old = arcadebench.make("saber", "pong", log_dir=tmp_path)  # an old run of one episode
    arcadebench.wrappers.monitor.find_monitor(old).set_budget(steps=1)
    old.reset(seed=0)
    old.step(0)
    old.close()
    log = tmp_path / "saber" / "pong" / "0.jsonl"
    before = log.read_bytes()
    with pytest.raises(ArcadebenchError, match="already holds 1 episodes of run '0'"):
        make_vec("saber", "pong", 2, log_dir=tmp_path)
    assert log.read_bytes() == before  # the old run is left as it was


def test_make_vec_is_exported():
    assert arcadebench.make_vec is make_vec


def test_make_and_make_vec_logs_have_the_same_header(tmp_path):
    # both monitors are told the same of their environments (resolve.monitor_kwargs)
    options = {"run": "h", "algorithm": "random", "max_episode_frames": 800}
    with pytest.warns(NonCompliantWarning, match="max_episode_frames=800"):
        single = arcadebench.make("saber", "pong", log_dir=tmp_path / "single", **options)
    with pytest.warns(NonCompliantWarning, match="max_episode_frames=800"):
        batch = make_vec("saber", "pong", 2, log_dir=tmp_path / "batch", **options)
    for env in (single, batch):
        env.reset(seed=0)
        env.close()
    single_header, batch_header = (
        records(tmp_path / where / "saber" / "pong" / "h.jsonl")[0] for where in ("single", "batch")
    )
    del single_header["time"], batch_header["time"]  # when each log was opened
    assert single_header == batch_header
    assert single_header["env_id"] == "arcadebench/SABER-Pong-v0"
    cap = arcadebench.load_spec("saber").environment.max_episode_frames
    assert single_header["deviations"] == {"max_episode_frames": {"spec": cap, "used": 800}}
    assert single_header["settings"]["max_episode_frames"] == 800
