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
