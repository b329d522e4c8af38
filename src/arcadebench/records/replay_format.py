"""What re-simulating an episode needs, recorded beside its log line: the replay record.

A results file says "median 112 % under SABER", and nobody could tell whether those episodes were
played under SABER's settings, with the logged returns, short of training again. The emulators
are deterministic given where an episode started and the actions played, so the monitors also
write, for every episode they log, one *replay* line to ``<run>.replay`` beside
``<run>.jsonl`` (JSON Lines, the same append lock and ``fsync``, written just before the episode
line, so a ``kill -9`` loses at most the episode in flight here too):

```json
{"kind": "replay", "format": "arcadebench-replay/1", "env": 0, "episode": 3,
 "start": {"seed": 123}, "actions": "<base64 of zlib>", "dtype": "|u1", "shape": [],
 "steps": 812, "rewards": "<base64 of zlib>"}
```

- ``start`` is where the episode began: ``{"seed": s}`` (reset with that seed), ``{"snapshot":
  {...}}`` (an unseeded reset: the emulator's state with its random generator and the env's
  generator, taken just *before* the reset, so that resetting from it replays the reset itself,
  no-op starts included), ``{"continues": e}`` (the stream's episode ``e`` went on into this
  one: the game after a lost life, or the next episode of a batched emulator whose states
  cannot be read), or ``{"unknown": why}`` (nothing re-simulates it).
- ``actions`` are the agent's actions, ``steps`` of them, as ``dtype`` arrays of ``shape`` each,
  zlib-compressed (Atari: one byte a step before compression, 0.3 after).
- ``rewards`` are the steps with a non-zero reward and that reward (``int32`` steps then
  ``float64`` rewards), so a replay that departs from the recording names the first step where it
  does.

Readers keep every well-formed replay line of a file, keyed ``(env, episode)`` like the episode
lines they belong to; a cut or damaged line makes that episode unverifiable, never the file
unreadable.

Classes: Replay.
Functions: replay_path, replay_fields, encode_array, decode_array, read_replays.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "REPLAY_FORMAT",
    "Replay",
    "decode_array",
    "encode_array",
    "read_replays",
    "replay_fields",
    "replay_path",
]

REPLAY_FORMAT = "arcadebench-replay/1"


def replay_path(log: str | os.PathLike[str]) -> Path:
    """The replay file of the run logged at ``log``: ``<run>.replay`` beside ``<run>.jsonl``.

    Example:
        >>> replay_path("logs/saber/pong/0.eval.jsonl").as_posix()
        'logs/saber/pong/0.eval.replay'
    """
    return Path(log).with_suffix(".replay")


def encode_array(values: np.ndarray) -> str:
    """An array's bytes, zlib-compressed, as base64 text (JSON holds no bytes).

    Example:
        >>> decode_array(encode_array(np.arange(5, dtype=np.uint8)), "uint8", ()).tolist()
        [0, 1, 2, 3, 4]
    """
    data = np.ascontiguousarray(values).tobytes()
    return base64.b64encode(zlib.compress(data, 6)).decode("ascii")


def decode_array(text: str, dtype: str, shape: Iterable[int]) -> np.ndarray:
    """The array :func:`encode_array` wrote, of ``dtype`` elements of ``shape`` each.

    Raises:
        ValueError: not base64, not zlib, or a size that is no whole number of elements.
    """
    data = zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True))
    element = tuple(int(d) for d in shape)
    array = np.frombuffer(data, dtype=np.dtype(dtype))
    return array.reshape((-1, *element)) if element else array


def replay_fields(
    *,
    start: Mapping[str, Any],
    actions: np.ndarray,
    reward_steps: np.ndarray,
    rewards: np.ndarray,
    engine: str | None = None,
) -> dict[str, Any]:
    """A replay line's fields after ``kind``, ``env`` and ``episode`` (the recorder's).

    :meth:`~arcadebench.records.RunRecorder.finish` adds those three; ``actions`` is
    ``(steps, *shape)``; ``engine`` names what played it when that was not a single
    environment (``"ale-vector"``: ale-py's batched emulator, which a replay must use too).

    Example:
        >>> fields = replay_fields(start={"seed": 7}, actions=np.array([1, 3, 3], np.uint8),
        ...     reward_steps=np.array([2]), rewards=np.array([1.0]))
        >>> fields["steps"], fields["dtype"], fields["shape"]
        (3, '|u1', [])
    """
    return {
        "format": REPLAY_FORMAT,
        **({"engine": engine} if engine is not None else {}),
        "start": dict(start),
        "actions": encode_array(actions),
        "dtype": actions.dtype.str,
        "shape": list(actions.shape[1:]),
        "steps": int(len(actions)),
        "rewards": encode_array(
            np.concatenate(
                [reward_steps.astype("<i4").view(np.uint8), rewards.astype("<f8").view(np.uint8)]
            )
        ),
    }


@dataclass(frozen=True)
class Replay:
    """One episode's recording, decoded.

    Attributes:
        env: the stream.
        episode: the stream's episode number (the episode line's ``episode``).
        start: where it began (module docstring).
        actions: ``(steps, *shape)`` actions.
        reward_steps: the steps (0-based) whose reward was not zero.
        rewards: those rewards.
        engine: ``"single"``, or ``"ale-vector"`` (ale-py's batched emulator played it).
    """

    env: int
    episode: int
    start: Mapping[str, Any]
    actions: np.ndarray
    reward_steps: np.ndarray
    rewards: np.ndarray
    engine: str = "single"


def _decode(record: Mapping[str, Any]) -> Replay:
    """A replay line's fields, checked; ``ValueError``/``KeyError``/``TypeError`` if damaged."""
    if record.get("kind") != "replay" or record.get("format") != REPLAY_FORMAT:
        raise ValueError("not a replay record of this format")
    actions = decode_array(record["actions"], record["dtype"], record["shape"])
    if len(actions) != record["steps"]:
        raise ValueError("the actions are not the recorded number of steps")
    trail = decode_array(record["rewards"], "uint8", ())
    if len(trail) % 12:
        raise ValueError("the reward trail is not whole (step, reward) pairs")
    count = len(trail) // 12
    steps = trail[: 4 * count].view("<i4").astype(np.int64)
    rewards = trail[4 * count :].view("<f8").astype(np.float64)
    start = record["start"]
    if not isinstance(start, dict) or len(start) != 1:
        raise ValueError("the start is not one of seed, snapshot, continues, unknown")
    engine = str(record.get("engine", "single"))
    return Replay(
        int(record["env"]), int(record["episode"]), start, actions, steps, rewards, engine
    )


def read_replays(path: str | os.PathLike[str]) -> tuple[dict[tuple[int, int], Replay], int]:
    """Every well-formed replay of a file by ``(env, episode)``, and how many lines were not.

    A missing file reads as no replays. The last one of two lines of the same episode wins (an
    episode whose line a crash cut, played again).
    """
    found: dict[tuple[int, int], Replay] = {}
    damaged = 0
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return found, 0
    with handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                damaged += 1  # a line a crash cut
                continue
            try:
                replay = _decode(json.loads(raw))
            except (ValueError, KeyError, TypeError):
                damaged += 1
                continue
            found[(replay.env, replay.episode)] = replay
    return found, damaged
