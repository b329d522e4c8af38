"""Recorded episodes played again: verified against their logs, or rendered to a video.

:mod:`~.logs` reads a log's lines and recordings; :mod:`~.simulate` replays an episode in the
spec's emulator with its log's settings; :mod:`~.verify` checks every episode of a log
(``arcadebench verify``); :mod:`~.video` renders one (``arcadebench replay``).
"""

from arcadebench.benchmarks.replay.verify import Verification, verify

__all__ = ["Verification", "verify"]
