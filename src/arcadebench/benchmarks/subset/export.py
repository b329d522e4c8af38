"""Export: :func:`to_yaml`, subsets and per-game models as a spec fragment like ``atari5.yaml``."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

import numpy as np

from arcadebench.benchmarks.subset.dataset import SubsetData
from arcadebench.benchmarks.subset.fit import SubsetFit
from arcadebench.benchmarks.subset.predictions import PredictionFit
from arcadebench.benchmarks.subset.score_table import ScoreTable
from arcadebench.errors import SubsetError
from arcadebench.specs.names import GAME_NAME, name_key

__all__ = [
    "to_yaml",
]


_YAML_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_YAML_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"})


def _yaml_str(text: str) -> str:
    if _YAML_PLAIN.fullmatch(text) and text.lower() not in _YAML_WORDS:
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _yaml_float(value: float, digits: int | None = None) -> str:
    if digits is not None:
        value = round(float(value), digits)
        return f"{0.0 if value == 0 else value:.{digits}f}"
    return np.format_float_positional(float(value), trim="0")


def _spec_game_names(games: Iterable[str]) -> dict[str, str]:
    names: dict[str, str] = {}
    used: dict[str, str] = {}
    for game in games:
        name = (
            game
            if GAME_NAME.fullmatch(game)
            else re.sub(r"[^A-Za-z0-9_.-]+", "_", game).strip("_.-") or "game"
        )
        key = name_key(name)
        if key in used:
            raise SubsetError(
                f"games {used[key]!r} and {game!r} have the same spec name {name!r}; rename one"
            )
        used[key] = game
        names[game] = name
    return names


def to_yaml(
    data: SubsetData | ScoreTable,
    subsets: Mapping[str, SubsetFit] | Iterable[SubsetFit],
    predictions: Iterable[PredictionFit] = (),
    *,
    name: str | None = None,
    title: str | None = None,
    citation: str | None = None,
    digits: int = 4,
) -> str:
    """Write subsets (Table 9) and per-game models (Tables 10-11) as YAML like ``atari5.yaml``.

    The fragment has ``constants`` (the table's random/human constants; ``[0.0, 100.0]`` when the
    input was already normalised, so spec scoring passes normalised scores through), ``subsets``
    (coefficients to ``digits`` decimals; ``r2`` and ``relative_error`` are the cross-validated
    Table 2 figures) and ``predictions``. With ``name`` it is a complete ``platform: none`` spec
    that :func:`arcadebench.load_spec` reads. Game names a spec cannot hold (spaces, ``*``) are
    written with ``_``; any spelling resolves to them.

    Args:
        data: the data the fits came from (for the constants and the source).
        subsets: fits (each needs a ``name``) or ``name -> fit``.
        predictions: per-game models to include.
        name: write a complete spec with this name (lower-case letters, digits, ``_``, ``-``).
        title: the spec's title (default: generated).
        citation: the spec's citation (default: the Atari-5 method and the data source).
        digits: decimals of the coefficients (Table 9 has 4).

    Raises:
        SubsetError: an unnamed fit, a bad spec name, or two games with one spec name.
    """
    table = data.table if isinstance(data, SubsetData) else data
    if not isinstance(digits, int) or not 1 <= digits <= 12:
        raise SubsetError(f"`digits` must be an integer in [1, 12], got {digits!r}")
    fits = (
        [fit.renamed(key) for key, fit in subsets.items()]
        if isinstance(subsets, Mapping)
        else list(subsets)
    )
    named: list[tuple[str, SubsetFit]] = []  # (name, fit): the name checked once, here
    for fit in fits:
        if not fit.name:
            raise SubsetError(
                f"every subset needs a name (use fit.renamed('X-5')), got {fit.games!r} without one"
            )
        if fit.intercept is not None:
            raise SubsetError(
                f"subset {fit.name!r} has an intercept; a spec subset has none (Section 4.3)"
            )
        named.append((fit.name, fit))
    if name is not None and not re.fullmatch(r"[a-z][a-z0-9_-]*", name):
        raise SubsetError(
            "`name` must be lower-case letters, digits, '_' or '-', starting with a letter, got "
            f"{name!r}"
        )
    spec_names = _spec_game_names(table.games)
    out: list[str] = []
    if name is not None:
        prefix = "".join(part.capitalize() for part in re.split(r"[_-]+", name) if part)
        out += [
            f"name: {_yaml_str(name)}",
            f"id_prefix: {prefix}",
            f"title: {_yaml_str(title or f'{name}: representative subsets (arcadebench subset)')}",
            "version: 1",
            "citation: "
            + _yaml_str(
                citation
                or (
                    "Subsets chosen with the method of Aitchison, Sweetser and Hutter (2023), "
                    "Atari-5: "
                    "Distilling the Arcade Learning Environment down to Five Games (ICML); data: "
                    f"{table.source}."
                )
            ),
            "platform: none",
            "",
        ]
    out.append(
        f"# Normalisation constants of {table.source} (Eq. 2: 100 (x - random) / (human - random))."
    )
    if not table.constants:
        out.append(
            "# The scores were already normalised: random 0 and human 100 leave them unchanged."
        )
    out += [
        "constants:",
        f"  source: {_yaml_str(table.source)}",
        "  columns: [random, human]",
        "  rows:",
    ]
    width = max(len(_yaml_str(spec_names[g])) for g in table.games) + 1
    for game in table.games:
        random, human = table.constants.get(game, (0.0, 100.0))
        key = (_yaml_str(spec_names[game]) + ":").ljust(width)
        out.append(f"    {key} [{_yaml_float(random)}, {_yaml_float(human)}]")
    out += [
        "",
        "# Best subsets (Algorithm 1): weights on log10(1 + max(0, score)), no intercept; r2 and",
        "# relative_error are the k-fold cross-validated figures (Table 2).",
        "subsets:",
    ]
    for subset_name, fit in named:
        games = ", ".join(_yaml_str(spec_names[g]) for g in fit.games)
        out += [
            f"  {_yaml_str(subset_name)}:",
            f"    games: [{games}]",
            f"    coefficients: [{', '.join(_yaml_float(c, digits) for c in fit.coefficients)}]",
        ]
        if math.isfinite(fit.cv_r2) and 0.0 <= round(fit.cv_r2, 3) <= 1.0:
            out.append(f"    r2: {_yaml_float(fit.cv_r2, 3)}")
        out.append(f"    relative_error: {_yaml_float(fit.cv_relative_error, 1)}")
    predictions = list(predictions)
    if predictions:
        out += [
            "",
            "# Per-game models (Tables 10-11): log10(1 + s) = c + sum x_i log10(1 + s_i); rows are",
            "# [c, x_1, ..., x_n] in the order of `inputs`.",
            "predictions:",
        ]
        for pred in predictions:
            inputs = ", ".join(_yaml_str(spec_names[g]) for g in pred.inputs)
            out += [
                f"  {_yaml_str(pred.name)}:",
                f"    source: {_yaml_str(f'fitted on {table.source}')}",
                f"    inputs: [{inputs}]",
                "    models:",
            ]
            width = max(len(_yaml_str(spec_names[g])) for g in pred.models) + 1
            for game, model in pred.models.items():
                key = (_yaml_str(spec_names[game]) + ":").ljust(width)
                out.append(
                    f"      {key} [{', '.join(_yaml_float(c, digits) for c in model.coefficients)}]"
                )
    if name is not None:
        out += [
            "",
            "scoring:",
            "  normalised:",
            "    hns: {reference: human}",
            '  log_transform: "log10(1 + max(0, x))"',
        ]
    return "\n".join(out) + "\n"
