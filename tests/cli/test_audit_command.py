"""`arcadebench audit`: the table, --json, the exit status (0 matches --spec, 1 differs) and bad
input in one line with exit status 2, never a traceback."""

from __future__ import annotations

import json

import pytest

from arcadebench.cli import main

CHEAP = ["--frames", "200", "--cap-frames", "0"]


def test_a_matching_env_prints_the_table_writes_json_and_exits_0(tmp_path, capsys):
    out = tmp_path / "audit.json"
    args = ["audit", "arcadebench/HWR-Pong-v0", "--kwargs", '{"log_dir": false}', "--spec", "hwr"]
    assert main([*args, *CHEAP, "--json", str(out)]) == 0
    printed = capsys.readouterr()
    lines = printed.out.splitlines()
    assert lines[0].startswith('audit of arcadebench/HWR-Pong-v0 {"log_dir": false}: Gymnasium env')
    assert "hwr (named): matches" in printed.out
    assert printed.err == f"wrote {out}\n"
    data = json.loads(out.read_text())
    assert data["format"] == "arcadebench-audit/1" and data["exit_status"] == 0
    assert data["named"] == "hwr" and data["specs"]["hwr"]["matches"]
    assert data["properties"]["action set"]["value"]["set"] == "full"
    assert set(data["specs"]) == {"atari100k", "atari5", "dqn2015", "hwr", "machado2018", "saber"}


def test_an_env_that_differs_from_the_named_spec_exits_1(capsys):
    args = ["audit", "ALE/Pong-v5", "--kwargs", '{"frameskip": 1}', "--spec", "atari5", *CHEAP]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert "atari5 (named): 3 rules differ" in out
    assert "  frame skip: 1 frame a step; atari5 declares 4 frames a step [1]" in out
    assert "[1] Braylan et al. 2015" in out


@pytest.mark.parametrize(
    "args, error",
    [
        (["ALE/Pnog-v5"], "got 'ALE/Pnog-v5': Environment `Pnog` doesn't exist in namespace ALE."),
        (["ALE/Pong-v5", "--kwargs", "{frameskip: 1}"], "`--kwargs` must be a JSON object"),
        (["ALE/Pong-v5", "--kwargs", '{"frameskp": 1}'], "unexpected keyword argument 'frameskp'"),
        (["no_such_module:make"], "cannot import 'no_such_module' (ModuleNotFoundError"),
        (["os:getcwd"], "os:getcwd returned str, not an env"),
        (["CartPole-v1"], "pass --game <ROM> if it runs an ALE ROM"),
        (["ALE/Pong-v5", "--game", "pnog"], "`--game` must be an ale-py ROM, got 'pnog'. Did you"),
        (["ALE/Pong-v5", "--spec", "sonic"], "`--spec` must be an Atari spec, got 'sonic'"),
        (["ALE/Pong-v5", "--frames", "10"], "`--frames` must be an integer >= 100, got 10"),
        (
            ["ale_py.vector_env:AtariVectorEnv", "--kwargs", '{"game": "pong"}'],
            "argument: 'num_envs'; fix the callable or its `--kwargs`",
        ),
        (  # an env the reference emulator of the game named cannot follow
            ["gymnasium.envs.classic_control:CartPoleEnv", "--game", "pong", *CHEAP],
            "could not be followed in pong's emulator (the env's 2 actions are neither",
        ),
        (
            ["ale_py.vector_env:AtariVectorEnv", "--kwargs", '{"game": "pong", "num_envs": 1}']
            + ["--game", "breakout", *CHEAP],
            "is it an ALE env of breakout? Pass its ROM as `--game`",
        ),
    ],
)
def test_bad_input_is_one_line_with_exit_status_2(args, error, capsys):
    assert main(["audit", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("arcadebench: error: ") and err.count("\n") == 1, err
    assert error in err


def test_an_unwritable_json_path_is_one_line(tmp_path, capsys):
    args = ["audit", "ALE/Pong-v5", *CHEAP, "--json", str(tmp_path / "no" / "a.json")]
    assert main(args) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("arcadebench: error: ") and "cannot write the report" in err
