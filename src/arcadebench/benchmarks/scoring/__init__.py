"""The scoring stage: raw per-game scores in, the protocols' normalised scores and aggregates out.

Where a score is computed: :mod:`~.metrics` (pure functions over ``(runs, games)`` arrays:
aggregates, the probability of improvement, classes, Atari-X estimates, learning efficiency),
:mod:`~.normalise` (HNS, HWRNS, SABER cap, log-normalisation, the headline metric),
:mod:`~.bootstrap` (stratified bootstrap intervals, of one algorithm or of two resampled
independently) and :mod:`~.results` (:func:`score`, which applies a spec's rules and builds
:class:`Results`), with :mod:`~.improvement` (P(X > Y) of pairs of algorithms) and
:mod:`~.sample_efficiency` (the points and aggregates of curves, the published curves). The
inputs are read by :mod:`~.score_files` (CSV/JSON score tables) and :mod:`~.log_scores`
(episode logs, through :mod:`arcadebench.records`); :mod:`~.tables` prints results and
:mod:`~.paper_tables` renders them as LaTeX and Markdown.
"""

from arcadebench.benchmarks.scoring.results import Results, score

__all__ = ["Results", "score"]
