"""The search (Algorithm 1, BEST_SUBSET), vectorised: best_subsets and nested_selection.

All subsets of one size are fitted and cross-validated in batches from per-mask Gram statistics
(see the package docstring), in blocks that a process pool shares out when the search is large;
the best are refitted with :func:`fit_subset` and returned as a :class:`SubsetSearch`.
"""

from __future__ import annotations

import concurrent.futures
import itertools
import math
import multiprocessing
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
from numpy.typing import NDArray

from arcadebench.benchmarks.subset.dataset import SubsetData
from arcadebench.benchmarks.subset.fit import (
    DEFAULT_SEED,
    SubsetFit,
    _check_cv,
    _fold_ids,
    fit_subset,
)
from arcadebench.errors import SubsetError

__all__ = [
    "DEFAULT_MAX_SUBSETS",
    "SubsetSearch",
    "best_subsets",
    "nested_selection",
]

#: Largest search run without being asked for (C(57, 6) is 36 million).
DEFAULT_MAX_SUBSETS = 50_000_000

_CHUNK = 65_536  # subsets per work unit
_CV_BATCH = 4_096  # subsets whose fold systems are solved together (memory: batch x folds x q^2)
_STATS_BYTES = 256 * 2**20  # cap on the per-mask Gram statistics held at once
_PARALLEL_MIN = 200_000  # smaller searches run in-process (a pool costs more than it saves)


@dataclass(frozen=True, eq=False)
class _Problem:
    """What a worker needs: columns of log-scores, their presence bits, the target, the CV plan."""

    x: NDArray[np.float64]  # (m, c) log-scores, 0 where missing; last column all ones if intercept
    bits: NDArray[np.uint64]  # (c, words): bit r of a column is set when algorithm r has a score
    y: NDArray[np.float64]  # (m,)
    folds: int
    seed: int
    intercept: bool
    keep: int  # best subsets each work unit returns


def _presence_bits(present: NDArray[np.bool_]) -> NDArray[np.uint64]:
    m, c = present.shape
    words = (m + 63) // 64
    bits = np.zeros((c, words), dtype=np.uint64)
    for w in range(words):
        block = present[w * 64 : (w + 1) * 64].T.astype(np.uint64)  # (c, <=64)
        shifts = np.arange(block.shape[1], dtype=np.uint64)
        bits[:, w] = np.bitwise_or.reduce(block << shifts, axis=1)
    return bits


def _unpack_bits(keys: NDArray[np.uint64], m: int) -> NDArray[np.bool_]:
    rows = np.arange(m)
    words, shifts = rows // 64, (rows % 64).astype(np.uint64)
    present: NDArray[np.bool_] = ((keys[:, words] >> shifts) & np.uint64(1)).astype(bool)
    return present


def _solve(gram: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
    """Batched normal equations G beta = b.

    A column that is zero in every row (e.g. a hard-exploration game every included algorithm
    scored at random level) makes G singular; like the minimum-norm least-squares solution the
    authors' ``LinearRegression`` (scipy ``lstsq``) returns, it gets weight 0.
    """
    diag = np.diagonal(gram, axis1=-2, axis2=-1)
    zero = diag <= 0.0
    if zero.any():
        gram, rhs = gram.copy(), rhs.copy()
        batch, col = np.nonzero(zero)
        gram[batch, col, :] = 0.0
        gram[batch, :, col] = 0.0
        gram[batch, col, col] = 1.0
        rhs[batch, col] = 0.0
    try:
        # numpy's stubs type the solution as any floating dtype: float64 in, float64 out (no copy)
        beta = np.linalg.solve(gram, rhs[..., None])[..., 0].astype(np.float64, copy=False)
    except np.linalg.LinAlgError:  # exactly collinear columns: the minimum-norm solution
        beta = (np.linalg.pinv(gram) @ rhs[..., None])[..., 0]
    return beta


def _mask_stats(
    x: NDArray[np.float64], y: NDArray[np.float64], masks: NDArray[np.bool_], folds: int, seed: int
) -> dict[str, NDArray[np.float64]]:
    """Per-mask, per-fold sufficient statistics: X'X, X'y, y'y, sum y and row counts.

    Every subset with the same set of complete algorithms (its mask) has the same rows and the
    same folds, so its Gram matrices are slices of these.
    """
    g, m = masks.shape
    c = x.shape[1]
    weights = np.zeros((g, folds, m))
    for u in range(g):
        rows = np.flatnonzero(masks[u])
        weights[u, _fold_ids(len(rows), folds, seed), rows] = 1.0
    w = weights.reshape(g * folds, m)
    outer = (x[:, :, None] * x[:, None, :]).reshape(m, c * c)
    fold_gram = (w @ outer).reshape(g, folds, c, c)
    fold_xy = (w @ (x * y[:, None])).reshape(g, folds, c)
    fold_yy = (w @ (y * y)).reshape(g, folds)
    fold_n = weights.sum(axis=2)
    return {
        "gram": fold_gram.sum(axis=1),
        "xy": fold_xy.sum(axis=1),
        "yy": fold_yy.sum(axis=1),
        "sy": masks.astype(float) @ y,
        "n": fold_n.sum(axis=1),
        "fold_gram": fold_gram,
        "fold_xy": fold_xy,
        "fold_yy": fold_yy,
        "fold_n": fold_n,
    }


def _quadratic(beta: NDArray[np.float64], gram: NDArray[np.float64]) -> NDArray[np.float64]:
    value: NDArray[np.float64] = np.einsum("...i,...ij,...j->...", beta, gram, beta)
    return value


class _Block(TypedDict):
    """What a work unit sends back: its best subsets (rows aligned, best first) and its counts."""

    index: NDArray[np.intp]  # (k,) enumeration number of each subset
    combos: NDArray[np.intp]  # (k, q) column numbers of each subset
    beta: NDArray[np.float64]  # (k, q)
    mse: NDArray[np.float64]  # (k,) in-sample
    cv_mse: NDArray[np.float64]  # (k,) k-fold: the ranking criterion
    n: NDArray[np.float64]  # (k,) rows of each fit
    fitted: int
    nonnegative: int


def _merge(blocks: Sequence[_Block], keep: int, q: int) -> _Block:
    """The ``keep`` best subsets of ``blocks`` (by k-fold MSE, ties by enumeration order)."""
    if not blocks:
        return _Block(
            index=np.empty(0, dtype=np.intp),
            combos=np.empty((0, q), dtype=np.intp),
            beta=np.empty((0, q)),
            mse=np.empty(0),
            cv_mse=np.empty(0),
            n=np.empty(0),
            fitted=0,
            nonnegative=0,
        )
    index = np.concatenate([b["index"] for b in blocks])
    cv_mse = np.concatenate([b["cv_mse"] for b in blocks])
    best = np.lexsort((index, cv_mse))[:keep]
    return _Block(
        index=index[best],
        combos=np.concatenate([b["combos"] for b in blocks])[best],
        beta=np.concatenate([b["beta"] for b in blocks])[best],
        mse=np.concatenate([b["mse"] for b in blocks])[best],
        cv_mse=cv_mse[best],
        n=np.concatenate([b["n"] for b in blocks])[best],
        fitted=sum(b["fitted"] for b in blocks),
        nonnegative=sum(b["nonnegative"] for b in blocks),
    )


def _search_chunk(problem: _Problem, start: int, combos: NDArray[np.intp]) -> _Block:
    """Fit, prune (Algorithm 1 line 14) and cross-validate one block of subsets.

    Returns the ``problem.keep`` best non-negative subsets of the block (by k-fold MSE, ties by
    enumeration order) and the counts of fitted and non-negative subsets.
    """
    m = len(problem.y)
    n_rows, q = combos.shape
    n_weights = q - 1 if problem.intercept else q
    keys = np.bitwise_and.reduce(problem.bits[combos], axis=1)  # (B, words)
    if keys.shape[1] == 1:
        unique, inverse = np.unique(keys[:, 0], return_inverse=True)
        unique = unique[:, None]
    else:
        unique, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    masks = _unpack_bits(unique, m)
    counts = masks.sum(axis=1)
    enough = counts >= max(problem.folds, q + 1)
    columns, local = np.unique(combos, return_inverse=True)
    local = local.reshape(n_rows, q)
    x = problem.x[:, columns]
    per_mask = (problem.folds + 1) * len(columns) ** 2 * 8
    group = max(1, _STATS_BYTES // per_mask)
    kept: list[_Block] = []
    usable = np.flatnonzero(enough)
    for lo in range(0, len(usable), group):
        group_masks = usable[lo : lo + group]
        slot = np.full(len(unique), -1)
        slot[group_masks] = np.arange(len(group_masks))
        fitted = np.flatnonzero(slot[inverse] >= 0)
        if not len(fitted):
            continue
        stats = _mask_stats(x, problem.y, masks[group_masks], problem.folds, problem.seed)
        all_mid = slot[inverse[fitted]]
        all_sub = local[fitted]
        all_gram = stats["gram"][all_mid[:, None, None], all_sub[:, :, None], all_sub[:, None, :]]
        all_xy = stats["xy"][all_mid[:, None], all_sub]
        all_beta = _solve(all_gram, all_xy)
        all_n = stats["n"][all_mid]
        all_sse = (
            stats["yy"][all_mid]
            - 2.0 * np.sum(all_beta * all_xy, axis=1)
            + _quadratic(all_beta, all_gram)
        )
        ok = np.all(all_beta[:, :n_weights] >= 0.0, axis=1)
        # only the subsets without a negative weight go on to cross-validation
        chosen, mid, sub, n, sse = fitted[ok], all_mid[ok], all_sub[ok], all_n[ok], all_sse[ok]
        gram, xy, beta = all_gram[ok], all_xy[ok], all_beta[ok]
        cv = np.empty(len(chosen))
        fold = np.arange(problem.folds)
        for b0 in range(0, len(chosen), _CV_BATCH):
            sl = slice(b0, b0 + _CV_BATCH)
            bm, bs = mid[sl], sub[sl]
            test_gram = stats["fold_gram"][
                bm[:, None, None, None],
                fold[None, :, None, None],
                bs[:, None, :, None],
                bs[:, None, None, :],
            ]
            test_xy = stats["fold_xy"][bm[:, None, None], fold[None, :, None], bs[:, None, :]]
            train = _solve(
                (gram[sl, None] - test_gram).reshape(-1, q, q),
                (xy[sl, None] - test_xy).reshape(-1, q),
            ).reshape(-1, problem.folds, q)
            test_sse = (
                stats["fold_yy"][bm]
                - 2.0 * np.sum(train * test_xy, axis=2)
                + _quadratic(train, test_gram)
            )
            cv[sl] = np.mean(test_sse / stats["fold_n"][bm], axis=1)
        best = np.lexsort((chosen, cv))[: problem.keep]
        kept.append(
            _Block(
                index=start + chosen[best],
                combos=combos[chosen[best]],
                beta=beta[best],
                mse=sse[best] / n[best],
                cv_mse=cv[best],
                n=n[best],
                fitted=len(fitted),
                nonnegative=int(ok.sum()),
            )
        )
    return _merge(kept, problem.keep, q)


def _combination_blocks(
    pool: Sequence[int], r: int, tail: Sequence[int], chunk: int
) -> Iterator[tuple[int, NDArray[np.intp]]]:
    """All r-subsets of ``pool`` (lexicographic), ``tail`` appended to each, ``chunk`` at a time."""
    iterator = itertools.combinations(pool, r)
    tail_array = np.asarray(tail, dtype=np.intp)
    start = 0
    while True:
        block = list(itertools.islice(iterator, chunk))
        if not block:
            return
        heads = np.array(block, dtype=np.intp).reshape(len(block), r)
        yield start, np.hstack([heads, np.broadcast_to(tail_array, (len(block), len(tail_array)))])
        start += len(block)


def _default_processes() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _pool_context() -> multiprocessing.context.BaseContext:
    # fork shares the imported package with the workers (no re-import); elsewhere the default.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _run_blocks(
    problem: _Problem, blocks: Iterator[tuple[int, NDArray[np.intp]]], processes: int
) -> list[_Block]:
    if processes <= 1:
        return [_search_chunk(problem, start, combos) for start, combos in blocks]
    results: list[_Block] = []
    with concurrent.futures.ProcessPoolExecutor(processes, mp_context=_pool_context()) as pool:
        pending: set[concurrent.futures.Future[_Block]] = set()
        for start, combos in blocks:  # at most 2 blocks per worker in flight: bounded memory
            pending.add(pool.submit(_search_chunk, problem, start, combos))
            if len(pending) >= 2 * processes:
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED
                )
                results.extend(f.result() for f in done)
        results.extend(f.result() for f in pending)
    return results


@dataclass(frozen=True)
class SubsetSearch:
    """The outcome of Algorithm 1 over all subsets of one size.

    Attributes:
        size: games per subset.
        fits: the best subsets, best first (lowest k-fold MSE), each refitted directly.
        n_subsets: subsets enumerated (COMB in Algorithm 1).
        n_fitted: subsets with enough algorithms with complete data to fit and cross-validate.
        n_nonnegative: of those, the ones without a negative weight (Algorithm 1 line 14),
            which were cross-validated.
        pool: the games the search chose from (besides ``always``).
        always: games in every subset.
        seconds: wall time of the search.
        processes: worker processes used.
    """

    size: int
    fits: tuple[SubsetFit, ...]
    n_subsets: int
    n_fitted: int
    n_nonnegative: int
    pool: tuple[str, ...]
    always: tuple[str, ...]
    seconds: float
    processes: int

    @property
    def best(self) -> SubsetFit:
        """The selected subset (Algorithm 1's output)."""
        return self.fits[0]


def best_subsets(
    data: SubsetData,
    size: int,
    *,
    exclude: Iterable[str] = (),
    within: Iterable[str] | None = None,
    always: Iterable[str] = (),
    intercept: bool = False,
    folds: int = 10,
    seed: int = DEFAULT_SEED,
    top: int = 10,
    processes: int | None = None,
    max_subsets: int = DEFAULT_MAX_SUBSETS,
) -> SubsetSearch:
    """Search all subsets of ``size`` games (Algorithm 1, BEST_SUBSET) and return the best.

    For every subset: least squares of the target on the subset's log-normalised scores over the
    algorithms with all of its games, no intercept (Section 4.3); a fit with a negative weight is
    rejected (line 14); the rest are ranked by k-fold cross-validated MSE in log space (line 17).
    Folds follow scikit-learn's ``KFold(folds, shuffle=True, random_state=seed)`` over the
    algorithms in name order, as in the authors' code. The ``top`` best are refitted directly
    (:func:`fit_subset`) for their figures.

    Note:
        The authors' ``atari5.py`` cross-validates only the 20 subsets with the lowest in-sample
        MSE and has no non-negativity check; on their data both rules select the same subsets.

    Args:
        data: from :func:`prepare`.
        size: games per subset (including ``always``).
        exclude: games never used (the validation searches exclude the test games).
        within: search only these games (Atari-3 is searched within Atari-5).
        always: games in every subset (Atari-5-Val extends Atari-3-Val; Atari-10 extends Atari-5);
            they are listed last, as in Table 9.
        intercept: fit an intercept too (not the paper's subset models; Section 5.1 uses one).
        folds: k of the k-fold cross-validation.
        seed: seed of the fold permutation (the authors': 1982).
        top: how many of the best subsets to return.
        processes: worker processes (default: the CPUs available); small searches run inline.
        max_subsets: refuse larger searches (narrow them with ``within`` or ``exclude``).

    Raises:
        UnknownGame: a named game is not in the table.
        SubsetError: bad arguments, a named game that is not a candidate, a search larger than
            ``max_subsets``, or no subset with non-negative weights.
    """
    started = time.perf_counter()
    _check_cv(folds, seed)
    for param, value, low in (("size", size, 1), ("top", top, 1), ("max_subsets", max_subsets, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise SubsetError(f"`{param}` must be an integer >= {low}, got {value!r}")
    if processes is not None and (not isinstance(processes, int) or processes < 1):
        raise SubsetError(f"`processes` must be a positive integer or None, got {processes!r}")
    pool, always_games = _search_space(data, exclude, within, always)
    r = size - len(always_games)
    if r < 0:
        raise SubsetError(
            f"`size` must be at least the {len(always_games)} games of `always`, got {size}"
        )
    if r > len(pool):
        raise SubsetError(
            f"`size` must be at most {len(pool) + len(always_games)} (the games to choose "
            f"from), got {size}"
        )
    n_subsets = math.comb(len(pool), r)
    if n_subsets > max_subsets:
        raise SubsetError(
            f"a search of C({len(pool)}, {r}) = {n_subsets:,} subsets is larger than max_subsets="
            f"{max_subsets:,}; narrow it with `within`/`exclude` (--within/--exclude) or "
            "raise the limit"
        )
    games = data.table.games
    columns = [games.index(g) for g in (*pool, *always_games)]
    x = data.x[:, columns]
    present = ~np.isnan(x)
    x = np.where(present, x, 0.0)
    if intercept:
        x = np.column_stack([x, np.ones(len(x))])
        present = np.column_stack([present, np.ones(len(x), dtype=bool)])
    tail = list(range(len(pool), len(pool) + len(always_games))) + (
        [len(columns)] if intercept else []
    )
    problem = _Problem(
        x=x,
        bits=_presence_bits(present),
        y=np.asarray(data.y),
        folds=folds,
        seed=seed,
        intercept=intercept,
        keep=top + 16,
    )
    workers = _default_processes() if processes is None else processes
    workers = 1 if n_subsets < _PARALLEL_MIN else min(workers, -(-n_subsets // _CHUNK))
    parts = _run_blocks(problem, _combination_blocks(range(len(pool)), r, tail, _CHUNK), workers)
    found = _merge(parts, problem.keep, r + len(tail))
    if not len(found["index"]):
        raise SubsetError(
            f"no subset of {size} games has non-negative weights and at least "
            f"{max(folds, size + 1)} "
            "algorithms with all of its games; widen the search or lower `folds`"
        )
    names = (*pool, *always_games)
    n_weights = r + len(always_games)
    fits = [
        fit_subset(data, [names[j] for j in row[:n_weights]], intercept, folds, seed)
        for row in found["combos"]
    ]
    fits.sort(key=lambda fit: fit.cv_mse)  # stable: ties keep enumeration order
    return SubsetSearch(
        size=size,
        fits=tuple(fits[:top]),
        n_subsets=n_subsets,
        n_fitted=found["fitted"],
        n_nonnegative=found["nonnegative"],
        pool=pool,
        always=always_games,
        seconds=time.perf_counter() - started,
        processes=workers,
    )


def _search_space(
    data: SubsetData, exclude: Iterable[str], within: Iterable[str] | None, always: Iterable[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    excluded = set(data.resolve(exclude, "excluded game"))
    always_games = data.resolve(always, "`always` game")
    chosen = data.resolve(within, "`within` game") if within is not None else None
    for game in (*always_games, *(chosen or ())):
        if game not in data.candidates:
            n = int(np.sum(~np.isnan(data.x[:, data.table.games.index(game)])))
            raise SubsetError(
                f"{game!r} is scored by {n} of the {len(data.table.algorithms)} algorithms, "
                f"fewer than min_algorithms={data.min_algorithms}; lower it (--min-algorithms) "
                "or leave the game out"
            )
    clash = excluded & set(always_games)
    if clash:
        raise SubsetError(
            f"`always` and `exclude` must not share games, both have {sorted(clash)!r}"
        )
    universe = set(chosen) if chosen is not None else set(data.candidates)
    pool = tuple(
        g for g in data.candidates if g in universe and g not in excluded and g not in always_games
    )
    return pool, always_games


def nested_selection(
    data: SubsetData,
    prefix: str = "Atari",
    sizes: Sequence[int] = (5, 3, 1),
    validation: Sequence[int] = (3, 5),
    extended: int | None = 10,
    *,
    exclude: Iterable[str] = (),
    within: Iterable[str] | None = None,
    folds: int = 10,
    seed: int = DEFAULT_SEED,
    processes: int | None = None,
    max_subsets: int = DEFAULT_MAX_SUBSETS,
) -> dict[str, SubsetFit]:
    """The ordered searches of Section 4.3 that give Table 2's nested subsets.

    1. ``{prefix}-{sizes[0]}``: the best subset of all candidates (Atari-5).
    2. Each further size: the best subset *within* the previous one (Atari-3 in Atari-5, Atari-1
       in Atari-3), so smaller evaluations upgrade to larger ones.
    3. ``{prefix}-{validation[0]}-Val``: the best subset *excluding* the test games
       (Atari-3-Val); each further validation size extends the previous one (Atari-5-Val).
    4. ``{prefix}-{extended}``: the test subset plus the best ``extended - sizes[0]`` more games,
       excluding the largest validation subset (Atari-10).

    Args:
        data: from :func:`prepare`.
        prefix: the suite's name (``"MySuite"`` gives ``MySuite-5``, ``MySuite-3-Val`` ...).
        sizes: decreasing test-subset sizes.
        validation: increasing validation-subset sizes (``()`` for none).
        extended: size of the extended test subset (``None`` for none).
        exclude: games no subset may use.
        within: restrict every search to these games (e.g. to keep a test fast).
        folds: as for :func:`best_subsets`.
        seed: as for :func:`best_subsets`.
        processes: as for :func:`best_subsets`.
        max_subsets: as for :func:`best_subsets`.

    Returns:
        ``name -> fit`` in Table 2's order: test subsets by size, the extended one, validation.

    Raises:
        SubsetError: sizes out of order, or more games than the candidates allow.
    """
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_.-]*", prefix or ""):
        raise SubsetError(
            "`prefix` must be letters, digits, '_', '.' or '-', starting with a letter, got "
            f"{prefix!r}"
        )
    sizes, validation = tuple(sizes), tuple(validation)
    if not sizes or any(b >= a for a, b in itertools.pairwise(sizes)) or sizes[-1] < 1:
        raise SubsetError(f"`sizes` must be decreasing positive integers, got {sizes!r}")
    if any(b <= a for a, b in itertools.pairwise(validation)) or (validation and validation[0] < 1):
        raise SubsetError(f"`validation` must be increasing positive integers, got {validation!r}")
    if extended is not None and extended <= sizes[0]:
        raise SubsetError(f"`extended` must be larger than sizes[0]={sizes[0]}, got {extended!r}")
    excluded = list(data.resolve(exclude, "excluded game"))

    def best(
        size: int,
        exclude: Iterable[str],
        within: Iterable[str] | None,
        always: Iterable[str] = (),
    ) -> SubsetFit:
        """One search of the selection, with the options every search shares."""
        return best_subsets(
            data,
            size,
            exclude=exclude,
            within=within,
            always=always,
            folds=folds,
            seed=seed,
            processes=processes,
            max_subsets=max_subsets,
            top=1,
        ).best

    found: dict[str, SubsetFit] = {}
    test = best(sizes[0], excluded, within)
    found[f"{prefix}-{sizes[0]}"] = test.renamed(f"{prefix}-{sizes[0]}")
    previous = test
    for size in sizes[1:]:
        previous = best(size, excluded, previous.games)
        found[f"{prefix}-{size}"] = previous.renamed(f"{prefix}-{size}")
    val: SubsetFit | None = None
    val_fits: dict[str, SubsetFit] = {}
    for size in validation:
        val = best(size, [*excluded, *test.games], within, val.games if val else ())
        val_fits[f"{prefix}-{size}-Val"] = val.renamed(f"{prefix}-{size}-Val")
    if extended is not None:
        fit = best(extended, [*excluded, *(val.games if val else ())], within, test.games)
        found[f"{prefix}-{extended}"] = fit.renamed(f"{prefix}-{extended}")
    ordered = dict(sorted(found.items(), key=lambda item: len(item[1].games)))
    ordered.update(val_fits)
    return ordered
