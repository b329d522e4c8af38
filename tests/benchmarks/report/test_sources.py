"""A report given results of several protocols: the report's own, and each other one apart.

The main spec (``--spec`` or the first input's) gets the full report; every other protocol's
results get a section of their own, headed by the differences `diff` finds that change scores,
and appear in no table or figure of the main spec.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_helpers import HOSTILE, HOSTILE_ATTR, saber_logs, write_log, write_results

import arcadebench
import arcadebench.specs
from arcadebench.benchmarks.report import load_report_data, write_report
from arcadebench.benchmarks.report.figures import per_game_figure
from arcadebench.errors import InputError, InvalidArgument
from arcadebench.records import LogWarning

pytest.importorskip("matplotlib")

SPEC_DIR = Path(arcadebench.specs.__file__).parent
SABER_SCORES = {"rainbow": {"pong": [1.0, 2.0], "breakout": [3.0, 5.0]}}
ATARI100K_SCORES = {"bbf": {"pong": [10.0, 12.0], "breakout": [30.0, 40.0]}}


class _Sections(HTMLParser):
    """The text of every ``<section id=...>``, its ``data-key`` attributes, and every tag."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: dict[str, list[str]] = {}
        self.keys: dict[str, list[str]] = {}
        self._open: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "section":
            self._open.append(attrs["id"])
            self.text.setdefault(attrs["id"], [])
            self.keys.setdefault(attrs["id"], [])
        elif self._open and "data-key" in attrs:
            self.keys[self._open[-1]].append(attrs["data-key"])

    def handle_endtag(self, tag):
        if tag == "section":
            self._open.pop()

    def handle_data(self, data):
        if self._open:
            self.text[self._open[-1]].append(data)


def _sections(html: str) -> _Sections:
    parsed = _Sections()
    parsed.feed(html)
    return parsed


def _two_protocols(tmp_path):
    saber = write_results(tmp_path / "saber.json", "saber", SABER_SCORES, reps=0)
    atari100k = write_results(tmp_path / "a100k.json", "atari100k", ATARI100K_SCORES, reps=0)
    return saber, atari100k


def test_each_protocol_is_reported_in_its_own_section(tmp_path):
    saber, atari100k = _two_protocols(tmp_path)
    data = load_report_data([saber, atari100k], reps=0, references=["human"])
    assert data.spec.name == "saber"  # the first input's
    assert [e.name for e in data.entries] == ["rainbow", "human (Table 5)"]
    (other,) = data.others
    assert other.data.spec.name == "atari100k" and [e.name for e in other.data.entries] == ["bbf"]
    assert other.data.metric == "hns" and other.diff.a.name == "saber"
    # bbf's HNS are atari100k's: pong 100 (11 - -20.7) / (14.6 - -20.7) = 89.80 %
    assert other.data.entries[0].games["pong"]["hns"] == pytest.approx(89.80169971671388)
    (legend,) = per_game_figure(data).legends
    labels = [t.get_text() for t in legend.get_texts()]
    assert "rainbow" in labels and "human (Table 5)" in labels and "bbf" not in labels
    html = write_report(data, tmp_path / "out").read_text()
    page = _sections(html)
    section = "".join(page.text["protocol-1"])
    assert "Results under atari100k (a different protocol)" in section
    assert (
        "Not comparable with the saber results above: 13 differences between the protocols "
        "change scores (arcadebench diff saber atari100k)" in section
    )
    for setting in ("sticky actions", "life information", "budget", "scored phase"):
        assert setting in section
    assert "Evidence: Machado et al. 2018 Section 5.2" in section
    assert "atari100k:hns.iqm" in page.keys["protocol-1"]
    for main in ("aggregates", "games", "figures", "published"):  # bbf in no table of saber's
        assert "bbf" not in "".join(page.text[main]), main
    assert all(not key.startswith("atari100k:") for key in page.keys["aggregates"])
    assert "These inputs hold results of 2 protocols." in html
    entries = "".join(page.text["entries"])
    assert "saber (this report's)" in entries
    assert "atari100k: a different protocol, reported apart" in entries
    assert "a100k.json (under atari100k)" in "".join(page.text["provenance"])


def test_the_main_spec_is_the_one_named_and_must_have_an_input(tmp_path):
    saber, atari100k = _two_protocols(tmp_path)
    data = load_report_data([saber, atari100k], spec="atari100k", reps=0)
    assert [e.name for e in data.entries] == ["bbf"]
    assert [o.data.spec.name for o in data.others] == ["saber"]
    with pytest.raises(InvalidArgument) as error:
        load_report_data([saber], spec="atari100k", reps=0)
    assert str(error.value) == (
        "`spec` must be the protocol of at least one input, got 'atari100k' (the inputs were "
        "scored with saber); drop --spec, or add results of 'atari100k'"
    )


def test_logs_of_another_protocol_are_scored_with_it_in_their_section(tmp_path):
    runs = tmp_path / "runs"
    write_log(runs / "dqn", "saber", "dqn", "pong", "0", [1.0, 3.0], 1000)
    write_log(runs / "dqn", "hwr", "dqn", "pong", "0", [5.0, 7.0], 1000)
    lone = write_log(tmp_path / "ppo", "hwr", "ppo", "pong", "0", [9.0], 1000)
    data = load_report_data([runs, lone], spec="saber", reps=0)
    assert [e.name for e in data.entries] == ["dqn"]
    assert data.entries[0].games["pong"]["runs"] == [2.0]
    assert data.entries[0].source == str(runs)
    (hwr,) = data.others
    assert hwr.data.spec.name == "hwr"
    assert {e.name: e.games["pong"]["runs"] for e in hwr.data.entries} == {
        "dqn": [6.0],
        "ppo": [9.0],
    }


def test_a_directorys_other_protocol_with_nothing_to_score_yet_is_a_note(tmp_path):
    runs = tmp_path / "runs"
    write_log(runs / "dqn", "saber", "dqn", "pong", "0", [1.0, 3.0], 1000)
    # Atari 100k scores evaluation episodes: a run still training has nothing to score yet
    training = write_log(runs / "dqn", "atari100k", "dqn", "pong", "0", [5.0], 1000)
    with pytest.warns(LogWarning, match="hold 1 log of atari100k that cannot be reported"):
        data = load_report_data([runs], spec="saber", reps=0)
    assert [e.name for e in data.entries] == ["dqn"] and data.others == ()
    (note,) = data.notes
    assert note.startswith("the inputs' directories hold 1 log of atari100k that cannot be ")
    assert "has no scores" in note
    with pytest.raises(InputError, match="has no scores"):  # named on its own: an error
        load_report_data([runs, training], spec="saber", reps=0)


def test_results_of_a_spec_this_installation_lacks_are_refused(tmp_path):
    saber, atari100k = _two_protocols(tmp_path)
    data = json.loads(atari100k.read_text())
    data["spec"]["hash"] = "sha256:" + "1" * 64
    atari100k.write_text(json.dumps(data))
    with pytest.raises(InputError) as error:
        load_report_data([saber, atari100k], reps=0)
    message = str(error.value)
    assert message.startswith(
        f"{atari100k}: was scored with spec 'atari100k' v1 (111111111111), which this "
        "installation does not have"
    )
    assert "--spec <the spec file it was scored with>" in message and "\n" not in message


def test_a_protocol_that_differs_in_reporting_only_is_still_apart(tmp_path):
    yaml = (SPEC_DIR / "atari100k.yaml").read_text(encoding="utf-8")
    spec_file = tmp_path / "iris.yaml"
    spec_file.write_text(yaml.replace("  episodes: 100\n", "  episodes: 16\n"), encoding="utf-8")
    iris = arcadebench.load_spec(spec_file)
    mine = write_results(tmp_path / "iris.json", iris, {"iris": {"pong": [1.0]}}, reps=0)
    theirs = write_results(tmp_path / "a100k.json", "atari100k", ATARI100K_SCORES, reps=0)
    data = load_report_data([mine, theirs], spec=iris, reps=0)
    (other,) = data.others
    assert other.diff.comparable and not other.diff.identical
    html = write_report(data, tmp_path / "out").read_text()
    assert "differs from atari100k in what it reports only" in html


def test_names_in_another_protocols_section_stay_text(tmp_path):
    saber = write_results(tmp_path / "saber.json", "saber", SABER_SCORES, reps=0)
    hostile = write_results(
        tmp_path / "h.json", "atari100k", {HOSTILE: {"pong": [1.0]}, HOSTILE_ATTR: {"pong": 2.0}}
    )
    html = write_report(load_report_data([saber, hostile], reps=0), tmp_path / "out").read_text()
    page = _sections(html)
    assert [t for t, _ in page.tags if t == "script"] == []
    assert not any(name.startswith("on") for _, attrs in page.tags for name in attrs)
    assert all(
        a.get("src", "").startswith("data:image/png;base64,") for t, a in page.tags if t == "img"
    )
    assert HOSTILE in "".join(page.text["protocol-1"])
    assert HOSTILE_ATTR in "".join(page.text["protocol-1"])


def test_the_reports_probabilities_of_improvement_are_the_scorers(tmp_path):
    """Results of two files compared in the report as the scorer compares them in one."""
    runs = {"a": {"pong": [1.0, 5.0, -3.0], "qbert": [300.0, 250.0]}, "b": {"pong": [2.0, 0.0]}}
    together = arcadebench.score("atari5", runs, reps=300)
    first = write_results(tmp_path / "a.json", "atari5", {"a": runs["a"]}, reps=300)
    second = write_results(tmp_path / "b.json", "atari5", {"b": runs["b"]}, reps=300)
    data = load_report_data([first, second], reps=300)
    assert data.comparisons == together.comparisons  # same games, runs, metric and seed
    assert data.comparisons[0]["games"] == {"pong": 0.5}  # 1 > 0, 5 > 2, 5 > 0; qbert: no b
    assert load_report_data([first], reps=0).comparisons == ()


def test_published_curves_are_those_of_the_references_compared_against(tmp_path):
    log = tmp_path / "logs"
    write_log(log, "machado2018", "me", "pong", "0", [float(i) for i in range(30)], 500_000)
    data = load_report_data([log], reps=0, references=["DQN (Dopamine)"])
    assert [c.name for c in data.reference_curves] == ["DQN (Dopamine)"]
    (me,) = [e for e in data.entries if e.kind == "result"]
    assert list(me.block["curve"])[:2] == ["1000000", "2000000"]  # logs get the default curve
    assert load_report_data([log], reps=0).reference_curves == ()


@pytest.mark.parametrize("version", [1, 2])
def test_results_files_of_either_format_are_read_as_they_are(tmp_path, version):
    path = write_results(tmp_path / "results.json", "saber", SABER_SCORES)  # with intervals
    document = json.loads(path.read_text())
    document["format"] = f"arcadebench-results/{version}"
    path.write_text(json.dumps(document))
    data = load_report_data([path], reps=0)  # re-scored, it would have no intervals
    (entry,) = [e for e in data.entries if e.kind == "result"]
    assert entry.name == "rainbow" and "ci" in entry.block["aggregates"]


# -- references -----------------------------------------------------------------------------------


def _references(data):
    return [e.name for e in data.entries if e.kind == "reference"]


def test_references_by_name_none_or_the_specs_default(tmp_path):
    results = write_results(tmp_path / "r.json", "atari100k", ATARI100K_SCORES, reps=0)
    spec = arcadebench.load_spec("atari100k")
    assert _references(load_report_data([results], reps=0)) == []  # the reader's own default
    default = load_report_data([results], references=None, reps=0)
    assert _references(default) == list(spec.default_references())
    assert _references(load_report_data([results], references="none", reps=0)) == []
    random = "random (Agarwal et al. 2021 (rliable) constants)"
    named = load_report_data([results], references=["DER", random], reps=0)
    assert _references(named) == ["DER", random]
    with pytest.raises(InvalidArgument, match="'none' alone"):
        load_report_data([results], references=["none", "DER"], reps=0)


def test_compare_is_a_deprecated_name_of_references(tmp_path):
    results = write_results(tmp_path / "r.json", "atari100k", ATARI100K_SCORES, reps=0)
    with pytest.warns(DeprecationWarning, match="`compare` is deprecated: pass `references`"):
        data = load_report_data([results], compare=["DER"], reps=0)
    assert _references(data) == ["DER"]
    with pytest.warns(DeprecationWarning, match="`compare` is deprecated"):
        page = arcadebench.benchmarks.report.report([results], tmp_path / "out", compare=["DER"])
    assert '<td class="ref">DER</td>' in page.read_text()
    page = arcadebench.benchmarks.report.report([results], tmp_path / "default", reps=0)
    html = page.read_text()  # report() shows the spec's default references
    assert all(f'<td class="ref">{n}</td>' in html for n in ("DrQ(eps)", "SimPLe"))


def test_the_reports_references_are_scored_over_their_runs_or_show_no_run_statistics(tmp_path):
    """SPR over its 100 runs has Agarwal et al.'s IQM (0.337); SPR's means give no IQM at all."""
    spec = arcadebench.load_spec("atari100k")
    every_game = {"ours": {game: [0.0, 1.0] for game in spec.games}}
    results = write_results(tmp_path / "r.json", "atari100k", every_game, reps=0)
    runs, means = "SPR (Agarwal et al. 2021, 100 runs)", "SPR"
    data = load_report_data([results], references=[runs, means], reps=0)
    entries = {entry.name: entry for entry in data.entries}
    assert round(entries[runs].block["aggregates"]["hns"]["iqm"], 1) == 33.7
    assert "iqm" not in entries[means].block["aggregates"]["hns"]
    assert "optimality_gap" not in entries[means].block["aggregates"]["hns"]
    assert entries[means].block["aggregates"]["hns"]["median"] > 0  # over games: still there


def test_a_score_files_checkpoints_are_a_curve_beside_the_logs(tmp_path):
    """Published per-checkpoint data (a CSV whose runs have several frames) plots as a curve."""
    from matplotlib.text import Text

    from arcadebench.benchmarks.report.curves import sample_efficiency_figure

    logs = saber_logs(tmp_path / "logs")  # to 15M frames
    rows = ["algorithm,game,run,frames,score"] + [
        f"Rainbow (paper),{game},{run},{frames},{score * (1 + int(run))}"
        for game in ("pong", "breakout")
        for run in ("0", "1")
        for frames, score in ((5_000_000, 2.0), (10_000_000, 6.0), (15_000_000, 9.0))
    ]
    published = tmp_path / "rainbow.csv"
    published.write_text("\n".join(rows) + "\n", encoding="utf-8")
    data = load_report_data([logs / "dqn", published], spec="saber", reps=0)
    entries = {e.name: e for e in data.entries}
    assert set(entries["Rainbow (paper)"].block["curve"]) == {"5000000", "10000000", "15000000"}
    assert entries["dqn"].block["curve"]
    figure = sample_efficiency_figure(data)
    drawn = {t.get_text() for t in figure.findobj(Text)}
    assert any(text.startswith("Rainbow (paper)") for text in drawn), drawn
