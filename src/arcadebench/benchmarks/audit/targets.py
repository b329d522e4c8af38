"""What is audited: an id with keyword arguments, a ``module:callable``, an env; its game.

The command line names an env the way a training script makes it: ``ALE/Pong-v5`` with
``--kwargs '{"frameskip": 1}'`` (``gymnasium.make``), or ``module:callable`` called with the
keyword arguments (``stable_baselines3.common.env_util:make_atari_env``, an envpool factory,
a CleanRL ``make_env`` that returns a thunk, which is called in turn). From Python an env
object is accepted too; it is reset between the plays instead of made anew.

Every way in fails in one line naming the problem and the fix (an unknown id, a module that
does not import, a callable that raises, an env that is no Atari env).

Classes: Target. Functions: resolve_target.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import ale_py
import gymnasium as gym
from ale_py import roms

from arcadebench.errors import InvalidArgument, did_you_mean

__all__ = ["Target", "resolve_target", "rom_id"]

_CALLABLE = re.compile(r"^(?P<module>[A-Za-z_][\w.]*):(?P<attr>[A-Za-z_][\w.]*)$")


@dataclass
class Target:
    """An env to audit.

    Attributes:
        label: what was named (``ALE/Pong-v5 {"frameskip": 1}``, ``module:callable``, a type).
        make: returns the env to play: a new one each call when ``owned``, else the same one.
        owned: the audit makes (and closes) the envs.
        game: the ale-py ROM id of the game it plays.
    """

    label: str
    make: Callable[[], Any]
    owned: bool
    game: str


def rom_id(game: str) -> str:
    """The ale-py ROM id of ``game``, any spelling (``"MsPacman"``, ``"ms_pacman"``).

    Example:
        >>> rom_id("SpaceInvaders"), rom_id("ms-pacman")
        ('space_invaders', 'ms_pacman')
    """
    ids = roms.get_all_rom_ids()
    key = re.sub(r"[^a-z0-9]", "", game.lower())
    for rom in ids:
        if rom.replace("_", "") == key:
            return str(rom)
    hint = did_you_mean(game, ids) or " ale_py.roms.get_all_rom_ids() lists them."
    raise InvalidArgument(f"`game` must be an ale-py ROM, got {game!r}.{hint}")


def _unwrapped0(env: Any) -> Any:
    """Env 0 of a vector env in this process (or the env itself), unwrapped."""
    inner = getattr(env, "unwrapped", env)
    while hasattr(inner, "venv"):
        inner = inner.venv
    envs = getattr(inner, "envs", None)
    return getattr(envs[0], "unwrapped", envs[0]) if isinstance(envs, list) and envs else inner


def _game_of(env: Any, kwargs: Mapping[str, Any]) -> str | None:
    """The game an env says it plays (its ROM, not a protocol setting, so read, not measured)."""
    base = _unwrapped0(env)
    named = getattr(base, "_game", None) or kwargs.get("game")
    spec = getattr(env, "spec", None)
    if named is None and spec is not None:
        named = getattr(spec, "kwargs", {}).get("game")
        config = getattr(spec, "config", None)  # envpool
        named = named or getattr(config, "task", None)
    return str(named) if named else None


def _import(path: str) -> Any:
    match = _CALLABLE.fullmatch(path)
    if match is None:
        raise InvalidArgument(f"`env` must be a Gymnasium id or 'module:callable', got {path!r}")
    module_name, attr = match["module"], match["attr"]
    if os.getcwd() not in sys.path:  # as `python -m` does: modules beside the user are found
        sys.path.append(os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any failure to import is the user's module
        raise InvalidArgument(
            f"cannot import {module_name!r} ({type(error).__name__}: {error}); install it or run "
            "from the directory that holds it"
        ) from None
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise InvalidArgument(f"module {module_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise InvalidArgument(f"`env` {path!r} must name a callable, got {type(obj).__name__}")
    return obj


def _built(result: Any) -> Any:
    """An env from what a factory returned (a thunk, as CleanRL's ``make_env``, is called)."""
    return result() if callable(result) and not hasattr(result, "step") else result


def _factory(env: str, kwargs: dict[str, Any]) -> tuple[Callable[[], Any], str]:
    words = json.dumps(kwargs, default=repr) if kwargs else ""
    label = f"{env} {words}".strip()
    if _CALLABLE.fullmatch(env):
        function = _import(env)

        def call() -> Any:
            try:
                return _built(function(**kwargs))
            except Exception as error:  # noqa: BLE001 - the user's factory failed
                raise InvalidArgument(
                    f"{label} raised {type(error).__name__}: {error}; fix the callable or its "
                    "`kwargs`"
                ) from None

        return call, label
    gym.register_envs(ale_py)

    def make() -> Any:
        try:
            return gym.make(env, **kwargs)
        except gym.error.Error as error:
            raise InvalidArgument(
                f"`env` must be a registered Gymnasium id or 'module:callable', got {env!r}: "
                f"{error}"
            ) from None
        except Exception as error:  # noqa: BLE001 - e.g. an unknown keyword argument
            raise InvalidArgument(
                f"gym.make of {label} raised {type(error).__name__}: {error}; fix the `kwargs`"
            ) from None

    return make, label


def resolve_target(
    env: Any, kwargs: Mapping[str, Any] | None = None, game: str | None = None
) -> Target:
    """What to audit, made ready: its factory, whether the audit owns its envs, its game.

    ``env`` is a Gymnasium id or ``"module:callable"`` (made with ``kwargs``), a
    zero-argument factory, or an env object; ``game`` names the ROM where the env does not.

    Raises:
        InvalidArgument: bad arguments, an env that cannot be made, or no Atari game.
    """
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise InvalidArgument(f"`kwargs` must be a mapping of keyword arguments, got {kwargs!r}")
    arguments = dict(kwargs or {})
    if isinstance(env, str):
        make, label = _factory(env, arguments)
        owned = True
    elif callable(env) and not hasattr(env, "step"):
        if arguments:
            raise InvalidArgument(
                "`kwargs` are for an id or 'module:callable'; call the factory yourself"
            )
        make, label, owned = (lambda: _built(env())), getattr(env, "__name__", "factory"), True
    else:
        if arguments:
            raise InvalidArgument("`kwargs` are for an id or 'module:callable', not an env object")
        made = env
        make, label, owned = (lambda: made), type(env).__name__, False
    first = make()
    if not (hasattr(first, "step") and hasattr(first, "reset")):
        raise InvalidArgument(
            f"{label} returned {type(first).__name__}, not an env: name an id or a callable that "
            "makes a Gymnasium env, a vector env or an SB3 VecEnv"
        )
    named = game or _game_of(first, arguments)
    if owned:
        pending = [first]
        factory = make

        def make_once_then_new() -> Any:
            return pending.pop() if pending else factory()

        make = make_once_then_new
    if named is None:
        if owned and hasattr(first, "close"):
            first.close()
        raise InvalidArgument(
            f"cannot tell which Atari game {label} plays: it is no ale-py env and names no ROM; "
            "pass game=<ROM> if it runs an ALE ROM"
        )
    return Target(label, make, owned, rom_id(named))
