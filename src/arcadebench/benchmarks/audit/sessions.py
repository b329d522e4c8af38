"""The plays of an audit: seeded agents on env 0, every step and reset measured.

1. **random**: a seeded random agent for ``frames`` emulator frames, with the sticky actions
   measured (the conformance check's
   :class:`~arcadebench.benchmarks.conformance.sticky_probe.StickyProbe` in the env's
   emulator, the reference emulator's likelihood otherwise) and the observation studied;
   episodes that end are reset, as a learner's are.
2. **resets**: :data:`RESETS` resets in a row (the first seeded) to see what a reset plays
   (no-op starts drawn or fixed, FIRE); new envs, seeded one after the other, where an env goes
   on with its game instead of starting a new one.
3. **noop**: a NOOP agent until an episode is truncated, the game is over or ``cap_frames``
   frames were played: where does a cap or a max stuck time cut a game that nothing ends?

The plays share one env, seeded at its first reset only (the env's own generators then make
every play deterministic, and an ALE env seeded anew reloads its ROM). Every step goes through a
meter: the emulator tap (:mod:`.tap`) when env 0's ``ALEInterface`` is in this process, else the
reference emulator (:mod:`.shadow`).

Classes: Play. Functions: play_all.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from arcadebench.benchmarks.audit.facts import Event, ResetFacts, StepFacts
from arcadebench.benchmarks.audit.observation_study import ObservationStudy
from arcadebench.benchmarks.audit.shadow import ShadowMeter
from arcadebench.benchmarks.audit.streams import Stream, no_hook, open_stream
from arcadebench.benchmarks.audit.tap import EmulatorMeter
from arcadebench.benchmarks.conformance.sticky_probe import StickyEstimate

__all__ = ["RESETS", "Play", "play_all"]

RESETS = 6
"""Resets of the resets play (6 equal draws of up to 30 no-ops would have p = 30**-5)."""
MIN_NEW_GAMES = 3
"""New games the resets play wants, to see whether the no-op starts are drawn."""
_UNKNOWN_SKIP = 4  # frames a step is counted as for the budget where frames are unknown


@dataclass
class Play:
    """What one play recorded.

    Attributes:
        name: ``"random"``, ``"resets"`` or ``"noop"``.
        events: every reset and step, in order (:mod:`.facts`).
        measured: ``"emulator"`` (the env's own) or ``"reference"`` (kept in step).
        sticky: the sticky-action estimate (the random play only).
        kept: the reference emulator's steps that kept the previous action for a whole step or
            part of one (how a per-step sticky rule shows).
        lost: where and why the reference emulator lost env 0 (``None``: it never did).
        observation: the observation study's result (the random play only).
        stream: what env 0 is (:attr:`~.streams.Stream.label`).
        actions: env 0's action count.
        foreign: the last events of the play that come from other envs than the one the plays
            share (the resets play's new envs).
    """

    name: str
    events: list[Event]
    measured: str
    stream: str = ""
    actions: int = 0
    foreign: int = 0
    sticky: StickyEstimate | None = None
    kept: dict[str, int] = field(default_factory=dict)
    lost: str | None = None
    observation: dict[str, Any] = field(default_factory=dict)


Meter = EmulatorMeter | ShadowMeter


def _meter(stream: Stream, game: str, probe: bool) -> Meter:
    if stream.host is None:
        return ShadowMeter(game, stream.actions)
    meter = EmulatorMeter(stream.host, game, probe=probe, screens=probe)
    stream.on_reset = meter.tap.mark_reset
    return meter


def _play(
    name: str,
    stream: Stream,
    game: str,
    seed: int | None,
    policy: Callable[[], int],
    frames: int,
    until: Callable[[StepFacts], bool],
    study: ObservationStudy | None = None,
) -> Play:
    """Play ``policy`` on ``stream`` for ``frames`` frames or until ``until(step)``."""
    meter = _meter(stream, game, probe=study is not None)
    played = 0
    try:
        obs, info = stream.reset(seed)
        meter.reset(obs, info)
        if study is not None:
            study.reset(obs)
        while played < frames:
            action = policy()
            obs, reward, terminated, truncated, info = stream.step(action)
            meter.step(action, obs, reward, terminated, truncated, info)
            last = meter.events[-1]
            if not isinstance(last, StepFacts):
                break
            if study is not None:
                screens = meter.last_screens() if isinstance(meter, EmulatorMeter) else None
                study.step(obs, screens, last.ended)
            played += last.frames if last.frames is not None else _UNKNOWN_SKIP
            if until(last):
                break
            if last.ended:
                obs, info = stream.reset()
                meter.reset(obs, info)
                if study is not None:
                    study.reset(obs)
    finally:
        sticky = meter.close()
        stream.on_reset = no_hook
    shadow = meter if isinstance(meter, ShadowMeter) else None
    return Play(
        name,
        meter.events,
        "reference" if shadow else "emulator",
        stream.label,
        stream.actions,
        sticky=sticky,
        kept=dict(shadow.kept) if shadow else {},
        lost=shadow.lost if shadow else None,
        observation=study.result(shadow.views() if shadow else None) if study else {},
    )


def _resets(stream: Stream, make: Callable[[], Any], owned: bool, game: str, seed: int) -> Play:
    """:data:`RESETS` resets of ``stream`` in a row.

    Where fewer than :data:`MIN_NEW_GAMES` of them started a new game (stable-baselines3's
    ``EpisodicLifeEnv`` goes on with the game it has), one reset each of new envs seeded
    ``seed + 1``, ``seed + 2``, ... follows.
    """
    play = Play("resets", [], "emulator", stream.label, stream.actions)
    _record_resets(play, stream, game, [None] * RESETS)
    for extra in range(1, RESETS):
        if not owned or _new_games(play.events) >= MIN_NEW_GAMES:
            break
        new = open_stream(make(), owned)
        try:
            _record_resets(play, new, game, [seed + extra])
        finally:
            new.close()
        play.foreign += 1
    return play


def _record_resets(play: Play, stream: Stream, game: str, seeds: list[int | None]) -> None:
    meter = _meter(stream, game, probe=False)
    try:
        for seed in seeds:
            obs, info = stream.reset(seed)
            meter.reset(obs, info)
    finally:
        meter.close()
        stream.on_reset = no_hook
    play.events += meter.events
    if isinstance(meter, ShadowMeter):
        play.measured, play.lost = "reference", play.lost or meter.lost


def _new_games(events: list[Event]) -> int:
    return sum(isinstance(e, ResetFacts) and e.fresh is not False for e in events)


def play_all(
    make: Callable[[], Any],
    game: str,
    frames: int,
    cap_frames: int,
    seed: int,
    owned: bool = True,
) -> list[Play]:
    """The three plays (see the module docstring), one after the other on one env.

    ``make`` returns the env (a new one each call where the audit has a factory, ``owned``: the
    audit closes it), for the resets play's new envs.
    """
    stream = open_stream(make(), owned)
    try:
        rng = np.random.default_rng(seed)
        actions = stream.actions
        random = _play(
            "random",
            stream,
            game,
            seed,
            lambda: int(rng.integers(actions)),
            frames,
            lambda step: False,
            ObservationStudy(),
        )
        resets = _resets(stream, make, owned, game, seed)
        noop = _play(
            "noop",
            stream,
            game,
            None,
            lambda: 0,
            cap_frames,
            lambda step: step.truncated or bool(step.game_over),
        )
    finally:
        stream.close()
    return [random, resets, noop]
