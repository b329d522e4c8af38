"""Docs that run, and generated pages that are up to date.

Every code block of the README runs, top to bottom, as a new user pastes them; so does every
block of the site's pages, in the site's order (``docs/index.md``), in one directory: a guide
uses what an earlier one made (the evaluation guide plays the model the training guide saved).

Python blocks run as scripts with the package installed; shell blocks run command by command
in one directory (the one a reader would be in), with ``arcadebench`` on the PATH. Each command
must exit as the page says (0 unless a ``docs: exit=N`` comment says otherwise), print no
traceback and no emulator banner, and an output shown under a command (``docs: output``) must
be what it printed, line for line where the page does not elide with ``...``. See
``tests/docs_blocks.py`` for the comments that steer a block.

Followed to the end, the README and the pages each leave in the reader's clone only what
``.gitignore`` declares (``git status`` stays clean), and no example changes the quick start's
table (the ``evaluate`` example's runs, added to its random column, would move the median
10.45 % -> 4.30 %).
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

from docs_blocks import Block, blocks, regenerated
from testdata import REPO, docs_generator

README = REPO / "README.md"
DOCS = REPO / "docs"
REGENERATE = os.environ.get("ARCADEBENCH_DOCS_REGENERATE") == "1"
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


def follow(documents: list[Path], directory: Path) -> tuple[int, int]:
    """Run every block of ``documents``, in order, in ``directory``, as a reader pasting them would.

    Returns how many commands and scripts ran, and how many outputs shown were checked. The
    quick start's table (its agents' columns when the first block outside "Quick start" comes)
    must not change by the end: every later example writes somewhere of its own.
    """
    (directory / "no-roms").mkdir()
    # the reader is in the root of a clone: .venv/ (this interpreter's) and examples/ are there
    (directory / ".venv").symlink_to(Path(sys.prefix))
    (directory / "examples").symlink_to(REPO / "examples")
    printed = errors = ""
    ran = checked = 0
    quick_start: dict[str, Any] | None = None
    for document in documents:
        rewrites: list[tuple[Block, str]] = []
        for block in blocks(document):
            at = f"{document.relative_to(REPO)}:{block.line}"
            ran_block, checked_block, printed, errors = run_block(
                block, at, directory, printed, errors, rewrites
            )
            ran += ran_block
            checked += checked_block
            if quick_start is None and block.section != "Quick start":
                quick_start = quick_start_table(directory)  # random's column, noop's beside it
        rewrite(document, rewrites)
    assert undeclared(directory) == [], "add what the docs write to .gitignore"
    assert quick_start is not None and set(quick_start) >= {"random"}
    assert quick_start_table(directory, set(quick_start)) == quick_start, (
        "an example changed the quick start's table: give it an output directory of its own"
    )
    return ran, checked


def run_block(
    block: Block,
    at: str,
    directory: Path,
    printed: str,
    errors: str,
    rewrites: list[tuple[Block, str]],
) -> tuple[int, int, str, str]:
    """Run one block as its directives say: (commands run, outputs checked, stdout, stderr).

    With ``ARCADEBENCH_DOCS_REGENERATE=1`` (``docs/generate.py outputs``) an output shown that
    differs from what was printed is added to ``rewrites`` instead of failing.
    """
    directives = block.directives
    ran = checked = 0
    if "not-run" in directives:
        assert directives["not-run"], f"{at}: say why it is not run"
    elif "run-by" in directives:
        covering = (REPO / directives["run-by"]).read_text()
        for command in block.commands():  # its sub-command and options are that test's
            words = [command.split()[1], *re.findall(r"(--[a-z-]+)", command)]
            missing = [w for w in words if w not in covering]
            assert not missing, f"{at}: {directives['run-by']} lacks {missing}"
    elif "file" in directives:
        (directory / directives["file"]).write_text(block.text + "\n")
    elif block.language == "python":
        script = directory / f"readme_{block.line}.py"
        script.write_text(block.text + "\n")
        done = subprocess.run(
            [sys.executable, script.name],
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"{at}:\n{done.stderr[-3000:]}"
        printed = done.stdout
        ran += 1
        if "prints" in directives:
            assert directives["prints"] in printed, f"{at} printed:\n{printed}"
    elif block.language == "sh":
        status = int(directives.get("exit", "0"))
        for command in block.commands():
            done = shell(command, directory)
            output = done.stdout + done.stderr
            assert done.returncode == status, (
                f"{at}: `{command}` exited {done.returncode}:\n{output[-3000:]}"
            )
            assert "Traceback" not in output, f"{at}: `{command}`:\n{output}"
            assert "A.L.E: Arcade Learning Environment" not in output, (
                f"{at}: `{command}` printed the emulator's banner"
            )
            printed, errors = done.stdout, done.stderr
            ran += 1
    elif "output" in directives:
        shown = errors if directives["output"] == "stderr" else printed
        if REGENERATE and not matches(block.text, shown):
            fresh = regenerated(block.text, shown)
            assert fresh is not None, f"{at}: a shown line is no longer printed:\n{shown}"
            rewrites.append((block, fresh))
        else:
            assert matches(block.text, shown), (
                f"{at}: the output shown is not what the command printed (regenerate it: "
                f".venv/bin/python docs/generate.py outputs):\n{shown}"
            )
        checked += 1
    return ran, checked, printed, errors


def rewrite(document: Path, rewrites: list[tuple[Block, str]]) -> None:
    """Put each regenerated output in its block of ``document``, the last block first."""
    if not rewrites:
        return
    lines = document.read_text(encoding="utf-8").splitlines()
    for block, text in sorted(rewrites, key=lambda pair: -pair[0].line):
        old = len(block.text.splitlines())
        lines[block.line : block.line + old] = text.splitlines()
    document.write_text("\n".join(lines) + "\n", encoding="utf-8")


def site_pages() -> list[Path]:
    """The site's hand-written pages in its order (``docs/index.md``'s tables of contents)."""
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    names = [
        line.strip()
        for toctree in re.findall(r"```\{toctree\}\n(.*?)```", index, re.S)
        for line in toctree.splitlines()
        if line.strip() and not line.startswith(":")
    ]
    return [DOCS / f"{name}.md" for name in names if not name.startswith("_generated")]


def test_every_block_of_the_readme_runs_as_written(tmp_path):
    ran, checked = follow([README], tmp_path)
    assert ran >= 10 and checked >= 1  # the README's commands and scripts, and the main job's


def test_every_block_of_every_docs_page_runs_as_written(tmp_path):
    ran, checked = follow(site_pages(), tmp_path)
    assert ran >= 30 and checked >= 8


def test_every_page_with_code_is_followed_in_the_site_order():
    pages = site_pages()
    assert pages[0] == DOCS / "getting-started.md" and all(p.is_file() for p in pages)
    written = [p for p in DOCS.rglob("*.md") if "_generated" not in p.parts]
    with_code = {p for p in written if any(b.language in ("sh", "python") for b in blocks(p))}
    assert with_code <= set(pages), f"add to docs/index.md's toctree: {with_code - set(pages)}"


def test_the_readme_is_short_and_links_every_guide():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    for page in site_pages():
        if page.parent.name == "guides":
            assert f"(docs/guides/{page.name})" in text, f"link {page.name} from the README"


def test_the_performance_page_is_generated_from_the_perf_results():
    generate = docs_generator()
    results = generate.read_perf_results()
    assert {r["benchmark"] for r in results} >= {"bench_envs", "bench_main_job", "bench_monitor"}
    assert (REPO / "docs" / "performance.md").read_text() == generate.performance_page(results), (
        "docs/performance.md is out of date: run .venv/bin/python docs/generate.py performance"
    )


def test_an_output_shown_is_regenerated_from_what_was_printed(tmp_path, monkeypatch):
    printed = "title v2\nhns  mean  -20.00%\nhns  median  11.00%\natari1  9.00%\natari5  8.00%\n"
    elided = "title v1\nhns  median   10.45%\n...\natari5   7.58%"  # atari1 is another row
    assert regenerated(elided, printed) == "title v2\nhns  median  11.00%\n...\natari5  8.00%"
    assert regenerated("a whole output 1", "a whole output 2\nits second line\n") == (
        "a whole output 2\nits second line"
    )
    assert regenerated("gone 1\n...", printed) is None  # a line no longer printed: said
    page = tmp_path / "page.md"
    page.write_text(f"# A page\n\n```sh\narcadebench run\n```\n\n```text\n{elided}\n```\n\nEnd\n")
    (block,) = [b for b in blocks(page) if b.language == "text"]
    block.directives["output"] = ""
    monkeypatch.setattr(sys.modules[__name__], "REGENERATE", True)
    rewrites: list[tuple[Block, str]] = []
    run_block(block, "page.md:9", tmp_path, printed, "", rewrites)
    rewrite(page, rewrites)
    assert page.read_text() == (
        "# A page\n\n```sh\narcadebench run\n```\n\n```text\ntitle v2\nhns  median  11.00%\n"
        "...\natari5  8.00%\n```\n\nEnd\n"
    )
