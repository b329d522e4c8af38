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
``info``) and only reads the screen differently: ALE's own grayscale screen of the last two
frames into preallocated buffers, their maximum in place, an OpenCV ``INTER_AREA`` resize to
84x84 (area averaging, what ``AtariPreprocessing`` and baselines' ``WarpFrame`` use) written
straight into a preallocated stack of 4. The resize is the costliest part of the preprocessing
(about 50 us a frame: a scalar loop in OpenCV), and consecutive Atari frames mostly differ in a
few rows (paddles, a ball, sprites), so :class:`_BandedAreaResize` recomputes only the bands of
rows that changed: 210 rows become 84 in 42 independent bands of 5 source rows to 2 output rows,
and OpenCV computes a band resized on its own exactly as inside the whole frame (same weights,
same order of operations; tested against ``cv2.resize`` of every frame). The protocol wrappers
(stuck time, frame limit, rollover guard, no life information) sit on top unchanged, and
``obs_type`` is not a protocol setting, so no deviation is recorded. Its output equals
``AtariPreprocessing(AtariEnv(frameskip=1), frame_skip=4, noop_max=0, screen_size=84) +
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
from ale_py.env import AtariEnv
from gymnasium.wrappers import FrameStackObservation, ResizeObservation

from arcadebench.errors import InvalidArgument
from arcadebench.wrappers._checks import check_int

__all__ = ["CvGrayscaleObservation", "StandardAtariEnv", "standard_retro_observations"]


class _BandedAreaResize:
    """``cv2.resize(..., INTER_AREA)`` of a frame, recomputing only the bands that changed.

    An area resize (OpenCV's ``INTER_AREA`` shrinking a frame) from ``height`` rows to ``size``
    rows splits into ``gcd(height, size)`` bands: output rows of one band average input rows of
    that band only (their boundaries meet on whole input rows). When the rows per output band
    are a power of two, the vertical scale is a dyadic number, every weight OpenCV derives for a
    band alone equals the one it derives for that band inside the whole frame, and OpenCV
    computes each output row on its own, in the same order: so a band resized alone gives
    exactly the rows the whole resize gives. (Checked once per shape on random frames too;
    without bands, or if the check fails, every frame is resized whole.)

    :meth:`update` takes the new frame, the previous one and ``out`` holding the resize of the
    previous one, compares the bands (8 bytes at a time) and resizes the changed runs of bands
    into ``out``; when that would cost more than resizing the whole frame (most bands changed,
    or many runs), it resizes the whole frame.
    """

    _checked: ClassVar[dict[tuple[int, int, int], bool]] = {}
    # a cv2.resize call costs about as much as resizing two bands (210x160 -> 84x84: 2 us a
    # call, 1.2 us a band), so runs cost their bands + CALL_COST, the whole frame all + CALL_COST
    CALL_COST = 2

    def __init__(self, height: int, width: int, size: int) -> None:
        self._size = (size, size)
        bands = math.gcd(height, size)
        rows_in, rows_out = height // bands, size // bands
        usable = (  # OpenCV averages areas only when shrinking (else it interpolates)
            size < height
            and size <= width
            and bands > 1
            and rows_out & (rows_out - 1) == 0
            and (rows_in * width) % 8 == 0
        )
        self._bands = bands if usable else 0
        self._rows_in, self._rows_out, self._width = rows_in, rows_out, width
        if usable:
            self._differ = np.empty((bands, rows_in * width // 8), bool)
            self._changed = np.empty(bands, bool)
            key = (height, width, size)
            if key not in self._checked:
                self._checked[key] = self._agrees(height, width)
            if not self._checked[key]:
                self._bands = 0

    def _agrees(self, height: int, width: int) -> bool:
        """Whether banded updates reproduce whole resizes on random frames."""
        rng = np.random.default_rng(0)
        previous = rng.integers(0, 256, (height, width), dtype=np.uint8)
        out = cv2.resize(previous, self._size, interpolation=cv2.INTER_AREA)
        for step in range(4):
            frame = previous.copy()
            for band in rng.choice(self._bands, size=min(1 + step, self._bands), replace=False):
                rows = slice(band * self._rows_in, (band + 1) * self._rows_in)
                frame[rows] = rng.integers(0, 256, (self._rows_in, width), dtype=np.uint8)
            self.update(frame, previous, out)
            if not np.array_equal(out, cv2.resize(frame, self._size, interpolation=cv2.INTER_AREA)):
                return False
            previous = frame
        return True

    def full(self, frame: np.ndarray, out: np.ndarray) -> None:
        """Resize the whole ``frame`` into ``out``."""
        cv2.resize(frame, self._size, dst=out, interpolation=cv2.INTER_AREA)

    def update(self, frame: np.ndarray, previous: np.ndarray, out: np.ndarray) -> None:
        """Make ``out`` (the resize of ``previous``) the resize of ``frame``."""
        bands = self._bands
        if not bands:
            self.full(frame, out)
            return
        np.not_equal(
            frame.view(np.uint64).reshape(bands, -1),
            previous.view(np.uint64).reshape(bands, -1),
            out=self._differ,
        ).any(axis=1, out=self._changed)
        changed = self._changed.nonzero()[0].tolist()
        if not changed:
            return
        # runs of changed bands; a gap of one band is resized too (cheaper than another call)
        runs = []
        start = end = changed[0]
        for band in changed[1:]:
            if band > end + 2:
                runs.append((start, end + 1))
                start = band
            end = band
        runs.append((start, end + 1))
        banded = sum(stop - first for first, stop in runs) + self.CALL_COST * len(runs)
        if banded > bands + self.CALL_COST:
            self.full(frame, out)
            return
        rows_in, rows_out, size = self._rows_in, self._rows_out, self._size[0]
        area = cv2.INTER_AREA
        for first, stop in runs:  # positional arguments: OpenCV parses keywords per call
            cv2.resize(
                frame[first * rows_in : stop * rows_in],
                (size, (stop - first) * rows_out),
                out[first * rows_out : stop * rows_out],
                0,
                0,
                area,
            )


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
        # the max-pooled frames of this step and the last one (alternating), the second-last frame
        self._pooled = [np.zeros((height, width), np.uint8), np.zeros((height, width), np.uint8)]
        self._newest = 0
        self._second_last = np.zeros((height, width), np.uint8)
        # the stack is a window on a ring of frames (no shifting): frames _head - stack_size + 1
        # to _head; when the ring is full, the newest stack_size - 1 frames move to its start
        self._stack_size = stack_size
        self._ring = np.zeros((stack_size + 32, screen_size, screen_size), np.uint8)
        self._head = stack_size - 1
        self._resize = _BandedAreaResize(height, width, screen_size)
        self.observation_space = gym.spaces.Box(
            0, 255, (stack_size, screen_size, screen_size), np.uint8
        )

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset as ``AtariEnv`` does; the stack is filled with the reset frame."""
        screen, info = super().reset(seed=seed, options=options)
        newest = self._pooled[self._newest]
        newest[...] = screen
        size, ring = self._stack_size, self._ring
        self._resize.full(newest, ring[size - 1])
        ring[: size - 1] = ring[size - 1]
        self._head = size - 1
        return ring[:size].copy(), info

    def step(  # type: ignore[override]
        self, action: int
    ) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """``AtariEnv.step``'s frame loop, reading the grayscale screen of the last two frames."""
        action_idx = self._action_set[action]
        ale = self.ale
        previous = self._pooled[self._newest]
        self._newest ^= 1
        last, second_last = self._pooled[self._newest], self._second_last
        act, frameskip = ale.act, self._frameskip
        reward = 0.0
        for _ in range(frameskip - 1):
            reward += act(action_idx, 1.0)
        if frameskip > 1:
            ale.getScreenGrayscale(second_last)
        reward += act(action_idx, 1.0)
        ale.getScreenGrayscale(last)
        if frameskip > 1:
            np.maximum(last, second_last, out=last)
        size, ring, head = self._stack_size, self._ring, self._head + 1
        if head == len(ring):
            ring[: size - 1] = ring[head - size + 1 : head]
            head = size - 1
        ring[head] = ring[head - 1]  # the previous frame's resize, updated where it changed
        self._resize.update(last, previous, ring[head])
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
