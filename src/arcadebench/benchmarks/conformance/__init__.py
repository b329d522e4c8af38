"""Conformance check: does the emulator really do what an Atari spec declares?

``arcadebench check <spec>`` / :func:`arcadebench.check` play every game of a spec in the real
emulator with seeded random and NOOP agents and verify, per game:

- the action set (18 actions, or the spec's declared exception: Skiing's 9, ALE issue #691);
- sticky actions at the declared probability, measured behaviourally inside the protocol's own
  steps against a reference emulator (:mod:`.sticky_probe`; Machado et al. 2018);
- the frame skip, the observation shape, no life information and game-over-only termination;
- the max stuck time and the frame cap firing on exactly the declared step, scaled down to fit
  the frame budget when larger (SABER: Toromanoff et al. 2019, Table 1; HWR: Fan 2021);
- the rollover guard, rewards (flagging any below -1,000 that is not a rollover) and
  determinism (the same seed plays the same episode).

Modules: :mod:`.sticky_probe` (the sticky-action measurement), :mod:`.observer` (per-step
checks), :mod:`.play` (one game's runs, a worker job), :mod:`.verdicts` (rules and statuses),
:mod:`.suite` (the check over a spec, workers, the report).
"""

from arcadebench.benchmarks.conformance.sticky_probe import StickyEstimate, StickyProbe
from arcadebench.benchmarks.conformance.suite import CheckReport, check, check_specs
from arcadebench.benchmarks.conformance.verdicts import GameCheck, RuleResult

__all__ = [
    "CheckReport",
    "GameCheck",
    "RuleResult",
    "StickyEstimate",
    "StickyProbe",
    "check",
    "check_specs",
]
