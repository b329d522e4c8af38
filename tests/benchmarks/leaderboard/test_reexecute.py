"""A policy played again on a hidden seed: the permutation test, Holm, and real re-runs."""

from __future__ import annotations

import hashlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn
from torch_helpers import one_torch_thread  # noqa: F401 - a module fixture

from arcadebench.benchmarks.leaderboard.reexecute import (
    Reexecution,
    holm,
    min_attainable_pvalue,
    permutation_pvalue,
    policy_sha256,
    reexecute,
    scored_returns,
)
from arcadebench.benchmarks.leaderboard.secret import hidden_seed
from arcadebench.benchmarks.runner.evaluate import evaluate
from arcadebench.errors import AgentError, IncompatibleAgent, InvalidArgument
from arcadebench.records import spec_logs
from arcadebench.specs import load_spec

# torch 2.13 deprecates TorchScript (torch.jit.script, save and load) for torch.export
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.* is deprecated:DeprecationWarning")

SPEC = load_spec("atari100k")  # scored on evaluation episodes: Breakout's are ~200 steps
SEED = hidden_seed("0" * 64, "uniform-v1", "sha256:" + "ab" * 32)
EPISODES = 8  # 8 against 8: comb(16, 8) = 12,870 splits, exact, smallest p 1.6e-4 < 0.01
RAM_4 = {"observation_shape": [128], "actions": 4}  # Breakout's minimal set, from its RAM


class Uniform(nn.Module):
    """Equal logits for Breakout's 4 actions: played ``:stochastic``, a uniform random policy."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], 4)


class Raising(nn.Module):
    """Passes the runner's zero-batch check, then raises on the first real observation."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x.sum() > 0):
            raise RuntimeError("the policy broke")
        return torch.zeros(x.shape[0], 4)


def _save(module: nn.Module, path):
    extra = {"arcadebench.json": json.dumps(RAM_4)}
    torch.jit.save(torch.jit.script(module), str(path), _extra_files=extra)
    return path


@pytest.fixture(scope="module")
def policy(tmp_path_factory):
    """The uniform policy's file, as an agent reference."""
    path = _save(Uniform(), tmp_path_factory.mktemp("policies") / "uniform.pt")
    return f"torchscript:{path}:stochastic"


@pytest.fixture(scope="module")
def honest(policy, tmp_path_factory):
    """What the policy's own run on seed 0 claims: its Breakout evaluation returns."""
    out = tmp_path_factory.mktemp("claims")
    evaluate(
        policy,
        SPEC,
        ["breakout"],
        episodes=EPISODES,
        seeds=(0,),
        workers=1,
        log_dir=out,
        progress="off",
        reps=0,
    )
    claims = scored_returns(SPEC, spec_logs(out, SPEC.name))
    assert list(claims) == ["breakout"] and len(claims["breakout"]) == EPISODES
    return claims


# -- the permutation test ---------------------------------------------------------------------
def test_the_exact_test_counts_the_splits_as_extreme_as_the_claims():
    # 5 returns split into 2 and 3: d = s/2 - (10 - s)/3 for the pair's sum s, |d| >= 2.5 only
    # for the pairs {0, 1} (s = 1) and {3, 4} (s = 7): 2 of comb(5, 2) = 10 splits
    rng = np.random.default_rng(0)
    assert permutation_pvalue([3, 4], [0, 1, 2], rng) == pytest.approx(0.2)
    assert permutation_pvalue([0, 1, 2], [3, 4], rng) == pytest.approx(0.2)  # two-sided
    # d = -5/6: every split but the two pairs of sum 4 ({0, 4}, {1, 3}), whose |d| is 0
    assert permutation_pvalue([1, 2], [0, 3, 4], rng) == pytest.approx(0.8)


def test_a_clearly_shifted_claim_gets_the_smallest_p_the_test_can_give():
    rng = np.random.default_rng(0)
    rerun = [0.0, 1.0, 2.0, 3.0, 4.0]
    assert permutation_pvalue([100.0] * 5, rerun, rng) == min_attainable_pvalue(5, 5) == 2 / 252
    assert permutation_pvalue([100.0] * 3, rerun, rng) == min_attainable_pvalue(3, 5) == 1 / 56
    # 30 against 30: comb(60, 30) splits are too many, 9,999 random permutations are drawn
    shifted = permutation_pvalue([100.0] * 30, list(range(30)), rng)
    assert shifted == min_attainable_pvalue(30, 30) == 1 / 10_000


def test_ties_everywhere_give_p_one():
    rng = np.random.default_rng(0)
    assert permutation_pvalue([2.0, 2.0, 2.0], [2.0, 2.0], rng) == 1.0
    assert permutation_pvalue([0.0] * 40, [0.0] * 40, rng) == 1.0  # the Monte Carlo branch
    # sums of ten 0.1s differ from 1.0 by a rounding error: the tolerance keeps them ties
    assert permutation_pvalue([0.1] * 10 + [1.0], [0.1] * 10 + [1.0], rng) == 1.0


@pytest.mark.parametrize(("size", "permutations"), [(5, 9_999), (10, 999)])
def test_under_the_null_p_is_small_as_often_as_it_should_be(size, permutations):
    # 5 + 5: 252 splits, exact; 10 + 10: 184,756 splits, Monte Carlo
    rng = np.random.default_rng(1)
    draws = [
        permutation_pvalue(rng.normal(size=size), rng.normal(size=size), rng, permutations)
        for _ in range(200)
    ]
    assert 0.02 <= np.mean(np.array(draws) <= 0.05) <= 0.09


def test_the_monte_carlo_test_is_reproducible_from_its_generator():
    claimed, rerun = list(range(20)), [x + 1.0 for x in range(25)]  # comb(45, 20): sampled
    first = permutation_pvalue(claimed, rerun, np.random.default_rng(7))
    assert permutation_pvalue(claimed, rerun, np.random.default_rng(7)) == first
    other = permutation_pvalue(claimed, rerun, np.random.default_rng(8))
    assert first != other and abs(first - other) < 0.01  # the draw decides its last digits


def test_the_smallest_attainable_p_switches_to_monte_carlo_beyond_20000_splits():
    assert min_attainable_pvalue(1, 19_999) == 1 / 20_000  # comb = 20,000: exact
    assert min_attainable_pvalue(1, 20_000) == 1 / 10_000  # comb = 20,001: 9,999 permutations
    assert min_attainable_pvalue(1, 20_000, permutations=99) == 0.01
    assert min_attainable_pvalue(1, 1) == 1.0 and min_attainable_pvalue(2, 2) == 2 / 6
    assert min_attainable_pvalue(8, 8) == 2 / math.comb(16, 8)


def test_the_test_refuses_what_is_no_sample_in_one_line():
    rng = np.random.default_rng(0)
    for bad in ([], [1.0, float("nan")], [[1.0]]):
        with pytest.raises(InvalidArgument, match=r"^`claimed` must be a non-empty sequence"):
            permutation_pvalue(bad, [1.0], rng)
    with pytest.raises(InvalidArgument, match=re.escape("`permutations` must be a positive")):
        permutation_pvalue([1.0], [2.0], rng, permutations=0)


# -- Holm -------------------------------------------------------------------------------------
def test_holm_adjusts_by_hand():
    # sorted: a 0.01 x 3 = 0.03; c 0.03 x 2 = 0.06; b 0.04 x 1 = 0.04, raised to 0.06
    adjusted = holm({"a": 0.01, "b": 0.04, "c": 0.03})
    assert adjusted == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06})
    assert list(adjusted) == ["a", "b", "c"]  # the given order
    assert [game for game, p in adjusted.items() if p <= 0.05] == ["a"]
    assert holm({"a": 0.5, "b": 0.6}) == {"a": 1.0, "b": 1.0}  # capped at 1
    assert holm({"x": 0.001, "y": 0.002, "z": 0.5}) == pytest.approx(
        {"x": 0.003, "y": 0.004, "z": 0.5}
    )
    assert holm({}) == {}
    with pytest.raises(InvalidArgument, match=re.escape("`pvalues` must be probabilities")):
        holm({"a": 1.5})


# -- re-executing a saved policy --------------------------------------------------------------
def test_honest_claims_reproduce_on_the_hidden_seed(policy, honest, tmp_path):
    done = reexecute(
        policy, SPEC, honest, episodes=EPISODES, seed=SEED, alpha=0.01, log_dir=tmp_path, workers=1
    )
    assert done.ok and done.untestable is None and done.failed_games == ()
    (game,) = done.games
    assert (game.game, game.claimed_episodes, game.rerun_episodes) == ("breakout", 8, 8)
    assert game.claimed_mean == pytest.approx(np.mean(honest["breakout"]))
    assert game.reproduced and game.adjusted_p == game.p_value > 0.01
    assert done.summary() == (
        f"re-executed on hidden seeds: 1 game reproduced (smallest Holm-adjusted p "
        f"{game.adjusted_p:.2g})"
    )
    # what was played: the file the header records, on the hidden seed, into log_dir
    file = policy.split(":")[1]
    digest = hashlib.sha256(Path(file).read_bytes()).hexdigest()
    assert done.policy_sha256 == policy_sha256(policy, SPEC) == digest
    (log,) = spec_logs(tmp_path, SPEC.name)
    assert log.name == f"{SEED}.eval.jsonl" and done.log_dir == tmp_path and done.seed == SEED
    rerun = scored_returns(SPEC, [log])["breakout"]
    assert game.rerun_mean == pytest.approx(np.mean(rerun))
    assert rerun != honest["breakout"]  # another seed, other episodes
    generator = np.random.default_rng(np.random.SeedSequence(SEED).spawn(1)[0])
    assert permutation_pvalue(honest["breakout"], rerun, generator) == game.p_value
    assert "Holm-corrected across 1 game at family-wise 0.01" in done.test
    assert Reexecution.from_dict(json.loads(json.dumps(done.as_dict()))) == done


def test_claims_ten_times_the_best_return_do_not_reproduce(policy, honest, tmp_path):
    best = max(honest["breakout"])
    assert best > 0
    inflated = {"Breakout": [10 * best] * EPISODES}  # any spelling of the game
    done = reexecute(
        policy,
        SPEC,
        inflated,
        episodes=EPISODES,
        seed=SEED,
        alpha=0.01,
        log_dir=tmp_path,
        workers=1,
    )
    assert not done.ok and done.untestable is None and done.failed_games == ("breakout",)
    (game,) = done.games
    assert game.adjusted_p == min_attainable_pvalue(EPISODES, EPISODES) == 2 / 12_870
    assert done.summary() == (
        f"does not reproduce: breakout (claimed {10 * best:.1f} over 8 episodes, re-run "
        f"{game.rerun_mean:.1f} over 8, Holm-adjusted p 0.00016)"
    )


def test_too_few_episodes_to_refute_anything_is_no_test(honest, tmp_path):
    # 2 against 2: comb(4, 2) = 6 splits, so p >= 1/3 whatever the returns
    claims = {"breakout": [1000.0, 1000.0]}
    done = reexecute(
        "random", SPEC, claims, episodes=2, seed=SEED, alpha=0.01, log_dir=tmp_path, workers=1
    )
    assert done.untestable is not None and not done.ok
    assert done.policy_sha256 is None  # a built-in agent: no file
    assert done.summary() == (
        "not testable: too few episodes to refute any claim on breakout (2 claimed, 2 re-run: "
        "the smallest p the test gives is 0.33, above 0.01), at family-wise 0.01 over 1 game; "
        "more episodes (claimed or re-run) are needed"
    )
    assert Reexecution.from_dict(done.as_dict()) == done
    with pytest.raises(InvalidArgument, match=re.escape("`data` must be a re-execution's")):
        Reexecution.from_dict({**done.as_dict(), "games": [{"game": "breakout"}]})


def test_a_policy_that_raises_comes_back_in_one_line_without_the_seed(tmp_path):
    raising = _save(Raising(), tmp_path / "raising.pt")
    with pytest.raises(AgentError) as caught:
        reexecute(
            f"torchscript:{raising}",
            SPEC,
            {"breakout": [1.0, 2.0]},
            episodes=2,
            seed=SEED,
            alpha=0.01,
            log_dir=tmp_path / "logs",
            workers=1,
        )
    message = str(caught.value)
    assert message.startswith(f"re-executing torchscript:{raising} on the hidden seed failed in ")
    assert "breakout: the agent raised" in message and str(SEED) not in message
    assert len(message.splitlines()) == 1


def test_a_game_the_policy_cannot_play_is_refused_before_it_plays(policy, tmp_path):
    with pytest.raises(IncompatibleAgent, match="uniform chooses among 4 actions, but the "):
        reexecute(
            policy, SPEC, {"pong": [1.0]}, episodes=2, seed=SEED, alpha=0.01, log_dir=tmp_path
        )
    assert spec_logs(tmp_path, SPEC.name) == []


def test_bad_arguments_are_refused_before_anything_runs(policy, honest, tmp_path):
    def run(**changed):
        settings = {"episodes": 2, "seed": SEED, "alpha": 0.01, "log_dir": tmp_path, **changed}
        claims = settings.pop("claimed", honest)
        return reexecute(policy, SPEC, claims, **settings)

    cases = [
        ({"alpha": 0.0}, "`alpha` must be a probability in (0, 1), got 0.0"),
        ({"episodes": 0}, "`episodes` must be a positive integer, got 0"),
        ({"seed": -1}, "`seed` must be a non-negative integer, got -1"),
        ({"claimed": {}}, "`claimed` must map each game to its claimed episode returns"),
        ({"claimed": {"breakout": []}}, "`claimed['breakout']` must be a non-empty sequence"),
        (
            {"claimed": {"breakout": [1.0], "Breakout": [2.0]}},
            "`claimed` must name each game once, got 'breakout' twice (as 'Breakout')",
        ),
    ]
    for changed, message in cases:
        with pytest.raises(InvalidArgument, match=re.escape(message)):
            run(**changed)
    (tmp_path / "old" / "atari100k" / "breakout").mkdir(parents=True)
    (tmp_path / "old" / "atari100k" / "breakout" / "0.jsonl").write_text("")
    with pytest.raises(InvalidArgument, match=re.escape("`log_dir` must hold no logs of")):
        run()
