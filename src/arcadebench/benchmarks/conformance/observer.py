"""Per-step checks of an Atari protocol env: every rule its settings declare, on every step.

The checks are written again here from the papers, not imported from the wrappers that
implement the rules (:mod:`arcadebench.wrappers`), so that a bug in a wrapper cannot hide
itself. For each step of an episode, with the settings the env was made with:

- frame skip: ``info["episode_frame_number"]`` grows by exactly ``frameskip`` (Toromanoff et al.
  2019, Appendix B.1), except on the step that ends an episode, which may stop early;
- observation: the shape and dtype of the env's observation space;
- life information: no ``lives`` in ``info`` when ``life_information`` is false (SABER Table 1;
  Machado et al. 2018), and game-over-only termination: a step is terminated exactly when the
  emulator's game is over; lives lost earlier (read from the emulator) must not end the episode;
- the training life-loss signal (``life_loss_terminal_in_training``, DQN and Atari 100k), in the
  training environment only: a step that loses a life while the game goes on is terminated as
  ``"life_lost"``, and the next reset continues that game (same lives, same emulator frame);
- no-op starts: every reset that starts a game plays ``least..most`` NOOP frames through the
  emulator after ALE's own reset (Mnih et al. 2015, Methods), or none without the rule. They are
  counted as the env plays them, not from the frame number: ALE's reset plays the ROM's own
  starting actions, 156 frames in Name This Game and a varying number in Double Dunk under
  sticky actions;
- max stuck time: ``stuck_frames`` equals the frames since the last non-zero reward, and the
  episode is truncated as ``"stuck"`` on the first step whose count reaches the limit, neither
  earlier nor a step later (SABER Table 1: 18,000 frames);
- frame cap: the episode is truncated as ``"frame_limit"`` on the first step at or past the cap
  (HWR and Atari-5: 108,000 frames; SABER: 100 hours; DQN's evaluation: 18,000), never before.
  Both limits count the game's frames, read from the emulator: a learner's episode that a lost
  life ended does not restart them (Dopamine's runner caps the game, not the life);
- rollover guard: a reward below the threshold is corrected by exactly the correction and
  reported in ``rollover_rewards`` (SABER Appendix C as its authors ran it), and nothing else is;
- end reasons: every last step has one, no other step has one.

It also keeps what the check reports: rewards seen, lives lost, how episodes ended, and a digest
of the observations and rewards (the determinism rule compares two digests).

Classes: EpisodeObserver.
"""

from __future__ import annotations

import hashlib
import struct
from collections import Counter
from typing import Any

import numpy as np
from ale_py import Action

from arcadebench.benchmarks.conformance.action_recorder import ActionRecorder

__all__ = ["PENALTY_FLAG", "WRAP_FLAG", "EpisodeObserver"]

PENALTY_FLAG = -1_000.0
"""A reward below this that is not a rollover is flagged; SABER Appendix C says none exists."""
WRAP_FLAG = -900_000.0
"""A corrected rollover whose reward is above this is flagged; a six-digit score counter that
wraps reports about -1,000,000 (SABER Appendix C; the authors' code uses this bound)."""


class EpisodeObserver:
    """Checks every step of one env against the settings it should obey.

    Args:
        settings: the env's ``AtariSettings`` fields (the spec's, or deliberately scaled ones).
        env: the env being played (its observation space and its emulator, for lives and game
            over).
        digest_frames: keep a digest of the run's first ``digest_frames`` frames for the
            determinism rule (SHA-256 of every observation, reward and boundary of the steps and
            resets that begin before them; ``None``: the whole run; 0: no digest, for runs that
            are not compared, as hashing costs a third of a frame's emulation per step).
        phase: the environment played, ``"training"`` or ``"evaluation"``: the life-loss signal
            of ``life_loss_terminal_in_training`` belongs to the training one only.

    The observer records the actions the env plays through its emulator (it stands in for
    ``env.unwrapped.ale`` until :meth:`close`), to count the no-op frames of each reset.
    """

    def __init__(
        self,
        settings: dict[str, Any],
        env: Any,
        digest_frames: int | None = None,
        phase: str = "training",
    ) -> None:
        self.settings = settings
        self._life_ends = bool(settings.get("life_loss_terminal_in_training")) and (
            phase == "training"
        )
        self._env = env
        self._played = ActionRecorder(env.unwrapped.ale)
        env.unwrapped.ale = self._played
        space = env.observation_space
        self._shape, self._dtype = tuple(space.shape), np.dtype(space.dtype)
        self.violations: dict[str, list[str]] = {}
        self.counts: Counter[str] = Counter()
        self.end_reasons: Counter[str] = Counter()
        self.flags: dict[str, list[float]] = {"penalty": [], "rollover": []}
        self.steps = self.frames = self.lives_lost = self.life_ends = 0
        self.starts: list[int] = []  # the no-op frames of every reset that starts a game
        self.most_lives = 0  # 0: a game without a life counter (Pong, Boxing)
        self.reward_min: float | None = None
        self.reward_max: float | None = None
        self.rewarded = False
        self.stuck_ends: list[int] = []
        self.stuck_max = 0
        self.cap_ends: list[int] = []
        self._digest = hashlib.sha256() if digest_frames != 0 else None
        self._digest_frames = digest_frames
        self.digested_steps = 0
        self._frame = self._last_reward = self._lives = self._game_frame = 0
        self._continues = False  # the last episode ended at a lost life: the game goes on

    # -- recording --------------------------------------------------------------------------
    def _violation(self, rule: str, message: str) -> None:
        self.counts[rule] += 1
        if len(self.violations.setdefault(rule, [])) < 3:
            self.violations[rule].append(message)

    def close(self) -> None:
        """Give the env its emulator back."""
        self._env.unwrapped.ale = self._played.emulator

    @property
    def digest(self) -> str | None:
        """Hex digest of every observation, reward and episode boundary seen so far."""
        return None if self._digest is None else self._digest.hexdigest()

    def _hashing(self) -> bool:
        """Whether what begins now goes into the digest."""
        limit = self._digest_frames
        return self._digest is not None and (limit is None or self.frames < limit)

    def _observe(self, obs: Any, hashing: bool) -> None:
        array = np.asarray(obs)
        if array.shape != self._shape or array.dtype != self._dtype:
            self._violation(
                "observation",
                f"an observation of shape {array.shape} and dtype {array.dtype}, the space "
                f"says {self._shape} and {self._dtype}",
            )
        if hashing and self._digest is not None:
            self._digest.update(np.ascontiguousarray(array).data)

    def _life_information(self, info: dict[str, Any]) -> None:
        if self.settings["life_information"] != ("lives" in info):
            shown = "shows" if "lives" in info else "hides"
            self._violation("life_information", f"info {shown} 'lives'")

    def reset(self, obs: Any, info: dict[str, Any]) -> None:
        """Record the first observation of an episode."""
        self._observe(obs, self._hashing())
        self._life_information(info)
        self._frame = int(info.get("episode_frame_number", 0))
        lives, game_frame = int(self._played.lives()), int(self._played.getEpisodeFrameNumber())
        if self._continues:
            if (lives, game_frame) != (self._lives, self._game_frame):
                self._violation(
                    "life_loss",
                    f"the reset after a lost life restarted the game ({self._lives} -> {lives} "
                    f"lives, frame {self._game_frame:,} -> {game_frame:,})",
                )
        else:
            self._no_op_start()
            self._last_reward = game_frame
        self._played.actions.clear()
        self._continues = False
        self._lives, self._game_frame = lives, game_frame
        self.most_lives = max(self.most_lives, lives)
        if info.get("arcadebench", {}).get("end_reason") is not None:
            self._violation("end_reason", "a reset's info has an end reason")

    def _no_op_start(self) -> None:
        played = self._played.actions
        self.starts.append(len(played))
        declared = self.settings.get("noop_starts")
        least, most = declared if declared is not None else (0, 0)
        if not least <= len(played) <= most:
            expected = "none" if declared is None else f"{least}-{most}"
            self._violation(
                "noop_starts",
                f"a reset played {len(played)} frames after ALE's own, declared {expected}",
            )
        others = sorted({action.name for action in played if action != Action.NOOP})
        if others:
            self._violation("noop_starts", f"a reset played {', '.join(others)}, not only NOOP")

    def step(
        self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        """Check one step (call right after ``env.step``)."""
        reward = float(reward)
        extra = info.get("arcadebench", {})
        reason = extra.get("end_reason")
        ended = bool(terminated or truncated)
        frame = int(info.get("episode_frame_number", -1))
        if frame < 0:
            self._violation("frameskip", "info has no 'episode_frame_number'")
            frame = self._frame + self.settings["frameskip"]
        hashing = self._hashing()
        self.steps += 1
        self._played.actions.clear()
        self._frames(frame, ended)
        self._observe(obs, hashing)
        self._life_information(info)
        self._game_frame = game_frame = int(self._played.getEpisodeFrameNumber())
        self._termination(terminated, truncated, reason, game_frame)
        self._rewards(reward, extra)
        if reward != 0:
            self._last_reward = game_frame
        self._stuck(game_frame, terminated, truncated, reason, extra)
        self._cap(game_frame, terminated, truncated, reason)
        if ended and reason is None:
            self._violation("end_reason", f"the episode ended at frame {frame} without a reason")
        if not ended and reason is not None:
            self._violation("end_reason", f"end reason {reason!r} at frame {frame}, mid-episode")
        if ended:
            self.end_reasons[str(reason)] += 1
        if hashing and self._digest is not None:
            self._digest.update(struct.pack("<d??q", reward, terminated, truncated, frame))
            self.digested_steps += 1

    # -- rules ------------------------------------------------------------------------------
    def _frames(self, frame: int, ended: bool) -> None:
        skip, delta = self.settings["frameskip"], frame - self._frame
        if delta != skip and not (ended and 0 < delta < skip):
            self._violation("frameskip", f"a step advanced {delta} frames (frame {frame})")
        self.frames += max(delta, 0)
        self._frame = frame

    def _termination(self, terminated: bool, truncated: bool, reason: Any, frame: int) -> None:
        ale = self._played
        game_over, lives = bool(ale.game_over(with_truncation=False)), int(ale.lives())
        # a life lost while the game goes on; a truncation on that step is that end instead
        lost = 0 < lives < self._lives and not game_over and not truncated
        if self._life_ends and lost:
            if not (terminated and reason == "life_lost"):
                self._violation(
                    "life_loss", f"a life was lost at frame {frame:,}, the episode went on"
                )
            self.life_ends += terminated
            self._continues = terminated
        elif terminated and not game_over:
            self._violation(
                "termination", f"terminated at frame {frame:,} without a game over ({lives} lives)"
            )
        elif terminated and reason != "game_over":
            self._violation("end_reason", f"terminated with end reason {reason!r}")
        if game_over and not terminated:
            self._violation("termination", f"the game was over at frame {frame:,}, not terminated")
        if not (terminated or truncated) and lives < self._lives:
            self.lives_lost += self._lives - lives
        self._lives = lives

    def _rewards(self, reward: float, extra: dict[str, Any]) -> None:
        self.reward_min = reward if self.reward_min is None else min(self.reward_min, reward)
        self.reward_max = reward if self.reward_max is None else max(self.reward_max, reward)
        self.rewarded = self.rewarded or reward != 0
        threshold = self.settings["rollover_threshold"]
        correction = self.settings["rollover_correction"]
        originals = extra.get("rollover_rewards")
        if originals is None:
            if threshold is not None and reward < threshold:
                self._violation("rollover", f"a reward of {reward:,.0f} was not corrected")
            if reward < PENALTY_FLAG:
                self.flags["penalty"].append(reward)
            return
        if threshold is None:
            self._violation("rollover", f"rollover_rewards {originals} without a rollover rule")
            return
        original = float(sum(originals))
        if not all(value < threshold for value in originals):
            self._violation(
                "rollover", f"{originals} reported as rollovers, above {threshold:,.0f}"
            )
        if reward != original + correction * len(originals):
            self._violation(
                "rollover", f"rollover {original:,.0f} became {reward:,.0f}, not +{correction:,.0f}"
            )
        self.flags["rollover"] += [float(v) for v in originals if v > WRAP_FLAG]

    def _stuck(
        self, frame: int, terminated: bool, truncated: bool, reason: Any, extra: dict[str, Any]
    ) -> None:
        limit, cap = self.settings["max_stuck_frames"], self.settings["max_episode_frames"]
        if limit is None:
            if reason == "stuck" or "stuck_frames" in extra:
                self._violation("stuck", "the env applies a max stuck time the spec does not have")
            return
        stuck = frame - self._last_reward
        self.stuck_max = max(self.stuck_max, stuck)
        if extra.get("stuck_frames") != stuck:
            self._violation(
                "stuck",
                f"stuck_frames {extra.get('stuck_frames')!r} at frame {frame}, expected {stuck}",
            )
        due = stuck >= limit and not terminated and not (cap is not None and frame >= cap)
        if due and not (truncated and reason == "stuck"):
            self._violation(
                "stuck", f"{stuck:,} frames without reward at frame {frame:,} did not end it"
            )
        elif reason == "stuck" and stuck < limit:
            self._violation("stuck", f"ended as stuck after {stuck:,} frames without reward")
        elif reason == "stuck":
            self.stuck_ends.append(frame)

    def _cap(self, frame: int, terminated: bool, truncated: bool, reason: Any) -> None:
        cap = self.settings["max_episode_frames"]
        if cap is None:
            if reason == "frame_limit":
                self._violation("frame_limit", "a frame cap ended an episode; the spec has none")
            return
        if frame >= cap and not terminated and not (truncated and reason == "frame_limit"):
            self._violation("frame_limit", f"frame {frame:,} is past the cap, not truncated")
        elif reason == "frame_limit" and frame < cap:
            self._violation("frame_limit", f"truncated as frame_limit at frame {frame:,}")
        elif reason == "frame_limit":
            self.cap_ends.append(frame)

    def summary(self) -> dict[str, Any]:
        """What was seen, as a JSON-able dict."""
        return {
            "steps": self.steps,
            "frames": self.frames,
            "last_frame": self._frame,
            "episodes": sum(self.end_reasons.values()),
            "end_reasons": dict(self.end_reasons),
            "lives_lost": self.lives_lost,
            "life_ends": self.life_ends,
            "most_lives": self.most_lives,
            "starts": self.starts,
            "reward_min": self.reward_min,
            "reward_max": self.reward_max,
            "rewarded": self.rewarded,
            "stuck_ends": self.stuck_ends,
            "stuck_max": self.stuck_max,
            "cap_ends": self.cap_ends,
            "flags": {k: v[:3] for k, v in self.flags.items()},
            "flag_counts": {k: len(v) for k, v in self.flags.items()},
            "violations": self.violations,
            "violation_counts": dict(self.counts),
            "digest": self.digest,
            "digested_steps": self.digested_steps,
        }
