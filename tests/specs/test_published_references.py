"""The published results of the atari100k, dqn2015, machado2018 and hwr specs (their `references`).

Each printed aggregate in a spec's `tables` is recomputed here from the per-game scores the spec
carries for the same algorithm, with our scorer and the spec's constants, and must equal the
printed value to the printed precision: a mistyped or misassigned per-game score shows up as a
mismatch. Where every number comes from: src/arcadebench/data/REFERENCES.md.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from testdata import DATA

import arcadebench
from arcadebench.benchmarks.scoring.metrics import aggregate_iqm
from arcadebench.errors import SpecError
from arcadebench.specs import load_spec, parse_spec
from arcadebench.specs.loader import DATA_DIR

# repo@commit:path, as every source of a fetched file names it
REPO_AT_COMMIT = re.compile(r"[\w.-]+/[\w.-]+@[0-9a-f]{7,40}:\S+")
SPR_TABLE_1 = DATA / "scores" / "spr_table_1.csv"

# -- atari100k --------------------------------------------------------------------------------

ATARI100K_RUNS = {  # those with per-run scores first: the tables' default references
    "DrQ(eps)": 100,
    "SPR (Agarwal et al. 2021, 100 runs)": 100,
    "CURL (Agarwal et al. 2021, 100 runs)": 100,
    "SimPLe": 5,
    "SimPLe (SPR's table)": 5,
    "DER": 5,
    "OTRainbow": 5,
    "CURL": 20,
    "DrQ": 5,
    "SPR": 10,
    "MuZero (EfficientZero paper)": None,
    "EfficientZero": 3,
    "IRIS": 5,
    "BBF": None,  # 52 to 60 runs, unequal across games
}

# what each protocol must say; the others were obtained as this spec prescribes (or their
# papers' settings could not be read: REFERENCES.md)
ATARI100K_PROTOCOLS = {
    "DrQ": ["epsilon 0.05"],
    "SPR": ["1-30 no-op frames", "life is lost"],
    "BBF": ["0-29 no-op agent steps", "life is lost"],
    "IRIS": ["16 episodes", "1 no-op frame"],
    "EfficientZero": ["32 episodes"],
    "MuZero (EfficientZero paper)": ["EfficientZero authors"],
}

# the per-game scores behind a printed row, where the row's name is not theirs
TABLE_ROW_SCORES = {("SPR paper, Table 1", "SimPLe"): "SimPLe (SPR's table)"}

# every printed aggregate of the tables, with its number of printed decimals (percent)
PRINTED = {
    ("SPR paper, Table 1", "SimPLe"): ([44.3, 14.4], 1),
    ("SPR paper, Table 1", "DER"): ([28.5, 16.1], 1),
    ("SPR paper, Table 1", "OTRainbow"): ([26.4, 20.4], 1),
    ("SPR paper, Table 1", "CURL"): ([38.1, 17.5], 1),
    ("SPR paper, Table 1", "DrQ"): ([35.7, 26.8], 1),
    ("SPR paper, Table 1", "SPR"): ([70.4, 41.5], 1),
    ("IRIS paper, abstract (arXiv:2209.00588v2)", "IRIS"): ([104.6], 1),
    ("EfficientZero paper, abstract (latest arXiv version)", "EfficientZero"): ([194.3, 109.0], 1),
}


@pytest.fixture(scope="module")
def atari100k():
    return load_spec("atari100k")


def test_atari100k_has_every_algorithm_on_all_26_games_at_400k_frames(atari100k):
    refs = atari100k.published_scores
    assert list(refs) == list(ATARI100K_RUNS)
    for name, ref in refs.items():
        assert set(ref.scores) == set(atari100k.games), name
        assert ref.runs == ATARI100K_RUNS[name], name
        assert ref.frames == 400_000, name  # 100k agent steps x frame skip 4
        assert REPO_AT_COMMIT.search(ref.source), name
    # where sources disagree, the scores are the ones the algorithm's paper's aggregates came from
    assert refs["SPR"].scores["alien"] == 801.52  # SPR's own 10 runs, not Agarwal et al.'s 841.891
    assert refs["SPR (Agarwal et al. 2021, 100 runs)"].scores["alien"] == 841.891
    assert refs["CURL"].scores["alien"] == 558.2  # the corrected CURL numbers
    assert refs["SimPLe"].scores["kangaroo"] == 51.25  # iris runs; SPR's table prints 323.1
    assert refs["SimPLe (SPR's table)"].scores["kangaroo"] == 323.1


def test_atari100k_protocols_name_each_variant(atari100k):
    for name, ref in atari100k.published_scores.items():
        if name not in ATARI100K_PROTOCOLS:
            assert ref.protocol is None, name
            continue
        for phrase in ATARI100K_PROTOCOLS[name]:
            assert phrase in ref.protocol, (name, phrase)
    tables = {t.source: t for t in atari100k.published}
    assert set(tables) == {source for source, _ in PRINTED}
    for table in tables.values():
        assert table.protocol and table.citation and "arXiv:" in table.citation
        assert table.columns[0] == "hns.mean"


def test_atari100k_leaves_out_the_printed_values_that_do_not_reproduce(atari100k):
    rows = {(t.source, row): values for t in atari100k.published for row, values in t.rows.items()}
    assert set(rows) == set(PRINTED)
    assert not any(row == "BBF" for _, row in rows)  # paperswithcode's 2.245 / 0.917
    ez = rows[("EfficientZero paper, abstract (latest arXiv version)", "EfficientZero")]
    assert ez == (194.3, 109.0)  # not arXiv v1's 190.4 / 116.0


@pytest.mark.parametrize(("source", "row"), list(PRINTED), ids=lambda x: x.split(",")[0])
def test_printed_aggregates_are_recomputed_from_the_per_game_scores(atari100k, source, row):
    table = next(t for t in atari100k.published if t.source == source)
    printed, decimals = PRINTED[source, row]
    assert list(table.rows[row]) == printed
    name = TABLE_ROW_SCORES.get((source, row), row)
    scores = dict(atari100k.published_scores[name].scores)
    ours = arcadebench.score(atari100k, {name: scores}, reps=0).algorithms[name]["aggregates"]
    assert ours["hns"]["n_games"] == 26
    for path, value in zip(table.paths, printed, strict=True):
        got = ours
        for key in path:
            got = got[key]
        assert round(got, decimals) == value, (source, row, ".".join(path), got)


def test_spr_table_1_scores_as_printed_with_its_game_names(atari100k):
    """SPR's table names games its own way (`ChopperCmd`, `Up N Down`): they are its games."""
    text = SPR_TABLE_1.read_text()
    assert "\nChopperCmd,974.8,SPR\n" in text and "\nUp N Down," in text
    results = arcadebench.score(atari100k, SPR_TABLE_1, reps=0).algorithms
    (table,) = [t for t in atari100k.published if t.source == "SPR paper, Table 1"]
    assert list(results) == list(table.rows)  # SimPLe, DER, OTRainbow, CURL, DrQ, SPR
    for row, printed in table.rows.items():
        hns = results[row]["aggregates"]["hns"]
        assert hns["n_games"] == 26 and results[row]["games"]["chopper_command"]["raw"] > 0
        assert [round(hns["mean"], 1), round(hns["median"], 1)] == list(printed), row


# -- per-run scores ---------------------------------------------------------------------------

PER_RUN = {  # the references whose runs are shipped (data/atari100k_runs.csv), and how many
    "DrQ(eps)": 100,
    "SPR (Agarwal et al. 2021, 100 runs)": 100,
    "CURL (Agarwal et al. 2021, 100 runs)": 100,
    "SimPLe": 5,
    "IRIS": 5,
}


def test_atari100k_ships_the_per_run_scores_of_agarwal_et_al_and_their_means_are_the_scores(
    atari100k,
):
    refs = atari100k.published_scores
    assert {name for name, ref in refs.items() if ref.per_run} == set(PER_RUN)
    header = (DATA_DIR / "atari100k_runs.csv").read_text().split("\nalgorithm,")[0]
    assert "eloialonso/iris at commit\n# 24326aaaa283c527f42b89b44cfdecf2665a7a16" in header
    for name, runs in PER_RUN.items():
        ref = refs[name]
        assert set(ref.per_run) == set(atari100k.games), name
        assert {len(v) for v in ref.per_run.values()} == {runs} and ref.runs == runs, name
        for game, values in ref.per_run.items():  # the YAML's means, to their printed digits
            assert abs(sum(values) / len(values) - ref.scores[game]) < 5e-5 * max(
                1, abs(ref.scores[game])
            ), (name, game)
    # the first runs of the source files, as stored there (DrQ(eps).json: Alien 765.0, 866.6...)
    assert refs["DrQ(eps)"].per_run["alien"][:3] == (765.0, 866.6, 822.5)


def test_a_reference_with_runs_is_scored_over_its_runs_like_ours(atari100k):
    """SPR's IQM over Agarwal et al.'s 100 runs is their published 0.337; over the means: 0.415."""
    spr = atari100k.published_scores["SPR (Agarwal et al. 2021, 100 runs)"]
    over_runs = arcadebench.score(atari100k, {"SPR": spr.score_input()}, reps=0)
    hns = over_runs.algorithms["SPR"]["aggregates"]["hns"]
    assert round(hns["iqm"], 1) == 33.7
    matrix = np.array([spr.per_run[g] for g in sorted(spr.per_run)]).T  # (100 runs, 26 games)
    constants = [atari100k.constants[g] for g in sorted(spr.per_run)]
    random = np.array([c.random for c in constants])
    human = np.array([c.human for c in constants])
    assert hns["iqm"] == pytest.approx(100 * aggregate_iqm((matrix - random) / (human - random)))
    means = arcadebench.score(atari100k, {"SPR": dict(spr.scores)}, reps=0)
    assert round(means.algorithms["SPR"]["aggregates"]["hns"]["iqm"], 1) == 41.5  # not an IQM


def _mini(references: str) -> str:
    text = (DATA / "specs" / "minimal_atari.yaml").read_text()
    return text + "references:\n  scores:\n" + references


def test_per_run_scores_alone_give_the_means_and_the_run_count():
    spec = parse_spec(
        _mini("    X:\n      source: a test\n      per_run: {Pong: [1, 2, 6], qbert: [5, 7, 9]}\n")
    )
    ref = spec.published_scores["X"]
    assert dict(ref.scores) == {"pong": 3.0, "qbert": 7.0} and ref.runs == 3
    assert ref.per_run["pong"] == (1.0, 2.0, 6.0)
    assert ref.score_input({"pong"}) == {"pong": [1.0, 2.0, 6.0]}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            "per_run: {pong: [1, 2]}\n      games: {pong: 1.6}",
            "references.scores.X.per_run: must be runs whose mean is the game's value in `games` "
            "to its 1 decimals: pong 1.6 vs 1.500",
        ),
        (
            "per_run: {pong: [1, 2]}\n      games: {pong: 1.5, qbert: 3}",
            "references.scores.X.per_run: must be runs of the games of `games` (differing: qbert)",
        ),
        (
            "runs: 3\n      per_run: {pong: [1, 2]}",
            "references.scores.X.per_run: must be 3 runs of every game (runs: 3), pong has 2",
        ),
        (
            "per_run: {pongg: [1]}",
            "references.scores.X.per_run.pongg: unknown game 'pongg'. Did you mean: 'pong'?",
        ),
        ("per_run: {pong: []}", "references.scores.X.per_run.pong: must be a list of at least 1"),
        ("frames: 10", "references.scores.X.games: is required (or per_run, the runs' scores)"),
        ("per_run: ../specs/saber.yaml", "must be {game: [score per run, ...]} or the name of"),
        ("per_run: atari100k_runs.csv", "must be a file with rows of 'X' (its algorithm column)"),
    ],
)
def test_per_run_scores_are_checked(entry, message):
    with pytest.raises(SpecError) as caught:
        parse_spec(_mini(f"    X:\n      source: a test\n      {entry}\n"))
    assert message in str(caught.value)


# -- dqn2015 ----------------------------------------------------------------------------------


def test_dqn2015_carries_natures_table_and_double_dqn_no_op():
    spec = load_spec("dqn2015")
    refs = spec.published_scores
    assert list(refs) == [
        "DQN",
        "Best linear learner",
        "Contingency SARSA",
        "Double DQN (van Hasselt et al. 2016)",
    ]
    for name, ref in refs.items():
        assert set(ref.scores) == set(spec.games), name  # Nature's 49 games
        assert REPO_AT_COMMIT.search(ref.source), name
        assert ref.protocol, name
    assert all("Extended Data Table 2" in refs[n].source for n in list(refs)[:3])
    assert refs["DQN"].scores["alien"] == 3069 and refs["DQN"].frames == 200_000_000
    assert "best" in refs["DQN"].protocol  # the best network, not the final one
    assert "30 minutes" in refs["Double DQN (van Hasselt et al. 2016)"].protocol
    assert refs["Double DQN (van Hasselt et al. 2016)"].scores["alien"] == 2907.3
    # no aggregate of Nature or van Hasselt et al. could be read as text: nothing printed here
    assert spec.published == ()


def test_dqn2015_scores_normalise_with_natures_constants():
    spec = load_spec("dqn2015")
    dqn = dict(spec.published_scores["DQN"].scores)
    games = arcadebench.score(spec, {"DQN": dqn}, reps=0).algorithms["DQN"]["games"]
    # Extended Data Table 2's last column is 100 x (DQN - random) / (human - random)
    assert round(games["alien"]["hns"], 1) == round(100 * (3069 - 227.8) / (6875.4 - 227.8), 1)
    assert len(games) == 49


# -- machado2018 ------------------------------------------------------------------------------

DOPAMINE_AGENTS = ["DQN", "C51", "Rainbow", "IQN", "Quantile JAX", "DQN Adam+MSE JAX"]


def test_machado2018_carries_dopamines_baselines_under_their_own_protocol():
    spec = load_spec("machado2018")
    refs = spec.published_scores
    expected = {f"{a} (Dopamine)": 199_000_000 for a in DOPAMINE_AGENTS}
    for label, frames in (("10M", 10_000_000), ("50M", 50_000_000), ("100M", 100_000_000)):
        expected |= {f"{a} (Dopamine, {label} frames)": frames for a in DOPAMINE_AGENTS}
    assert {name: ref.frames for name, ref in refs.items()} == expected
    for name, ref in refs.items():
        assert set(ref.scores) == set(spec.games), name  # Dopamine's 60 games
        assert ref.runs == 5, name
        assert "google/dopamine@5873f54:baselines/atari/data/" in ref.source, name
        for phrase in ("minimal action set", "frame skip 4", "27,000", "training episodes"):
            assert phrase in ref.protocol, (name, phrase)
    final = refs["DQN (Dopamine)"]
    assert "Iteration 198" in final.source and "no 200M point" in final.protocol
    # every entry's 5 runs per game are shipped, and average to its scores
    header = (DATA_DIR / "machado2018_runs.csv").read_text().split("\nalgorithm,")[0]
    assert "google/dopamine at commit\n# 5873f5494ee0c2d7c016d0ab2ad530354fec59d0" in header
    for name, ref in refs.items():
        assert set(ref.per_run) == set(spec.games) and ref.runs == 5, name
        assert {len(v) for v in ref.per_run.values()} == {5}, name
    assert final.per_run["air_raid"][0] == 9007.971014  # airraid.json's first DQN value there
    assert sum(final.per_run["pong"]) / 5 == pytest.approx(final.scores["pong"], abs=5e-5)
    assert "Iteration 9:" in refs["DQN (Dopamine, 10M frames)"].source
    assert spec.published == ()  # Dopamine prints no aggregate


# -- hwr --------------------------------------------------------------------------------------


def test_hwr_carries_agent57s_column_which_gives_the_printed_mean_hwrns():
    spec = load_spec("hwr")
    agent57 = spec.published_scores["Agent57"]
    assert set(agent57.scores) == set(spec.games)  # all 57 games
    assert "maitchison/Atari-5@118cad5:dataset.csv" in agent57.source
    assert agent57.frames == 100_000_000_000 and "100B" in agent57.protocol
    printed = next(t for t in spec.published if "Agent57" in t.rows)
    assert printed.source.startswith('Section "Mean HWRNS"') and list(printed.rows["Agent57"]) == [
        125.92
    ]
    ours = arcadebench.score(spec, {"Agent57": dict(agent57.scores)}, reps=0)
    aggregates = ours.algorithms["Agent57"]["aggregates"]
    assert aggregates["hwrns"]["n_games"] == 57
    assert round(aggregates["hwrns"]["mean"], 2) == 125.92
