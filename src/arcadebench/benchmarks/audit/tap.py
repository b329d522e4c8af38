"""Measuring in the env's own emulator: a tap on ``env.unwrapped.ale``.

Where the audited env's ``ALEInterface`` lives in this process (an ale-py ``AtariEnv`` under
any wrapper stack, env 0 of a Gymnasium ``SyncVectorEnv`` or a stable-baselines3
``DummyVecEnv``), :class:`EmulatorTap` stands in for it, as ``arcadebench check``'s
:class:`~arcadebench.benchmarks.conformance.action_recorder.ActionRecorder` does, and logs
every frame's action and reward, ALE's resets and the last two screens. :class:`EmulatorMeter`
cuts that log into the steps and resets the agent saw (:mod:`.facts`): frames from the
emulator's frame counter, the actions that reached it, the game's own reward, lives and game
over read from it. With ``probe=True`` the conformance check's
:class:`~arcadebench.benchmarks.conformance.sticky_probe.StickyProbe` sits underneath and
measures the emulator's own sticky actions (Machado et al. 2018) frame by frame.

A vector env may reset env 0 inside a step (Gymnasium's and SB3's autoreset): the stream
reports when env 0's ``reset()`` begins (:mod:`.streams`), and the tap marks it, so the frames
before belong to the step and the ones after to the reset.

Classes: EmulatorTap, EmulatorMeter. Functions: emulator_host.
"""

from __future__ import annotations

from collections import deque
from typing import Any, NamedTuple

from ale_py import ALEInterface

from arcadebench.benchmarks.audit.facts import Event, ResetFacts, StepFacts, action_id, flat_info
from arcadebench.benchmarks.audit.screens import Screen
from arcadebench.benchmarks.conformance.action_recorder import ActionRecorder
from arcadebench.benchmarks.conformance.sticky_probe import StickyEstimate, StickyProbe

__all__ = ["EmulatorMeter", "EmulatorTap", "emulator_host"]


def emulator_host(env: Any) -> Any | None:
    """The object holding ``env``'s ``ALEInterface`` as ``.ale`` (its ``unwrapped``), if any."""
    host = getattr(env, "unwrapped", None)
    return host if isinstance(getattr(host, "ale", None), ALEInterface) else None


class _Snapshot(NamedTuple):
    lives: int
    game_over: bool
    game_frame: int
    frame: int


class _Mark(NamedTuple):
    at: int  # frames played before it
    kind: str  # "reset": env 0's reset() began; "reset_game": ALE reset the game
    snapshot: _Snapshot


class EmulatorTap(ActionRecorder):
    """Stands in for an env's emulator: logs actions, rewards, resets and the last screens."""

    def __init__(self, emulator: Any, keep_screens: bool = False) -> None:
        """Tap ``emulator``; ``keep_screens`` keeps the last two frames' screens."""
        super().__init__(emulator)
        self.rewards: list[float] = []
        self.marks: list[_Mark] = []
        self.keep_screens = keep_screens
        self.screens: deque[Screen] = deque(maxlen=2)

    def snapshot(self) -> _Snapshot:
        """The game as it is now, read from the emulator."""
        emulator = self.emulator
        return _Snapshot(
            int(emulator.lives()),
            bool(emulator.game_over(with_truncation=False)),
            int(emulator.getEpisodeFrameNumber()),
            int(emulator.getFrameNumber()),
        )

    def act(self, action: Any, *args: Any) -> Any:
        """Emulate one frame, logging its action, reward and (if kept) screen."""
        reward = super().act(action, *args)
        self.rewards.append(float(reward))
        if self.keep_screens:
            self.screens.append((self.emulator.getScreenRGB(), self.emulator.getScreenGrayscale()))
        return reward

    def reset_game(self) -> None:
        """Reset the game (ale-py's ``reset_game``), logging it."""
        self.emulator.reset_game()
        self.screens.clear()
        self.marks.append(_Mark(len(self.actions), "reset_game", self.snapshot()))

    def mark_reset(self) -> None:
        """Env 0's ``reset()`` begins: what follows is the reset's."""
        self.marks.append(_Mark(len(self.actions), "reset", self.snapshot()))


class EmulatorMeter:
    """Cuts the tap's log into :class:`~.facts.StepFacts` and :class:`~.facts.ResetFacts`.

    Call :meth:`reset` after every reset the agent sees and :meth:`step` after every step;
    the records are in ``events``. :meth:`close` gives the env its emulator back and
    returns the sticky-action estimate (``None`` without the probe).
    """

    def __init__(self, host: Any, game: str, probe: bool = False, screens: bool = False) -> None:
        """Tap ``host.ale`` (``host``: an env's ``unwrapped``) of ``game``'s ROM."""
        self._host = host
        self._probe = StickyProbe.attach(host, game, 0.0) if probe else None
        self.tap = EmulatorTap(host.ale, keep_screens=screens)
        host.ale = self.tap
        self.events: list[Event] = []
        self._frames = 0  # the tap's frames already given to events
        self._marks = 0
        self._last = self.tap.snapshot()

    def close(self) -> StickyEstimate | None:
        """Give the env its emulator back; the probe's estimate, if it measured."""
        self._host.ale = self.tap.emulator
        return self._probe.detach(self._host) if self._probe is not None else None

    def last_screens(self) -> tuple[Screen, Screen | None] | None:
        """The screens of the last two frames played (the last first), if kept."""
        screens = self.tap.screens
        if not screens:
            return None
        return screens[-1], screens[-2] if len(screens) == 2 else None

    def step(
        self,
        action: int,
        obs: Any,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        """Record the step just played (up to a reset env 0 began inside it)."""
        resets = [m for m in self.tap.marks[self._marks :] if m.kind == "reset"]
        end = resets[0].at if resets else len(self.tap.actions)
        after = resets[0].snapshot if resets else self.tap.snapshot()
        played = tuple(action_id(a) for a in self.tap.actions[self._frames : end])
        before = self._last
        self.events.append(
            StepFacts(
                action=action,
                reward=float(reward),
                terminated=terminated,
                truncated=truncated,
                info=flat_info(info),
                frames=after.frame - before.frame,
                played=played,
                raw_reward=sum(self.tap.rewards[self._frames : end]),
                lives=after.lives,
                lost_life=after.lives < before.lives,
                game_over=after.game_over,
                game_frame=after.game_frame,
            )
        )
        self._frames = end
        self._marks = self.tap.marks.index(resets[0]) if resets else len(self.tap.marks)
        self._last = after

    def reset(self, obs: Any, info: dict[str, Any]) -> None:
        """Record the reset just played (by the agent, or by a vector env inside a step)."""
        games = [m for m in self.tap.marks[self._marks :] if m.kind == "reset_game"]
        start = games[-1].at if games else self._frames  # after ALE's last reset of the game
        played = tuple(action_id(a) for a in self.tap.actions[start:])
        now = self.tap.snapshot()
        self.events.append(
            ResetFacts(
                info=flat_info(info),
                fresh=bool(games),
                played=(played,),
                game_frame=now.game_frame,
                lives=now.lives,
            )
        )
        self._frames = len(self.tap.actions)
        self._marks = len(self.tap.marks)
        self._last = now
