"""``report --episodes``: each game's best and worst episode, replayed from the logs, shown."""

from __future__ import annotations

import base64
import io
import json
import re
import shutil

import numpy as np
import pytest
from PIL import Image
from report_helpers import write_results

import arcadebench
from arcadebench.benchmarks.replay.logs import read_run
from arcadebench.benchmarks.replay.simulate import Player
from arcadebench.benchmarks.replay.video import BAND, choose_episode
from arcadebench.benchmarks.report import episodes, report
from arcadebench.cli import main
from arcadebench.records import load_replay

pytestmark = pytest.mark.filterwarnings("ignore::arcadebench.errors.NonCompliantWarning")
SHORT = {"max_episode_frames": 800}


@pytest.fixture(scope="module")
def runner_out(tmp_path_factory):
    """Three episodes of each of two Atari-5 games by the random agent."""
    out = tmp_path_factory.mktemp("runner")
    arcadebench.evaluate(
        "random", "atari5", ["qbert", "phoenix"], episodes=3, log_dir=out, env_kwargs=SHORT,
        progress="off", reps=0, workers=2,
    )  # fmt: skip
    return out


def gifs_on_page(html):
    """``{alt text: decoded GIF}`` of the page's inlined GIFs."""
    found = re.findall(r'<img src="data:image/gif;base64,([A-Za-z0-9+/=]+)" alt="([^"]+)"', html)
    return {alt: Image.open(io.BytesIO(base64.b64decode(data))) for data, alt in found}


def emulator_last_screen(run, episode):
    """The episode's last screen as the emulator gives it, replayed apart."""
    replay = load_replay(run.replay_file, episode.replay)
    player = Player(arcadebench.load_spec("atari5"), run.header, obs_type="rgb")
    screens = []
    try:
        player.play(replay, None, lambda obs, *_: screens.append(np.asarray(obs)))
    finally:
        player.close()
    return screens[-1]


def last_screen(gif):
    gif.seek(gif.n_frames - 1)
    return np.asarray(gif.convert("RGB"))[BAND:]


def test_the_best_and_worst_episode_of_each_game_are_replayed_onto_the_page(runner_out, tmp_path):
    page = report([runner_out], tmp_path / "report", reps=0, episodes=True)
    html = page.read_text(encoding="utf-8")
    gifs = gifs_on_page(html)
    assert set(gifs) == {f"{g} {w}" for g in ("qbert", "phoenix") for w in ("best", "worst")}
    for game in ("qbert", "phoenix"):
        (log,) = (runner_out / "random" / "atari5" / game).glob("*.jsonl")
        run = read_run(log)
        returns = [float(e.record["return"]) for e in run.episodes]
        best = run.episodes[returns.index(max(returns))]  # the first of equal best returns
        assert gifs[f"{game} best"].n_frames == best.replay.steps + 1  # reset + each step
        assert f"return {max(returns):g}" in html and f"return {min(returns):g}" in html
        # the last screen of the best clip is the emulator's own last screen of that episode
        assert np.array_equal(last_screen(gifs[f"{game} best"]), emulator_last_screen(run, best))
    assert sorted(p.name for p in (tmp_path / "report").glob("episode_*.gif")) == [
        "episode_0_phoenix_best.gif",
        "episode_0_phoenix_worst.gif",
        "episode_0_qbert_best.gif",
        "episode_0_qbert_worst.gif",
    ]
    # a report of the same directory without --episodes shows none and leaves none behind
    html = report([runner_out], tmp_path / "report", reps=0).read_text(encoding="utf-8")
    assert 'id="episodes"' not in html and not list((tmp_path / "report").glob("episode_*"))


def test_a_long_episode_keeps_one_screen_in_k_and_says_how_much_faster(
    runner_out, tmp_path, monkeypatch
):
    monkeypatch.setattr(episodes, "MAX_IMAGES", 20)
    html = report([runner_out], tmp_path, reps=0, episodes=True).read_text(encoding="utf-8")
    gifs = gifs_on_page(html)
    assert gifs and all(gif.n_frames <= 21 for gif in gifs.values())
    assert re.search(r"one screen in (\d+), \1\u00d7 speed", html)


def test_logs_without_recordings_are_a_note_and_the_report_is_still_written(tmp_path, capsys):
    arcadebench.evaluate(
        "random", "atari5", ["qbert"], episodes=2, log_dir=tmp_path / "run", env_kwargs=SHORT,
        progress="off", reps=0,
    )  # fmt: skip
    for replay in (tmp_path / "run").rglob("*.replay"):
        replay.unlink()
    status = main(["report", str(tmp_path / "run"), "--episodes", "--reps", "0", "--out",
                   str(tmp_path / "report")])  # fmt: skip
    assert status == 0
    assert "0 episodes replayed" in capsys.readouterr().out
    html = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "qbert: no episode shown: " in html and "has no recorded episode (written" in html


def edit_lines(path, edit, where):
    """Rewrite the JSON lines of ``path`` for which ``where(record)`` is true with ``edit``."""
    records = [json.loads(line) for line in path.read_text().splitlines()]
    edited = [{**r, **edit(r)} if where(r) else r for r in records]
    path.write_text("".join(json.dumps(record) + "\n" for record in edited))


def key(record):
    """An episode or replay line's ``(stream, episode)``, ``None`` for a header."""
    return (record.get("env", 0), record["episode"]) if "episode" in record else None


def test_unreplayable_and_disagreeing_episodes_are_named_in_notes(runner_out, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(runner_out, copy)
    (qbert,) = (copy / "random" / "atari5" / "qbert").glob("*.jsonl")
    (log,) = (copy / "random" / "atari5" / "phoenix").glob("*.jsonl")
    # qbert: an emulator setting nothing can be made with
    settings = {**json.loads(qbert.read_text().splitlines()[0])["settings"], "frameskip": "four"}
    edit_lines(qbert, lambda r: {"settings": settings}, lambda r: r["kind"] == "header")
    # phoenix: a return edited into the best, and the worst's recording damaged
    run = read_run(log)
    edited = run.episodes[0]
    claimed = max(float(e.record["return"]) for e in run.episodes) + 100
    edit_lines(log, lambda r: {"return": claimed}, lambda r: key(r) == edited.key)
    _, worst = choose_episode(read_run(log), which="worst")
    edit_lines(
        log.with_suffix(".replay"), lambda r: {"actions": "AAAA"}, lambda r: key(r) == worst.key
    )
    html = report([copy / "random"], tmp_path / "report", reps=0, episodes=True).read_text(
        encoding="utf-8"
    )
    assert "qbert: the best episode (episode" in html and "cannot be replayed" in html
    # the edited line is the best by its log, replayed and shown, and a note gives both returns
    assert "phoenix best" in gifs_on_page(html)
    replayed = float(edited.record["return"])
    assert (
        f"phoenix: the best episode ({edited.name} of {log}) does not replay as its log line "
        f"says: the log says return {claimed:g}, the replay gives return {replayed:g}"
    ) in html
    assert f"phoenix: the worst episode ({worst.name} of {log}) cannot be replayed: " in html
    assert "is damaged" in html and "phoenix worst" not in gifs_on_page(html)


def test_inputs_without_logs_say_why_no_episode_is_shown(tmp_path):
    results = write_results(tmp_path / "r.json", "saber", {"x": {"pong": [1.0, 2.0]}}, reps=0)
    html = report([results], tmp_path / "out", reps=0, episodes=True).read_text(encoding="utf-8")
    assert "no episode shown: the inputs hold no episode logs" in html
