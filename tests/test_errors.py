"""Errors and warnings speak to the user: warnings name the user's line, not a library's."""

from __future__ import annotations

import warnings

import gymnasium as gym

import arcadebench
from arcadebench.errors import NonCompliantWarning
from arcadebench.wrappers import monitor as monitor_module


def test_a_deviation_warns_at_the_users_gym_make_line_not_inside_gymnasium(monkeypatch):
    monkeypatch.setattr(monitor_module, "_UNLOGGED_WARNED", set())  # it warns once a process
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        env = gym.make("arcadebench/SABER-Pong-v0", repeat_action_probability=0.0)  # this line
        env.reset(seed=0)  # and the unlogged training protocol's warning: this one
        env.close()
    deviation = next(w for w in caught if issubclass(w.category, NonCompliantWarning))
    unlogged = next(w for w in caught if "keeps no log" in str(w.message))
    assert deviation.filename == unlogged.filename == __file__
    assert unlogged.lineno == deviation.lineno + 1


def test_a_deviation_of_make_vec_warns_at_the_caller():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        envs = arcadebench.make_vec("saber", "pong", 2, frameskip=5, log_dir=False)
        envs.close()
    (warning,) = [w for w in caught if issubclass(w.category, NonCompliantWarning)]
    assert warning.filename == __file__
