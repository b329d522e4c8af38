"""A results file verified as a whole: its logs found beside it, every number in it recomputed.

Verifying episodes shows that they happened; a results file is what a paper quotes, and it is
an edit away from saying something else (a Breakout score of 400 next to logs of 1.5). So every
number of it (per-game scores, runs, episode counts, aggregates, classes, subset estimates,
checkpoints, curves, probabilities of improvement, and the intervals, which are deterministic
given the recorded bootstrap seed) is recomputed by this version's scorer from the very inputs
and arguments it records, and compared: floats within :data:`RELATIVE_TOLERANCE` of each other,
everything else exactly. Each difference is named (field, claimed, recomputed).

The inputs are found beside the results file, never from the current directory (a reviewer
standing in a folder with its own ``results/`` must not verify their own logs): format 2 records
them relative to the file; for format 1, which recorded them as its scorer was given them, they
are looked for under the file's folder, dropping as many leading parts of the recorded paths as
makes every input exist there (a copied ``arcadebench run --out res`` folder records
``res/random/saber/pong/0.jsonl`` and holds ``random/saber/pong/0.jsonl``), and the table says so.

Classes: ResultsClaim, ResultsCheck.
Functions: read_claim, check_results.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arcadebench.benchmarks.replay.logs import log_header
from arcadebench.benchmarks.scoring.inputs import spec_of_log
from arcadebench.benchmarks.scoring.results import results_inputs, score
from arcadebench.errors import ArcadebenchError, first_line
from arcadebench.specs import Spec, list_specs, load_spec

__all__ = [
    "RELATIVE_TOLERANCE",
    "ResultsCheck",
    "ResultsClaim",
    "check_results",
    "named_spec",
    "read_claim",
]

RELATIVE_TOLERANCE = 1e-9
"""How far a recomputed float may be from the claimed one (the scorer is deterministic, so this
only absorbs another machine's last bits of floating point)."""

_MAX_RESULTS_BYTES = 256 * 2**20


@dataclass(frozen=True)
class ResultsClaim:
    """A results file and the inputs it was scored from, found beside it.

    Attributes:
        path: the results file.
        document: its JSON (``None`` when it could not be read).
        inputs: its inputs, where they are now.
        logs: the episode logs among them (a directory's logs of the results' spec).
        agent: the agent a runner's results file says played (its logs' ``algorithm``).
        episodes: the episodes each of its jobs was asked for (the runner's ``--episodes``).
        jobs: the ``(game, seed)`` jobs the runner says it ran for the agent.
        note: how format-1 inputs were found.
        missing: recorded inputs found nowhere beside it.
        unreadable: why the file could not be read as results.
    """

    path: Path
    document: Mapping[str, Any] | None = None
    inputs: list[Path] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)
    agent: str | None = None
    episodes: int | None = None
    jobs: list[tuple[str, str]] = field(default_factory=list)
    note: str | None = None
    missing: list[str] = field(default_factory=list)
    unreadable: str | None = None


@dataclass(frozen=True)
class ResultsCheck:
    """A results file's numbers recomputed from its inputs, and where they differ.

    Attributes:
        path: the results file.
        compared: how many values were compared.
        differences: ``[field, claimed, recomputed]`` of each value that differs.
        problems: what else keeps it from being verified (inputs that are score tables, a
            scorer's refusal).
        note: how its inputs were found.
        unreadable: why it could not be read, or its missing inputs.
    """

    path: str
    compared: int = 0
    differences: list[list[Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    note: str | None = None
    unreadable: str | None = None

    @property
    def ok(self) -> bool:
        """Whether every number was recomputed and equals the claimed one."""
        return self.unreadable is None and not self.problems and not self.differences

    def summary(self) -> str:
        """One line (and one per difference, at most five) for the table."""
        head = f"{self.path}: "
        if self.unreadable is not None:
            return head + f"unreadable: {self.unreadable}"
        lines = []
        if self.differences:
            lines.append(
                head + f"{len(self.differences):,} of {self.compared:,} values differ from "
                "their recomputation from its logs:"
            )
            lines.extend(
                f"  {name}: claimed {_shown(claimed)}, recomputed {_shown(found)}"
                for name, claimed, found in self.differences[:5]
            )
            if len(self.differences) > 5:
                lines.append(f"  (and {len(self.differences) - 5} more: --json lists them all)")
        else:
            lines.append(head + f"all {self.compared:,} values recomputed from its logs and equal")
        lines.extend(f"  {problem}" for problem in self.problems)
        if self.note:
            lines.append(f"  ({self.note})")
        return "\n".join(lines)


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def read_claim(path: str | os.PathLike[str]) -> ResultsClaim:
    """The results file at ``path`` and its inputs, found beside it (module docstring).

    Never raises for a damaged file or missing inputs: the claim says why (``unreadable``,
    ``missing``), and verifying it then exits 2.
    """
    file = Path(path)
    try:
        if file.stat().st_size > _MAX_RESULTS_BYTES:
            raise ArcadebenchError(f"{file} is over {_MAX_RESULTS_BYTES:,} bytes: no results file")
        recorded, version = results_inputs(file)
        document = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        return ResultsClaim(file, unreadable=first_line(error))
    except ArcadebenchError as error:
        return ResultsClaim(file, unreadable=str(error))
    labels = [str(p) for p in recorded if _is_label(p)]
    paths = [p for p in recorded if not _is_label(p)]
    if version >= 2:
        inputs, note = paths, None
        missing = [str(p) for p in paths if not p.exists()]
    else:
        inputs, note, missing = _format_one_inputs(paths, file.parent)
    name = document.get("spec", {}).get("name") if isinstance(document, dict) else None
    logs = [log for item in inputs if item.exists() for log in _logs_of(item, name)]
    provenance = document.get("provenance") if isinstance(document, dict) else None
    run = provenance if isinstance(provenance, dict) else {}
    episodes, player = run.get("episodes"), run.get("agent")
    games, seeds = run.get("games"), run.get("seeds")
    jobs = (
        [(str(g), str(s)) for g in games for s in seeds]
        if isinstance(games, list) and isinstance(seeds, list)
        else []
    )
    return ResultsClaim(
        file,
        document,
        inputs,
        logs,
        player if isinstance(player, str) else None,
        episodes if type(episodes) is int and episodes > 0 else None,
        jobs,
        note,
        missing + [f"{label} (an in-memory mapping, not a file)" for label in labels],
    )


def _is_label(path: Path) -> bool:
    text = str(path)
    return text.startswith("<") and text.endswith(">")


def _logs_of(item: Path, spec: Any) -> list[Path]:
    """The episode logs an input is: itself, or a directory's logs of the results' spec."""
    if item.is_dir():
        return [p for p in sorted(item.rglob("*.jsonl")) if spec_of_log(p) in (spec, None)]
    return [item] if item.suffix == ".jsonl" else []


def _format_one_inputs(
    recorded: list[Path], folder: Path
) -> tuple[list[Path], str | None, list[str]]:
    """Format-1 inputs under ``folder``: the fewest leading parts dropped that find them all."""
    parts = [p.parts[1:] if p.is_absolute() else p.parts for p in recorded]
    longest = max((len(p) for p in parts), default=0)
    for dropped in range(longest):
        if any(len(p) <= dropped for p in parts):
            break
        found = [folder.joinpath(*p[dropped:]) for p in parts]
        if all(f.exists() for f in found):
            how = f"format-1 results: their inputs were found under {folder}"
            if dropped:
                how += f", the first {dropped} part(s) of each recorded path dropped"
            return found, how, []
    return [], None, [str(p) for p in recorded]


def check_results(claim: ResultsClaim, given: Spec | None = None) -> ResultsCheck:
    """Recompute every number of ``claim`` from its inputs; what differs (module docstring).

    Args:
        claim: the results file and its inputs.
        given: the spec file passed for results of a spec that is not built in.
    """
    path = str(claim.path)
    if claim.unreadable is not None or claim.document is None:
        return ResultsCheck(path, unreadable=claim.unreadable or "not read")
    if claim.missing:
        shown = ", ".join(claim.missing[:3]) + (" ..." if len(claim.missing) > 3 else "")
        return ResultsCheck(
            path,
            note=claim.note,
            unreadable=f"its inputs are not beside it: {shown}; verify the logs themselves",
        )
    document = claim.document
    spec, problem = _spec(document, given)
    if spec is None:
        return ResultsCheck(path, note=claim.note, unreadable=problem)
    problems = [problem] if problem else []
    logs = set(claim.logs)
    tables = [str(p) for p in claim.inputs if p.is_file() and p not in logs]
    problems.extend(
        f"{table} is a score table: its numbers are re-scored, not re-simulated" for table in tables
    )
    provenance = document.get("provenance")
    failures = provenance.get("failures") if isinstance(provenance, dict) else None
    if failures:
        problems.append(f"the run's jobs failed: {'; '.join(map(str, failures))[:200]}")
    absent = _jobs_without_logs(claim)
    if absent:
        problems.append(
            f"the run says {claim.agent} played {', '.join(absent[:4])}"
            + (f" and {len(absent) - 4} more" if len(absent) > 4 else "")
            + ", whose logs are not among its inputs: a job was dropped"
        )
    recorded = document.get("settings")
    settings: Mapping[str, Any] = recorded if isinstance(recorded, dict) else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            recomputed = score(
                spec,
                [str(p) for p in claim.inputs],
                ci=settings.get("ci", 0.95),
                reps=settings.get("reps", 2000),
                seed=settings.get("seed", 0),
                compare=_compare(document, settings),
                curve=_curve(document, settings),
            )
    except Exception as error:  # its settings are someone else's input: a refusal is a problem
        problems.append(f"its inputs cannot be scored again: {first_line(error)}")
        return ResultsCheck(path, problems=problems, note=claim.note)
    claimed = {k: v for k, v in document.items() if k not in ("format", "provenance")}
    found = json.loads(recomputed.to_json())
    found = {k: v for k, v in found.items() if k not in ("format", "provenance")}
    for key in ("curve", "compare"):  # not recorded before format 2
        if key not in settings:
            found.get("settings", {}).pop(key, None)
    compared, differences = 0, []
    for name, left, right in _leaves(claimed, found):
        compared += 1
        if not _same(left, right):
            differences.append([name, left, right])
    return ResultsCheck(path, compared, differences, problems, claim.note)


def _jobs_without_logs(claim: ResultsClaim) -> list[str]:
    """The runner's jobs (``game/seed``) for its agent that no input log is of."""
    if claim.agent is None or not claim.jobs:
        return []
    found = set()
    for log in claim.logs:
        header = log_header(log)
        if header.get("algorithm") == claim.agent:
            found.add((str(header.get("game")), str(header.get("run")).removesuffix(".eval")))
    return [f"{game}/{seed}" for game, seed in claim.jobs if (game, seed) not in found]


def named_spec(name: object, given: Spec | None) -> tuple[Spec | None, str]:
    """The spec a results file or a log names, or ``None`` and why.

    ``given`` (a YAML spec passed with ``--spec``) if it has that name, else the built-in one.
    """
    if given is not None and given.name == name:
        return given, ""
    if isinstance(name, str) and name in list_specs():
        return load_spec(name), ""
    return None, f"its spec {name!r} is not built in: pass its YAML file (--spec)"


def _spec(document: Mapping[str, Any], given: Spec | None) -> tuple[Spec | None, str]:
    """The spec the results were scored with, or why there is none here."""
    named = document.get("spec")
    name = named.get("name") if isinstance(named, dict) else None
    hash_ = named.get("hash") if isinstance(named, dict) else None
    spec, problem = named_spec(name, given)
    if spec is None:
        return None, problem
    if hash_ != spec.hash:
        return spec, (
            f"it was scored with spec hash {hash_!r}, {spec.name} is {spec.hash!r}: another "
            "version of the spec"
        )
    return spec, ""


def _compare(document: Mapping[str, Any], settings: Mapping[str, Any]) -> Any:
    """The pairs compared: as recorded (format 2), else those the results hold."""
    if "compare" in settings:
        return [tuple(pair) for pair in settings["compare"]]
    pairs = [(c.get("x"), c.get("y")) for c in document.get("comparisons", []) or []]
    return pairs or None


def _curve(document: Mapping[str, Any], settings: Mapping[str, Any]) -> Any:
    """The curve asked for: as recorded (format 2), else whether the results have one."""
    if "curve" in settings:
        return settings["curve"]
    algorithms = document.get("algorithms", {})
    return any(isinstance(e, dict) and "curve" in e for e in algorithms.values())


def _leaves(left: Any, right: Any, name: str = "") -> Iterator[tuple[str, Any, Any]]:
    """Every value of two documents side by side (a missing one is ``<absent>``)."""
    if isinstance(left, dict) and isinstance(right, dict):
        for key in dict.fromkeys([*left, *right]):
            yield from _leaves(
                left.get(key, _ABSENT), right.get(key, _ABSENT), f"{name}.{key}" if name else key
            )
    elif isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            yield from _leaves(a, b, f"{name}[{i}]")
    else:
        yield name, left, right


_ABSENT = "<absent>"


def _same(claimed: Any, recomputed: Any) -> bool:
    """Equal, floats within :data:`RELATIVE_TOLERANCE`."""
    if type(claimed) in (int, float) and type(recomputed) in (int, float):
        if claimed == recomputed:
            return True
        scale = max(abs(claimed), abs(recomputed))
        return math.isfinite(scale) and abs(claimed - recomputed) <= RELATIVE_TOLERANCE * scale
    return bool(claimed == recomputed) and type(claimed) is type(recomputed)
