"""`report --paper`: rliable's four figures and the per-game table as PDF and PNG, and tables."""

from __future__ import annotations

import re

import pytest
from report_helpers import png_size, saber_logs, write_results

from arcadebench.benchmarks.report import PAPER_FIGURES, load_report_data, write_paper

pytest.importorskip("matplotlib")


def test_the_paper_set_from_logs(tmp_path):
    logs = saber_logs(tmp_path / "logs")
    data = load_report_data([logs / "dqn", logs / "ppo"], reps=50)
    written = write_paper(data, tmp_path / "paper")
    stems = [name for name, _ in PAPER_FIGURES]
    assert stems == ["aggregates", "profile", "improvement", "sample_efficiency", "per_game_table"]
    assert [p.name for p in written] == [
        *(f"{stem}.{suffix}" for stem in stems for suffix in ("pdf", "png")),
        "tables.tex",
        "tables.md",
    ]
    for stem in stems:
        pdf = (tmp_path / "paper" / f"{stem}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF-") and b"/Type3" not in pdf  # TrueType fonts, no Type 3
        assert b"/CreationDate" not in pdf  # a rerun writes the same file
        width, height = png_size(tmp_path / "paper" / f"{stem}.png")
        assert width >= 300 and height >= 140  # the table of two games: 1.46 in
    tex = (tmp_path / "paper" / "tables.tex").read_text()
    assert tex.startswith("% arcadebench: saber v2 (spec sha256:")
    assert re.search(r"dqn \\textgreater\{\} ppo & 0\.00", tex)  # ppo beats dqn on every game


def test_figures_the_data_cannot_draw_are_not_written_and_old_ones_go(tmp_path):
    (tmp_path / "paper").mkdir()
    for old in ("improvement.pdf", "sample_efficiency.png"):  # an earlier set's
        (tmp_path / "paper" / old).write_bytes(b"%PDF-")
    one = write_results(tmp_path / "r.json", "saber", {"x": {"pong": 1.0}}, reps=0)
    written = write_paper(load_report_data([one], reps=0), tmp_path / "paper")
    assert {p.stem for p in written} == {"aggregates", "profile", "per_game_table", "tables"}
    assert not (tmp_path / "paper" / "improvement.pdf").exists()
    assert not (tmp_path / "paper" / "sample_efficiency.png").exists()
