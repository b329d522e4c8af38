"""Environment settings: one rule per field, for a spec's YAML and for a user's overrides alike.

A spec's ``environment`` section and the keyword arguments a user passes to ``gym.make`` or
``arcadebench.make_vec`` are checked by the same rules, so an override can never be a value the
spec itself could not hold (``repeat_action_probability=1.5`` is refused before ale-py sees it).

Functions: atari_settings, retro_settings, override_settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from numbers import Integral, Real
from typing import Any, TypeVar

from arcadebench.errors import InvalidArgument, SpecError
from arcadebench.specs.model import AtariSettings, RetroSettings
from arcadebench.specs.nodes import Node

__all__ = ["atari_settings", "override_settings", "retro_settings"]

Rule = Callable[[Node], Any]
S = TypeVar("S", bound=AtariSettings | RetroSettings)


def _modulus(node: Node) -> float | None:
    value = node.number(optional=True)
    if value is not None and value <= 0:
        raise node.fail("a positive number (the score counter's modulus)")
    return value


def _noop_starts(node: Node) -> tuple[int, int] | None:
    if node.value is None:
        return None
    least, most = (n.integer(minimum=0) for n in node.items(length=2))
    if least > most:
        raise node.fail(f"[least, most] no-op frames with least <= most, not [{least}, {most}]")
    return least, most


_ATARI_RULES: dict[str, Rule] = {
    "frameskip": lambda n: n.integer(minimum=1),
    "repeat_action_probability": Node.probability,
    "full_action_space": Node.boolean,
    "life_information": Node.boolean,
    "max_episode_frames": lambda n: n.integer(minimum=1, optional=True),
    "max_stuck_frames": lambda n: n.integer(minimum=1, optional=True),
    "rollover_threshold": lambda n: n.number(optional=True),
    "rollover_correction": _modulus,
    "noop_starts": _noop_starts,
    "life_loss_terminal_in_training": Node.boolean,
}
_ATARI_DEFAULTS = {"life_loss_terminal_in_training": False}  # absent: the older specs' value
_ATARI_REQUIRED = (
    "frameskip",
    "repeat_action_probability",
    "full_action_space",
    "life_information",
)


def _shape(node: Node) -> tuple[int, ...]:
    return tuple(n.integer(minimum=1) for n in node.items(length=3))


def _retro_rules(action_sets: Sequence[str]) -> dict[str, Rule]:
    return {
        "frameskip": lambda n: n.integer(minimum=1),
        "sticky_probability": Node.probability,
        "max_episode_timesteps": lambda n: n.integer(minimum=1),
        "end_on_life_loss": Node.boolean,
        "end_on_level_complete": Node.boolean,
        "observation_shape": _shape,
        "action_set": lambda n: n.string(choices=("buttons", *action_sets)),
        "progress_scale": lambda n: n.number(positive=True),
        "completion_bonus": Node.number,
        "bonus_horizon_frames": lambda n: n.integer(minimum=1),
    }


_RETRO_REWARD = ("progress_scale", "completion_bonus", "bonus_horizon_frames")


def _check_rollover(values: Mapping[str, Any], fail: Callable[[str, str], Exception]) -> None:
    """SABER's rollover rule needs both its threshold and its correction, or neither."""
    threshold, correction = values["rollover_threshold"], values["rollover_correction"]
    if (threshold is None) != (correction is None):
        missing = "rollover_correction" if correction is None else "rollover_threshold"
        raise fail(missing, "is required with the other rollover setting (both, or neither)")


def atari_settings(node: Node) -> AtariSettings:
    """The ``environment`` section of an Atari spec."""
    optional = tuple(key for key in _ATARI_RULES if key not in _ATARI_REQUIRED)
    fields = node.mapping(required=_ATARI_REQUIRED, optional=optional)
    values = {
        key: rule(fields[key] if key in fields else node.child(key, _ATARI_DEFAULTS.get(key)))
        for key, rule in _ATARI_RULES.items()
    }
    _check_rollover(
        values, lambda key, problem: SpecError(node.file, node.child(key, None).path, problem)
    )
    return AtariSettings(**values)


def retro_settings(node: Node, action_sets: Sequence[str]) -> RetroSettings:
    """The ``environment`` section of a retro (Sonic) spec; the reward settings are nested."""
    rules = _retro_rules(action_sets)
    flat = [key for key in rules if key not in _RETRO_REWARD]
    fields = node.mapping(required=(*flat, "reward"))
    fields.update(fields.pop("reward").mapping(required=_RETRO_REWARD))
    return RetroSettings(**{key: rule(fields[key]) for key, rule in rules.items()})


def _plain(value: Any) -> Any:
    """A user's value as YAML would give it: numpy scalars as Python numbers, tuples as lists."""
    if isinstance(value, bool):
        return value
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real):
        return float(value)
    if isinstance(value, tuple):
        return list(value)
    return value


def override_settings(
    settings: S, overrides: Mapping[str, Any], action_sets: Sequence[str] = ()
) -> S:
    """``settings`` with ``overrides`` applied, each checked by the rule its spec field obeys.

    Args:
        settings: a spec's environment settings.
        overrides: ``{field: value}``; every key must be a field of ``settings``.
        action_sets: the spec's named action sets (retro specs).

    Raises:
        InvalidArgument: "`<field>` must be <rule>, got <value>", or an unknown field.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> saber = load_spec("saber").environment
        >>> override_settings(saber, {"repeat_action_probability": 0}).repeat_action_probability
        0.0
        >>> override_settings(saber, {"frameskip": 0})
        Traceback (most recent call last):
        ...
        arcadebench.errors.InvalidArgument: `frameskip` must be an integer >= 1, got 0
    """
    atari = isinstance(settings, AtariSettings)
    rules = _ATARI_RULES if atari else _retro_rules(action_sets)
    values = dataclasses.asdict(settings)
    for key, value in overrides.items():
        if key not in rules:
            raise InvalidArgument(
                f"`{key}` must be a setting of the environment ({', '.join(rules)}), got {value!r}"
            )
        try:
            values[key] = rules[key](Node(_plain(value), "<overrides>", key))
        except SpecError as error:
            raise InvalidArgument(f"`{key}` {error.problem}") from None
    if atari:
        _check_rollover(values, lambda key, problem: InvalidArgument(f"`{key}` {problem}"))
    return type(settings)(**values)
