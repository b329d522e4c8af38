"""arcadebench: published Atari and Sonic evaluation protocols, one line to use.

Importing the package registers a Gymnasium id for every game and level of every built-in
protocol (``arcadebench/SABER-Pong-v0``, ``arcadebench/Atari5-BattleZone-v0``, ...).
"""

from arcadebench._version import __version__
from arcadebench.benchmarks.audit import audit
from arcadebench.benchmarks.conformance import check
from arcadebench.benchmarks.envs import (
    env_id,
    levels,
    make,
    make_vec,
    register_envs,
    register_joint_envs,
)
from arcadebench.benchmarks.replay import verify
from arcadebench.benchmarks.report import report
from arcadebench.benchmarks.runner import (
    ActingAgent,
    Agent,
    BatchedAgent,
    LearningAgent,
    PredictingAgent,
    evaluate,
)
from arcadebench.benchmarks.scoring.results import score
from arcadebench.errors import ArcadebenchError, SpecError
from arcadebench.specs import Spec, SpecDiff, list_specs, load_spec
from arcadebench.specs.diff import diff
from arcadebench.wrappers.monitor import monitor

__all__ = [
    "ActingAgent",
    "Agent",
    "ArcadebenchError",
    "BatchedAgent",
    "LearningAgent",
    "PredictingAgent",
    "Spec",
    "SpecDiff",
    "SpecError",
    "__version__",
    "audit",
    "check",
    "diff",
    "env_id",
    "evaluate",
    "levels",
    "list_specs",
    "load_spec",
    "make",
    "make_vec",
    "monitor",
    "report",
    "score",
    "verify",
]

register_envs()
register_joint_envs()
