"""Test helpers for the wrapper tests: recorders, injectors, scripted RAM traces, a Lua-driven
contest integration on Airstriker, and a test-only registered retro id.

Nothing here mocks ale-py or stable-retro: the recorders and injectors wrap real emulators, the
``TraceEnv`` is a scripted stand-in for a Sonic ROM's RAM variables (no Sonic ROM ships), and
``contest_airstriker`` runs stable-retro's own contest ``script.lua`` on the bundled Airstriker
ROM, with the Sonic RAM variables mapped to RAM bytes that Airstriker never touches.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.envs.sonic import progress_reward
from arcadebench.wrappers import ButtonDiscretizer, StickyFrameSkip, TimeLimit

RETRO_DATA = Path(__import__("stable_retro").__file__).parent / "data" / "stable"
SONIC_GAMES = ("SonicTheHedgehog-Genesis", "SonicTheHedgehog2-Genesis", "SonicAndKnuckles3-Genesis")
# Airstriker's 64 KiB of work RAM starts at 0xFF0000; from 0x8000 on it stays untouched (checked
# over 3,000 frames of random play), so the Sonic variables can live there.
FREE_RAM = 0xFF0000 + 0x8000
AIRSTRIKER_ID = "arcadebench-test/Airstriker-v0"


def button_code(action: np.ndarray) -> int:
    """A MultiBinary button vector as an int (bit i = button i)."""
    return int(np.dot(np.asarray(action, dtype=np.int64), 1 << np.arange(len(action))))


class ActionRecorder(gym.Wrapper):
    """Records every action that reaches the wrapped env, and the step's end flags."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.actions: list[Any] = []
        self.ends: list[bool] = []

    def step(self, action):
        self.actions.append(button_code(action) if isinstance(action, np.ndarray) else action)
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.ends.append(bool(terminated or truncated))
        return obs, reward, terminated, truncated, info


class RewardInjector(gym.Wrapper):
    """Replaces the reward of the given steps (counted from reset, 0-based) by given values."""

    def __init__(self, env: gym.Env, rewards: Mapping[int, float]) -> None:
        super().__init__(env)
        self._rewards = dict(rewards)
        self._step = 0

    def reset(self, **kwargs):
        self._step = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        reward = self._rewards.get(self._step, reward)
        self._step += 1
        return obs, reward, terminated, truncated, info


class TraceEnv(gym.Env):
    """Plays a scripted trace of RAM variables: reset returns ``reset_ram``, step i ``frames[i]``.

    It stands for a Sonic ROM's RAM (x, zone, act, lives, screen_x, ...) as stable-retro reports
    it in ``info``; it never terminates by itself.
    """

    observation_space = gym.spaces.Discrete(1)
    action_space = gym.spaces.Discrete(1)

    def __init__(self, reset_ram: Mapping[str, int], frames: Sequence[Mapping[str, int]]) -> None:
        self._reset_ram = dict(reset_ram)
        self._frames = [dict(reset_ram) | dict(f) for f in frames]
        self._i = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._i = 0
        return 0, dict(self._reset_ram)

    def step(self, action):
        info = dict(self._frames[self._i])
        self._i += 1
        return 0, 0.0, False, False, info


def run_trace(
    env: gym.Env, steps: int | None = None
) -> tuple[list[float], bool, dict[str, Any], int]:
    """Reset, step until the end (or ``steps``): (rewards, terminated, last info, steps)."""
    env.reset(seed=0)
    rewards, terminated, info, n = [], False, {}, 0
    while steps is None or n < steps:
        _, reward, terminated, truncated, info = env.step(0)
        rewards.append(float(reward))
        n += 1
        if terminated or truncated:
            break
    return rewards, terminated, info, n


# --- stable-retro's contest script.lua, run on Airstriker -----------------------------------------


def level_max_x(game: str) -> dict[tuple[int, int], int]:
    """``level_max_x`` parsed from the installed contest ``script.lua`` of ``game``."""
    text = (RETRO_DATA / f"{game}-v0" / "script.lua").read_text()
    table = text[text.index("level_max_x = {") : text.index("}")]
    table = "\n".join(line.split("--")[0] for line in table.splitlines())  # drop comments
    entries = re.findall(r'\["zone=(\d+),act=(\d+)"\]\s*=\s*([0-9A-Fa-fx+\s]+),', table)
    # a value may be a sum, e.g. Angel Island Act 1: 0x3080 + 0x1049
    return {(int(z), int(a)): sum(int(t, 0) for t in x.split("+")) for z, a, x in entries}


def write_contest_integration(game: str, directory: Path) -> Path:
    """Copy ``game``'s contest scenario and script.lua to ``directory``, with a data.json that puts
    each of its RAM variables (same types) in Airstriker's free RAM. Returns the directory."""
    source = RETRO_DATA / f"{game}-v0"
    directory.mkdir(parents=True, exist_ok=True)
    variables = json.loads((source / "data.json").read_text())["info"]
    remapped = {
        name: {"address": FREE_RAM + 4 * i, "type": spec["type"]}
        for i, (name, spec) in enumerate(sorted(variables.items()))
    }
    (directory / "data.json").write_text(json.dumps({"info": remapped}))
    shutil.copy(source / "contest.json", directory / "contest.json")
    shutil.copy(source / "script.lua", directory / "script.lua")
    return directory


class RamWriter(gym.Wrapper):
    """Writes a trace of RAM variables into the emulator before each frame (stable-retro only)."""

    def __init__(self, env: gym.Env, frames: Sequence[Mapping[str, int]]) -> None:
        super().__init__(env)
        self._frames = list(frames)
        self._i = 0

    def reset(self, **kwargs):
        self._i = 0
        return self.env.reset(**kwargs)

    def step(self, action):
        for name, value in self._frames[self._i].items():
            self.env.unwrapped.data.set_value(name, int(value))
        self._i += 1
        return self.env.step(action)


def contest_airstriker(game: str, directory: Path, reset_ram: Mapping[str, int]) -> gym.Env:
    """Airstriker running ``game``'s contest scenario (its Lua reward/done), starting every episode
    from a save state whose RAM holds ``reset_ram``. The caller must close it."""
    import stable_retro

    write_contest_integration(game, directory)
    env = stable_retro.make(
        "Airstriker-Genesis-v0",
        render_mode=None,
        info=str(directory / "data.json"),
        scenario=str(directory / "contest.json"),
    )
    try:
        retro_env = env.unwrapped
        retro_env.reset()
        for name, value in reset_ram.items():
            retro_env.data.set_value(name, int(value))
        retro_env.initial_state = retro_env.em.get_state()
    except Exception:
        env.close()
        raise
    return env


class InnerReward(gym.Wrapper):
    """Copies the wrapped env's reward and done into ``info["inner"]`` (to compare with Lua)."""

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        info["inner"] = (float(reward), bool(terminated))
        return obs, reward, terminated, truncated, info


# --- a test-only registered retro id: Airstriker with the Sonic protocol's retro wrappers ---------


def make_airstriker(
    step_limit: int = 4500, action_set: str = "essential8", contest_dir: str | None = None
) -> gym.Env:
    """Airstriker (headless) → [SonicProgressReward] → StickyFrameSkip(4, 0.25) → ButtonDiscretizer
    → TimeLimit: the Sonic protocol's order. With ``contest_dir``, Airstriker runs Sonic 1's contest
    scenario (its RAM variables in free RAM, Sonic at x = 0x200 of Green Hill Act 1) and the
    progress reward is computed on it."""
    import stable_retro

    if contest_dir is None:
        env = stable_retro.make("Airstriker-Genesis-v0", render_mode=None)
    else:
        game = "SonicTheHedgehog-Genesis"
        env = contest_airstriker(
            game, Path(contest_dir), {"x": 0x200, "zone": 0, "act": 0, "lives": 3}
        )
        env = progress_reward(env, "sonic", game)
    env = StickyFrameSkip(env, n=4, stickprob=0.25)
    env = ButtonDiscretizer.from_spec(env, "sonic", action_set)
    # (not named max_episode_steps: gym.make would take that kwarg for its own TimeLimit)
    return TimeLimit(env, max_episode_steps=step_limit)


def register_airstriker() -> str:
    """Register :data:`AIRSTRIKER_ID` (idempotent) and return it."""
    if AIRSTRIKER_ID not in gym.registry:
        gym.register(AIRSTRIKER_ID, entry_point=f"{__name__}:make_airstriker")
    return AIRSTRIKER_ID
