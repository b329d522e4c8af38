"""A verified leaderboard: submissions checked by replay and by re-running the policy.

A board is a folder (:mod:`~arcadebench.benchmarks.leaderboard.board`); ``add`` checks a run
and keeps it or its rejection (:mod:`~arcadebench.benchmarks.leaderboard.submit`), a submitted
policy is played again on seeds drawn from the board's secret
(:mod:`~arcadebench.benchmarks.leaderboard.reexecute`,
:mod:`~arcadebench.benchmarks.leaderboard.secret`), and ``build`` writes the static site, one
page per protocol (:mod:`~arcadebench.benchmarks.leaderboard.site`). The layer sits above the
runner, replay, report and scoring, and nothing below imports it.
"""

from arcadebench.benchmarks.leaderboard.board import (
    Board,
    BoardSettings,
    Submission,
    close_board,
    load_board,
    open_board,
)
from arcadebench.benchmarks.leaderboard.site import build_site
from arcadebench.benchmarks.leaderboard.submit import add_submission, read_meta

__all__ = [
    "Board",
    "BoardSettings",
    "Submission",
    "add_submission",
    "build_site",
    "close_board",
    "load_board",
    "open_board",
    "read_meta",
]
