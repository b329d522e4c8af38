"""The audit's report: one table of what was measured against every spec, JSON, exit status.

Rows are the measured properties (:mod:`.properties`), each with the measurement, a mark per
spec (``ok``, ``DIFF``, ``?`` unverified, ``-`` no such rule) and the evidence. Below it, the
closest spec and, for the spec named (or else the closest), every difference with what was
measured and what the spec declares, then what could not be verified.

Exit status, as ``arcadebench diff`` and ``check``: 0 when the env matches the named spec (or,
none named, the closest one), 1 when it differs, 2 on bad input (raised before any play).

Classes: AuditReport.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from arcadebench._table import count, render_table
from arcadebench._version import __version__
from arcadebench.benchmarks.audit.matching import SpecMatch, closest
from arcadebench.benchmarks.audit.properties import Property
from arcadebench.benchmarks.audit.sessions import RESETS

__all__ = ["FORMAT", "AuditReport"]

FORMAT = "arcadebench-audit/1"
_MEASURED = {
    "emulator": "measured in its own emulator",
    "reference": "measured against a reference emulator kept in step (its own is out of reach)",
}


@dataclass(frozen=True)
class AuditReport:
    """The audit of one env against every spec.

    Attributes:
        target: what was audited, as named.
        stream: what env 0 is (``Gymnasium env (AtariEnv)``, ``AtariVectorEnv, 1 env``).
        game: the ale-py ROM id.
        measured: ``"emulator"`` or ``"reference"`` (see :mod:`.shadow`).
        lost: where the reference emulator lost the env, if it did.
        frames: emulator frames the random agent played.
        cap_frames: the most frames the NOOP agent played.
        seed: the seed of the resets and the random agent.
        properties: the measurements, in :data:`~.properties.PROPERTIES` order.
        matches: the verdicts against each spec.
        named: the spec the exit status is about (``None``: the closest).
    """

    target: str
    stream: str
    game: str
    measured: str
    lost: str | None
    frames: int
    cap_frames: int
    seed: int
    properties: tuple[Property, ...]
    matches: tuple[SpecMatch, ...]
    named: str | None = None

    @property
    def closest(self) -> list[SpecMatch]:
        """The specs the env comes closest to (ties all listed)."""
        return closest(self.matches)

    @property
    def subject(self) -> SpecMatch:
        """The spec the report is about (the named one, else the first closest)."""
        return next((m for m in self.matches if m.spec.name == self.named), self.closest[0])

    @property
    def exit_status(self) -> int:
        """0 when the env matches :attr:`subject`, 1 when it differs."""
        return 0 if self.subject.matches else 1

    def property(self, name: str) -> Property:
        """The measured property ``name``."""
        return next(p for p in self.properties if p.name == name)

    def title(self) -> str:
        """The first line: what was audited, how, with which plays."""
        return (
            f"audit of {self.target}: {self.stream}, game {self.game}, "
            f"{_MEASURED[self.measured]}; seed {self.seed}, a random agent for "
            f"{self.frames:,} frames, {RESETS} resets, a NOOP agent for up to "
            f"{self.cap_frames:,} frames"
        )

    def table(self) -> str:
        """The table, the closest spec, the differences from the subject, what is unverified."""
        names = [m.spec.name for m in self.matches]
        rows = []
        for prop in self.properties:
            marks = [
                m.verdicts[prop.name].mark if prop.name in m.verdicts else "" for m in self.matches
            ]
            rows.append([prop.name, prop.cell, *marks, prop.evidence])
        wrap = {"evidence": 72, "measured": 28}
        columns = ["property", "measured", *names, "evidence"]
        lines = [render_table(columns, rows, title=self.title(), wrap=wrap)]
        if self.lost:
            lines.append(
                f"the reference emulator lost the env: {self.lost}; later steps are "
                "measured from info only"
            )
        best = self.closest
        lines.append(
            f"closest: {', '.join(m.spec.name for m in best)} "
            f"({count(len(best[0].differs), 'difference')}"
            + (f": {', '.join(best[0].differs)})" if best[0].differs else ")")
        )
        lines += self._details(self.subject)
        return "\n".join(lines)

    def _details(self, match: SpecMatch) -> list[str]:
        """Every difference from ``match``'s spec, its evidence numbered below."""
        name = match.spec.name
        how = "named" if name == self.named else "the closest"
        phase = f", as its {match.phase} env" if match.phase else ""
        if match.matches:
            lines = [f"{name} ({how}): matches{phase}"]
        else:
            verb = "differs" if len(match.differs) == 1 else "differ"
            lines = [f"{name} ({how}): {count(len(match.differs), 'rule')} {verb}{phase}"]
        notes: dict[str, int] = {}
        for rule in match.differs:
            verdict = match.verdicts[rule]
            number = notes.setdefault(match.evidence(rule), len(notes) + 1)
            lines.append(f"  {rule}: {verdict.note}; {name} declares {verdict.declared} [{number}]")
        unverified = [f"{n} ({match.verdicts[n].note})" for n in match.unverified]
        if unverified:
            lines.append("  not verified in these plays: " + "; ".join(unverified))
        if notes:
            lines.append("each difference changes scores:")
            lines += [f"[{n}] {evidence}" for evidence, n in notes.items()]
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``format`` ``arcadebench-audit/1``)."""
        plain = ("target", "stream", "game", "measured", "lost", "frames", "cap_frames", "seed")
        return {
            "format": FORMAT,
            **{name: getattr(self, name) for name in plain},
            "properties": {
                p.name: {"value": p.value, "cell": p.cell, "evidence": p.evidence}
                for p in self.properties
            },
            "specs": {m.spec.name: m.to_dict() for m in self.matches},
            "closest": [m.spec.name for m in self.closest],
            "named": self.named,
            "exit_status": self.exit_status,
            "provenance": {
                "arcadebench": __version__,
                "ale_py": metadata.version("ale-py"),
                "gymnasium": metadata.version("gymnasium"),
            },
        }

    def to_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_dict` to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1, default=str) + "\n")
