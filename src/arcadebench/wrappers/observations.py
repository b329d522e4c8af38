"""Standard agent-side observation preprocessing (opt-in; never part of a protocol's score).

The published Atari agents (DQN, Rainbow, IQN; Mnih et al. 2015, Methods "Preprocessing") and the
Sonic baselines see grayscale 84x84 frames stacked by four; Atari agents also take the
pixel-wise maximum of a step's last two frames, against the flicker of Atari 2600 sprites.

Design (Atari): the protocol env plays its 4 frames inside ale-py's ``AtariEnv.step``, so a
wrapper only ever sees the last frame and cannot max-pool; dropping the env to one frame per step
and skipping in a wrapper (Gymnasium's ``AtariPreprocessing``) would change the protocol's frame
loop and cost a Python step per frame. So the standard observation is a mode of the env itself:
``gym.make("arcadebench/SABER-Pong-v0", obs_type="standard")`` builds :class:`StandardAtariEnv`,
an ``AtariEnv`` whose ``step`` runs the identical per-frame loop (same ``ale.act`` calls, so the
same per-frame sticky actions from the same ALE random stream, the same frame cap and the same
``info``) and only reads the screen differently, into preallocated buffers and straight into
a preallocated stack of 4: the max of the grayscale screens of the last two frames, resized
to 84x84 with OpenCV's ``INTER_AREA`` (area averaging, what ``AtariPreprocessing`` and
baselines' ``WarpFrame`` use). Two things make that cheap without changing a byte
(``_StandardFrame``). ALE's grayscale screen converts every pixel through its
palette in a scalar loop (14 us a screen) while its palette-index screen is a copy (1 us), so
the env reads indices and looks them up in ALE's own grayscale table
(:mod:`arcadebench.wrappers.ale_palette`), pooling after the lookup as before. And consecutive
Atari frames mostly differ in a few places (paddles, a ball, sprites), so only the cells whose
indices changed are looked up, pooled and resized (the resize alone costs 50 us a whole frame):
210x160 becomes 84x84 in 42 x 4 independent cells of 5 x 40 pixels to 2 x 21, and OpenCV
computes a cell resized on its own exactly as inside the whole frame (same weights, same order
of operations). Tests compare every observation with the plain computation from ALE's
grayscale screens on NTSC and PAL games, through resets, game overs and sticky actions.

The protocol wrappers (stuck time, frame limit, rollover guard, no life information) sit on top
unchanged, and ``obs_type`` is not a protocol setting, so no deviation is recorded. Its output
equals ``AtariPreprocessing(AtariEnv(frameskip=1), frame_skip=4, noop_max=0, screen_size=84) +
FrameStackObservation(4)`` for the same seed and actions (tested), except on an episode's last
step, where ``AtariPreprocessing`` stops mid-skip and keeps stale buffers while ale-py stops
emulating at the terminal frame.

Design (stable-retro, Sonic): the baselines use baselines' ``WarpFrame`` (OpenCV RGB-to-gray,
``INTER_AREA`` 84x84) and a stack of 4, without max-pooling — the sticky frame skip keeps only
the last frame, and Genesis games do not flicker like the 2600. :func:`standard_retro_observations`
composes :class:`CvGrayscaleObservation` (OpenCV's luma, which Gymnasium's
``GrayscaleObservation`` does not use) with Gymnasium's ``ResizeObservation`` (OpenCV
``INTER_AREA``) and ``FrameStackObservation`` (stack on a new first axis, padded with the reset
frame).

Classes: StandardAtariEnv, CvGrayscaleObservation.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import cv2
import gymnasium as gym
import numpy as np
from ale_py.env import AtariEnv, AtariEnvStepMetadata
from gymnasium.wrappers import FrameStackObservation, ResizeObservation

from arcadebench.errors import InvalidArgument
from arcadebench.wrappers._checks import check_int
from arcadebench.wrappers.ale_palette import grayscale_table

__all__ = ["CvGrayscaleObservation", "StandardAtariEnv", "standard_retro_observations"]


class _StandardFrame:
    """The newest frame of the standard observation, from a step's screens, recomputed by cells.

    Per step the env reads the screens of its last one or two frames (:meth:`next` gives the
    buffers) as ALE palette indices; :meth:`update` turns them into ``cv2.resize(max(table[a],
    table[b]), INTER_AREA)``: the max-pool is taken after the grayscale table, as ALE's grayscale
    screens were pooled (the gray of the larger index is not the larger gray). Consecutive
    frames mostly differ in a few places (paddles, a ball, sprites), so only the cells whose
    indices changed since the last step are looked up, pooled and resized: gathered into one
    column of cells, so that a step costs one call of each whatever changed. The rest of ``out``
    (the previous frame's resize, which the env copied there) stays: unchanged indices give
    unchanged grays.

    Why cells are exact: an area resize (OpenCV's ``INTER_AREA`` shrinking a frame) of
    ``height`` rows to ``size`` splits into ``gcd(height, size)`` bands whose output rows
    average input rows of that band only (their boundaries meet on whole input rows), and the
    columns likewise into ``gcd(width, size)`` blocks: 210x160 to 84x84 is 42 x 4 cells of 5 x
    40 pixels to 2 x 21. OpenCV computes each output pixel on its own, from weights it derives
    per row and per column (in double, rounded to float32) and accumulates in a fixed order, so
    a cell resized on its own gives the pixels of the whole resize if it gets the same weights.
    It does: for a cell the products behind them are shifted by whole pixels, which changes
    them by about 1e-14, and the exact weights (multiples of 1/5 and 1/40 here) are never that
    close to a float32 rounding boundary. Checked once per shape on random frames; a shape that
    fails is recomputed whole (one cell).
    """

    _checked: ClassVar[dict[tuple[int, int, int], bool]] = {}

    def __init__(
        self,
        height: int,
        width: int,
        size: int,
        screens: int,
        table: np.ndarray,
        *,
        by_cells: bool = True,
    ) -> None:
        """Frames of ``height`` x ``width`` to ``size`` x ``size``, pooling ``screens`` (1 or 2)."""
        self.table = table
        self._size = size
        self._screens = [np.zeros((screens, height, width), np.uint8) for _ in range(2)]
        self._oldest_newest = [(s[0], s[-1]) for s in self._screens]
        self._newest = 0
        # OpenCV averages areas only when shrinking (else it interpolates)
        usable = by_cells and size < height and size <= width
        key, cells = (height, width, size), (math.gcd(height, size), math.gcd(width, size))
        if usable and key not in self._checked:
            self._set_cells(*cells)
            self._checked[key] = self._agrees()
        self._set_cells(*(cells if usable and self._checked[key] else (1, 1)))

    @property
    def cells(self) -> tuple[int, int]:
        """The grid the frame is recomputed by: ``(bands, blocks)`` (``(1, 1)``: whole)."""
        return self._bands, self._blocks

    def _set_cells(self, bands: int, blocks: int) -> None:
        screens, height, width = self._screens[0].shape
        size = self._size
        rows_in, cols_in = height // bands, width // blocks
        self._bands, self._blocks = bands, blocks
        self._rows_in, self._cols_in = rows_in, cols_in
        self._rows_out, self._cols_out = size // bands, size // blocks
        word = math.gcd(cols_in, 8)  # compare up to 8 bytes at once, never across blocks
        self._words = [s.view(f"u{word}") for s in self._screens]
        differ = np.zeros(self._words[0].shape, bool)
        self._differ, self._differ_first, self._differ_last = differ, differ[0], differ[-1]
        # per (row, word) whether either screen changed, as 0/1 floats; summed per cell by one
        # product with a 0/1 matrix (a band's rows x words by blocks): non-zero where it changed
        per_block = differ.shape[2] // blocks
        self._marks = np.zeros((bands, rows_in * differ.shape[2]), np.float32)
        self._marks_by_row = self._marks.reshape(differ.shape[1:])
        block_of_word = np.arange(rows_in * differ.shape[2]) % differ.shape[2] // per_block
        self._sum_by_block = np.equal.outer(block_of_word, np.arange(blocks)).astype(np.float32)
        self._changed = np.zeros((bands, blocks), np.float32)
        # (screens, band, block, rows, columns) views: cells gathered screen by screen
        self._by_cell = [
            s.reshape(screens, bands, rows_in, blocks, cols_in).swapaxes(2, 3)
            for s in self._screens
        ]
        cells = bands * blocks
        self._grays = np.zeros((screens * cells * rows_in, cols_in), np.uint8)
        self._pooled = np.zeros((cells * rows_in, cols_in), np.uint8)
        self._resized = np.zeros((cells * self._rows_out, self._cols_out), np.uint8)

    def _agrees(self) -> bool:
        """Whether updates by cells reproduce whole resizes, on random frames (identity table)."""
        table, self.table = self.table, np.arange(256, dtype=np.uint8)
        rng = np.random.default_rng(0)
        screens, rows_in, cols_in = len(self._screens[0]), self._rows_in, self._cols_in
        out = np.empty((self._size, self._size), np.uint8)
        frames = self.next()
        frames[:] = rng.integers(0, 256, frames.shape, dtype=np.uint8)
        self.reset(out)
        cells = self._bands * self._blocks
        agrees = True
        for step in range(6):  # a few cells, more, most of the frame, all of it
            previous, frames = frames, self.next()
            frames[:] = previous
            count = (1, 3, 8, cells // 2, cells - 1, cells)[step]
            for cell in rng.choice(cells, size=min(count, cells), replace=False):
                band, block = divmod(int(cell), self._blocks)
                rows = slice(band * rows_in, (band + 1) * rows_in)
                cols = slice(block * cols_in, (block + 1) * cols_in)
                frames[:, rows, cols] = rng.integers(0, 256, (screens, rows_in, cols_in))
            self.update(out)
            whole = cv2.resize(frames.max(axis=0), (self._size,) * 2, interpolation=cv2.INTER_AREA)
            agrees = agrees and np.array_equal(out, whole)
        self.table = table
        return agrees

    def next(self) -> np.ndarray:
        """The buffers for this step's screens: ``(screens, height, width)``, oldest first."""
        self._newest ^= 1
        return self._screens[self._newest]

    def next_pair(self) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`next` as the oldest and the newest screen's buffers (one buffer: the same)."""
        self._newest ^= 1
        return self._oldest_newest[self._newest]

    def reset(self, out: np.ndarray) -> None:
        """``out`` = the newest screen alone (the first frame of an episode), resized whole."""
        frames = self._screens[self._newest]
        frames[:-1] = frames[-1]  # a step pooling it with itself: the same frame
        gray = cv2.LUT(frames[-1], self.table)
        cv2.resize(gray, (self._size, self._size), out, 0, 0, cv2.INTER_AREA)

    def update(self, out: np.ndarray) -> None:
        """Make ``out`` (the previous step's frame) this step's frame, where the screens changed."""
        new = self._newest
        np.not_equal(self._words[new], self._words[new ^ 1], out=self._differ)
        # (with one screen, the first is the last, and pooling a screen with itself is a copy)
        np.logical_or(
            self._differ_first, self._differ_last, out=self._marks_by_row, casting="unsafe"
        )
        np.matmul(self._marks, self._sum_by_block, out=self._changed)
        band, block = self._changed.nonzero()
        count = len(band)
        if not count:
            return
        cells = self._by_cell[new][:, band, block]  # (screens, count, rows, columns)
        rows, cols_in = count * self._rows_in, self._cols_in
        rows_out, cols_out = self._rows_out, self._cols_out
        # one lookup, one max-pool and one resize for the column of changed cells (a cell's
        # rows are resized as in the frame: the column is a stack of independent bands);
        # positional arguments: OpenCV parses keywords per call
        grays = self._grays[: len(cells) * rows]
        cv2.LUT(cells.reshape(-1, cols_in), self.table, grays)
        pooled = self._pooled[:rows]
        np.maximum(grays[:rows], grays[-rows:], out=pooled)
        resized = self._resized[: count * rows_out]
        cv2.resize(pooled, (cols_out, count * rows_out), resized, 0, 0, cv2.INTER_AREA)
        cells_out = out.reshape(self._bands, rows_out, self._blocks, cols_out)
        cells_out[band, :, block] = resized.reshape(count, rows_out, cols_out)


class StandardAtariEnv(AtariEnv):
    """ale-py's ``AtariEnv`` with the standard observation: max-pooled, grayscale, 84x84, stacked.

    Everything but the observation is ``AtariEnv``'s (see the module docstring for why this is
    an env and not a wrapper). Observation: ``uint8`` array ``(stack_size, screen_size,
    screen_size)``, oldest frame first; each frame is the maximum of ALE's grayscale screens of the
    step's last two frames (one frame when ``frameskip`` is 1), resized with ``cv2.INTER_AREA``.
    After ``reset`` the stack holds the reset frame ``stack_size`` times. Continuous actions,
    stochastic frame skip and sound observations are not supported.

    Example:
        >>> env = StandardAtariEnv("pong", frameskip=4, repeat_action_probability=0.25)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, obs.dtype, env.observation_space.shape
        ((4, 84, 84), dtype('uint8'), (4, 84, 84))
        >>> obs, reward, terminated, truncated, info = env.step(0)
        >>> info["episode_frame_number"]
        4
        >>> env.close()
    """

    def __init__(
        self, game: str = "pong", *, screen_size: int = 84, stack_size: int = 4, **kwargs: Any
    ) -> None:
        """Make the env.

        Args:
            game: ale-py game id.
            screen_size: side of the square resized frame (84).
            stack_size: frames in the stack (4).
            **kwargs: ``AtariEnv`` arguments (``frameskip``, ``repeat_action_probability``,
                ``full_action_space``, ``max_num_frames_per_episode``, ``mode``, ...).
        """
        screen_size = check_int("screen_size", screen_size, minimum=1)
        stack_size = check_int("stack_size", stack_size, minimum=1)
        frameskip = kwargs.get("frameskip", 4)
        check_int("frameskip", frameskip, minimum=1)
        for name in ("continuous", "sound_obs"):
            if kwargs.get(name, False):
                raise InvalidArgument(f"`{name}` must be False for StandardAtariEnv, got True")
        if kwargs.get("obs_type", "grayscale") != "grayscale":
            raise InvalidArgument(
                f"`obs_type` must be left out for StandardAtariEnv, got {kwargs['obs_type']!r}"
            )
        kwargs["obs_type"] = "grayscale"
        kwargs["frameskip"] = frameskip
        super().__init__(game, **kwargs)
        gym.utils.EzPickle.__init__(
            self, game, screen_size=screen_size, stack_size=stack_size, **kwargs
        )
        height, width = self.ale.getScreenDims()
        # palette indices through ALE's grayscale table (ale_palette); ALE's own grayscale
        # screens through an identity table if a reset frame ever disagrees with the table
        self._indices = True
        self._skip = frameskip  # AtariEnv's may also be a range (stochastic), not supported here
        self._frame = _StandardFrame(
            height, width, screen_size, min(frameskip, 2), grayscale_table(game)
        )
        # the stack is a window on a ring of frames (no shifting): frames _head - stack_size + 1
        # to _head; when the ring is full, the newest stack_size - 1 frames move to its start
        self._stack_size = stack_size
        self._ring = np.zeros((stack_size + 32, screen_size, screen_size), np.uint8)
        self._head = stack_size - 1
        self.observation_space = gym.spaces.Box(
            0, 255, (stack_size, screen_size, screen_size), np.uint8
        )

    def reset(  # type: ignore[override]  # AtariEnv's info type vs Env's dict: none fits both
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, AtariEnvStepMetadata]:
        """Reset as ``AtariEnv`` does; the stack is filled with the reset frame.

        The reset frame also checks the grayscale table against ALE's own conversion (once an
        episode); should they ever differ (a ROM whose palette the table does not know), the
        env reads ALE's grayscale screens from then on: slower, the same observations.
        """
        screen, info = super().reset(seed=seed, options=options)
        frames = self._frame.next()
        if self._indices:
            self.ale.getScreen(frames[-1])
            if not np.array_equal(cv2.LUT(frames[-1], self._frame.table), screen):
                self._indices = False
                self._frame.table = np.arange(256, dtype=np.uint8)
        if not self._indices:
            frames[-1] = screen
        size, ring = self._stack_size, self._ring
        self._frame.reset(ring[size - 1])
        ring[: size - 1] = ring[size - 1]
        self._head = size - 1
        return ring[:size].copy(), info

    def step(  # type: ignore[override]  # AtariEnv's info type vs Env's dict: none fits both
        self, action: int | np.ndarray
    ) -> tuple[np.ndarray, float, bool, bool, AtariEnvStepMetadata]:
        """``AtariEnv.step``'s frame loop, reading the screens of the last two frames.

        ``action`` is an index into the action set (an integer or a 0-d array, as agents give
        it); continuous actions are refused when the env is made.
        """
        action_idx = self._action_set[int(action)]
        ale = self.ale
        read = ale.getScreen if self._indices else ale.getScreenGrayscale
        oldest, newest = self._frame.next_pair()
        act, frameskip = ale.act, self._skip
        reward = 0.0
        for _ in range(frameskip - 1):
            reward += act(action_idx, 1.0)
        if frameskip > 1:
            read(oldest)
        reward += act(action_idx, 1.0)
        read(newest)
        size, ring, head = self._stack_size, self._ring, self._head + 1
        if head == len(ring):
            ring[: size - 1] = ring[head - size + 1 : head]
            head = size - 1
        ring[head] = ring[head - 1]  # the previous frame's resize, updated where it changed
        self._frame.update(ring[head])
        self._head = head
        obs = ring[head - size + 1 : head + 1].copy()
        terminated = ale.game_over(with_truncation=False)
        truncated = ale.game_truncated()
        return obs, reward, terminated, truncated, self._get_info()


class CvGrayscaleObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Convert RGB frames to grayscale with OpenCV (``cv2.COLOR_RGB2GRAY``), as the baselines did.

    Why: the Sonic baselines' ``WarpFrame`` (openai/baselines ``atari_wrappers.py``) converts
    with ``cv2.cvtColor(frame, cv2.COLOR_RGB2GRAY)`` — rounded ITU-R BT.601 luma
    (0.299 R + 0.587 G + 0.114 B) — while Gymnasium's ``GrayscaleObservation`` truncates a
    BT.709 weighting (0.2125, 0.7154, 0.0721), so its frames differ.

    Example:
        >>> import stable_retro
        >>> env = CvGrayscaleObservation(
        ...     stable_retro.make("Airstriker-Genesis-v0", render_mode=None))
        >>> obs, _ = env.reset(seed=0)
        >>> obs.shape, env.observation_space.shape
        ((224, 320), (224, 320))
        >>> env.close()
    """

    def __init__(self, env: gym.Env) -> None:
        """Wrap ``env``, whose observations are ``(height, width, 3)`` RGB ``uint8`` images."""
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box) or len(space.shape) != 3 or space.shape[2] != 3:
            raise InvalidArgument(
                f"`env` must have (height, width, 3) RGB observations, got {space!r}"
            )
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.ObservationWrapper.__init__(self, env)
        self.observation_space = gym.spaces.Box(0, 255, space.shape[:2], np.uint8)

    def observation(self, observation: np.ndarray) -> np.ndarray:
        """The grayscale frame."""
        return cv2.cvtColor(observation, cv2.COLOR_RGB2GRAY)


def standard_retro_observations(
    env: gym.Env, screen_size: int = 84, stack_size: int = 4
) -> gym.Env:
    """The Sonic baselines' observations: grayscale, ``INTER_AREA`` resize, stack of 4.

    Returns ``FrameStackObservation(ResizeObservation(CvGrayscaleObservation(env)))``; apply it
    outside the protocol env (it changes only what the agent sees).

    Example:
        >>> import stable_retro
        >>> env = standard_retro_observations(
        ...     stable_retro.make("Airstriker-Genesis-v0", render_mode=None))
        >>> env.reset(seed=0)[0].shape
        (4, 84, 84)
        >>> env.close()
    """
    screen_size = check_int("screen_size", screen_size, minimum=1)
    stack_size = check_int("stack_size", stack_size, minimum=1)
    env = ResizeObservation(CvGrayscaleObservation(env), (screen_size, screen_size))
    return FrameStackObservation(env, stack_size)
