"""arcadebench: published Atari and Sonic evaluation protocols, one line to use.

Importing the package registers a Gymnasium id for every game and level of every built-in
protocol (``arcadebench/SABER-Pong-v0``, ``arcadebench/Atari5-BattleZone-v0``, ...).
``arcadebench.make_sb3_vec_env`` is imported on first use: it pulls in stable-baselines3 and
PyTorch, which nothing else here needs.
"""

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:  # the type checker sees the lazy name's signature
    from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env

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
    "make_sb3_vec_env",
    "make_vec",
    "monitor",
    "report",
    "score",
    "verify",
]

_LAZY = {"make_sb3_vec_env": "arcadebench.benchmarks.training.sb3"}
"""Names imported on first use, and their modules (which import heavy frameworks)."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'arcadebench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


register_envs()
register_joint_envs()
