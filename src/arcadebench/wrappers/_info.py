"""The protocol's part of ``info``: one namespaced dict, ``info["arcadebench"]``.

Every wrapper that adds something to ``info`` puts it under ``info["arcadebench"]`` (get it with
:func:`protocol_info`), so protocol keys never clash with the emulator's own (ale-py's ``lives``,
stable-retro's RAM variables). The keys are declared by :class:`ProtocolInfo`; see DEVELOPING.md
("Environments and the ``info`` contract").

Classes: ProtocolInfo.
"""

from __future__ import annotations

from typing import Any, SupportsFloat, TypedDict

from arcadebench.errors import InvalidArgument
from arcadebench.records.schema import END_REASONS, EndReason

__all__ = ["END_REASONS", "EndReason", "ProtocolInfo", "protocol_info", "set_end_reason"]

KEY = "arcadebench"

Options = dict[str, Any] | None
ResetResult = tuple[Any, dict[str, Any]]
StepResult = tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]


class ProtocolInfo(TypedDict, total=False):
    """The keys of ``info["arcadebench"]``.

    Attributes:
        end_reason: on the last step of an episode only; set by the wrapper that ended it (the
            innermost one when several fire on the same step) and never overwritten.
        rollover_rewards: on steps where :class:`~arcadebench.wrappers.RolloverGuard` replaced a
            reward, the original values.
        stuck_frames: emulator frames since the last non-zero reward
            (:class:`~arcadebench.wrappers.MaxStuckTime`).
        progress: Sonic progress through the level in [0, 1]
            (:class:`~arcadebench.wrappers.SonicProgressReward`).
        episode: on the last step of a logged episode, its summary
            (:func:`~arcadebench.wrappers.monitor.episode_summary`).
        budget_exhausted: at a reset once the run's frame budget is used up
            (:class:`~arcadebench.wrappers.EpisodeMonitor`).
    """

    end_reason: EndReason
    rollover_rewards: list[float]
    stuck_frames: int
    progress: float
    episode: dict[str, Any]
    budget_exhausted: bool


def protocol_info(info: dict[str, Any]) -> ProtocolInfo:
    """Return ``info["arcadebench"]``, creating it (empty) if absent.

    Raises:
        InvalidArgument: ``info`` is not a dict, or ``info["arcadebench"]`` exists and is not one
            (something else owns the key; refusing keeps protocol data from being lost).

    Example:
        >>> info = {"lives": 3}
        >>> protocol_info(info)["stuck_frames"] = 12
        >>> info
        {'lives': 3, 'arcadebench': {'stuck_frames': 12}}
        >>> protocol_info(None)
        Traceback (most recent call last):
        ...
        arcadebench.errors.InvalidArgument: `info` must be a dict, got None
    """
    if not isinstance(info, dict):
        raise InvalidArgument(f"`info` must be a dict, got {info!r}")
    namespaced = info.get(KEY)
    if namespaced is None:
        namespaced = info[KEY] = {}
    elif not isinstance(namespaced, dict):
        raise InvalidArgument(f"`info[{KEY!r}]` must be a dict, got {namespaced!r}")
    return namespaced  # type: ignore[return-value]  # the dict ProtocolInfo describes


def set_end_reason(info: dict[str, Any], reason: EndReason) -> None:
    """Record why the episode ended unless an inner wrapper already did.

    Example:
        >>> info = {}
        >>> set_end_reason(info, "stuck"); set_end_reason(info, "frame_limit")
        >>> info["arcadebench"]["end_reason"]
        'stuck'
    """
    protocol_info(info).setdefault("end_reason", reason)
