"""Audit: which protocol does an Atari env a user already trains on actually run? Measured.

Researchers train on the environments their libraries hand them and report under a
protocol's name, while those environments run other protocols: ale-py's v5 envs play the
minimal action set, its ``AtariVectorEnv`` clips rewards and has no sticky actions,
stable-baselines3's ``AtariWrapper`` ends episodes on a lost life (DLR-RM/stable-baselines3
#635), envpool presses FIRE on reset. ``arcadebench audit ENV`` / :func:`audit` plays any such
env with seeded agents and *measures* each rule, the way ``arcadebench check`` measures the
protocol envs of arcadebench itself (:mod:`arcadebench.benchmarks.conformance`), never
reading a setting back:

- in the env's own emulator wherever its ``ALEInterface`` is in this process (any wrapper stack
  over an ale-py env, env 0 of a ``SyncVectorEnv`` or ``DummyVecEnv``): a tap on
  ``env.unwrapped.ale`` (:mod:`.tap`) with the check's sticky-action probe underneath;
- against a reference emulator kept in step where it is not (``AtariVectorEnv``, envpool):
  the frames that reproduce each observation (or envpool's RAM) are found (:mod:`.shadow`).

Then each measured property (:mod:`.properties`) is judged against every Atari spec
(:mod:`.matching`): the frame skip, sticky actions, the action set, life information, no-op
starts and FIRE on reset, the reward against the game's score, the episode cap and max stuck
time, and what the observation and ``info`` carry; the closest spec is named, and
:class:`~.findings.AuditReport` prints one table, writes JSON and gives the exit status.

Modules: :mod:`.targets` (what is audited), :mod:`.streams` (env 0 of it), :mod:`.facts`
(what a step and a reset did), :mod:`.tap` and :mod:`.shadow` (the two ways of measuring),
:mod:`.screens` and :mod:`.observation_study` (the observation), :mod:`.sessions` (the
plays), :mod:`.properties`, :mod:`.matching`, :mod:`.findings`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from typing import Any

from ale_py import ALEInterface, LoggerMode

from arcadebench.benchmarks.audit.findings import AuditReport
from arcadebench.benchmarks.audit.matching import match_spec
from arcadebench.benchmarks.audit.properties import measure
from arcadebench.benchmarks.audit.sessions import play_all
from arcadebench.benchmarks.audit.targets import resolve_target
from arcadebench.errors import InvalidArgument
from arcadebench.specs import Spec, list_specs, load_spec
from arcadebench.specs.model import AtariSettings
from arcadebench.wrappers._checks import check_int

__all__ = ["DEFAULT_CAP_FRAMES", "DEFAULT_FRAMES", "MIN_FRAMES", "AuditReport", "audit"]

DEFAULT_FRAMES = 2_000
"""Emulator frames the random agent plays, a few hundred distinguishable sticky decisions."""
DEFAULT_CAP_FRAMES = 20_000
"""The most frames the NOOP agent plays, past SABER's 18,000-frame max stuck time."""
MIN_FRAMES = 100


def _atari_specs(named: Spec | None) -> list[Spec]:
    specs = [s for s in map(load_spec, list_specs()) if isinstance(s.environment, AtariSettings)]
    if named is not None and named.hash not in {s.hash for s in specs}:
        specs.append(named)
    return specs


def audit(
    env: Any,
    kwargs: Mapping[str, Any] | None = None,
    *,
    game: str | None = None,
    spec: str | os.PathLike[str] | Spec | None = None,
    frames: int = DEFAULT_FRAMES,
    cap_frames: int = DEFAULT_CAP_FRAMES,
    seed: int = 0,
) -> AuditReport:
    """Play an Atari env with seeded agents, measure the protocol it runs, judge it by every spec.

    Why: a score is reported under a protocol's name, and the env a library hands out runs
    another one silently (sticky actions, the action set, life loss, no-op and FIRE resets,
    reward clipping: Machado et al. 2018; SABER, Toromanoff et al. 2019, Table 1). Nothing
    is read from the env's settings; see :mod:`arcadebench.benchmarks.audit`.

    Args:
        env: a Gymnasium id (``"ALE/Pong-v5"``) or ``"module:callable"`` (made with
            ``kwargs``); a zero-argument factory; or an env, vector env, envpool env or
            stable-baselines3 ``VecEnv`` (reset between the plays instead of made anew).
        kwargs: keyword arguments of ``gym.make`` or of the callable.
        game: the ale-py ROM, where the env does not say (e.g. a bare ``AtariVectorEnv``).
        spec: the spec the exit status is about (a built-in name or a YAML file, judged with
            the built-in Atari specs); ``None``: the closest.
        frames: emulator frames the random agent plays (at least :data:`MIN_FRAMES`).
        cap_frames: the most frames the NOOP agent plays to find a cap or max stuck time.
        seed: the seed of the resets and the random agent.

    Returns:
        An :class:`~.findings.AuditReport`: ``table()``, ``to_json(path)``, ``closest``,
        ``exit_status``.

    Raises:
        InvalidArgument: bad arguments, an env that cannot be made or is no Atari env, or one
            whose emulator is out of reach and that the reference emulator of ``game`` cannot
            follow from its first step (another game, or no ALE env at all).
        UnknownSpec: ``spec`` does not exist.

    Example:
        >>> report = audit("ALE/Pong-v5", frames=400, cap_frames=400, spec="machado2018")
        >>> report.property("action set").cell, report.subject.differs
        ("6: the game's minimal set", ['frame skip', 'action set', 'life information'])
    """
    frames = check_int("frames", frames, MIN_FRAMES)
    cap_frames = check_int("cap_frames", cap_frames, 0)
    seed = check_int("seed", seed, 0)
    named = load_spec(spec) if spec is not None else None
    if named is not None and not isinstance(named.environment, AtariSettings):
        raise InvalidArgument(
            f"`spec` must be an Atari spec, got {named.name!r} ({named.platform})"
        )
    ALEInterface.setLoggerMode(LoggerMode.Error)  # the report is the table, not ALE's banner
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the plays are the audit's, not the user's training
        target = resolve_target(env, kwargs, game)
        plays = play_all(target.make, target.game, frames, cap_frames, seed, target.owned)
    properties = tuple(measure(plays, target.game, plays[0].actions))
    matches = tuple(match_spec(s, properties, target.game) for s in _atari_specs(named))
    report = AuditReport(
        target=target.label,
        stream=plays[0].stream,
        game=target.game,
        measured=plays[0].measured,
        lost=next((p.lost for p in plays if p.lost), None),
        frames=frames,
        cap_frames=cap_frames,
        seed=seed,
        properties=properties,
        matches=matches,
        named=None if named is None else named.name,
    )
    if report.measured == "reference" and report.property("sticky actions").value is None:
        raise InvalidArgument(
            f"{target.label} could not be followed in {target.game}'s emulator "
            f"({report.lost or 'no observation was reproduced'}): is it an ALE env of "
            f"{target.game}? Pass its ROM as `game`"
        )
    return report
