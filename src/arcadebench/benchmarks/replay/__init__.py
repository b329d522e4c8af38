"""Recorded episodes played again: verified against their logs, or rendered to a video.

:mod:`~.logs` reads a log's lines and where its recordings are; :mod:`~.simulate` replays an
episode in the spec's emulator with its log's settings; :mod:`~.completeness` checks that a log
holds every episode once; :mod:`~.claims` recomputes a results file's numbers from its logs;
:mod:`~.verify` puts them together (``arcadebench verify``); :mod:`~.video` renders one episode
(``arcadebench replay``).
"""

from arcadebench.benchmarks.replay.verify import Verification, verify

__all__ = ["Verification", "verify"]
