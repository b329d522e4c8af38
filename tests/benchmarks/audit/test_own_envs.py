"""Every arcadebench env matches its own spec when audited like a foreign env, and envs whose
settings claim sticky actions while something else plays are caught: a wrapper that replaces
ALE's per-frame sticky actions with per-step ones (Gymnasium's ``StickyAction``) differs, one
that keeps the previous action frame by frame before the emulator (stable-baselines3's
``StickyActionEnv``) matches."""

from __future__ import annotations

import gymnasium as gym
import pytest
from gymnasium.wrappers import StickyAction

import arcadebench
from arcadebench.specs import load_spec

ATARI = [name for name in arcadebench.list_specs() if load_spec(name).platform == "atari"]
CHEAP = {"frames": 600, "cap_frames": 200}  # the random agent's ~90 distinguishable frames


@pytest.mark.parametrize("name", ATARI)
def test_every_arcadebench_env_matches_its_own_spec(name):
    env_id = arcadebench.env_id(name, "breakout")  # a random agent loses lives at once
    report = arcadebench.audit(env_id, {"log_dir": False}, spec=name, **CHEAP)
    assert report.exit_status == 0, report.table()
    assert report.subject.differs == []
    assert report.measured == "emulator"
    training = load_spec(name).environment.life_loss_terminal_in_training
    assert report.subject.phase == ("training" if training else None)
    life = report.property("life information").value
    assert not life["lives_in_info"] and life["lost"] >= 1
    assert report.property("frame skip").value == [load_spec(name).environment.frameskip]


def test_dqn_evaluation_env_matches_dqn_as_its_evaluation_env():
    env_id = arcadebench.env_id("dqn2015", "breakout")
    kwargs = {"log_dir": False, "phase": "evaluation"}
    report = arcadebench.audit(env_id, kwargs, spec="dqn2015", **CHEAP)
    assert report.exit_status == 0 and report.subject.phase == "evaluation"
    assert report.property("life information").cell == "game over only"


class PerStepSticky(gym.Wrapper):
    """A wrapper that replaces ALE's sticky actions with its own, decided per agent step."""

    def __init__(self, env, probability):
        env.unwrapped.ale.setFloat("repeat_action_probability", 0.0)
        env.unwrapped.load_game()  # the emulator's own sticky actions are off from here on
        super().__init__(StickyAction(env, probability))


def test_sticky_actions_claimed_in_the_spec_kwargs_but_replaced_by_a_wrapper_are_caught():
    env = PerStepSticky(gym.make("ALE/Assault-v5", full_action_space=True), 0.25)
    assert env.unwrapped.spec.kwargs["repeat_action_probability"] == 0.25  # the claim
    report = arcadebench.audit(env, spec="saber", **CHEAP)
    sticky = report.property("sticky actions")
    assert sticky.value["per_step"] and sticky.cell.startswith("per agent step, p = ")
    assert "in the emulator: p = 0.00" in sticky.evidence
    verdict = report.subject.verdicts["sticky actions"]
    assert verdict.status == "differs"
    assert verdict.note == "the previous action kept for whole agent steps, not frame by frame"
    assert report.exit_status == 1
    env.close()


def test_sticky_actions_played_frame_by_frame_before_the_emulator_match_the_rule():
    kwargs = {
        "env_id": "AssaultNoFrameskip-v4",
        "n_envs": 1,
        "seed": 0,
        "wrapper_kwargs": {"action_repeat_probability": 0.25},
    }
    report = arcadebench.audit(
        "stable_baselines3.common.env_util:make_atari_env", kwargs, spec="saber", **CHEAP
    )
    sticky = report.property("sticky actions")
    assert not sticky.value["per_step"] and sticky.value["low"] <= 0.25 <= sticky.value["high"]
    assert "before it: " in sticky.evidence
    assert report.subject.verdicts["sticky actions"].status == "ok"
