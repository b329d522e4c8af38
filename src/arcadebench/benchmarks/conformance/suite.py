"""The conformance check: every game of an Atari spec played in the emulator, every rule verified.

:func:`check` (``arcadebench check <spec>``) plays each game with seeded random and NOOP agents
(:func:`~.play.play_game`, one job per game in worker processes) and judges what happened
against the spec (:func:`~.verdicts.judge`, the rules the package docstring lists). The
:class:`CheckReport` prints one row per game and saves a JSON document.

Specs with the same environment settings (HWR and Atari-5) need the same plays:
:func:`check_specs` plays each (game, settings) once and judges it for every spec.

Classes: CheckReport.
Functions: check, check_specs.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from arcadebench._table import count, render_table
from arcadebench._version import __version__
from arcadebench.benchmarks.conformance.play import NOOP_RESETS, atari_settings, play_game
from arcadebench.benchmarks.conformance.verdicts import STATUSES, GameCheck, judge
from arcadebench.benchmarks.replay.processes import clean_start_method
from arcadebench.errors import InvalidArgument
from arcadebench.specs import Spec, load_spec, spec_reference
from arcadebench.wrappers._checks import check_int

__all__ = ["DEFAULT_FRAMES", "FORMAT", "MIN_FRAMES", "CheckReport", "check", "check_specs"]

FORMAT = "arcadebench-check/1"
DEFAULT_FRAMES = 2_000
"""Emulator frames each agent plays per game by default (about 2 s of work per game)."""
MIN_FRAMES = 100
"""The smallest budget (25 agent steps), enough for a scaled limit of 12 steps to fire."""

_COLUMNS = {
    "game": None,
    "status": None,
    "actions": "actions",
    "sticky p": "sticky",
    "skip": "frameskip",
    "observation": "observation",
    "lives": None,
    "no-ops": "noop_starts",
    "stuck": "max_stuck_frames",
    "cap": "max_episode_frames",
    "rewards": "rewards",
    "same seed": "determinism",
    "notes": None,
}
"""The table's columns and the rule each shows the cell of (``None``: the game's own)."""
_LEGEND = (
    "sticky p: the sticky-action probability measured in the emulator, n distinguishable "
    "frames; lives: life information in info, lives lost that did not end the episode (and "
    "those that ended a training episode, where the protocol signals them in training); "
    f"no-ops: the NOOP frames after ALE's reset, seen over {NOOP_RESETS} resets, of those "
    "declared; stuck, cap: the limit a NOOP agent hit on the exact step (scaled: a smaller "
    "limit, to fit the frames or the NOOP agent's episode)"
)


@dataclass(frozen=True)
class CheckReport:
    """The conformance check of one spec: one :class:`~.verdicts.GameCheck` per game.

    Attributes:
        spec: the spec checked.
        frames: emulator frames each agent played per game.
        seed: the seed of the env resets and the random agent.
        games: the games' checks, in the spec's order.
        env_kwargs: what every env was made with besides the spec (empty: the spec's envs).
    """

    spec: Spec
    frames: int
    seed: int
    games: tuple[GameCheck, ...]
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def failed(self) -> list[str]:
        """The games where a rule failed."""
        return [g.game for g in self.games if g.status == "FAIL"]

    @property
    def exit_status(self) -> int:
        """0 when no rule failed, 1 otherwise (the command's exit status)."""
        return 1 if self.failed else 0

    def counts(self) -> dict[str, int]:
        """Games per status."""
        return {status: sum(g.status == status for g in self.games) for status in STATUSES}

    def table(self) -> str:
        """One row per game, then a count per status and the legend."""
        rows = []
        for g in self.games:
            r = g.rules
            life_rules = [r[name] for name in ("life_information", "termination", "life_loss")]
            lives = (
                "FAIL"
                if any(rule.status == "fail" for rule in life_rules)
                else ", ".join(rule.cell for rule in life_rules if rule.cell != "-")
            )
            own = {"game": g.game, "status": g.status, "lives": lives, "notes": g.notes or "-"}
            rows.append([own[c] if rule is None else r[rule].cell for c, rule in _COLUMNS.items()])
        spec = self.spec
        title = (
            f"{spec.name} v{spec.version} ({spec.short_hash}) - conformance in the emulator, "
            f"{self.frames:,} frames per agent, seed {self.seed}"
        )
        if spec.evaluation.scored == "after_training":
            title += "; the evaluation envs (the scored episodes), the training env for lives"
        if self.env_kwargs:
            made = ", ".join(f"{k}={v!r}" for k, v in self.env_kwargs.items())
            title += f"; envs made with {made}"
        counts = ", ".join(f"{n} {status}" for status, n in self.counts().items())
        return "\n".join(
            [
                render_table(list(_COLUMNS), rows, title=title),
                f"{count(len(self.games), 'game')}: {counts}",
                _LEGEND,
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON document (``format`` ``arcadebench-check/1``)."""
        return {
            "format": FORMAT,
            "spec": self.spec.identity,
            "settings": dataclasses.asdict(atari_settings(self.spec)),
            "frames": self.frames,
            "seed": self.seed,
            "env_kwargs": self.env_kwargs,
            "summary": self.counts(),
            "exit_status": self.exit_status,
            "games": {g.game: g.to_dict() for g in self.games},
            "provenance": {"arcadebench": __version__, "ale_py": metadata.version("ale-py")},
        }

    def to_json(self, path: str | os.PathLike[str]) -> None:
        """Write :meth:`to_dict` to ``path``."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")


def _atari_spec(spec: str | os.PathLike[str] | Spec) -> Spec:
    loaded = load_spec(spec)
    atari_settings(loaded)
    return loaded


def _games(spec: Spec, games: Sequence[str] | str | None) -> list[str]:
    if games is None:
        return list(spec.games)
    if isinstance(games, str):
        games = [games]
    if not games or not all(isinstance(g, str) for g in games):
        raise InvalidArgument(f"`games` must be a non-empty list of game names, got {games!r}")
    return list(dict.fromkeys(spec.resolve_game(g) for g in games))


_JobKey = tuple[str, tuple[tuple[str, Any], ...]]
"""A game and how it is played: specs sharing both share the play."""


def _plays(spec: Spec) -> tuple[tuple[str, Any], ...]:
    """What decides a game's plays: the env settings and which env's episodes are scored."""
    settings = dataclasses.asdict(atari_settings(spec))
    return (*settings.items(), ("scored", spec.evaluation.scored))


def _play_all(
    jobs: dict[_JobKey, tuple[str, str]],
    frames: int,
    seed: int,
    env_kwargs: dict[str, Any],
    workers: int,
    done: Callable[[str], None],
) -> dict[_JobKey, dict[str, Any]]:
    """Run every ``key: (spec ref, game)`` job; a job that raises becomes ``{"error": ...}``."""
    results: dict[_JobKey, dict[str, Any]] = {}

    def failed(error: BaseException) -> dict[str, Any]:
        died = isinstance(error, BrokenProcessPool)
        hint = " (a worker process died; workers=1 shows why)" if died else ""
        return {"error": f"{type(error).__name__}: {error}{hint}"}

    if workers == 1 or len(jobs) == 1:
        for key, (ref, game) in jobs.items():
            try:
                results[key] = play_game(ref, game, frames, seed, env_kwargs)
            except Exception as error:  # reported in the game's row
                results[key] = failed(error)
            done(game)
        return results
    pool = ProcessPoolExecutor(
        max_workers=min(workers, len(jobs)),
        mp_context=multiprocessing.get_context(clean_start_method()),
    )
    try:
        futures = {
            pool.submit(play_game, ref, game, frames, seed, env_kwargs): key
            for key, (ref, game) in jobs.items()
        }
        for future in as_completed(futures):
            key = futures[future]
            raised = future.exception()
            results[key] = failed(raised) if raised is not None else future.result()
            done(jobs[key][1])
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return results


def check_specs(
    specs: Sequence[str | os.PathLike[str] | Spec],
    games: Sequence[str] | str | None = None,
    *,
    frames: int = DEFAULT_FRAMES,
    seed: int = 0,
    workers: int = 2,
    progress: str = "auto",
    env_kwargs: Mapping[str, Any] | None = None,
) -> list[CheckReport]:
    """:func:`check` for several specs, playing each (game, settings) pair once.

    Raises:
        UnknownSpec, UnknownGame: a spec or game that does not exist (with close matches).
        InvalidArgument: a bad argument, or a spec that is not an Atari spec.
    """
    loaded = [_atari_spec(spec) for spec in specs]
    if not loaded:
        raise InvalidArgument(f"`specs` must name at least one spec, got {specs!r}")
    selections = [_games(spec, games) for spec in loaded]
    frames = check_int("frames", frames, MIN_FRAMES)
    seed = check_int("seed", seed, 0)
    workers = check_int("workers", workers, 1)
    if progress not in ("auto", "bars", "off"):
        raise InvalidArgument(f"`progress` must be 'auto', 'bars' or 'off', got {progress!r}")
    if env_kwargs is not None and not isinstance(env_kwargs, Mapping):
        raise InvalidArgument(
            f"`env_kwargs` must be a mapping of keyword arguments, got {env_kwargs!r}"
        )
    env_kwargs = dict(env_kwargs or {})
    if "phase" in env_kwargs:
        raise InvalidArgument(
            "`env_kwargs` must not set `phase`: the check plays the scored environment and, "
            "where the protocol has one, the training environment itself"
        )
    jobs: dict[_JobKey, tuple[str, str]] = {}
    for spec, selected in zip(loaded, selections, strict=True):
        for game in selected:
            jobs.setdefault((game, _plays(spec)), (spec_reference(spec), game))
    # game by game: a worker's next job is then mostly the same game, whose reference emulator
    # the sticky probe keeps (one ROM load instead of one per spec)
    jobs = dict(sorted(jobs.items(), key=lambda job: job[0][0]))
    if progress == "bars" or (progress == "auto" and sys.stderr.isatty()):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(
            TextColumn("check {task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("games"),
            console=Console(file=sys.stderr),
            transient=True,
        ) as bar:
            task = bar.add_task(", ".join(s.name for s in loaded), total=len(jobs))
            played = _play_all(
                jobs, frames, seed, env_kwargs, workers, lambda game: bar.update(task, advance=1)
            )
    else:
        played = _play_all(jobs, frames, seed, env_kwargs, workers, lambda game: None)
    reports = []
    for spec, selected in zip(loaded, selections, strict=True):
        checks = tuple(judge(spec, game, played[(game, _plays(spec))]) for game in selected)
        reports.append(CheckReport(spec, frames, seed, checks, env_kwargs))
    return reports


def check(
    spec: str | os.PathLike[str] | Spec,
    games: Sequence[str] | str | None = None,
    *,
    frames: int = DEFAULT_FRAMES,
    seed: int = 0,
    workers: int = 2,
    progress: Literal["auto", "bars", "off"] = "auto",
    env_kwargs: Mapping[str, Any] | None = None,
) -> CheckReport:
    """Play every game of an Atari ``spec`` in the emulator and verify each rule it declares.

    Why: a protocol is only comparable if the environment really does what the spec says
    (SABER: Toromanoff et al. 2019, Table 1; sticky actions: Machado et al. 2018; HWR: Fan
    2021; Atari-5: Aitchison et al. 2023), and settings can be passed without taking effect.
    Each game is played by a seeded random agent (``frames`` emulator frames, with the sticky
    actions measured inside its steps, then replayed for determinism) and NOOP agents (the max
    stuck time and the frame cap, scaled down to fit ``frames`` when larger). Every step is
    checked; see :mod:`arcadebench.benchmarks.conformance` for the rules.

    Args:
        spec: a built-in Atari spec name or a spec YAML file.
        games: games to check, any spelling (default: all of the spec's).
        frames: emulator frames per agent and game (at least :data:`MIN_FRAMES`).
        seed: seed of the env resets and the random agent.
        workers: games played at once, one process each.
        progress: ``"auto"`` (a bar when stderr is a terminal), ``"bars"`` or ``"off"``.
        env_kwargs: passed to every env the check makes: a builder option such as
            ``obs_type="standard"`` (does that env conform too?) or a setting, which makes the
            env deviate from the spec it is judged against (the check should then fail).

    Returns:
        A :class:`CheckReport`: ``table()``, ``to_json(path)``, ``failed`` and ``exit_status``.

    Raises:
        UnknownSpec, UnknownGame: a spec or game that does not exist (with close matches).
        InvalidArgument: a bad argument, or a spec that is not an Atari spec.

    Example:
        >>> report = check("atari5", ["Pong"], frames=400, workers=1, progress="off")
        >>> report.games[0].status, report.games[0].rules["max_episode_frames"].cell
        ('ok', '200/108,000 scaled')
    """
    return check_specs(
        [spec],
        games,
        frames=frames,
        seed=seed,
        workers=workers,
        progress=progress,
        env_kwargs=env_kwargs,
    )[0]
