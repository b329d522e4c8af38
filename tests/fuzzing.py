"""Hypothesis settings for the fuzz tests: thousands of inputs in CI, ten times more in long mode.

``fuzz(n)`` runs ``n`` generated inputs, or ``10 n`` with ``ARCADEBENCH_LONG=1``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG = os.environ.get("ARCADEBENCH_LONG") == "1"


def fuzz(examples: int) -> settings:
    """Settings for a fuzz test of ``examples`` inputs (x10 in long mode), without deadlines."""
    return settings(
        max_examples=examples * (10 if LONG else 1),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
