"""Load, validate and hash protocol specs: YAML in, a frozen :class:`~.model.Spec` out.

Built-in specs are the ``*.yaml`` files next to this module, found by globbing (adding a protocol
is adding a file). A user's own YAML file is accepted wherever a built-in name is. YAML is read
with a safe loader (libyaml's where PyYAML has it) that only adds two refusals — duplicate keys,
which PyYAML would silently merge, and anchor/alias bombs — so no tag can construct Python
objects.
"""

from __future__ import annotations

import csv
import decimal
import functools
import hashlib
import json
import math
import os
import re
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

import yaml

from arcadebench.errors import InvalidArgument, SpecError, UnknownSpec, did_you_mean
from arcadebench.specs.model import (
    AtariSettings,
    Breakthrough,
    EpisodeAggregate,
    Evaluation,
    GameConstants,
    Level,
    Normalisation,
    Platform,
    PredictionModels,
    Published,
    PublishedScores,
    RetroGame,
    RetroSettings,
    ScoredPhase,
    Scoring,
    Spec,
    Split,
    Subset,
)
from arcadebench.specs.names import GAME_NAME, name_key, subset_key
from arcadebench.specs.nodes import Node
from arcadebench.specs.settings import atari_settings, retro_settings
from arcadebench.specs.statistics import SPLITS, STATISTICS

__all__ = ["list_specs", "load_spec", "parse_spec", "read_yaml", "spec_reference"]

SPEC_DIR = Path(__file__).parent
DATA_DIR = SPEC_DIR.parent / "data"
_DATA_FILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*\.csv$")
MAX_SPEC_BYTES = 2_000_000
MAX_ALIASES = 50

_CONSTANT_COLUMNS = ("random", "human", "world_record")
_LOG_TRANSFORM = "log10(1 + max(0, x))"
_NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
_PREFIX_RE = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_SHA1_RE = re.compile(r"^[0-9a-f]{40}$")
_LEVEL_KEY_RE = re.compile(r"^zone=(\d+),act=(\d+)$")
V = TypeVar("V")
D = TypeVar("D")


# -- YAML -----------------------------------------------------------------------------------------


if TYPE_CHECKING:
    _SafeLoader = yaml.SafeLoader
else:  # libyaml's parser where PyYAML was built with it (CSafeLoader has no type stubs)
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _StrictSafeLoader(_SafeLoader):
    """SafeLoader that refuses duplicate keys.

    libyaml's parser (``CSafeLoader``) where PyYAML has it: parsing the built-in specs is then
    8 times faster (20 ms instead of 160 ms at every ``import arcadebench``, i.e. in every CLI
    call and worker process); the pure-Python one otherwise. Aliases are counted on the composed
    node graph (:func:`_count_aliases`), before anything is constructed.
    """

    def construct_mapping(  # noqa: D102 - PyYAML hook
        self, node: yaml.MappingNode, deep: bool = False
    ) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, list | dict):
                continue  # unhashable keys are rejected by the base class with a clear mark
            if key in seen:
                raise yaml.YAMLError(
                    f"duplicate key {key!r} at line {key_node.start_mark.line + 1}; "
                    "each key (and each game) may appear once"
                )
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


def _count_aliases(root: yaml.Node) -> None:
    """Refuse more than :data:`MAX_ALIASES` aliases (the billion-laughs guard).

    An alias is a node met again: the composed graph shares it, so each node is walked once.
    """
    seen: set[int] = set()
    aliases = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            aliases += 1
            if aliases > MAX_ALIASES:
                raise yaml.YAMLError(
                    f"more than {MAX_ALIASES} YAML aliases (of the node at line "
                    f"{node.start_mark.line + 1}); a spec needs none — write the values out"
                )
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend(child for pair in node.value for child in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def read_yaml(text: str, file: str) -> Any:
    """Parse YAML the way specs are parsed: safe, size- and alias-limited, duplicate keys refused.

    For other YAML the library reads (a leaderboard submission's metadata), so that every YAML
    file arcadebench opens gets the same guards and the same one-line errors.

    Raises:
        SpecError: invalid YAML (its line and column), too large, too many aliases.
    """
    if len(text.encode("utf-8", "surrogatepass")) > MAX_SPEC_BYTES:
        raise SpecError(
            file, "", f"is larger than {MAX_SPEC_BYTES} bytes; a spec is a few hundred lines"
        )
    try:
        loader = _StrictSafeLoader(text)
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _count_aliases(node)
            return loader.construct_document(node)
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        raise SpecError(
            file, "", f"invalid YAML at {where}: {problem}; fix the syntax there"
        ) from None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SpecError(file, "", f"invalid YAML: {message}") from None


# Documentation, not protocol: none changes an environment or a score, so none changes the hash
# that logs and results are checked against (published results are added as they are found).
_UNHASHED = ("notes", "action_count_exceptions", "references")


def _content_hash(data: Any) -> str:
    if isinstance(data, dict):
        data = {key: value for key, value in data.items() if key not in _UNHASHED}
    canonical = json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# -- sections -------------------------------------------------------------------------------------


def _game_name(node: Node) -> str:
    name = node.value if isinstance(node.value, str) else None
    if name is None or not GAME_NAME.fullmatch(name):
        raise node.fail("a game name of letters, digits, '_', '.' or '-'")
    return name


def _unknown_game(node: Node, game: str, games: Collection[str]) -> SpecError:
    return SpecError(node.file, node.path, f"unknown game {game!r}.{did_you_mean(game, games)}")


def _get(f: Mapping[str, Node], key: str, read: Callable[[Node], V], default: D) -> V | D:
    """``read`` of the optional ``key`` of a mapping's fields, ``default`` where it is absent."""
    return read(f[key]) if key in f else default


def _positive(node: Node) -> int:
    return node.integer(minimum=1)


def _text(node: Node) -> str:
    """A string with its runs of white space (YAML's folded lines) made single spaces."""
    return " ".join(node.string().split())


def _constants(node: Node, platform: str) -> tuple[dict[str, GameConstants], str | None]:
    f = node.mapping(required=("columns", "rows"), optional=("source", "extrapolated"))
    columns = [n.string(choices=_CONSTANT_COLUMNS) for n in f["columns"].items(min_length=1)]
    if "random" not in columns:
        raise f["columns"].fail("a list of constant columns including 'random'")
    if len(set(columns)) != len(columns):
        raise f["columns"].fail("a list without repeated columns")
    known_roms = _ale_rom_ids() if platform == "atari" else None
    rows: dict[str, GameConstants] = {}
    seen: dict[str, str] = {}
    for game, row in f["rows"].entries():
        _game_name(Node(game, node.file, row.path))
        if known_roms is not None and game not in known_roms:
            raise SpecError(
                node.file,
                row.path,
                f"unknown game {game!r}: not an ale-py ROM id.{did_you_mean(game, known_roms)}",
            )
        key = name_key(game)
        if key in seen:
            raise SpecError(node.file, row.path, f"duplicate game: same name as {seen[key]!r}")
        seen[key] = game
        cells = row.items(length=len(columns))
        values = dict(zip(columns, (n.number(optional=True) for n in cells), strict=True))
        if values["random"] is None:
            raise row.child(0, None).fail("the random score (a number)")
        for column in ("human", "world_record"):
            if values.get(column) is not None and values[column] == values["random"]:
                raise row.child(columns.index(column), values[column]).fail(
                    "different from the random score (it is a normalisation denominator)"
                )
        rows[game] = GameConstants(
            values["random"], values.get("human"), values.get("world_record")
        )
    for game_node in f["extrapolated"].items() if "extrapolated" in f else ():
        game = game_node.string()
        if game not in rows:
            raise game_node.fail(f"a game of constants.rows{did_you_mean(game, rows)}")
        rows[game] = GameConstants(**{**rows[game].__dict__, "extrapolated": True})
    return rows, _get(f, "source", Node.string, None)


@functools.lru_cache(maxsize=1)
def _ale_rom_ids() -> frozenset[str]:
    from ale_py import roms

    return frozenset(roms.get_all_rom_ids())


def _known_games(node: Node, games: Mapping[str, Any]) -> list[str]:
    names = [n.string() for n in node.items(min_length=1)]
    for i, game in enumerate(names):
        if game not in games:
            raise _unknown_game(node.child(i, game), game, games)
    if len(set(names)) != len(names):
        raise node.fail("a list without duplicate games")
    return names


def _subsets(node: Node, games: Mapping[str, Any]) -> dict[str, Subset]:
    subsets = {}
    for name, sub in node.entries():
        f = sub.mapping(required=("games", "coefficients"), optional=("r2", "relative_error"))
        members = _known_games(f["games"], games)
        coefficients = [n.number() for n in f["coefficients"].items()]
        if len(coefficients) != len(members):
            raise f["coefficients"].fail(
                f"{len(members)} coefficients, one per game of {sub.path}.games"
            )
        for i, c in enumerate(coefficients):
            if c < 0:
                weight = f["coefficients"].child(i, c)
                raise weight.fail(
                    "non-negative (Atari-5 Proposition 2: negative weights break order "
                    "preservation)"
                )
        r2 = _get(f, "r2", Node.number, None)
        if r2 is not None and not 0 <= r2 <= 1:
            raise f["r2"].fail("a number in [0, 1]")
        error = _get(f, "relative_error", Node.number, None)
        if error is not None and error < 0:
            raise f["relative_error"].fail("a non-negative percentage")
        subsets[name] = Subset(name, tuple(members), tuple(coefficients), r2, error)
    return subsets


def _predictions(node: Node, games: Mapping[str, Any]) -> dict[str, PredictionModels]:
    result = {}
    for name, pred in node.entries():
        f = pred.mapping(required=("inputs", "models"), optional=("source",))
        inputs = _known_games(f["inputs"], games)
        models = {}
        for game, row in f["models"].entries():
            if game not in games:
                raise _unknown_game(row, game, games)
            models[game] = tuple(n.number() for n in row.items(length=len(inputs) + 1))
        source = _get(f, "source", Node.string, name)
        result[name] = PredictionModels(name, source, tuple(inputs), MappingProxyType(models))
    return result


def _scoring(node: Node, columns: set[str]) -> Scoring:
    f = node.mapping(
        optional=(
            "normalised",
            "aggregates",
            "optimality_gap_threshold",
            "log_transform",
            "classes",
            "breakthrough",
            "learning_efficiency",
            "game_time_frames_per_day",
        )
    )
    normalised = []
    for name, entry in f["normalised"].entries() if "normalised" in f else ():
        g = entry.mapping(required=("reference",), optional=("floor", "cap"))
        reference = g["reference"].string(choices=("human", "world_record"))
        if reference not in columns:
            raise g["reference"].fail(
                f"a column of constants.columns ({', '.join(sorted(columns - {'random'}))})"
            )
        floor, cap = _get(g, "floor", Node.number, None), _get(g, "cap", Node.number, None)
        if floor is not None and cap is not None and floor >= cap:
            raise g["cap"].fail(f"greater than floor ({floor})")
        normalised.append(Normalisation(name, reference, floor, cap))
    names = {n.name for n in normalised}
    aggregates = (
        tuple(n.string(choices=tuple(STATISTICS)) for n in f["aggregates"].items(min_length=1))
        if "aggregates" in f
        else ("mean",)
    )
    classes_of: str | None = None
    classes: tuple[tuple[str, float | None], ...] = ()
    if "classes" in f:
        c = f["classes"].mapping(required=("of", "bins"))
        classes_of = c["of"].string(choices=tuple(names) or ("<a normalised score>",))
        bins: list[tuple[str, float | None]] = []
        for i, b in enumerate(c["bins"].items(min_length=2)):
            label, upper = b.items(length=2)
            last = i == len(c["bins"].value) - 1
            bound = upper.number(optional=True)
            if (bound is None) != last:
                raise upper.fail("null for the last class only (it has no upper bound)")
            previous = bins[-1][1] if bins else None
            if previous is not None and bound is not None and bound <= previous:
                raise upper.fail("greater than the previous class's upper bound")
            bins.append((label.string(), bound))
        classes = tuple(bins)
    breakthrough = None
    if "breakthrough" in f:
        fields = f["breakthrough"].mapping(required=("of", "threshold"))
        breakthrough = Breakthrough(
            of=fields["of"].string(choices=tuple(names) or ("<a normalised score>",)),
            threshold=fields["threshold"].number(),
        )
    log_transform = _get(f, "log_transform", lambda n: n.string(choices=(_LOG_TRANSFORM,)), None)
    return Scoring(
        normalised=tuple(normalised),
        aggregates=aggregates,
        optimality_gap_threshold=_get(f, "optimality_gap_threshold", Node.number, 100.0),
        log_transform=log_transform,
        classes_of=classes_of,
        classes=classes,
        breakthrough=breakthrough,
        learning_efficiency=_get(f, "learning_efficiency", Node.boolean, False),
        game_time_frames_per_day=_get(f, "game_time_frames_per_day", _positive, None),
    )


def _evaluation(node: Node) -> Evaluation:
    f = node.mapping(
        optional=("episode_aggregate", "k", "checkpoints", "budget", "scored", "episodes", "policy")
    )
    aggregate: EpisodeAggregate = _get(
        f, "episode_aggregate", lambda n: n.choice(_EPISODE_AGGREGATES), "mean"
    )
    k = _get(f, "k", _positive, None)
    if aggregate == "last_k" and k is None:
        raise SpecError(node.file, f"{node.path}.k", "is required when episode_aggregate is last_k")
    checkpoints = _get(f, "checkpoints", lambda n: tuple(map(_positive, n.items())), ())
    if list(checkpoints) != sorted(set(checkpoints)):
        raise f["checkpoints"].fail("strictly increasing frame counts")
    b = f["budget"].mapping(optional=("frames", "steps")) if "budget" in f else {}
    budget_frames, budget_steps = (_get(b, key, _positive, None) for key in ("frames", "steps"))
    scored: ScoredPhase = _get(f, "scored", lambda n: n.choice(_SCORED), "training")
    episodes = _get(f, "episodes", _positive, None)
    if (scored == "after_training") != (episodes is not None):
        raise SpecError(
            node.file,
            f"{node.path}.episodes",
            "is required with scored: after_training (evaluation episodes per run), and only then",
        )
    if scored == "after_training" and aggregate != "mean":
        raise f["episode_aggregate"].fail("mean: evaluation episodes are averaged")
    policy = _get(f, "policy", _text, None)
    return Evaluation(
        aggregate, k, checkpoints, budget_frames, budget_steps, scored, episodes, policy
    )


def _action_sets(node: Node, buttons: list[str]) -> dict[str, tuple[tuple[str, ...], ...]]:
    sets = {}
    for name, combos in node.entries():
        parsed: list[tuple[str, ...]] = []
        for combo in combos.items(min_length=1):
            pressed = tuple(b.string(choices=tuple(buttons)) for b in combo.items())
            if len(set(pressed)) != len(pressed):
                raise combo.fail("a combination without repeated buttons")
            if frozenset(pressed) in {frozenset(p) for p in parsed}:
                raise combo.fail("a combination not already in this action set")
            parsed.append(pressed)
        sets[name] = tuple(parsed)
    return sets


def _retro_games(node: Node) -> dict[str, RetroGame]:
    games = {}
    for name, entry in node.entries():
        f = entry.mapping(
            required=("integration", "rom_sha1", "level_end_x"),
            optional=("end_when", "end_when_not", "act_change_offset"),
        )
        sha1s = tuple(n.string() for n in f["rom_sha1"].items(min_length=1))
        for i, sha in enumerate(sha1s):
            if not _SHA1_RE.fullmatch(sha):
                raise f["rom_sha1"].child(i, sha).fail("40 lower-case hex digits (a SHA-1)")
        end_x = {}
        for key, value in f["level_end_x"].entries():
            match = _LEVEL_KEY_RE.fullmatch(key)
            if not match:
                raise value.fail("keyed by 'zone=<Z>,act=<A>'")
            end_x[(int(match[1]), int(match[2]))] = _positive(value)
        conditions = {}
        for kind in ("end_when", "end_when_not"):
            conditions[kind] = MappingProxyType(
                {var: n.integer() for var, n in f[kind].entries()} if kind in f else {}
            )
        games[name] = RetroGame(
            name=name,
            integration=f["integration"].string(),
            rom_sha1=sha1s,
            level_end_x=MappingProxyType(end_x),
            end_when=conditions["end_when"],
            end_when_not=conditions["end_when_not"],
            act_change_offset=_get(f, "act_change_offset", Node.boolean, False),
        )
    return games


def _level_splits() -> tuple[Split, ...]:
    """The splits a level may be in: those the raw-score :data:`SPLITS` of results are over."""
    return tuple(s.levels for s in SPLITS.values() if s.levels is not None)


def _levels(node: Node, retro_games: dict[str, RetroGame]) -> dict[str, Level]:
    levels: dict[str, Level] = {}
    for entry in node.items(min_length=1):
        game_n, state_n, split_n, zone_n, act_n = entry.items(length=5)
        game = game_n.string(choices=tuple(retro_games))
        level = Level(
            game=game,
            state=_game_name(state_n),
            split=split_n.choice(_level_splits()),
            zone=zone_n.integer(minimum=0),
            act=act_n.integer(minimum=0),
        )
        if (level.zone, level.act) not in retro_games[game].level_end_x:
            raise entry.fail(
                f"a level whose zone={level.zone},act={level.act} has a level_end_x in "
                f"retro_games.{game}"
            )
        if level.name in levels:
            raise entry.fail("a level listed once (duplicate level)")
        levels[level.name] = level
    return levels


_SCALAR_AGGREGATES = ("hwrb", "frames", "game_time_days")


def _column_path(
    column: str, scoring: Scoring, subsets: Mapping[str, Subset], levels: Mapping[str, Level]
) -> tuple[str, ...] | None:
    """Where a published column's number sits in our ``aggregates``, or ``None`` if nowhere.

    A column is a dotted aggregate path (``saber.median``, ``hns.iqm``), or one of the short
    names the headline tables use: a statistic of the spec's human-normalised score
    (``median`` in Atari-5 Table 3), a subset estimate (``atari5``), a count (``hwrb``), or
    Sonic's ``score`` (the mean over the test levels).
    """
    metrics = [n.name for n in scoring.normalised]
    if "." in column:
        return tuple(column.split("."))
    if (column in STATISTICS or column == "n_games") and metrics:
        human = next((n.name for n in scoring.normalised if n.reference == "human"), metrics[0])
        return (human, column)
    if column in {subset_key(name) for name in subsets} or column in _SCALAR_AGGREGATES:
        return (column,)
    if column == "score":
        return ("test" if any(lv.split == "test" for lv in levels.values()) else "raw", "mean")
    return None


def _check_path(node: Node, path: tuple[str, ...], scoring: Scoring) -> None:
    metrics = {n.name for n in scoring.normalised} | set(SPLITS)
    if len(path) == 2 and path[0] in metrics and (path[1] in STATISTICS or path[1] == "n_games"):
        return
    raise node.fail(
        f"an aggregate of this spec's results: <metric>.<statistic> with a metric in "
        f"{', '.join(sorted(metrics))} and a statistic in {', '.join(STATISTICS)}"
    )


def _published_table(
    node: Node,
    scoring: Scoring,
    subsets: Mapping[str, Subset],
    levels: Mapping[str, Level],
    games: tuple[str, ...],
) -> Published:
    f = node.mapping(
        required=("columns", "rows"), optional=("source", "protocol", "citation", "games")
    )
    column_nodes = f["columns"].items(min_length=1)
    columns = tuple(n.string() for n in column_nodes)
    paths = []
    for column, column_node in zip(columns, column_nodes, strict=True):
        path = _column_path(column, scoring, subsets, levels)
        if path is not None and "." in column:
            _check_path(column_node, path, scoring)
        paths.append(path)
    rows = {
        name: tuple(_printed(n) for n in row.items(length=len(columns)))
        for name, row in f["rows"].entries()
    }
    return Published(
        _get(f, "source", _text, ""),
        columns,
        tuple(paths),
        MappingProxyType(rows),
        _get(f, "protocol", _text, None),
        _get(f, "citation", _text, None),
        (
            f["games"].integer(minimum=1, optional=True)
            if "games" in f
            else _printed_games(paths, games, levels)
        ),
    )


def _printed_games(
    paths: list[tuple[str, ...] | None], games: tuple[str, ...], levels: Mapping[str, Level]
) -> int:
    """The games a printed table is over when its YAML does not say.

    The spec's games, or the levels of the split its columns are of (Sonic Table 1's test
    score: the 11 test levels).
    """
    splits = {SPLITS[p[0]].levels for p in paths if p is not None and p[0] in SPLITS}
    splits.discard(None)
    if len(splits) == 1 and levels:
        (split,) = splits
        return sum(1 for level in levels.values() if level.split == split)
    return len(games)


def _printed(node: Node) -> float | None:
    """A printed number: a count stays an integer (``superhuman: 3``), ``null`` is not printed."""
    if isinstance(node.value, int) and not isinstance(node.value, bool):
        return node.value
    return node.number(optional=True)


def _published_scores(
    node: Node, lookup: Mapping[str, str], games: tuple[str, ...]
) -> dict[str, PublishedScores]:
    found = {}
    for name, entry in node.entries():
        f = entry.mapping(
            required=("source",), optional=("games", "per_run", "runs", "frames", "protocol")
        )
        if "games" not in f and "per_run" not in f:
            raise SpecError(
                node.file, f"{entry.path}.games", "is required (or per_run, the runs' scores)"
            )
        scores = _game_values(f["games"], lookup, games, Node.number) if "games" in f else {}
        per_run = _per_run(f["per_run"], name, lookup, games) if "per_run" in f else {}
        runs = _get(f, "runs", _positive, None)
        if per_run:
            _check_runs(f, per_run, scores, runs)
            scores = scores or {game: _mean(values) for game, values in per_run.items()}
            counts = {len(values) for values in per_run.values()}
            runs = runs if runs is not None or len(counts) != 1 else counts.pop()
        found[name] = PublishedScores(
            name=name,
            source=_text(f["source"]),
            scores=MappingProxyType(scores),
            runs=runs,
            frames=_get(f, "frames", _positive, None),
            protocol=_get(f, "protocol", _text, None),
            per_run=MappingProxyType(per_run),
        )
    return found


def _game_values(
    node: Node,
    lookup: Mapping[str, str],
    games: tuple[str, ...],
    read: Callable[[Node], V],
) -> dict[str, V]:
    """``{canonical game: read(its node)}`` of a mapping keyed by any spelling of the games."""
    values: dict[str, V] = {}
    for game, value in node.entries():
        canonical = lookup.get(name_key(game))
        if canonical is None:
            raise _unknown_game(value, game, games)
        if canonical in values:
            raise value.fail("a game listed once")
        values[canonical] = read(value)
    return values


def _run_scores(node: Node) -> tuple[float, ...]:
    return tuple(n.number() for n in node.items(min_length=1))


def _per_run(
    node: Node, name: str, lookup: Mapping[str, str], games: tuple[str, ...]
) -> dict[str, tuple[float, ...]]:
    """A reference's per-run scores, ``{game: (score per run, ...)}``.

    Given in the YAML as such a mapping, or as the name of a CSV file of ``arcadebench/data``
    whose rows ``algorithm,game,run,score`` of this reference hold them (a file shipped with the
    package, so a copied spec still finds it).
    """
    if isinstance(node.value, dict):
        return _game_values(node, lookup, games, _run_scores)
    file = node.string()
    path = DATA_DIR / file
    if not _DATA_FILE.fullmatch(file) or not path.is_file():
        raise node.fail(
            "{game: [score per run, ...]} or the name of a CSV file in arcadebench's data "
            f"folder ({', '.join(sorted(p.name for p in DATA_DIR.glob('*_runs.csv')))})"
        )
    rows = _runs_file(path)
    if rows is None:
        raise node.fail(f"a file with the columns algorithm,game,run,score ({file} has others)")
    values: dict[str, list[float]] = {}
    for number, game, text in rows.get(name, ()):
        place = Node(text, file, f"row {number}")
        canonical = lookup.get(name_key(game))
        if canonical is None:
            raise place.fail(f"a row of a game of this spec, not {game!r}")
        try:
            score = float(text)
        except ValueError:
            raise place.fail("a score") from None
        if not math.isfinite(score):
            raise place.fail("a finite score")
        values.setdefault(canonical, []).append(score)
    if not values:
        raise node.fail(f"a file with rows of {name!r} (its algorithm column)")
    return {game: tuple(scores) for game, scores in values.items()}


@functools.lru_cache(maxsize=8)
def _runs_file(path: Path) -> dict[str, list[tuple[int, str, str]]] | None:
    """A per-run file's rows by algorithm, ``(row, game, score)``; ``None``: other columns.

    Read once: a spec's references name one file each (machado2018's 24 name the same).
    """
    text = path.read_text(encoding="utf-8")
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    if rows.fieldnames != ["algorithm", "game", "run", "score"]:
        return None
    found: dict[str, list[tuple[int, str, str]]] = {}
    for number, row in enumerate(rows, start=1):
        entry = (number, row["game"] or "", row["score"] or "")
        found.setdefault(row["algorithm"] or "", []).append(entry)
    return found


def _check_runs(
    f: dict[str, Node],
    per_run: Mapping[str, tuple[float, ...]],
    means: Mapping[str, float],
    runs: int | None,
) -> None:
    """The runs agree with the entry's run count and with its means, to their printed digits."""
    node = f["per_run"]
    if runs is not None:
        other = {g: len(v) for g, v in per_run.items() if len(v) != runs}
        if other:
            game, count = next(iter(other.items()))
            raise node.fail(f"{runs} runs of every game (runs: {runs}), {game} has {count}")
    if not means:
        return
    if set(means) != set(per_run):
        differ = sorted(set(means) ^ set(per_run))
        raise node.fail(f"runs of the games of `games` (differing: {', '.join(differ)})")
    for game, mean in means.items():
        digits = _decimals(mean)
        average = _mean(per_run[game])
        if abs(average - mean) > 0.5 * 10**-digits + 1e-9 * abs(mean):
            raise node.fail(
                f"runs whose mean is the game's value in `games` to its {digits} decimals: "
                f"{game} {mean:g} vs {average:.{digits + 2}f}"
            )


def _mean(values: tuple[float, ...]) -> float:
    return math.fsum(values) / len(values)


def _decimals(value: float) -> int:
    """Decimals of a number as the YAML printed it: ``801.52`` -> 2, ``16651`` -> 0."""
    exponent = decimal.Decimal(repr(float(value))).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


def _references(
    node: Node,
    scoring: Scoring,
    subsets: Mapping[str, Subset],
    levels: Mapping[str, Level],
    lookup: Mapping[str, str],
    games: tuple[str, ...],
) -> tuple[tuple[Published, ...], dict[str, PublishedScores]]:
    f = node.mapping(optional=("tables", "scores"))
    tables = tuple(
        _published_table(table, scoring, subsets, levels, games)
        for table in (f["tables"].items(min_length=1) if "tables" in f else ())
    )
    scores = _published_scores(f["scores"], lookup, games) if "scores" in f else {}
    return tables, scores


def _action_count_exceptions(node: Node, games: tuple[str, ...]) -> dict[str, int]:
    counts = {}
    for game, count in node.entries():
        if game not in games:
            raise _unknown_game(count, game, games)
        value = _positive(count)
        if value >= 18:
            raise count.fail("fewer than the 18 actions of the full set (or remove the entry)")
        counts[game] = value
    return counts


def _notes(node: Node) -> tuple[tuple[str, str], ...]:
    fields = (entry.mapping(required=("topic", "text")) for entry in node.items(min_length=1))
    return tuple((f["topic"].string(), _text(f["text"])) for f in fields)


def _default_games(
    node: Node | None,
    games: tuple[str, ...],
    subsets: Mapping[str, Subset],
    levels: Mapping[str, Level],
) -> tuple[str, ...]:
    if node is None:
        return games
    if isinstance(node.value, list):
        return tuple(_known_games(node, dict.fromkeys(games)))
    selection = node.string()
    if selection == "all":
        return games
    if selection in subsets:
        return subsets[selection].games
    if levels and selection in _level_splits():
        return tuple(name for name, lv in levels.items() if lv.split == selection)
    raise node.fail(
        f"'all', a subset name ({', '.join(subsets) or 'none defined'}), a split or a list of games"
    )


# -- the spec -------------------------------------------------------------------------------------

_TOP_REQUIRED = ("name", "id_prefix", "title", "version", "citation", "platform", "scoring")
_TOP_OPTIONAL = (
    "env_version",
    "url",
    "environment",
    "default_games",
    "constants",
    "subsets",
    "predictions",
    "evaluation",
    "published",
    "references",
    "buttons",
    "action_sets",
    "retro_games",
    "levels",
    "action_count_exceptions",
    "notes",
)
_EPISODE_AGGREGATES: tuple[EpisodeAggregate, ...] = ("mean", "last_k")
_SCORED: tuple[ScoredPhase, ...] = ("training", "after_training")
_RETRO_SECTIONS = {"buttons", "action_sets", "retro_games", "levels"}
_PLATFORM_SECTIONS: dict[Platform, tuple[set[str], set[str]]] = {
    "atari": ({"environment", "constants"}, _RETRO_SECTIONS),
    "retro": (
        {"environment", *_RETRO_SECTIONS},
        {"constants", "subsets", "predictions", "action_count_exceptions"},
    ),
    "none": ({"constants"}, {"environment", *_RETRO_SECTIONS, "action_count_exceptions"}),
}


def parse_spec(text: str, source: str = "<string>") -> Spec:
    """Parse and validate the YAML ``text`` of a spec; ``source`` names it in errors.

    Raises:
        SpecError: naming ``source``, the key path and the rule, for any invalid spec.
    """
    data = read_yaml(text, source)
    top = Node(data, source).mapping(required=_TOP_REQUIRED, optional=_TOP_OPTIONAL)
    name = top["name"].string()
    if not _NAME_RE.fullmatch(name):
        raise top["name"].fail("lower-case letters, digits, '_' or '-', starting with a letter")
    id_prefix = top["id_prefix"].string()
    if not _PREFIX_RE.fullmatch(id_prefix):
        raise top["id_prefix"].fail(
            "letters and digits, starting with a letter (it starts the env ids)"
        )
    platform = top["platform"].choice(tuple(_PLATFORM_SECTIONS))
    needed, forbidden = _PLATFORM_SECTIONS[platform]
    for key in sorted(needed - set(top)):
        raise SpecError(source, key, f"is required for platform {platform!r} but missing")
    for key in sorted(forbidden & set(top)):
        raise SpecError(source, key, f"does not apply to platform {platform!r}; remove it")

    constants, constants_source = (
        _constants(top["constants"], platform) if "constants" in top else ({}, None)
    )
    columns = {
        c
        for c in _CONSTANT_COLUMNS
        if not constants or any(g.reference(c) is not None for g in constants.values())
    }
    subsets = _subsets(top["subsets"], constants) if "subsets" in top else {}
    predictions = _predictions(top["predictions"], constants) if "predictions" in top else {}
    scoring = _scoring(top["scoring"], columns)
    if scoring.log_transform is None and subsets:
        raise SpecError(
            source,
            "scoring.log_transform",
            f"is required when subsets are defined ({_LOG_TRANSFORM!r})",
        )
    evaluation = _evaluation(top["evaluation"]) if "evaluation" in top else Evaluation()

    action_sets: dict[str, tuple[tuple[str, ...], ...]] = {}
    retro_games: dict[str, RetroGame] = {}
    levels: dict[str, Level] = {}
    environment: AtariSettings | RetroSettings | None = None
    if platform == "atari":
        environment = atari_settings(top["environment"])
    elif platform == "retro":
        buttons = [n.string() for n in top["buttons"].items(min_length=1)]
        action_sets = _action_sets(top["action_sets"], buttons)
        environment = retro_settings(top["environment"], tuple(action_sets))
        retro_games = _retro_games(top["retro_games"])
        levels = _levels(top["levels"], retro_games)
    games = tuple(levels) if platform == "retro" else tuple(constants)
    default_games = _default_games(top.get("default_games"), games, subsets, levels)

    lookup = {name_key(game): game for game in games}
    for level in levels.values():
        lookup[name_key(f"{level.game},{level.state}")] = level.name
        lookup[name_key(f"{level.game}-v0,{level.state}")] = level.name
    if platform == "atari":
        from ale_py.registration import rom_id_to_name

        for game in games:
            lookup.setdefault(name_key(rom_id_to_name(game)), game)

    reference_tables, reference_scores = (
        _references(top["references"], scoring, subsets, levels, lookup, games)
        if "references" in top
        else ((), {})
    )
    return Spec(
        name=name,
        id_prefix=id_prefix,
        title=top["title"].string(),
        version=_positive(top["version"]),
        env_version=_get(top, "env_version", lambda n: n.integer(minimum=0), 0),
        citation=_text(top["citation"]),
        url=_get(top, "url", Node.string, None),
        platform=platform,
        environment=environment,
        games=games,
        default_games=default_games,
        constants=MappingProxyType(constants),
        constants_source=constants_source,
        scoring=scoring,
        evaluation=evaluation,
        subsets=MappingProxyType(subsets),
        predictions=MappingProxyType(predictions),
        action_sets=MappingProxyType(action_sets),
        retro_games=MappingProxyType(retro_games),
        levels=MappingProxyType(levels),
        published=(
            *(
                (_published_table(top["published"], scoring, subsets, levels, games),)
                if "published" in top
                else ()
            ),
            *reference_tables,
        ),
        published_scores=MappingProxyType(reference_scores),
        action_count_exceptions=MappingProxyType(
            _get(top, "action_count_exceptions", lambda n: _action_count_exceptions(n, games), {})
        ),
        notes=_get(top, "notes", _notes, ()),
        source=source,
        hash=_content_hash(data),
        _lookup=MappingProxyType(lookup),
    )


def list_specs() -> list[str]:
    """Names of the built-in specs (the YAML files shipped in ``arcadebench/specs``)."""
    return sorted(path.stem for path in SPEC_DIR.glob("*.yaml"))


def load_spec(name_or_path: str | os.PathLike[str] | Spec) -> Spec:
    """Return the spec named ``name_or_path`` (built-in) or loaded from that YAML file.

    Example:
        >>> spec = load_spec("saber")
        >>> spec.environment.repeat_action_probability, spec.environment.max_stuck_frames
        (0.25, 18000)

    Raises:
        UnknownSpec: neither a built-in name nor an existing file (with close matches).
        SpecError: the file is not a valid spec.
    """
    if isinstance(name_or_path, Spec):
        return name_or_path
    text = os.fspath(name_or_path)
    builtin = SPEC_DIR / f"{text.lower()}.yaml"
    if "/" not in text and "\\" not in text and builtin.is_file():
        return _load_file(str(builtin), builtin.stat().st_mtime_ns)
    path = Path(text).expanduser()
    if path.is_file():
        return _load_file(str(path.resolve()), path.stat().st_mtime_ns)
    raise UnknownSpec(
        f"{text!r} is neither a built-in spec nor a YAML file."
        f"{did_you_mean(text.lower(), list_specs())}"
        f" Built-in specs: {', '.join(list_specs())} (see `arcadebench specs`)."
    )


def spec_reference(spec: Spec) -> str:
    """What another process passes to :func:`load_spec` to get ``spec``: its name or its file.

    Workers, Ray tasks and remote environments load the spec themselves (a ``Spec`` holds
    read-only mappings that do not pickle); a built-in spec goes by name, a YAML spec by its
    absolute path, and one made from text (``parse_spec``) has neither.

    Example:
        >>> spec_reference(load_spec("saber"))
        'saber'

    Raises:
        InvalidArgument: a spec with no file (save it to a file and pass the path).
    """
    if spec.name in list_specs() and load_spec(spec.name).hash == spec.hash:
        return spec.name
    if spec.source and Path(spec.source).is_file():
        return str(Path(spec.source).resolve())
    raise InvalidArgument(
        "`spec` must be a built-in spec or a YAML file (other processes load it themselves), "
        f"got {spec.name!r} from {spec.source!r}; save it to a file and pass the path"
    )


@functools.lru_cache(maxsize=64)
def _load_file(path: str, _mtime_ns: int) -> Spec:
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise SpecError(path, "", f"cannot be read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            path, "", f"is not UTF-8 text (byte {exc.start}); save it as UTF-8"
        ) from None
    source = Path(path).name if Path(path).parent == SPEC_DIR else path
    return parse_spec(text, source)
