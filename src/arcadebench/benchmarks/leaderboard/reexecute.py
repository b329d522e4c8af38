"""A submitted policy played again on the board's hidden seed, and its claims tested against it.

A verified board does not take a submission's episode returns on trust: where the submitter
gives the saved policy that played them, the board plays it again (:func:`reexecute`) on a job
seed drawn from its secret (:func:`~arcadebench.benchmarks.leaderboard.secret.hidden_seed`), so
that the episodes cannot have been chosen, and asks of each game whether the claimed returns
and the re-run's could come from one policy. The test is a two-sided permutation test of the
difference of their mean episode returns (:func:`permutation_pvalue`): it assumes nothing of the
returns' distribution (Atari returns are discrete, skewed, often bimodal), only that a frozen
policy's episodes are exchangeable whatever their seeds. Several games are several tests, so
the p-values are corrected across games with Holm's step-down method (:func:`holm`; Holm,
1979, *Scand. J. Statist.* 6(2)), which keeps the family-wise error at ``alpha``: an honest
policy is refused with probability at most ``alpha`` however many games it plays, rather than
for one unlucky game among many, and Holm rejects everything Bonferroni would and more.

A test that could not reject anything is no test: with few episodes the smallest p-value a
permutation test can give (:func:`min_attainable_pvalue`) may exceed ``alpha`` over the number
of games, and a submitter claiming a single episode per game could not be caught. Such a
re-execution says so (:attr:`Reexecution.untestable`) and is not :attr:`~Reexecution.ok`.

Classes: GameReexecution, Reexecution.
Functions: permutation_pvalue, min_attainable_pvalue, holm, reexecute, policy_sha256,
scored_returns.
"""

from __future__ import annotations

import itertools
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.runner.evaluate import evaluate
from arcadebench.benchmarks.runner.identity import file_sha256
from arcadebench.benchmarks.runner.reference import resolve_agent
from arcadebench.errors import (
    AgentError,
    ArcadebenchError,
    InvalidArgument,
    JobsFailed,
    first_line,
)
from arcadebench.records import RunLog, parse_log, phase_run, spec_logs
from arcadebench.specs import Spec, load_spec

__all__ = [
    "EXACT_SPLITS",
    "PERMUTATIONS",
    "REEXECUTION_FORMAT",
    "GameReexecution",
    "Reexecution",
    "holm",
    "min_attainable_pvalue",
    "permutation_pvalue",
    "policy_sha256",
    "reexecute",
    "scored_returns",
]

EXACT_SPLITS = 20_000
"""Up to this many splits of the pooled returns, the permutation test enumerates them all."""

PERMUTATIONS = 9_999
"""Random permutations of the Monte Carlo test beyond :data:`EXACT_SPLITS` (its smallest p is
1 / 10,000)."""

REEXECUTION_FORMAT = "arcadebench-reexecution/1"
"""The ``format`` of :meth:`Reexecution.as_dict`."""

_TOLERANCE = 1e-9
"""Relative to the largest return: permuted differences this close to the observed one count
as ties (two splits of equal means must not differ by a rounding error of their sums)."""

_BLOCK = 1 << 20
"""Returns permuted at once by the Monte Carlo test (rows of permutations), to bound memory."""


# -- the test ---------------------------------------------------------------------------------
def permutation_pvalue(
    claimed: Sequence[float],
    rerun: Sequence[float],
    rng: np.random.Generator,
    permutations: int = PERMUTATIONS,
) -> float:
    """Two-sided permutation p-value of the difference of mean returns of two samples.

    The statistic is ``d = mean(claimed) - mean(rerun)``; under the hypothesis that both are
    episodes of one policy every split of the pooled returns into groups of their sizes is as
    likely, and p is the share of splits whose ``|d|`` is at least the observed one (ties
    within a relative tolerance count). With at most :data:`EXACT_SPLITS` splits every split is
    enumerated (``rng`` is unused); beyond, ``permutations`` random ones are drawn from ``rng``
    and ``p = (1 + #{|d*| >= |d|}) / (1 + permutations)``, which is never 0 and is a valid
    p-value for any number of permutations (Phipson and Smyth, 2010, *Stat. Appl. Genet. Mol.
    Biol.* 9(1)). Equal returns everywhere give p = 1.

    Raises:
        InvalidArgument: an empty sample, a non-finite return, a non-positive ``permutations``.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> permutation_pvalue([3, 4], [0, 1, 2], rng)  # 2 of the 10 splits are as extreme
        0.2
    """
    a = _returns("claimed", claimed)
    b = _returns("rerun", rerun)
    if type(permutations) is not int or permutations <= 0:
        raise InvalidArgument(f"`permutations` must be a positive integer, got {permutations!r}")
    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument(f"`rng` must be a numpy.random.Generator, got {rng!r}")
    pooled = np.concatenate([a, b])
    if np.all(pooled == pooled[0]):
        return 1.0
    n, m = a.size, b.size
    total = float(pooled.sum())
    observed = abs(_difference(np.array([a.sum()]), total, n, m)[0])
    threshold = observed - _TOLERANCE * float(np.abs(pooled).max())
    if math.comb(n + m, n) <= EXACT_SPLITS:
        # enumerate the smaller group: at most 20,000 rows of a handful of indices
        k = min(n, m)
        chosen = np.array(list(itertools.combinations(range(n + m), k)), dtype=np.int64)
        sums = pooled[chosen].sum(axis=1)
        first = sums if k == n else total - sums  # the claimed group's sum
        extreme = np.abs(_difference(first, total, n, m)) >= threshold
        return float(extreme.mean())
    count = 0
    rows = max(1, _BLOCK // (n + m))
    for start in range(0, permutations, rows):
        block = min(rows, permutations - start)
        shuffled = rng.permuted(np.broadcast_to(pooled, (block, n + m)), axis=1)
        first = shuffled[:, :n].sum(axis=1)
        count += int(np.count_nonzero(np.abs(_difference(first, total, n, m)) >= threshold))
    return (1 + count) / (1 + permutations)


def _difference(first: NDArray[np.float64], total: float, n: int, m: int) -> NDArray[np.float64]:
    """``mean(first group) - mean(second group)`` from the first group's sums."""
    return first / n - (total - first) / m


def _returns(name: str, values: Sequence[float]) -> NDArray[np.float64]:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        array = np.zeros((0, 0))
    if array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise InvalidArgument(
            f"`{name}` must be a non-empty sequence of finite episode returns, got {values!r}"
        )
    return array


def min_attainable_pvalue(n: int, m: int, permutations: int = PERMUTATIONS) -> float:
    """The smallest p :func:`permutation_pvalue` can give samples of ``n`` and ``m`` returns.

    Exact test: the observed split always counts, and when ``n == m`` so does its mirror
    (the same ``|d|``), so the smallest p is ``2 / comb(n + m, n)`` for equal sizes and
    ``1 / comb(n + m, n)`` otherwise (capped at 1); the Monte Carlo test's is
    ``1 / (1 + permutations)``. If it exceeds ``alpha`` over the number of games, Holm's
    first step cannot reject even the most different game: the test is powerless.

    Example:
        >>> min_attainable_pvalue(5, 5), min_attainable_pvalue(2, 3), min_attainable_pvalue(1, 1)
        (0.007936507936507936, 0.1, 1.0)
    """
    for name, value in (("n", n), ("m", m), ("permutations", permutations)):
        if type(value) is not int or value <= 0:
            raise InvalidArgument(f"`{name}` must be a positive integer, got {value!r}")
    splits = math.comb(n + m, n)
    if splits > EXACT_SPLITS:
        return 1 / (1 + permutations)
    return min(1.0, (2 if n == m else 1) / splits)


def holm(pvalues: Mapping[str, float]) -> dict[str, float]:
    """Holm-Bonferroni adjusted p-values: a game is rejected at family-wise ``alpha`` if <= alpha.

    With the ``G`` p-values sorted increasingly (ties in the mapping's order), the ``i``-th
    (from 1) is multiplied by ``G - i + 1``, then made non-decreasing along the order (each is
    at least the one before it: the step-down stops at the first acceptance) and capped at 1.
    Comparing the adjusted p-values with ``alpha`` is Holm's procedure.

    Raises:
        InvalidArgument: a value that is not a probability.

    Example:
        >>> holm({"a": 0.01, "b": 0.04, "c": 0.03})
        {'a': 0.03, 'b': 0.06, 'c': 0.06}
    """
    for key, value in pvalues.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise InvalidArgument(f"`pvalues` must be probabilities, got {value!r} for {key!r}")
    order = sorted(pvalues, key=lambda key: pvalues[key])  # stable: ties keep the given order
    adjusted: dict[str, float] = {}
    running = 0.0
    for rank, key in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * float(pvalues[key])))
        adjusted[key] = running
    return {key: adjusted[key] for key in pvalues}


# -- the outcome ------------------------------------------------------------------------------
@dataclass(frozen=True)
class GameReexecution:
    """One game's claims against its re-run.

    Attributes:
        game: the canonical game name.
        claimed_episodes: the claimed complete episodes.
        claimed_mean: their mean return.
        rerun_episodes: the re-run's complete episodes.
        rerun_mean: their mean return.
        p_value: the permutation test's p-value (:func:`permutation_pvalue`).
        adjusted_p: Holm-adjusted across the re-execution's games (:func:`holm`).
        reproduced: whether the claims stand (``adjusted_p > alpha``).
    """

    game: str
    claimed_episodes: int
    claimed_mean: float
    rerun_episodes: int
    rerun_mean: float
    p_value: float
    adjusted_p: float
    reproduced: bool

    def describe(self) -> str:
        """The game's claims and re-run in a few words, for a verdict.

        Example:
            >>> GameReexecution("breakout", 3, 400.0, 10, 1.4, 2e-5, 2e-4, False).describe()
            'breakout (claimed 400.0 over 3 episodes, re-run 1.4 over 10, Holm-adjusted p 0.0002)'
        """
        claimed = _count(self.claimed_episodes, "episode")
        return (
            f"{self.game} (claimed {self.claimed_mean:.1f} over {claimed}, "
            f"re-run {self.rerun_mean:.1f} over {self.rerun_episodes}, Holm-adjusted p "
            f"{_p(self.adjusted_p)})"
        )


@dataclass(frozen=True)
class Reexecution:
    """A policy played again on a board's hidden seed, and the verdict on its claims.

    The hidden seed is here and in the re-run's log names: publish neither before the board
    reveals its secret (a policy tuned to a known seed's episodes would pass a later test).

    Attributes:
        policy: the agent reference played (``torchscript:policy.pt``...).
        policy_sha256: the SHA-256 of its file as the re-run's log headers record it (``None``
            for an agent without a file, e.g. a built-in one).
        seed: the hidden job seed it was played on.
        episodes: the re-run's episodes per game (the board's number).
        alpha: the family-wise error rate of the test.
        test: the test in one sentence.
        games: each game's claims and re-run, in the claims' order.
        untestable: why the test could not refute a game's claims whatever they were (too few
            episodes for any p-value to reach Holm's first threshold), or ``None``.
        log_dir: where the re-run's logs are.
    """

    policy: str
    policy_sha256: str | None
    seed: int
    episodes: int
    alpha: float
    test: str
    games: tuple[GameReexecution, ...]
    untestable: str | None = None
    log_dir: Path = field(default_factory=Path)

    @property
    def ok(self) -> bool:
        """The test could reject, and every game's claims stand."""
        return self.untestable is None and all(game.reproduced for game in self.games)

    @property
    def failed_games(self) -> tuple[str, ...]:
        """The games whose claims the re-run refutes."""
        return tuple(game.game for game in self.games if not game.reproduced)

    def summary(self) -> str:
        """The verdict in one line.

        Example:
            >>> game = GameReexecution("pong", 10, 20.1, 10, 19.9, 0.41, 0.41, True)
            >>> Reexecution("torchscript:p.pt", None, 1, 10, 0.01, "...", (game,)).summary()
            're-executed on hidden seeds: 1 game reproduced (smallest Holm-adjusted p 0.41)'
        """
        failed = [game for game in self.games if not game.reproduced]
        if failed:  # a refutation stands even where another game could not have been refuted
            return "does not reproduce: " + "; ".join(game.describe() for game in failed)
        if self.untestable is not None:
            return f"not testable: {self.untestable}"
        smallest = min((game.adjusted_p for game in self.games), default=1.0)
        return (
            f"re-executed on hidden seeds: {_count(len(self.games), 'game')} reproduced "
            f"(smallest Holm-adjusted p {_p(smallest)})"
        )

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-able data (:meth:`from_dict` reads it back)."""
        return {
            "format": REEXECUTION_FORMAT,
            **asdict(self),
            "games": [asdict(game) for game in self.games],
            "log_dir": str(self.log_dir),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reexecution:
        """The re-execution :meth:`as_dict` gave.

        Raises:
            InvalidArgument: ``data`` is not what :meth:`as_dict` gives.
        """
        if not isinstance(data, Mapping) or data.get("format") != REEXECUTION_FORMAT:
            found = data.get("format") if isinstance(data, Mapping) else type(data).__name__
            raise InvalidArgument(
                f"`data` must be a re-execution's as_dict() (format {REEXECUTION_FORMAT!r}), "
                f"got {found!r}"
            )
        try:
            types = {"str": str, "int": int, "float": float, "bool": bool}
            games = tuple(
                GameReexecution(
                    **{f.name: types[str(f.type)](g[f.name]) for f in fields(GameReexecution)}
                )
                for g in data["games"]
            )
            digest, untestable = data["policy_sha256"], data["untestable"]
            return cls(
                policy=str(data["policy"]),
                policy_sha256=_text(digest),
                seed=int(data["seed"]),
                episodes=int(data["episodes"]),
                alpha=float(data["alpha"]),
                test=str(data["test"]),
                games=games,
                untestable=_text(untestable),
                log_dir=Path(data["log_dir"]),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise InvalidArgument(
                f"`data` must be a re-execution's as_dict(), got one with a missing or bad "
                f"field ({type(error).__name__}: {first_line(error)})"
            ) from None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def _p(value: float) -> str:
    """A p-value in two significant digits: ``0.41``, ``0.0002``, ``1``."""
    return f"{value:.2g}"


def _describe_test(games: int, alpha: float) -> str:
    """The test of a re-execution in one sentence."""
    return (
        "two-sided permutation test of the difference of mean episode returns (exact up to "
        f"{EXACT_SPLITS:,} splits, else {PERMUTATIONS:,} permutations), Holm-corrected across "
        f"{_count(games, 'game')} at family-wise {alpha:g}"
    )


# -- playing it again -------------------------------------------------------------------------
def reexecute(
    policy: str,
    spec: Spec | str | os.PathLike[str],
    claimed: Mapping[str, Sequence[float]],
    *,
    episodes: int,
    seed: int,
    alpha: float,
    log_dir: str | os.PathLike[str],
    workers: int | None = None,
    backend: Literal["local", "ray"] = "local",
    map_actions: bool = False,
    env_kwargs: dict[str, Any] | None = None,
) -> Reexecution:
    """Play ``policy`` on the hidden ``seed`` and test each game's claimed returns against it.

    The runner plays it (:func:`~arcadebench.benchmarks.runner.evaluate.evaluate`: one job per
    claimed game, all under ``seed``, ``episodes`` complete episodes each, logged to
    ``log_dir``), which resolves the agent once and records its identity (its file's SHA-256)
    in every log header. The scored episodes are read back from those logs
    (:func:`scored_returns`), each game is tested with :func:`permutation_pvalue` (its
    generator seeded from ``seed`` and the game's place, so the verdict is reproducible), and
    the p-values are adjusted with :func:`holm`; a game is reproduced when its adjusted p
    exceeds ``alpha``.

    Args:
        policy: any agent reference ``arcadebench run --agent`` takes (a saved policy
            ``torchscript:policy.pt``, ``sb3:PPO:model.zip``, ``module:attr``, a built-in name).
        spec: the protocol the claims were played under.
        claimed: each game's claimed complete episode returns (any spelling of the game).
        episodes: complete episodes the re-run plays per game.
        seed: the hidden job seed
            (:func:`~arcadebench.benchmarks.leaderboard.secret.hidden_seed`).
        alpha: the family-wise error rate across games (e.g. 0.01).
        log_dir: a directory without logs of ``spec`` yet: a re-execution plays every episode.
        workers: worker processes (default: one per core).
        backend: ``"local"`` or ``"ray"``.
        map_actions: play a model of another action set on its own set (a deviation).
        env_kwargs: extra environment settings, as the claims were played with.

    Returns:
        The :class:`Reexecution`; not :attr:`~Reexecution.ok` when a game does not reproduce
        or the test could not reject anything (:attr:`~Reexecution.untestable`).

    Raises:
        InvalidArgument: bad arguments, or ``log_dir`` already holds logs of ``spec``.
        IncompatibleAgent: the policy cannot play a game (another observation or action set).
        AgentError: the policy raised or chose an invalid action while it was played.
        ArcadebenchError: an unknown game or policy, a job that failed otherwise, a policy file
            that changed while it was played.
    """
    spec = spec if isinstance(spec, Spec) else load_spec(spec)
    games = _check_claims(spec, claimed)
    _check_settings(policy, episodes, seed, alpha)
    out = Path(log_dir)
    already = spec_logs(out, spec.name) if out.is_dir() else []
    if already:
        raise InvalidArgument(
            f"`log_dir` must hold no logs of {spec.name!r} yet (a re-execution plays every "
            f"episode afresh), got {str(out)!r} with {_count(len(already), 'log')}; give a new "
            "directory"
        )
    with warnings.catch_warnings():
        # the claims' run was warned about the same settings; the re-run is the board's own
        warnings.simplefilter("ignore")
        try:
            evaluate(
                policy,
                spec,
                list(games),
                episodes=episodes,
                seeds=(seed,),
                workers=workers,
                log_dir=out,
                backend=backend,
                env_kwargs=env_kwargs,
                map_actions=map_actions,
                progress="off",
                reps=0,
            )
        except JobsFailed as error:  # refusals before anything played keep their type
            raise _failed(policy, seed, error) from None
        logs = spec_logs(out, spec.name)
        rerun = scored_returns(spec, logs, run=str(seed))
        digest = _played_sha256(spec, logs)
    return _verdict(policy, digest, seed, episodes, alpha, games, rerun, out)


def _check_claims(spec: Spec, claimed: Mapping[str, Sequence[float]]) -> dict[str, list[float]]:
    """The claims by canonical game name, each a non-empty list of finite returns."""
    if not isinstance(claimed, Mapping) or not claimed:
        raise InvalidArgument(
            f"`claimed` must map each game to its claimed episode returns, got {claimed!r}"
        )
    games: dict[str, list[float]] = {}
    for name, values in claimed.items():
        game = spec.resolve_game(name)
        if game in games:
            raise InvalidArgument(
                f"`claimed` must name each game once, got {game!r} twice (as {name!r})"
            )
        games[game] = [float(v) for v in _returns(f"claimed[{name!r}]", values)]
    return games


def _check_policy(policy: object) -> None:
    if not isinstance(policy, str) or not policy:
        raise InvalidArgument(
            f"`policy` must be an agent reference such as 'torchscript:policy.pt', got {policy!r}"
        )


def _check_settings(policy: object, episodes: object, seed: object, alpha: object) -> None:
    _check_policy(policy)
    if type(episodes) is not int or episodes <= 0:
        raise InvalidArgument(f"`episodes` must be a positive integer, got {episodes!r}")
    if type(seed) is not int or seed < 0:
        raise InvalidArgument(f"`seed` must be a non-negative integer, got {seed!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 < alpha < 1:
        raise InvalidArgument(f"`alpha` must be a probability in (0, 1), got {alpha!r}")


def _failed(policy: str, seed: int, error: JobsFailed) -> ArcadebenchError:
    """The failed jobs of a re-execution in one line, the hidden seed not shown."""
    reasons = "; ".join(
        f"{str(key).split('/')[0]}: {first_line(failure)}" for key, failure in error.failures[:3]
    )
    more = f" (and {len(error.failures) - 3} more)" if len(error.failures) > 3 else ""
    message = f"re-executing {policy} on the hidden seed failed in {reasons}{more}"
    message = message.replace(str(seed), "<hidden seed>")
    agents_fault = any(
        getattr(getattr(f, "kind", None), "agents_fault", False) for _, f in error.failures
    )
    return AgentError(message) if agents_fault else ArcadebenchError(message)


def _verdict(
    policy: str,
    digest: str | None,
    seed: int,
    episodes: int,
    alpha: float,
    claimed: Mapping[str, list[float]],
    rerun: Mapping[str, list[float]],
    log_dir: Path,
) -> Reexecution:
    """Test each game, adjust across games, and say whether the test had any power."""
    generators = np.random.SeedSequence(seed).spawn(len(claimed))
    raw: dict[str, float] = {}
    for (game, returns), generator in zip(claimed.items(), generators, strict=True):
        played = rerun.get(game)
        if not played:
            raise ArcadebenchError(
                f"the re-execution of {policy} logged no complete {game} episode in {log_dir}; "
                "look at its logs"
            )
        raw[game] = permutation_pvalue(returns, played, np.random.default_rng(generator))
    adjusted = holm(raw)
    level = alpha / len(claimed)
    details = ", ".join(
        f"{game} ({len(returns)} claimed, {len(rerun[game])} re-run: the smallest p the test "
        f"gives is {_p(p)}, above {_p(level)})"
        for game, returns in claimed.items()
        if (p := min_attainable_pvalue(len(returns), len(rerun[game]))) > level
    )
    untestable = (
        f"too few episodes to refute any claim on {details}, at family-wise {alpha:g} over "
        f"{_count(len(claimed), 'game')}; more episodes (claimed or re-run) are needed"
        if details
        else None
    )
    return Reexecution(
        policy=policy,
        policy_sha256=digest,
        seed=seed,
        episodes=episodes,
        alpha=float(alpha),
        test=_describe_test(len(claimed), alpha),
        games=tuple(
            GameReexecution(
                game=game,
                claimed_episodes=len(returns),
                claimed_mean=float(np.mean(returns)),
                rerun_episodes=len(rerun[game]),
                rerun_mean=float(np.mean(rerun[game])),
                p_value=raw[game],
                adjusted_p=adjusted[game],
                reproduced=adjusted[game] > alpha,
            )
            for game, returns in claimed.items()
        ),
        untestable=untestable,
        log_dir=log_dir,
    )


# -- reading the re-run -----------------------------------------------------------------------
def scored_returns(
    spec: Spec, logs: Iterable[str | os.PathLike[str]], *, run: str | None = None
) -> dict[str, list[float]]:
    """Each game's returns of the episodes ``spec`` scores, from its logs.

    As the scorer counts them (:mod:`~arcadebench.benchmarks.scoring.log_scores`): under a
    protocol scored after training (Atari 100k, DQN 2015) the complete episodes of the
    evaluation logs (``<run>.eval``); otherwise the complete training episodes within the
    budget. Runs of a game are pooled in log order; ``run`` keeps only that run (its
    evaluation, if the protocol scores one).

    Raises:
        InputError: a log the reader refuses (another spec, a damaged line).
    """
    phase = "evaluation" if spec.evaluation.scored == "after_training" else "training"
    wanted = None if run is None else phase_run(run, phase)
    found: dict[str, list[float]] = {}
    for path in logs:
        for log in parse_log(spec, path):
            if log.phase != phase or (wanted is not None and log.run != wanted):
                continue
            found.setdefault(log.game, []).extend(_scored(spec, log).tolist())
    return found


def _scored(spec: Spec, log: RunLog) -> NDArray[np.float64]:
    """A run's scored returns: its complete episodes, within the budget when training ones."""
    valid = log.complete.copy()
    if log.phase == "training":  # run_scores' rule; evaluation episodes are outside the budget
        if spec.evaluation.budget_frames is not None:
            valid &= log.total_frames <= spec.evaluation.budget_frames
        if spec.evaluation.budget_steps is not None:
            valid &= log.total_steps <= spec.evaluation.budget_steps
    scored: NDArray[np.float64] = log.returns[valid]
    return scored


def _played_sha256(spec: Spec, logs: Iterable[Path]) -> str | None:
    """The policy file's SHA-256 the re-run's headers record, checked against the file now.

    A file replaced while it was played (between the runner hashing it and a worker loading
    it, or after) is refused: the re-run's episodes would not be the recorded file's.

    Raises:
        ArcadebenchError: the headers disagree, or the file changed.
    """
    recorded = {
        (_text(log.agent.get("sha256")), _text(log.agent.get("file")))
        for path in logs
        for log in parse_log(spec, path)
    }
    if len(recorded) > 1:
        raise ArcadebenchError(
            f"the re-run's logs record {len(recorded)} different policies: its log directory was "
            "written by another run too; re-execute into a new directory"
        )
    digest, file = next(iter(recorded), (None, None))
    if digest is not None and file is not None:
        now = file_sha256(Path(file))
        if now != digest:
            raise ArcadebenchError(
                f"the policy file {file} changed while it was re-executed (sha256 {digest[:12]} "
                f"when the run began, {now[:12]} now): keep the file unchanged and re-execute"
            )
    return digest


def policy_sha256(policy: str, spec: Spec) -> str | None:
    """The SHA-256 a log header records for ``policy`` (``agent.sha256``), or ``None``.

    What the runner records of the agent it resolves once
    (:func:`~arcadebench.benchmarks.runner.reference.resolve_agent`): a saved policy's file, a
    ``module:attr`` agent's module file, nothing for a built-in agent. The board compares it
    with the submission's header before playing the policy again, and
    :attr:`Reexecution.policy_sha256` is what the re-run itself recorded.

    Raises:
        ArcadebenchError: a reference the runner does not take, a saved policy's missing or
            damaged file, a module that does not import.

    Example:
        >>> policy_sha256("random", load_spec("saber")) is None
        True
    """
    _check_policy(policy)
    return _text(resolve_agent(policy, spec).identity.record.get("sha256"))
