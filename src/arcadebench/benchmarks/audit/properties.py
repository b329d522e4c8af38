"""From the plays' records to the protocol an env runs: one measured property per rule.

Every property is computed from the :mod:`.facts` the plays recorded (never from the env's
settings), with the evidence that shows it:

- **frame skip**: emulator frames per agent step (the episode's last step may stop early);
- **sticky actions**: the probability that a frame executes the previous action instead of the
  agent's (Machado et al. 2018, Section 5.2), measured in the emulator by the conformance
  check's probe or against the reference emulator, and before the emulator from the actions
  that reached it (a wrapper's sticky rule, e.g. stable-baselines3's ``StickyActionEnv``);
  decisions that keep a whole agent step (Gymnasium's ``StickyAction``) are told apart;
- **action set**: which ALE actions the agent's actions reached, against the ROM's minimal and
  full (legal) sets (SABER Table 1: 18 actions);
- **life information**: lives in ``info``, whether a lost life ended the episode and whether
  the next reset went on with the game (DQN's training signal, Mnih et al. 2015) or restarted
  it;
- **no-op starts** and **fire on reset**: the frames a fresh reset played after ALE's own reset
  (DQN: up to 30 NOOPs; stable-baselines3's ``FireResetEnv``: FIRE);
- **reward**: the env's reward against the game's own score change (clipped to its sign, as
  DQN trains, Mnih et al. 2015; scaled; or raw);
- **episode cap** and **stuck time**: where an episode was truncated, in game frames and in
  frames without reward (SABER Table 1: 18,000), or how long a game ran without one;
- **rollover guard**: a score-counter wrap (SABER Appendix C) is too rare to be played;
- **observation** and **info**: what the agent sees and what ``info`` carries (a per-episode
  return, and whether it is the game's score: CleanRL #454, envpool #299).

Classes: Property. Functions: measure.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from ale_py import Action

from arcadebench._table import count
from arcadebench.benchmarks.audit.facts import Event, ResetFacts, StepFacts, action_id
from arcadebench.benchmarks.audit.sessions import Play
from arcadebench.benchmarks.conformance.sticky_probe import (
    GRID,
    MIN_INFORMATIVE,
    StickyEstimate,
    estimate_from_likelihood,
    reference_emulator,
)

__all__ = ["PROPERTIES", "Property", "frames_text", "measure"]

PROPERTIES = (
    "frame skip",
    "sticky actions",
    "action set",
    "life information",
    "no-op starts",
    "fire on reset",
    "reward",
    "episode cap",
    "stuck time",
    "rollover guard",
    "observation",
    "info",
)
"""The rows of an audit, in order."""
_NOOP = action_id(Action.NOOP)


@dataclass(frozen=True)
class Property:
    """One measured property.

    Attributes:
        name: one of :data:`PROPERTIES`.
        value: what was measured, JSON-able (``None``: not measured); judged by
            :mod:`.matching`.
        cell: the measurement in a few words, for the table.
        evidence: what was seen that shows it.
    """

    name: str
    value: Any
    cell: str
    evidence: str


def _name(action: int) -> str:
    return str(Action(action).name)


def _steps(plays: Sequence[Play], *names: str) -> list[StepFacts]:
    return [e for p in plays if p.name in names for e in p.events if isinstance(e, StepFacts)]


def _histories(plays: Sequence[Play]) -> list[list[Event]]:
    """The events of each env played, in order: the plays' shared env, then each new env."""
    shared: list[Event] = []
    others: list[list[Event]] = []
    for play in plays:
        cut = len(play.events) - play.foreign
        shared += play.events[:cut]
        others += [[event] for event in play.events[cut:]]  # one reset of a new env each
    return [shared, *others]


def _episodes(events: Sequence[Event]) -> Iterator[tuple[ResetFacts | None, list[StepFacts]]]:
    """Each episode of an env's history: its reset and its steps."""
    reset: ResetFacts | None = None
    steps: list[StepFacts] = []
    for event in events:
        if isinstance(event, ResetFacts):
            if reset is not None or steps:
                yield reset, steps
            reset, steps = event, []
        else:
            steps.append(event)
    if reset is not None or steps:
        yield reset, steps


def frames_text(n: int) -> str:
    """``"1 frame"``, ``"4 frames"``.

    Example:
        >>> frames_text(1), frames_text(4)
        ('1 frame', '4 frames')
    """
    return f"{n:,} frame" if n == 1 else f"{n:,} frames"


def _interval(estimate: StickyEstimate) -> str:
    return f"{estimate.low:.2f}-{estimate.high:.2f} within 4 standard errors"


def _range(values: Sequence[int]) -> str:
    low, high = min(values), max(values)
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def _frame_skip(plays: Sequence[Play], how: str) -> Property:
    frames = [s.frames for s in _steps(plays, "random") if not s.ended and s.frames is not None]
    if not frames:
        return Property("frame skip", None, "not measured", "no step's frames were seen")
    seen = Counter(frames)
    common, n = seen.most_common(1)[0]
    evidence = f"{n:,} of {len(frames):,} steps advanced {how} {frames_text(common)}"
    if len(seen) > 1:
        evidence += ", the others " + ", ".join(
            f"{f} ({m:,})" for f, m in sorted(seen.items()) if f != common
        )
    return Property("frame skip", sorted(seen), _range(sorted(seen)), evidence)


def _mapping(plays: Sequence[Play]) -> dict[int, int]:
    """Each agent action's ALE action: the one its steps' last frames played most often."""
    votes: dict[int, Counter[int]] = {}
    for step in _steps(plays, "random"):
        if step.played:
            votes.setdefault(step.action, Counter())[step.played[-1]] += 1
    return {a: c.most_common(1)[0][0] for a, c in votes.items()}


def _action_set(plays: Sequence[Play], mapping: dict[int, int], game: str, n: int) -> Property:
    ale, _ = reference_emulator(game)
    minimal = [action_id(a) for a in ale.getMinimalActionSet()]
    legal = [action_id(a) for a in ale.getLegalActionSet()]
    reached = [mapping[a] for a in sorted(mapping)]
    names = ", ".join(_name(a) for a in reached)
    is_full = n == len(legal) and set(reached) <= set(legal)
    is_minimal = n == len(minimal) and set(reached) <= set(minimal)
    kind = "full" if is_full else "minimal" if is_minimal else "other"
    cell = {"full": f"{n}: the full set", "minimal": f"{n}: the game's minimal set"}.get(
        kind, f"{n} actions"
    )
    evidence = (
        f"the agent's {n} actions reached the emulator as {names}; the ROM's minimal set has "
        f"{len(minimal)}, its full set {len(legal)}"
    )
    if len(mapping) < n:
        evidence += f" ({n - len(mapping)} actions never played)"
    value = {
        "count": n,
        "set": kind,
        "full": is_full,
        "minimal": is_minimal,
        "actions": [_name(a) for a in reached],
    }
    return Property("action set", value, cell, evidence)


def _before_emulator(plays: Sequence[Play], mapping: dict[int, int]) -> dict[str, int]:
    """The previous action kept before the emulator: a wrapper's sticky rule.

    Counted on the random play's steps that changed action: frames kept and tried (per frame,
    the previous action is kept or the agent's taken), steps held back throughout and in part.
    """
    counts = dict.fromkeys(("kept", "tried", "changes", "whole", "partial"), 0)
    for play in plays:
        if play.name != "random" or play.measured != "emulator":
            continue
        for reset, steps in _episodes(play.events):
            previous = reset.played[0][-1] if reset and reset.played and reset.played[0] else _NOOP
            for step in steps:
                intended = mapping.get(step.action)
                if step.played and intended is not None and previous != intended and not step.ended:
                    lead = next(
                        (i for i, a in enumerate(step.played) if a != previous), len(step.played)
                    )
                    counts["kept"] += lead
                    counts["tried"] += lead + (lead < len(step.played))
                    counts["changes"] += 1
                    counts["whole"] += lead == len(step.played)
                    counts["partial"] += 0 < lead < len(step.played)
                if step.played:
                    previous = step.played[-1]
    return counts


def _binomial(kept: int, tried: int) -> StickyEstimate:
    """The per-frame probability of keeping the previous action: ``kept`` of ``tried`` frames."""
    loglik = np.zeros_like(GRID)
    with np.errstate(divide="ignore"):  # 0 log 0 is 0: no term for a count of 0
        if kept:
            loglik += kept * np.log(GRID)
        if tried > kept:
            loglik += (tried - kept) * np.log1p(-GRID)
    return estimate_from_likelihood(GRID, loglik, 0.0, tried, tried, 0)


def _sticky(plays: Sequence[Play], random: Play, mapping: dict[int, int]) -> Property:
    estimate, parts = random.sticky, []
    if random.measured == "reference":
        whole, partial = random.kept.get("whole", 0), random.kept.get("partial", 0)
        changes = random.sticky.informative if random.sticky else 0
        if estimate is not None and estimate.estimate is not None:
            parts.append(
                f"against a reference emulator: p = {estimate.estimate:.2f} "
                f"({_interval(estimate)}) from {estimate.informative:,} distinguishable steps"
            )
    else:
        counts = _before_emulator(plays, mapping)
        whole, partial, changes = counts["whole"], counts["partial"], counts["changes"]
        if estimate is not None and estimate.estimate is not None:
            parts.append(
                f"in the emulator: p = {estimate.estimate:.2f} ({_interval(estimate)}) from "
                f"{estimate.informative:,} distinguishable frames"
            )
        if counts["kept"]:
            parts.append(
                f"before it: {counts['kept']:,} of {counts['tried']:,} frames kept the previous "
                "action instead of the agent's"
            )
            estimate = _binomial(counts["kept"], counts["tried"])
        elif changes:
            parts.append(
                f"the agent's actions reached it unchanged ({changes:,} changes of action)"
            )
    per_step = whole >= 3 and partial == 0
    if per_step:
        parts.append(f"{whole} of {changes} changes of action held back a whole step, none in part")
    if estimate is None or estimate.estimate is None:
        return Property(
            "sticky actions", None, "not measured", "; ".join(parts) or "no frame compared"
        )
    value = {
        "estimate": estimate.estimate,
        "low": estimate.low,
        "high": estimate.high,
        "n": estimate.informative,
        "per_step": per_step,
        "whole_steps": whole,
        "partial_steps": partial,
    }
    if per_step:
        cell = f"per agent step, p = {whole / changes:.2f}"
    elif estimate.informative < MIN_INFORMATIVE:
        cell = f"p = {estimate.estimate:.2f}? (too few frames)"
    else:
        cell = f"p = {estimate.estimate:.2f} per frame"
    return Property("sticky actions", value, cell, "; ".join(parts))


def _life(plays: Sequence[Play]) -> Property:
    lives_shown = any("lives" in e.info for p in plays for e in p.events)
    lost = ended = went_on = 0
    after: Counter[str] = Counter()
    continuing: list[tuple[int, ...]] = []
    for history in _histories(plays):
        alive_end = False
        for event in history:
            if isinstance(event, ResetFacts):
                if alive_end:
                    kind = {True: "restarted", False: "continued", None: "unknown"}[event.fresh]
                    after[kind] += 1
                    if event.fresh is False and event.played and len(event.played) == 1:
                        continuing.append(event.played[0])
                alive_end = False
                continue
            alive = event.lost_life and not event.game_over
            if alive:
                lost += 1
                ended += event.terminated
                went_on += not event.ended
            alive_end = bool(event.terminated and event.game_over is False)
    value = {
        "lives_in_info": lives_shown,
        "lost": lost,
        "ended": ended,
        "went_on": went_on,
        "after": dict(after),
    }
    info = "info carries 'lives'" if lives_shown else "no 'lives' in info"
    shown = "; lives in info" if lives_shown else ""
    lives = "1 life" if lost == 1 else f"{lost} lives"
    if not lost:
        return Property(
            "life information",
            value,
            "lives in info" if lives_shown else "hidden",
            f"{info}; no life was lost in these plays",
        )
    if ended:
        cell = "a lost life ends the episode" + shown
        evidence = f"{lives} lost, {ended} ended the episode"
        if after:
            evidence += "; the next reset " + ", ".join(
                f"{kind} the game ({n})" for kind, n in sorted(after.items())
            )
        if continuing:
            evidence += f", playing {_played(continuing)}"
    else:
        cell = "game over only" + shown
        evidence = f"{lives} lost, the episode went on"
    return Property("life information", value, cell, f"{evidence}; {info}")


def _played(sequences: Sequence[tuple[int, ...]]) -> str:
    """What several resets played, with the range of each count where they drew it.

    Example:
        >>> _played([(0, 0, 1), (0, 1)])
        'NOOPx1-2, FIREx1 (2 resets, the counts drawn)'
        >>> _played([(0, 0, 1, 1), (0, 0, 1, 1)])
        'NOOPx2, FIREx2 each time (2 resets)'
        >>> _played([(1,), (0, 1)])
        'NOOPx0-1, FIREx1 (2 resets, the counts drawn)'
    """
    patterns = {tuple(a for a, _ in _runs(seq)) for seq in sequences}
    if len(patterns) == 1:  # the same actions in the same order: a count per run
        (pattern,) = patterns
        counts = [[n for _, n in _runs(seq)] for seq in sequences]
        ranges = [_range([c[i] for c in counts]) for i in range(len(pattern))]
    else:  # each action's count, in the order of the resets that played the most actions
        richest = sorted(sequences, key=lambda seq: -len(set(seq)))
        pattern = tuple(dict.fromkeys(a for seq in richest for a in seq))
        ranges = [_range([seq.count(a) for seq in sequences]) for a in pattern]
    text = ", ".join(f"{_name(a)}x{r}" for a, r in zip(pattern, ranges, strict=True)) or "nothing"
    if len(sequences) == 1:
        return text
    if len(set(sequences)) == 1:
        return f"{text} each time ({len(sequences)} resets)"
    return f"{text} ({len(sequences)} resets, the counts drawn)"


def _runs(frames: Sequence[int]) -> list[tuple[int, int]]:
    """Runs of equal actions: ``(action, length)``."""
    return [(action, len(list(run))) for action, run in itertools.groupby(frames)]


def _no_ops(plays: Sequence[Play], how: str) -> Property:
    events = [e for p in plays for e in p.events]
    resets = [e for e in events if isinstance(e, ResetFacts) and e.fresh and e.played is not None]
    if not resets:
        return Property("no-op starts", None, "not measured", "no reset of a new game was seen")
    options = [sorted({seq.count(_NOOP) for seq in r.played or ()}) for r in resets]
    low, high = min(o[0] for o in options), max(o[-1] for o in options)
    exact = [o[0] for o in options if len(o) == 1]
    drawn = len({tuple(o) for o in options}) > 1
    value = {"least": low, "most": high, "resets": len(resets), "drawn": drawn, "options": options}
    shown = ", ".join(_range(o) for o in options[:10]) + (", ..." if len(options) > 10 else "")
    if len({tuple(o) for o in options}) == 1:
        shown = f"each {_range(options[0])}"
    evidence = f"{count(len(resets), 'new game')}: {shown} NOOP frames after ALE's reset ({how})"
    if not high:
        return Property("no-op starts", value, "none", evidence)
    cell = f"{_range([low, high])} frame{'s' if high > 1 else ''}" + (", drawn" if drawn else "")
    if len(exact) < len(options):
        evidence += "; a range: a FIRE the game ignores may stand for a NOOP"
    return Property("no-op starts", value, cell, evidence)


def _fire(plays: Sequence[Play]) -> Property:
    resets = [e for p in plays for e in p.events if isinstance(e, ResetFacts) and e.played]
    present, absent, pressed = 0, 0, Counter[str]()
    for reset in resets:
        others = [tuple(a for a in seq if a != _NOOP) for seq in reset.played or ()]
        if all(others):
            present += 1
            pressed.update(f"{_name(a)}x{n}" for a, n in _runs(others[0]))
        elif not any(others):
            absent += 1
    undetermined = len(resets) - present - absent
    value = {
        "present": present,
        "absent": absent,
        "undetermined": undetermined,
        "actions": sorted(pressed),
    }
    if not resets:
        return Property("fire on reset", None, "not measured", "no reset was seen")
    evidence = (
        f"{count(len(resets), 'reset')}: {present} pressed other actions than NOOP, "
        f"{absent} did not"
    )
    if undetermined:
        evidence += f", {undetermined} undetermined (a FIRE the game ignores)"
    if present:
        return Property("fire on reset", value, ", ".join(sorted(pressed)), evidence)
    return Property("fire on reset", value, "undetermined" if undetermined else "none", evidence)


def _reward(plays: Sequence[Play]) -> Property:
    pairs = [
        (s.reward, s.raw_reward)
        for s in _steps(plays, "random", "noop")
        if s.raw_reward is not None and (s.reward or s.raw_reward)
    ]
    if not pairs:
        return Property("reward", None, "not measured", "no rewarded step was seen")
    env, raw = np.array(pairs).T
    big = float(np.abs(raw).max())
    evidence = f"{count(len(pairs), 'rewarded step')}, the game's rewards up to {big:g}"
    if np.array_equal(env, raw):
        if big > 1:
            return Property(
                "reward", "raw", "the game's score", evidence + ": the env's reward equalled them"
            )
        return Property(
            "reward",
            "raw or clipped",
            "equal to the game's, all within -1..1: clipping not observable",
            evidence + ": the env's reward equalled them, as it would clipped to -1..1 too",
        )
    if np.array_equal(env, np.sign(raw)):
        return Property(
            "reward", "clipped", "clipped to -1..1", evidence + ": the env gave their sign"
        )
    ratios = {round(float(e / r), 6) for e, r in zip(env, raw, strict=True) if r}
    if len(ratios) == 1 and not np.any((raw == 0) & (env != 0)):
        factor = ratios.pop()
        return Property("reward", f"scaled x{factor:g}", f"scaled x{factor:g}", evidence)
    example = next((e, r) for e, r in pairs if e != r)
    return Property(
        "reward", "other", "changed", evidence + f": e.g. {example[1]:g} became {example[0]:g}"
    )


def _limits(plays: Sequence[Play]) -> tuple[Property, Property]:
    """The truncations, in game frames and in frames without reward, and what ran uncut."""
    truncations: list[tuple[int, int]] = []
    longest = stretch = 0
    noop = _steps(plays, "noop")
    over_at = next((s.game_frame for s in noop if s.game_over and s.game_frame), None)
    for history in _histories(plays):
        last_reward = 0
        for reset, steps in _episodes(history):
            if reset is None or reset.fresh is not False:  # a new game
                last_reward = reset.game_frame if reset and reset.game_frame is not None else 0
            for step in steps:
                frame = step.game_frame
                if frame is None:
                    continue
                stretch = max(stretch, frame - last_reward)
                longest = max(longest, frame)
                if step.raw_reward if step.raw_reward is not None else step.reward:
                    last_reward = frame
                if step.truncated:
                    truncations.append((frame, frame - last_reward))
    value = {"truncations": truncations, "longest_game": longest, "longest_stretch": stretch}
    if truncations:
        cap = Property(
            "episode cap",
            value,
            f"truncated at frame {truncations[0][0]:,}",
            "; ".join(
                f"truncated at game frame {f:,}, {g:,} frames after a reward"
                for f, g in truncations[:3]
            ),
        )
        stuck = Property(
            "stuck time", value, f"{truncations[0][1]:,} frames without reward", cap.evidence
        )
        return cap, stuck
    ended = f"the NOOP game ended by game over at frame {over_at:,}" if over_at else "no truncation"
    cap = Property(
        "episode cap", value, "none seen", f"{ended}; the longest game ran {longest:,} frames"
    )
    stuck = Property(
        "stuck time",
        value,
        "none seen",
        f"the longest stretch without reward was {stretch:,} frames",
    )
    return cap, stuck


def _rollover() -> Property:
    """A score-counter rollover: too rare to be played, so never seen.

    A six-digit counter wraps near 1,000,000 points (SABER Appendix C); no short play reaches
    it (``arcadebench check`` verifies arcadebench's guard).
    """
    return Property("rollover guard", None, "not seen", "no score-counter rollover in these plays")


def _observation(study: dict[str, Any]) -> Property:
    shape = "x".join(map(str, study.get("shape", []))) or "?"
    cell = f"{shape} {study.get('dtype', '')}".strip()
    parts = []
    if study.get("stack", 1) > 1:
        parts.append(f"a stack of {study['stack']} frames (axis {study['stack_axis']})")
    if study.get("processing"):
        parts.append(study["processing"])
    parts.append(study.get("how", "the processing was not reproduced"))
    return Property("observation", study, cell, "; ".join(parts))


def _info(plays: Sequence[Play]) -> Property:
    keys = dict.fromkeys(key for play in plays for event in play.events for key in event.info)
    groups: dict[str, list[str]] = {}
    for key in keys:
        head, _, tail = key.partition(".")
        groups.setdefault(head, []).append(tail)
    shown = ", ".join(
        head if tails == [""] else f"{head} {{{', '.join(t for t in tails if t)}}}"
        for head, tails in groups.items()
    )
    returns, doubtful = _episode_returns(plays)
    rewards = _step_rewards(plays, keys)
    evidence = "; ".join(filter(None, [returns or "no per-episode return", *doubtful, rewards]))
    value = {"keys": list(keys), "returns": returns, "rewards": rewards}
    return Property("info", value, shown or "nothing", evidence)


def _numbers(info: Mapping[str, Any]) -> dict[str, float]:
    """The numeric entries of a flattened ``info`` (flags, counters and lives aside)."""
    return {
        key: float(value)
        for key, value in info.items()
        if isinstance(value, int | float)
        and not isinstance(value, bool)
        and not key.endswith((".l", ".t", "frame_number", "lives", "env_id", "elapsed_step"))
    }


_TRIVIAL = (0.0, 1.0)
"""Values a flag, a counter of one or an empty sum take whatever the game did: a field that
equals a score only where the score is one of them could equal it by coincidence."""


def _step_rewards(plays: Sequence[Play], keys: Iterable[str]) -> str:
    """The ``info`` keys that carry the game's own reward of every step (envpool's ``reward``).

    A key counts only if it equalled the game's reward on every rewarded step and on one whose
    reward no flag could have matched (neither 0 nor 1).
    """
    rewarded = [s for s in _steps(plays, "random", "noop") if s.raw_reward]
    telling = [s for s in rewarded if s.raw_reward not in _TRIVIAL]
    if not telling:
        return ""
    found = [
        key for key in keys if all(_numbers(s.info).get(key) == s.raw_reward for s in rewarded)
    ]
    return "; ".join(f"info['{key}'] = the game's reward each step" for key in found)


class _End(NamedTuple):
    """An episode end as a test of an ``info`` field.

    The game's score and the env's return there, and whether each could be told apart from
    what a flag or the step's own reward would show.
    """

    game: float
    episode: float
    tells_game: bool
    tells_episode: bool


def _episode_returns(plays: Sequence[Play]) -> tuple[str, list[str]]:
    """Which ``info`` key carries a per-episode return, and whether it is the game's score.

    Returns ``(what was found, the keys that matched only by coincidence)``.

    Every episode end where a key is present is a test (``value`` against the game's score and
    the env's return since the reset), and a key is said to carry one only if it passed every
    test and one where it could have failed: where the score was no value a flag, the step's
    reward or a counter of one would also give (:data:`_TRIVIAL`). A key that matched only
    where it could not have differed (envpool's ``terminated``, 1, at a score of 1) is named as
    such, not taken for a return.
    """
    ends: dict[str, list[tuple[float, _End]]] = {}
    for history in _histories(plays):
        game = episode = 0.0
        known = True  # every step of the game so far had its raw reward
        for event in history:
            if isinstance(event, ResetFacts):
                if event.fresh is not False:
                    game, known = 0.0, True
                episode = 0.0
                continue
            known = known and event.raw_reward is not None
            game += event.raw_reward or 0.0
            episode += event.reward
            if not event.ended or not known:
                continue
            either = {event.reward, event.raw_reward or 0.0, *_TRIVIAL}  # what a flag could be
            end = _End(game, episode, game not in either, episode not in either | {game})
            for key, value in _numbers(event.info).items():
                ends.setdefault(key, []).append((value, end))
    found: list[str] = []
    doubtful: list[str] = []
    for key, tests in ends.items():
        if all(value == end.game for value, end in tests):
            if any(end.tells_game for _, end in tests):
                same = all(end.game == end.episode for _, end in tests)
                found.append(f"info['{key}'] = the game's score" + " (= the return)" * same)
            elif any(end.game for _, end in tests):
                shown = ", ".join(f"{g:g}" for g in sorted({end.game for _, end in tests}))
                doubtful.append(
                    f"info['{key}'] equalled the game's score ({shown}) only where a flag or the "
                    "step's reward would too: not taken for it"
                )
        elif all(value == end.episode for value, end in tests) and any(
            end.tells_episode for _, end in tests
        ):
            found.append(f"info['{key}'] = the env's return")
    return "; ".join(found), doubtful


def measure(plays: Sequence[Play], game: str, actions: int) -> list[Property]:
    """Every property of :data:`PROPERTIES`, measured from ``plays`` of ``game``."""
    random = next(p for p in plays if p.name == "random")
    how = {"emulator": "the emulator", "reference": "the reference emulator"}[random.measured]
    mapping = _mapping(plays)
    cap, stuck = _limits(plays)
    return [
        _frame_skip(plays, how),
        _sticky(plays, random, mapping),
        _action_set(plays, mapping, game, actions),
        _life(plays),
        _no_ops(plays, how),
        _fire(plays),
        _reward(plays),
        cap,
        stuck,
        _rollover(),
        _observation(random.observation),
        _info(plays),
    ]
