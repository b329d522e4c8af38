"""Sonic protocol environments on stable-retro: one level, and the level list.

:func:`make_retro_env` builds a level exactly as the Sonic benchmark defines it (Nichol et al.
2018, Section 3), composing the protocol wrappers inner to outer as DEVELOPING.md documents:

``RetroEnv`` (the level's save state, one emulator frame per step, headless) →
:class:`~arcadebench.wrappers.SonicProgressReward` (the contest reward and episode ends,
Sections 3.5 and 3.8) → :class:`~arcadebench.wrappers.StickyFrameSkip` (4 frames, p = 0.25,
Section 3.4) → :class:`~arcadebench.wrappers.ButtonDiscretizer` (the spec's action set,
Section 3.7; none for ``action_set="buttons"``, the raw 12-button vector) →
:class:`~arcadebench.wrappers.TimeLimit` (4,500 timesteps, Section 3.5);
:mod:`~arcadebench.benchmarks.envs.factory` adds the episode monitor on top. The wrappers know
nothing of specs: :func:`progress_reward` is where a spec's reward tables become the contest
reward's arguments, for the level builder and for anyone who wants that reward on its own.

The ``RetroEnv`` runs the game's ``contest`` scenario (retro-contest's ``local.make``), so the
emulator's own ``done`` is the contest's; the reward the agent sees is the Python port's.
Before the emulator is created the ROM is checked (:mod:`~arcadebench.benchmarks.envs.roms`), and a
second emulator in the process becomes :class:`~arcadebench.errors.EmulatorInUse`, which says
how to vectorise instead: stable-retro allows one emulator per process, so parallel levels
need processes (``gym.make_vec(id, num_envs=N, vectorization_mode="async")`` or
``arcadebench run``).

The joint training env is :mod:`~arcadebench.benchmarks.envs.joint`.

Classes: LevelRecord.
Functions: make_retro_env, progress_reward, check_retro_settings, levels, retro_spec.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from typing import cast

import gymnasium as gym

from arcadebench.benchmarks.envs.ids import env_id
from arcadebench.benchmarks.envs.roms import (
    integration_of,
    require_rom,
    rom_status,
    state_file,
)
from arcadebench.errors import EmulatorInUse, InvalidArgument, UnknownGame
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.model import AtariSettings, RetroSettings
from arcadebench.wrappers import ButtonDiscretizer, SonicProgressReward, StickyFrameSkip, TimeLimit

__all__ = [
    "LevelRecord",
    "check_retro_settings",
    "levels",
    "make_retro_env",
    "progress_reward",
    "retro_spec",
]

_MULTIPLE_EMULATORS = "multiple emulator instances"


# -- one level -------------------------------------------------------------------------------------


def check_retro_settings(settings: AtariSettings | RetroSettings) -> RetroSettings:
    """Return ``settings`` if a retro env can follow them, else refuse before any emulator starts.

    Atari settings are refused, and so is what the contest reward cannot do (Section 3.5).
    """
    if not isinstance(settings, RetroSettings):
        raise InvalidArgument(
            "`spec` must be a retro spec (platform 'retro', like 'sonic'), got Atari settings"
        )
    for key in ("end_on_life_loss", "end_on_level_complete"):
        if getattr(settings, key) is not True:
            raise InvalidArgument(
                f"`{key}` must be True (the contest reward ends episodes on a life loss and on "
                f"completion, Section 3.5), got {getattr(settings, key)!r}"
            )
    return settings


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
            raise EmulatorInUse(
                f"stable-retro allows one emulator per process and this process already has one, "
                f"so {integration.game_id} cannot start: close the other environment first "
                "(env.close()), or run environments in parallel in their own processes: "
                'gym.make_vec(id, num_envs=N, vectorization_mode="async") or `arcadebench run` '
                "(one worker process per level)"
            ) from None
        raise
    env.initial_state = initial_state
    env.statename = state.name
    return cast(gym.Env, env)  # a RetroEnv is a gym.Env; stable-retro ships no types


def make_retro_env(
    spec: Spec, game: str, settings: RetroSettings, *, render_mode: str | None = None
) -> gym.Env:
    """Build Sonic level ``game`` with the (possibly overridden) protocol ``settings``.

    The registered entry point (``benchmarks/envs/factory.py``) calls this and adds the monitor.

    Args:
        spec: the protocol spec (``sonic``, or a retro spec of your own).
        game: a level name of ``spec`` (``SonicTheHedgehog-GreenHillZone.Act1``).
        settings: the resolved settings (:func:`~arcadebench.benchmarks.envs.resolve.resolve`).
        render_mode: ``None`` (default) or ``"rgb_array"``; never ``"human"``, stable-retro's
            default, which opens a window and fails without a display (``resolve`` refuses it).

    Raises:
        InvalidArgument: a setting the contest reward cannot follow, or another console shape.
        RomNotFound: the game's ROM is not imported (or is another dump).
        EmulatorInUse: this process already has an emulator.

    Example (with the Sonic 1 ROM imported; ``arcadebench doctor`` says whether it is)::

        env = gym.make("arcadebench/Sonic-SonicTheHedgehog-GreenHillZone.Act2-v0")
        env.observation_space.shape, env.action_space  # ((224, 320, 3), Discrete(8))
        env.spec.kwargs["sticky_probability"]          # 0.25
    """
    check_retro_settings(settings)
    level = spec.levels[spec.resolve_game(game)]
    env = _retro_env(spec, level.name, render_mode)
    try:
        shape = tuple(settings.observation_shape)
        if env.observation_space.shape != shape:
            raise InvalidArgument(
                f"`observation_shape` must be the console's {env.observation_space.shape} "
                "(Section 3.6; resize on the agent side, e.g. with "
                f"arcadebench.wrappers.standard_retro_observations), got {shape}"
            )
        return _wrap_protocol(env, spec, level.game, settings)
    except BaseException:
        env.close()
        raise


def progress_reward(
    env: gym.Env, spec: str | Spec, retro_game: str, settings: RetroSettings | None = None
) -> SonicProgressReward:
    """Wrap ``env`` in the contest reward of ``retro_game``, with its tables from ``spec``.

    The one translation of a spec into :class:`~arcadebench.wrappers.SonicProgressReward`'s
    arguments, since the wrapper knows nothing of specs: the game's end tables
    (``retro_games.<game>``: ``level_end_x``, ``end_when``, ``end_when_not``,
    ``act_change_offset``) and the reward's numbers (Section 3.8: ``progress_scale``,
    ``completion_bonus``, ``bonus_horizon_frames``) from ``settings``.

    Args:
        env: the game's ``RetroEnv`` (one emulator frame per step), or a stand-in reporting its
            RAM variables.
        spec: a retro spec (``"sonic"``) or its loaded :class:`~arcadebench.specs.Spec`.
        retro_game: a key of ``spec.retro_games`` (``"SonicTheHedgehog-Genesis"``).
        settings: the resolved settings (default: the spec's own).

    Raises:
        InvalidArgument: ``retro_game`` is not a retro game of ``spec``.

    Example:
        >>> import gymnasium as gym
        >>> env = progress_reward(gym.make("CartPole-v1"), "sonic", "SonicTheHedgehog2-Genesis")
        >>> arguments = env.spec.additional_wrappers[-1].kwargs
        >>> arguments["end_when"], arguments["progress_scale"], arguments["bonus_horizon_frames"]
        ({'game_mode': 16}, 9000.0, 18000)
    """
    spec = load_spec(spec)
    if retro_game not in spec.retro_games:
        raise InvalidArgument(
            f"`game` must be one of {sorted(spec.retro_games)}, got {retro_game!r}"
        )
    if settings is None:  # the loader allows retro games in retro specs only
        settings = cast(RetroSettings, spec.environment)
    game = spec.retro_games[retro_game]
    return SonicProgressReward(
        env,
        level_end_x=dict(game.level_end_x),
        end_when=dict(game.end_when),
        end_when_not=dict(game.end_when_not),
        act_change_offset=game.act_change_offset,
        progress_scale=settings.progress_scale,
        completion_bonus=settings.completion_bonus,
        bonus_horizon_frames=settings.bonus_horizon_frames,
    )


def _wrap_protocol(env: gym.Env, spec: Spec, retro_game: str, settings: RetroSettings) -> gym.Env:
    """Wrap a level's ``RetroEnv`` in the protocol wrappers, in the documented order."""
    env = progress_reward(env, spec, retro_game, settings)
    env = StickyFrameSkip(env, n=settings.frameskip, stickprob=settings.sticky_probability)
    if settings.action_set != "buttons":
        env = ButtonDiscretizer(env, combos=spec.action_sets[settings.action_set])
    return TimeLimit(env, max_episode_steps=settings.max_episode_timesteps)


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


def retro_spec(spec: str | Spec) -> Spec:
    """``spec`` loaded, if it is a retro protocol with levels."""
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
    spec = retro_spec(spec)
    if split is not None and split not in ("all", "train", "test"):
        raise InvalidArgument(f"`split` must be 'train', 'test', 'all' or None, got {split!r}")
    chosen = {name: spec.levels[name] for name in spec.games_of(split or "all")}
    games = dict.fromkeys(level.game for level in chosen.values())
    roms = {game: rom_status(spec, game) for game in games}
    return [
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
        for name, level in chosen.items()
    ]
