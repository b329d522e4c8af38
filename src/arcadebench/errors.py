"""The errors arcadebench raises on bad input, each a single line naming the problem and the fix.

Every error derives from :class:`ArcadebenchError`, so a caller (and the CLI) can catch one type
and print ``str(error)``: the message always says *where* (file, key path or line), *what* was
expected and *how to fix it*. Lookup errors offer "did you mean" suggestions.

Classes: ArcadebenchError, SpecError, UnknownSpec, UnknownGame, UnknownReference, InputError,
OtherSpec, NoScores, InvalidArgument, SubsetError, RomNotFound, MissingDependency,
BudgetExhausted, AgentError, InvalidAction, IncompatibleAgent, EmulatorInUse, LogInUse,
JobsFailed, ReplayDamaged, Unreplayable; the warning NonCompliantWarning.
Functions: warn_user, install_hint, did_you_mean.
"""

from __future__ import annotations

import difflib
import sys
import warnings
from collections.abc import Iterable
from types import FrameType
from typing import Any

__all__ = [
    "AgentError",
    "ArcadebenchError",
    "BudgetExhausted",
    "EmulatorInUse",
    "IncompatibleAgent",
    "InputError",
    "InvalidAction",
    "InvalidArgument",
    "JobsFailed",
    "LogInUse",
    "MissingDependency",
    "NoScores",
    "OtherSpec",
    "NonCompliantWarning",
    "ReplayDamaged",
    "RomNotFound",
    "SpecError",
    "SubsetError",
    "UnknownGame",
    "UnknownReference",
    "UnknownSpec",
    "Unreplayable",
    "did_you_mean",
    "first_line",
    "install_hint",
    "warn_user",
]


# The libraries a warning passes through before it reaches the user's code: a protocol env is
# made by Gymnasium's make and stepped by its wrappers and vector envs, and by SB3's.
_LIBRARIES = ("arcadebench", "gymnasium", "ale_py", "stable_retro", "stable_baselines3")


def warn_user(message: str, category: type[Warning]) -> None:
    """Warn with the location of the first caller outside arcadebench and the libraries above.

    ``gym.make(...)`` with a changed setting then warns at the user's ``gym.make`` line, not in
    ``gymnasium/envs/registration.py``, however deep the call came from.
    """
    level = 2  # stacklevel 2 is the caller of this function
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if module.partition(".")[0] not in _LIBRARIES:
            break
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)


def first_line(error: BaseException | None, limit: int = 200) -> str:
    """The first line of an error's message, cut at ``limit`` characters.

    What a library's error contributes to one of arcadebench's one-line messages.

    Example:
        >>> first_line(ValueError("shape mismatch" + chr(10) + "  the details"))
        'shape mismatch'
    """
    return (str(error).strip().splitlines() or [""])[0][:limit]


def install_hint(extra: str, packages: str) -> str:
    """How to install an optional extra, in words that work before arcadebench is on PyPI.

    Example:
        >>> install_hint("ray", "ray")
        "pip install ray (in a clone of arcadebench: pip install -e '.[ray]')"
    """
    return f"pip install {packages} (in a clone of arcadebench: pip install -e '.[{extra}]')"


def did_you_mean(name: str, choices: Iterable[str], n: int = 3) -> str:
    """Return ``" Did you mean: a, b?"`` for the close matches of ``name``, or ``""``.

    Example:
        >>> did_you_mean("pnog", ["pong", "qbert"])
        " Did you mean: 'pong'?"
    """
    matches = difflib.get_close_matches(name, list(choices), n=n, cutoff=0.6)
    if not matches:
        return ""
    return " Did you mean: " + ", ".join(repr(m) for m in matches) + "?"


class ArcadebenchError(Exception):
    """Base class: a one-line, user-facing message; never needs a traceback to be understood."""


class SpecError(ArcadebenchError, ValueError):
    """A protocol spec (YAML) is malformed: the message names the file, the key path and the rule.

    Attributes:
        file: the spec file (or ``"<string>"``).
        path: the key path inside the spec, e.g. ``"environment.repeat_action_probability"``.
    """

    def __init__(self, file: str, path: str, problem: str) -> None:
        self.file = file
        self.path = path
        self.problem = problem
        where = f"{file}: {path}" if path else file
        super().__init__(f"{where}: {problem}")


class UnknownSpec(ArcadebenchError, LookupError):
    """A spec name that is neither built in nor an existing YAML file."""


class UnknownGame(ArcadebenchError, LookupError):
    """A game or level name that the spec does not define."""


class InputError(ArcadebenchError, ValueError):
    """A score file (CSV/JSON) or an episode log is malformed.

    Attributes:
        file: the input file.
        line: 1-based line number where known, else ``None``.
    """

    def __init__(self, file: str, line: int | None, problem: str) -> None:
        self.file = file
        self.line = line
        self.problem = problem
        where = f"{file}:{line}" if line is not None else file
        super().__init__(f"{where}: {problem}")


class OtherSpec(InputError):
    """An episode log or result was written for another spec than the one reading it."""


class NoScores(InputError):
    """The inputs hold nothing to score yet: no complete episode, no score row.

    Early in training no episode may have ended; a caller that scores as it goes catches this
    one and says so, while a malformed input is still an :class:`InputError`.
    """


class UnknownReference(ArcadebenchError, LookupError):
    """A ``--references`` name that no shipped reference result has."""


class MissingDependency(ArcadebenchError, ImportError):
    """An optional dependency (matplotlib for reports, Ray for the ray backend) is not installed."""


class InvalidArgument(ArcadebenchError, ValueError, TypeError):
    """A function or wrapper got a bad argument, or wraps an environment lacking what it needs.

    Both a ``ValueError`` and a ``TypeError``, so callers following Gymnasium's conventions (which
    raise either) catch it too.
    """


class SubsetError(ArcadebenchError, ValueError):
    """An argument of the subset search is invalid, or the data cannot support the request."""


class RomNotFound(ArcadebenchError, FileNotFoundError):
    """A game's ROM is not installed (stable-retro ROMs are not redistributable)."""


class BudgetExhausted(ArcadebenchError, RuntimeError):
    """A training loop tried to step past the protocol's interaction budget."""


class AgentError(ArcadebenchError, RuntimeError):
    """The agent raised; the message names the game/level, run and episode where it happened."""


class InvalidAction(AgentError):
    """The agent chose an action outside the environment's action space (or no action at all)."""


class IncompatibleAgent(ArcadebenchError, ValueError):
    """The agent cannot play this protocol's environment as it is: refused before it plays.

    Its observation or action space differs from the environment's, or it is a saved model of
    another class or a damaged file; the message names both sides and the fix.
    """


class EmulatorInUse(ArcadebenchError, RuntimeError):
    """stable-retro allows one emulator per process and this process already has one."""


class LogInUse(ArcadebenchError, RuntimeError):
    """Another process (or another environment of this one) is writing the same episode log."""


class JobsFailed(ArcadebenchError, RuntimeError):
    """Some jobs failed; the others finished and were scored.

    Attributes:
        results: the :class:`~arcadebench.benchmarks.scoring.results.Results` of what was played
            (``None`` if nothing could be scored).
        failures: ``[(job key, failure), ...]``, each failure a
            :class:`~arcadebench.benchmarks.runner.messages.Failure` (its kind, its message).
    """

    def __init__(self, results: Any, failures: list[tuple[str, Any]]) -> None:
        self.results = results
        self.failures = failures
        first = "; ".join(f"{key}: {reason}" for key, reason in failures[:3])
        more = f" (and {len(failures) - 3} more)" if len(failures) > 3 else ""
        super().__init__(
            f"{len(failures)} job{'s' * (len(failures) != 1)} failed: {first}{more}. Finished "
            "episodes are kept; re-run the "
            "missing ones with resume=True"
        )


class ReplayDamaged(ArcadebenchError, ValueError):
    """A replay line that cannot be used (malformed, over a bound it declares), and why."""


class Unreplayable(ArcadebenchError):
    """A recording the emulator cannot play (its start, or an action it refuses), and why."""


class NonCompliantWarning(UserWarning):
    """An environment differs from its protocol spec: its scores are not comparable.

    Warned when an environment is made with settings that differ from the spec, and by opt-in
    training tricks the protocols forbid (e.g. :class:`~arcadebench.wrappers.EpisodicLife`).
    """
