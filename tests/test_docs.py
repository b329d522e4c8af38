"""Docs that run, and generated pages that are up to date.

Every code block of the README runs, top to bottom, as a new user pastes them.

Python blocks run as scripts with the package installed; shell blocks run command by command
in one directory (the one a reader would be in), with ``arcadebench`` on the PATH. Each command
must exit as the README says (0 unless a ``docs: exit=N`` comment says otherwise), print no
traceback and no emulator banner, and an output shown under a command (``docs: output``) must
be what it printed, line for line where the README does not elide with ``...``. See
``tests/docs_blocks.py`` for the comments that steer a block.

Followed to the end, the README leaves in the reader's clone only what ``.gitignore`` declares
(``git status`` stays clean), and no example changes the quick start's table (the ``evaluate``
example's runs, added to its random column, would move the median 10.45 % -> 4.30 %).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

from docs_blocks import Block, blocks
from testdata import REPO, docs_generator

README = REPO / "README.md"
BIN = Path(sys.executable).parent
# placeholders a reader fills in, and what the suite fills in: an empty directory of ROMs
PLACEHOLDERS = {"<dir with the ROMs>": "no-roms"}


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = re.sub(r"^python3 dev\.py ", "arcadebench ", command)  # dev.py runs `arcadebench`
    for placeholder, value in PLACEHOLDERS.items():
        command = command.replace(placeholder, value)
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "COLUMNS": "200"}
    env.pop("ARCADEBENCH_LOG_DIR", None)
    return subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def matches(shown: str, printed: str) -> bool:
    """Whether ``printed`` has the lines of ``shown`` in order (``...`` skips any lines)."""
    lines = [line.rstrip() for line in printed.splitlines()]
    at = 0
    for want in (line.rstrip() for line in shown.splitlines()):
        if want == "...":
            continue
        try:
            at = lines.index(want, at) + 1
        except ValueError:
            return False
    return True


def where(block: Block) -> str:
    return f"README.md:{block.line}"


# what the test itself puts in the reader's directory, beside what the README's blocks write
TEST_FILES = ["/.gitignore", "/.venv", "/examples", "/no-roms/", "/readme_*.py"]


def undeclared(directory: Path) -> list[str]:
    """What the README left in ``directory`` that the clone's ``.gitignore`` does not declare.

    The directory is made a git work tree with the clone's ``.gitignore``: ``git status`` of a
    clone followed the README through lists exactly these (the test's own files aside).
    """
    shutil.copy(REPO / ".gitignore", directory / ".gitignore")
    subprocess.run(["git", "init", "-q", str(directory)], check=True, timeout=60)
    listed = subprocess.run(
        ["git", "ls-files", "--others", "--exclude-standard", "--directory"]
        + [f"--exclude={pattern}" for pattern in TEST_FILES],
        cwd=directory,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return listed.stdout.split()


def quick_start_table(directory: Path, agents: set[str] | None = None) -> dict[str, Any]:
    """The quick start's atari5 columns in ``directory/results`` (its agents, or ``agents``)."""
    import arcadebench

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the logs of other specs there are skipped
        results = arcadebench.score("atari5", str(directory / "results"), reps=0)
    return {
        name: entry
        for name, entry in results.algorithms.items()
        if agents is None or name in agents
    }


def test_the_readme_has_blocks_of_every_kind():
    kinds = {b.language for b in blocks(README)}
    assert {"sh", "python", "text"} <= kinds
    assert all(b.language in ("sh", "python", "text") for b in blocks(README)), (
        "give every block a language: sh, python or text"
    )


def test_every_block_of_the_readme_runs_as_written(tmp_path):
    (tmp_path / "no-roms").mkdir()
    # the reader is in the root of a clone: .venv/ (this interpreter's) and examples/ are there
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "examples").symlink_to(REPO / "examples")
    printed = errors = ""
    ran = checked = 0
    quick_start: dict[str, Any] | None = None
    for block in blocks(README):
        directives = block.directives
        if quick_start is None and block.section != "Quick start":
            quick_start = quick_start_table(tmp_path)  # random's column, and noop's beside it
        if "not-run" in directives:
            assert directives["not-run"], f"{where(block)}: say why it is not run"
            continue
        if "run-by" in directives:
            covering = (REPO / directives["run-by"]).read_text()
            for command in block.commands():  # its sub-command and options are that test's
                words = [command.split()[1], *re.findall(r"(--[a-z-]+)", command)]
                missing = [w for w in words if w not in covering]
                assert not missing, f"{where(block)}: {directives['run-by']} lacks {missing}"
            continue
        if "file" in directives:
            (tmp_path / directives["file"]).write_text(block.text + "\n")
        elif block.language == "python":
            script = tmp_path / f"readme_{block.line}.py"
            script.write_text(block.text + "\n")
            done = subprocess.run(
                [sys.executable, script.name],
                cwd=tmp_path,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert done.returncode == 0, f"{where(block)}:\n{done.stderr[-3000:]}"
            printed = done.stdout
            ran += 1
            if "prints" in directives:
                assert directives["prints"] in printed, f"{where(block)} printed:\n{printed}"
        elif block.language == "sh":
            status = int(directives.get("exit", "0"))
            for command in block.commands():
                done = shell(command, tmp_path)
                output = done.stdout + done.stderr
                assert done.returncode == status, (
                    f"{where(block)}: `{command}` exited {done.returncode}:\n{output[-3000:]}"
                )
                assert "Traceback" not in output, f"{where(block)}: `{command}`:\n{output}"
                assert "A.L.E: Arcade Learning Environment" not in output, (
                    f"{where(block)}: `{command}` printed the emulator's banner"
                )
                printed, errors = done.stdout, done.stderr
                ran += 1
        elif "output" in directives:
            shown = errors if directives["output"] == "stderr" else printed
            assert matches(block.text, shown), (
                f"{where(block)}: the output shown is not what the command printed:\n{shown}"
            )
            checked += 1
    assert ran >= 20 and checked >= 2  # the README's commands and scripts, and two outputs
    assert undeclared(tmp_path) == [], "add what the README writes to .gitignore"
    assert quick_start is not None and set(quick_start) >= {"random", "noop"}
    assert quick_start_table(tmp_path, set(quick_start)) == quick_start, (
        "an example changed the quick start's table: give it an output directory of its own"
    )


def test_the_performance_page_is_generated_from_the_perf_results():
    generate = docs_generator()
    results = generate.read_perf_results()
    assert {r["benchmark"] for r in results} >= {"bench_envs", "bench_main_job", "bench_monitor"}
    assert (REPO / "docs" / "performance.md").read_text() == generate.performance_page(results), (
        "docs/performance.md is out of date: run .venv/bin/python docs/generate.py performance"
    )
