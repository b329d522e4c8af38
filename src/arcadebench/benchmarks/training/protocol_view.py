"""What a training loop shows of the protocol while it trains: the scores at frame checkpoints.

SABER and HWR score a run at training-frame checkpoints (SABER Section 3.2: the mean of the last
100 training episodes before 10M, 50M, 100M and 200M frames of the learner). A learner's own
logger sees its environments, not the run: :class:`CheckpointScores` scores each checkpoint the
run has passed from the run's log, exactly as ``arcadebench score`` does, once an episode has
ended past it. Every library's integration shows the same numbers through it (SB3's callback,
a Ray training run's ``on_train_result``).

Classes: CheckpointScores.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.scoring.results import score
from arcadebench.specs import Spec

__all__ = ["CheckpointScores"]


class CheckpointScores:
    """The game's scores at each frame checkpoint of the spec the run has passed.

    Args:
        spec: the protocol (its ``evaluation.checkpoints``).
        game: the canonical game or level.
        log: the run's log (``None``: nothing is scored).
    """

    def __init__(self, spec: Spec, game: str, log: Path | None) -> None:
        self.spec = spec
        self.game = game
        self.log = log
        self.checkpoints = list(spec.evaluation.checkpoints)
        self.scored: dict[int, dict[str, Any]] = {}

    def update(self, frames: int) -> dict[int, dict[str, Any]]:
        """Score the checkpoints at or below the run's ``frames`` not scored yet; the new ones.

        A checkpoint is scored once an episode has ended past it (the log's episode order is
        the rule's), so one the run has just passed may come on a later call.
        """
        new: dict[int, dict[str, Any]] = {}
        for checkpoint in self.checkpoints:
            if self.log is None or frames < checkpoint or checkpoint in self.scored:
                continue
            cell = self._score(checkpoint)
            if cell is not None:
                self.scored[checkpoint] = new[checkpoint] = cell
        return new

    def _score(self, checkpoint: int) -> dict[str, Any] | None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = score(self.spec, [str(self.log)], reps=0)
        for algorithm in results.algorithms.values():
            at = algorithm.get("checkpoints", {}).get(str(checkpoint))
            cell = (at or {}).get("games", {}).get(self.game)
            if cell is not None:
                return {k: v for k, v in cell.items() if isinstance(v, int | float)}
        return None
