"""Sample-efficiency curves: where a curve is scored, what it shows, and the published ones.

Agarwal et al. (2021, Section 4; rliable's ``plot_sample_efficiency_curve``) plot an aggregate,
IQM of normalised scores by default, against training frames, with stratified-bootstrap bands.
Here a curve is the protocol's own scoring repeated at several frame counts: a run's score at
``F`` frames is what the protocol would give it had its log ended at ``F``
(:func:`~arcadebench.benchmarks.scoring.log_scores.run_scores`: the last ``k`` episodes before
``F`` for SABER/HWR, whose checkpoints are such points, or the mean of the episodes before ``F``
for Atari-5 and Sonic), and every point is scored like the end of the log (per-game scores,
aggregates, Atari-X estimates, intervals). This module says at which frames
(:func:`curve_frames`), which aggregates a curve shows first (:func:`curve_paths`), and which
published references form curves (:func:`reference_curves`: the same agent at several frame
counts, such as Dopamine's baselines at 10M, 50M, 100M and 199M frames in machado2018).

Classes: ReferenceCurve.
Functions: curve_frames, curve_paths, curve_name, reference_curves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arcadebench.errors import InvalidArgument
from arcadebench.specs import Spec
from arcadebench.specs.model import Evaluation, PublishedScores

__all__ = [
    "DEFAULT_POINTS",
    "ReferenceCurve",
    "curve_frames",
    "curve_name",
    "curve_paths",
    "reference_curves",
]

#: About this many points of a curve, at round frame counts, when no frames are asked for.
DEFAULT_POINTS = 20
_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)
_FRAMES_IN_NAME = re.compile(r"^(?P<head>.*\S)\s*,\s*[\d.,]+\s*[kMB]?\s+frames\)$")


def curve_frames(
    evaluation: Evaluation, longest: int, requested: bool | Sequence[int]
) -> tuple[int, ...]:
    """The frame counts a curve is scored at: the protocol's checkpoints and the ones asked for.

    ``requested`` is ``True`` for the default points, about :data:`DEFAULT_POINTS` multiples of
    a round step (1, 2, 2.5 or 5 times a power of ten) up to ``longest`` (the longest run's
    frames), or the frame counts a user asks for. The protocol's checkpoints (SABER Section
    3.2) are always points; nothing beyond its frame budget is.

    Example:
        >>> points = curve_frames(Evaluation("mean"), 16_000, True)
        >>> points[:3], len(points)
        ((1000, 2000, 3000), 16)
        >>> saber = Evaluation("last_k", k=100, checkpoints=(10_000_000, 50_000_000))
        >>> curve_frames(saber, 60_000_000, [5_000_000])
        (5000000, 10000000, 50000000)
    """
    if isinstance(requested, bool):
        asked: list[int] = _grid(longest) if requested else []
    else:
        asked = list(requested)
        bad = [f for f in asked if isinstance(f, bool) or not isinstance(f, int) or f <= 0]
        if bad or not asked:
            raise InvalidArgument(
                f"`curve` must be True or frame counts that are positive integers, got "
                f"{requested!r}"
            )
    points = {*asked, *evaluation.checkpoints}
    budget = evaluation.budget_frames
    return tuple(sorted(f for f in points if budget is None or f <= budget))


def _grid(longest: int) -> list[int]:
    """About :data:`DEFAULT_POINTS` multiples of a round step up to ``longest``."""
    if longest <= 0:
        return []
    wanted = longest / DEFAULT_POINTS
    power = 10.0 ** math.floor(math.log10(wanted))
    step = next(s * power for s in _STEPS if s * power >= wanted)
    step = max(1, round(step))
    return [step * k for k in range(1, longest // step + 1)]


def curve_paths(spec: Spec, metric: str) -> list[tuple[str, ...]]:
    """The aggregates a curve shows first: IQM of ``metric``, then the protocol's own.

    IQM is Agarwal et al.'s recommendation (2021, Section 4) and rliable's sample-efficiency
    default; the protocol's own are the columns of its paper's headline table (SABER's median
    and mean SABER score and HWRB, Atari-5's median HNS and Atari-5 estimate, Sonic's test mean),
    else the median and mean of ``metric``.

    Example:
        >>> from arcadebench import load_spec
        >>> curve_paths(load_spec("atari5"), "hns")
        [('hns', 'iqm'), ('hns', 'median'), ('atari5',)]
    """
    stats = spec.scoring.aggregates
    paths: list[tuple[str, ...]] = [(metric, "iqm")] if "iqm" in stats else []
    own = [p for p in spec.published[0].paths if p is not None] if spec.published else []
    if not own:
        own = [(metric, s) for s in ("median", "mean") if s in stats]
    paths.extend(p for p in own if p not in paths)
    return paths


def curve_name(name: str) -> str:
    """A reference's name without the frame count it was scored at: its curve's name.

    Example:
        >>> curve_name("DQN (Dopamine, 10M frames)"), curve_name("DQN (Dopamine)")
        ('DQN (Dopamine)', 'DQN (Dopamine)')
    """
    match = _FRAMES_IN_NAME.fullmatch(name)
    return f"{match.group('head')})" if match else name


@dataclass(frozen=True)
class ReferenceCurve:
    """A published agent at several frame counts, scored on the games of some results.

    Attributes:
        name: the curve's name (the references' name without their frame counts).
        points: ``{frames: aggregates}``, each the reference at those frames scored like a
            result on the games the results share with it (the results format's
            ``aggregates``).
        protocol: how the numbers were obtained where that is not the spec's protocol
            (the last point's; ``None``: the spec's own).
        source: where the numbers come from (the last point's source).
    """

    name: str
    points: Mapping[int, Mapping[str, Any]]
    protocol: str | None = None
    source: str = ""


def reference_curves(spec: Spec) -> list[tuple[str, tuple[PublishedScores, ...]]]:
    """The spec's per-game references that form curves: one name, two or more frame counts.

    References whose names differ only in their frame count (``curve_name``) and whose
    ``frames`` are given are one agent at several points of its training; each curve lists
    them in frame order. Dopamine's baselines in machado2018 are such curves (10M, 50M, 100M
    and 199M frames); their per-iteration data (200 points per game) is not shipped.
    """
    groups: dict[str, list[PublishedScores]] = {}
    for reference in spec.published_scores.values():
        if reference.frames is not None:
            groups.setdefault(curve_name(reference.name), []).append(reference)
    curves = []
    for name, members in groups.items():
        members.sort(key=lambda r: r.frames or 0)
        if len({r.frames for r in members}) >= 2:
            curves.append((name, tuple(members)))
    return curves
