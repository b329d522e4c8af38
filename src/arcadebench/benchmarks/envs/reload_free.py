"""Seeded Atari resets without a ROM reload: the emulator state a reload gives, restored.

Why: ale-py's ``reset(seed=...)`` reloads the ROM to re-seed ALE, 90-180 ms per episode (mostly
ALE rebuilding its phosphor palette), which the runner pays for every episode it seeds. The
emulator state right after that reload does not depend on the seed, except for the sticky-action
generator (a ``std::mt19937`` freshly seeded with ALE's ``random_seed``), so the builders' envs
restore a saved copy of that state with the generator of the new seed written in: the same bytes
the reload produces (:class:`ReloadFreeSeeding` says when it falls back to the reload), in well
under a millisecond.

The same holds for a new env: an env closed with a verified template leaves its emulator and
template to the next env of the same game and settings made in the process, which restores the
template instead of loading the ROM (the check, the runner's jobs and the tests make the same
game's env many times over: 63 ms each).

Classes: ReloadFreeSeeding, ReloadFreeAtariEnv, ReloadFreeStandardAtariEnv.
"""

from __future__ import annotations

import struct
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from ale_py import ALEInterface, ALEState

from arcadebench.wrappers import StandardAtariEnv
from arcadebench.wrappers.noop_starts import NoopStarts

__all__ = ["ReloadFreeAtariEnv", "ReloadFreeSeeding", "ReloadFreeStandardAtariEnv"]

# ALE settings that StellaEnvironment reads when the ROM is loaded: a reload would apply a change
# to any of them, a restored state would not, so a change falls back to the reload.
_LOAD_SETTINGS = (
    ("getFloat", "repeat_action_probability"),
    ("getInt", "frame_skip"),
    ("getInt", "max_num_frames_per_episode"),
    ("getBool", "color_averaging"),
    ("getBool", "truncate_on_loss_of_life"),
    ("getInt", "reward_min"),
    ("getInt", "reward_max"),
)
_TRUE = struct.pack("<I", 0xFAB1FAB2)  # Stella's Serializer::putBool(true)
_IDLE_MOST = 8
"""Closed envs' emulators kept for the next env of their game and settings (a few MB each)."""


def _mt19937_text(seed: int) -> bytes:
    """``std::mt19937(seed)`` as libstdc++'s ``operator<<`` writes it: 624 words, then the index.

    This is what ALE's ``Random::saveState`` stores for a generator seeded with ``seed`` and not
    drawn from yet (the standard ``init_genrand`` recurrence; the index 624 means "twist first").
    """
    x = seed & 0xFFFFFFFF
    words = [x]
    for i in range(1, 624):
        x = (1812433253 * (x ^ (x >> 30)) + i) & 0xFFFFFFFF
        words.append(x)
    return (" ".join(map(str, words)) + " 624").encode()


def _load_settings(ale: ALEInterface) -> tuple[Any, ...]:
    return tuple(getattr(ale, getter)(key) for getter, key in _LOAD_SETTINGS)


@dataclass(frozen=True)
class _SeedTemplate:
    """ALE's serialized state right after ``loadROM``, with the generator's seed left open.

    ``ALEState.serialize()`` is six ints, the emulator's serialization as a length-prefixed
    string, then two ints; that string ends with ``putBool(true)`` and the sticky-action
    generator as a length-prefixed text (ale-py 0.9-0.12; :meth:`capture` checks it).
    """

    head: bytes  # the six ints
    body: bytes  # the emulator's serialization up to and including putBool(true)
    tail: bytes  # the two ints
    settings: tuple[Any, ...]

    @classmethod
    def capture(cls, ale: ALEInterface, seed: int) -> _SeedTemplate | None:
        """The template of ``ale`` just loaded with ``random_seed`` = ``seed``, or ``None``.

        ``None`` when the bytes do not have the expected layout, or when the generator is not
        the fresh ``std::mt19937(seed)`` (a game whose reload draws from it).
        """
        blob = ale.cloneState(include_rng=True).serialize()
        if len(blob) < 28:
            return None
        (size,) = struct.unpack_from("<I", blob, 24)
        inner, tail = blob[28 : 28 + size], blob[28 + size :]
        text = _mt19937_text(seed)
        rng = _TRUE + struct.pack("<I", len(text)) + text
        if len(tail) != 8 or not inner.endswith(rng):
            return None
        template = cls(blob[:24], inner[: len(inner) - len(rng) + len(_TRUE)], tail, ())
        if template.serialized(seed) != blob:
            return None
        return cls(template.head, template.body, template.tail, _load_settings(ale))

    def serialized(self, seed: int) -> bytes:
        """The bytes ``ALEState.serialize()`` gives after ``loadROM`` with ``random_seed=seed``."""
        text = _mt19937_text(seed)
        inner = self.body + struct.pack("<I", len(text)) + text
        return self.head + struct.pack("<I", len(inner)) + inner + self.tail


_PoolKey = tuple[Any, ...]


class _IdleEmulators:
    """Loaded emulators of closed envs, with their templates, by game and settings (LRU)."""

    def __init__(self) -> None:
        self._idle: OrderedDict[_PoolKey, tuple[ALEInterface, _SeedTemplate]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, key: _PoolKey) -> tuple[ALEInterface, _SeedTemplate] | None:
        with self._lock:
            return self._idle.pop(key, None)

    def give(self, key: _PoolKey, ale: ALEInterface, template: _SeedTemplate) -> None:
        with self._lock:
            self._idle[key] = (ale, template)
            self._idle.move_to_end(key)
            while len(self._idle) > _IDLE_MOST:
                self._idle.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._idle.clear()


_IDLE = _IdleEmulators()


class ReloadFreeSeeding:
    """Mixin for ``AtariEnv`` subclasses: ``reset(seed=...)`` without reloading the ROM.

    ``AtariEnv.reset(seed=s)`` sets ALE's ``random_seed`` from ``s`` and calls
    :meth:`load_game`, which reloads the ROM. Here :meth:`load_game` reloads only the first
    time (at construction), keeps the state it leaves as a template (``_SeedTemplate``,
    verified byte for byte), and afterwards restores that state with the sticky-action generator
    of the new seed: the emulator ends up in the state a reload gives, byte for byte, so every
    episode is the one ale-py would play (tested on every game against fresh reloads).

    The reload is still used when the template could not be verified (e.g. Berzerk and Double
    Dunk, whose reload already draws random numbers), for ``random_seed == -1`` (ALE then seeds
    from the clock), and after an ALE setting read at load time was changed (then the template
    is taken again).

    Example:
        >>> env = ReloadFreeAtariEnv("pong")
        >>> first = env.reset(seed=3)[0]
        >>> env.reload_free
        True
        >>> import numpy as np
        >>> from ale_py.env import AtariEnv
        >>> bool(np.array_equal(first, AtariEnv("pong").reset(seed=3)[0]))
        True
        >>> env.close()
    """

    ale: ALEInterface
    _seed_template: _SeedTemplate | None = None
    _template_tried = False

    @property
    def reload_free(self) -> bool:
        """Whether seeded resets restore the template instead of reloading the ROM."""
        return self._seed_template is not None

    def _pool_key(self, ale: ALEInterface) -> _PoolKey:
        """What an emulator must share with this env's to be its freshly loaded one."""
        env: Any = self
        return (
            env._game,
            env._game_mode,
            env._game_difficulty,
            _load_settings(ale),
            ale.getBool("sound_obs"),
            ale.getBool("display_screen"),
        )

    def load_game(self) -> None:
        """Put the emulator in its freshly loaded state for ALE's current ``random_seed``."""
        ale = self.ale
        seed = ale.getInt("random_seed")
        if not self._template_tried and seed != -1:  # a new env: a closed one's emulator?
            idle = _IDLE.take(self._pool_key(ale))
            if idle is not None:
                ale, self._seed_template = idle
                ale.setInt("random_seed", seed)
                self.ale, self._template_tried = ale, True
        template = self._seed_template
        if template is not None and seed != -1 and _load_settings(ale) == template.settings:
            ale.restoreState(ALEState(template.serialized(seed)))
            return
        super().load_game()  # type: ignore[misc]  # a mixin: AtariEnv, next in the MRO, has it
        if seed != -1 and (template is not None or not self._template_tried):
            self._template_tried = True
            self._seed_template = _SeedTemplate.capture(ale, seed)

    def close(self) -> None:
        """Leave the emulator, loaded, to the next env of the same game and settings."""
        ale, template = self.ale, self._seed_template
        if isinstance(ale, ALEInterface) and template is not None:
            if _load_settings(ale) == template.settings:
                _IDLE.give(self._pool_key(ale), ale, template)
            self.ale = None  # type: ignore[assignment]  # closed: this env plays no more
        super().close()  # type: ignore[misc]  # a mixin: AtariEnv, next in the MRO, has it


class ReloadFreeAtariEnv(ReloadFreeSeeding, NoopStarts):
    """ale-py's ``AtariEnv`` whose seeded resets skip the ROM reload: :class:`ReloadFreeSeeding`.

    With the protocol's no-op starts, if it has them
    (:class:`~arcadebench.wrappers.noop_starts.NoopStarts`).
    """


class ReloadFreeStandardAtariEnv(ReloadFreeSeeding, StandardAtariEnv, NoopStarts):
    """:class:`~arcadebench.wrappers.StandardAtariEnv` whose seeded resets skip the ROM reload.

    The no-op frames come before the standard observation's first frame (the method order puts
    :class:`~arcadebench.wrappers.noop_starts.NoopStarts` between it and ``AtariEnv``).
    """
