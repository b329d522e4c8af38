"""Seeded resets without a ROM reload give exactly ale-py's reset: the same emulator bytes and the
same episode, for every seed; the reload stays where the template cannot be trusted."""

from __future__ import annotations

import numpy as np
import pytest
from ale_py import ALEInterface, roms
from ale_py.env import AtariEnv

import arcadebench
from arcadebench.benchmarks.envs.reload_free import (
    _IDLE,
    ReloadFreeAtariEnv,
    ReloadFreeStandardAtariEnv,
    _mt19937_text,
)
from arcadebench.wrappers import StandardAtariEnv

NATIVE = {
    "frameskip": 4,
    "repeat_action_probability": 0.25,
    "full_action_space": True,
    "max_num_frames_per_episode": 108_000,
}


def ale_seed(seed: int) -> int:
    """The ``random_seed`` ale-py gives ALE for ``reset(seed=seed)``."""
    return int(np.int32(np.random.SeedSequence(seed).generate_state(2)[1]))


def state(env) -> bytes:
    return env.unwrapped.ale.cloneState(include_rng=True).serialize()


def play(env, seed: int, steps: int) -> list:
    """Reset with ``seed``, play seeded random actions: (reset state, [obs, (obs, r, ...), ...])."""
    obs, _ = env.reset(seed=seed)
    first = state(env)
    rng = np.random.default_rng(seed)
    trace = [obs]
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
        trace.append((obs, reward, terminated, truncated, info["episode_frame_number"]))
        if terminated or truncated:
            break
    return first, trace


def same(a, b) -> bool:
    (state_a, trace_a), (state_b, trace_b) = a, b
    if state_a != state_b or len(trace_a) != len(trace_b):
        return False
    for x, y in zip(trace_a, trace_b, strict=True):
        if isinstance(x, tuple):
            if not np.array_equal(x[0], y[0]) or x[1:] != y[1:]:
                return False
        elif not np.array_equal(x, y):
            return False
    return True


@pytest.fixture(autouse=True)
def no_idle_emulators():
    """Each test starts without the emulators of envs closed before it (they would be reused)."""
    _IDLE.clear()
    yield
    _IDLE.clear()


@pytest.fixture
def loads(monkeypatch):
    """Counts ROM reloads (``AtariEnv.load_game`` calls)."""
    count = [0]
    original = AtariEnv.load_game

    def counting(self):
        count[0] += 1
        original(self)

    monkeypatch.setattr(AtariEnv, "load_game", counting)
    return count


def test_the_generator_text_is_std_mt19937():
    # std::mt19937's first outputs for the default seed 5489 and its state words
    assert _mt19937_text(5489).split()[:2] == [b"5489", b"1301868182"]
    assert _mt19937_text(-1).split()[0] == str(2**32 - 1).encode()
    assert _mt19937_text(7).endswith(b" 624")


# pong and tennis are paddle / two-button games, asterix rolls its score over, space_invaders has
# game modes; seeds 0 and 2 give negative ALE seeds, 1 and 4 positive ones
@pytest.mark.parametrize("game", ["pong", "breakout", "asterix", "space_invaders", "tennis"])
def test_seeded_resets_equal_ale_pys_for_every_seed(game, loads):
    ours = ReloadFreeAtariEnv(game, **NATIVE)
    try:
        assert ours.reload_free and loads[0] == 1  # the construction's load only
        for seed in (0, 1, 2, 4):
            reference = AtariEnv(game, **NATIVE)
            try:
                expected = play(reference, seed, 300)
            finally:
                reference.close()
            before = loads[0]
            assert same(play(ours, seed, 300), expected), (game, seed)
            assert loads[0] == before  # no reload
        assert {ale_seed(s) < 0 for s in (0, 1, 2, 4)} == {True, False}
    finally:
        ours.close()


def test_unseeded_resets_after_a_reload_free_one_continue_the_same_stream():
    ours, reference = ReloadFreeAtariEnv("breakout", **NATIVE), AtariEnv("breakout", **NATIVE)
    try:
        for env in (ours, reference):
            env.reset(seed=11)
            for _ in range(50):
                env.step(1)
        for _ in range(2):
            a, b = play_unseeded(ours), play_unseeded(reference)
            assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    finally:
        ours.close()
        reference.close()


def play_unseeded(env) -> list:
    obs, _ = env.reset()
    frames = [obs]
    for _ in range(200):
        obs, _, terminated, truncated, _ = env.step(3)
        frames.append(obs)
        if terminated or truncated:
            break
    return frames


def test_the_standard_observation_env_seeds_without_reload_too(loads):
    ours = ReloadFreeStandardAtariEnv("space_invaders", **NATIVE)
    reference = StandardAtariEnv("space_invaders", **NATIVE)
    try:
        for seed in (5, 6):
            assert same(play(ours, seed, 200), play(reference, seed, 200))
        assert loads[0] == 1 + 1 + 2  # ours once; the reference at construction and per seed
    finally:
        ours.close()
        reference.close()


@pytest.mark.parametrize("game", ["berzerk", "double_dunk"])
def test_games_whose_reload_draws_random_numbers_keep_the_reload(game, loads):
    ours = ReloadFreeAtariEnv(game, **NATIVE)
    reference = AtariEnv(game, **NATIVE)
    try:
        assert not ours.reload_free
        assert same(play(ours, 3, 100), play(reference, 3, 100))
        assert loads[0] == 4  # two constructions, two seeded resets
    finally:
        ours.close()
        reference.close()


def test_a_changed_ale_setting_falls_back_to_the_reload(loads):
    ours = ReloadFreeAtariEnv("breakout", **NATIVE)
    reference = AtariEnv("breakout", **(NATIVE | {"repeat_action_probability": 0.5}))
    try:
        ours.ale.setFloat("repeat_action_probability", 0.5)  # applied by the next reload only
        assert same(play(ours, 8, 200), play(reference, 8, 200))
        assert loads[0] == 2 + 2  # constructions, then one seeded reset each
        assert same(play(ours, 9, 200), play(reference, 9, 200))
        assert loads[0] == 4 + 1  # the new template is used: only the reference reloaded
    finally:
        ours.close()
        reference.close()


def test_a_clock_seed_reloads(loads):
    env = ReloadFreeAtariEnv("pong", **NATIVE)
    try:
        env.ale.setInt("random_seed", -1)
        env.load_game()
        assert loads[0] == 2 and env.reload_free
    finally:
        env.close()


def test_protocol_envs_use_it():
    env = arcadebench.make("saber", "pong")
    standard = arcadebench.make("hwr", "pong", obs_type="standard")
    try:
        assert isinstance(env.unwrapped, ReloadFreeAtariEnv) and env.unwrapped.reload_free
        assert isinstance(standard.unwrapped, ReloadFreeStandardAtariEnv)
    finally:
        env.close()
        standard.close()


@pytest.mark.long
def test_every_game_resets_like_ale_py():
    games = [
        g
        for g in sorted(roms.get_all_rom_ids())
        if ALEInterface.isSupportedROM(roms.get_rom_path(g))
    ]
    for game in games:
        ours = ReloadFreeAtariEnv(game, **NATIVE)
        try:
            for seed in (1, 2):
                reference = AtariEnv(game, **NATIVE)
                try:
                    assert same(play(ours, seed, 300), play(reference, seed, 300)), (game, seed)
                finally:
                    reference.close()
        finally:
            ours.close()


@pytest.mark.parametrize("game", ["breakout", "tennis"])
def test_a_new_env_takes_a_closed_ones_emulator_and_plays_as_ale_pys(game, loads):
    closed = ReloadFreeAtariEnv(game, **NATIVE)
    play(closed, 9, 300)  # the emulator it leaves has played
    emulator = closed.ale
    closed.close()
    assert closed.ale is None  # closed: it gave its emulator up
    ours = ReloadFreeAtariEnv(game, **NATIVE)
    try:
        assert ours.ale is emulator and ours.reload_free and loads[0] == 1  # no load of its own
        for seed in (0, 1, 2, 4):
            reference = AtariEnv(game, **NATIVE)
            try:
                assert same(play(ours, seed, 300), play(reference, seed, 300)), (game, seed)
            finally:
                reference.close()
        assert loads[0] == 1 + 2 * 4  # the references' loads only (construction, seeded reset)
    finally:
        ours.close()


def test_only_an_env_of_the_same_game_and_settings_takes_an_emulator(loads):
    ReloadFreeAtariEnv("pong", **NATIVE).close()
    others = [
        ReloadFreeAtariEnv("breakout", **NATIVE),
        ReloadFreeAtariEnv("pong", **{**NATIVE, "repeat_action_probability": 0.0}),
        ReloadFreeAtariEnv("pong", **{**NATIVE, "max_num_frames_per_episode": 1_000}),
        ReloadFreeAtariEnv("pong", **NATIVE, mode=1),
    ]
    assert loads[0] == 1 + len(others)  # each loaded its own ROM
    same_settings = ReloadFreeAtariEnv("pong", **NATIVE)
    assert loads[0] == 1 + len(others)  # this one took the closed env's
    for env in (*others, same_settings):
        env.close()


def test_an_env_whose_reload_cannot_be_trusted_leaves_no_emulator(loads):
    ReloadFreeAtariEnv("double_dunk", **NATIVE).close()  # its reload draws random numbers
    ReloadFreeAtariEnv("double_dunk", **NATIVE).close()
    assert loads[0] == 2
