"""``arcadebench subset``: tables on stdout, YAML that loads as a spec, one-line errors (exit 2)."""

from __future__ import annotations

import pytest

import arcadebench
from arcadebench.cli import main

SPEC = arcadebench.load_spec("atari5")
ATARI5 = SPEC.subsets["Atari-5"].games
PAPER_GAMES = list(dict.fromkeys(g for s in SPEC.subsets.values() for g in s.games))
OTHERS = ["pitfall", "road_runner", "zaxxon", "alien"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main(["subset", *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_search_prints_the_best_subsets_ranked(capsys):
    status, out, err = run(
        capsys, "atari5-dataset", "--within", *ATARI5, *OTHERS, "--top", "3", "--workers", "1"
    )
    assert status == 0 and err == ""
    assert "62 algorithms with >= 40 games" in out and "(dropped: surround)" in out
    lines = out.splitlines()
    first = next(line for line in lines if line.lstrip().startswith("1  "))
    assert "battle_zone, double_dunk, name_this_game, phoenix, qbert" in first
    assert "0.3820, 0.0679, 0.3108, 0.1241, 0.0805" in first
    assert (
        "0.9842" in first and "10.4288" in first
    )  # CV R2 and relative error (Table 2: 0.984, 10.4%)
    assert "searched 126 subsets of 9 games" in out


def test_nested_prints_table_2_and_writes_a_loadable_spec(capsys, tmp_path):
    out_file = tmp_path / "atari.yaml"
    status, out, _ = run(
        capsys,
        "atari5-dataset",
        "--nested",
        "--within",
        *PAPER_GAMES,
        *OTHERS,
        "--yaml",
        str(out_file),
        "--spec-name",
        "atari-refit",
        "--predictions",
    )
    assert status == 0
    for name in ("Atari-1", "Atari-3", "Atari-5", "Atari-10", "Atari-3-Val", "Atari-5-Val"):
        assert any(line.startswith(name + " ") for line in out.splitlines()), name
    assert "variance in log-scores explained: 71.5% (Section 5.5)" in out
    assert "variance in log-scores explained: 80.0% (Section 5.5)" in out
    spec = arcadebench.load_spec(str(out_file))
    assert spec.name == "atari-refit" and spec.platform == "none"
    assert dict(spec.subsets) == dict(SPEC.subsets)  # Table 9 and Table 2, regenerated
    assert set(spec.predictions) == {"Atari-5", "Atari-10"}


def test_yaml_fragment_of_a_custom_suite(capsys, tmp_path):
    rows = ["algorithm,task,normalised"]
    for i in range(15):
        rows += [f"alg{i},easy,{i}", f"alg{i},mid,{10 * i + 5}", f"alg{i},hard,{100 * i + 50}"]
    scores = tmp_path / "suite.csv"
    scores.write_text("\n".join(rows) + "\n")
    fragment = tmp_path / "fragment.yaml"
    status, out, _ = run(
        capsys,
        str(scores),
        "--size",
        "1",
        "--min-games",
        "3",
        "--folds",
        "5",
        "--yaml",
        str(fragment),
    )
    assert status == 0 and "wrote the spec fragment (Subset-1)" in out
    text = fragment.read_text()
    assert "games: [mid]" in text and "coefficients: [1.0000]" in text
    header = (
        "name: tiny\nid_prefix: Tiny\ntitle: t\nversion: 1\ncitation: c\nplatform: none\n"
        "scoring:\n  normalised:\n    hns: {reference: human}\n"
        '  log_transform: "log10(1 + max(0, x))"\n'
    )
    spec_file = tmp_path / "tiny.yaml"
    spec_file.write_text(header + text)
    assert arcadebench.load_spec(str(spec_file)).subsets["Subset-1"].coefficients == (1.0,)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["missing.csv"], "missing.csv: no such file"),
        (["atari5-dataset", "--within", "pnog"], "Did you mean: 'pong'"),
        (["atari5-dataset", "--size", "6", "--within", *ATARI5], "`size` must be at most 5"),
        (["atari5-dataset", "--spec-name", "x"], "`--spec-name` needs `--yaml FILE`"),
        (
            [
                "atari5-dataset",
                "--size",
                "1",
                "--within",
                "pong",
                "--intercept",
                "--yaml",
                "x.yaml",
            ],
            "has an intercept",
        ),
        (["atari5-dataset", "--min-games", "58"], "lower `min_games` (--min-games)"),
        (
            ["atari5-dataset", "--nested", "--always", "pong"],
            "`--nested` takes no --intercept or --always",
        ),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    status, _, err = run(capsys, *argv)
    assert status == 2
    assert err.startswith("arcadebench: error: ") and err.count("\n") == 1
    assert message in err


def test_bad_csv_names_the_line(capsys, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("algorithm,game,normalised\nA,g,1\nB,g,oops\n")
    status, _, err = run(capsys, str(bad))
    assert status == 2 and f"{bad}:3: column 'normalised' must be a number, got 'oops'" in err
