"""Joint training on Sonic: a new training level at the start of every episode.

Classes: JointSonicEnv.
Functions: register_joint_envs.
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
from gymnasium.core import RenderFrame

from arcadebench.benchmarks.envs.resolve import resolve
from arcadebench.benchmarks.envs.roms import require_roms, state_file
from arcadebench.benchmarks.envs.sonic import check_retro_settings, make_retro_env, retro_spec
from arcadebench.errors import InvalidArgument
from arcadebench.specs import Spec

__all__ = ["JOINT_ENV_ID", "JointSonicEnv", "register_joint_envs"]

JOINT_ENV_ID = "arcadebench/Sonic-JointTrain-v0"
"""The Gymnasium id of :class:`JointSonicEnv` on the Sonic training levels."""


class JointSonicEnv(gym.Env):
    """A "joint environment": a new training level at the start of every episode.

    Why: the joint Rainbow baseline trained one model on the whole training set with
    environments that "sample a new training level at the beginning of every episode" (Nichol
    et al. 2018, Section 4.6); the training set may be used "as much or as little as you like"
    (Section 3.9), and joint training followed by fine-tuning is the benchmark's best baseline.
    Each episode is the level's protocol environment (:func:`make_retro_env`: same reward,
    sticky frame skip, limit and action set). No monitor is attached: training levels are not
    scored. ``reset(options={"level": name})`` plays a given level instead of a sampled one.

    Level switches: stable-retro allows one emulator per process, so a level of *another game*
    closes the emulator and builds that level's environment (28 ms on the Airstriker test
    integration, 33 resets' worth; ``perf/bench_sonic_joint.py``), a level of the *same game* only
    loads its save state into the running emulator at reset (0.85 ms, as fast as a reset). Levels
    are drawn uniformly from the pool with the env's seeded generator, so ``reset(seed=s)`` fixes
    the level sequence and the sticky frame skip.

    Info: ``info["arcadebench"]["level"]``: the level being played (at reset and every step).

    Args:
        spec: ``"sonic"`` or a retro spec of your own.
        split: the level pool: ``"train"`` (default, 47 levels), ``"test"`` or ``"all"``.
        levels: the pool as level names instead (e.g. only the levels of your ROMs).
        render_mode: ``None`` or ``"rgb_array"``.
        **settings: protocol settings to override (as for a level's environment).

    Raises:
        RomNotFound: a ROM of the pool's games is missing (one line naming all of them).
        EmulatorInUse: this process already has an emulator.
    """

    metadata = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        spec: str | Spec = "sonic",
        split: str = "train",
        levels: Sequence[str] | None = None,
        render_mode: str | None = None,
        **settings: Any,
    ) -> None:
        self._spec = retro_spec(spec)
        resolved = resolve(self._spec, {**settings, "render_mode": render_mode})
        self._settings = check_retro_settings(resolved.settings)
        if levels is not None:
            if isinstance(levels, str) or not levels:
                raise InvalidArgument(
                    f"`levels` must be a non-empty list of level names, got {levels!r}"
                )
            pool = tuple(dict.fromkeys(self._spec.resolve_game(name) for name in levels))
        else:
            if split not in ("train", "test", "all"):
                raise InvalidArgument(f"`split` must be 'train', 'test' or 'all', got {split!r}")
            pool = self._spec.games_of(split)
        require_roms(self._spec, pool)
        self.pool: tuple[str, ...] = pool
        self.render_mode = render_mode
        self.level: str = pool[0]
        self._states: dict[str, bytes] = {}
        self._env: gym.Env | None = None
        self._game: str | None = None
        first = self._switch(pool[0])
        self.observation_space = first.observation_space
        self.action_space = first.action_space

    def _state(self, level: str) -> bytes:
        if level not in self._states:
            with gzip.open(state_file(self._spec, level), "rb") as handle:
                self._states[level] = handle.read()
        return self._states[level]

    def _switch(self, level: str) -> gym.Env:
        """Make ``level`` the one the next reset plays: load its state, or start its game."""
        game = self._spec.levels[level].game
        env = self._env
        if env is not None and game == self._game:
            retro: Any = env.unwrapped  # a RetroEnv: stable-retro ships no types
            retro.initial_state = self._state(level)
            retro.statename = f"{self._spec.levels[level].state}.state"
        else:
            if env is not None:
                env.close()
                self._env = None
            env = make_retro_env(self._spec, level, self._settings, render_mode=self.render_mode)
            self._env = env
            self._game = game
            if getattr(self, "observation_space", None) is not None and (
                env.observation_space != self.observation_space
                or env.action_space != self.action_space
            ):
                raise InvalidArgument(
                    f"`levels` must share one observation and action space, got {level} with "
                    f"{env.observation_space} / {env.action_space}"
                )
        self.level = level
        return env

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode on a sampled training level (or ``options["level"]``)."""
        super().reset(seed=seed)
        if options and "level" in options:
            level = self._spec.resolve_game(options["level"])
        else:
            level = self.pool[int(self.np_random.integers(len(self.pool)))]
        env = self._switch(level)
        obs, info = env.reset(seed=int(self.np_random.integers(2**31 - 1)))
        info.setdefault("arcadebench", {})["level"] = level
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step the current level."""
        if self._env is None:
            raise gym.error.ResetNeeded("the environment is closed: call reset() before step()")
        obs, reward, terminated, truncated, info = self._env.step(action)
        info.setdefault("arcadebench", {})["level"] = self.level
        return obs, float(reward), bool(terminated), bool(truncated), info

    def render(self) -> RenderFrame | list[RenderFrame] | None:
        """The current frame (``render_mode="rgb_array"``)."""
        return self._env.render() if self._env is not None else None

    def close(self) -> None:
        """Free the emulator."""
        if self._env is not None:
            self._env.close()
            self._env = None
            self._game = None
        super().close()


def register_joint_envs() -> list[str]:
    """Register :data:`JOINT_ENV_ID` (idempotent); returns the ids."""
    if JOINT_ENV_ID not in gym.registry:
        gym.register(
            JOINT_ENV_ID,
            entry_point=f"{__name__}:JointSonicEnv",
            kwargs={"spec": "sonic", "split": "train"},
        )
    return [JOINT_ENV_ID]
