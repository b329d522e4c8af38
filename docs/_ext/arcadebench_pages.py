"""Pages of the site written from the code at every build, so that they cannot drift from it.

- ``_generated/protocols/<spec>.md``: a page per built-in protocol from its spec: the protocol
  card (the settings ``arcadebench show`` prints), the notes where the spec chose between a
  paper's text and its code, the games and their selections, the published references, how it
  differs from each other protocol (``arcadebench diff``: the settings that change scores), and
  the spec file itself, whose comments cite the paper's table for every number.
- ``_generated/api.md``: autodoc entries for every name of ``arcadebench.__all__`` (and the
  lazily imported ``make_sb3_vec_env``), and the classes they return.

A Sphinx extension: ``setup`` connects the writer to ``builder-inited``, before Sphinx reads the
sources. ``_generated/`` is not committed.
"""

from __future__ import annotations

import inspect
import os
import pkgutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sphinx.ext.autodoc.mock import mock  # type: ignore[attr-defined]  # re-exported (Sphinx 9)

import arcadebench
from arcadebench.specs import list_specs, load_spec
from arcadebench.specs.card import protocol_card
from arcadebench.specs.diff import diff
from arcadebench.specs.model import Spec
from arcadebench.specs.names import display_name

DOCS = Path(__file__).resolve().parents[1]
GENERATED = DOCS / "_generated"
SPEC_FILES = Path(arcadebench.__file__).resolve().parent / "specs"

# the public API's names by what they are for, in the order of the work; every name of
# arcadebench.__all__ must be in one (write_api refuses a new name left out)
API_GROUPS: dict[str, tuple[str, ...]] = {
    "Protocols": ("load_spec", "list_specs", "Spec", "diff", "SpecDiff"),
    "Environments": ("make", "make_vec", "env_id", "levels", "monitor", "make_sb3_vec_env"),
    "Agents and running": (
        "evaluate",
        "Agent",
        "ActingAgent",
        "LearningAgent",
        "PredictingAgent",
        "BatchedAgent",
    ),
    "Scores and reports": ("score", "report"),
    "Trust": ("verify", "check", "audit"),
    "Errors": ("ArcadebenchError", "SpecError"),
}
RETURNED: dict[str, tuple[str, ...]] = {
    "What the API returns": (
        "arcadebench.benchmarks.scoring.results.Results",
        "arcadebench.benchmarks.scoring.sample_efficiency.ReferenceCurve",
        "arcadebench.benchmarks.replay.verify.Verification",
        "arcadebench.benchmarks.conformance.suite.CheckReport",
        "arcadebench.benchmarks.audit.findings.AuditReport",
        "arcadebench.specs.diff.Row",
        "arcadebench.benchmarks.envs.sonic.LevelRecord",
        "arcadebench.wrappers.monitor.EpisodeMonitor",
        "arcadebench.wrappers.vector.VectorEpisodeMonitor",
        "arcadebench.benchmarks.training.sb3.ProtocolVecEnv",
        "arcadebench.records.live.Relay",
    ),
    "What a spec holds": (
        "arcadebench.specs.model.AtariSettings",
        "arcadebench.specs.model.RetroSettings",
        "arcadebench.specs.model.GameConstants",
        "arcadebench.specs.model.Scoring",
        "arcadebench.specs.model.Evaluation",
        "arcadebench.specs.model.Subset",
        "arcadebench.specs.model.PredictionModels",
        "arcadebench.specs.model.RetroGame",
        "arcadebench.specs.model.Level",
        "arcadebench.specs.model.Published",
        "arcadebench.specs.model.PublishedScores",
    ),
}
"""Classes the API returns or its objects hold, documented with their members beside it."""
INTERNALS_SKIPPED = ("arcadebench.__main__",)
"""Modules with nothing to document (the ``python -m arcadebench`` entry point)."""


def _cell(text: object) -> str:
    """A Markdown table cell: pipes escaped, one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = [f"| {' | '.join(header)} |", f"|{'|'.join('---' for _ in header)}|"]
    lines += [f"| {' | '.join(_cell(c) for c in row)} |" for row in rows]
    return [*lines, ""]


def protocol_page(spec: Spec, others: list[Spec]) -> str:
    """The Markdown page of ``spec`` (module docstring)."""
    lines = [
        f"# {spec.title}",
        "",
        f"`{spec.name}` v{spec.version}, content hash `{spec.hash}`. {spec.citation}"
        + (f" <{spec.url}>" if spec.url else ""),
        "",
        "```sh",
        f"arcadebench show {spec.name}   # this page's settings, in a terminal",
        "```",
        "",
    ]
    for section, rows in protocol_card(spec).items():
        lines += [f"## {section}", "", *_table(("setting", "value"), rows)]
    if spec.notes:
        lines += ["## Where the spec chose", ""]
        lines += [f"- **{topic}**: {text}" for topic, text in spec.notes] + [""]
    lines += _games(spec)
    if spec.reference_names():
        lines += ["## Published references", ""]
        rows = [
            (name, spec.reference_protocol(name) or f"this protocol ({spec.name})")
            for name in spec.reference_names()
        ]
        lines += _table(("reference", "obtained under"), rows)
        lines += [
            f"Shown beside results with `--references` (`arcadebench report --list-references "
            f"{spec.name}` cites each). The first {len(spec.default_references())} are the "
            "default of the paper tables and the report.",
            "",
        ]
    lines += ["## Against the other protocols", ""]
    against: list[tuple[str, str, str]] = []
    for other in others:
        changing = diff(spec, other).score_changing
        listed = "; ".join(f"{row.setting}: {row.a} vs {row.b}" for row in changing[:4])
        more = f"; and {len(changing) - 4} more" if len(changing) > 4 else ""
        against.append((f"[{other.name}]({other.name}.md)", str(len(changing)), listed + more))
    lines += _table(("protocol", "settings that change scores", "first of them"), against)
    lines += [
        f"`arcadebench diff {spec.name} <other>` prints every difference.",
        "",
        "## The spec file",
        "",
        "Every number above comes from this file; its comments cite the paper's table or section.",
        "",
        f"```{{literalinclude}} {_relative(SPEC_FILES / (spec.name + '.yaml'))}",
        ":language: yaml",
        "```",
        "",
    ]
    return "\n".join(lines)


def _relative(path: Path) -> str:
    """``path`` from a protocol page's folder: Sphinx reads an absolute path from the sources'."""
    return os.path.relpath(path, GENERATED / "protocols")


def _games(spec: Spec) -> list[str]:
    lines = [f"## {'Levels' if spec.levels else 'Games'} ({len(spec.games)})", ""]
    if spec.levels:
        for split in ("train", "test"):
            names = [level.name for level in spec.levels.values() if level.split == split]
            lines += [f"**{split}** ({len(names)}): " + ", ".join(f"`{n}`" for n in names), ""]
        return lines
    names = [display_name(game) for game in spec.games]
    lines += [", ".join(names), ""]
    if spec.default_games != spec.games:
        default = ", ".join(display_name(g) for g in spec.default_games)
        lines += [f"Played by default (`arcadebench run {spec.name}`): {default}.", ""]
    for subset in spec.subsets.values():
        chosen = ", ".join(display_name(g) for g in subset.games)
        lines += [f"- `{subset.name}`: {chosen}"]
    return [*lines, ""] if spec.subsets else lines


def write_protocols() -> list[str]:
    """Write every built-in protocol's page and their index; returns the page names."""
    specs = [load_spec(name) for name in list_specs()]
    folder = GENERATED / "protocols"
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for spec in specs:
        others = [s for s in specs if s is not spec and s.platform == spec.platform]
        _write(folder / f"{spec.name}.md", protocol_page(spec, others))
        rows.append((f"[{spec.name}]({spec.name}.md)", spec.title, str(len(spec.games))))
    index = ["# Protocols", "", "Each page is generated from the protocol's spec.", ""]
    index += _table(("spec", "protocol", "games or levels"), rows)
    index += ["```{toctree}", ":hidden:", "", *(s.name for s in specs), "```", ""]
    _write(folder / "index.md", "\n".join(index))
    return [s.name for s in specs]


def write_api() -> None:
    """Write the API reference page: every public name, grouped (module docstring)."""
    public = set(arcadebench.__all__) - {"__version__"} | {"make_sb3_vec_env"}
    grouped = {name for names in API_GROUPS.values() for name in names}
    if public - grouped:
        raise RuntimeError(f"docs/_ext: public names in no API group: {sorted(public - grouped)}")
    lines = [
        "# API reference",
        "",
        "Everything below is importable from `arcadebench` (`import arcadebench`); the pages "
        "are generated from the docstrings.",
        "",
    ]
    for group, names in API_GROUPS.items():
        lines += [f"## {group}", ""]
        for name in names:
            lines += [_autodoc(name), ""]
    for group, paths in RETURNED.items():
        lines += [f"## {group}", ""]
        lines += [f"- {{py:class}}`{path}`" for path in paths] + [""]
    GENERATED.mkdir(parents=True, exist_ok=True)
    _write(GENERATED / "api.md", "\n".join(lines))


def write_modules() -> list[str]:
    """Write a page per package part, every module's docstrings in it, for developers.

    The API reference links into these pages (a docstring names ``messages.JobDone`` or
    ``InvalidArgument``), and the strict build fails on a name no module documents. One page
    per part of the package (``records``, ``benchmarks.runner``...), not per module: a site of
    many pages spends most of its build on each page's navigation.
    """
    folder = GENERATED / "modules"
    folder.mkdir(parents=True, exist_ok=True)
    parts: dict[str, list[str]] = {}
    for info in pkgutil.walk_packages(arcadebench.__path__, "arcadebench."):
        if info.name not in INTERNALS_SKIPPED:
            parts.setdefault(_part(info.name, info.ispkg), []).append(info.name)
    for part, names in parts.items():
        page = [f"# `{part}`", ""]
        for name in sorted(names):
            page += [f"## `{name}`", "", "```{eval-rst}", f".. automodule:: {name}"]
            page += ["   :members:", "   :ignore-module-all:", "```", ""]  # its own members
        _write(folder / f"{part}.md", "\n".join(page))
    index = ["# Modules", "", "Every module of the package, for those who extend it.", ""]
    index += ["```{toctree}", ":maxdepth: 1", "", *sorted(parts), "```", ""]
    _write(folder / "index.md", "\n".join(index))
    return sorted(parts)


def _part(module: str, package: bool) -> str:
    """The page a module is on: ``arcadebench.benchmarks.runner.plan`` -> its stage's.

    Example:
        >>> _part("arcadebench.benchmarks.runner.plan", False), _part("arcadebench.errors", False)
        ('arcadebench.benchmarks.runner', 'arcadebench')
    """
    words = module.split(".")
    depth = 3 if words[1] == "benchmarks" else 2
    if len(words) > depth or (len(words) == depth and package):
        return ".".join(words[:depth])
    return "arcadebench" if len(words) == 2 else module


def _autodoc(name: str) -> str:
    """The autodoc directive of a public name: a class, a function, or data (a type alias)."""
    obj: Any = getattr(arcadebench, name)
    if inspect.isclass(obj):
        directive, option = "autoclass", "\n   :members:"
    elif inspect.isroutine(obj):
        directive, option = "autofunction", ""
    else:  # Agent: the union of what evaluate() takes
        directive, option = "autodata", "\n   :no-value:"
    return f"```{{eval-rst}}\n.. {directive}:: arcadebench.{name}{option}\n```"


def _generate(app: Any) -> None:
    before = set(GENERATED.rglob("*.md"))
    write_protocols()
    with mock(app.config.autodoc_mock_imports):  # the API names an optional extra's objects
        write_api()
        write_modules()
    for page in before - _written:  # a page of a module since gone goes too
        page.unlink(missing_ok=True)


_written: set[Path] = set()


def _write(path: Path, text: str) -> None:
    """Write a page only when it changes: Sphinx rereads what is newer, two builds agree."""
    _written.add(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def resolve_short_name(app: Any, env: Any, node: Any, contnode: Any) -> Any:
    """Resolve a Python reference by the one documented object its name ends with.

    The docstrings name objects as their modules see them (``InvalidArgument``,
    ``messages.JobDone``, ``Results``); Sphinx looks only in the referring module. A name that
    ends exactly one documented object's full name, of a kind the role can name, is that
    object (an alias, ``arcadebench.Spec`` of ``arcadebench.specs.model.Spec``, counts once);
    any other stays unresolved, and the strict build fails on it.
    """
    if node.get("refdomain") != "py":
        return None
    domain = env.get_domain("py")
    kind = node.get("reftype", "obj")
    target = node["reftarget"].lstrip("~.")
    kinds = set(domain.objtypes_for_role(kind) or domain.object_types)
    named = [
        n for n, entry in domain.objects.items() if entry.objtype in kinds and not entry.aliased
    ]
    found = [n for n in named if n == target or n.endswith("." + target)]
    if not found and "." in target:  # another module's path to it: arcadebench.specs.Spec
        last = target.rsplit(".", 1)[-1]
        found = [n for n in named if n.rsplit(".", 1)[-1] == last]
    if len(found) != 1:
        return None
    return domain.resolve_xref(env, node["refdoc"], app.builder, kind, found[0], node, contnode)


def skip_public(app: Any, what: str, name: str, obj: Any, skip: bool, options: Any) -> bool | None:
    """Leave the public API's objects to the API page: documented once, under ``arcadebench.``."""
    if what == "module" and any(obj is getattr(arcadebench, n, None) for n in _PUBLIC):
        return True
    return None


_PUBLIC = tuple(n for n in arcadebench.__all__ if n != "__version__")


def setup(app: Any) -> dict[str, Any]:
    """The Sphinx extension: write the pages before the sources are read; resolve short names."""
    app.connect("builder-inited", _generate)
    app.connect("missing-reference", resolve_short_name)
    app.connect("autodoc-skip-member", skip_public)
    return {"parallel_read_safe": True, "version": arcadebench.__version__}
