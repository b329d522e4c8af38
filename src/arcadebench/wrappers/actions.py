"""Action sets: named button combinations as a ``Discrete(n)`` action space.

Classes: ButtonDiscretizer.
"""

from __future__ import annotations

from collections.abc import Sequence
from numbers import Integral
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.errors import InvalidArgument, did_you_mean

__all__ = ["ButtonDiscretizer"]


class ButtonDiscretizer(gym.ActionWrapper, gym.utils.RecordConstructorArgs):
    """Map ``Discrete(n)`` actions to button combinations of a ``MultiBinary`` console pad.

    Why: a Genesis pad has 12 buttons, so 4,096 button vectors, but "there are only eight
    essential button combinations" for Sonic; the Rainbow and PPO baselines use seven of them,
    without the no-op (Nichol et al. 2018, Sections 3.7 and 4.2). The action set is part of the
    protocol (``sonic.yaml`` ``action_sets``). Action ``i`` presses exactly the buttons of
    ``combos[i]`` (the empty combination is the no-op), as a ``uint8`` vector in the env's button
    order (``env.unwrapped.buttons`` for stable-retro: ``B, A, MODE, START, UP, DOWN, LEFT, RIGHT,
    C, Y, X, Z``). The vector reaches the emulator unchanged (retro-baselines' SonicDiscretizer).

    Example:
        >>> import stable_retro
        >>> env = ButtonDiscretizer(
        ...     stable_retro.make("Airstriker-Genesis-v0", render_mode=None),
        ...     combos=[[], ["LEFT"], ["RIGHT", "B"]],
        ... )
        >>> env.action_space
        Discrete(3)
        >>> env.action(2)
        array([1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0], dtype=uint8)
        >>> env.get_action_meanings()
        ['NOOP', 'LEFT', 'RIGHT+B']
        >>> env.close()
    """

    def __init__(
        self,
        env: gym.Env,
        combos: Sequence[Sequence[str]],
        buttons: Sequence[str] | None = None,
    ) -> None:
        """Wrap ``env``.

        Args:
            env: an env with a ``MultiBinary(len(buttons))`` action space.
            combos: one sequence of button names per discrete action.
            buttons: the env's button order; default ``env.unwrapped.buttons`` (stable-retro).
        """
        if isinstance(combos, (str, bytes)) or not isinstance(combos, Sequence) or not combos:
            raise InvalidArgument(
                f"`combos` must be a non-empty list of button lists, got {combos!r}"
            )
        for combo in combos:
            if isinstance(combo, (str, bytes)) or not isinstance(combo, Sequence):
                raise InvalidArgument(f"`combos` must hold lists of button names, got {combo!r}")
        if buttons is None:
            buttons = getattr(env.unwrapped, "buttons", None)
            if buttons is None:
                raise InvalidArgument(
                    "`buttons` must be given for an env without a `buttons` attribute, got None"
                )
        buttons = [str(b) for b in buttons]
        space = env.action_space
        if not isinstance(space, gym.spaces.MultiBinary) or space.shape != (len(buttons),):
            raise InvalidArgument(
                f"`env` must have a MultiBinary({len(buttons)}) action space, got {space!r}"
            )
        table = np.zeros((len(combos), len(buttons)), dtype=np.uint8)
        for i, combo in enumerate(combos):
            for name in combo:
                if name not in buttons:
                    raise InvalidArgument(
                        f"`combos` must name buttons of {buttons}, got {name!r}."
                        f"{did_you_mean(name, buttons)}"
                    )
                table[i, buttons.index(name)] = 1
        combos = tuple(tuple(str(name) for name in combo) for combo in combos)
        gym.utils.RecordConstructorArgs.__init__(
            self, combos=[list(c) for c in combos], buttons=buttons
        )
        gym.ActionWrapper.__init__(self, env)
        table.setflags(write=False)
        self._table = table
        self._combos = combos
        self.action_space = gym.spaces.Discrete(len(combos))

    @classmethod
    def from_spec(
        cls, env: gym.Env, spec: Any = "sonic", action_set: str | None = None
    ) -> ButtonDiscretizer:
        """Wrap ``env`` with a named action set of ``spec`` (default: the spec's own choice).

        Example:
            >>> import stable_retro
            >>> env = ButtonDiscretizer.from_spec(
            ...     stable_retro.make("Airstriker-Genesis-v0", render_mode=None))
            >>> env.action_space, env.get_action_meanings()[:3]
            (Discrete(8), ['NOOP', 'LEFT', 'RIGHT'])
            >>> env.close()
        """
        from arcadebench.specs import load_spec

        spec = load_spec(spec)
        name = action_set if action_set is not None else spec.environment.action_set
        if name not in spec.action_sets:
            raise InvalidArgument(
                f"`action_set` must be one of {sorted(spec.action_sets)}, got {name!r}"
                f"{did_you_mean(name, spec.action_sets)}"
            )
        return cls(env, combos=spec.action_sets[name])

    def action(self, action: Any) -> np.ndarray:
        """The button vector of discrete ``action`` (read-only; do not modify)."""
        if (
            not isinstance(action, (Integral, np.integer))
            or isinstance(action, bool)
            or not 0 <= int(action) < len(self._table)
        ):
            raise InvalidArgument(
                f"`action` must be an integer in [0, {len(self._table)}), got {action!r}"
            )
        buttons: np.ndarray = self._table[action]
        return buttons

    def get_action_meanings(self) -> list[str]:
        """The buttons of each action joined by ``+``; ``NOOP`` for the empty combination."""
        return ["+".join(combo) or "NOOP" for combo in self._combos]
