"""The batched evaluation path: an Atari protocol on ale-py's ``AtariVectorEnv``.

``arcadebench.make_vec("saber", "pong", num_envs=8)`` steps a batch of emulators in ale-py's
C++ threads (one call per batch step, preprocessing in C++) with the protocol's semantics:

- native (``AtariVectorEnv`` options): the spec's frame skip, per-frame sticky actions
  (``repeat_action_probability``), the full action set and the episode frame cap
  (``max_num_frames_per_episode``, a truncation), the spec's no-op starts when they begin at 0
  frames (``noop_max``: ale-py draws 0 to n - 1 raw NOOP frames from its own generator, so an
  env's draws are not the single env's: its episodes then differ from the single env's for the
  same seed, though distributed alike; DQN's 1 to 30 cannot be said and is refused); no FIRE
  on reset, no reward clipping; a training life-loss signal (Atari 100k, DQN) is a vector
  wrapper, ``VectorLifeLossTerminal``;
- vector-level wrappers (:mod:`arcadebench.wrappers.vector`) for the rest, in the single-env
  order: rollover guard → max stuck time → frame-limit label → no life information → a monitor
  writing the batch's episodes to the run's one log, each env a stream of it, told what the
  single env's monitor is told (:func:`~arcadebench.benchmarks.envs.resolve.monitor_kwargs`),
  in the single-env format, so ``arcadebench score`` reads them.

:class:`AtariProtocolVectorEnv` adapts ``AtariVectorEnv`` to the single env's semantics:

- seeds: ``reset(seed=s)`` seeds env ``i`` with ``s + i`` (or ``seed[i]`` for a sequence),
  each mapped to ALE's ``random_seed`` exactly as ale-py's ``AtariEnv.reset(seed=...)`` maps
  it. ``AtariVectorEnv`` accepts only non-negative ALE seeds, so the about half of seeds whose
  ALE seed is negative are seeded with its low 31 bits instead: deterministic, but not the
  single env's episode for that seed. For the others, an env's episode is the single env's,
  step for step (tested). Unseeded first resets are seeded from the clock by ALE;
- observations: ``obs_type="standard"`` (default) is the observation of
  :class:`~arcadebench.wrappers.StandardAtariEnv` (grayscale, max-pool of the last two
  frames, ``INTER_AREA`` 84x84, stack of 4, oldest first), computed by ale-py in its threads
  and returned as is (no copy), with the stack padded by the reset frame as Gymnasium's frame
  stack does (ale-py pads with zeros): byte for byte the single env's for the same seed and
  actions, resets included, NTSC and PAL games alike (tested on five games; perf/bench_vector.py
  counts them), except a final observation (below). ``"rgb"`` and ``"grayscale"`` are
  ``AtariEnv``'s screens (210x160; 250x160 on the ROMs ALE runs as PAL);
- same-step autoreset, and ``info["episode_frame_number"]`` the frames of the episode each
  env's step belongs to, as the single env counts them: ale-py reports the next episode's
  count on a step that ends one, and its reset has emulated that episode's start-up frames
  there (8 on Air Raid), which count in the next episode (frame counts feed budgets and
  checkpoints); see :mod:`arcadebench.wrappers.vector`.

Differences from the single env that remain, both at the end of an episode:

1. the final observation (``info["final_obs"]``) of an episode that ends with a game over, or
   mid-skip (a cap that is no multiple of the frame skip), has its newest frame max-pooled
   from other frames by ale-py's vector env (as Gymnasium's ``AtariPreprocessing`` does
   mid-skip): measured on Pong, Breakout, Space Invaders, Ms. Pac-Man and Air Raid, 6 to 320 of
   that frame's 7,056 pixels differ, the three older frames never. It is not part of any
   score, and truncations at a step's end (stuck time, caps) agree exactly;
2. a game over mid-skip stops the skip there, while ale-py's ``AtariEnv`` plays it out without
   emulating (ALE refuses to) but drawing sticky-action random numbers, so an env's later,
   unseeded episodes follow another random stream than a single env reset without a seed
   would: the same distribution (tested on episode lengths and returns), not the same
   episodes. Seeded episodes are unaffected.

Sonic (stable-retro) has no batched emulator: use ``gym.make_vec(id, num_envs,
vectorization_mode="async")``.

Classes: AtariProtocolVectorEnv.
Functions: make_vec, ale_seed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from ale_py import ALEInterface, roms
from ale_py.vector_env import AtariVectorEnv
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from arcadebench.benchmarks.envs.atari import ale_options, protocol_layers
from arcadebench.benchmarks.envs.resolve import monitor_kwargs, resolve, warn_deviations
from arcadebench.errors import InvalidArgument, RomNotFound
from arcadebench.records import resolve_log_dir
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.model import AtariSettings
from arcadebench.wrappers._checks import check_int
from arcadebench.wrappers.vector import (
    VectorEpisodeFrameLimit,
    VectorEpisodeMonitor,
    VectorLifeLossTerminal,
    VectorMaxStuckTime,
    VectorNoLifeInformation,
    VectorRolloverGuard,
    _any,
)

__all__ = ["AtariProtocolVectorEnv", "ale_seed", "make_vec"]

_VECTOR_WRAPPERS: dict[str, Any] = {  # the vector twins of the single env's protocol layers
    "rollover": VectorRolloverGuard,
    "stuck": VectorMaxStuckTime,
    "frame_limit": VectorEpisodeFrameLimit,
    "life_loss_terminal": VectorLifeLossTerminal,
    "no_life_information": VectorNoLifeInformation,
}

OBS_TYPES = ("standard", "rgb", "grayscale")
_NO_CAP = 2**31 - 1  # AtariVectorEnv truncates every step at 0 ("no cap" for ALE itself)


def ale_seed(seed: int) -> int:
    """ALE's ``random_seed`` for episode seed ``seed``, as ``AtariVectorEnv`` can take it.

    ale-py's ``AtariEnv.reset(seed=s)`` sets ALE's ``random_seed`` to the second word of
    ``SeedSequence(s)`` as an ``int32``; ``AtariVectorEnv`` ignores negative seeds, so those
    keep only their low 31 bits.

    Example:
        >>> ale_seed(1), ale_seed(0)  # the second: -617818137 in AtariEnv
        (1731038949, 1529665511)
    """
    value = int(np.int32(np.random.SeedSequence(seed).generate_state(2)[1]))
    return value if value >= 0 else value & 0x7FFFFFFF


def _screen_dims(game: str) -> tuple[int, int]:
    """The ROM's screen as ``(rows, columns)``: 210x160, or 250x160 where ALE runs it as PAL.

    Why: ``AtariVectorEnv`` resizes every screen to the size it is given, so the raw screens are
    ``AtariEnv``'s only at the ROM's own size, which ALE decides when it loads the ROM.
    """
    path = roms.get_rom_path(game)
    if path is None:
        raise RomNotFound(f"ale-py has no ROM for {game!r}; reinstall ale-py, which ships them")
    ale = ALEInterface()
    ale.loadROM(path)
    rows, columns = ale.getScreenDims()
    return rows, columns


class AtariProtocolVectorEnv(VectorEnv):
    """ale-py's ``AtariVectorEnv`` with the single env's seeds, observations and frame counts.

    See the module docstring. Actions are indices into the action set, one per env. Partial
    resets: ``reset(options={"reset_mask": mask})`` (with ``seed`` for the chosen envs only).

    Example:
        >>> env = AtariProtocolVectorEnv("pong", 2, repeat_action_probability=0.25)
        >>> obs, info = env.reset(seed=0)
        >>> obs.shape, info["episode_frame_number"].tolist()
        ((2, 4, 84, 84), [0, 0])
        >>> obs, rewards, terminated, truncated, info = env.step(np.zeros(2, dtype=np.int64))
        >>> info["episode_frame_number"].tolist(), rewards.dtype
        ([4, 4], dtype('float64'))
        >>> env.close()
    """

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(
        self,
        game: str,
        num_envs: int,
        *,
        obs_type: str = "standard",
        frameskip: int = 4,
        repeat_action_probability: float = 0.25,
        full_action_space: bool = False,
        max_num_frames_per_episode: int | None = None,
        noop_max: int = 0,
        num_threads: int = 0,
        thread_affinity_offset: int = -1,
    ) -> None:
        """Make ``num_envs`` emulators of ``game`` (an ale-py game id).

        Args:
            game: ale-py game id, e.g. ``"pong"``.
            num_envs: emulators in the batch.
            obs_type: ``"standard"``, ``"rgb"`` or ``"grayscale"``.
            frameskip: emulator frames per step.
            repeat_action_probability: ALE's per-frame sticky-action probability.
            full_action_space: the 18 actions instead of the game's minimal set.
            max_num_frames_per_episode: the frame cap (``None``: none).
            noop_max: no-op starts of 0 to ``noop_max - 1`` raw frames after each reset
                (``AtariVectorEnv``'s own, drawn from its seeded generator; 0: none).
            num_threads: ``AtariVectorEnv``'s threads (0: one per env, up to the CPUs).
            thread_affinity_offset: ``AtariVectorEnv``'s CPU pinning (-1: none).
        """
        num_envs = check_int("num_envs", num_envs, minimum=1)
        frameskip = check_int("frameskip", frameskip, minimum=1)
        if obs_type not in OBS_TYPES:
            raise InvalidArgument(
                f"`obs_type` must be one of {', '.join(map(repr, OBS_TYPES))}, got {obs_type!r}"
            )
        cap = max_num_frames_per_episode
        if cap is not None:
            check_int("max_num_frames_per_episode", cap, minimum=1)
        standard = obs_type == "standard"
        height, width, stack = (84, 84, 4) if standard else (*_screen_dims(game), 1)
        self._ale = AtariVectorEnv(
            game,
            num_envs,
            num_threads=num_threads,
            thread_affinity_offset=thread_affinity_offset,
            max_num_frames_per_episode=_NO_CAP if cap is None else cap,
            repeat_action_probability=repeat_action_probability,
            full_action_space=full_action_space,
            autoreset_mode=AutoresetMode.SAME_STEP,
            frameskip=frameskip,
            noop_max=check_int("noop_max", noop_max, minimum=0),
            use_fire_reset=False,
            episodic_life=False,
            life_loss_info=False,
            reward_clipping=False,
            img_height=height,
            img_width=width,
            grayscale=obs_type != "rgb",
            stack_num=stack,
            maxpool=standard,
        )
        self.num_envs = num_envs
        self.obs_type = obs_type
        # the standard stack, oldest first, or one frame (AtariEnv's screen, no stack axis)
        frame = (height, width) if obs_type != "rgb" else (height, width, 3)
        shape = (stack, *frame) if standard else frame
        self.single_observation_space = gym.spaces.Box(0, 255, shape, np.uint8)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.single_action_space = self._ale.single_action_space
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._stack = stack if standard else 0
        self._age = np.zeros(num_envs, dtype=np.int64)  # steps since reset, up to stack - 1
        self._young = num_envs if self._stack > 1 else 0  # envs whose stack still needs padding
        self._start = np.zeros(num_envs, dtype=np.int32)  # ALE's frame_number at episode start
        self._shape = (num_envs,)
        self._strength = np.ones(num_envs, dtype=np.float32)
        self._send, self._recv = self._ale.ale.send, self._ale.ale.recv

    def _pad(self, obs: np.ndarray, envs: list[int]) -> None:
        """Give ``envs`` the frame stack padded with their reset frame (not zeros)."""
        last = self._stack - 1
        for i in envs:
            missing = last - int(self._age[i])
            obs[i, :missing] = obs[i, missing]

    def reset(
        self,
        *,
        seed: int | Sequence[int] | np.ndarray | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset all envs (or ``options["reset_mask"]``); seeds as the module docstring says."""
        options = dict(options or {})
        mask = options.get("reset_mask")
        chosen = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
        seeds = None
        if seed is not None:
            if isinstance(seed, int | np.integer):
                episode_seeds = [int(seed) + k for k in range(len(chosen))]
            else:
                episode_seeds = [int(s) for s in seed]
                if len(episode_seeds) != len(chosen):
                    raise InvalidArgument(
                        f"`seed` must have one seed per env reset ({len(chosen)}), "
                        f"got {len(episode_seeds)}"
                    )
            seeds = np.array([ale_seed(s) for s in episode_seeds], dtype=np.int64)
        obs, info = self._ale.reset(seed=seeds, options=options)
        frames = info["frame_number"]
        self._start[chosen] = frames[chosen] - info["episode_frame_number"][chosen]
        info["episode_frame_number"] = frames - self._start
        if self._stack:
            self._age[chosen] = 0
            self._pad(obs, np.flatnonzero(self._age < self._stack - 1).tolist())
        return (obs if self._stack else obs[:, 0]), info

    def step(
        self, actions: Any
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every env; an env whose episode ends is reset in the same step."""
        actions = np.asarray(actions, dtype=np.int64)
        if actions.shape != self._shape:
            raise InvalidArgument(
                f"`actions` must have shape {self._shape} (one action per env), got {actions.shape}"
            )
        # ale-py's AtariVectorEnv.step without its per-step checks and allocation
        self._send(actions, self._strength)
        obs, rewards, terminated, truncated, info = self._recv()
        frames = info["frame_number"]
        next_episode = info["episode_frame_number"]  # ale-py's: the next episode's where one ended
        info["episode_frame_number"] = frames - self._start
        if _any(terminated) or _any(truncated):
            self._episodes_ended(terminated | truncated, frames, next_episode, info)
        elif self._young:
            self._age += 1
            self._young = int(np.count_nonzero(self._age < self._stack - 1))
        if self._young:
            self._pad(obs, np.flatnonzero(self._age < self._stack - 1).tolist())
        if not self._stack:
            obs = obs[:, 0]
        return obs, rewards.astype(np.float64), terminated, truncated, info

    def _episodes_ended(
        self,
        ended: np.ndarray,
        frames: np.ndarray,
        next_episode: np.ndarray,
        info: dict[str, Any],
    ) -> None:
        """Restart the counts of the envs whose episode ended (ale-py reset them already).

        ale-py's reset emulated the next episode's start-up frames (``next_episode``: 0 on most
        ROMs, 8 on Air Raid) within this step: they belong to the next episode, as the single
        env counts them, and not to the one that ended here.
        """
        starts = frames[ended] - next_episode[ended]
        info["episode_frame_number"][ended] = starts - self._start[ended]
        info["next_episode_frame_number"] = next_episode
        self._start[ended] = starts
        info["_final_obs"] = ended
        if not self._stack:
            info["final_obs"] = info["final_obs"][:, 0]
            return
        # the final stack of an episode shorter than the stack has zeros too
        self._age += 1
        np.minimum(self._age, self._stack - 1, out=self._age)
        short = ended & (self._age < self._stack - 1)
        if _any(short):
            self._pad(info["final_obs"], np.flatnonzero(short).tolist())
        self._age[ended] = 0
        self._young = int(np.count_nonzero(self._age < self._stack - 1))

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the emulator threads."""
        self._ale.close()


def _noop_max(spec: Spec, settings: AtariSettings) -> int:
    """``AtariVectorEnv``'s ``noop_max`` for the spec's no-op starts (it plays 0 to n - 1 frames).

    Raises:
        InvalidArgument: no-op starts that do not begin at 0 frames (DQN's 1 to 30), which the
            vector engine cannot play; the single env (``gym.make_vec``) can.
    """
    if settings.noop_starts is None:
        return 0
    least, most = settings.noop_starts
    if least != 0:
        raise InvalidArgument(
            f"`spec` must have no-op starts from 0 frames for make_vec (ale-py's batched "
            f"engine plays 0 to n - 1), got {spec.name!r} with {least} to {most}; batch its "
            "single environments with gym.make_vec(id, num_envs)"
        )
    return most + 1


def make_vec(
    spec: str | Spec,
    game: str,
    num_envs: int,
    *,
    obs_type: str = "standard",
    log_dir: str | os.PathLike[str] | bool | None = None,
    run: str = "0",
    resume: bool = False,
    algorithm: str | None = None,
    num_threads: int = 0,
    thread_affinity_offset: int = -1,
    record_actions: bool = True,
    **kwargs: Any,
) -> VectorEpisodeMonitor:
    """Make ``num_envs`` envs of ``game`` under ``spec``, stepped as one batch in C++ threads.

    Args:
        spec: an Atari protocol (``"saber"``, ``"hwr"``, ``"atari5"``, or a YAML file).
        game: a game of the spec (any spelling).
        num_envs: envs in the batch.
        obs_type: ``"standard"`` (grayscale 84x84, stack of 4), ``"rgb"`` or ``"grayscale"``.
        log_dir: where the run's log goes (``<log_dir>/<spec>/<game>/<run>.jsonl``, every env a
            stream of the one run; default ``$ARCADEBENCH_LOG_DIR``; ``False``: no log, on
            purpose — otherwise a training protocol without one warns).
        run: the run id.
        resume: continue an old run logged there.
        algorithm: the agent's name, for the log headers.
        num_threads: ``AtariVectorEnv``'s threads (0: one per env, up to the CPUs).
        thread_affinity_offset: ``AtariVectorEnv``'s CPU pinning (-1: none).
        record_actions: record what replaying each logged episode needs (``<run>.replay``:
            each env's seed and its actions since; see
            :class:`~arcadebench.wrappers.vector.VectorEpisodeMonitor`).
        **kwargs: spec settings to override (recorded as deviations, with a warning).

    Returns:
        A Gymnasium ``VectorEnv`` with same-step autoreset (see
        :mod:`arcadebench.benchmarks.envs.batched`), its outermost layer the run's monitor
        (its ``reset`` takes a seed per env too).

    Raises:
        InvalidArgument: a retro spec, an unknown keyword, or a setting outside its rule.

    Example:
        >>> import arcadebench
        >>> envs = arcadebench.make_vec("saber", "pong", num_envs=2)
        >>> obs, info = envs.reset(seed=0)
        >>> obs.shape, envs.single_action_space
        ((2, 4, 84, 84), Discrete(18))
        >>> envs.close()
    """
    directory, unlogged_ok = resolve_log_dir(log_dir)
    spec = load_spec(spec)
    game = spec.resolve_game(game)
    if spec.platform != "atari":
        raise InvalidArgument(
            f"`spec` must be an Atari protocol for make_vec (ale-py's batched emulator), got "
            f"{spec.name!r} ({spec.platform}); batch retro levels with gym.make_vec(id, "
            "num_envs, vectorization_mode='async')"
        )
    resolved = resolve(spec, kwargs)
    if resolved.options:
        option = next(iter(resolved.options))
        raise InvalidArgument(
            f"`{option}` is not an option of make_vec (its options are its parameters), got "
            f"{resolved.options[option]!r}"
        )
    warn_deviations(resolved, f"{spec.name} environments for {game!r}")
    atari = resolved.settings
    if not isinstance(atari, AtariSettings):  # pragma: no cover - the platform was checked above
        raise InvalidArgument(f"`spec` must be an Atari protocol, got {spec.name!r}")
    env: VectorEnv = AtariProtocolVectorEnv(
        game,
        num_envs,
        obs_type=obs_type,
        num_threads=num_threads,
        thread_affinity_offset=thread_affinity_offset,
        noop_max=_noop_max(spec, atari),
        **ale_options(atari),
    )
    try:
        for rule, arguments in protocol_layers(atari):
            env = _VECTOR_WRAPPERS[rule](env, **arguments)
        return VectorEpisodeMonitor(
            env,
            log_dir=directory,
            obs_type=obs_type,
            **monitor_kwargs(
                resolved,
                game,
                run=run,
                resume=resume,
                algorithm=algorithm,
                record_actions=record_actions,
                unlogged_ok=unlogged_ok,
            ),
        )
    except BaseException:
        env.close()
        raise
