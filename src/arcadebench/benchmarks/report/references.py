"""Published references a report compares against (``arcadebench report --references NAME``).

Three kinds, all package data with their citation:

- ``constants``: the spec's normalisation rows as pseudo-algorithms, ``random``, ``human`` and
  ``world record`` (SABER Table 5, Atari-5 Table 12, HWR Table 1...), scored like any result, so
  a plot shows where random play, the human baseline and the record lie on every game.
- ``dataset``: per-game raw scores of 62 published algorithms from the Atari-5 authors' data set
  (Aitchison, Sweetser & Hutter 2023; ``maitchison/Atari-5`` ``dataset.csv``, MIT), for Atari
  specs (e.g. ``"Rainbow (noop)"``, ``MuZero``). They were obtained under each paper's own
  protocol (mostly 30 no-op or human starts, often without sticky actions), not necessarily the
  spec's; the citation and the protocol say so, with the start condition the data set's name
  gives (``noop``: no-op starts, ``hs``: human starts; otherwise unknown).
- ``published``: the rows of the aggregate tables papers printed (Sonic Table 1 test scores
  with their errors, Atari-5 Table 3 medians and estimates, SABER Tables 2-3), named
  ``"<row> (<table>)"``, and the per-game results of published algorithms the spec ships
  (scored like any result), each citing its source and, where it was obtained under another
  protocol, saying so.

Names are matched ignoring case and punctuation (``world-record``, ``rainbow noop``); a
reference named ``"<name> (<table>)"`` also answers to ``<name>`` when nothing else does.

Every reference carries its protocol: ``None`` where its numbers were obtained under the spec's
own (the constants, the spec's own tables), else how (a ``published`` table's or result's
``protocol``, a data set row's start condition), shown by ``--list-references`` and the report.

Classes: Reference.
Functions: list_references, resolve_reference, reference_entries, start_condition.
"""

from __future__ import annotations

import csv
import difflib
import functools
import importlib.resources
import io
import math
import re
import warnings
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from arcadebench.benchmarks.report.report_data import Entry
from arcadebench.benchmarks.scoring.results import score, without_run_statistics
from arcadebench.benchmarks.subset import ATARI5_DATASET, read_scores
from arcadebench.errors import UnknownGame, UnknownReference
from arcadebench.specs import Spec

__all__ = [
    "Reference",
    "list_references",
    "reference_entries",
    "resolve_reference",
    "start_condition",
]

_DATASET_CITATION = (
    "Aitchison, M., Sweetser, P. and Hutter, M. (2023). Atari-5: Distilling the Arcade Learning "
    "Environment down to Five Games. ICML. Score data set maitchison/Atari-5 dataset.csv (MIT)"
)
_CONSTANT_NAMES = {"random": "random", "human": "human", "world_record": "world record"}


@dataclass(frozen=True)
class Reference:
    """A published reference result.

    Attributes:
        name: the name ``--references`` takes and the report shows.
        kind: ``"constants"``, ``"dataset"`` or ``"published"`` (see the module docstring).
        citation: where the numbers come from.
        games: how many games have a per-game score (0: aggregates only).
        protocol: how the numbers were obtained where that is not the spec's protocol
            (``None``: under the spec's own).
        work: the paper or data set the numbers come from, where several references share it
            (``--list-references`` cites it once); ``None``: ``where`` says it all.
        where: the part of ``work`` that holds this reference's numbers (``Table 5``, a data
            set row's paper), or the whole source when there is no ``work``.
    """

    name: str
    kind: Literal["constants", "dataset", "published"]
    citation: str
    games: int
    protocol: str | None = None
    work: str | None = None
    where: str = ""


def _key(name: str) -> str:
    return re.sub(r"[^0-9a-z]", "", name.lower())


def _base_key(name: str) -> str:
    """Key of a name without a trailing parenthesised source: ``JERK (Table 1)`` -> ``jerk``."""
    return _key(re.sub(r"\s*\((?:Table|Tables)\s[^)]*\)\s*$", "", name))


def _suggest(name: str, refs: list[Reference]) -> str:
    """``" Did you mean: ...?"`` over the full and the short (table-less) names, any case."""
    spellings: dict[str, str] = {}
    for ref in refs:
        spellings.setdefault(ref.name.lower(), ref.name)
        short = re.sub(r"\s*\((?:Table|Tables)\s[^)]*\)\s*$", "", ref.name).lower()
        spellings.setdefault(short, ref.name)
    close = difflib.get_close_matches(name.lower(), list(spellings), n=6, cutoff=0.6)
    names = list(dict.fromkeys(spellings[c] for c in close))[:3]
    return " Did you mean: " + ", ".join(repr(n) for n in names) + "?" if names else ""


# -- the Atari-5 data set -------------------------------------------------------------------------

StartCondition = Literal["no-op starts", "human starts", "unknown"]


def start_condition(algorithm: str) -> StartCondition:
    """The start condition an Atari-5 data set row says it was evaluated under, by its name.

    DeepMind's papers of 2015-2018 report two conditions, up to 30 no-op actions (Mnih et al.
    2015) or starts sampled from human play (Nair et al. 2015), and the data set names the rows
    ``(noop)``/``noop`` and ``hs``; other rows do not say.

    Example:
        >>> [start_condition(n) for n in ("Rainbow (noop)", "DQN hs", "Prior noop", "MuZero")]
        ['no-op starts', 'human starts', 'no-op starts', 'unknown']
    """
    words = re.findall(r"[a-z0-9]+", algorithm.lower())
    if "noop" in words:
        return "no-op starts"
    if words and words[-1] == "hs":
        return "human starts"
    return "unknown"


def _dataset_protocol(algorithm: str) -> str:
    condition = start_condition(algorithm)
    if condition == "unknown":
        return "the paper's own; start condition unknown (the data set does not say)"
    return f"the paper's own, with {condition}"


@functools.lru_cache(maxsize=1)
def _dataset() -> tuple[dict[str, dict[str, float]], dict[str, str], dict[str, str]]:
    """``({algorithm: {game: raw score}}, {algorithm: citation}, {algorithm: its paper})``.

    From the shipped data set; an algorithm's paper is its rows' title (or source) there.
    Scores come through :func:`~arcadebench.benchmarks.subset.read_scores` (its row filters and
    game names) as normalised scores, and are turned back into raw scores with the data set's own
    constants (Eq. 2 inverted), rounded to 10 significant digits to drop the float noise.
    """
    table = read_scores(ATARI5_DATASET)
    scores: dict[str, dict[str, float]] = {}
    for i, algorithm in enumerate(table.algorithms):
        games = {}
        for j, game in enumerate(table.games):
            value = table.scores[i, j]
            if np.isnan(value) or game not in table.constants:
                continue
            random, human = table.constants[game]
            raw = random + value / 100.0 * abs(human - random)
            games[game] = float(f"{raw:.10g}")
        scores[algorithm] = games
    papers: dict[str, set[str]] = {}
    path = importlib.resources.files("arcadebench") / "data" / "atari5_dataset.csv"
    # newline="" as csv wants it; Traversable.open does not take it, TextIOWrapper does
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            title = (row.get("Paper Title") or "").strip()
            source = (row.get("Source") or "").strip()
            papers.setdefault((row.get("Algorithm") or "").strip(), set()).add(
                f'"{title}"' if title else f"source: {source}" if source else ""
            )
    citations, titles = {}, {}
    for algorithm in scores:
        found = sorted(p for p in papers.get(algorithm, ()) if p)
        origin = "; ".join(found) + ", " if found else ""
        condition = start_condition(algorithm)
        starts = (
            "start condition unknown"
            if condition == "unknown"
            else f"{condition}, as the data set names it"
        )
        citations[algorithm] = (
            f"{origin}as collected in {_DATASET_CITATION}. Published under the paper's own "
            f"evaluation protocol ({starts}), which may differ from this spec's"
        )
        titles[algorithm] = "; ".join(found)
    return scores, citations, titles


def _dataset_games(spec: Spec, games: Mapping[str, float]) -> dict[str, float]:
    out = {}
    for game, value in games.items():
        try:
            out[spec.resolve_game(game)] = value
        except UnknownGame:
            continue
    return out


# -- the catalogue --------------------------------------------------------------------------------


def _constant_scores(spec: Spec, column: str) -> dict[str, float]:
    return {
        game: float(value)
        for game, constants in spec.constants.items()
        if (value := constants.reference(column)) is not None
    }


def list_references(spec: Spec) -> list[Reference]:
    """Every reference a report on ``spec`` can show (``--references``), constants first."""
    refs: list[Reference] = []
    source = spec.constants_source or "constants"
    for column, label in _CONSTANT_NAMES.items():
        games = _constant_scores(spec, column)
        if games:
            refs.append(
                Reference(
                    f"{label} ({source})",
                    "constants",
                    f"{spec.name} spec constants, {source} of: {spec.citation}",
                    len(games),
                    work=spec.citation,
                    where=f"{spec.name} spec constants, {source}",
                )
            )
    for published in spec.published:
        obtained = f"; obtained under another protocol: {published.protocol}" * bool(
            published.protocol
        )
        for row in published.rows:
            refs.append(
                Reference(
                    f"{row} ({published.source})",
                    "published",
                    f"{published.source} of: {published.citation or spec.citation}{obtained}",
                    0,
                    published.protocol,
                    work=published.citation or spec.citation,
                    where=published.source,
                )
            )
    for result in spec.published_scores.values():
        obtained = f"; obtained under another protocol: {result.protocol}" * bool(result.protocol)
        refs.append(
            Reference(
                result.name,
                "published",
                f"{result.source}{obtained}",
                len(result.scores),
                result.protocol,
                where=result.source,
            )
        )
    if spec.platform == "atari":
        scores, citations, titles = _dataset()
        for algorithm, games in scores.items():
            n = len(_dataset_games(spec, games))
            if n:
                refs.append(
                    Reference(
                        algorithm,
                        "dataset",
                        citations[algorithm],
                        n,
                        _dataset_protocol(algorithm),
                        work=_DATASET_CITATION,
                        where=titles[algorithm],
                    )
                )
    return refs


def resolve_reference(spec: Spec, name: str) -> Reference:
    """The reference called ``name`` (case and punctuation ignored).

    Raises:
        UnknownReference: one line with the close matches and the list command.
    """
    refs = list_references(spec)
    key = _key(name)
    exact = [r for r in refs if _key(r.name) == key]
    if not exact:
        exact = [r for r in refs if _base_key(r.name) == key]
    if len(exact) == 1:
        return exact[0]
    if exact:
        raise UnknownReference(
            f"{name!r} names several references of the {spec.name!r} spec "
            f"({', '.join(repr(r.name) for r in exact)}); give the full name"
        )
    raise UnknownReference(
        f"{name!r} is not a reference of the {spec.name!r} spec.{_suggest(name, refs)} "
        f"List them with `arcadebench report --list-references {spec.name}`"
    )


def reference_entries(
    spec: Spec, names: Iterable[str], games: Collection[str] | None = None
) -> list[Entry]:
    """Scored :class:`Entry` objects of the named references (duplicates dropped, order kept).

    Args:
        spec: the spec to score against.
        names: reference names (see :func:`resolve_reference`).
        games: score per-game references on these games only (the games of the results they
            are compared with, so that every aggregate is over the same games); ``None``: all.
    """
    entries: list[Entry] = []
    for ref in dict.fromkeys(resolve_reference(spec, n) for n in names):
        entries.append(_entry(spec, ref, games))
    return entries


def _entry(spec: Spec, ref: Reference, only: Collection[str] | None) -> Entry:
    """A reference scored like results: over its runs where they are shipped, else its means.

    Per-game means (a paper's table, the data set, the constants) give the statistics over
    games only: the IQM and the optimality gap, over all runs, are left out rather than computed
    from means beside results' (``without_run_statistics``).
    """
    if ref.kind == "published" and not ref.games:
        return _published_entry(spec, ref)
    runs = False
    games: Mapping[str, float | list[float]]
    if ref.kind == "published":
        published = spec.published_scores[ref.name]
        games, runs = published.score_input(only), bool(published.per_run)
    elif ref.kind == "constants":
        column = next(c for c, label in _CONSTANT_NAMES.items() if ref.name.startswith(label))
        games = _constant_scores(spec, column)
    else:
        scores, _, _ = _dataset()
        games = _dataset_games(spec, scores[ref.name])
    if only is not None:
        games = {g: v for g, v in games.items() if g in only}
    block: Mapping[str, Any] = {"games": {}, "aggregates": {}}
    if games:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            block = score(spec, {ref.name: games}, reps=0).algorithms[ref.name]
        if not runs:
            block = {**block, "aggregates": without_run_statistics(block["aggregates"])}
    return Entry(ref.name, block, "reference", ref.citation, protocol=ref.protocol)


def _published_entry(spec: Spec, ref: Reference) -> Entry:
    """The aggregates of one printed row (Atari-5 Table 3, Sonic Table 1 with its errors...)."""
    for published in spec.published:
        row = ref.name.removesuffix(f" ({published.source})")
        if row != ref.name and row in published.rows:
            break
    else:  # a published reference is listed only from a spec's tables
        raise UnknownReference(f"{ref.name!r}: the {spec.name!r} spec publishes no such row")
    values = dict(zip(published.columns, published.rows[row], strict=True))
    aggregates: dict[str, Any] = {}
    errors: dict[str, tuple[float, float]] = {}
    for path, value in zip(published.paths, published.rows[row], strict=True):
        if path is None or value is None:
            continue
        target = aggregates
        for key in path[:-1]:
            target = target.setdefault(key, {})
        target[path[-1]] = float(value)
        error = values.get("error")  # Sonic Table 1: score +- error
        if path[-1] == "mean" and isinstance(error, int | float) and math.isfinite(error):
            errors[".".join(path)] = (float(value - error), float(value + error))
    return Entry(
        ref.name,
        {"games": {}, "aggregates": aggregates},
        "reference",
        ref.citation,
        per_game=False,
        errors=errors,
        protocol=ref.protocol,
    )
