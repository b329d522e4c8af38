"""Play a recorded episode again in the spec's emulator, with the settings its log names.

The environment is rebuilt from the log's header (its spec, and every setting it was played
with, deviations included, so a deviation is re-created, never forgiven) with a monitor that
logs nothing: what it counts of the replayed episode (return, steps, frames, end reason) is
computed exactly as the original's was. An episode starts as its recording says
(:mod:`arcadebench.records.replay_format`): reset with its seed, reset from the snapshot taken
before its reset, or going on from the previous episode of its stream, which must have been
replayed just before in the same environment. Each step's reward is compared with the
recording's, so the first step where the emulator departs from it is known.

Classes: Outcome, Player.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from arcadebench.errors import ArcadebenchError
from arcadebench.records import Replay
from arcadebench.specs import Spec
from arcadebench.wrappers.recording import restore_snapshot

__all__ = ["Outcome", "Player"]

Frame = Callable[[Any, int, float, dict[str, Any]], None]
"""Called after the reset and after every step: ``(observation, step, return so far, info)``."""


@dataclass(frozen=True)
class Outcome:
    """What replaying an episode gave.

    Attributes:
        episode_return: the protocol return.
        steps: the steps played.
        frames: the emulator frames, as the monitor counts them.
        end_reason: why it ended (``None``: the recorded actions ran out before it ended).
        departed: the first step (1-based) where the emulator departed from the recording, and
            how; ``None`` if it never did.
    """

    episode_return: float
    steps: int
    frames: int
    end_reason: str | None
    departed: tuple[int, str] | None


class Player:
    """One environment of a recorded run's settings, to replay its episodes one after another.

    Args:
        spec: the run's protocol.
        header: the run's log header (its game, settings and phase).
        engine: ``"single"``, or ``"ale-vector"`` (a stream of ale-py's batched emulator).
        obs_type: the observations to render (``None``: the cheapest, for verifying).

    Raises:
        ArcadebenchError: the header cannot rebuild an environment (another game, a setting
            outside its rule).
    """

    def __init__(
        self,
        spec: Spec,
        header: Mapping[str, Any],
        engine: str = "single",
        obs_type: str | None = None,
    ) -> None:
        from arcadebench.benchmarks.envs import make, make_vec

        if spec.platform == "atari":  # a replay prints no emulator banner
            from ale_py import ALEInterface, LoggerMode

            ALEInterface.setLoggerMode(LoggerMode.Error)
        settings = dict(header.get("settings") or {})
        game = str(header.get("game", ""))
        self.vector = engine == "ale-vector"
        options: dict[str, Any] = {"log_dir": False, "record_actions": False}
        if spec.platform == "atari":
            options["obs_type"] = obs_type or ("standard" if self.vector else "ram")
        if header.get("phase") == "evaluation" and not self.vector:
            options["phase"] = "evaluation"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run's deviations: recreated on purpose
            if self.vector:
                self.env: Any = make_vec(spec, game, 1, **options, **settings)
            else:
                self.env = make(spec, game, **options, **settings)
        self._replayed = False  # an episode was replayed: one that continues it can start
        self._last_obs: Any = None

    def close(self) -> None:
        """Close the environment."""
        self.env.close()

    def play(
        self, replay: Replay, previous: str | None = None, on_frame: Frame | None = None
    ) -> Outcome:
        """Replay one episode from where its recording says it started.

        ``previous`` is how the stream's previous episode ended, as its log line says (an
        episode that ``continues`` goes on from it: after the reset a batched emulator already
        made in the step that ended it, or after an explicit reset).

        Raises:
            ArcadebenchError: a start this player cannot take (``unknown``, or ``continues``
                when its previous episode was not replayed just before).
        """
        obs = self._start(replay.start, previous)
        if on_frame is not None:
            on_frame(obs, 0, 0.0, {})
        expected = dict(zip(replay.reward_steps.tolist(), replay.rewards.tolist(), strict=True))
        total, departed, ended = 0.0, None, None
        info: dict[str, Any] = {}
        count = len(replay.actions)
        played = 0
        for step, action in enumerate(replay.actions):
            obs, reward, terminated, truncated, info = self._step(action)
            played = step + 1
            total += reward
            if departed is None and reward != expected.get(step, 0.0):
                departed = (
                    played,
                    f"the emulator's reward is {reward:g}, the recording's "
                    f"{expected.get(step, 0.0):g}",
                )
            if on_frame is not None:
                on_frame(obs, played, total, info)
            if terminated or truncated:
                ended = self._first(info.get("arcadebench", {}).get("end_reason"))
                if played < count and departed is None:
                    departed = (
                        played,
                        f"the episode ended there ({ended}), the recording goes on to step {count}",
                    )
                break
        self._replayed = True
        return Outcome(total, played, self._frames(info, ended is not None), ended, departed)

    # -- starting, stepping: one environment or a batch of one ----------------------------------
    def _start(self, start: Mapping[str, Any], previous: str | None) -> Any:
        env = self.env
        if "seed" in start:
            seed = int(start["seed"])
            obs, _ = env.reset(seed=[seed] if self.vector else seed)
        elif "snapshot" in start and not self.vector:
            restore_snapshot(env, dict(start["snapshot"]))
            obs, _ = env.reset()
        elif "continues" in start and self._replayed:
            if self.vector and previous not in (None, "reset", "budget"):
                return self._last_obs  # the batch reset it in the step that ended the episode
            obs, _ = env.reset()
        else:
            what = start.get("unknown", "its previous episode was not replayed first")
            raise ArcadebenchError(f"the episode cannot be replayed: {what}")
        self._last_obs = obs
        return obs

    def _step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self.vector:
            obs, reward, terminated, truncated, info = self.env.step(action)
            return obs, float(reward), bool(terminated), bool(truncated), info
        obs, rewards, terminated, truncated, info = self.env.step(np.asarray([action]))
        self._last_obs = obs
        return obs, float(rewards[0]), bool(terminated[0]), bool(truncated[0]), info

    def _first(self, value: Any) -> Any:
        """A value of this env's, from a single env's info or a batch of one's."""
        if self.vector and value is not None:
            return np.asarray(value, dtype=object).reshape(-1)[0]
        return value

    def _frames(self, info: dict[str, Any], ended: bool) -> int:
        """The episode's frames as its monitor counted them (its summary, where it ended)."""
        summary = self._first(info.get("arcadebench", {}).get("episode")) if ended else None
        if summary is not None:
            return int(summary["frames"])
        return int(np.asarray(info.get("episode_frame_number", 0)).reshape(-1)[0])
