"""The typed, frozen form of a protocol spec: what `load_spec` returns.

Everything a paper defines lives in one of these dataclasses, filled from the YAML by
:mod:`arcadebench.specs.loader`; nothing downstream re-reads YAML. Mappings are read-only
(:class:`types.MappingProxyType`), so a loaded spec cannot drift from its content hash.

Classes: AtariSettings, RetroSettings, GameConstants, Subset, PredictionModels, Normalisation,
Scoring, Evaluation, RetroGame, Level, Published, PublishedScores, Spec.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from arcadebench.errors import UnknownGame, UnknownReference, did_you_mean
from arcadebench.specs.names import candidates, name_key

__all__ = [
    "DEFAULT_REFERENCES",
    "AtariSettings",
    "Breakthrough",
    "Evaluation",
    "GameConstants",
    "Level",
    "Normalisation",
    "PredictionModels",
    "Published",
    "PublishedScores",
    "RetroGame",
    "RetroSettings",
    "Scoring",
    "Spec",
    "Subset",
    "short_hash",
]

Platform = Literal["atari", "retro", "none"]
EpisodeAggregate = Literal["mean", "last_k"]
ScoredPhase = Literal["training", "after_training"]
Split = Literal["train", "test"]
EMPTY: Mapping[Any, Any] = MappingProxyType({})
DEFAULT_REFERENCES = 4
"""How many published references a table shows beside the results unless told which."""
_SOURCE_SUFFIX = re.compile(r"\s*\([^()]*\)\s*$")  # a reference's table: "MuZero (Table 3)"


def _empty() -> Mapping[Any, Any]:
    return EMPTY


def short_hash(digest: object, missing: str = "") -> str:
    """The first 12 hex digits of a ``sha256:`` content hash, as tables and messages show it.

    Example:
        >>> short_hash("sha256:90863c63e974" + "0" * 52), short_hash(None, missing="none")
        ('90863c63e974', 'none')
    """
    return str(digest).removeprefix("sha256:")[:12] if digest else missing


def _reference_key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


@dataclass(frozen=True)
class AtariSettings:
    """ALE settings of an Atari protocol; each maps to an ale-py kwarg or a wrapper.

    Attributes:
        frameskip: emulator frames per agent step (ale-py ``frameskip``).
        repeat_action_probability: per-frame sticky-action probability (Machado et al. 2018).
        full_action_space: use all 18 actions.
        life_information: whether life loss may be observed (``False``: ``lives`` is removed from
            ``info`` and episodes end on game over only).
        max_episode_frames: episode cap in emulator frames, a truncation (``None``: no cap).
        max_stuck_frames: truncate after this many frames without a non-zero reward (SABER).
        rollover_threshold: a reward below this is a wrap of the score counter (SABER).
        rollover_correction: added to such a reward to undo the wrap (the counter's modulus).
        noop_starts: ``(least, most)`` no-op frames played after every reset, their number
            drawn uniformly from the env's seeded generator (DQN's "up to 30 no-op actions",
            Mnih et al. 2015; ``None``: none). Raw emulator frames, as the code that produced
            the published figures played them (DeepMind's Lua ``GameEnvironment``, Dopamine).
        life_loss_terminal_in_training: a lost life ends the *learner's* episode in the training
            environment (``terminated``, end reason ``life_lost``) while the game goes on, as in
            DQN and the Atari 100k agents; evaluation episodes always run to game over.
    """

    frameskip: int
    repeat_action_probability: float
    full_action_space: bool
    life_information: bool
    max_episode_frames: int | None
    max_stuck_frames: int | None
    rollover_threshold: float | None
    rollover_correction: float | None
    noop_starts: tuple[int, int] | None = None
    life_loss_terminal_in_training: bool = False


@dataclass(frozen=True)
class RetroSettings:
    """stable-retro settings of the Sonic protocol (Nichol et al. 2018, Sections 3.4-3.8)."""

    frameskip: int
    sticky_probability: float
    max_episode_timesteps: int
    end_on_life_loss: bool
    end_on_level_complete: bool
    observation_shape: tuple[int, int, int]
    action_set: str
    progress_scale: float
    completion_bonus: float
    bonus_horizon_frames: int


@dataclass(frozen=True)
class GameConstants:
    """Per-game normalisation constants; ``None`` where the paper has no value (NA)."""

    random: float | None
    human: float | None = None
    world_record: float | None = None
    extrapolated: bool = False

    def reference(self, name: str) -> float | None:
        """The constant named ``name`` (``"random"``, ``"human"`` or ``"world_record"``)."""
        value: float | None = getattr(self, name)
        return value


@dataclass(frozen=True)
class Subset:
    """A weighted game subset (Atari-5 Table 9): estimate = 10^(sum c_g phi(HNS_g)) - 1."""

    name: str
    games: tuple[str, ...]
    coefficients: tuple[float, ...]
    r2: float | None = None
    relative_error: float | None = None


@dataclass(frozen=True)
class PredictionModels:
    """Per-game linear models on a subset's log-normalised scores (Atari-5 Tables 10-11).

    ``models[game]`` is ``(c, x_1, ..., x_n)``: log10(1 + s_game) = c + sum x_i log10(1 + s_i),
    with ``s_i`` the normalised scores of ``inputs`` in order.
    """

    name: str
    source: str
    inputs: tuple[str, ...]
    models: Mapping[str, tuple[float, ...]]


@dataclass(frozen=True)
class Normalisation:
    """A per-game normalised score: 100 (x - random) / abs(reference - random), then clipped.

    Attributes:
        name: metric name (``hns``, ``hwrns``, ``saber``, ``chns``...).
        reference: the constant the score is normalised to (``human`` or ``world_record``).
        floor: lower clip in percent (``None``: none).
        cap: upper clip in percent (``None``: none); infinite scores are clipped to it too.
    """

    name: str
    reference: str
    floor: float | None = None
    cap: float | None = None


@dataclass(frozen=True)
class Breakthrough:
    """Games whose ``of`` score reaches ``threshold`` % (HWR Section 4: HWRB, HWRNS >= 100 %)."""

    of: str
    threshold: float


@dataclass(frozen=True)
class Scoring:
    """Which numbers a protocol reports and how (the conventions are written in the YAML)."""

    normalised: tuple[Normalisation, ...] = ()
    aggregates: tuple[str, ...] = ("mean",)
    optimality_gap_threshold: float = 100.0
    log_transform: str | None = None
    classes_of: str | None = None
    classes: tuple[tuple[str, float | None], ...] = ()
    breakthrough: Breakthrough | None = None
    learning_efficiency: bool = False
    game_time_frames_per_day: int | None = None


@dataclass(frozen=True)
class Evaluation:
    """How per-game scores come from an episode log, and the interaction budget.

    Attributes:
        episode_aggregate: ``"mean"`` of all complete episodes, or ``"last_k"`` episodes
            completed before each frame checkpoint (SABER/HWR).
        k: episodes averaged by ``last_k``.
        checkpoints: training-frame checkpoints for ``last_k`` (the end of the log is added).
        budget_frames: emulator frames one run may use (``None``: unlimited).
        budget_steps: agent steps one run may use (``None``: unlimited).
        scored: which episodes the per-game score is made of: the ``training`` episodes of the
            run (SABER, HWR, Machado et al. 2018, Atari-5, Sonic), or evaluation episodes played
            ``after_training`` by the final policy in the evaluation environment (Atari 100k,
            DQN 2015); the budget counts the training only.
        episodes: evaluation episodes per run (``after_training``).
        policy: the evaluation policy the protocol's papers use (e.g. epsilon-greedy with
            epsilon 0.001): the agent's choice, recorded with the episodes, not enforced.
    """

    episode_aggregate: EpisodeAggregate = "mean"
    k: int | None = None
    checkpoints: tuple[int, ...] = ()
    budget_frames: int | None = None
    budget_steps: int | None = None
    scored: ScoredPhase = "training"
    episodes: int | None = None
    policy: str | None = None


@dataclass(frozen=True)
class RetroGame:
    """A stable-retro game of the Sonic protocol and its contest-reward parameters."""

    name: str
    integration: str
    rom_sha1: tuple[str, ...]
    level_end_x: Mapping[tuple[int, int], int]
    end_when: Mapping[str, int] = field(default_factory=_empty)
    end_when_not: Mapping[str, int] = field(default_factory=_empty)
    act_change_offset: bool = False


@dataclass(frozen=True)
class Level:
    """One Sonic level: a save state of a retro game, its split and its RAM zone/act."""

    game: str
    state: str
    split: Split
    zone: int
    act: int

    @property
    def name(self) -> str:
        """Short unique name, e.g. ``SonicTheHedgehog-GreenHillZone.Act1``."""
        return f"{self.game.removesuffix('-Genesis')}-{self.state}"


@dataclass(frozen=True)
class Published:
    """A table of aggregates a paper printed: one row per algorithm, one column per aggregate.

    Attributes:
        source: where the numbers are printed (``"Table 3"`` of the spec's paper, or another
            paper's table with its citation).
        columns: the column names as the spec writes them (``median``, ``saber.median``...).
        paths: where each column's number sits in a result's ``aggregates``
            (``("hns", "median")``, ``("atari5",)``, ``("test", "mean")``); ``None`` for a column
            that is no aggregate of ours (Sonic Table 1's ``error``).
        rows: ``{algorithm: values}``, ``None`` where the paper printed no value.
        protocol: how the numbers were obtained where that differs from the spec's protocol (a
            5-minute evaluation, no-op starts...); ``None``: under the spec's own.
        citation: the paper, when the table is not in the spec's own (``None``: the spec's).
        games: how many games the printed aggregates are over: the YAML's ``games``, else the
            spec's games (its levels of the split a column is of, for Sonic's test score);
            ``None`` where the YAML says it is not known (``games: null``). Tables print it
            beside the aggregates, so a 57-game median is never read as one over ours.
    """

    source: str
    columns: tuple[str, ...]
    paths: tuple[tuple[str, ...] | None, ...]
    rows: Mapping[str, tuple[float | None, ...]]
    protocol: str | None = None
    citation: str | None = None
    games: int | None = None

    def names(self) -> tuple[str, ...]:
        """Each row as a reference is named: ``"<row> (<source>)"`` (``"MuZero (Table 3)"``)."""
        return tuple(f"{row} ({self.source})" for row in self.rows)


@dataclass(frozen=True)
class PublishedScores:
    """Per-game raw scores of one published algorithm: a reference scored like any result.

    A reference is scored like our results only where its per-run scores are shipped
    (``per_run``): the IQM and the optimality gap are over all runs (Agarwal et al. 2021,
    Section 4), so per-game means give neither; from means only the statistics over games (the
    mean and median of the per-game means, the subsets' estimates, counts of games) are valid.

    Attributes:
        name: the algorithm as the tables and the report name it (``--references``).
        source: the table or file the scores come from (and why that one, where sources differ).
        scores: ``{game: mean raw score}``, canonical game names (the runs' means where only
            the runs are given).
        runs: how many runs each score averages, where known.
        frames: training frames behind the scores, where known.
        protocol: how the scores were obtained where that differs from the spec's protocol.
        per_run: ``{game: (score of each run, ...)}``, the published per-run raw scores, where
            they are shipped (YAML ``per_run``); empty otherwise.
    """

    name: str
    source: str
    scores: Mapping[str, float]
    runs: int | None = None
    frames: int | None = None
    protocol: str | None = None
    per_run: Mapping[str, tuple[float, ...]] = field(default_factory=_empty)

    def score_input(self, games: Collection[str] | None = None) -> dict[str, float | list[float]]:
        """What :func:`arcadebench.score` takes for this reference: each game's runs, else its mean.

        Args:
            games: only these games (``None``: all of the reference's).

        Example:
            >>> ref = PublishedScores("x", "a table", {"pong": 2.0}, per_run={"pong": (1.0, 3.0)})
            >>> ref.score_input()
            {'pong': [1.0, 3.0]}
        """
        return {
            game: list(self.per_run[game]) if game in self.per_run else mean
            for game, mean in self.scores.items()
            if games is None or game in games
        }


@dataclass(frozen=True)
class Spec:
    """A loaded, validated protocol: settings, games, constants and reporting rules.

    ``games`` are ale-py ids for Atari specs and level names for Sonic; ``hash`` is the SHA-256
    of the spec's content (comments and formatting excluded), recorded in every log and result.
    ``action_count_exceptions`` are games whose emulator cannot offer the protocol's action set
    (ale-py's full action space is a ROM's legal set: Skiing has 9, ALE issue #691); ``notes``
    are ``(topic, text)`` pairs saying where the spec chose between a paper's text, its code and
    other sources, shown on the protocol card. ``published`` are the aggregate tables papers
    printed and ``published_scores`` per-game results of published algorithms, both shown next to
    a run's scores; only the paper's own headline table (YAML ``published``) is part of the hash,
    the other references (YAML ``references``) are not: adding one changes no protocol.
    """

    name: str
    id_prefix: str
    title: str
    version: int
    env_version: int
    citation: str
    url: str | None
    platform: Platform
    environment: AtariSettings | RetroSettings | None
    games: tuple[str, ...]
    default_games: tuple[str, ...]
    constants: Mapping[str, GameConstants]
    constants_source: str | None
    scoring: Scoring
    evaluation: Evaluation
    subsets: Mapping[str, Subset] = field(default_factory=_empty)
    predictions: Mapping[str, PredictionModels] = field(default_factory=_empty)
    action_sets: Mapping[str, tuple[tuple[str, ...], ...]] = field(default_factory=_empty)
    retro_games: Mapping[str, RetroGame] = field(default_factory=_empty)
    levels: Mapping[str, Level] = field(default_factory=_empty)
    published: tuple[Published, ...] = ()
    published_scores: Mapping[str, PublishedScores] = field(default_factory=_empty)
    action_count_exceptions: Mapping[str, int] = field(default_factory=_empty)
    notes: tuple[tuple[str, str], ...] = ()
    source: str = "<string>"
    hash: str = ""
    _lookup: Mapping[str, str] = field(default_factory=_empty, repr=False, compare=False)

    def __repr__(self) -> str:
        """One line: name, version, short hash, platform and games, not every field.

        The fields hold every constant, level and published table (thousands of characters);
        what tells two specs apart is the name, the version and the content hash.

        Example:
            >>> from arcadebench.specs import load_spec
            >>> load_spec("atari5")
            Spec('atari5' v1, sha256:90863c63e974, atari, 57 games)
        """
        games = f"{len(self.games)} {'levels' if self.levels else 'games'}"
        return (
            f"Spec({self.name!r} v{self.version}, sha256:{self.short_hash}, {self.platform}, "
            f"{games})"
        )

    @property
    def short_hash(self) -> str:
        """The first 12 hex digits of the content hash, for tables and file names."""
        return short_hash(self.hash)

    @property
    def identity(self) -> dict[str, Any]:
        """The spec's name, version and hash, as results, reports and audits record it."""
        return {"name": self.name, "version": self.version, "hash": self.hash}

    def resolve_game(self, name: str) -> str:
        """Return the canonical game (or level) name for any common spelling of ``name``.

        Accepts ale-py ids (``battle_zone``), display names (``Battle Zone``, ``BattleZone``,
        ``Q*bert``, ``Ms. Pac-Man``), the spellings papers print (``ChopperCmd``, ``Montezuma``:
        ``data/game_names.csv``) and, for Sonic, ``Game-Genesis,State`` pairs.

        Raises:
            UnknownGame: with the close matches and the list command; or, for a spelling that
                could name two ALE games (``Pacman``) and is not a game's own name in this
                spec, with both candidates.
        """
        canonical = self._lookup.get(name_key(name))
        if canonical is not None:
            return canonical
        several = candidates(name) if self.platform == "atari" else []
        if several:
            named = " or ".join(f"{game} ({source})" for game, source in several)
            ids = " or ".join(game for game, _ in several)
            mine = [game for game, _ in several if game in self.games]
            has = f"; the {self.name!r} spec has {' and '.join(mine)}" if mine else ""
            raise UnknownGame(
                f"{name!r} could name {len(several)} ALE games: {named}; write the game's "
                f"ale-py id ({ids}){has}"
            )
        raise UnknownGame(
            f"{name!r} is not a game of the {self.name!r} spec."
            f"{did_you_mean(name, self.games)}"
            f" List them with `arcadebench show {self.name}`."
        )

    def reference_names(self) -> tuple[str, ...]:
        """Every published reference by name, in the spec's order.

        Each printed table's rows first (``"<row> (<source>)"``, the headline table then the
        ``references`` tables), then the per-game results (``references.scores``), as the YAML
        lists them.

        Example:
            >>> from arcadebench.specs import load_spec
            >>> load_spec("sonic").reference_names()[:2]
            ('Human (Table 1)', 'PPO (joint) (Table 1)')
        """
        printed = (name for table in self.published for name in table.names())
        return (*printed, *self.published_scores)

    def reference_protocol(self, name: str) -> str | None:
        """How the reference ``name`` was obtained where not under this protocol (else ``None``)."""
        if name in self.published_scores:
            return self.published_scores[name].protocol
        table = next(t for t in self.published if name in t.names())
        return table.protocol

    def default_references(self) -> tuple[str, ...]:
        """The references a table shows unless told which.

        The first :data:`DEFAULT_REFERENCES` obtained under this very protocol (no
        ``protocol``), in the spec's order.

        Example:
            >>> from arcadebench.specs import load_spec
            >>> load_spec("machado2018").default_references()  # all obtained under Dopamine's
            ()
        """
        own = (n for n in self.reference_names() if self.reference_protocol(n) is None)
        return tuple(own)[:DEFAULT_REFERENCES]

    def resolve_reference(self, name: str) -> str:
        """The reference called ``name``, by its name as :meth:`reference_names` gives it.

        Also any spelling of it (case and punctuation ignored), or a printed row's name without
        its table when only one row has it (``MuZero`` for ``MuZero (Table 3)``).

        Raises:
            UnknownReference: one line with the close matches and where they are listed.

        Example:
            >>> from arcadebench.specs import load_spec
            >>> load_spec("atari5").resolve_reference("muzero")
            'MuZero (Table 3)'
        """
        names = self.reference_names()
        if name in names:
            return name
        key = _reference_key(name)
        found = [n for n in names if _reference_key(n) == key]
        if not found:
            found = [n for n in names if _reference_key(_SOURCE_SUFFIX.sub("", n)) == key]
        if len(found) == 1:
            return found[0]
        if found:
            raise UnknownReference(
                f"{name!r} names {len(found)} references of the {self.name!r} spec "
                f"({', '.join(repr(n) for n in found)}); give the full name"
            )
        raise UnknownReference(
            f"{name!r} is not a reference of the {self.name!r} spec."
            f"{did_you_mean(name, names)} List them with `arcadebench show {self.name}`, or "
            "give `none`"
        )

    def games_of(self, selection: str) -> tuple[str, ...]:
        """The games named by a selection: ``all``, a subset name, or a Sonic split."""
        if selection == "all":
            return self.games
        if selection in self.subsets:
            return self.subsets[selection].games
        if selection in ("train", "test") and self.levels:
            return tuple(n for n, lv in self.levels.items() if lv.split == selection)
        choices = ["all", *self.subsets, *(["train", "test"] if self.levels else [])]
        raise UnknownGame(
            f"{selection!r} is not a game selection of the {self.name!r} spec; "
            f"use one of {', '.join(choices)}."
        )
