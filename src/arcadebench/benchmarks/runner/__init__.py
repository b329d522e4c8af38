"""The runner: plays agents through a spec's environments in worker processes and scores them.

:mod:`~.evaluate` plans the (game, seed) jobs and scores what they logged; :mod:`~.worker` plays
one job; :mod:`~.backends` runs jobs in local processes and :mod:`~.ray_backend` on Ray (the
driver writing the logs); :mod:`~.progress` shows them;
:mod:`~.agents` loads agents (built-in, ``module:attr``, policies, learners) and :mod:`~.jerk` is
the Sonic paper's scripted baseline.
"""

from arcadebench.benchmarks.runner.agents import (
    ActingAgent,
    Agent,
    BatchedAgent,
    LearningAgent,
    Policy,
    PredictingAgent,
)
from arcadebench.benchmarks.runner.evaluate import evaluate

__all__ = [
    "ActingAgent",
    "Agent",
    "BatchedAgent",
    "LearningAgent",
    "Policy",
    "PredictingAgent",
    "evaluate",
]
