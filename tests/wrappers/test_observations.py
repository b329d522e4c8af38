"""Standard observations: the Atari mode equals Gymnasium's AtariPreprocessing + frame stack on
the same seed and actions without touching the protocol, and equals, byte for byte, the plain
computation from ALE's own grayscale screens (max-pool, whole-frame INTER_AREA resize, stack)
through resets, game overs, truncations and sticky actions, while it reads palette indices
through ALE's grayscale table and recomputes only changed cells; the retro composition equals
the baselines' WarpFrame + stack."""

from __future__ import annotations

import math
import re
import warnings

import cv2
import gymnasium as gym
import numpy as np
import pytest
from ale_py import ALEInterface, LoggerMode, roms
from ale_py.env import AtariEnv
from fuzzing import fuzz
from gymnasium.wrappers import AtariPreprocessing, FrameStackObservation, GrayscaleObservation
from hypothesis import given
from hypothesis import strategies as st

import arcadebench  # noqa: F401  (registers the ids)
from arcadebench.wrappers import (
    CvGrayscaleObservation,
    InvalidArgument,
    StandardAtariEnv,
    standard_retro_observations,
)
from arcadebench.wrappers.ale_palette import PAL_GAMES, grayscale_table
from arcadebench.wrappers.observations import _StandardFrame

NATIVE = {
    "repeat_action_probability": 0.25,
    "full_action_space": True,
    "max_num_frames_per_episode": 108_000,
}


def reference(game, frameskip=4, **native):
    """Gymnasium's pipeline over a one-frame-per-step AtariEnv with the same ALE settings."""
    env = AtariEnv(game, frameskip=1, **(NATIVE | native))
    env = AtariPreprocessing(
        env, frame_skip=frameskip, noop_max=0, screen_size=84, terminal_on_life_loss=False
    )
    return FrameStackObservation(env, 4)


def compare(ours, theirs, actions, seed):
    """Step both with ``actions``; assert equal up to the episode's end; return steps compared."""
    obs_a, info_a = ours.reset(seed=seed)
    obs_b, info_b = theirs.reset(seed=seed)
    assert np.array_equal(obs_a, obs_b)
    for step, action in enumerate(actions, 1):
        obs_a, r_a, term_a, trunc_a, info_a = ours.step(action)
        obs_b, r_b, term_b, trunc_b, info_b = theirs.step(action)
        assert (r_a, term_a, trunc_a) == (r_b, term_b, trunc_b), step
        assert info_a["episode_frame_number"] == info_b["episode_frame_number"], step
        if term_a or trunc_a:
            # AtariPreprocessing stops mid-skip on a terminal frame and keeps stale buffers;
            # ale-py stops emulating there: the last observation may differ, nothing else does
            return step
        assert np.array_equal(obs_a, obs_b), step
    return len(actions)


@pytest.mark.parametrize("game", ["pong", "asteroids", "space_invaders"])  # the last two flicker
def test_standard_atari_env_equals_atari_preprocessing_plus_frame_stack(game):
    ours = StandardAtariEnv(game, frameskip=4, **NATIVE)
    theirs = reference(game)
    rng = np.random.default_rng(0)
    try:
        steps = compare(ours, theirs, rng.integers(18, size=400), seed=3)
        assert steps == 400
    finally:
        ours.close()
        theirs.close()


@pytest.mark.parametrize("game", ["breakout", "seaquest", "ms_pacman", "qbert"])
def test_updates_by_cells_give_opencvs_frames_in_more_games(game):
    """Every observation's newest frame is cv2.resize(max of the last two grayscale frames)."""
    ours = StandardAtariEnv(game, frameskip=4, **NATIVE)
    plain = AtariEnv(game, frameskip=1, obs_type="grayscale", **NATIVE)
    rng = np.random.default_rng(1)
    try:
        ours.reset(seed=2)
        plain.reset(seed=2)
        for _ in range(600):
            action = int(rng.integers(18))
            frames = [plain.step(action)[0] for _ in range(4)]
            obs, _, terminated, truncated, _ = ours.step(action)
            if terminated or truncated:
                break
            pooled = np.maximum(frames[-1], frames[-2])
            expected = cv2.resize(pooled, (84, 84), interpolation=cv2.INTER_AREA)
            assert np.array_equal(obs[-1], expected)
    finally:
        ours.close()
        plain.close()


@pytest.mark.parametrize("size", [42, 64, 84, 100])  # cells of 5x80, 105x5, 5x40 and 21x8 pixels
def test_other_screen_sizes_resize_like_opencv(size):
    ours = StandardAtariEnv("space_invaders", frameskip=4, screen_size=size, **NATIVE)
    plain = AtariEnv("space_invaders", frameskip=1, obs_type="grayscale", **NATIVE)
    try:
        ours.reset(seed=0)
        plain.reset(seed=0)
        for action in np.random.default_rng(2).integers(6, size=150).tolist():
            frames = [plain.step(action)[0] for _ in range(4)]
            obs = ours.step(action)[0]
            expected = cv2.resize(
                np.maximum(frames[-1], frames[-2]), (size, size), interpolation=cv2.INTER_AREA
            )
            assert np.array_equal(obs[-1], expected)
    finally:
        ours.close()
        plain.close()


def whole_resize(frame, size=84):
    return cv2.resize(frame, (size, size), interpolation=cv2.INTER_AREA)


@fuzz(300)
@given(
    seed=st.integers(0, 2**32 - 1),
    pooled=st.booleans(),
    changes=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 209), st.integers(1, 40), st.integers(0, 159)),
        max_size=12,
    ),
)
def test_updates_by_cells_equal_whole_lookups_pools_and_resizes(seed, pooled, changes):
    """Random screens changed in random rectangles of either screen, two steps running: a few
    cells, many, most of the frame; the max-pool is of grays (a random table: the larger index
    is not the larger gray), or a single screen (frame skip 1)."""
    rng = np.random.default_rng(seed)
    table = rng.integers(0, 256, 256, dtype=np.uint8)
    count = 2 if pooled else 1
    frame = _StandardFrame(210, 160, 84, count, table)
    out = np.empty((84, 84), np.uint8)
    screens = frame.next()
    screens[:] = rng.integers(0, 256, (count, 210, 160), dtype=np.uint8)
    frame.reset(out)
    assert np.array_equal(out, whole_resize(table[screens[-1]]))
    for step in (0, 1):
        previous, screens = screens, frame.next()
        screens[:] = previous
        for which, top, rows, left in changes[step::2]:
            shape = (min(rows, 210 - top), min(4 * rows, 160 - left))
            screens[min(which, count - 1), top : top + shape[0], left : left + shape[1]] = (
                rng.integers(0, 256, shape)
            )
        frame.update(out)
        assert np.array_equal(out, whole_resize(table[screens].max(axis=0)))


def test_cells_are_the_bands_and_blocks_of_the_resize_where_they_are_exact(monkeypatch):
    table = grayscale_table("pong")
    assert _StandardFrame(210, 160, 84, 2, table).cells == (42, 4)  # 5 x 40 pixels to 2 x 21
    assert _StandardFrame(250, 160, 84, 2, table).cells == (2, 4)  # PAL screens
    assert _StandardFrame(210, 160, 64, 2, table).cells == (2, 32)
    assert _StandardFrame(210, 160, 210, 2, table).cells == (1, 1)  # no resize: nothing to split
    assert _StandardFrame(210, 160, 84, 2, table, by_cells=False).cells == (1, 1)
    # a shape whose cells did not reproduce the whole resize is recomputed whole
    monkeypatch.setattr(_StandardFrame, "_checked", {})
    monkeypatch.setattr(_StandardFrame, "_agrees", lambda self: False)
    assert _StandardFrame(210, 160, 84, 2, table).cells == (1, 1)


def area_weights(source, target):
    """The (source pixel, float32 weight) pairs OpenCV's INTER_AREA gives each target pixel:
    computeResizeAreaTab in OpenCV's imgproc/src/resize.cpp, line for line (in double)."""
    scale = source / target
    weights = []
    for dx in range(target):
        fsx1 = dx * scale
        fsx2 = fsx1 + scale
        width = min(scale, source - fsx1)
        sx1, sx2 = math.ceil(fsx1), math.floor(fsx2)
        sx2 = min(sx2, source - 1)
        sx1 = min(sx1, sx2)
        pixel = []
        if sx1 - fsx1 > 1e-3:
            pixel.append((sx1 - 1, np.float32((sx1 - fsx1) / width)))
        pixel += [(sx, np.float32(1.0 / width)) for sx in range(sx1, sx2)]
        if fsx2 - sx2 > 1e-3:
            pixel.append((sx2, np.float32(min(min(fsx2 - sx2, 1.0), width) / width)))
        weights.append(pixel)
    return weights


@pytest.mark.parametrize(("source", "target", "parts"), [(210, 84, 42), (160, 84, 4), (250, 84, 2)])
def test_a_cell_gets_the_weights_it_has_in_the_whole_frame(source, target, parts):
    """Why cells are exact (the _StandardFrame docstring): OpenCV derives, for a part of a row
    or column resized alone, the weights it derives for that part inside the whole frame."""
    whole = area_weights(source, target)
    step_in, step_out = source // parts, target // parts
    alone = area_weights(step_in, step_out)
    for part in range(parts):
        for dx in range(step_out):
            shifted = [(sx - part * step_in, w) for sx, w in whole[part * step_out + dx]]
            assert shifted == alone[dx], (part, dx)


# --- ALE's grayscale table and the identity of the standard observation ----------------------


def check_the_table(games, frames):
    """Play ``frames`` random frames of each game; at every third, assert the table maps the
    palette indices on screen to ALE's getScreenGrayscale; returns the indices checked per
    palette."""
    ALEInterface.setLoggerMode(LoggerMode.Error)
    rng = np.random.default_rng(0)
    checked = {"ntsc": np.zeros(256, bool), "pal": np.zeros(256, bool)}
    for game in games:
        ale = ALEInterface()
        ale.setInt("random_seed", 1)
        ale.setFloat("repeat_action_probability", 0.25)
        ale.loadROM(roms.get_rom_path(game))
        actions = ale.getLegalActionSet()
        table = grayscale_table(game)
        for frame in range(frames):
            if ale.game_over():
                ale.reset_game()
            ale.act(actions[rng.integers(len(actions))])
            if frame % 3 == 0:
                indices = ale.getScreen()
                assert np.array_equal(table[indices], ale.getScreenGrayscale()), (game, frame)
                checked["pal" if game in PAL_GAMES else "ntsc"][indices] = True
    return checked


def test_the_grayscale_table_is_ales():
    """NTSC and PAL games (PAL: ALE's other palette, 250-row screens, colour-loss indices)."""
    checked = check_the_table(["pong", "ms_pacman", "air_raid", "pacman", "king_kong"], 1500)
    assert checked["ntsc"][::2].sum() > 15 and checked["pal"][::2].sum() > 30
    assert checked["pal"][1::2].any()  # odd indices: colour loss


@pytest.mark.long
def test_the_grayscale_table_is_ales_on_every_rom_and_all_128_colours_of_both_palettes():
    """Every ROM ale-py ships (so PAL_GAMES is ALE's list); between them the games show every
    colour of both palettes, so every even entry of both tables is checked."""
    ALEInterface.setLoggerMode(LoggerMode.Error)
    games = [g for g in roms.get_all_rom_ids() if ALEInterface.isSupportedROM(roms.get_rom_path(g))]
    checked = check_the_table(games, 4000)
    for palette in ("ntsc", "pal"):
        assert checked[palette][::2].all(), palette


class PlainStandard:
    """The standard observation computed plainly from ALE's grayscale screens: an AtariEnv of one
    frame a step played ``frameskip`` times, the max of the last two screens resized whole, a
    stack padded with the reset frame; the same ALE calls as StandardAtariEnv."""

    def __init__(self, game, frameskip=4, **native):
        self.env = AtariEnv(game, frameskip=1, obs_type="grayscale", **(NATIVE | native))
        self.frameskip = frameskip

    def reset(self, seed=None):
        screen = self.env.reset(seed=seed)[0]
        self.stack = [whole_resize(screen)] * 4
        return np.stack(self.stack)

    def step(self, action):
        screens, reward = [], 0.0
        for _ in range(self.frameskip):
            screen, r, terminated, truncated, info = self.env.step(action)
            screens.append(screen)
            reward += r
        self.stack = [*self.stack[1:], whole_resize(np.maximum.reduce(screens[-2:]))]
        return np.stack(self.stack), reward, terminated, truncated, info


@pytest.mark.parametrize(
    ("game", "frameskip", "native"),
    [
        ("pong", 4, {}),
        ("breakout", 4, {}),  # game overs
        ("space_invaders", 4, {}),  # flicker
        ("ms_pacman", 4, {"max_num_frames_per_episode": 1002}),  # truncated mid-step
        ("asteroids", 3, {}),  # flicker, an odd skip
        ("air_raid", 4, {}),  # PAL: its own table, 250 rows, 2 x 4 cells
        ("carnival", 1, {}),  # 214 rows, no max-pool
        ("seaquest", 4, {"repeat_action_probability": 0.0}),
    ],
)
def test_the_standard_observation_is_the_plain_one_byte_for_byte(game, frameskip, native):
    """Every observation, through seeded and unseeded resets after game overs and truncations,
    with per-frame sticky actions (0.25 unless said): the stack, rewards and flags."""
    ours = StandardAtariEnv(game, frameskip=frameskip, **(NATIVE | native))
    plain = PlainStandard(game, frameskip, **native)
    rng = np.random.default_rng(7)
    episodes = 0
    try:
        for seed in (0, 1, 5):
            assert np.array_equal(ours.reset(seed=seed)[0], plain.reset(seed=seed))
            for step in range(700):
                action = int(rng.integers(ours.action_space.n))
                a, b = ours.step(action), plain.step(action)
                assert np.array_equal(a[0], b[0]), (seed, step)
                assert a[1:4] == b[1:4], (seed, step)
                if a[2] or a[3]:
                    episodes += 1
                    assert np.array_equal(ours.reset()[0], plain.reset())
        assert ours._indices  # the table held on every reset frame
        # episodes that ended (game overs; Ms. Pac-Man's truncations) and the ones after them
        if game in ("breakout", "space_invaders", "ms_pacman", "air_raid", "seaquest"):
            assert episodes >= 2
    finally:
        ours.close()
        plain.env.close()


def test_a_table_that_disagrees_on_a_reset_frame_gives_way_to_ales_screens():
    ours = StandardAtariEnv("space_invaders", frameskip=4, **NATIVE)
    plain = PlainStandard("space_invaders")
    ours._frame.table = np.zeros(256, np.uint8)  # a palette the table does not know
    rng = np.random.default_rng(3)
    try:
        assert np.array_equal(ours.reset(seed=2)[0], plain.reset(seed=2))
        assert not ours._indices
        for action in rng.integers(6, size=200).tolist():
            assert np.array_equal(ours.step(action)[0], plain.step(action)[0])
    finally:
        ours.close()
        plain.env.close()


def test_it_equals_the_reference_up_to_a_game_over_too():
    ours = StandardAtariEnv(
        "breakout", frameskip=4, **(NATIVE | {"repeat_action_probability": 0.0})
    )
    theirs = reference("breakout", repeat_action_probability=0.0)
    try:
        assert compare(ours, theirs, [1] * 200, seed=0) == 122  # FIRE only: over at frame 485
    finally:
        ours.close()
        theirs.close()


def test_frameskip_one_has_no_max_pool():
    ours = StandardAtariEnv("asteroids", frameskip=1, **NATIVE)
    theirs = reference("asteroids", frameskip=1)
    try:
        assert compare(ours, theirs, np.random.default_rng(1).integers(18, size=200), seed=5) == 200
    finally:
        ours.close()
        theirs.close()


def test_the_standard_mode_does_not_change_the_protocol():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NonCompliantWarning: obs_type is not a protocol setting
        standard = gym.make("arcadebench/SABER-Breakout-v0", obs_type="standard")
    rgb = gym.make("arcadebench/SABER-Breakout-v0")
    rng = np.random.default_rng(2)
    try:
        assert standard.observation_space.shape == (4, 84, 84)
        assert [w.name for w in standard.spec.additional_wrappers] == [
            w.name for w in rgb.spec.additional_wrappers
        ]
        ale_a, ale_b = standard.unwrapped.ale, rgb.unwrapped.ale
        for key in ("repeat_action_probability",):
            assert ale_a.getFloat(key) == ale_b.getFloat(key) == 0.25
        assert ale_a.getInt("max_num_frames_per_episode") == ale_b.getInt(
            "max_num_frames_per_episode"
        )
        assert standard.reset(seed=4)[1].keys() == rgb.reset(seed=4)[1].keys()
        for action in rng.integers(18, size=500):
            a = standard.step(action)
            b = rgb.step(action)
            assert a[1:4] == b[1:4]
            assert a[4]["episode_frame_number"] == b[4]["episode_frame_number"]
            assert a[4]["arcadebench"] == b[4]["arcadebench"]
            assert "lives" not in a[4]
            if a[2] or a[3]:
                break
    finally:
        standard.close()
        rgb.close()


def test_observations_are_fresh_arrays():
    env = StandardAtariEnv("pong")
    try:
        first, _ = env.reset(seed=0)
        kept = first.copy()
        second = env.step(0)[0]
        env.step(0)
        assert np.array_equal(first, kept) and second is not first
        assert np.array_equal(second[:3], first[1:])  # the stack shifts by one frame per step
    finally:
        env.close()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"obs_type": "rgb"}, "`obs_type` must be left out for StandardAtariEnv, got 'rgb'"),
        ({"continuous": True}, "`continuous` must be False for StandardAtariEnv, got True"),
        ({"frameskip": (2, 5)}, "`frameskip` must be an integer >= 1, got (2, 5)"),
        ({"screen_size": 0}, "`screen_size` must be an integer >= 1, got 0"),
    ],
)
def test_standard_atari_env_rejects_what_it_does_not_support(kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        StandardAtariEnv("pong", **kwargs)


# --- stable-retro (Sonic baselines) ----------------------------------------------------------


def warp(frame):
    """baselines' WarpFrame: OpenCV luma, then INTER_AREA to 84x84."""
    return cv2.resize(
        cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY), (84, 84), interpolation=cv2.INTER_AREA
    )


def test_retro_observations_are_warp_frame_stacked_by_four(retro_env):
    env = standard_retro_observations(retro_env)
    obs, _ = env.reset(seed=0)
    reset_frame = warp(retro_env.get_screen())
    assert obs.shape == (4, 84, 84) and all(np.array_equal(f, reset_frame) for f in obs)
    rng = np.random.default_rng(0)
    frames = [reset_frame]
    for _ in range(6):
        obs = env.step(rng.integers(0, 2, 12).astype(np.uint8))[0]
        frames.append(warp(retro_env.get_screen()))
        assert np.array_equal(obs[-1], frames[-1])
    assert np.array_equal(obs, np.stack(frames[-4:]))


def test_opencv_grayscale_is_not_gymnasiums(retro_env):
    ours = CvGrayscaleObservation(retro_env)
    frame = ours.reset(seed=0)[0]
    rgb = retro_env.get_screen()
    assert np.array_equal(frame, cv2.cvtColor(rgb, cv2.COLOR_RGB2GRAY))
    gymnasium_gray = GrayscaleObservation(retro_env).observation(rgb)
    assert not np.array_equal(frame, gymnasium_gray)
    with pytest.raises(
        InvalidArgument, match=re.escape("`env` must have (height, width, 3) RGB observations")
    ):
        CvGrayscaleObservation(ours)
