"""What an env plays through its emulator: a stand-in for ``env.unwrapped.ale`` that records.

A protocol rule is often a matter of which actions reach the emulator, not of what the env says
it did: the no-op starts of DQN (Mnih et al. 2015, Methods) are NOOP frames played after ALE's
own reset, a FIRE pressed on reset (stable-baselines3's ``FireResetEnv``) is a frame of FIRE,
sticky decisions taken before the emulator (Gymnasium's ``StickyAction``) replace the agent's
action. :class:`ActionRecorder` stands in for an env's ``ALEInterface`` (every wrapper reaches
the emulator through ``env.unwrapped.ale``) and records the actions of every ``act`` call;
everything else is passed to the emulator unchanged, so the env plays exactly as without it.
``arcadebench check`` counts the no-op frames of each reset with it; ``arcadebench audit``
extends it to rewards, resets and screens.

Classes: ActionRecorder.
"""

from __future__ import annotations

from typing import Any

from ale_py import Action

__all__ = ["ActionRecorder"]


class ActionRecorder:
    """Stands in for an env's emulator and records the actions played through it.

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = AtariEnv("pong", repeat_action_probability=0.0, frameskip=4)
        >>> recorder = ActionRecorder(env.ale)
        >>> env.ale = recorder
        >>> _ = env.reset(seed=0)
        >>> _ = env.step(1)
        >>> [action.name for action in recorder.actions]
        ['FIRE', 'FIRE', 'FIRE', 'FIRE']
        >>> env.ale = recorder.emulator
        >>> env.close()
    """

    def __init__(self, emulator: Any) -> None:
        """Record what is played through ``emulator`` (an ``ALEInterface`` or a stand-in)."""
        self.emulator = emulator
        self.actions: list[Action] = []

    def act(self, action: Action, *args: Any) -> Any:
        """Record ``action`` and emulate the frame."""
        self.actions.append(action)
        return self.emulator.act(action, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.emulator, name)
