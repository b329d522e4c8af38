"""Measuring from behaviour: a reference emulator kept in step with an env out of reach.

ale-py's ``AtariVectorEnv`` and envpool run their emulators in C++ threads; no ``ALEInterface``
of theirs is reachable from Python. What is reachable is what they return: the observation
(ALE's grayscale, max-pooled, resized and stacked), ``info`` (a frame counter and lives in
ale-py's, the RAM in envpool's) and the flags. :class:`ShadowMeter` keeps a reference
``ALEInterface`` of the same ROM, without sticky actions, in the same state as env 0 by
finding, step by step, the emulator frames that reproduce what the env returned exactly:

- a reset is ``k`` NOOP frames, an optional FIRE frame and ``m`` more NOOPs after ALE's own
  reset (or, when the game went on after a lost life, from where it stood): every such
  sequence of up to :data:`MAX_RESET_FRAMES` frames is tried (ale-py 0.12's vector env presses
  FIRE and then plays its no-ops, envpool plays its no-ops and then FIRE: both are found);
- a step is ``s`` frames of the agent's action, of which the first ``j`` may still execute the
  previous action under sticky actions (Machado et al. 2018: per frame, the previous action is
  kept with probability ``p``, so ``P(j) = p^j (1 - p)`` for ``j < s`` and ``p^s``): every
  ``j`` (and, until the frame skip is known, every ``s`` up to :data:`MAX_SKIP`) is tried.

Several explanations can fit (FIRE that the game ignores, a joystick it does not read yet), so
the meter keeps every surviving hypothesis, merges those in the same emulator state (RAM and
last action) and weighs them over a grid of ``p``: a hidden-Markov forward pass, as the
conformance check's :class:`~arcadebench.benchmarks.conformance.sticky_probe.StickyProbe`
does per frame, whose estimate it shares. The frames that survive give everything the tap
gives in the env's own emulator (:mod:`.tap`): frames per step, the actions executed, the
game's own reward, lives and game over, what a reset played.

When no explanation fits (another emulator setting, an unknown processing of the screen) the
meter is lost: it says at which step, and from there on only what ``info`` says is recorded.

Classes: ShadowMeter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from ale_py import Action
from numpy.typing import NDArray

from arcadebench.benchmarks.audit.facts import Event, ResetFacts, StepFacts, action_id, flat_info
from arcadebench.benchmarks.audit.observation_study import STUDIED_STEPS
from arcadebench.benchmarks.audit.screens import Rendering, Screen, newest_frame, renderings_for
from arcadebench.benchmarks.conformance.sticky_probe import (
    GRID,
    StickyEstimate,
    estimate_from_likelihood,
    reference_emulator,
)

__all__ = [
    "MAX_HYPOTHESES",
    "MAX_RESET_FRAMES",
    "MAX_SKIP",
    "ShadowMeter",
]

MAX_SKIP = 8
"""The largest frame skip tried while it is unknown."""
MAX_RESET_FRAMES = 40
"""The most frames a reset is searched for (30 no-ops and FIRE in ale-py's and envpool's)."""
MAX_HYPOTHESES = 48
"""Hypotheses kept at most (the least likely are dropped)."""
_NOOP, _FIRE = action_id(Action.NOOP), action_id(Action.FIRE)

View = tuple[int | None, Rendering]
"""Where the newest frame sits in the observation (its stack axis) and how it was made."""


@dataclass(frozen=True)
class _Hypothesis:
    """A state env 0's emulator may be in, how likely it is for each ``p``, how it got there."""

    state: Any  # ale_py.ALEState
    previous: int  # the action executed on the last frame
    weight: NDArray[np.float64]
    views: frozenset[View] | None  # the processings still reproducing it (None: not tried yet)
    skip: int | None
    starts: frozenset[tuple[bool, tuple[int, ...]]]  # (fresh game, frames played) of the reset
    lives: int
    game_over: bool
    game_frame: int
    reward: float = 0.0
    frames: tuple[int, ...] = ()  # the frames of the last step


def _target(obs: Any, info: dict[str, Any]) -> tuple[bytes | None, NDArray[np.generic]]:
    ram = info.get("ram")
    raw = np.asarray(ram).astype(np.uint8).tobytes() if ram is not None else None
    return (raw if raw is not None and len(raw) == 128 else None), np.asarray(obs)


def _all_views(obs: NDArray[np.generic]) -> frozenset[View]:
    axes: list[int | None] = [None] + ([0, obs.ndim - 1] if obs.ndim >= 3 else [])
    views: set[View] = set()
    for axis in axes:
        frame = newest_frame(obs, axis)
        if frame.ndim == 2 or (frame.ndim == 3 and frame.shape[-1] == 3):
            views.update((axis, r) for r in renderings_for(frame))
    return frozenset(views)


class ShadowMeter:
    """Keeps a reference emulator of ``game`` in step with env 0 and records what it finds.

    Args:
        game: the ale-py ROM id.
        actions: the env's action count; the action set is the ROM's minimal one when it has
            that many actions, else its legal one (a wrong guess loses the reference at once).

    Call :meth:`reset` after every reset and :meth:`step` after every step; the records are in
    :attr:`events`, and :meth:`close` returns the sticky-action estimate.
    """

    def __init__(self, game: str, actions: int) -> None:
        self._ref, self._power_on = reference_emulator(game)
        minimal, legal = self._ref.getMinimalActionSet(), self._ref.getLegalActionSet()
        chosen = minimal if len(minimal) == actions else legal
        self.action_set: list[int] | None = (
            [action_id(a) for a in chosen] if len(chosen) == actions else None
        )
        self.events: list[Event] = []
        self.lost: str | None = None
        if self.action_set is None:
            self.lost = (
                f"the env's {actions} actions are neither the ROM's minimal set "
                f"({len(minimal)}) nor its full set ({len(legal)})"
            )
        self.loglik = np.zeros_like(GRID)
        self.informative = self.compared = 0
        self.kept = {"whole": 0, "partial": 0}
        self._hypotheses: list[_Hypothesis] = []
        self._reset_at: int | None = None  # index of the episode's ResetFacts in events
        self._reset = ResetFacts()
        self._alive = False  # the last step was terminated with the game going on
        self._rendered = 0  # steps whose screens were compared
        self._info_frame: int | None = None

    # -- the reference emulator -----------------------------------------------------------------
    def _play(
        self, state: Any, frames: tuple[int, ...], stop_at_end: bool, rgb: bool
    ) -> tuple[float, tuple[Screen, Screen | None], int]:
        """Restore ``state`` and play ``frames``: the reward, last two screens, frames played.

        The screens' RGB arrays are read only when ``rgb`` (else the grayscale stands in).
        """
        ref = self._ref
        ref.restoreState(state)
        reward, screens, played = 0.0, [], 0
        for i, action in enumerate(frames):
            reward += ref.act(Action(action))
            played += 1
            if i >= len(frames) - 2:
                screens.append(self._screen(rgb))
            if stop_at_end and ref.game_over(with_truncation=False):
                screens = screens or [self._screen(rgb)]
                break
        if not screens:
            screens.append(self._screen(rgb))
        return reward, (screens[-1], screens[-2] if len(screens) > 1 else None), played

    def _matches(
        self,
        views: frozenset[View] | None,
        ram: bytes | None,
        obs: NDArray[np.generic],
        screens: tuple[Screen, Screen | None],
    ) -> frozenset[View] | None | bool:
        """The views the reference reproduces, ``False`` when it does not.

        With the RAM (envpool's ``info["ram"]``) the RAM decides, and the views that also
        reproduce the observation are kept only to tell how it was made.
        """
        if ram is not None and self._ref.getRAM().tobytes() != ram:
            return False
        candidates = views if views is not None else _all_views(obs)
        kept = set()
        for axis, rendering in candidates:
            frame = newest_frame(obs, axis)
            if frame.shape == (*rendering.size, *frame.shape[2:]) and np.array_equal(
                rendering.render(*screens), frame
            ):
                kept.add((axis, rendering))
        if kept:
            return frozenset(kept)
        return candidates if ram is not None else False

    def _hypothesis(self, parent: _Hypothesis, **changes: Any) -> _Hypothesis:
        ref = self._ref
        return dataclasses.replace(
            parent,
            state=ref.cloneState(),
            lives=int(ref.lives()),
            game_over=bool(ref.game_over(with_truncation=False)),
            game_frame=int(ref.getEpisodeFrameNumber()),
            **changes,
        )

    def _merge(self, children: list[tuple[_Hypothesis, bytes]]) -> list[_Hypothesis]:
        merged: dict[tuple[Any, ...], _Hypothesis] = {}
        for child, ram in children:
            key = (ram, child.previous, child.views, child.skip)  # the same state
            if key in merged:
                old = merged[key]
                child = dataclasses.replace(
                    old, weight=old.weight + child.weight, starts=old.starts | child.starts
                )
            merged[key] = child
        kept = sorted(merged.values(), key=lambda h: -float(h.weight.sum()))[:MAX_HYPOTHESES]
        total = sum(h.weight for h in kept)
        safe = np.where(total > 0, total, 1.0)
        return [dataclasses.replace(h, weight=h.weight / safe) for h in kept]

    # -- resets ---------------------------------------------------------------------------------
    def _sequences(self, start: Any, length: int | None) -> Iterator[tuple[int, ...]]:
        """Play every NOOP^k [FIRE NOOP^m] from ``start``; yields each, the emulator after it."""
        ref, limit = self._ref, MAX_RESET_FRAMES if length is None else length
        ref.restoreState(start)
        for k in range(limit + 1):
            if k:
                ref.act(Action.NOOP)
            base = ref.cloneState()
            if length is None or length == k:
                yield (_NOOP,) * k
            for m in range(limit - k):
                ref.act(Action.FIRE if m == 0 else Action.NOOP)
                if length is None or length == k + m + 1:
                    yield (_NOOP,) * k + (_FIRE,) + (_NOOP,) * m
            ref.restoreState(base)

    def _starts(self) -> list[tuple[_Hypothesis, bool]]:
        """Where a reset may begin, and whether it starts a new game there.

        ALE's reset of the power-on state (an env made or seeded anew loads its ROM) and of
        each state; after an episode that ended with the game going on (a lost life), the
        state itself.
        """
        ref = self._ref
        ref.restoreState(self._power_on)
        ref.reset_game()
        blank = _Hypothesis(
            ref.cloneState(), _NOOP, np.ones_like(GRID), None, None, frozenset(), 0, False, 0
        )
        starts = [(self._hypothesis(blank), True)]
        seen = {ref.getRAM().tobytes()}
        for h in self._hypotheses:
            if self._alive and not h.game_over:
                starts.append((h, False))
            ref.restoreState(h.state)
            ref.reset_game()
            ram = ref.getRAM().tobytes()
            if ram not in seen:
                seen.add(ram)
                starts.append((self._hypothesis(h, previous=_NOOP), True))
        return starts

    def reset(self, obs: Any, info: dict[str, Any]) -> None:
        """Explain the reset env 0 just played."""
        frame = info.get("episode_frame_number")
        facts = ResetFacts(info=flat_info(info))
        if self.lost is None:
            ram, target = _target(obs, info)
            children = []
            for start, fresh in self._starts():
                length = None if frame is None else int(frame) - start.game_frame
                for sequence in self._sequences(start.state, length):
                    if ram is not None and self._ref.getRAM().tobytes() != ram:
                        continue
                    kept = self._matches(start.views, ram, target, (self._screen(), None))
                    if kept is False:
                        continue
                    previous = sequence[-1] if sequence else start.previous
                    child = self._hypothesis(
                        start,
                        previous=previous,
                        views=kept,
                        starts=frozenset({(fresh, sequence)}),
                    )
                    children.append((child, self._ref.getRAM().tobytes()))
            if children:
                self._hypotheses = self._merge(children)
                best = self._hypotheses[0]
                self._reset = dataclasses.replace(
                    facts, game_frame=best.game_frame, lives=best.lives
                )
                facts = self._reset_facts()
            else:
                self.lost = (
                    f"no reset of up to {MAX_RESET_FRAMES} frames explains the first observation"
                )
        self._info_frame = None if frame is None else int(frame)
        self._alive = False
        self._reset_at = len(self.events) if self.lost is None else None
        self.events.append(facts)

    def _screen(self, rgb: bool = True) -> Screen:
        gray = self._ref.getScreenGrayscale()
        return (self._ref.getScreenRGB() if rgb else gray), gray

    def _reset_facts(self) -> ResetFacts:
        """The episode's reset as the surviving hypotheses explain it."""
        starts = set().union(*(h.starts for h in self._hypotheses))
        fresh = {f for f, _ in starts}
        return dataclasses.replace(
            self._reset,
            fresh=fresh.pop() if len(fresh) == 1 else None,
            played=tuple(sorted({s for _, s in starts}, key=lambda s: (len(s), s))),
        )

    # -- steps ----------------------------------------------------------------------------------
    def _children(
        self, h: _Hypothesis, action: int, skip: int | None
    ) -> Iterator[tuple[tuple[int, ...], NDArray[np.float64], int]]:
        """Every frame sequence of the step from ``h``, its weight over ``p``, its frame skip."""
        skips = [skip] if skip is not None else ([h.skip] if h.skip else range(1, MAX_SKIP + 1))
        for s in skips:
            prior = 1.0 if skip is not None or h.skip else 1.0 / MAX_SKIP
            if h.previous == action:
                yield (action,) * s, np.full_like(GRID, prior), s
                continue
            for j in range(s + 1):
                weight = GRID**j * ((1.0 - GRID) if j < s else 1.0)
                yield (h.previous,) * j + (action,) * (s - j), prior * weight, s

    def step(
        self,
        action: int,
        obs: Any,
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        """Explain the step env 0 just played with the agent's ``action``."""
        frame = info.get("episode_frame_number")
        frame = None if frame is None else int(frame)
        skip = None if frame is None or self._info_frame is None else frame - self._info_frame
        self._info_frame = frame
        lives = info.get("lives")
        facts = StepFacts(
            action,
            float(reward),
            terminated,
            truncated,
            flat_info(info),
            frames=skip,
            lives=None if lives is None else int(lives),
        )
        if self.lost is None and self.action_set is not None:
            facts = self._follow(facts, obs, info, skip)
        self._alive = terminated and not facts.game_over
        self.events.append(facts)

    def _follow(
        self, facts: StepFacts, obs: Any, info: dict[str, Any], skip: int | None
    ) -> StepFacts:
        ended, agent = facts.ended, self.action_set[facts.action] if self.action_set else 0
        ram, target = _target(obs, info)
        children: list[tuple[_Hypothesis, bytes]] = []
        kept_j: set[int] = set()
        evidence = np.zeros_like(GRID)
        render = ram is None or self._rendered < STUDIED_STEPS  # with the RAM: a few, to tell how
        self._rendered += render
        for h in self._hypotheses:
            rgb = h.views is None or any(r.gray != "ale" for _, r in h.views)
            for frames, weight, s in self._children(h, agent, None if ended else skip):
                reward, screens, played = self._play(h.state, frames, ended, rgb and render)
                if ended and skip is not None and played != skip:
                    continue
                kept: frozenset[View] | None | bool = h.views
                if render and (ram is not None or not ended):
                    kept = self._matches(h.views, ram, target, screens)
                elif ram is not None and self._ref.getRAM().tobytes() != ram:
                    kept = False
                if kept is False:
                    continue
                if h.previous != agent:
                    kept_j.add(frames.index(agent) if agent in frames else s)
                child = self._hypothesis(
                    h,
                    previous=frames[played - 1],
                    weight=h.weight * weight,
                    views=kept,
                    skip=s,
                    reward=reward,
                    frames=frames[:played],
                )
                evidence += child.weight
                children.append((child, self._ref.getRAM().tobytes()))
        if not children:
            steps = sum(isinstance(e, StepFacts) for e in self.events)
            self.lost = f"no frames of the agent's action explain step {steps}"
            return facts
        previous = self._hypotheses[0]
        self._hypotheses = self._merge(children)
        if not ended:
            self._likelihood(evidence, kept_j, self._hypotheses[0].skip or 0)
        if self._reset_at is not None:
            self.events[self._reset_at] = self._reset_facts()
        best = self._hypotheses[0]
        same = all(h.frames == best.frames for h in self._hypotheses)
        return dataclasses.replace(
            facts,
            frames=len(best.frames),
            played=best.frames if same else None,
            raw_reward=best.reward,
            lives=best.lives,
            lost_life=best.lives < previous.lives,
            game_over=best.game_over,
            game_frame=best.game_frame,
        )

    def _likelihood(self, evidence: NDArray[np.float64], kept_j: set[int], skip: int) -> None:
        self.compared += 1
        if np.ptp(evidence) > 1e-12 * evidence.max():
            self.informative += 1
            with np.errstate(divide="ignore"):
                self.loglik += np.log(evidence)
            if kept_j and 0 not in kept_j:
                self.kept["whole" if kept_j == {skip} else "partial"] += 1

    def views(self) -> frozenset[View] | None:
        """The processings of the screen that reproduced every observation so far."""
        if self.lost is not None or not self._hypotheses:
            return None
        return self._hypotheses[0].views

    def close(self) -> StickyEstimate | None:
        """The sticky-action probability measured against the reference.

        ``None`` when the reference was lost before any step was compared.
        """
        if not self.compared:
            return None
        return estimate_from_likelihood(GRID, self.loglik, 0.0, self.informative, self.compared, 0)
