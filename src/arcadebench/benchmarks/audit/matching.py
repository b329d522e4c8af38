"""What was measured against what a protocol declares: a verdict per rule and the closest spec.

Each Atari spec's environment settings (:class:`~arcadebench.specs.model.AtariSettings`) are
rules the measured properties (:mod:`.properties`) either keep (``ok``), break (``differs``,
with the measurement that shows it) or could not be seen to keep in the plays
(``unverified``: a cap beyond the frames played, too few distinguishable frames for the sticky
estimate, no life lost). Two rules no spec has are judged too: a reset that presses FIRE
(stable-baselines3's ``FireResetEnv``, ale-py's and envpool's ``use_fire_reset``) changes the
start state as no-op starts do, and a reward other than the game's score (clipping) changes
the returns every protocol scores. Every rule here changes scores
(:data:`arcadebench.specs.diff.SCORE_CHANGING`, with its evidence in
:data:`~arcadebench.specs.diff.EVIDENCE`), so the closest spec is the one with the fewest
differences, then the fewest unverified rules.

A protocol with a life-loss signal in training only (DQN, Atari 100k) is matched by an env that
ends episodes on a lost life and goes on with the game (its training env) or that does not
(its evaluation env); the verdict says which.

Classes: Verdict, SpecMatch. Functions: match_spec, closest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arcadebench.benchmarks.audit.properties import PROPERTIES, Property, frames_text
from arcadebench.benchmarks.conformance.sticky_probe import MIN_INFORMATIVE
from arcadebench.specs import Spec
from arcadebench.specs.diff import EVIDENCE, SCORE_CHANGING, environment_rules
from arcadebench.specs.model import AtariSettings

__all__ = ["JUDGED", "SpecMatch", "Verdict", "closest", "match_spec"]

JUDGED = tuple(name for name in PROPERTIES if name not in ("observation", "info"))
"""The properties judged against a spec (the observation and ``info`` are reported only)."""
_SETTING = {"fire on reset": "no-op starts"}
"""The :func:`~arcadebench.specs.diff.diff` setting a judged property belongs to."""
_EVIDENCE = {
    "reward": (
        "envpool #299 and CleanRL #454: returns summed from clipped rewards score 'drastically "
        "lower'; DQN clips rewards for learning only and reports the game's score (Mnih et al. "
        "2015, Methods)"
    ),
    "fire on reset": (
        "a FIRE at reset starts the game for the agent and changes the start state, as no-op "
        "starts do (Machado et al. 2018 Section 5.3; Gymnasium #781)"
    ),
}
"""Evidence of the rules no spec has (the others cite :data:`~arcadebench.specs.diff.EVIDENCE`)."""


@dataclass(frozen=True)
class Verdict:
    """One rule of one spec: ``ok``, ``differs``, ``unverified`` or ``n/a``, and why."""

    status: str
    declared: str
    note: str = ""

    @property
    def mark(self) -> str:
        """The table's cell (``ok``, ``DIFF``, ``?`` or ``-``)."""
        return {"ok": "ok", "differs": "DIFF", "unverified": "?", "n/a": "-"}[self.status]


@dataclass(frozen=True)
class SpecMatch:
    """An audit against one spec: a :class:`Verdict` per judged property.

    Attributes:
        spec: the spec.
        verdicts: one per name of :data:`JUDGED`.
        phase: the environment of the spec the env matched, where the spec has two (``training``
            or ``evaluation``), else ``None``.
    """

    spec: Spec
    verdicts: Mapping[str, Verdict]
    phase: str | None = None

    def __repr__(self) -> str:
        """One line: the spec, the rules that differ and those not verified.

        What ``print(report.closest)`` shows; the verdicts are in :attr:`verdicts` and in the
        report's table.
        """
        differs = ", ".join(self.differs) or "nothing"
        unverified = f"; not verified: {', '.join(self.unverified)}" if self.unverified else ""
        phase = f"; as its {self.phase} env" if self.phase else ""
        return f"SpecMatch({self.spec!r} differs in {differs}{unverified}{phase})"

    @property
    def differs(self) -> list[str]:
        """The rules the env breaks."""
        return [name for name, v in self.verdicts.items() if v.status == "differs"]

    @property
    def unverified(self) -> list[str]:
        """The rules the plays could not show."""
        return [name for name, v in self.verdicts.items() if v.status == "unverified"]

    @property
    def score_changing(self) -> list[str]:
        """The differences that change scores (all of them, for the rules judged here)."""
        return [name for name in self.differs if _SETTING.get(name, name) in SCORE_CHANGING]

    @property
    def matches(self) -> bool:
        """No rule differs (unverified ones allowed)."""
        return not self.differs

    def evidence(self, name: str) -> str:
        """Where the literature shows that a difference in ``name`` changes scores."""
        return _EVIDENCE.get(name) or EVIDENCE.get(_SETTING.get(name, name), "")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict: the spec, the phase, the verdicts."""
        return {
            "spec": self.spec.identity,
            "matches": self.matches,
            "phase": self.phase,
            "differs": self.differs,
            "unverified": self.unverified,
            "verdicts": {
                name: {"status": v.status, "declared": v.declared, "note": v.note}
                for name, v in self.verdicts.items()
            },
        }


Judge = Callable[[AtariSettings, Spec, Any, str], tuple[str, str]]


def _frame_skip(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    if value == [env.frameskip]:
        return "ok", ""
    return "differs", " or ".join(map(frames_text, value)) + " a step"


def _sticky(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    declared = env.repeat_action_probability
    if value["per_step"]:
        return "differs", "the previous action kept for whole agent steps, not frame by frame"
    measured = f"p = {value['estimate']:.2f} ({value['low']:.2f}-{value['high']:.2f})"
    if value["n"] < MIN_INFORMATIVE:
        return "unverified", f"{measured} from {value['n']} frames only"
    if value["low"] <= declared <= value["high"]:
        return "ok", ""
    return "differs", measured


def _action_set(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    wanted = "full" if env.full_action_space else "minimal"
    if value[wanted]:
        return "ok", ""
    if env.full_action_space and spec.action_count_exceptions.get(game) == value["count"]:
        return "ok", f"{value['count']} actions, the spec's known exception"
    return "differs", f"{value['count']} actions, the {value['set']} set"


def _life(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    """The life rule part by part, the note saying which parts differ and which were kept.

    The parts: ``lives`` in ``info``, a lost life ending the episode, the reset after it.
    """
    lost, ended, after = value["lost"], value["ended"], value["after"]
    differ: list[str] = []
    kept: list[str] = []  # the parts the plays kept
    if lost and not env.life_loss_terminal_in_training:
        if ended:
            differ.append(
                f"{ended} of {lost} lost lives ended the episode, where {spec.name} ends it at "
                "game over only"
            )
        else:
            kept.append(f"none of {lost} lost lives ended the episode, as declared")
    elif lost and 0 < ended < lost:
        differ.append(
            f"{ended} of {lost} lost lives ended the episode, where {spec.name}'s training env "
            "ends it at each and its evaluation env at none"
        )
    elif lost and not ended:
        kept.append(
            f"none of {lost} lost lives ended the episode, as {spec.name}'s evaluation env does"
        )
    elif lost and not after.get("restarted"):
        went_on = " and the game went on" if after.get("continued") else ""
        kept.append(
            f"{ended} of {lost} lost lives ended the episode{went_on}, as {spec.name}'s "
            "training env does"
        )
    if env.life_loss_terminal_in_training and ended and after.get("restarted"):
        differ.append(
            f"the reset after {after['restarted']} of {ended} lost lives restarted the game, "
            f"where {spec.name}'s training env goes on with it"
        )
    if value["lives_in_info"] and not env.life_information:
        differ.append(f"info carries 'lives', which {spec.name} withholds")
    if differ:
        unseen = "" if lost else "; no life was lost, so the rest of the rule was not seen"
        return "differs", "; ".join(differ) + (f" ({'; '.join(kept)})" if kept else "") + unseen
    if not lost:
        return "unverified", "no life was lost"
    return "ok", ""


def _no_ops(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    least, most = env.noop_starts or (0, 0)
    options = value["options"]
    outside = [o for o in options if not any(least <= n <= most for n in o)]
    if outside:
        played = sorted({n for o in outside for n in o})
        shown = (
            frames_text(played[0]) if len(played) == 1 else f"{played[0]}-{frames_text(played[-1])}"
        )
        return "differs", f"{len(outside)} of {len(options)} new games began with {shown} of NOOP"
    if not all(least <= n <= most for o in options for n in o):
        return "unverified", "a FIRE the game ignores may stand for a NOOP"
    if least < most and len(options) >= 3 and not value["drawn"]:
        return "differs", f"every reset played {options[0][0]} NOOP frames: not drawn"
    return "ok", ""


def _fire(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    if value["present"]:
        return "differs", f"resets pressed {', '.join(value['actions'])}"
    if value["undetermined"]:
        return "unverified", "a FIRE at reset changes nothing in this game"
    return "ok", ""


def _reward(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    if value == "raw":
        return "ok", ""
    if value == "raw or clipped":
        return "unverified", "the game's rewards were all within -1..1"
    return "differs", f"the reward is {value}, not the game's score"


def _explained(frame: int, stretch: int, env: AtariSettings) -> str | None:
    skip = env.frameskip
    if env.max_episode_frames is not None and 0 <= frame - env.max_episode_frames < skip:
        return "cap"
    if env.max_stuck_frames is not None and 0 <= stretch - env.max_stuck_frames < skip:
        return "stuck"
    return None


def _cap(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    cap, truncations = env.max_episode_frames, value["truncations"]
    reasons = [_explained(f, s, env) for f, s in truncations]
    for (frame, stretch), reason in zip(truncations, reasons, strict=True):
        if reason is None:
            return "differs", f"truncated at frame {frame:,} ({stretch:,} after a reward)"
    if "cap" in reasons:
        return "ok", ""
    if cap is not None and value["longest_game"] >= cap + env.frameskip:
        return "differs", f"a game ran {value['longest_game']:,} frames uncut"
    return "unverified", f"no game reached {cap:,} frames" if cap else "no truncation seen"


def _stuck(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    limit = env.max_stuck_frames
    if limit is None:
        return "n/a", ""
    if any(_explained(f, s, env) == "stuck" for f, s in value["truncations"]):
        return "ok", ""
    if value["longest_stretch"] >= limit + env.frameskip:
        return "differs", f"{value['longest_stretch']:,} frames went without reward, uncut"
    return "unverified", f"no stretch without reward reached {limit:,} frames"


def _rollover(env: AtariSettings, spec: Spec, value: Any, game: str) -> tuple[str, str]:
    if env.rollover_threshold is None:
        return "n/a", ""
    return "unverified", "no score-counter rollover was played"


_JUDGES: dict[str, Judge] = {
    "frame skip": _frame_skip,
    "sticky actions": _sticky,
    "action set": _action_set,
    "life information": _life,
    "no-op starts": _no_ops,
    "fire on reset": _fire,
    "reward": _reward,
    "episode cap": _cap,
    "stuck time": _stuck,
    "rollover guard": _rollover,
}
_NONE_DECLARED = {"fire on reset": "none", "reward": "the game's score"}


def match_spec(spec: Spec, properties: Sequence[Property], game: str) -> SpecMatch:
    """Judge the measured ``properties`` of ``game`` against an Atari ``spec``."""
    env = spec.environment
    if not isinstance(env, AtariSettings):
        raise TypeError(f"{spec.name} is not an Atari spec")
    rules = {**environment_rules(spec), **_NONE_DECLARED}
    measured = {p.name: p.value for p in properties}
    verdicts = {}
    for name in JUDGED:
        if measured[name] is None and name != "rollover guard":  # a rollover is never played
            status, note = "unverified", "no rewarded step" if name == "reward" else "not measured"
        else:
            status, note = _JUDGES[name](env, spec, measured[name], game)
        verdicts[name] = Verdict(status, rules[name], note)
    phase = None
    life = measured["life information"]
    if env.life_loss_terminal_in_training and verdicts["life information"].status == "ok":
        phase = "training" if life["ended"] else "evaluation"
    return SpecMatch(spec, verdicts, phase)


def closest(matches: Sequence[SpecMatch]) -> list[SpecMatch]:
    """The specs the env comes closest to, all tied ones in the given order.

    Fewest differences that change scores first, then fewest differences, then fewest
    unverified rules.
    """

    def rank(m: SpecMatch) -> tuple[int, int, int]:
        return len(m.score_changing), len(m.differs), len(m.unverified)

    best = min(rank(m) for m in matches)
    return [m for m in matches if rank(m) == best]
