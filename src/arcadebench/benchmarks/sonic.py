"""Sonic protocol environments on stable-retro: one level, the level list, and the joint env.

:func:`make_retro_env` builds a level exactly as the Sonic benchmark defines it (Nichol et al.
2018, Section 3), composing the protocol wrappers inner to outer as DEVELOPING.md documents:

``RetroEnv`` (the level's save state, one emulator frame per step, headless) →
:class:`~arcadebench.wrappers.SonicProgressReward` (the contest reward and episode ends,
Sections 3.5 and 3.8) → :class:`~arcadebench.wrappers.StickyFrameSkip` (4 frames, p = 0.25,
Section 3.4) → :class:`~arcadebench.wrappers.ButtonDiscretizer` (the spec's action set,
Section 3.7; none for ``action_set="buttons"``, the raw 12-button vector) →
:class:`~arcadebench.wrappers.TimeLimit` (4,500 timesteps, Section 3.5); ``benchmarks/envs.py``
adds the episode monitor on top.

The ``RetroEnv`` runs the game's ``contest`` scenario (retro-contest's ``local.make``), so the
emulator's own ``done`` is the contest's; the reward the agent sees is the Python port's.
Before the emulator is created the ROM is checked (:mod:`~arcadebench.benchmarks.roms`), and a
second emulator in the process becomes :class:`~arcadebench.errors.EmulatorInUse`, which says
how to vectorise instead: stable-retro allows one emulator per process, so parallel levels
need processes (``gym.make_vec(id, num_envs=N, vectorization_mode="async")`` or
``arcadebench run``).

:class:`JointSonicEnv` (``arcadebench/Sonic-JointTrain-v0``) samples a training level per
episode, as the joint Rainbow baseline's environments did (Section 4.6).

Classes: LevelRecord, JointSonicEnv.
Functions: make_retro_env, levels, register_joint_envs.
"""

from __future__ import annotations

import dataclasses
import gzip
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.roms import (
    integration_of,
    require_rom,
    require_roms,
    rom_status,
    state_file,
)
from arcadebench.errors import EmulatorInUse, InvalidArgument, UnknownGame
from arcadebench.specs import Spec, load_spec
from arcadebench.wrappers import ButtonDiscretizer, SonicProgressReward, StickyFrameSkip, TimeLimit
from arcadebench.wrappers._checks import check_int, check_probability

__all__ = [
    "JOINT_ENV_ID",
    "JointSonicEnv",
    "LevelRecord",
    "levels",
    "make_retro_env",
    "register_joint_envs",
]

JOINT_ENV_ID = "arcadebench/Sonic-JointTrain-v0"
RENDER_MODES = (None, "rgb_array")
_MULTIPLE_EMULATORS = "multiple emulator instances"


# -- one level -------------------------------------------------------------------------------------


def _check_settings(spec: Spec, settings: Mapping[str, Any]) -> str:
    """Check the (possibly overridden) settings before any emulator starts; the action set."""
    check_int("frameskip", settings["frameskip"], minimum=1)
    check_probability("sticky_probability", settings["sticky_probability"])
    check_int("max_episode_timesteps", settings["max_episode_timesteps"], minimum=1)
    for key in ("end_on_life_loss", "end_on_level_complete"):
        if settings[key] is not True:
            raise InvalidArgument(
                f"`{key}` must be True (the contest reward ends episodes on a life loss and on "
                f"completion, Section 3.5), got {settings[key]!r}"
            )
    action_set = settings["action_set"]
    choices = ("buttons", *spec.action_sets)
    if action_set not in choices:
        raise InvalidArgument(
            f"`action_set` must be one of {', '.join(choices)}, got {action_set!r}"
        )
    return action_set


def _emulator_in_use(game_id: str) -> EmulatorInUse:
    return EmulatorInUse(
        f"stable-retro allows one emulator per process and this process already has one, so "
        f"{game_id} cannot start: close the other environment first (env.close()), or run "
        "environments in parallel in their own processes: gym.make_vec(id, num_envs=N, "
        'vectorization_mode="async") or `arcadebench run` (one worker process per level)'
    )


def _retro_env(spec: Spec, level_name: str, render_mode: str | None) -> gym.Env:
    """The level's headless ``RetroEnv`` at its save state, running the contest scenario."""
    import stable_retro

    level = spec.levels[level_name]
    integration = integration_of(spec, level.game)
    require_rom(spec, level.game)
    state = state_file(spec, level_name)
    with gzip.open(state, "rb") as handle:
        initial_state = handle.read()
    data = integration.file("data.json")
    scenario = integration.file("contest.json") or integration.file("scenario.json")
    try:
        env = stable_retro.RetroEnv(
            integration.game_id,
            state=stable_retro.State.NONE,
            info=str(data) if data else None,
            scenario=str(scenario) if scenario else None,
            inttype=stable_retro.data.Integrations.DEFAULT,
            render_mode=render_mode,
        )
    except RuntimeError as error:
        if _MULTIPLE_EMULATORS in str(error):
            raise _emulator_in_use(integration.game_id) from None
        raise
    env.initial_state = initial_state
    env.statename = state.name
    return env


def make_retro_env(spec: Spec, game: str, settings: Mapping[str, Any], **kwargs: Any) -> gym.Env:
    """Build Sonic level ``game`` with the (possibly overridden) protocol ``settings``.

    The registered entry point (``benchmarks/envs.py``) calls this and adds the monitor.

    Args:
        spec: the protocol spec (``sonic``, or a retro spec of your own).
        game: a level name of ``spec`` (``SonicTheHedgehog-GreenHillZone.Act1``).
        settings: the spec's environment settings (``RetroSettings`` fields).
        **kwargs: ``render_mode``: ``None`` (default) or ``"rgb_array"``; never ``"human"``,
            stable-retro's default, which opens a window and fails without a display.

    Raises:
        InvalidArgument: an unknown keyword, a ``"human"`` render mode or a bad setting.
        RomNotFound: the game's ROM is not imported (or is another dump).
        EmulatorInUse: this process already has an emulator.

    Example (with the Sonic 1 ROM imported; ``arcadebench doctor`` says whether it is)::

        env = gym.make("arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act2-v0")
        env.observation_space.shape, env.action_space  # ((224, 320, 3), Discrete(8))
        env.spec.kwargs["sticky_probability"]          # 0.25
    """
    render_mode = kwargs.pop("render_mode", None)
    if kwargs:
        raise InvalidArgument(
            f"`{next(iter(kwargs))}` is not an option of Sonic environments (options: render_mode "
            f"and the spec settings {', '.join(settings)}), got {kwargs!r}"
        )
    if render_mode not in RENDER_MODES:
        raise InvalidArgument(
            f"`render_mode` must be None or 'rgb_array' (stable-retro's 'human' opens a window and "
            f"needs a display; render frames yourself from 'rgb_array'), got {render_mode!r}"
        )
    action_set = _check_settings(spec, settings)
    level = spec.levels[spec.resolve_game(game)]
    env = _retro_env(spec, level.name, render_mode)
    try:
        shape = tuple(settings["observation_shape"])
        if env.observation_space.shape != shape:
            raise InvalidArgument(
                f"`observation_shape` must be the console's {env.observation_space.shape} "
                "(Section 3.6; resize on the agent side, e.g. with "
                f"arcadebench.wrappers.standard_retro_observations), got {shape}"
            )
        return _wrap_protocol(env, spec, level.game, settings, action_set)
    except BaseException:
        env.close()
        raise


def _wrap_protocol(
    env: gym.Env, spec: Spec, retro_game: str, settings: Mapping[str, Any], action_set: str
) -> gym.Env:
    """Wrap a level's ``RetroEnv`` in the protocol wrappers, in the documented order."""
    game = spec.retro_games[retro_game]
    env = SonicProgressReward(
        env,
        level_end_x=dict(game.level_end_x),
        end_when=dict(game.end_when),
        end_when_not=dict(game.end_when_not),
        act_change_offset=game.act_change_offset,
        progress_scale=settings["progress_scale"],
        completion_bonus=settings["completion_bonus"],
        bonus_horizon_frames=settings["bonus_horizon_frames"],
    )
    env = StickyFrameSkip(env, n=settings["frameskip"], stickprob=settings["sticky_probability"])
    if action_set != "buttons":
        env = ButtonDiscretizer(env, combos=spec.action_sets[action_set])
    return TimeLimit(env, max_episode_steps=settings["max_episode_timesteps"])


# -- the level list --------------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelRecord:
    """One level of a retro protocol, and whether this machine can play it.

    Attributes:
        name: the level name (``SonicTheHedgehog-GreenHillZone.Act1``), the ``game`` of logs.
        game: the published game name (``SonicTheHedgehog-Genesis``).
        integration: the stable-retro game id (``SonicTheHedgehog-Genesis-v0``).
        state: the save state (``GreenHillZone.Act1``).
        split: ``"train"`` or ``"test"`` (Section 3.3).
        zone: the RAM zone of the level.
        act: the RAM act of the level.
        env_id: the Gymnasium id.
        playable: whether the ROM is imported (the right dump) and the state exists.
    """

    name: str
    game: str
    integration: str
    state: str
    split: str
    zone: int
    act: int
    env_id: str
    playable: bool


def _retro_spec(spec: str | Spec) -> Spec:
    loaded = load_spec(spec)
    if loaded.platform != "retro":
        raise InvalidArgument(
            f"`spec` must be a retro protocol with levels (e.g. 'sonic'), got {loaded.name!r} "
            f"({loaded.platform}; its games are spec.games)"
        )
    return loaded


def _state_exists(spec: Spec, level: str) -> bool:
    try:
        state_file(spec, level)
    except UnknownGame:
        return False
    return True


def levels(spec: str | Spec = "sonic", split: str | None = None) -> list[LevelRecord]:
    """The levels of a retro protocol, in the spec's order, and whether each is playable here.

    Args:
        spec: ``"sonic"`` (default), or a retro spec of your own.
        split: ``"train"`` (47 levels), ``"test"`` (11, Section 3.3), or ``None``/``"all"``.

    Example:
        >>> import arcadebench
        >>> test = arcadebench.levels("sonic", split="test")
        >>> len(test), test[0].name, test[0].split, test[0].state
        (11, 'SonicTheHedgehog-SpringYardZone.Act1', 'test', 'SpringYardZone.Act1')
        >>> test[0].game, test[0].integration
        ('SonicTheHedgehog-Genesis', 'SonicTheHedgehog-Genesis-v0')
        >>> test[0].env_id
        'arcadebench/Sonic-SonicTheHedgehog-SpringYardZone.Act1-v0'
    """
    from arcadebench.benchmarks.envs import env_id

    spec = _retro_spec(spec)
    if split is not None and split not in ("all", "train", "test"):
        raise InvalidArgument(f"`split` must be 'train', 'test', 'all' or None, got {split!r}")
    names = spec.games_of(split or "all")
    games = dict.fromkeys(spec.levels[name].game for name in names)
    roms = {game: rom_status(spec, game) for game in games}
    records = []
    for name in names:
        level = spec.levels[name]
        records.append(
            LevelRecord(
                name=name,
                game=level.game,
                integration=roms[level.game].game_id,
                state=level.state,
                split=level.split,
                zone=level.zone,
                act=level.act,
                env_id=env_id(spec, name),
                playable=roms[level.game].playable and _state_exists(spec, name),
            )
        )
    return records


# -- joint training --------------------------------------------------------------------------------


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
        self._spec = _retro_spec(spec)
        if render_mode not in RENDER_MODES:
            raise InvalidArgument(f"`render_mode` must be None or 'rgb_array', got {render_mode!r}")
        defaults = dataclasses.asdict(self._spec.environment)
        unknown = sorted(set(settings) - set(defaults))
        if unknown:
            raise InvalidArgument(
                f"`{unknown[0]}` is not a setting of the {self._spec.name!r} protocol "
                f"({', '.join(defaults)}), got {settings!r}"
            )
        self._settings = {**defaults, **settings}
        _check_settings(self._spec, self._settings)
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
        self._switch(pool[0])
        self.observation_space = self._env.observation_space
        self.action_space = self._env.action_space

    def _state(self, level: str) -> bytes:
        if level not in self._states:
            with gzip.open(state_file(self._spec, level), "rb") as handle:
                self._states[level] = handle.read()
        return self._states[level]

    def _switch(self, level: str) -> None:
        """Make ``level`` the one the next reset plays: load its state, or start its game."""
        game = self._spec.levels[level].game
        if self._env is not None and game == self._game:
            retro = self._env.unwrapped
            retro.initial_state = self._state(level)
            retro.statename = f"{self._spec.levels[level].state}.state"
        else:
            if self._env is not None:
                self._env.close()
                self._env = None
            self._env = make_retro_env(
                self._spec, level, self._settings, render_mode=self.render_mode
            )
            self._game = game
            if getattr(self, "observation_space", None) is not None and (
                self._env.observation_space != self.observation_space
                or self._env.action_space != self.action_space
            ):
                raise InvalidArgument(
                    f"`levels` must share one observation and action space, got {level} with "
                    f"{self._env.observation_space} / {self._env.action_space}"
                )
        self.level = level

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Start an episode on a sampled training level (or ``options["level"]``)."""
        super().reset(seed=seed)
        if options and "level" in options:
            level = self._spec.resolve_game(options["level"])
        else:
            level = self.pool[int(self.np_random.integers(len(self.pool)))]
        self._switch(level)
        obs, info = self._env.reset(seed=int(self.np_random.integers(2**31 - 1)))
        info.setdefault("arcadebench", {})["level"] = level
        return obs, info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Step the current level."""
        obs, reward, terminated, truncated, info = self._env.step(action)
        info.setdefault("arcadebench", {})["level"] = self.level
        return obs, reward, terminated, truncated, info

    def render(self) -> np.ndarray | None:
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
