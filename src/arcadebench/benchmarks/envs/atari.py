"""Where the Atari protocol is assembled: ale-py's native settings, then the protocol's wrappers.

ale-py implements four SABER/HWR/Atari-5 settings natively and exactly — per-frame sticky actions
(``repeat_action_probability``), the 18-action set (``full_action_space``), the frame skip and
the episode frame cap (``max_num_frames_per_episode``, a truncation) — so :func:`ale_options`
passes those straight through. Behaviours ale-py lacks are the protocol's layers,
:func:`protocol_layers`, each only when the spec asks for it, inner to outer:

rollover guard (``rollover_threshold``/``rollover_correction``) → max stuck time
(``max_stuck_frames``) → frame limit (``max_episode_frames``; labels the native truncation) →
life-loss terminal (``life_loss_terminal_in_training``, the training environment only) → no life
information (``life_information: false``).

No-op starts (``noop_starts``) are the env's own reset
(:class:`~arcadebench.wrappers.noop_starts.NoopStarts`): raw frames after the emulator's reset,
which a wrapper could not play.

These two functions are the protocol for every entry point: :func:`make_atari_env` (one env,
``gym.make``) applies the layers as :mod:`arcadebench.wrappers`, ``arcadebench.make_vec``
(:mod:`~arcadebench.benchmarks.envs.batched`) as their vector twins, so the two can never
assemble the protocol differently. The episode monitor goes on top
(:mod:`~arcadebench.benchmarks.envs.factory`).

``obs_type="standard"`` gives the agent-side standard observation (grayscale, max-pool of the
last two frames, 84x84, stack of 4) through :class:`~arcadebench.wrappers.StandardAtariEnv`,
with the protocol unchanged.

Functions: ale_options, protocol_layers, wrap_atari_protocol, make_atari_env.

Example:
    >>> import gymnasium as gym, arcadebench
    >>> env = gym.make("arcadebench/SABER-Pong-v0", obs_type="standard")
    >>> env.reset(seed=0)[0].shape
    (4, 84, 84)
    >>> [w.name for w in env.spec.additional_wrappers][:4]  # then the monitor, outermost
    ['RolloverGuard', 'MaxStuckTime', 'EpisodeFrameLimit', 'NoLifeInformation']
    >>> env.close()
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium as gym

from arcadebench.benchmarks.envs.reload_free import (
    ReloadFreeAtariEnv,
    ReloadFreeStandardAtariEnv,
)
from arcadebench.specs.model import AtariSettings
from arcadebench.wrappers import (
    EpisodeFrameLimit,
    LifeLossTerminal,
    MaxStuckTime,
    NoLifeInformation,
    RolloverGuard,
)

__all__ = ["ale_options", "make_atari_env", "protocol_layers", "wrap_atari_protocol"]

Layer = tuple[str, dict[str, Any]]
Phase = Literal["training", "evaluation"]

_SINGLE_ENV_WRAPPERS: dict[str, Any] = {
    "rollover": RolloverGuard,
    "stuck": MaxStuckTime,
    "frame_limit": EpisodeFrameLimit,
    "life_loss_terminal": LifeLossTerminal,
    "no_life_information": NoLifeInformation,
}


def ale_options(settings: AtariSettings) -> dict[str, Any]:
    """The protocol settings ale-py implements itself, as ``AtariEnv`` keyword arguments.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> ale_options(load_spec("hwr").environment)["max_num_frames_per_episode"]
        108000
    """
    return {
        "frameskip": settings.frameskip,
        "repeat_action_probability": settings.repeat_action_probability,
        "full_action_space": settings.full_action_space,
        "max_num_frames_per_episode": settings.max_episode_frames,
    }


def protocol_layers(settings: AtariSettings, phase: Phase = "training") -> list[Layer]:
    """The protocol's wrappers beyond ale-py, inner to outer: ``[(rule, arguments), ...]``.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> [rule for rule, _ in protocol_layers(load_spec("saber").environment)]
        ['rollover', 'stuck', 'frame_limit', 'no_life_information']
        >>> [rule for rule, _ in protocol_layers(load_spec("atari5").environment)]
        ['frame_limit', 'no_life_information']
        >>> atari100k = load_spec("atari100k").environment
        >>> [rule for rule, _ in protocol_layers(atari100k)]
        ['frame_limit', 'life_loss_terminal', 'no_life_information']
        >>> [rule for rule, _ in protocol_layers(atari100k, "evaluation")]
        ['frame_limit', 'no_life_information']
    """
    layers: list[Layer] = []
    threshold, correction = settings.rollover_threshold, settings.rollover_correction
    if threshold is not None:
        layers.append(("rollover", {"threshold": threshold, "correction": correction}))
    if settings.max_stuck_frames is not None:
        layers.append(("stuck", {"max_stuck_frames": settings.max_stuck_frames}))
    if settings.max_episode_frames is not None:
        layers.append(("frame_limit", {"max_episode_frames": settings.max_episode_frames}))
    if settings.life_loss_terminal_in_training and phase == "training":
        layers.append(("life_loss_terminal", {}))
    if not settings.life_information:
        layers.append(("no_life_information", {}))
    return layers


def wrap_atari_protocol(
    env: gym.Env, settings: AtariSettings, phase: Phase = "training"
) -> gym.Env:
    """Wrap an ``AtariEnv`` in the protocol's layers, in the documented order."""
    for rule, arguments in protocol_layers(settings, phase):
        env = _SINGLE_ENV_WRAPPERS[rule](env, **arguments)
    return env


def make_atari_env(
    game: str,
    settings: AtariSettings,
    *,
    obs_type: Literal["rgb", "grayscale", "ram", "standard"] = "rgb",
    render_mode: str | None = None,
    phase: Phase = "training",
) -> gym.Env:
    """Build the Atari environment of ``game`` with the (possibly overridden) ``settings``.

    Args:
        game: an ale-py game id.
        settings: the resolved settings (:func:`~arcadebench.benchmarks.envs.resolve.resolve`).
        obs_type: ``AtariEnv``'s ``rgb``, ``grayscale`` or ``ram``, or ``"standard"``
            (:class:`~arcadebench.wrappers.StandardAtariEnv`).
        render_mode: ``AtariEnv``'s render mode.
        phase: the ``training`` environment, or the ``evaluation`` one of a protocol that
            scores evaluation episodes (no training life-loss signal).
    """
    native: dict[str, Any] = {"game": game, "render_mode": render_mode, **ale_options(settings)}
    native["noop_starts"] = settings.noop_starts
    if obs_type == "standard":
        env: gym.Env = ReloadFreeStandardAtariEnv(**native)
    else:
        env = ReloadFreeAtariEnv(**native, obs_type=obs_type)
    return wrap_atari_protocol(env, settings, phase)
