"""The scoring stage: raw per-game scores in, the protocols' normalised scores and aggregates out.

Where a score is computed: :mod:`~.metrics` (pure functions over ``(runs, games)`` arrays:
aggregates, classes, Atari-X estimates, learning efficiency), :mod:`~.normalise` (HNS, HWRNS,
SABER cap, log-normalisation), :mod:`~.bootstrap` (stratified bootstrap intervals) and
:mod:`~.results` (:func:`score`, which applies a spec's rules and builds :class:`Results`). The
inputs are read by :mod:`~.score_files` (CSV/JSON score tables) and :mod:`~.log_scores`
(episode logs, through :mod:`arcadebench.records`); :mod:`~.tables` prints results.
"""

from arcadebench.benchmarks.scoring.results import Results, score

__all__ = ["Results", "score"]
