"""The conformance check in the real emulator: every game of every Atari spec passes, the sticky
measurement reads 0, 0.25 and 1 where the emulator does, no-op starts and the training life-loss
signal are seen where declared, deliberate deviations and late or early limits are caught,
suspicious rewards are flagged, and the command's table, JSON, exit statuses and one-line
errors."""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from importlib import resources

import numpy as np
import pytest
from ale_py import Action
from ale_py.env import AtariEnv
from gymnasium.wrappers import StickyAction
from testdata import REPO, docs_generator

from arcadebench import check, load_spec
from arcadebench.benchmarks.conformance import StickyProbe, check_specs
from arcadebench.benchmarks.conformance.observer import EpisodeObserver
from arcadebench.benchmarks.envs import make_protocol_env
from arcadebench.cli import main
from arcadebench.errors import InvalidArgument, NonCompliantWarning
from arcadebench.wrappers import EpisodeFrameLimit, MaxStuckTime

GENERATE = docs_generator()
FRAMES = GENERATE.CHECK_FRAMES  # 1,000 per agent and game: scaled limits of 500 frames
SABER_RULE_LINE = "  rollover_threshold: -900000\n  rollover_correction: 1000000\n"


@pytest.fixture(scope="module")
def reports():
    """The check of every Atari spec (docs/check.md): one play per game and settings."""
    return {
        report.spec.name: report
        for report in check_specs(GENERATE.atari_specs(), frames=FRAMES, workers=2, progress="off")
    }


def spec_text(name, replace=(), drop=()):
    text = (resources.files("arcadebench.specs") / f"{name}.yaml").read_text()
    for old, new in replace:
        assert old in text
        text = text.replace(old, new)
    for line in drop:
        assert line in text
        text = text.replace(line, "")
    return text


def rows(report):
    return {g.game: g for g in report.games}


# --- every game of every Atari spec ----------------------------------------------------------


def test_every_game_of_every_atari_spec_passes(reports):
    counts = {name: len(report.games) for name, report in reports.items()}
    assert counts == {
        "atari100k": 26,
        "atari5": 57,
        "dqn2015": 49,
        "hwr": 57,
        "machado2018": 60,
        "saber": 61,
    }
    assert len({g.game for report in reports.values() for g in report.games}) == 62
    for report in reports.values():
        assert report.exit_status == 0 and report.failed == []
        settings = report.spec.environment
        for g in report.games:
            assert g.status in ("ok", "known exception", "look"), (g.game, g.notes)
            cells = {name: rule.cell for name, rule in g.rules.items()}
            assert cells["frameskip"] == str(settings.frameskip), g.game
            assert cells["determinism"] == "same", g.game
            assert cells["life_information"] == "hidden", g.game
            assert re.fullmatch(r"\d+ lost", cells["termination"]), g.game
            assert g.rules["observation"].status == "ok"
            assert g.rules["end_reason"].status == "ok"
            sticky = g.measurements["sticky"]
            if g.game == "qbert":  # Q*bert reads the joystick only between jumps
                assert g.rules["sticky"].status == "unverified"
                assert "too few samples" in g.rules["sticky"].detail
            else:
                assert g.rules["sticky"].status == "ok", (g.game, sticky)
                assert sticky["informative"] >= 30
                low, high = sticky["interval"]
                assert low <= settings.repeat_action_probability <= high


def test_no_op_starts_are_drawn_at_every_reset_where_declared(reports):
    for name, declared in (("atari100k", "0-29"), ("dqn2015", "1-30")):
        for g in reports[name].games:
            rule = g.rules["noop_starts"]
            assert rule.status == "ok" and rule.cell.endswith(f" of {declared}"), g.game
            starts = g.measurements["noop_starts"]["starts"]
            assert len(starts) == 5 and len(set(starts)) > 1
            # the random runs' resets are checked too: the first of each is the seeded one
            assert g.measurements["random"]["starts"][0] == starts[0]
    for name in ("saber", "hwr", "atari5", "machado2018"):
        for g in reports[name].games:
            assert g.rules["noop_starts"].status == "n/a"
            assert set(g.measurements["random"]["starts"]) == {0}  # ALE's own reset only


def test_a_lost_life_ends_training_episodes_only_where_declared(reports):
    for name in ("atari100k", "dqn2015"):
        report = reports[name]
        assert "the evaluation envs (the scored episodes)" in report.table().splitlines()[0]
        for g in report.games:
            rule, training = g.rules["life_loss"], g.measurements["training"]
            # the scored (evaluation) runs end on game over only
            assert g.measurements["random"]["life_ends"] == 0
            if training["most_lives"] == 0:  # Pong, Boxing, ...: no lives to lose
                assert (rule.status, rule.cell) == ("n/a", "no lives"), g.game
            elif training["life_ends"]:
                assert rule.cell == f"{training['life_ends']} ended in training", g.game
            else:  # a random pinball player keeps its ball for 4,000 frames
                assert (name, g.game) == ("dqn2015", "video_pinball")
                assert rule.status == "unverified"
    breakout = rows(reports["atari100k"])["breakout"]
    assert breakout.measurements["training"]["end_reasons"]["life_lost"] >= 1
    assert all(g.measurements["training"] is None for g in reports["saber"].games)


def test_the_generated_check_page_is_what_the_check_prints(reports):
    page = (REPO / "docs" / "check.md").read_text()
    assert page == GENERATE.check_page(reports.values()), (
        "docs/check.md is out of date: run .venv/bin/python docs/generate.py check"
    )


def test_skiing_has_9_actions_everywhere_as_a_known_exception(reports):
    for report in reports.values():
        if not report.spec.environment.full_action_space:  # DQN, Atari 100k: minimal sets
            continue
        skiing = rows(report)["skiing"]
        assert skiing.status == "known exception"
        assert skiing.rules["actions"].cell == "9 (known)"
        assert "ALE issue #691" in skiing.notes
        assert all(g.rules["actions"].cell == "18" for g in report.games if g.game != "skiing")


def test_dqn_and_atari100k_play_the_minimal_action_set(reports):
    for name in ("dqn2015", "atari100k"):
        for g in reports[name].games:
            assert g.rules["actions"].cell == str(g.measurements["minimal_actions"]), g.game
    assert rows(reports["dqn2015"])["pong"].rules["actions"].cell == "6"


def test_saber_rows_show_the_stuck_rule_and_the_scaled_cap(reports):
    saber = rows(reports["saber"])
    for game, g in saber.items():
        assert g.rules["max_episode_frames"].cell == "500/21,600,000 scaled", game
        if game == "skiing":  # rewarded (-6 or -7) on every step: never stuck
            assert g.rules["max_stuck_frames"].cell == "rewarded"
            continue
        assert g.rules["max_stuck_frames"].status == "ok", (game, g.notes)
        assert re.fullmatch(r"\d+/18,000 scaled", g.rules["max_stuck_frames"].cell), game
    # the NOOP agent is rewarded in these: the limit is cut below its longest rewardless stretch
    shorter = {game for game, g in saber.items() if g.rules["max_stuck_frames"].cell[:4] != "500/"}
    assert shorter == {"fishing_derby", "journey_escape", "pong", "skiing", "up_n_down"}
    pong = saber["pong"].measurements["max_stuck_frames"]
    assert pong["tries"] == [500, pong["limit"]] and pong["run"]["stuck_ends"] == [pong["limit"]]


def test_hwr_and_atari5_rows_show_the_108000_frame_cap_scaled(reports):
    for name in ("hwr", "atari5"):
        for g in reports[name].games:
            assert g.rules["max_episode_frames"].cell == "500/108,000 scaled", (name, g.game)
            assert g.measurements["max_episode_frames"]["run"]["cap_ends"] == [500]
            assert g.rules["max_stuck_frames"].cell == "-"
            assert g.rules["rollover"].status == "n/a"
    # the same settings: each game was played once for both specs
    hwr, atari5 = rows(reports["hwr"]), rows(reports["atari5"])
    assert hwr.keys() == atari5.keys()
    assert all(hwr[g].measurements is atari5[g].measurements for g in hwr)


def test_journey_escapes_penalty_is_flagged_not_failed(reports):
    journey = rows(reports["saber"])["journey_escape"]
    assert journey.status == "look" and journey.failed == []
    assert journey.flags == ("a reward of -2,000, below -1,000 and no rollover",)
    assert journey.rules["rewards"].cell.startswith("-2,000..")
    looks = {(r.spec.name, g.game) for r in reports.values() for g in r.games if g.status == "look"}
    # the two specs that play Journey Escape
    assert looks == {("saber", "journey_escape"), ("machado2018", "journey_escape")}


def test_the_table_has_one_row_per_game_and_a_summary(reports):
    table = reports["saber"].table().splitlines()
    assert table[0].startswith("saber v2 (") and "1,000 frames per agent, seed 0" in table[0]
    assert table[1].split()[:4] == ["game", "status", "actions", "sticky"]
    body = table[3:-2]
    assert [line.split()[0] for line in body] == list(load_spec("saber").games)
    assert table[-2] == "61 games: 59 ok, 1 known exception, 1 look, 0 FAIL"
    pong = next(line for line in body if line.startswith("pong "))
    assert re.search(r"\b\d+/18,000 scaled\s+500/21,600,000 scaled\s+-1\.\.0\s+same\b", pong)


# --- the sticky-action measurement ------------------------------------------------------------


def measure(game, p, steps=500, seed=0, env=None):
    env = env or AtariEnv(game, repeat_action_probability=p, full_action_space=True)
    probe = StickyProbe.attach(env, game, 0.25)
    rng = np.random.default_rng(seed)
    try:
        env.reset(seed=seed)
        for _ in range(steps):
            _, _, terminated, truncated, _ = env.step(int(rng.integers(18)))
            if terminated or truncated:
                env.reset()
    finally:
        estimate = probe.detach(env)
        env.close()
    return estimate


@pytest.mark.parametrize("game", ["pong", "montezuma_revenge", "breakout"])
def test_sticky_measurement_reads_0_and_1_exactly_and_025_closely(game):
    never, always, quarter = (measure(game, p) for p in (0.0, 1.0, 0.25))
    assert (never.estimate, never.unexplained, never.verdict) == (0.0, 0, "fail")
    assert never.informative >= 300 and never.high < 0.1
    assert (always.estimate, always.verdict) == (1.0, "fail")
    assert abs(quarter.estimate - 0.25) < 0.06 and quarter.verdict == "ok"
    assert quarter.low < 0.25 < quarter.high and quarter.informative >= 300


def test_sticky_decisions_per_agent_step_are_not_sticky_frames():
    # Gymnasium's StickyAction repeats the agent's previous action for a whole step, before the
    # emulator: the emulator itself then never keeps an action, which the probe measures.
    env = StickyAction(
        AtariEnv("pong", repeat_action_probability=0.0, full_action_space=True), 0.25
    )
    estimate = measure("pong", 0.0, env=env)
    assert estimate.estimate == 0.0 and estimate.verdict == "fail"


def test_the_probe_only_reads_the_emulator():
    seen = []
    for probed in (True, False):
        env = AtariEnv("yars_revenge", repeat_action_probability=0.25, full_action_space=True)
        probe = StickyProbe.attach(env, "yars_revenge", 0.25) if probed else None
        rng, frames = np.random.default_rng(1), []
        env.reset(seed=1)
        for _ in range(300):
            obs, reward, *_ = env.step(int(rng.integers(18)))
            frames.append((obs.tobytes(), reward))
        if probe is not None:
            estimate = probe.detach(env)
        env.close()
        seen.append(frames)
    assert seen[0] == seen[1]
    # Yars' Revenge reads leftovers of the previous frame that a saved state lacks: such frames
    # match no candidate and are ignored
    assert estimate.unexplained > 0 and estimate.verdict == "ok"


# --- violations are caught ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, game, env_kwargs, failed, note",
    [
        ("saber", "pong", {"repeat_action_probability": 0.0}, ["sticky"], "FAIL sticky: measured"),
        ("hwr", "breakout", {"life_information": True}, ["life_information"], "shows 'lives'"),
        ("atari5", "pong", {"frameskip": 5}, ["frameskip"], "a step advanced 5 frames"),
        ("saber", "breakout", {"full_action_space": False}, ["actions"], "4, the spec declares 18"),
        ("saber", "breakout", {"max_stuck_frames": 100}, ["max_stuck_frames"], "after 100 frames"),
        ("hwr", "pong", {"max_episode_frames": 300}, ["max_episode_frames"], "at frame 300"),
        ("dqn2015", "pong", {"noop_starts": None}, ["noop_starts"], "0 frames after ALE's own"),
        ("atari5", "pong", {"noop_starts": [0, 30]}, ["noop_starts"], "declared none"),
        (
            "atari100k",
            "breakout",
            {"life_loss_terminal_in_training": False},
            ["life_loss"],
            "a life was lost at frame",
        ),
        (
            "hwr",
            "breakout",
            {"life_loss_terminal_in_training": True},
            ["termination"],
            "without a game over",
        ),
    ],
)
def test_a_deviating_env_fails_the_rule_it_breaks(spec, game, env_kwargs, failed, note):
    report = check(spec, [game], frames=800, workers=1, progress="off", env_kwargs=env_kwargs)
    g = report.games[0]
    assert (report.exit_status, g.status, g.failed) == (1, "FAIL", failed)
    assert note in g.notes
    assert f"envs made with {next(iter(env_kwargs))}=" in report.table().splitlines()[0]


def test_obs_type_standard_conforms_too():
    report = check(
        "saber",
        ["breakout"],
        frames=400,
        workers=1,
        progress="off",
        env_kwargs={"obs_type": "standard"},
    )
    assert report.games[0].status == "ok" and report.games[0].rules["observation"].cell == "4x84x84"


def play_noop(env, observer, frames):
    obs, info = env.reset(seed=0)
    observer.reset(obs, info)
    while observer.frames < frames:
        obs, reward, terminated, truncated, info = env.step(0)
        observer.step(obs, reward, terminated, truncated, info)
        if terminated or truncated:
            break
    return observer


@pytest.mark.parametrize(
    "shift, message, ends",
    [
        (4, "400 frames without reward at frame 400 did not end it", [404]),
        (-4, "ended as stuck after 396 frames without reward", []),
    ],
)
def test_a_stuck_limit_one_step_late_or_early_is_caught(shift, message, ends):
    settings = {**dataclasses.asdict(load_spec("saber").environment), "max_stuck_frames": 400}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        env = make_protocol_env("saber", "breakout", log_dir=False, max_stuck_frames=None)
    env = MaxStuckTime(env, max_stuck_frames=400 + shift)  # NOOP: Breakout never rewards it
    try:
        observer = play_noop(env, EpisodeObserver(settings, env), 800)
    finally:
        env.close()
    assert observer.violations["stuck"] == [message] and observer.stuck_ends == ends


def test_a_frame_cap_one_step_late_is_caught():
    settings = {**dataclasses.asdict(load_spec("hwr").environment), "max_episode_frames": 400}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonCompliantWarning)
        env = make_protocol_env("hwr", "breakout", log_dir=False, max_episode_frames=None)
    env = EpisodeFrameLimit(env, max_episode_frames=404)
    try:
        observer = play_noop(env, EpisodeObserver(settings, env), 800)
    finally:
        env.close()
    assert observer.violations["frame_limit"] == ["frame 400 is past the cap, not truncated"]
    assert observer.cap_ends == [404]


def test_sabers_old_rollover_rule_would_flag_skiings_penalty(tmp_path):
    # SABER v1 (Appendix C's text): any reward below -1,000 is a rollover. Skiing's NOOP run
    # ends with the missed-gate penalty of -5,505 at frame 2,112; the old rule "corrects" it.
    old = tmp_path / "saber_v1.yaml"
    old.write_text(
        spec_text(
            "saber",
            replace=[
                ("name: saber", "name: saber-v1"),
                (SABER_RULE_LINE, "  rollover_threshold: -1000\n  rollover_correction: 1000\n"),
            ],
        )
    )
    report = check(str(old), ["skiing"], frames=2_200, workers=1, progress="off")
    skiing = report.games[0]
    assert (skiing.status, skiing.failed, report.exit_status) == ("look", [], 0)
    assert skiing.flags == (
        "a reward of -5,505 was corrected as a rollover, but a score-counter wrap reports "
        "about -1,000,000",
    )
    # the same play under SABER v2 flags the genuine penalty instead
    current = check("saber", ["skiing"], frames=2_200, workers=1, progress="off").games[0]
    assert current.flags == ("a reward of -5,505, below -1,000 and no rollover",)
    assert current.rules["rewards"].cell == "-5,505..-6"
    # and an env that applies the old rule under SABER v2 breaks the rollover rule
    deviating = check(
        "saber",
        ["skiing"],
        frames=2_200,
        workers=1,
        progress="off",
        env_kwargs={"rollover_threshold": -1000.0, "rollover_correction": 1000.0},
    ).games[0]
    assert deviating.failed == ["rollover"]
    assert "[-5505.0] reported as rollovers, above -900,000" in deviating.notes


def test_a_declared_exception_the_emulator_does_not_need_is_flagged(tmp_path):
    path = tmp_path / "extra.yaml"
    path.write_text(
        spec_text(
            "atari5",
            replace=[("name: atari5", "name: extra"), ("{skiing: 9}", "{skiing: 9, pong: 6}")],
        )
    )
    pong = check(str(path), ["pong"], frames=400, workers=1, progress="off").games[0]
    assert pong.status == "look" and pong.flags == ("the spec lists 6 actions, got 18",)


def test_arguments_are_checked_before_playing():
    with pytest.raises(InvalidArgument, match=re.escape("`frames` must be an integer >= 100")):
        check("saber", frames=99)
    with pytest.raises(InvalidArgument, match="must be an Atari spec"):
        check("sonic")
    with pytest.raises(InvalidArgument, match=re.escape("`env_kwargs` must be a mapping")):
        check("saber", env_kwargs=["obs_type"])
    with pytest.raises(InvalidArgument, match=re.escape("`env_kwargs` must not set `phase`")):
        check("dqn2015", env_kwargs={"phase": "training"})


def test_a_reset_that_plays_other_actions_than_noop_is_caught():
    settings = {**dataclasses.asdict(load_spec("dqn2015").environment)}
    env = make_protocol_env("dqn2015", "breakout", log_dir=False, phase="evaluation")
    observer = EpisodeObserver(settings, env, phase="evaluation")
    try:
        obs, info = env.reset(seed=0)
        env.unwrapped.ale.act(Action.FIRE)  # a start that fires: not a no-op start
        observer.reset(obs, info)
    finally:
        observer.close()
        env.close()
    assert observer.violations["noop_starts"] == ["a reset played FIRE, not only NOOP"]


# --- the command line -----------------------------------------------------------------------------


def test_the_command_prints_the_table_and_writes_json(tmp_path, capsys):
    out = tmp_path / "check.json"
    args = ["check", "atari5", "--games", "Pong", "battle zone", "--frames", "400"]
    assert main([*args, "--workers", "1", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("atari5 v1 (") and "400 frames per agent, seed 0" in lines[0]
    assert [line.split()[:2] for line in lines[3:5]] == [["pong", "ok"], ["battle_zone", "ok"]]
    assert "200/108,000 scaled" in lines[3]
    assert lines[5] == "2 games: 2 ok, 0 known exception, 0 look, 0 FAIL"
    assert captured.err == f"wrote {out}\n"
    data = json.loads(out.read_text())
    assert data["format"] == "arcadebench-check/1" and data["exit_status"] == 0
    assert data["spec"]["name"] == "atari5" and list(data["games"]) == ["pong", "battle_zone"]
    pong = data["games"]["pong"]
    assert pong["status"] == "ok" and pong["failed"] == []
    assert pong["rules"]["max_episode_frames"] == {
        "status": "ok",
        "cell": "200/108,000 scaled",
        "detail": "",
    }
    assert pong["measurements"]["random"]["digest"] == pong["measurements"]["replay"]["digest"]


def test_a_failed_rule_exits_1(tmp_path, capsys):
    path = tmp_path / "no_exception.yaml"  # a spec that forgets Skiing's emulator exception
    path.write_text(spec_text("saber", drop=["action_count_exceptions: {skiing: 9}\n"]))
    assert main(["check", str(path), "--games", "skiing", "--frames", "400", "--workers", "1"]) == 1
    row = capsys.readouterr().out.splitlines()[3]
    assert row.split()[:3] == ["skiing", "FAIL", "9"]
    assert row.endswith(
        "FAIL actions: 9, the spec declares 18; stuck not shown: the NOOP agent "
        "is rewarded on every step"
    )


@pytest.mark.parametrize(
    "args, error",
    [
        (["saber", "--games", "pnog"], "'pnog' is not a game of the 'saber' spec. Did you mean: "),
        (["saber", "--frames", "0"], "`frames` must be an integer >= 100, got 0"),
        (["saber", "--workers", "0"], "`workers` must be an integer >= 1, got 0"),
        (["sonic"], "`spec` must be an Atari spec (platform 'atari'), got 'sonic' (platform"),
        (["sabre"], "sabre"),
    ],
)
def test_bad_input_is_one_line_with_exit_status_2(args, error, capsys):
    assert main(["check", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("arcadebench: error: ") and captured.err.count("\n") == 1
    assert error in captured.err


def test_an_unwritable_json_path_is_one_line(tmp_path, capsys):
    out = tmp_path / "missing" / "check.json"
    args = ["check", "atari5", "--games", "pong", "--frames", "100", "--workers", "1"]
    assert main([*args, "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the report" in err


# --- long mode: the declared limits -------------------------------------------------------------


@pytest.mark.long
def test_long_saber_plays_the_declared_18000_frame_stuck_limit():
    report = check("saber", frames=36_000, workers=2, progress="off")
    assert report.exit_status == 0
    for g in report.games:
        assert g.rules["sticky"].status == "ok", (g.game, g.notes)  # Q*bert too, with 36,000
        assert g.rules["max_episode_frames"].status == "ok", (g.game, g.notes)
        cap = g.rules["max_episode_frames"].cell
        assert re.fullmatch(r"[\d,]+/21,600,000 scaled", cap), g.game
        if g.game != "skiing":  # rewarded on every step until its game ends
            assert g.rules["max_stuck_frames"].status == "ok", (g.game, g.notes)
    declared = [g.game for g in report.games if g.rules["max_stuck_frames"].cell == "18,000"]
    assert {"breakout", "video_pinball", "yars_revenge"} <= set(declared)
    breakout = next(g for g in report.games if g.game == "breakout")
    assert breakout.measurements["max_stuck_frames"]["run"]["stuck_ends"] == [18_000]


@pytest.mark.long
def test_long_hwr_and_atari5_play_the_declared_108000_frame_cap():
    games = ["breakout", "montezuma_revenge", "skiing"]
    for report in check_specs(["hwr", "atari5"], games, frames=216_000, progress="off"):
        cells = {g.game: g.rules["max_episode_frames"].cell for g in report.games}
        assert cells == {
            "breakout": "108,000",
            "montezuma_revenge": "108,000",
            "skiing": "2,108/108,000 scaled",  # cut: the NOOP skier ends its run at frame 2,112
        }
        assert report.exit_status == 0
