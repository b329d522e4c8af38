"""``report`` and ``report --paper`` of every built-in protocol: from logs, results, score files.

Each Atari protocol is played for real (the random agent, one Pong episode per seed: the runner's
logs and results.json, evaluation logs for those scored after training); Sonic, whose ROMs are
not here, from logs in the runner's layout. The score CSV is the results' runs written out.
"""

from __future__ import annotations

import json

import pytest
from report_helpers import write_log

import arcadebench
from arcadebench.cli import main

ATARI = ["atari5", "saber", "hwr", "machado2018", "atari100k", "dqn2015"]
SPECS = [*ATARI, "sonic"]
SONIC_LEVEL = "SonicTheHedgehog-GreenHillZone.Act1"


@pytest.fixture(scope="module", params=SPECS)
def played(request, tmp_path_factory):
    """``(spec, output directory with logs and results.json, score CSV)``."""
    spec = request.param
    out = tmp_path_factory.mktemp(spec)
    if spec == "sonic":
        for run in ("0", "1"):
            returns = [1000.0 + 100 * i + 50 * int(run) for i in range(12)]
            write_log(out / "random", "sonic", "random", SONIC_LEVEL, run, returns, 18_000)
        results = arcadebench.score("sonic", [str(out)], reps=50)
        results.to_json(out / "results.json")
    else:
        arcadebench.evaluate(
            "random", spec, ["Pong"], episodes=1, seeds=[0, 1], workers=2, log_dir=out,
            progress="off", reps=50,
        )  # fmt: skip
    document = json.loads((out / "results.json").read_text())
    rows = ["algorithm,game,run,score"]
    for algorithm, entry in document["algorithms"].items():
        for game, cell in entry["games"].items():
            rows += [f"{algorithm},{game},{i},{value}" for i, value in enumerate(cell["runs"])]
    csv = out / "scores.csv"
    csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return spec, out, csv


@pytest.mark.parametrize("source", ["logs", "results", "score file"])
def test_report_and_paper_of_every_protocol(played, source, tmp_path, capsys):
    spec, out, csv = played
    given = {"logs": out / "random", "results": out / "results.json", "score file": csv}[source]
    html = tmp_path / "page"
    assert main(["report", str(given), "--spec", spec, "--out", str(html), "--reps", "50"]) == 0
    page = (html / "report.html").read_text(encoding="utf-8")
    assert "random" in page and spec in page
    paper = tmp_path / "paper"
    assert main(["report", str(given), "--spec", spec, "--paper", str(paper), "--reps", "50"]) == 0
    assert (paper / "tables.tex").read_text().startswith("%")
    figures = sorted(p.stem for p in paper.glob("*.pdf"))
    assert {"aggregates", "per_game_table"} <= set(figures), figures
    err = capsys.readouterr().err
    assert "Traceback" not in err
