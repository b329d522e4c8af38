"""The report: every figure from fixture results, the HTML's content and escaping, references."""

from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from report_helpers import (
    HOSTILE,
    HOSTILE_ATTR,
    HOSTILE_GAME,
    atari5_csv,
    atari5_runs,
    hostile_results,
    png_size,
    saber_logs,
    write_log,
    write_results,
)

import arcadebench
from arcadebench.benchmarks.report import (
    FIGURES,
    UnknownReference,
    list_references,
    load_report_data,
    report,
    resolve_reference,
)
from arcadebench.benchmarks.report.curves import (
    learning_curve_figure,
    running_mean,
    sample_efficiency_figure,
)
from arcadebench.benchmarks.report.figures import (
    _profile,
    classes_figure,
    game_table_figure,
    improvement_figure,
    per_game_figure,
)
from arcadebench.benchmarks.report.markup import element, escape
from arcadebench.benchmarks.report.references import reference_entries
from arcadebench.benchmarks.report.report_data import expected_range
from arcadebench.benchmarks.report.style import PALETTE
from arcadebench.errors import ArcadebenchError, InputError, InvalidArgument

matplotlib_image = pytest.importorskip("matplotlib.image")


class _Collect(HTMLParser):
    """Tags, data-* attributes and the text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> _Collect:
    collector = _Collect()
    collector.feed(html)
    return collector


def check_pngs(out: Path, expected: set[str]) -> None:
    written = {p.stem for p in out.glob("*.png")}
    assert written == expected
    for name in expected:
        path = out / f"{name}.png"
        width, height = png_size(path)
        # a figure of two entries in a row of panels is 10 x 2.3 in on screen
        assert 400 <= width <= 3000 and 200 <= height <= 12000, (name, width, height)
        assert 5_000 < path.stat().st_size < 3_000_000, name
        pixels = matplotlib_image.imread(path)  # decodes the whole image
        assert pixels.shape[:2] == (height, width)
        assert pixels.std() > 0.01  # not a blank canvas


# -- figures for every kind of input --------------------------------------------------------------


def test_one_algorithm_without_runs_missing_games_and_inf(tmp_path):
    results = write_results(tmp_path / "r.json", "atari5", atari5_csv(tmp_path / "s.csv"), reps=0)
    html = report([results], tmp_path / "out").read_text()
    check_pngs(tmp_path / "out", {"per_game", "aggregates", "profile"})
    assert "inf" in html and "qbert" in html  # infinite gameplay shown; the missing game noted
    assert "no score for 1 of the spec" in html


def test_several_algorithms_with_runs_cis_and_references(tmp_path):
    results = write_results(tmp_path / "r.json", "atari5", atari5_runs())
    out = tmp_path / "out"
    html = report(
        [results], out, references=["random", "MuZero", "Rainbow DQN (Table 3)"], reps=200
    ).read_text()
    check_pngs(out, {"per_game", "aggregates", "profile", "improvement"})
    data = json.loads(results.read_text())
    page = parse(html)
    keys = {a.get("data-key") for _, a in page.tags if a.get("data-key")}
    games = {a.get("data-game") for _, a in page.tags if a.get("data-game")}
    for entry in data["algorithms"].values():
        assert set(entry["games"]) <= games  # every game of every algorithm
        for key, value in entry["aggregates"].items():  # and every aggregate
            if key in ("ci", "missing"):
                continue
            if isinstance(value, dict):
                assert {f"{key}.{stat}" for stat in value} <= keys
            else:
                assert key in keys
        median = entry["aggregates"]["hns"]["median"]
        assert f"{median:,.2f}%" in html  # normalised scores are percentages
        low, high = entry["aggregates"]["ci"]["hns"]["median"]
        assert f"[{low:,.2f}%, {high:,.2f}%]" in html  # the interval next to it
    assert len(games) == 6  # references are shown on the games of the results
    # the Atari-5 estimate with the paper's expected error (Table 2: 10.4 %)
    estimate = data["algorithms"]["agent-a"]["aggregates"]["atari5"]
    low, high = expected_range(estimate, 10.4)
    assert f"{low:,.2f}" in html and f"{high:,.2f}" in html and "\u00b1 10.4 %" in html
    assert "Rainbow DQN (Table 3)" in html and "225.00" in html  # Table 3 estimate


def test_saber_logs_are_scored_and_draw_classes_and_learning_curves(tmp_path):
    logs = saber_logs(tmp_path / "logs")
    out = tmp_path / "out"
    html = report(
        [logs / "dqn", logs / "ppo"], out, references=["world record"], reps=100
    ).read_text()
    check_pngs(
        out,
        {
            "per_game",
            "classes",
            "aggregates",
            "profile",
            "improvement",
            "sample_efficiency",
            "learning_curves",
        },
    )
    scored = arcadebench.score("saber", [logs / "dqn", logs / "ppo"], reps=100)
    for name in ("dqn", "ppo"):
        mean = scored.algorithms[name]["aggregates"]["hwrns"]["mean"]
        assert f"{mean:,.2f}" in html  # the report shows what the scorer computes
    assert "Aggregates at the training checkpoints" in html and "10,000,000 frames" in html


def test_sonic_levels_against_published_baselines(tmp_path):
    spec = arcadebench.load_spec("sonic")
    tests = [name for name, level in spec.levels.items() if level.split == "test"]
    scores = {"mine": {g: [1000.0 + 100 * i, 1500.0 + 90 * i] for i, g in enumerate(tests[:-1])}}
    results = write_results(tmp_path / "sonic.json", "sonic", scores)
    logs = tmp_path / "logs"
    write_log(logs, "sonic", "jerk-log", tests[0], "0", [100.0 * i for i in range(20)], 18_000)
    out = tmp_path / "out"
    html = report([results, logs], out, references=["JERK"]).read_text()
    # the log's run against the results on the level they share; its curve over timesteps' frames
    check_pngs(
        out,
        {"levels", "aggregates", "profile", "improvement", "sample_efficiency", "learning_curves"},
    )
    curve = learning_curve_figure(load_report_data([logs], reps=0))
    assert curve.axes[0].get_xlabel() == "training timesteps"  # Sonic's budget is in timesteps
    assert "JERK (Table 1)" in html and "1,904.00" in html and "[1,882.10, 1,925.90]" in html
    assert tests[-1] in html  # the missing test level is listed


def test_results_objects_are_inputs_too(tmp_path):
    results = arcadebench.score("atari5", atari5_runs(), reps=50)
    html = report([results], tmp_path / "out", references=["human"], reps=50).read_text()
    assert "agent-a" in html and "&lt;results 1&gt;" in html


def test_results_and_logs_side_by_side_with_a_name_clash(tmp_path):
    first = write_results(tmp_path / "a.json", "atari5", atari5_runs())
    second = write_results(tmp_path / "b.json", "atari5", {"agent-a": {"pong": [0.0, 1.0]}})
    data = load_report_data([first, second], reps=0)
    assert [e.name for e in data.entries] == ["agent-a", "agent-b", "agent-a #2"]
    assert any("shown as 'agent-a #2'" in note for note in data.notes)


def test_figures_of_a_report_without_them_are_removed(tmp_path):
    out = tmp_path / "out"
    report([saber_logs(tmp_path / "logs") / "dqn"], out, reps=0)
    assert (out / "learning_curves.png").exists()
    results = write_results(tmp_path / "r.json", "saber", {"x": {"pong": 1.0}}, reps=0)
    report([results], out, reps=0)
    assert not (out / "learning_curves.png").exists() and (out / "classes.png").exists()


# -- figure details -------------------------------------------------------------------------------


def test_per_game_axis_is_symlog_only_when_the_spread_demands_it(tmp_path):
    results = write_results(tmp_path / "r.json", "atari5", atari5_runs(), reps=0)
    small = per_game_figure(load_report_data([results], reps=0, metric="hns"))
    # agent-b's infinite Pong sits at the edge; the finite HNS stay below 1,000 %
    assert small.axes[0].get_xscale() == "linear"
    wide = per_game_figure(load_report_data([results], reps=0, references=["MuZero"]))
    assert wide.axes[0].get_xscale() == "symlog"
    assert any(line.get_xdata()[0] == 100.0 for line in wide.axes[0].lines)  # the 100 % line
    raw = per_game_figure(load_report_data([results], reps=0, metric="raw"))
    assert raw.axes[0].get_xlabel().startswith("raw score (points)")


@pytest.mark.parametrize("algorithms", [1, 3, 6])
def test_game_labels_never_overlap_with_every_game(tmp_path, algorithms):
    spec = arcadebench.load_spec("saber")
    scores = {
        f"algorithm {k}": {g: 1000.0 * (k + 1) for g in spec.games} for k in range(algorithms)
    }
    data = load_report_data([write_results(tmp_path / "r.json", "saber", scores, reps=0)], reps=0)
    figure = per_game_figure(data)
    figure.canvas.draw()
    boxes = sorted(
        (t.get_window_extent() for t in figure.axes[0].get_yticklabels()), key=lambda box: box.y0
    )
    assert len(boxes) == 58  # the games with a world record (HWRNS)
    assert all(low.y1 <= high.y0 for low, high in zip(boxes, boxes[1:], strict=False))


def test_learning_curve_marks_the_checkpoints_inside_the_runs(tmp_path):
    data = load_report_data([saber_logs(tmp_path / "logs") / "ppo"], reps=0)
    figure = learning_curve_figure(data)
    ax = figure.axes[0]
    vertical = {line.get_xdata()[0] for line in ax.lines if len(set(line.get_xdata())) == 1}
    assert 10_000_000 in vertical and 50_000_000 not in vertical  # runs end at 15M frames
    assert "50M, 100M, 200M" in figure.get_suptitle()
    assert running_mean(np.array([2.0, 4.0, 6.0]), 100).tolist() == [2.0, 3.0, 4.0]


def test_profile_statistic_by_hand():
    scores = np.array([[0.0, 50.0, 200.0]])
    assert _profile(scores, np.array([10.0, 100.0])).tolist() == pytest.approx([2 / 3, 1 / 3])
    padded = np.array([[10.0, 300.0], [np.nan, 50.0]])  # game 0 has one run, game 1 two
    assert _profile(padded, np.array([20.0, 100.0])).tolist() == [0.5, 0.25]


def test_labels_with_dollars_and_underscores_render(tmp_path):
    scores = {"$x_1$ cost $": {"pong": 1.0}, "_hidden": {"pong": 2.0}}
    results = write_results(tmp_path / "r.json", "atari5", scores, reps=0)
    report([results], tmp_path / "out")
    assert (tmp_path / "out" / "per_game.png").exists()


# -- escaping -------------------------------------------------------------------------------------


def test_every_input_string_is_escaped(tmp_path):
    results = hostile_results(tmp_path / "r.json")
    html = report([results], tmp_path / "out", reps=0).read_text()
    page = parse(html)
    assert [t for t, _ in page.tags if t == "script"] == []
    assert all(
        a.get("src", "").startswith("data:image/png;base64,") for t, a in page.tags if t == "img"
    )
    assert not any(k.startswith("on") for _, a in page.tags for k in a)
    text = "".join(page.text)
    for name in (HOSTILE, HOSTILE_ATTR, HOSTILE_GAME, "</pre><script>alert(1)</script>"):
        assert name in text  # shown as text
    assert re.search(r"<script", html.split("<style>")[0] + html.split("</style>")[1]) is None


def test_markup_escapes_children_and_attributes_and_refuses_active_content():
    assert element("td", HOSTILE) == f"<td>{escape(HOSTILE)}</td>"
    assert element("td", "x", title=HOSTILE_ATTR).count('"') == 2
    for bad in (
        {"onclick": "x"},
        {"href": "javascript:alert(1)"},
        {"src": "http://x/y.png"},
        {"src": "data:image/png;base64,<script>"},
    ):
        with pytest.raises(InvalidArgument):
            element("a", "x", **bad)
    with pytest.raises(InvalidArgument):
        element("scr ipt")


# -- references -----------------------------------------------------------------------------------


def test_reference_catalogue_has_constants_dataset_and_published_rows():
    atari5 = {r.name: r for r in list_references(arcadebench.load_spec("atari5"))}
    assert {"random (Table 12)", "human (Table 12)", "MuZero (Table 3)", "Rainbow (noop)"} <= set(
        atari5
    )
    assert atari5["Rainbow (noop)"].kind == "dataset" and atari5["Rainbow (noop)"].games == 56
    assert (
        "Atari-5" in atari5["Rainbow (noop)"].citation
        and "protocol" in atari5["Rainbow (noop)"].citation
    )
    saber = {r.name for r in list_references(arcadebench.load_spec("saber"))}
    assert "world record (Table 5)" in saber and "MuZero" in saber
    sonic = {r.name for r in list_references(arcadebench.load_spec("sonic"))}
    assert sonic == {f"{row} (Table 1)" for row in arcadebench.load_spec("sonic").published[0].rows}


def test_saber_and_hwr_list_their_papers_algorithms_with_where_each_is_printed():
    saber = {r.name: r for r in list_references(arcadebench.load_spec("saber"))}
    assert {
        'Rainbow (Table 3, "No limit (SABER)")',
        'Rainbow-IQN (Table 3, "No limit (SABER)")',
        "Rainbow-IQN (Table 3, 5 minutes)",
        "Rainbow (Table 2, as originally published)",
        "Rainbow-IQN (single actor, Table 4)",
    } <= set(saber)
    five = saber["Rainbow-IQN (Table 3, 5 minutes)"]
    assert "obtained under another protocol: evaluation episodes capped at 5 minutes" in (
        five.citation
    )
    assert "another protocol" not in saber['Rainbow-IQN (Table 3, "No limit (SABER)")'].citation
    assert saber["Rainbow-IQN (single actor, Table 4)"].games == 3
    hwr = {r.name: r for r in list_references(arcadebench.load_spec("hwr"))}
    assert {
        "Rainbow (Tables 3 and 7)",
        'GDI-H3 (Section "Mean HWRNS")',
        'Agent57 (Section "Mean HWRNS", at 100B frames)',
        "GDI-H3 (GDI paper, abstract)",
    } <= set(hwr)
    assert "Generalized Data Distribution Iteration" in hwr["GDI-H3 (GDI paper, abstract)"].citation
    spec = arcadebench.load_spec("hwr")
    (rainbow,) = reference_entries(spec, ["Rainbow (Tables 3 and 7)"])
    assert rainbow.aggregates == {
        "hns": {"mean": 873.97, "median": 230.99},
        "hwrns": {"mean": 28.39},
    }


def test_a_run_is_printed_beside_its_protocols_published_results():
    results = arcadebench.score(
        "saber", {"mine": {"asterix": 5000.0, "ms_pacman": 2000.0, "pong": 0.0}}, reps=0
    )
    text = results.table()
    table3 = text[text.index('published results (Table 3, "No limit (SABER)")') :]
    lines = table3.splitlines()
    assert lines[3].split() == ["mine", "(score", "table)", "0.61%", "16.76%", "0"]
    assert lines[5].split() == ["Rainbow-IQN", "3.13%", "30.89%", "4"]
    assert "obtained under another protocol: evaluation episodes capped at 30 minutes" in text
    references = text[text.index("published per-game results") :].splitlines()
    ape_x = next(line for line in references if line.startswith("Rainbow-IQN Ape-X"))
    assert ape_x.split()[6:9] == ["15.38%", "15.38%", "2"]  # on the 2 games it shares with ours


def test_every_reference_says_which_protocol_its_numbers_were_obtained_under():
    atari5 = {r.name: r for r in list_references(arcadebench.load_spec("atari5"))}
    assert atari5["Rainbow (noop)"].protocol == "the paper's own, with no-op starts"
    assert "(no-op starts, as the data set names it)" in atari5["Rainbow (noop)"].citation
    assert atari5["DQN hs"].protocol == "the paper's own, with human starts"
    assert "(human starts, as the data set names it)" in atari5["DQN hs"].citation
    assert atari5["Prior noop"].protocol == "the paper's own, with no-op starts"
    assert atari5["MuZero"].protocol == (
        "the paper's own; start condition unknown (the data set does not say)"
    )
    assert "(start condition unknown)" in atari5["MuZero"].citation
    assert atari5["human (Table 12)"].protocol is None  # the spec's own constants
    assert atari5["MuZero (Table 3)"].protocol is None  # the spec's own table
    saber = {r.name: r for r in list_references(arcadebench.load_spec("saber"))}
    assert saber["Rainbow (Table 2, as originally published)"].protocol.startswith(
        "Rainbow's own (Hessel et al. 2018): no sticky actions, no-op starts"
    )
    assert saber['Rainbow (Table 3, "No limit (SABER)")'].protocol is None
    spec = arcadebench.load_spec("dqn2015")
    (dqn,) = reference_entries(spec, ["DQN"])
    assert dqn.protocol == spec.published_scores["DQN"].protocol  # carried into the report
    assert dqn.protocol.startswith("the network with the best of the periodic evaluations")


def test_reference_names_are_forgiving_and_unknown_ones_suggest():
    spec = arcadebench.load_spec("atari5")
    assert resolve_reference(spec, "Human").name == "human (Table 12)"
    assert resolve_reference(spec, "rainbow NOOP").name == "Rainbow (noop)"
    assert resolve_reference(spec, "MuZero").name == "MuZero"  # the data set before Table 3
    with pytest.raises(UnknownReference) as error:
        resolve_reference(spec, "Rainbow-IQN")
    message = str(error.value)
    assert "\n" not in message and "Did you mean" in message
    assert "arcadebench report --list-references atari5" in message
    with pytest.raises(UnknownReference, match="world record"):
        resolve_reference(spec, "world record")  # Atari-5 has no world records: suggestion only
    assert isinstance(error.value, ArcadebenchError)


def test_reference_scores_are_the_published_numbers():
    spec = arcadebench.load_spec("atari5")
    r2d2, muzero, table3 = reference_entries(spec, ["R2D2", "MuZero", "MuZero (Table 3)"])
    assert r2d2.games["ice_hockey"]["raw"] == 79.3  # first row of the data set, exactly
    assert r2d2.games["ice_hockey"]["runs"] == [79.3]
    assert muzero.per_game and not table3.per_game
    assert table3.aggregate("hns", "median") == (2041.0, None)
    assert table3.aggregate("atari5") == (2091.0, None)
    human = reference_entries(spec, ["human"])[0]
    assert all(cell["hns"] == 100.0 for cell in human.games.values())
    jerk = reference_entries(arcadebench.load_spec("sonic"), ["jerk"])[0]
    value, interval = jerk.aggregate("test", "mean")
    assert value == 1904.0 and interval == pytest.approx((1882.1, 1925.9))


# -- inputs ---------------------------------------------------------------------------------------


def test_results_of_two_specs_are_kept_apart(tmp_path):
    first = write_results(tmp_path / "a.json", "atari5", {"x": {"pong": 1.0}}, reps=0)
    second = write_results(tmp_path / "b.json", "saber", {"y": {"pong": 1.0}}, reps=0)
    data = load_report_data([first, second], reps=0)  # tests/benchmarks/report/test_sources.py
    assert [e.name for e in data.entries] == ["x"]
    assert [o.data.spec.name for o in data.others] == ["saber"]


def test_spec_from_the_logs_and_bad_arguments(tmp_path):
    logs = saber_logs(tmp_path / "logs")
    assert load_report_data([logs / "dqn"], reps=0).spec.name == "saber"
    with pytest.raises(InvalidArgument, match="--spec"):
        load_report_data([atari5_csv(tmp_path / "s.csv")])
    assert (
        load_report_data([tmp_path / "s.csv"], spec="atari5", reps=0).entries[0].name == "csv-agent"
    )
    with pytest.raises(InputError, match="no such file"):
        load_report_data([tmp_path / "missing.json"])
    with pytest.raises(InvalidArgument, match="`metric` must be one of"):
        load_report_data([tmp_path / "s.csv"], spec="atari5", metric="hwrns")
    with pytest.raises(InvalidArgument, match="`inputs`"):
        load_report_data([])


def test_expected_range_is_the_table2_log_error():
    low, high = expected_range(225.0, 10.4)
    assert math.log(226.0 / (low + 1.0)) == pytest.approx(0.104)
    assert math.log((high + 1.0) / 226.0) == pytest.approx(0.104)


def test_figure_table_is_complete():
    assert [name for name, *_ in FIGURES] == [
        "per_game",
        "levels",
        "classes",
        "aggregates",
        "profile",
        "improvement",
        "sample_efficiency",
        "learning_curves",
    ]


def test_an_evaluation_of_a_few_episodes_draws_no_learning_curve(tmp_path):
    write_log(tmp_path / "eval", "saber", "eval", "pong", "0", [1.0, 2.0, 3.0], 500_000)
    assert learning_curve_figure(load_report_data([tmp_path / "eval"], reps=0)) is None


def test_the_learning_curve_title_fits_a_one_game_figure(tmp_path):
    # one game, runs far short of the 50M, 100M and 200M checkpoints: a long title on a
    # narrow figure, which must wrap instead of running off both edges
    returns = [float(i) for i in range(12)]  # enough episodes for a curve
    write_log(tmp_path / "ppo", "saber", "ppo", "pong", "0", returns, 500_000)
    data = load_report_data([tmp_path / "ppo"], reps=0)
    figure = learning_curve_figure(data)
    figure.canvas.draw()
    title = figure._suptitle.get_window_extent()
    page = figure.bbox
    assert page.x0 <= title.x0 and title.x1 <= page.x1, (title, page)
    assert "\n" in figure.get_suptitle()  # wrapped, the checkpoints' note included


# -- the figures of Agarwal et al. 2021 and the paper's table -------------------------------------


def test_the_probability_of_improvement_figure_names_x_left_and_y_right(tmp_path):
    results = write_results(tmp_path / "r.json", "atari5", atari5_runs(), reps=100)
    data = load_report_data([results], reps=100)
    figure = improvement_figure(data)
    left, right = figure.axes
    assert [t.get_text() for t in left.get_yticklabels()] == ["agent-a"]
    assert [t.get_text() for t in right.get_yticklabels()] == ["agent-b"]
    assert left.get_yticklabels()[0].get_color() == PALETTE[0]  # X in its own colour
    assert any(list(line.get_xdata()) == [0.5, 0.5] for line in left.lines)  # neither is better
    one = write_results(tmp_path / "one.json", "atari5", {"x": {"pong": 1.0}}, reps=0)
    assert improvement_figure(load_report_data([one], reps=0)) is None


def test_an_algorithm_keeps_its_colour_when_a_figure_leaves_another_out(tmp_path):
    # SABER: "ranked" has classes, per-game scores and a curve; the score table has no curve
    logs = saber_logs(tmp_path / "logs")
    table = write_results(tmp_path / "t.json", "saber", {"table": {"pong": 10.0}}, reps=0)
    data = load_report_data([table, logs / "ppo"], reps=0)
    assert [e.name for e in data.entries] == ["table", "ppo"]
    curve = sample_efficiency_figure(data)
    assert curve.axes[0].lines[0].get_color() == PALETTE[1]  # ppo, second entry, second colour
    classes = classes_figure(data)
    assert classes.axes[0].patches[-1].get_facecolor()[:3] == pytest.approx(
        tuple(int(PALETTE[1][k : k + 2], 16) / 255 for k in (1, 3, 5))
    )


def test_sample_efficiency_panels_are_iqm_and_the_protocols_own(tmp_path):
    logs = saber_logs(tmp_path / "logs")
    figure = sample_efficiency_figure(load_report_data([logs / "dqn", logs / "ppo"], reps=50))
    titles = [ax.get_title() for ax in figure.axes if ax.get_visible()]
    # HWRB, the games past the world record, is 0 all along: no panel of a flat count
    assert titles == ["HWRNS IQM", "SABER median", "SABER mean"]
    assert figure.axes[0].get_xlabel() == "training frames"
    assert len(figure.axes[0].collections) == 2  # a band per algorithm (two runs a game)
    results = write_results(tmp_path / "r.json", "saber", {"x": {"pong": 1.0}}, reps=0)
    assert sample_efficiency_figure(load_report_data([results], reps=0)) is None


def test_a_breakthrough_count_is_a_panel_where_it_changes(tmp_path):
    # Pong's world record is 21: from the 20th episode on, the mean of the episodes so far
    # (SABER: of the last 100) passes it, and HWRB goes from 0 to 1
    returns = [-21.0] * 10 + [100.0] * 30
    for run in ("0", "1"):
        write_log(tmp_path / "logs", "saber", "ace", "pong", run, returns, 500_000)
    data = load_report_data([tmp_path / "logs"], reps=0)
    points = data.entries[0].block["curve"].values()
    assert {p["aggregates"]["hwrb"] for p in points} == {0, 1}
    figure = sample_efficiency_figure(data)
    panels = {ax.get_title(): ax for ax in figure.axes if ax.get_visible()}
    assert "hwrb" in panels
    assert panels["hwrb"].get_ylabel() == "games (count)"
    ticks = panels["hwrb"].get_yticks()
    assert all(float(t).is_integer() for t in ticks)  # a count has whole ticks


def test_the_per_game_table_figure_bolds_the_best_of_each_row(tmp_path):
    results = write_results(tmp_path / "r.json", "atari5", atari5_runs(), reps=100)
    figure = game_table_figure(load_report_data([results], reps=100, metric="hns"))
    (table,) = figure.axes[0].tables
    cells = table.get_celld()
    header = [cells[0, c].get_text().get_text() for c in (0, 1, 2)]
    assert header == ["game", "agent-a", "agent-b"]
    # Battle Zone: agent-b's 25,000 points beat agent-a's 4,000
    row = [
        r
        for (r, c), cell in cells.items()
        if c == 0 and cell.get_text().get_text() == "battle_zone"
    ][0]
    assert cells[row, 2].get_text().get_fontweight() == "bold"
    assert cells[row, 1].get_text().get_fontweight() == "normal"
    assert "[" in cells[row, 1].get_text().get_text()  # the interval of three runs


def test_a_reference_keeps_its_colour_where_an_aggregate_only_one_is_left_out(tmp_path):
    results = write_results(tmp_path / "r.json", "atari5", atari5_runs(), reps=0)
    data = load_report_data([results], reps=0, references=["Rainbow DQN (Table 3)", "MuZero"])
    assert [e.name for e in data.entries][2:] == ["Rainbow DQN (Table 3)", "MuZero"]
    figure = per_game_figure(data)  # Table 3 has no per-game scores: not drawn here
    bars = {c.get_label(): c for c in figure.axes[0].containers}
    assert set(bars) == {"agent-a", "agent-b", "MuZero"}
    muzero = bars["MuZero"].patches[0].get_facecolor()[:3]
    assert muzero == pytest.approx(tuple(int(PALETTE[3][k : k + 2], 16) / 255 for k in (1, 3, 5)))
