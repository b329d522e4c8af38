"""Judge one game's measurements against its spec: one verdict per rule, one row per game.

A rule is ``ok`` (it held and was seen to hold), ``fail`` (it was broken), ``known exception``
(broken in a way the spec declares: Skiing's 9 actions, ALE issue #691), ``unverified`` (it
held, but the run could not show it: a NOOP agent that is rewarded never gets stuck, too few
distinguishable frames for the sticky estimate) or ``n/a`` (the spec has no such rule). Flags
are not failures but worth a look: a reward below -1,000 that is not a rollover (SABER Appendix
C says none exists; Skiing's missed-gate penalty is one), a rollover that is no score-counter
wrap (SABER's old -1,000 rule corrected Skiing's penalty), frames the sticky probe could not
reproduce, an action-count exception the emulator does not need.

A game's status is ``FAIL`` when a rule failed, else ``look`` when something was flagged, else
``known exception`` when a declared exception applied, else ``ok``.

Classes: RuleResult, GameCheck.
Functions: judge.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arcadebench._table import format_cell
from arcadebench.benchmarks.conformance.observer import PENALTY_FLAG
from arcadebench.specs import Spec

__all__ = ["RULES", "STATUSES", "GameCheck", "RuleResult", "judge"]

RULES = (
    "actions",
    "sticky",
    "frameskip",
    "observation",
    "life_information",
    "termination",
    "life_loss",
    "noop_starts",
    "end_reason",
    "max_stuck_frames",
    "max_episode_frames",
    "rollover",
    "rewards",
    "determinism",
)
"""Every rule the check verifies, in the order of its notes."""
STATUSES = ("ok", "known exception", "look", "FAIL")
_RUNS = ("random", "replay")


@dataclass(frozen=True)
class RuleResult:
    """The verdict on one rule: ``status``, the table ``cell`` and a ``detail`` for the notes."""

    status: str
    cell: str
    detail: str = ""


@dataclass(frozen=True)
class GameCheck:
    """Everything the check found about one game of a spec.

    Attributes:
        game: the ale-py game id.
        rules: one :class:`RuleResult` per rule of :data:`RULES`.
        flags: findings worth a look that are not failures.
        measurements: what :func:`~.play.play_game` recorded.
        error: why the game could not be played (an exception in its job), else ``None``.
    """

    game: str
    rules: dict[str, RuleResult]
    flags: tuple[str, ...]
    measurements: dict[str, Any]
    error: str | None = None

    @property
    def failed(self) -> list[str]:
        """The rules that failed (``["play"]`` when the game could not be played at all)."""
        if self.error is not None:
            return ["play"]
        return [name for name, rule in self.rules.items() if rule.status == "fail"]

    @property
    def status(self) -> str:
        """``FAIL``, ``look``, ``known exception`` or ``ok``."""
        if self.failed:
            return "FAIL"
        if self.flags:
            return "look"
        if any(rule.status == "known exception" for rule in self.rules.values()):
            return "known exception"
        return "ok"

    @property
    def notes(self) -> str:
        """Failures, declared exceptions, unverified rules, remarks and flags, in one line."""
        order = {"fail": 0, "known exception": 1, "unverified": 2}
        picked = sorted(
            (r for r in self.rules.values() if r.detail),
            key=lambda r: order.get(r.status, len(order)),
        )
        parts = [("FAIL " if r.status == "fail" else "") + r.detail for r in picked]
        if self.error is not None:
            parts.insert(0, f"FAIL the game could not be played: {self.error}")
        return "; ".join(parts + [f"look: {flag}" for flag in self.flags])

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: status, failed rules, flags, notes, rules and measurements."""
        return {
            "status": self.status,
            "failed": self.failed,
            "flags": list(self.flags),
            "error": self.error,
            "notes": self.notes,
            "rules": {
                name: {"status": r.status, "cell": r.cell, "detail": r.detail}
                for name, r in self.rules.items()
            },
            "measurements": self.measurements,
        }


def _number(value: float | None) -> str:
    if value is None:
        return "-"
    return format_cell(int(value) if float(value).is_integer() else float(value))


def _violated(runs: list[dict[str, Any]], rule: str) -> str | None:
    for run in runs:
        messages: list[str] = run["violations"].get(rule, [])
        if messages:
            more = sum(r["violation_counts"].get(rule, 0) for r in runs) - 1
            return messages[0] + (f" (and {more} more)" if more > 0 else "")
    return None


def _actions(spec: Spec, game: str, m: dict[str, Any]) -> tuple[RuleResult, list[str]]:
    count, settings = m["actions"], m["settings"]
    expected = 18 if settings["full_action_space"] else m["minimal_actions"]
    exception = spec.action_count_exceptions.get(game)
    if count == expected:
        flags = [] if exception is None else [f"the spec lists {exception} actions, got {count}"]
        return RuleResult("ok", str(count)), flags
    if exception == count:
        detail = (
            f"{count} actions, not {expected}: the ROM's legal set (ALE issue #691), a "
            "known exception"
        )
        return RuleResult("known exception", f"{count} (known)", detail), []
    return RuleResult("fail", str(count), f"actions: {count}, the spec declares {expected}"), []


def _sticky(m: dict[str, Any]) -> RuleResult:
    s = m["sticky"]
    declared, estimate, (low, high) = s["declared"], s["estimate"], s["interval"]
    cell = "-" if estimate is None else f"{estimate:.3f} n={s['informative']}"
    lost = ""
    if s["unexplained"]:
        lost = (
            f"sticky: {s['unexplained']:,} of {s['compared']:,} compared frames not reproducible "
            "from a saved state (ignored)"
        )
    if s["unexplained"] > s["informative"]:
        return RuleResult("unverified", cell, lost)
    if s["verdict"] == "too few samples":
        detail = f"sticky: too few samples ({s['informative']} distinguishable frames)"
        return RuleResult("unverified", cell, "; ".join(filter(None, [detail, lost])))
    if s["verdict"] == "fail":
        detail = (
            f"sticky: measured {estimate:.3f} ({low:.3f}-{high:.3f} within 4 SE, "
            f"n={s['informative']}), declared {declared:g}"
        )
        return RuleResult("fail", cell, "; ".join(filter(None, [detail, lost])))
    return RuleResult("ok", cell, lost)


def _limit(m: dict[str, Any], key: str, runs: list[dict[str, Any]]) -> RuleResult:
    declared = m["settings"][key]
    if declared is None:
        return RuleResult("n/a", "-")
    name = {"max_stuck_frames": "stuck", "max_episode_frames": "frame cap"}[key]
    violation = _violated(runs, "stuck" if key == "max_stuck_frames" else "frame_limit")
    if violation:
        return RuleResult("fail", "FAIL", f"{name}: {violation}")
    noop = m[key]
    ends = "stuck_ends" if key == "max_stuck_frames" else "cap_ends"
    if noop["run"][ends]:
        scaled = noop["limit"] != declared
        cell = f"{noop['limit']:,}/{declared:,} scaled" if scaled else f"{declared:,}"
        return RuleResult("ok", cell)
    if any(run[ends] for run in runs[: len(_RUNS)]):
        return RuleResult("ok", f"{declared:,}")
    run = noop["run"]
    if run["end_reasons"].get("game_over"):
        cell, why = "game over first", "the NOOP agent's game ended first"
    elif run["end_reasons"]:
        cell, why = (
            "other end first",
            f"the NOOP episode ended by {', '.join(sorted(run['end_reasons']))}",
        )
    elif key == "max_stuck_frames" and run["rewarded"]:
        cell, why = "rewarded", "the NOOP agent is rewarded on every step"
    else:
        cell, why = "not reached", f"the NOOP run ended after {run['frames']:,} frames"
    return RuleResult("unverified", cell, f"{name} not shown: {why}")


def _life_loss(m: dict[str, Any], runs: list[dict[str, Any]]) -> RuleResult:
    """The training life-loss signal: every lost life ended a training episode, seen once."""
    if not m["settings"]["life_loss_terminal_in_training"]:
        return RuleResult("n/a", "-")  # a lost life that ends an episode fails `termination`
    violation = _violated(runs, "life_loss")
    if violation:
        return RuleResult("fail", "FAIL", f"life loss: {violation}")
    ends = sum(run["life_ends"] for run in runs)
    if not any(run["most_lives"] for run in runs):
        return RuleResult("n/a", "no lives")  # nothing to signal: Pong, Boxing
    if ends:
        return RuleResult("ok", f"{ends} ended in training")
    detail = "life loss not shown: no life was lost in the training run"
    return RuleResult("unverified", "none lost in training", detail)


def _noop_starts(m: dict[str, Any], runs: list[dict[str, Any]]) -> RuleResult:
    """Every reset within the declared no-op frames, and their number drawn, not fixed."""
    violation = _violated(runs, "noop_starts")
    if violation:
        return RuleResult("fail", "FAIL", f"no-op starts: {violation}")
    declared = m["settings"]["noop_starts"]
    if declared is None:
        return RuleResult("n/a", "-")
    least, most = declared
    starts = m["noop_starts"]["starts"]  # each within least..most: else a violation above
    cell = f"{min(starts)}..{max(starts)} of {least}-{most}"
    if least < most and len(set(starts)) == 1:
        detail = f"no-op starts: {len(starts)} resets all after {starts[0]} frames, not drawn"
        return RuleResult("fail", cell, detail)
    return RuleResult("ok", cell)


def _rewards(runs: list[dict[str, Any]]) -> tuple[RuleResult, list[str]]:
    lows = [r["reward_min"] for r in runs if r["reward_min"] is not None]
    highs = [r["reward_max"] for r in runs if r["reward_max"] is not None]
    low, high = (min(lows), max(highs)) if lows else (None, None)
    flags = []
    penalties = sorted({v for r in runs for v in r["flags"]["penalty"]})
    if penalties:
        flags.append(
            f"a reward of {_number(penalties[0])}, below {_number(PENALTY_FLAG)} and no rollover"
        )
    wraps = sorted({v for r in runs for v in r["flags"]["rollover"]})
    if wraps:
        flags.append(
            f"a reward of {_number(wraps[0])} was corrected as a rollover, but a score-counter "
            "wrap reports about -1,000,000"
        )
    return RuleResult("ok", f"{_number(low)}..{_number(high)}"), flags


def _rule(rule: str, runs: list[dict[str, Any]], cell: str) -> RuleResult:
    """``ok`` with ``cell``, or ``fail`` with the first violation of ``rule`` in ``runs``."""
    violation = _violated(runs, rule)
    if violation:
        return RuleResult("fail", "FAIL", f"{rule}: {violation}")
    return RuleResult("ok", cell)


def judge(spec: Spec, game: str, m: dict[str, Any]) -> GameCheck:
    """Judge the measurements ``m`` of ``game`` (from :func:`~.play.play_game`) against ``spec``.

    ``m`` may be ``{"error": message}`` (the game's job raised): the game then fails as a whole.
    """
    if "error" in m:
        return GameCheck(
            game, {name: RuleResult("n/a", "-") for name in RULES}, (), m, error=m["error"]
        )
    limits = [m[k]["run"] for k in ("max_stuck_frames", "max_episode_frames") if m[k]]
    training = [m["training"]] if m["training"] else []
    resets = [m["noop_starts"]] if m["noop_starts"] else []
    runs = [m[name] for name in _RUNS] + limits + training + resets
    scored = [m["random"], *limits]  # the replay repeats the random run
    settings = m["settings"]
    rules: dict[str, RuleResult] = {}
    rules["actions"], flags = _actions(spec, game, m)
    rules["sticky"] = _sticky(m)
    rules["frameskip"] = _rule("frameskip", runs, str(settings["frameskip"]))
    rules["observation"] = _rule("observation", runs, "x".join(map(str, m["observation_shape"])))
    hidden = "in info" if settings["life_information"] else "hidden"
    rules["life_information"] = _rule("life_information", runs, hidden)
    lost = sum(run["lives_lost"] for run in scored)
    rules["termination"] = _rule("termination", runs, f"{lost} lost")
    rules["life_loss"] = _life_loss(m, runs)
    rules["noop_starts"] = _noop_starts(m, runs)
    rules["end_reason"] = _rule("end_reason", runs, "ok")
    for key in ("max_stuck_frames", "max_episode_frames"):
        rules[key] = _limit(m, key, runs)
    rules["rollover"] = _rule("rollover", runs, "ok")
    if settings["rollover_threshold"] is None and rules["rollover"].status == "ok":
        rules["rollover"] = RuleResult("n/a", "-")
    rules["rewards"], found = _rewards(scored + training)
    same = all(m["random"][k] == m["replay"][k] for k in ("digest", "digested_steps"))
    rules["determinism"] = (
        RuleResult("ok", "same")
        if same
        else RuleResult("fail", "DIFFERENT", "determinism: the same seed played another episode")
    )
    return GameCheck(game, {name: rules[name] for name in RULES}, tuple(flags + found), m)
