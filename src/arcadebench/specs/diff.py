"""Two protocols side by side: every setting and rule, and which of their differences change scores.

Papers report Atari results under different protocols (sticky actions or not, 5 or 30 minute
episodes, a life-loss signal, no-op starts, scores from training or from an evaluation after it,
human baselines from 5 or 30 minute episodes), and numbers obtained under two of them cannot be
ranked together. :func:`diff` says where two :class:`~arcadebench.specs.model.Spec` objects
differ, marks each difference by whether it changes scores (or only what is reported) and cites
the evidence. It is a pure function of the two specs: ``arcadebench diff A B`` prints it, and the
scorer and the report use it where results of two protocols meet.

The evidence is data, kept in one place (:data:`EVIDENCE`): a short citation per setting of
where the literature measured or argued that the setting changes scores. It belongs to no one
spec, so it is not in a spec's YAML.

Classes: Row, SpecDiff. Functions: diff, environment_rules. Data: EVIDENCE, SCORE_CHANGING.

Example:
    >>> from arcadebench.specs import load_spec
    >>> d = diff(load_spec("saber"), load_spec("atari100k"))
    >>> row = d.row("sticky actions")
    >>> row.a, row.b, row.changes_scores
    ('p = 0.25', 'none', True)
    >>> d.comparable
    False
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from arcadebench._table import render_table
from arcadebench.errors import InvalidArgument
from arcadebench.specs.card import clipping, default_selection, frames_to_time
from arcadebench.specs.model import AtariSettings, GameConstants, RetroSettings, Spec
from arcadebench.specs.statistics import STATISTICS

__all__ = ["EVIDENCE", "SCORE_CHANGING", "Row", "SpecDiff", "diff", "environment_rules"]

Section = Literal["environment", "scoring", "evaluation", "games"]

# The evidence (EVIDENCE, below) of each setting whose difference changes scores...
_CHANGES_SCORES = {
    "platform": "another emulator, other games: no score carries over",
    "frame skip": (
        "Braylan et al. 2015, 'Frame Skip Is a Powerful Parameter for Learning to Play "
        "Atari' (AAAI workshop): a strong determinant of success in all six games tried"
    ),
    "sticky actions": (
        "Machado et al. 2018 Section 5.2; SABER Section 2.1 and Table 2 (with the full action "
        "set and no life signal, Rainbow's median falls from 4.20 % to 2.61 %)"
    ),
    "action set": (
        "SABER Section 2.1 and Table 2 (measured together with sticky actions and the life "
        "signal); Machado et al. 2018"
    ),
    "life information": (
        "SABER Section 2.1 (ending training episodes on a lost life is 'an unfair "
        "comparison') and Section 3.1 (same conditions in training and test); Machado et al. "
        "2018"
    ),
    "no-op starts": (
        "Machado et al. 2018 Section 5.3 (alternative forms of stochasticity); Mnih et al. "
        "2015 Methods and Extended Data Table 1 (up to 30 'do nothing' actions at the start "
        "of an episode)"
    ),
    "episode cap": (
        "SABER Section 2.2 (a score can be 6 times higher at 30 than at 5 minutes) and "
        "Table 3 (Rainbow's median 2.35 % at 5 min, 2.61 % at 30 min, 2.83 % without limit)"
    ),
    "stuck time": "SABER Section 2.2 (5 minutes without reward end an uncapped episode)",
    "rollover guard": (
        "SABER Section 2.2 and Appendix C (a score-counter rollover reads as a sudden "
        "negative reward)"
    ),
    "episode end": "Nichol et al. 2018 Section 3.5 (what ends an episode)",
    "reward": "Nichol et al. 2018 Section 3.8 (the contest reward)",
    "observation": "Nichol et al. 2018 Section 3.6 (what the agent sees)",
    "normalisation": (
        "SABER Section 2.3 (world records instead of the beginner human baseline) and "
        "Section 3.2 (capped at 200 %)"
    ),
    "random scores": (
        "a normalised score is 100 (x - random) / |reference - random|: other constants, "
        "another score for the same play"
    ),
    "human scores": (
        "google-deepmind/dqn_zoo issue #28: Nature's human scores come from 5-minute "
        "episodes, later papers' (Agent57, Atari-5 Table 12) from 30-minute ones"
    ),
    "world records": (
        "SABER Section 2.3: the record is the reference of HWRNS and the SABER score; another "
        "record, another score"
    ),
    "optimality gap threshold": "Agarwal et al. 2021: the gap is measured below it",
    "scored phase": (
        "Machado et al. 2018 Section 4.2 (report performance during training); SABER Section "
        "2.1 (reporting the score of the best policy biases it)"
    ),
    "episode aggregate": (
        "Machado et al. 2018 Section 4.2; SABER Section 3.2 (the mean of 100 consecutive "
        "training episodes)"
    ),
    "evaluation policy": (
        "Agarwal et al. 2021: DrQ evaluated at epsilon 0.05 and the same agent at 0.001, "
        "DrQ(eps), score differently"
    ),
    "budget": (
        "SABER Section 3.2 (scores compared at 10M, 50M, 100M and 200M frames); Kaiser et al. "
        "2020 (Atari 100k: 400,000 frames)"
    ),
    "games": "an aggregate over other games is another statistic",
}
# ... and of each whose difference changes only what is reported.
_REPORTING_ONLY = {
    "default selection": "what `arcadebench run` plays by default; scores cover those given",
    "checkpoints": "more intermediate scores; the final one is unchanged",
    "evaluation episodes": "more episodes, a tighter estimate of the same expected return",
    "aggregates": "other statistics of the same per-game scores",
    "classes": "a histogram of the same per-game scores",
    "breakthroughs": "a count over the same per-game scores",
    "subset estimates": "estimates from the same per-game scores",
    "learning efficiency": "the same aggregates divided by the training frames",
}

#: Settings whose difference changes the scores a protocol gives the same agent, through its raw
#: returns (the environment, the episodes scored, the training budget) or their normalisation. The
#: others change only what is reported (more statistics, more checkpoints, a tighter estimate).
SCORE_CHANGING: frozenset[str] = frozenset(_CHANGES_SCORES)

#: Per setting, where the literature shows (or argues) what a difference in it does to scores.
EVIDENCE: Mapping[str, str] = MappingProxyType({**_CHANGES_SCORES, **_REPORTING_ONLY})

NONE = "none"
ABSENT = "not reported"
NOT_APPLICABLE = "\u2014"


@dataclass(frozen=True)
class Row:
    """One setting of both protocols.

    Attributes:
        section: ``environment``, ``scoring``, ``evaluation`` or ``games``.
        setting: its name (the key of :data:`EVIDENCE`).
        a: the setting under the first protocol, as text.
        b: the setting under the second.
        differs: whether the two differ.
        changes_scores: whether that difference changes scores (``False`` when they agree).
        evidence: where the literature shows what such a difference does (``""`` when they agree).
        detail: what the row is about where the setting has several rows or a count: the
            normalised score (``HNS``), in how many shared games the constants differ, how many
            games the protocols share.
    """

    section: Section
    setting: str
    a: str
    b: str
    differs: bool
    changes_scores: bool
    evidence: str
    detail: str = ""

    @property
    def status(self) -> str:
        """``changes scores``, ``reporting only`` or ``""`` (the same)."""
        if not self.differs:
            return ""
        return "changes scores" if self.changes_scores else "reporting only"

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready values."""
        keys = ("section", "setting", "a", "b", "detail", "differs", "changes_scores", "evidence")
        return {key: getattr(self, key) for key in keys}


@dataclass(frozen=True)
class SpecDiff:
    """The settings and reporting rules of two protocols side by side (see :func:`diff`)."""

    a: Spec
    b: Spec
    rows: tuple[Row, ...]

    @property
    def differences(self) -> tuple[Row, ...]:
        """The rows where the protocols differ."""
        return tuple(r for r in self.rows if r.differs)

    @property
    def score_changing(self) -> tuple[Row, ...]:
        """The differences that change scores."""
        return tuple(r for r in self.rows if r.changes_scores)

    @property
    def identical(self) -> bool:
        """No setting or rule differs."""
        return not self.differences

    @property
    def comparable(self) -> bool:
        """Scores under one can be set beside scores under the other; no difference changes them."""
        return not self.score_changing

    def row(self, setting: str) -> Row:
        """The (first) row of ``setting``, e.g. ``"sticky actions"``.

        Raises:
            InvalidArgument: no row has that name.
        """
        for row in self.rows:
            if row.setting == setting:
                return row
        names = ", ".join(dict.fromkeys(r.setting for r in self.rows))
        raise InvalidArgument(f"`setting` must be one of {names}, got {setting!r}")

    def summary(self) -> str:
        """One line: the two protocols and what their differences mean for their scores."""
        head = f"{_label(self.a)} vs {_label(self.b)}: "
        if self.identical and self.a.hash == self.b.hash:
            return head + "the same protocol"
        if self.identical:  # e.g. a published table or a note was added
            return head + "no setting or rule differs (the spec files differ elsewhere)"
        n, changing = len(self.differences), len(self.score_changing)
        if not changing:
            return head + f"{n} of {len(self.rows)} settings differ, in reporting only"
        return head + (
            f"{n} of {len(self.rows)} settings differ, {changing} of them change scores: "
            "not comparable"
        )

    def table(self) -> str:
        """The plain-text table, then the evidence of every difference as numbered notes."""
        notes: dict[str, int] = {}
        cells = []
        previous = ""
        for row in self.rows:
            status = row.status
            if row.differs and row.evidence:
                number = notes.setdefault(row.evidence, len(notes) + 1)
                status += f" [{number}]"
            setting = f"{row.setting} ({row.detail})" if row.detail else row.setting
            section = row.section if row.section != previous else ""
            previous = row.section
            cells.append([section, setting, row.a, row.b, status])
        text = render_table(
            ["", "setting", _label(self.a), _label(self.b), "difference"],
            cells,
            title=self.summary(),
        )
        if notes:
            text += "\n\nEvidence:\n" + "\n".join(f"[{n}] {e}" for e, n in notes.items())
        return text

    def to_dict(self) -> dict[str, Any]:
        """The diff as JSON-ready values (``arcadebench diff --json``)."""
        return {
            "a": self.a.identity,
            "b": self.b.identity,
            "identical": self.identical,
            "comparable": self.comparable,
            "differences": len(self.differences),
            "score_changing": len(self.score_changing),
            "rows": [r.to_dict() for r in self.rows],
        }


def _short(text: str) -> str:
    """``text`` without a trailing parenthesised citation, for a table cell.

    Example:
        >>> _short("epsilon-greedy, epsilon 0.05 (Methods; train_agent.lua:117)")
        'epsilon-greedy, epsilon 0.05'
    """
    return re.sub(r"\s*\([^()]*\)$", "", text) or text


def _label(spec: Spec) -> str:
    return f"{spec.name} v{spec.version}"


# -- the values of one protocol, as (comparable key, text) per setting ----------------------------

Value = tuple[object, str]


def _frames(frames: int | None) -> Value:
    if not frames:
        return None, NONE
    return frames, f"{frames:,} frames ({frames_to_time(frames)})"


def _atari(env: AtariSettings) -> dict[str, Value]:
    sticky = env.repeat_action_probability
    if env.life_information:
        life = "in info"
    elif env.life_loss_terminal_in_training:
        life = "lost life ends training episodes"
    else:
        life = "none: game over only"
    noops = env.noop_starts
    rollover = (
        (env.rollover_threshold, env.rollover_correction),
        f"a reward < {env.rollover_threshold:,.0f} gets {env.rollover_correction:,.0f} back"
        if env.rollover_threshold is not None and env.rollover_correction is not None
        else NONE,
    )
    stuck = _frames(env.max_stuck_frames)
    return {
        "frame skip": (env.frameskip, f"{env.frameskip} frames a step"),
        "sticky actions": (sticky, f"p = {sticky:g}" if sticky else NONE),
        "action set": (
            env.full_action_space,
            "full, 18 actions" if env.full_action_space else "minimal (game-specific)",
        ),
        "life information": ((env.life_information, env.life_loss_terminal_in_training), life),
        "no-op starts": (
            noops,
            f"{noops[0]} to {noops[1]} frames after a reset" if noops else NONE,
        ),
        "episode cap": _frames(env.max_episode_frames),
        "stuck time": (stuck[0], f"{stuck[1]} without reward" if stuck[0] else NONE),
        "rollover guard": rollover,
    }


def _retro(env: RetroSettings, spec: Spec) -> dict[str, Value]:
    actions = spec.action_sets.get(env.action_set)
    reward = (env.progress_scale, env.completion_bonus, env.bonus_horizon_frames)
    ends = (env.end_on_life_loss, env.end_on_level_complete)
    return {
        "frame skip": (env.frameskip, f"{env.frameskip} frames a step"),
        "sticky actions": (
            ("retro", env.sticky_probability),
            f"p = {env.sticky_probability:g}, first frame of a step",
        ),
        "action set": (
            (env.action_set, actions),
            f"{env.action_set} ({len(actions)} actions)" if actions else env.action_set,
        ),
        "life information": (
            env.end_on_life_loss,
            "a lost life ends the episode"
            if env.end_on_life_loss
            else "episodes go on after a lost life",
        ),
        "episode cap": (
            ("timesteps", env.max_episode_timesteps),
            f"{env.max_episode_timesteps:,} timesteps",
        ),
        "episode end": (ends, "level complete" if env.end_on_level_complete else "game over"),
        "reward": (
            reward,
            f"{env.progress_scale:g} x progress + bonus up to {env.completion_bonus:g}",
        ),
        "observation": (env.observation_shape, "x".join(map(str, env.observation_shape))),
    }


def _environment(spec: Spec) -> dict[str, Value]:
    if isinstance(spec.environment, AtariSettings):
        return _atari(spec.environment)
    if isinstance(spec.environment, RetroSettings):
        return _retro(spec.environment, spec)
    return {}


def environment_rules(spec: Spec) -> dict[str, str]:
    """Each environment setting of ``spec`` in words, keyed as :func:`diff`'s rows are.

    ``arcadebench audit`` sets them beside what it measured.

    Example:
        >>> from arcadebench.specs import load_spec
        >>> environment_rules(load_spec("dqn2015"))["no-op starts"]
        '1 to 30 frames after a reset'
    """
    return {setting: text for setting, (_, text) in _environment(spec).items()}


def _normalisations(spec: Spec) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for norm in spec.scoring.normalised:
        text = f"to {norm.reference.replace('_', ' ')}{clipping(norm, 'floor', 'cap')}"
        out[norm.name] = ((norm.reference, norm.floor, norm.cap), text)
    return out


def _reporting(spec: Spec) -> dict[str, Value]:
    scoring = spec.scoring
    subsets = ", ".join(spec.subsets)
    weights = tuple((s.name, s.games, s.coefficients) for s in spec.subsets.values())
    arguments = {a for s in scoring.aggregates if s in STATISTICS for a in STATISTICS[s].arguments}
    gap = "optimality_gap_threshold" in arguments and bool(scoring.normalised)
    return {
        "aggregates": (scoring.aggregates, ", ".join(scoring.aggregates) or NONE),
        "optimality gap threshold": (
            scoring.optimality_gap_threshold if gap else None,
            f"{scoring.optimality_gap_threshold:g} %" if gap else NONE,
        ),
        "classes": (
            (scoring.classes_of, scoring.classes),
            f"{len(scoring.classes)} of {str(scoring.classes_of).upper()}"
            if scoring.classes
            else NONE,
        ),
        "breakthroughs": (
            scoring.breakthrough,
            f"{scoring.breakthrough.of.upper()} >= {scoring.breakthrough.threshold:g} %"
            if scoring.breakthrough
            else NONE,
        ),
        "subset estimates": ((weights, scoring.log_transform), subsets or NONE),
        "learning efficiency": (
            scoring.learning_efficiency,
            "aggregates per training frame" if scoring.learning_efficiency else NONE,
        ),
    }


def _budget(spec: Spec) -> Value:
    evaluation = spec.evaluation
    frameskip = spec.environment.frameskip if spec.environment is not None else None
    frames = evaluation.budget_frames
    if frames is None and evaluation.budget_steps is not None and spec.platform == "atari":
        frames = evaluation.budget_steps * (frameskip or 1)
    if evaluation.budget_steps is not None:
        unit = "timesteps a level" if spec.platform == "retro" else "agent steps"
        text = f"{evaluation.budget_steps:,} {unit}"
        if spec.platform == "atari":
            text += f" ({frames:,} frames)"
    elif frames is not None:
        text = f"{frames:,} frames"
    else:
        text = "unlimited"
    return (frames, evaluation.budget_steps if spec.platform == "retro" else None), text


def _evaluation(spec: Spec) -> dict[str, Value]:
    evaluation = spec.evaluation
    after = evaluation.scored == "after_training"
    if evaluation.episode_aggregate == "last_k":
        aggregate = f"mean of the last {evaluation.k} episodes"
    else:
        aggregate = "mean of all complete episodes"
    checkpoints = evaluation.checkpoints if evaluation.episode_aggregate == "last_k" else ()
    return {
        "scored phase": (
            evaluation.scored,
            "evaluation episodes after training" if after else "training episodes",
        ),
        "episode aggregate": ((evaluation.episode_aggregate, evaluation.k), aggregate),
        "checkpoints": (
            checkpoints,
            ", ".join(f"{c / 1e6:g}M" for c in checkpoints) + " frames" if checkpoints else NONE,
        ),
        "budget": _budget(spec),
        "evaluation episodes": (
            evaluation.episodes if after else None,
            f"{evaluation.episodes}" if after and evaluation.episodes else NOT_APPLICABLE,
        ),
        "evaluation policy": (
            evaluation.policy if after else None,
            _short(evaluation.policy or "the agent's") if after else NOT_APPLICABLE,
        ),
    }


# -- rows ----------------------------------------------------------------------------------------


def _row(
    section: Section,
    setting: str,
    a: Value,
    b: Value,
    changes: bool | None = None,
    detail: str = "",
) -> Row:
    differs = a[0] != b[0]
    changes_scores = differs and (setting in SCORE_CHANGING if changes is None else changes)
    evidence = EVIDENCE.get(setting, "") if differs else ""
    return Row(section, setting, a[1], b[1], differs, changes_scores, evidence, detail)


def _paired(
    section: Section,
    a: Mapping[str, Value],
    b: Mapping[str, Value],
    absent: str,
    keep_absent: bool = True,
) -> list[Row]:
    """A row per setting of either protocol (``absent`` where one has no such setting)."""
    rows = []
    for setting in dict.fromkeys([*a, *b]):
        left, right = a.get(setting, (None, absent)), b.get(setting, (None, absent))
        shown = [value[1] not in (NONE, absent) for value in (left, right)]
        if keep_absent or any(shown):
            # a statistic only one protocol reports changes what is reported, not the scores
            changes = None if keep_absent or all(shown) else False
            rows.append(_row(section, setting, left, right, changes=changes))
    return rows


def _normalisation_rows(a: Spec, b: Spec) -> list[Row]:
    """A row per normalised score of either spec.

    A score both define differently changes scores; one that only one of them reports changes
    what is reported, not the scores they share.
    """
    left, right = _normalisations(a), _normalisations(b)
    rows = []
    for name in dict.fromkeys([*left, *right]):
        both = name in left and name in right
        one, two = left.get(name, (None, ABSENT)), right.get(name, (None, ABSENT))
        rows.append(_row("scoring", "normalisation", one, two, changes=both, detail=name.upper()))
    return rows


def _columns(spec: Spec) -> set[str]:
    """The constant columns a spec's normalised scores use."""
    used = {n.reference for n in spec.scoring.normalised}
    return used | {"random"} if used else used


def _format_number(value: float) -> str:
    return f"{value:,.10g}" if abs(value) >= 1000 else f"{value:.10g}"


def _constant_rows(a: Spec, b: Spec) -> list[Row]:
    """Per constant column both specs use: do the two tables agree, game by game?

    A normalised score is only comparable across protocols when its constants agree on every
    game both have (Nature's 5-minute human scores differ from the 30-minute ones in 34 of 49).
    """
    rows = []
    shared = _columns(a) & _columns(b)
    names = {"random": "random scores", "human": "human scores", "world_record": "world records"}
    for column, setting in names.items():
        if column not in shared:
            continue
        pairs: list[tuple[str, float, float]] = []
        for game, left in a.constants.items():
            right: GameConstants | None = b.constants.get(game)
            one = left.reference(column)
            two = right.reference(column) if right is not None else None
            if one is not None and two is not None:
                pairs.append((game, one, two))
        if not pairs:
            continue
        differing = [(g, x, y) for g, x, y in pairs if x != y]
        source_a = _short(a.constants_source or "constants")
        source_b = _short(b.constants_source or "constants")
        if not differing:
            same = f"the same in all {len(pairs)} games"
            rows.append(Row("scoring", setting, source_a, source_b, False, False, "", same))
            continue
        game, x, y = differing[0]  # in the first spec's order
        text_a, text_b = (
            f"{s}: {game} {_format_number(v)}" for s, v in ((source_a, x), (source_b, y))
        )
        detail = f"{len(differing)} of {len(pairs)} games differ"
        rows.append(Row("scoring", setting, text_a, text_b, True, True, EVIDENCE[setting], detail))
    return rows


def _games_rows(a: Spec, b: Spec) -> list[Row]:
    shared = len(set(a.games) & set(b.games))
    detail = f"{shared} shared" if set(a.games) != set(b.games) else ""
    one, two = ((frozenset(s.games), f"{len(s.games)}") for s in (a, b))
    games = _row("games", "games", one, two, detail=detail)

    def selection(spec: Spec) -> Value:
        chosen = default_selection(spec)
        if chosen is None:
            return spec.default_games, f"{len(spec.default_games)} games"
        return chosen, "all games" if chosen == "all" else chosen

    return [games, _row("games", "default selection", selection(a), selection(b))]


def diff(a: Spec, b: Spec) -> SpecDiff:
    """Compare two protocols setting by setting; mark what changes scores and cite why.

    Covers the environment (frame skip, sticky actions, action set, life information, no-op starts,
    episode cap, stuck time, rollover guard; the Sonic settings for retro specs), the scoring
    (each normalised score and, game by game, the constants it uses; the aggregates and other
    reported statistics), the evaluation (scored phase, episode aggregate, checkpoints, budget,
    evaluation episodes and policy) and the games.

    Args:
        a: the first protocol (``arcadebench.load_spec(name_or_path)``).
        b: the second.

    Returns:
        A :class:`SpecDiff`; ``diff(a, b).comparable`` is ``True`` when no difference changes
        scores, ``identical`` when none differs at all.

    Raises:
        InvalidArgument: ``a`` or ``b`` is not a :class:`~arcadebench.specs.model.Spec`.
    """
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, Spec):
            raise InvalidArgument(
                f"`{name}` must be a Spec (arcadebench.load_spec(name_or_path)), got {value!r}"
            )
    rows: list[Row] = []
    if a.platform != b.platform:
        rows.append(
            _row("environment", "platform", (a.platform, a.platform), (b.platform, b.platform))
        )
    rows += _paired("environment", _environment(a), _environment(b), NOT_APPLICABLE)
    rows += _normalisation_rows(a, b)
    rows += _constant_rows(a, b)
    rows += _paired("scoring", _reporting(a), _reporting(b), NONE, keep_absent=False)
    rows += _paired("evaluation", _evaluation(a), _evaluation(b), NOT_APPLICABLE)
    rows += _games_rows(a, b)
    return SpecDiff(a, b, tuple(rows))
