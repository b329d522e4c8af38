"""The code blocks of a Markdown document, and how the docs test runs them.

A fenced block is run by its language: ``python`` blocks as scripts, ``sh`` blocks line by line
in a shell, in document order and in one directory, as a reader pasting them top to bottom would.
An HTML comment right above a fence says more, where a block needs it::

    <!-- docs: file=my_agents.py -->       the block is a file the next blocks use
    <!-- docs: exit=2 -->                   every command of the sh block exits with status 2
    <!-- docs: output -->                   the text block is what the sh block above printed
    <!-- docs: output=stderr -->            ... what it printed on stderr (an error's one line)
    <!-- docs: prints=TEXT -->              the block printed TEXT (in a table of varying widths)
    <!-- docs: run-by=tests/x.py -->        the commands run in that test (a cluster of machines)
    <!-- docs: not-run=the whole suite -->  the block is the test command itself

An output shown is never typed: ``.venv/bin/python docs/generate.py outputs`` follows the pages
as the test does and rewrites each shown output from what was printed (:func:`regenerated`).

``text`` blocks without a directive are illustrations and are not run; MyST directives
(```` ```{toctree} ````, ```` ```{include} ````) are the site's, not code, and are skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

_FENCE = re.compile(r"^```(\w*|\{[\w-]+\}.*)\s*$")
_DIRECTIVE = re.compile(r"^<!-- docs: (.*) -->$")


@dataclass
class Block:
    """One fenced code block: its language, text, line, directives and ``## `` section."""

    language: str
    text: str
    line: int
    directives: dict[str, str] = field(default_factory=dict)
    section: str = ""

    def commands(self) -> list[str]:
        """The shell commands of an ``sh`` block: one a line, comments and blanks dropped."""
        found = []
        for raw in self.text.splitlines():
            line = re.sub(r"\s+#\s.*$", "", raw).strip()
            if line and not line.startswith("#"):
                found.append(line)
        return found


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, with the directives of the comment line above it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    section = ""
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if not match:
            if lines[i].startswith("## "):
                section = lines[i][3:].strip()
            i += 1
            continue
        directives: dict[str, str] = {}
        above = _DIRECTIVE.match(lines[i - 1]) if i else None
        if above:
            for item in above.group(1).split(";"):
                key, _, value = item.strip().partition("=")
                directives[key] = value
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        text = "\n".join(lines[i + 1 : end])
        if not match.group(1).startswith("{"):
            found.append(Block(match.group(1), text, i + 1, directives, section))
        i = end + 1
    return found


def regenerated(shown: str, printed: str) -> str | None:
    """``shown`` made of what was ``printed`` now, or ``None`` where a line has no counterpart.

    A block without ``...`` is the whole output: it becomes ``printed``. An elided one keeps its
    shape: ``...`` stays, and each shown line is replaced by the next printed line that differs
    from it only in its numbers (``hns median #``, ``breakout/# done: # complete episodes``), so
    a table's row, a summary or an error keeps its place with today's numbers; a line whose
    words changed has no counterpart, and the caller says so.
    """
    lines = [line.rstrip() for line in printed.splitlines()]
    if "..." not in (line.strip() for line in shown.splitlines()):
        return "\n".join(lines).strip("\n")
    out: list[str] = []
    at = 0
    for want in (line.rstrip() for line in shown.splitlines()):
        if want == "...":
            out.append(want)
            continue
        key = _key(want)
        found = next((i for i in range(at, len(lines)) if _key(lines[i]) == key), None)
        if found is None:
            return None
        out.append(lines[found])
        at = found + 1
    return "\n".join(out)


_NUMBER = re.compile(r"\b[0-9a-f]{12,64}\b|(?<![A-Za-z_])[-+]?\d[\d,]*(?:\.\d+)?|(?<=\bv)\d+")


def _key(line: str) -> str:
    """A line with its numbers as ``#``, spaces collapsed: what says which line it is.

    Numbers of their own count (``10.45%``, ``4,000``, the ``0`` of ``breakout/0``), and so do
    a version's (``v2``) and a hash (``90863c63e974``): the digits of a name stay (``atari5`` is
    not ``atari1``).
    """
    return " ".join(_NUMBER.sub("#", line).split())
