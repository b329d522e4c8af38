"""Play a recorded episode again in the spec's emulator, with the settings its log names.

The environment is rebuilt from the log's header (its spec, and every setting it was played
with, deviations included, so a deviation is re-created, never forgiven) with a monitor that
logs nothing: what it counts of the replayed episode (return, steps, frames, end reason) is
computed exactly as the original's was. An episode starts as its recording says
(:mod:`arcadebench.records.replay_format`): reset with its seed, reset from the snapshot taken
before its reset, or going on from the previous episode of its stream, which must have been
replayed just before in the same environment. Each step's reward is compared with the
recording's, and the emulator's state with the recording's digests of it (after the reset,
every ``every`` steps, after the last step), so the first step where the emulator departs from
the recording is known, also where the rewards happen to agree.

Whatever the recording holds, playing it raises nothing but :class:`Unreplayable` (an action
outside the environment's action space, a seed or snapshot the environment refuses): the
recording is someone else's input.

Classes: Outcome, Player.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from arcadebench.errors import ArcadebenchError, Unreplayable, first_line
from arcadebench.records.replay_format import ENGINES, Digests, Replay
from arcadebench.specs import Spec
from arcadebench.wrappers.recording import (
    observation_digest,
    restore_snapshot,
    state_digest_reader,
)

__all__ = ["Outcome", "Player"]

Frame = Callable[[Any, int, float, dict[str, Any]], None]
"""Called after the reset and after every step with ``(observation, step, return so far, info)``."""


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
        obs_type: the observations to render (``None``: the cheapest that gives the
            recordings' digests, for verifying).
        digests: the kind of digests the recordings carry (their ``obs_type`` is rendered).

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
        digests: Digests | None = None,
    ) -> None:
        from arcadebench.benchmarks.envs import make, make_vec

        if spec.platform == "atari":  # a replay prints no emulator banner
            from ale_py import ALEInterface, LoggerMode

            ALEInterface.setLoggerMode(LoggerMode.Error)
        settings = dict(header.get("settings") or {})
        game = str(header.get("game", ""))
        self.vector = engine == ENGINES[1]
        self.obs_type = (digests.obs_type if digests is not None else None) or "standard"
        options: dict[str, Any] = {"log_dir": False, "record_actions": False}
        if spec.platform == "atari":
            options["obs_type"] = obs_type or (self.obs_type if self.vector else "ram")
        if header.get("phase") == "evaluation" and not self.vector:
            options["phase"] = "evaluation"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run's deviations: recreated on purpose
            if self.vector:
                self.env: Any = make_vec(spec, game, 1, **options, **settings)
            else:
                self.env = make(spec, game, **options, **settings)
        self._ram_digest = None if self.vector else state_digest_reader(self.env)
        # a batch rendering other observations than the recorded ones cannot check their digests
        self._obs_digests = self.vector and options.get("obs_type") == self.obs_type
        space = self.env.single_action_space if self.vector else self.env.action_space
        self._actions = int(space.n) if isinstance(space, gym.spaces.Discrete) else None
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
            Unreplayable: a start this player cannot take (``unknown``, ``continues`` when its
                previous episode was not replayed just before, a seed or snapshot the
                environment refuses), or an action outside its action space.
        """
        self._check_actions(replay.actions)
        obs = self._start(replay.start, previous)
        if on_frame is not None:
            on_frame(obs, 0, 0.0, {})
        witness = _Witness(replay, self._digest)
        witness.reset(obs)
        total, ended = 0.0, None
        info: dict[str, Any] = {}
        count = len(replay.actions)
        played = 0
        for played, action in enumerate(replay.actions, start=1):
            obs, reward, terminated, truncated, info = self._step(action)
            total += reward
            over = terminated or truncated
            witness.step(played, reward, self._final(obs, info) if over else obs)
            if on_frame is not None:
                on_frame(obs, played, total, info)
            if over:
                ended = self._first(info.get("arcadebench", {}).get("end_reason"))
                if played < count:
                    witness.depart(
                        played,
                        f"the episode ended there ({ended}), the recording goes on to step {count}",
                    )
                break
        witness.end(played, self._final(obs, info) if ended is not None else obs)
        self._replayed = True
        return Outcome(
            total, played, self._frames(info, ended is not None), ended, witness.departed
        )

    # -- starting, stepping: one environment or a batch of one ----------------------------------
    def _check_actions(self, actions: np.ndarray) -> None:
        """Refuse actions the environment's action space does not have (before playing)."""
        if self._actions is None or not len(actions):
            return
        if actions.ndim != 1 or actions.dtype.kind not in "iu":
            raise Unreplayable(
                f"the recorded actions are {actions.dtype} of shape {actions.shape[1:]}, the "
                f"environment takes one integer a step"
            )
        outside = np.flatnonzero((actions < 0) | (actions >= self._actions))
        if len(outside):
            step = int(outside[0])
            raise Unreplayable(
                f"action {int(actions[step])} at step {step + 1} is outside the environment's "
                f"{self._actions} actions: the recording is not of these settings"
            )

    def _start(self, start: Mapping[str, Any], previous: str | None) -> Any:
        env = self.env
        try:
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
                raise Unreplayable(f"the episode cannot be replayed: {what}")
        except ArcadebenchError:
            raise
        except Exception as error:  # a seed or snapshot the emulator refuses, whatever it raises
            kind = next(iter(start), "start")
            raise Unreplayable(
                f"the environment refuses the recorded {kind}: {type(error).__name__}: "
                f"{first_line(error)}"
            ) from None
        self._last_obs = obs
        return obs

    def _step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self.vector:
            obs, reward, terminated, truncated, info = self.env.step(action)
            return obs, float(reward), bool(terminated), bool(truncated), info
        obs, rewards, terminated, truncated, info = self.env.step(np.asarray([action]))
        self._last_obs = obs
        return obs, float(rewards[0]), bool(terminated[0]), bool(truncated[0]), info

    def _digest(self, obs: Any) -> int | None:
        """The digest of the state the last reset or step left (as the monitors took it)."""
        if self._ram_digest is not None:
            return self._ram_digest()
        if self._obs_digests:
            return observation_digest(np.asarray(obs)[0], self.obs_type)
        return None

    def _final(self, obs: Any, info: dict[str, Any]) -> Any:
        """The observation an episode ended on (a batch reset it in the same step)."""
        if self.vector and "final_obs" in info:
            return info["final_obs"]
        return obs

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


class _Witness:
    """What a replayed episode is compared with as it goes: the recorded rewards and digests.

    The first departure is kept: a reward other than the recording's, or an emulator state
    whose digest is not the recording's (after the reset, every ``every`` steps, after the
    last step).
    """

    def __init__(self, replay: Replay, digest: Callable[[Any], int | None]) -> None:
        self.departed: tuple[int, str] | None = None
        self._steps = replay.reward_steps
        self._rewards = replay.rewards
        self._next = 0  # the next rewarded step's position in the trail
        self._digest = digest
        digests = replay.digests
        self._every = digests.every if digests is not None else 0
        self._values = digests.values.tolist() if digests is not None else []
        self._at_end = digests is not None and digests.end
        self._seen = 0  # digests compared so far

    def depart(self, step: int, what: str) -> None:
        """Keep the first departure."""
        if self.departed is None:
            self.departed = (step, what)

    def reset(self, obs: Any) -> None:
        """The state after the reset."""
        if self._values:
            self._compare(0, obs)

    def step(self, played: int, reward: float, obs: Any) -> None:
        """The reward of step ``played`` (1-based) and the state it left."""
        recorded = 0.0
        position = self._next
        if position < len(self._steps) and self._steps[position] == played - 1:
            recorded = float(self._rewards[position])
            self._next += 1
        if reward != recorded:
            self.depart(
                played, f"the emulator's reward is {reward:g}, the recording's {recorded:g}"
            )
        if self._every and not played % self._every:
            self._compare(played, obs)

    def end(self, played: int, obs: Any) -> None:
        """The state after the last step played."""
        if self._at_end:
            self._compare(played, obs)

    def _compare(self, played: int, obs: Any) -> None:
        if self._seen >= len(self._values) or self.departed is not None:
            self._seen += 1
            return
        recorded = self._values[self._seen]
        self._seen += 1
        found = self._digest(obs)
        if found is not None and found != recorded:
            where = "after the reset" if played == 0 else f"after step {played}"
            self.depart(
                played,
                f"the emulator's state {where} is not the recording's (digest {found:02x}, "
                f"recorded {recorded:02x}): it was played under other settings or actions",
            )
