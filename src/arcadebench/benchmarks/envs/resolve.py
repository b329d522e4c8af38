"""The one resolve step: a spec plus a user's keyword arguments -> typed settings and deviations.

Every entry point that builds protocol environments — ``gym.make`` (the registered entry point),
``arcadebench.make``, ``arcadebench.make_vec`` and the runner — resolves its arguments here, so
they accept the same settings, refuse the same mistakes with the same message, and record and
warn about deviations the same way:

- a keyword named like a spec setting overrides it, checked by the rule the spec's own value
  obeys (:func:`arcadebench.specs.settings.override_settings`); a value that differs from the
  spec's is a deviation, warned as :class:`~arcadebench.errors.NonCompliantWarning` and written
  with every logged episode. Choosing a Sonic action set is not a deviation (Nichol et al. 2018,
  Section 3.7: actions are button vectors; JERK played raw buttons);
- a keyword that is a builder option (``obs_type``, ``render_mode``) is checked against its
  choices;
- anything else is refused with the settings and options it could have been.

What the episode log says of an environment (its id, settings and deviations, and the run it
belongs to) is one translation too, :func:`monitor_kwargs`, which both monitors take (the
single env's :class:`~arcadebench.wrappers.monitor.EpisodeMonitor` and the batch's
:class:`~arcadebench.wrappers.vector.VectorEpisodeMonitor`), so a log's header and lines do not
depend on which entry point made its environments.

Classes: ResolvedSettings.
Functions: protocol_kwargs, resolve, warn_deviations, monitor_kwargs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from arcadebench.benchmarks.envs.ids import env_id
from arcadebench.errors import (
    InvalidArgument,
    NonCompliantWarning,
    UnknownGame,
    did_you_mean,
    warn_user,
)
from arcadebench.specs import Spec, load_spec
from arcadebench.specs.model import AtariSettings, RetroSettings
from arcadebench.specs.settings import override_settings

__all__ = [
    "AGENT_CHOICES",
    "ResolvedSettings",
    "monitor_kwargs",
    "protocol_kwargs",
    "resolve",
    "warn_deviations",
]

AGENT_CHOICES = frozenset({"action_set"})
"""Settings that are the agent's choice, not the protocol's; changing them is no deviation."""

# Builder options per platform: the values each may take, and what to say when it is refused.
_OPTIONS: dict[str, dict[str, tuple[tuple[Any, ...], str]]] = {
    "atari": {
        # "standard": the agent-side observation computed in the frame loop (StandardAtariEnv)
        "obs_type": (("rgb", "grayscale", "ram", "standard"), ""),
        "render_mode": ((None, "rgb_array", "human"), ""),
        # the environment of a protocol's evaluation episodes (no training life-loss signal,
        # not counted in the training budget, logged as run "<run>.eval")
        "phase": (("training", "evaluation"), ""),
    },
    "retro": {
        "render_mode": (
            (None, "rgb_array"),
            " (stable-retro's 'human' opens a window and needs a display; render frames yourself "
            "from 'rgb_array')",
        ),
    },
}


@dataclass(frozen=True)
class ResolvedSettings:
    """What an environment of ``spec`` is built with.

    Attributes:
        spec: the protocol.
        settings: its environment settings with the user's overrides applied (typed, checked).
        deviations: ``{setting: {"spec": value, "used": value}}`` for every setting that differs
            from the spec (the agent's own choices excluded).
        options: the builder options given (``obs_type``, ``render_mode``).
    """

    spec: Spec
    settings: AtariSettings | RetroSettings
    deviations: Mapping[str, Mapping[str, Any]]
    options: Mapping[str, Any]

    @property
    def kwargs(self) -> dict[str, Any]:
        """The settings as keyword arguments (what ``env.spec.kwargs`` and log headers show)."""
        return _as_kwargs(self.settings)


def _as_kwargs(settings: AtariSettings | RetroSettings) -> dict[str, Any]:
    """Settings as JSON would give them back (lists, not tuples), so ``env.spec`` round-trips."""
    return {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in dataclasses.asdict(settings).items()
    }


def protocol_kwargs(spec: Spec) -> dict[str, Any]:
    """The spec's environment settings as keyword arguments (``{}`` for a scores-only spec)."""
    return {} if spec.environment is None else _as_kwargs(spec.environment)


def resolve(spec: Spec | str, overrides: Mapping[str, Any] | None = None) -> ResolvedSettings:
    """Resolve ``spec`` and a user's keyword arguments into settings, deviations and options.

    Raises:
        UnknownGame: a spec that defines scores only (no environments).
        InvalidArgument: an unknown keyword (with the settings and options it could be), a
            setting outside its rule, or an option outside its choices.

    Example:
        >>> resolved = resolve("saber", {"repeat_action_probability": 0.0, "obs_type": "standard"})
        >>> dict(resolved.deviations), dict(resolved.options)
        ({'repeat_action_probability': {'spec': 0.25, 'used': 0.0}}, {'obs_type': 'standard'})
    """
    spec = load_spec(spec)
    base = spec.environment
    if base is None:
        raise UnknownGame(
            f"the {spec.name!r} spec (platform 'none') defines scores only, no environments."
        )
    overrides = dict(overrides or {})
    fields = [field.name for field in dataclasses.fields(base)]
    allowed = _OPTIONS[spec.platform]
    for key, value in overrides.items():
        if key not in fields and key not in allowed:
            raise InvalidArgument(
                f"`{key}` is not an option of {spec.name} environments (settings: "
                f"{', '.join(fields)}; options: {', '.join(allowed)}), got {value!r}."
                f"{did_you_mean(key, [*fields, *allowed])}"
            )
    options = {key: value for key, value in overrides.items() if key in allowed}
    for key, value in options.items():
        choices, why = allowed[key]
        if value not in choices:
            raise InvalidArgument(
                f"`{key}` must be one of {', '.join(map(repr, choices))}{why}, got {value!r}"
            )
    settings = override_settings(
        base, {k: v for k, v in overrides.items() if k in fields}, tuple(spec.action_sets)
    )
    expected, used = dataclasses.asdict(base), dataclasses.asdict(settings)
    deviations = {
        key: {"spec": expected[key], "used": used[key]}
        for key in fields
        if key not in AGENT_CHOICES and used[key] != expected[key]
    }
    return ResolvedSettings(spec, settings, deviations, options)


def warn_deviations(resolved: ResolvedSettings, subject: str) -> None:
    """Warn :class:`~arcadebench.errors.NonCompliantWarning` if ``resolved`` deviates.

    ``subject`` names what deviates, e.g. ``"saber environment for 'pong'"``.
    """
    if not resolved.deviations:
        return
    changed = ", ".join(
        f"{key}={value['used']!r} (spec: {value['spec']!r})"
        for key, value in resolved.deviations.items()
    )
    warn_user(
        f"{subject} is non-compliant: {changed}. Its scores are not comparable with the "
        "protocol's (the deviations are recorded with every logged episode).",
        NonCompliantWarning,
    )


def monitor_kwargs(
    resolved: ResolvedSettings,
    game: str,
    *,
    run: str,
    resume: bool,
    algorithm: str | None,
    record_actions: bool,
    unlogged_ok: bool,
) -> dict[str, Any]:
    """The keyword arguments both episode monitors take for the environments of ``resolved``.

    The log header records the settings used (``settings``) and the environment's id, and every
    episode line the deviations, so a score can be told apart from the protocol's (see
    :func:`resolve`); the rest is the call's run: its id, whether an old run is continued, the
    agent's name, whether replays are recorded, and whether no log is intended (from
    :func:`~arcadebench.records.resolve_log_dir`). Where the log goes differs by monitor (a
    file for one env, a directory for a batch) and is the caller's.

    Args:
        resolved: the resolved settings of the environments.
        game: the canonical game or level name.
        run: the run id.
        resume: continue an old run of that id.
        algorithm: the agent's name, for the log header.
        record_actions: record what replaying each logged episode needs.
        unlogged_ok: no log is intended (no warning for a training protocol without one).

    Example:
        >>> resolved = resolve("saber", {"repeat_action_probability": 0.0})
        >>> arguments = monitor_kwargs(
        ...     resolved, "pong", run="0", resume=False, algorithm="dqn", record_actions=True,
        ...     unlogged_ok=False,
        ... )
        >>> arguments["env_id"], arguments["deviations"]
        ('arcadebench/SABER-Pong-v0', {'repeat_action_probability': {'spec': 0.25, 'used': 0.0}})
    """
    return {
        "spec": resolved.spec,
        "game": game,
        "run": run,
        "resume": resume,
        "algorithm": algorithm,
        "deviations": dict(resolved.deviations),
        "settings": resolved.kwargs,
        "env_id": env_id(resolved.spec, game),
        "unlogged_ok": unlogged_ok,
        "record_actions": record_actions,
    }
