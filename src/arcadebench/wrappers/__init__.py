"""Protocol wrappers: the behaviours the papers define, one Gymnasium wrapper each.

Composed by the environment builders in the order DEVELOPING.md documents (inner to outer):

- Atari: ``AtariEnv`` → :class:`RolloverGuard` → :class:`MaxStuckTime` →
  :class:`EpisodeFrameLimit` → :class:`NoLifeInformation` → monitor.
- Sonic: ``RetroEnv`` → :class:`SonicProgressReward` → :class:`StickyFrameSkip` →
  :class:`ButtonDiscretizer` → :class:`TimeLimit` → monitor.

Opt-in training aids, outside the protocol env: :class:`EpisodicLife` (non-compliant),
:class:`AllowBacktracking`, Gymnasium's ``ClipReward``, and the standard observations
(:class:`StandardAtariEnv` via ``obs_type="standard"``, :func:`standard_retro_observations`).
Everything a wrapper adds to ``info`` lives in ``info["arcadebench"]``: :func:`protocol_info`.
:class:`EpisodeMonitor` (outermost) logs every episode and enforces the budget;
``arcadebench.monitor(env, log=...)`` attaches a log to any environment.
"""

from arcadebench.errors import InvalidArgument
from arcadebench.wrappers._info import END_REASONS, ProtocolInfo, protocol_info
from arcadebench.wrappers.actions import ButtonDiscretizer
from arcadebench.wrappers.boundaries import (
    EpisodeFrameLimit,
    EpisodicLife,
    LifeLossTerminal,
    MaxStuckTime,
    NoLifeInformation,
    TimeLimit,
)
from arcadebench.wrappers.monitor import EpisodeMonitor
from arcadebench.wrappers.observations import (
    CvGrayscaleObservation,
    StandardAtariEnv,
    standard_retro_observations,
)
from arcadebench.wrappers.rewards import (
    AllowBacktracking,
    ContestProgress,
    RolloverGuard,
    SonicProgressReward,
)
from arcadebench.wrappers.sticky import StickyFrameSkip

__all__ = [
    "END_REASONS",
    "AllowBacktracking",
    "ButtonDiscretizer",
    "ContestProgress",
    "CvGrayscaleObservation",
    "EpisodeFrameLimit",
    "EpisodeMonitor",
    "EpisodicLife",
    "InvalidArgument",
    "LifeLossTerminal",
    "MaxStuckTime",
    "NoLifeInformation",
    "ProtocolInfo",
    "RolloverGuard",
    "SonicProgressReward",
    "StandardAtariEnv",
    "StickyFrameSkip",
    "TimeLimit",
    "protocol_info",
    "standard_retro_observations",
]
