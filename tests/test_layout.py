"""The package's shape is checked, not hoped for (DEVELOPING.md, "The map").

Imports go down only — errors, specs and records at the bottom, wrappers above them, the
benchmark stages above those, the CLI on top — with no cycle anywhere, function-level imports
included: the import-linter contracts in pyproject.toml say so and ``lint-imports`` checks them.
Module names are unique, so "where is X" has one answer, and every module says what it is for.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

from testdata import REPO

PACKAGE = REPO / "src" / "arcadebench"
MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_import_linter_contracts_hold():
    done = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout and "broken" not in done.stdout.replace("0 broken", "")


def test_the_contracts_cover_every_room_and_stage():
    text = (REPO / "pyproject.toml").read_text()
    rooms = [p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    stages = [p.name for p in (PACKAGE / "benchmarks").iterdir() if (p / "__init__.py").exists()]
    for room in rooms:
        assert f'"arcadebench.{room}"' in text, room
    for stage in stages:
        assert f"arcadebench.benchmarks.{stage}" in text, stage


def test_no_two_modules_share_a_name():
    names = Counter(
        (path.parent.name if path.name == "__init__.py" else path.stem) for path in MODULES
    )
    shared = {name: n for name, n in names.items() if n > 1 and name != "__main__"}
    assert not shared, shared


def _assigned_names(node: ast.stmt) -> set[str]:
    if isinstance(node, ast.Assign):
        return {getattr(target, "id", "") for target in node.targets}
    if isinstance(node, ast.AnnAssign):
        return {getattr(node.target, "id", "")}
    return set()


def test_every_module_has_a_docstring_and_a_public_list():
    for path in MODULES:
        tree = ast.parse(path.read_text())
        assert ast.get_docstring(tree), path
        if path.name not in ("__main__.py", "_version.py"):
            assert any("__all__" in _assigned_names(node) for node in tree.body), path
