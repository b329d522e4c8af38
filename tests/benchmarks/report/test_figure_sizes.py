"""Every paper figure drawn at a column's width and at both columns', and read back from itself.

Four reports of real scored results: SABER (percent metrics: two algorithms' logs, two runs a
game, with their sample-efficiency curves), SABER in HNS beside the world records (aggregates
spread over orders of magnitude), Atari 100k (HNS with IQM: SPR's Table 1 and a result of three
runs a game) and Sonic (raw, train and test scores, a log's curve, JERK's published error).
Each figure of ``PAPER_FIGURES`` is drawn at 3.25 and 6.75 inches in 8-point text, rendered on
the Agg canvas and checked from the figure: its width, every drawn text's size and place, its
tick labels apart, each aggregate panel's axis around its data, its legends' game counts.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from report_helpers import png_size, saber_logs, write_log

import arcadebench
from arcadebench.benchmarks.report import PAPER_FIGURES, load_report_data, write_paper
from arcadebench.benchmarks.report.figures import aggregate_keys
from arcadebench.benchmarks.report.report_data import ReportData, expected_range
from arcadebench.errors import InvalidArgument
from arcadebench.specs.names import subset_key
from arcadebench.specs.statistics import STATISTICS

pytest.importorskip("matplotlib")
from matplotlib.text import Text  # noqa: E402 - after the skip

SCORES = Path(__file__).parents[2] / "data" / "scores"
WIDTHS = (3.25, 6.75)  # a column of a two-column template, and both columns
FONT_SIZE = 8.0
SMALLEST = 7.0  # points: below this a printed figure is hard to read
FIGURES = dict(PAPER_FIGURES)


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, ReportData]:
    root = tmp_path_factory.mktemp("reports")
    logs = saber_logs(root / "saber")
    saber = load_report_data([logs / "dqn", logs / "ppo"], reps=50)
    records = arcadebench.score("saber", SCORES / "saber_world_records.csv", reps=0)
    saber_hns = load_report_data([logs / "dqn", logs / "ppo", records], metric="hns", reps=50)
    # Atari 100k: SPR's Table 1 (six algorithms, one score a game) and three runs a game of SPR
    table = arcadebench.score("atari100k", SCORES / "spr_table_1.csv", reps=0)
    spr = {g: cell["raw"] for g, cell in table.algorithms["SPR"]["games"].items()}
    runs = {g: [0.8 * s, s, 1.2 * s + 1.0] for g, s in spr.items()}
    three = arcadebench.score("atari100k", {"SPR, 3 runs": runs}, reps=50)
    atari100k = load_report_data([table, three], reps=50)
    # Sonic: two algorithms' runs on the test and train levels, a log's curve, JERK's errors
    spec = arcadebench.load_spec("sonic")
    levels = [n for n, level in spec.levels.items() if level.split == "test"]
    levels += [n for n, level in spec.levels.items() if level.split == "train"][:5]
    scores = {
        "ours": {g: [1000.0 + 100 * i, 1500.0 + 90 * i] for i, g in enumerate(levels)},
        "theirs": {g: [2000.0 + 80 * i, 2500.0 + 70 * i, 2200.0] for i, g in enumerate(levels)},
    }
    returns = [100.0 * i for i in range(40)]
    write_log(root / "sonic", "sonic", "from log", levels[0], "0", returns, 18_000)
    sonic = load_report_data(
        [arcadebench.score("sonic", scores, reps=50), root / "sonic"], references=["JERK"], reps=50
    )
    return {"saber": saber, "saber-hns": saber_hns, "atari100k": atari100k, "sonic": sonic}


CASES = [
    (report, name)
    for report in ("saber", "atari100k", "sonic")
    for name in ("aggregates", "profile", "improvement", "sample_efficiency", "per_game_table")
] + [("saber-hns", "aggregates"), ("saber-hns", "profile")]


def draw(reports, report: str, name: str, width: float):
    figure = FIGURES[name](reports[report], figure_width=width, font_size=FONT_SIZE)
    if figure is not None:
        figure.canvas.draw()
    return figure


def drawn_texts(figure) -> list[Text]:
    """The texts a drawn figure shows: visible, not empty, of a visible axes, ticks in view."""
    out_of_view: set[int] = set()
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            span = (high - low) * 1e-9
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                if not low - span <= tick.get_loc() <= high + span:
                    out_of_view.update((id(tick.label1), id(tick.label2)))
    return [
        text
        for text in figure.findobj(Text)
        if text.get_visible()
        and text.get_text().strip()
        and id(text) not in out_of_view
        and (text.axes is None or text.axes.get_visible())
    ]


def tick_labels(axis) -> list[Text]:
    low, high = sorted(axis.get_view_interval())
    span = (high - low) * 1e-9
    return [
        tick.label1
        for tick in axis.get_major_ticks()
        if low - span <= tick.get_loc() <= high + span
        and tick.label1.get_visible()
        and tick.label1.get_text().strip()
    ]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(("report", "name"), CASES)
def test_a_paper_figure_fits_its_width_in_readable_text(reports, report, name, width):
    figure = draw(reports, report, name, width)
    if figure is None:  # only a report with curves has a sample-efficiency figure
        assert (report, name) in {("atari100k", "sample_efficiency")}, (report, name)
        return
    assert figure.get_size_inches()[0] == width
    assert 0.5 < figure.get_size_inches()[1] < 30.0  # two games' table: 0.94 in
    renderer = figure.canvas.get_renderer()
    page = figure.bbox
    texts = drawn_texts(figure)
    assert texts
    for text in texts:
        assert text.get_fontsize() >= SMALLEST, (text.get_text(), text.get_fontsize())
        box = text.get_window_extent(renderer)
        inside = (
            page.x0 - 0.5 <= box.x0
            and box.x1 <= page.x1 + 0.5
            and page.y0 - 0.5 <= box.y0
            and box.y1 <= page.y1 + 0.5
        )
        assert inside, f"{text.get_text()!r} is cut: {box} outside {page}"
    for ax in figure.axes:
        if not ax.get_visible():
            continue
        across = sorted((t.get_window_extent(renderer) for t in tick_labels(ax.xaxis)), key=_x0)
        assert all(a.x1 <= b.x0 + 0.5 for a, b in zip(across, across[1:], strict=False)), name
        up = sorted((t.get_window_extent(renderer) for t in tick_labels(ax.yaxis)), key=_y0)
        assert all(a.y1 <= b.y0 + 0.5 for a, b in zip(up, up[1:], strict=False)), name
        if ax.get_xlabel():  # a scale: labelled ticks (two at least)
            assert len(tick_labels(ax.xaxis)) >= 2, (name, ax.get_title())


def _x0(box) -> float:
    return box.x0


def _y0(box) -> float:
    return box.y0


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("report", ["saber", "saber-hns", "atari100k", "sonic"])
def test_aggregate_axes_span_their_data_not_0_to_100(reports, report, width):
    data = reports[report]
    figure = draw(reports, report, "aggregates", width)
    keys = aggregate_keys(data)
    panels = [ax for ax in figure.axes if ax.get_visible()]
    assert len(panels) == len(keys)
    relative = {subset_key(s.name): s.relative_error for s in data.spec.subsets.values()}
    logs = 0
    for ax, (metric, stat) in zip(panels, keys, strict=True):
        values = []
        for entry in data.entries:
            value, interval = entry.aggregate(metric, stat)
            if value is None or not math.isfinite(value):
                continue
            values += [value, *(interval or ())]
            if stat is None and metric in relative:
                values += list(expected_range(value, relative[metric]))
        low, high = ax.get_xlim()
        assert low < min(values) and max(values) < high, (metric, stat, ax.get_xlim(), values)
        percent = data.normalisation(metric) is not None
        if percent and max(values) - min(values) < 25.0:  # data a quarter of 0-100 wide
            assert high - low < 50.0 and not (low <= 0.0 and high >= 100.0), (metric, stat)
        if ax.get_xscale() == "symlog":
            logs += 1
            assert stat is None or STATISTICS[stat].level  # a log axis for a level only
            assert len(tick_labels(ax.xaxis)) >= 2, (metric, stat)  # labelled log ticks
        if stat is not None and not STATISTICS[stat].level:
            assert ax.get_xscale() == "linear"
    if report == "saber-hns":  # the world records' 4.4k % median beside 0.3 %: log axes
        assert logs == 3  # mean, median and IQM; the optimality gap stays linear


def legend_texts(figure) -> list[str]:
    return [t.get_text() for legend in figure.legends for t in legend.get_texts()]


@pytest.mark.parametrize("report", ["saber", "atari100k", "sonic"])
def test_profile_legends_name_each_curves_games_and_the_axis_what_is_pooled(reports, report):
    data = reports[report]
    figure = draw(reports, report, "profile", 3.25)
    entries = [e for e in data.entries if e.per_game and e.games]
    texts = [" ".join(t.split()) for t in legend_texts(figure)]
    for entry in entries:
        (text,) = [t for t in texts if t.startswith(f"{entry.name} (")]
        games = len(entry.games)
        assert re.search(rf"\({games} games?\b", text), text
    several = any(len(cell.get("runs", [])) > 1 for e in entries for cell in e.games.values())
    (ax,) = figure.axes
    ylabel = " ".join(ax.get_ylabel().split())
    assert ylabel == f"fraction of {'runs' if several else 'games'} with score > \u03c4"


def test_the_profile_says_games_when_every_game_has_one_score(reports):
    table = arcadebench.score("atari100k", SCORES / "spr_table_1.csv", reps=0)
    figure = FIGURES["profile"](load_report_data([table], reps=0), figure_width=3.25, font_size=8)
    assert " ".join(figure.axes[0].get_ylabel().split()) == "fraction of games with score > \u03c4"
    assert "SPR (26 games)" in [" ".join(t.split()) for t in legend_texts(figure)]


@pytest.mark.parametrize("report", ["saber", "sonic"])
def test_sample_efficiency_legends_name_each_curves_games(reports, report):
    data = reports[report]
    figure = draw(reports, report, "sample_efficiency", 3.25)
    texts = [" ".join(t.split()) for t in legend_texts(figure)]
    curved = [e for e in data.entries if e.block.get("curve")]
    assert curved
    for entry in curved:
        last = entry.block["curve"][max(entry.block["curve"], key=int)]
        (text,) = [t for t in texts if t.startswith(f"{entry.name} (")]
        assert text == f"{entry.name} ({len(last['games'])} game{'s' * (len(last['games']) > 1)})"


def test_the_per_game_table_title_is_whole_and_its_columns_fit(reports):
    figure = draw(reports, "atari100k", "per_game_table", 3.25)
    title = " ".join(figure.get_suptitle().split())
    assert title.endswith("the mean over runs [95 % CI]; bold: the best of each row")
    renderer = figure.canvas.get_renderer()
    for ax in figure.axes:
        for cell in ax.tables[0].get_celld().values():
            text, box = cell.get_text(), cell.get_window_extent(renderer)
            inner = text.get_window_extent(renderer)
            assert box.x0 <= inner.x0 and inner.x1 <= box.x1, text.get_text()  # no overflow
    # seven columns of 26 games do not fit one column of a page: blocks of columns, each
    # with the games' names
    assert len(figure.axes) > 1
    assert all(ax.tables[0].get_celld()[0, 0].get_text().get_text() == "game" for ax in figure.axes)


def test_write_paper_draws_at_the_width_asked_and_checks_it(tmp_path):
    data = load_report_data([arcadebench.score("saber", {"x": {"pong": 1.0}}, reps=0)], reps=0)
    written = write_paper(data, tmp_path / "two", figure_width=6.75, font_size=9)
    assert [p.name for p in written][:2] == ["aggregates.pdf", "aggregates.png"]
    pdf = (tmp_path / "two" / "aggregates.pdf").read_bytes()
    box = re.search(rb"/MediaBox \[\s*0 0 ([\d.]+) ([\d.]+)\s*\]", pdf)
    assert box is not None and float(box.group(1)) == pytest.approx(6.75 * 72)
    assert png_size(tmp_path / "two" / "aggregates.png")[0] == round(6.75 * 300)
    write_paper(data, tmp_path / "one")  # a column of a two-column template by default
    assert png_size(tmp_path / "one" / "profile.png")[0] == round(3.25 * 300)
    for bad, message in (
        ({"figure_width": 13.5}, "`figure_width` must be between 2 and 8 inches"),
        ({"figure_width": float("nan")}, "`figure_width` must be between 2 and 8 inches"),
        ({"font_size": 4}, "`font_size` must be between 6 and 12 points, got 4"),
        ({"font_size": True}, "`font_size` must be between 6 and 12 points, got True"),
    ):
        with pytest.raises(InvalidArgument, match=re.escape(message)) as error:
            write_paper(data, tmp_path / "bad", **bad)
        assert "\n" not in str(error.value)
    assert not (tmp_path / "bad").exists()  # checked before anything is written


def test_screen_figures_keep_the_report_pages_size(reports):
    figure = FIGURES["aggregates"](reports["saber"])
    assert figure.get_size_inches()[0] == 10.0
    texts = drawn_texts(_drawn(figure))
    assert min(t.get_fontsize() for t in texts) == 10.0
    assert np.isclose(max(t.get_fontsize() for t in texts), 11.0)


def _drawn(figure):
    figure.canvas.draw()
    return figure
