"""A leaderboard is a folder: its settings, its accepted submissions and its rejections.

Kept in git or anywhere, and turned into a static site by ``arcadebench leaderboard build``::

    BOARD/board.json                            the board's settings, the secret's SHA-256
    BOARD/submissions/<name>/submission.json    what was checked, the badge, the metadata
    BOARD/submissions/<name>/run/               the run folder as it was verified
    BOARD/submissions/<name>/report/            its report, with each game's best and worst clip
    BOARD/rejected/<time>-<name>.json           a rejection and its reason, nothing of the run
    BOARD/.lock                                 held while a submission is checked (one at a time)

The board's secret (the seeds it re-executes policies on are drawn from it) is kept *outside*
the folder: the board publishes its SHA-256 when it opens and the secret itself when it closes,
so anyone can recompute every draw afterwards but no submitter could know one in advance.

Rows are only ever compared within one protocol and one version of it: the first accepted
submission of a spec fixes the spec hash of that spec's page, and another version is refused.

Classes: BoardSettings, Submission, Board.
Functions: open_board, load_board, close_board, submission_name.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from arcadebench.benchmarks.leaderboard.secret import (
    check_secret,
    new_secret,
    read_secret,
    secret_digest,
    write_secret,
)
from arcadebench.errors import InputError, InvalidArgument

try:  # POSIX file locks; without them (Windows) a board takes one change at a time by hand
    import fcntl
except ImportError:  # pragma: no cover - not on Linux/macOS
    fcntl = None  # type: ignore[assignment]  # the module is absent off POSIX

__all__ = [
    "BOARD_FILE",
    "BOARD_FORMAT",
    "NAME",
    "SUBMISSION_FILE",
    "SUBMISSION_FORMAT",
    "Board",
    "BoardSettings",
    "Submission",
    "close_board",
    "load_board",
    "load_json",
    "now",
    "open_board",
    "submission_name",
]

BOARD_FILE = "board.json"
"""The board's settings, in the board's folder."""
BOARD_FORMAT = "arcadebench-board/1"
"""The ``format`` of ``board.json``."""
SUBMISSION_FILE = "submission.json"
"""A submission's record, in its folder (accepted) or as the file itself (rejected)."""
SUBMISSION_FORMAT = "arcadebench-submission/1"
"""The ``format`` of a submission's record."""

NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
"""A submission's name (:func:`submission_name` makes them), matched whole."""

Status = Literal["accepted", "rejected"]
Badge = Literal["replay-verified", "re-executed on hidden seeds"]


def now() -> str:
    """The time in UTC, to the second, as the board's records write it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class BoardSettings:
    """What a board fixes for every submission (``board.json``).

    Attributes:
        title: the board's name, heading its site.
        opened: when it opened (UTC).
        secret_sha256: the SHA-256 of the secret the hidden seeds are drawn from, published
            when the board opens.
        episodes: episodes a game the board plays a submitted policy for (re-execution).
        alpha: the family-wise error rate of the re-execution test across a submission's games
            (Holm's correction): an honest policy is refused with at most this probability.
        sample: episodes replayed per log for runs over ``sample_above_frames`` frames (a
            200M-frame training run is too long to replay whole); ``None``: always all.
        sample_above_frames: a run's total frames above which only ``sample`` are replayed.
        closed: when it closed (UTC), or ``None`` while open.
        secret: the secret itself, revealed when the board closes.
    """

    title: str
    opened: str
    secret_sha256: str
    episodes: int = 10
    alpha: float = 0.01
    sample: int | None = 25
    sample_above_frames: int = 100_000_000
    closed: str | None = None
    secret: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """``board.json``'s content."""
        return {"format": BOARD_FORMAT, **asdict(self)}


@dataclass(frozen=True)
class Submission:
    """One submission's record: accepted (a row of its protocol's page) or rejected.

    Attributes:
        name: its unique name on the board (a row's label, its folder's name).
        status: ``accepted`` or ``rejected``.
        reason: why it was rejected (one line), else ``None``.
        added: when it was checked (UTC).
        meta: the submitter's metadata (name, authors, paper, code, compute, date...).
        spec: the protocol it was run under: ``{"name", "version", "hash"}`` (``None`` when
            the folder could not be read far enough to say).
        algorithm: the name its results give the agent.
        scored: which episodes its scores are of: ``training`` (SABER, HWR, Machado et al.
            2018, Atari-5, Sonic) or ``evaluation`` (a protocol scored after training, or a
            frozen policy's evaluation); the two are ranked apart.
        badge: what was checked, for an accepted one: ``replay-verified`` or ``re-executed on
            hidden seeds`` (which implies replay-verified too).
        checks: each check made, in order: ``{"name", "ok", "detail"}``.
        verification: what replaying found: logs, episodes checked and verified, the sample.
        reexecution: the re-execution's per-game tests, where a policy was given.
        agent: what played it, as its logs' headers record it.
        versions: the libraries that played and scored it (the results' provenance).
        folder: the submission's folder on the board (``None`` for a rejection).
    """

    name: str
    status: Status
    reason: str | None
    added: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    spec: Mapping[str, Any] | None = None
    algorithm: str | None = None
    scored: Literal["training", "evaluation"] | None = None
    badge: Badge | None = None
    checks: tuple[Mapping[str, Any], ...] = ()
    verification: Mapping[str, Any] | None = None
    reexecution: Mapping[str, Any] | None = None
    agent: Mapping[str, Any] | None = None
    versions: Mapping[str, Any] = field(default_factory=dict)
    folder: Path | None = None

    @property
    def results_file(self) -> Path | None:
        """Its verified results file on the board (``None`` for a rejection)."""
        return None if self.folder is None else self.folder / "run" / "results.json"

    @property
    def report_folder(self) -> Path | None:
        """Its report (with the clips of each game's best and worst episode)."""
        return None if self.folder is None else self.folder / "report"

    def as_dict(self) -> dict[str, Any]:
        """The record as written to ``submission.json`` (the folder is where it is)."""
        data = asdict(self)
        data.pop("folder")
        data["checks"] = list(self.checks)
        return {"format": SUBMISSION_FORMAT, **data}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], folder: Path | None, file: str) -> Submission:
        """The record of ``data`` (read from ``file``), or a one-line error naming the file."""
        if not isinstance(data, Mapping) or data.get("format") != SUBMISSION_FORMAT:
            raise InputError(file, None, f"is not a submission record ({SUBMISSION_FORMAT})")
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        try:
            return cls(**{**fields, "checks": tuple(data.get("checks", ())), "folder": folder})
        except TypeError as error:
            raise InputError(file, None, f"is a damaged submission record: {error}") from None

    def write(self, path: Path) -> None:
        """Write the record to ``path``, whole or not at all."""
        _write_json(path, self.as_dict())


@dataclass(frozen=True)
class Board:
    """A board's folder and settings, and what it holds.

    Attributes:
        path: the board's folder.
        settings: its ``board.json``.
    """

    path: Path
    settings: BoardSettings

    @property
    def submissions_folder(self) -> Path:
        """Where accepted submissions are kept, a folder each."""
        return self.path / "submissions"

    @property
    def rejected_folder(self) -> Path:
        """Where rejections are kept, a record each."""
        return self.path / "rejected"

    def accepted(self) -> list[Submission]:
        """The accepted submissions, in the order they were added."""
        found = [
            Submission.from_dict(load_json(record), record.parent, str(record))
            for record in sorted(self.submissions_folder.glob(f"*/{SUBMISSION_FILE}"))
        ]
        return sorted(found, key=lambda s: (s.added, s.name))

    def rejected(self) -> list[Submission]:
        """The rejections, in the order they were made."""
        return [
            Submission.from_dict(load_json(record), None, str(record))
            for record in sorted(self.rejected_folder.glob("*.json"))
        ]

    def taken(self, name: str) -> bool:
        """Whether an accepted submission has ``name``."""
        return (self.submissions_folder / name).exists()

    def page_spec(self, spec: str) -> Mapping[str, Any] | None:
        """The spec (name, version, hash) of ``spec``'s page: its first accepted submission's."""
        for submission in self.accepted():
            if submission.spec is not None and submission.spec.get("name") == spec:
                return submission.spec
        return None

    @contextlib.contextmanager
    def changing(self) -> Iterator[None]:
        """Hold the board while one submission is checked: a second ``add`` waits for it.

        Two at once would otherwise both find a name free, and check their copies in one
        folder (``.incoming/<name>``) each removes at its start. The lock is the kernel's
        (``flock``), so a killed ``add`` releases it.
        """
        with open(self.path / ".lock", "a", encoding="utf-8") as handle:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            yield

    def check_open(self) -> None:
        """Refuse to change a closed board."""
        if self.settings.closed is not None:
            raise InvalidArgument(
                f"the board {self.path} closed on {self.settings.closed} and takes no more "
                "submissions: open a new board"
            )


def submission_name(text: str) -> str:
    """``text`` as a submission name: lower case, letters, digits, ``.``, ``_`` and ``-``."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.lower()).strip("-._")[:64]
    if not NAME.fullmatch(slug):
        raise InvalidArgument(
            f"`name` must have a letter or digit (a submission's name on the board), got {text!r}"
        )
    return slug


def open_board(
    path: str | os.PathLike[str],
    secret_file: str | os.PathLike[str],
    *,
    title: str | None = None,
    episodes: int = 10,
    alpha: float = 0.01,
    sample: int | None = 25,
    sample_above_frames: int = 100_000_000,
) -> Board:
    """Open a new board in ``path``, its secret written to ``secret_file`` outside it.

    Raises:
        InvalidArgument: ``path`` already holds a board or other files, the secret file is
            inside the board's folder or exists already, or a setting is out of range.
    """
    board = Path(path)
    secret_path = Path(secret_file)
    if type(episodes) is not int or episodes < 2:
        raise InvalidArgument(f"`episodes` must be an integer of at least 2, got {episodes!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InvalidArgument(f"`alpha` must be strictly between 0 and 1, got {alpha!r}")
    if sample is not None and (type(sample) is not int or sample < 1):
        raise InvalidArgument(f"`sample` must be a positive integer or None, got {sample!r}")
    if board.exists() and any(board.iterdir()):
        raise InvalidArgument(
            f"`path` must be a new or empty folder, got {str(board)!r}: it holds files already"
        )
    if secret_path.resolve().is_relative_to(board.resolve()):
        raise InvalidArgument(
            f"`secret_file` must be outside the board's folder, got {str(secret_path)!r}: the "
            "board is published, and a secret in it would let submitters know the seeds"
        )
    secret = new_secret()
    write_secret(secret_path, secret)
    settings = BoardSettings(
        title=title or board.resolve().name,
        opened=now(),
        secret_sha256=secret_digest(secret),
        episodes=episodes,
        alpha=float(alpha),
        sample=sample,
        sample_above_frames=sample_above_frames,
    )
    for folder in (board, board / "submissions", board / "rejected"):
        folder.mkdir(parents=True, exist_ok=True)
    _write_json(board / BOARD_FILE, settings.as_dict())
    return Board(board, settings)


def load_board(path: str | os.PathLike[str]) -> Board:
    """The board in ``path``, or a one-line error saying it is none and how to open one."""
    board = Path(path)
    file = board / BOARD_FILE
    if not file.is_file():
        raise InvalidArgument(
            f"`board` must be a board's folder, got {str(board)!r}: it has no {BOARD_FILE}; "
            f"open one with `arcadebench leaderboard open {board} --secret-file FILE`"
        )
    data = load_json(file)
    if not isinstance(data, Mapping) or data.get("format") != BOARD_FORMAT:
        raise InputError(str(file), None, f"is not a board's settings ({BOARD_FORMAT})")
    fields = {k: v for k, v in data.items() if k in BoardSettings.__dataclass_fields__}
    try:
        return Board(board, BoardSettings(**fields))
    except TypeError as error:
        raise InputError(str(file), None, f"is damaged: {error}") from None


def close_board(path: str | os.PathLike[str], secret_file: str | os.PathLike[str]) -> Board:
    """Close the board and reveal its secret, so that anyone can recompute every draw."""
    board = load_board(path)
    board.check_open()
    secret = read_secret(secret_file)
    check_secret(secret, board.settings.secret_sha256)
    settings = BoardSettings(**{**asdict(board.settings), "closed": now(), "secret": secret})
    _write_json(board.path / BOARD_FILE, settings.as_dict())
    return Board(board.path, settings)


def load_json(path: Path) -> Any:
    """The JSON in ``path``, or an :class:`~arcadebench.errors.InputError` naming the file."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as error:
        raise InputError(str(path), None, f"cannot be read as JSON: {error}") from None


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    """Write ``data`` to ``path`` through a temporary file: a crash leaves the old one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    os.replace(partial, path)
