"""ButtonDiscretizer on stable-retro's Airstriker (same Genesis pad as Sonic): the button vectors
that reach the emulator, the spec's action sets, and the errors."""

from __future__ import annotations

import re

import numpy as np
import pytest
from ale_py.env import AtariEnv
from wrapper_helpers import ActionRecorder, button_code

from arcadebench.specs import load_spec
from arcadebench.wrappers import ButtonDiscretizer, InvalidArgument, StickyFrameSkip

GENESIS = ["B", "A", "MODE", "START", "UP", "DOWN", "LEFT", "RIGHT", "C", "Y", "X", "Z"]
SONIC = load_spec("sonic")


def code(*buttons):
    return sum(1 << GENESIS.index(b) for b in buttons)


@pytest.mark.parametrize(("action_set", "n"), [("essential8", 8), ("baseline7", 7)])
def test_each_action_sends_exactly_its_buttons_to_the_emulator(retro_env, action_set, n):
    assert retro_env.buttons == GENESIS  # the button order the paper lists (Section 3.7)
    recorder = ActionRecorder(retro_env)
    env = ButtonDiscretizer.from_spec(recorder, SONIC, action_set)
    assert env.action_space.n == n
    env.reset(seed=0)
    for action in range(n):
        env.step(action)
    combos = SONIC.action_sets[action_set]
    assert recorder.actions == [code(*combo) for combo in combos]
    # stable-retro's FILTERED action mode lets every combination through unchanged
    for action in range(n):
        vector = env.action(action)
        assert np.array_equal(retro_env.action_to_array(vector)[0], vector)


def test_the_emulator_responds_to_the_buttons(retro_env):
    env = ButtonDiscretizer(retro_env, combos=[[], ["LEFT"], ["RIGHT"]])
    screens = []
    for action in (0, 1, 2):
        env.reset(seed=0)
        for _ in range(90):
            obs = env.step(action)[0]
        screens.append(obs)
    assert not np.array_equal(screens[1], screens[2])  # the ship went left vs right
    assert not np.array_equal(screens[0], screens[2])


def test_in_the_sonic_stack_the_sticky_skip_plays_the_discretized_vectors(retro_env):
    recorder = ActionRecorder(retro_env)
    env = ButtonDiscretizer.from_spec(StickyFrameSkip(recorder), SONIC, "essential8")
    env.reset(seed=0)
    env.step(6)  # DOWN + B
    assert recorder.actions == [code("DOWN", "B")] * 4


def test_the_meanings_and_the_table_are_readable_not_writable(retro_env):
    env = ButtonDiscretizer.from_spec(retro_env, SONIC)  # the spec's default: essential8
    assert env.get_action_meanings() == [
        "NOOP",
        "LEFT",
        "RIGHT",
        "LEFT+DOWN",
        "RIGHT+DOWN",
        "DOWN",
        "DOWN+B",
        "B",
    ]
    assert button_code(env.action(3)) == code("LEFT", "DOWN")
    with pytest.raises(ValueError):
        env.action(3)[0] = 1


def test_explicit_buttons_work_for_any_multibinary_env(retro_env):
    env = ButtonDiscretizer(retro_env, combos=[["X"]], buttons=list("abcdefghijkX"))
    assert button_code(env.action(0)) == 1 << 11


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"combos": [["RIGTH"]]},
            "`combos` must name buttons of ['B', 'A', 'MODE', 'START', 'UP', "
            "'DOWN', 'LEFT', 'RIGHT', 'C', 'Y', 'X', 'Z'], got 'RIGTH'. Did you mean: 'RIGHT'?",
        ),
        ({"combos": []}, "`combos` must be a non-empty list of button lists, got []"),
        ({"combos": ["LEFT"]}, "`combos` must hold lists of button names, got 'LEFT'"),
        (
            {"combos": [["B"]], "buttons": ["B"]},
            "`env` must have a MultiBinary(1) action space, got MultiBinary(12)",
        ),
    ],
)
def test_bad_arguments_are_named(retro_env, kwargs, message):
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        ButtonDiscretizer(retro_env, **kwargs)


def test_bad_actions_and_envs_are_named(retro_env):
    env = ButtonDiscretizer(retro_env, combos=[[], ["B"]])
    for action in (2, -1, 1.0):
        with pytest.raises(
            InvalidArgument,
            match=re.escape(f"`action` must be an integer in [0, 2), got {action!r}"),
        ):
            env.action(action)
    atari = AtariEnv("pong")
    try:
        with pytest.raises(InvalidArgument, match=re.escape("`buttons` must be given")):
            ButtonDiscretizer(atari, combos=[[]])
    finally:
        atari.close()
    with pytest.raises(
        InvalidArgument,
        match=re.escape("`action_set` must be one of ['baseline7', 'essential8'], got 'all'"),
    ):
        ButtonDiscretizer.from_spec(retro_env, SONIC, "all")
