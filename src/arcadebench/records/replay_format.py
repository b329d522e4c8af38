"""What re-simulating an episode needs, recorded beside its log line: the replay record.

A results file says "median 112 % under SABER", and nobody could tell whether those episodes were
played under SABER's settings, with the logged returns, short of training again. The emulators
are deterministic given where an episode started and the actions played, so the monitors also
write, for every episode they log, one *replay* line to ``<run>.replay`` beside
``<run>.jsonl`` (JSON Lines, under the same append lock, written just before the episode line, so
a ``kill -9`` loses at most the episode in flight here too; flushed with ``fsync`` at most once a
second, so a power cut can cost the last second's recordings, whose episodes are then
unverifiable):

.. code-block:: json

    {"kind": "replay", "format": "arcadebench-replay/2", "env": 0, "episode": 3,
     "start": {"seed": 123}, "actions": "<base64 of zlib>", "dtype": "|u1", "shape": [],
     "steps": 812, "rewards": "<base64 of zlib>", "rewarded": 21,
     "digests": {"of": "ram", "every": 8, "end": true, "values": "<base64 of zlib>"}}

- ``start`` is where the episode began: ``{"seed": s}`` (reset with that seed), ``{"snapshot":
  {...}}`` (an unseeded reset: the emulator's state with its random generator and the env's
  generator, taken just *before* the reset, so that resetting from it replays the reset itself,
  no-op starts included), ``{"continues": e}`` (the stream's episode ``e`` went on into this
  one: the game after a lost life, or the next episode of a batched emulator whose states
  cannot be read), or ``{"unknown": why}`` (nothing re-simulates it).
- ``actions`` are the agent's actions, ``steps`` of them, as ``dtype`` arrays of ``shape`` each,
  zlib-compressed (Atari: one byte a step before compression, 0.3 after).
- ``rewards`` are the ``rewarded`` steps with a non-zero reward and that reward (``int32`` steps
  then ``float64`` rewards), so a replay that departs from the recording names the first step
  where it does.
- ``digests`` (format 2) are one byte each of the emulator state's CRC-32 (its low byte):
  after the reset, after every ``every``-th step, and after the last step (``end``). Rewards are
  a weak witness (a Pong run played without sticky actions earns the protocol's rewards under
  it at most steps while its emulator state differs at most steps), so the replay compares the
  state too. A byte every 8 steps rather than four bytes every 32, for the same room: a changed
  action whose effect on the state lasts 8 steps or more (a paddle that moves, then back) is
  seen, and a state that stays different is seen at its first digest with odds 255 in 256 and
  by some digest soon after. ``of`` is
  ``"ram"`` (ALE's 128 bytes; stable-retro's RAM) or ``"observation"`` (ale-py's batched
  emulator, whose RAM cannot be read: the newest frame of the ``obs_type`` observation, which
  the replay must then render alike).

Format 1 lines (no ``rewarded``, no ``digests``) are still read; their episodes are checked on
rewards only.

Everything a line declares bounds what reading it may cost, since a results folder to verify
is someone else's input: a line is at most :data:`MAX_LINE_BYTES`, nested at most
:data:`~arcadebench.records.reader.MAX_DEPTH` deep, and each array decompresses to at most what
the line declares (``steps`` actions of ``dtype`` and ``shape``, ``rewarded`` rewards, a digest
per ``every`` steps), ``steps`` itself at most :data:`MAX_STEPS`. A line that breaks a bound, or
is malformed, costs its episode only (it is *damaged*, with the reason), never the file.
Readers index a file's lines without decoding their arrays (:func:`index_replays`) and decode
one when it is replayed (:func:`load_replay`), so memory does not grow with the file.

Classes: Digests, Replay, ReplayEntry, ReplayIndex.
Functions: replay_path, replay_fields, encode_array, decode_array, decode_replay,
index_replays, load_replay, read_replays.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from arcadebench.errors import ReplayDamaged, first_line
from arcadebench.records.reader import bounded_json, bounded_lines

__all__ = [
    "DIGEST_EVERY",
    "ENGINES",
    "MAX_LINE_BYTES",
    "MAX_STEPS",
    "REPLAY_FORMAT",
    "REPLAY_FORMATS",
    "Digests",
    "Replay",
    "ReplayEntry",
    "ReplayIndex",
    "decode_array",
    "decode_replay",
    "encode_array",
    "index_replays",
    "load_replay",
    "read_replays",
    "replay_fields",
    "replay_path",
]

REPLAY_FORMAT = "arcadebench-replay/2"
REPLAY_FORMATS = ("arcadebench-replay/1", REPLAY_FORMAT)
"""The formats read; format 1 has no state digests."""

DIGEST_EVERY = 8
"""Steps between two state digests (a byte each), 0.17 B a step on disk."""

MAX_LINE_BYTES = 64 * 2**20
"""The longest replay line read (SABER's longest episode, 100 hours, is 5.4M steps or ~8 MB)."""

MAX_STEPS = 2**24
"""The most steps a replay line may declare (16.7M, three times SABER's 100-hour episode)."""

MAX_SNAPSHOT_BYTES = 16 * 2**20
"""The largest emulator state a snapshot may decompress to (ALE's is 14.5 KB)."""

ENGINES = ("single", "ale-vector")
"""What played a recording, which a replay must play it with, either one environment or a stream of
ale-py's batched emulator (:class:`~arcadebench.benchmarks.replay.simulate.Player` plays both)."""

_STARTS = ("seed", "snapshot", "continues", "unknown")
_DTYPE = re.compile(r"[<>|=]?[biuf][1248]")  # what numpy writes for actions: |u1, <i8, <f4...
_DIGEST_OF = ("ram", "observation")


def replay_path(log: str | os.PathLike[str]) -> Path:
    """The replay file of the run logged at ``log``: ``<run>.replay`` beside ``<run>.jsonl``.

    Example:
        >>> replay_path("logs/saber/pong/0.eval.jsonl").as_posix()
        'logs/saber/pong/0.eval.replay'
    """
    return Path(log).with_suffix(".replay")


def encode_array(values: np.ndarray, level: int = 6) -> str:
    """An array's bytes, zlib-compressed at ``level``, as base64 text (JSON holds no bytes).

    Example:
        >>> decode_array(encode_array(np.arange(5, dtype=np.uint8)), "uint8", ()).tolist()
        [0, 1, 2, 3, 4]
    """
    data = np.ascontiguousarray(values).tobytes()
    return base64.b64encode(zlib.compress(data, level)).decode("ascii")


def decode_array(
    text: str, dtype: str, shape: Iterable[int], *, limit: int = MAX_LINE_BYTES
) -> np.ndarray:
    """The array :func:`encode_array` wrote, of ``dtype`` elements of ``shape`` each.

    At most ``limit`` bytes are decompressed: a few bytes of zlib can claim gigabytes.

    Raises:
        ReplayDamaged: not base64, not zlib, more than ``limit`` bytes, or a size that is no
            whole number of elements.
    """
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, AttributeError):
        raise ReplayDamaged("an array is not base64 text") from None
    inflate = zlib.decompressobj()
    try:
        data = inflate.decompress(packed, limit + 1)
    except zlib.error as error:
        raise ReplayDamaged(f"an array is not zlib data ({error})") from None
    if len(data) > limit or inflate.unconsumed_tail:
        raise ReplayDamaged(f"an array decompresses to more than the {limit:,} bytes declared")
    if not inflate.eof:
        raise ReplayDamaged("an array's zlib data is cut off")
    try:
        kind = np.dtype(dtype)
        element = tuple(int(d) for d in shape)
        if kind.hasobject or kind.itemsize == 0 or any(d < 1 for d in element):
            raise TypeError
        array = np.frombuffer(data, dtype=kind)
        return array.reshape((-1, *element)) if element else array
    except (TypeError, ValueError):
        raise ReplayDamaged(f"an array is no whole number of {dtype!r} x {shape!r}") from None


@dataclass(frozen=True)
class Digests:
    """The digests of an episode's emulator states: a byte of each one's CRC-32 (module docstring).

    Attributes:
        of: ``"ram"`` or ``"observation"``.
        every: steps between two digests.
        values: after the reset, after each ``every``-th step, and after the last step if ``end``.
        end: whether the last value is the state after the last step.
        obs_type: the observation digested (``of == "observation"``).
    """

    of: str
    every: int
    values: np.ndarray
    end: bool
    obs_type: str | None = None

    def count(self, steps: int) -> int:
        """How many values an episode of ``steps`` steps has."""
        return 1 + steps // self.every + int(self.end)


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
        format: the line's format (``arcadebench-replay/1`` has no digests).
        digests: the emulator's states, where recorded.
    """

    env: int
    episode: int
    start: Mapping[str, Any]
    actions: np.ndarray
    reward_steps: np.ndarray
    rewards: np.ndarray
    engine: str = "single"
    format: str = REPLAY_FORMAT
    digests: Digests | None = None


@dataclass(frozen=True)
class ReplayEntry:
    """Where one replay line is in its file, and what it says before its arrays are decoded.

    Attributes:
        env: the stream.
        episode: the stream's episode number.
        start: where it began.
        steps: the steps it declares.
        engine: what played it.
        format: its format.
        fingerprint: a hash of its start and its actions: the same episode logged twice has
            the same one.
        line: its line number in the file.
        offset: where the line starts in the file.
        length: its length in bytes.
    """

    env: int
    episode: int
    start: Mapping[str, Any]
    steps: int
    engine: str
    format: str
    fingerprint: str
    line: int
    offset: int
    length: int

    @property
    def digested(self) -> bool:
        """Whether the line's format carries state digests."""
        return self.format != REPLAY_FORMATS[0]


@dataclass
class ReplayIndex:
    """A replay file's usable lines by ``(env, episode)``, and its damaged ones with why.

    The last of two lines of the same episode wins (an episode whose line a crash cut, played
    again).
    """

    path: Path
    entries: dict[tuple[int, int], ReplayEntry] = field(default_factory=dict)
    damaged: list[tuple[int, str]] = field(default_factory=list)
    exists: bool = False


def replay_fields(
    *,
    start: Mapping[str, Any],
    actions: np.ndarray,
    reward_steps: np.ndarray,
    rewards: np.ndarray,
    engine: str | None = None,
    digests: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A replay line's fields after ``kind``, ``env`` and ``episode`` (the recorder's).

    :meth:`~arcadebench.records.RunRecorder.finish` adds those three; ``actions`` is
    ``(steps, *shape)``; ``engine`` names what played it when that was not a single
    environment (``"ale-vector"``: ale-py's batched emulator, which a replay must use too);
    ``digests`` is ``{"of", "every", "end", "values"[, "obs_type"]}`` with ``values`` the
    digests (module docstring).

    Example:
        >>> fields = replay_fields(start={"seed": 7}, actions=np.array([1, 3, 3], np.uint8),
        ...     reward_steps=np.array([2]), rewards=np.array([1.0]))
        >>> fields["steps"], fields["dtype"], fields["shape"], fields["rewarded"]
        (3, '|u1', [], 1)
    """
    found: dict[str, Any] = {
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
        "rewarded": int(len(reward_steps)),
    }
    if digests is not None:
        values = np.asarray(digests["values"], dtype=np.uint8)
        found["digests"] = {**digests, "values": encode_array(values)}
    return found


# -- reading: an index of the lines, each decoded when it is replayed -------------------------


def _int(record: Mapping[str, Any], key: str, low: int = 0, high: int | None = None) -> int:
    value = record.get(key)
    if type(value) is not int or value < low or (high is not None and value > high):
        bound = f"{low} to {high:,}" if high is not None else f"at least {low}"
        raise ReplayDamaged(f"its {key!r} must be an integer {bound}, got {_short(value)}")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _dimension(value: Any) -> bool:
    """Whether ``value`` is no size of an action's dimension."""
    return type(value) is not int or not 1 <= value <= 2**16


def _start(record: Mapping[str, Any]) -> dict[str, Any]:
    start = record.get("start")
    if not isinstance(start, dict) or len(start) != 1 or next(iter(start)) not in _STARTS:
        raise ReplayDamaged(f"its start must be one of {', '.join(_STARTS)}, got {_short(start)}")
    kind, value = next(iter(start.items()))
    if kind == "seed":
        _int(start, "seed", 0, 2**64 - 1)
    elif kind == "continues":
        _int(start, "continues")
    elif kind == "snapshot" and not (
        isinstance(value, dict)
        and isinstance(value.get("np_random"), dict)
        and isinstance(value.get("ale", ""), str)
    ):
        raise ReplayDamaged("its snapshot has no generator state, or an emulator state not text")
    elif kind == "unknown" and not isinstance(value, str):
        raise ReplayDamaged(f"its unknown start must say why, got {_short(value)}")
    return start


def _entry(record: Any, line: int, offset: int, length: int) -> ReplayEntry:
    """A replay line's light checks, without decoding its arrays."""
    if not isinstance(record, dict) or record.get("kind") != "replay":
        raise ReplayDamaged("it is not a replay record")
    format_ = record.get("format")
    if format_ not in REPLAY_FORMATS:
        raise ReplayDamaged(f"its format {_short(format_)} is none of {', '.join(REPLAY_FORMATS)}")
    for key in ("actions", "rewards"):
        if not isinstance(record.get(key), str):
            raise ReplayDamaged(f"its {key!r} must be text, got {_short(record.get(key))}")
    dtype = record.get("dtype")
    if not isinstance(dtype, str) or not _DTYPE.fullmatch(dtype):
        raise ReplayDamaged(
            f"its 'dtype' must name a number type (|u1, <f4...), got {_short(dtype)}"
        )
    shape = record.get("shape")
    if not isinstance(shape, list) or len(shape) > 4 or any(_dimension(d) for d in shape):
        raise ReplayDamaged(f"its 'shape' must be a short list of sizes, got {_short(shape)}")
    engine = record.get("engine", "single")
    if engine not in ENGINES:
        raise ReplayDamaged(f"its engine must be one of {', '.join(ENGINES)}, got {_short(engine)}")
    start = _start(record)
    text = json.dumps(start, sort_keys=True) + record["dtype"] + repr(shape) + record["actions"]
    return ReplayEntry(
        env=_int(record, "env"),
        episode=_int(record, "episode"),
        start=start,
        steps=_int(record, "steps", 0, MAX_STEPS),
        engine=str(engine),
        format=str(format_),
        fingerprint=hashlib.sha256(text.encode()).hexdigest(),
        line=line,
        offset=offset,
        length=length,
    )


def index_replays(path: str | os.PathLike[str]) -> ReplayIndex:
    """The usable lines of a replay file, checked lightly, and its damaged ones with why.

    A missing file is an empty index (``exists`` false). No array is decoded here.
    """
    index = ReplayIndex(Path(path))
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return index
    except OSError as error:
        index.damaged.append((0, f"the replay file cannot be read: {error.strerror or error}"))
        return index
    index.exists = True
    with handle:
        for line, offset, raw in bounded_lines(handle, MAX_LINE_BYTES):
            if raw is None:
                index.damaged.append((line, f"longer than {MAX_LINE_BYTES:,} bytes"))
                continue
            if raw.isspace():
                continue
            if not raw.endswith(b"\n"):
                index.damaged.append((line, "cut off (the run was killed while writing it)"))
                continue
            try:
                entry = _entry(bounded_json(raw), line, offset, len(raw))
            except ValueError as error:  # ReplayDamaged, or not JSON
                index.damaged.append((line, first_line(error) or "not JSON"))
                continue
            index.entries[(entry.env, entry.episode)] = entry
    return index


def load_replay(path: str | os.PathLike[str], entry: ReplayEntry) -> Replay:
    """Decode the line ``entry`` indexes in the replay file at ``path``.

    Raises:
        ReplayDamaged: the line changed since it was indexed, or its arrays are damaged.
    """
    try:
        with open(path, "rb") as handle:
            handle.seek(entry.offset)
            raw = handle.read(entry.length)
    except OSError as error:
        raise ReplayDamaged(f"the replay file cannot be read: {error.strerror or error}") from None
    return decode_replay(raw)


def decode_replay(raw: bytes) -> Replay:
    """A replay line decoded, every array within what the line declares.

    Raises:
        ReplayDamaged: why the line cannot be used (one line).
    """
    if len(raw) > MAX_LINE_BYTES:
        raise ReplayDamaged(f"longer than {MAX_LINE_BYTES:,} bytes")
    try:
        record = bounded_json(raw)
    except ValueError as error:
        raise ReplayDamaged(str(error) or "not JSON") from None
    entry = _entry(record, 0, 0, len(raw))
    steps = entry.steps
    shape = record["shape"]
    itemsize = np.dtype(record["dtype"]).itemsize * int(np.prod(shape, dtype=np.int64))
    actions = decode_array(record["actions"], record["dtype"], shape, limit=steps * itemsize)
    if len(actions) != steps:
        raise ReplayDamaged(f"it has {len(actions):,} actions, its line declares {steps:,} steps")
    rewarded = record.get("rewarded", steps) if entry.digested else steps
    if type(rewarded) is not int or not 0 <= rewarded <= steps:
        raise ReplayDamaged(f"its 'rewarded' must be 0 to {steps:,}, got {_short(rewarded)}")
    trail = decode_array(record["rewards"], "uint8", (), limit=12 * rewarded)
    if len(trail) % 12 or (entry.digested and len(trail) != 12 * rewarded):
        raise ReplayDamaged("its reward trail is not the (step, reward) pairs it declares")
    count = len(trail) // 12
    reward_steps = trail[: 4 * count].view("<i4").astype(np.int64)
    rewards = trail[4 * count :].view("<f8").astype(np.float64)
    if count and (
        np.any(np.diff(reward_steps) <= 0) or reward_steps[0] < 0 or reward_steps[-1] >= steps
    ):
        raise ReplayDamaged("its rewarded steps are not increasing steps of the episode")
    digests = _digests(record.get("digests"), steps) if entry.digested else None
    return Replay(
        entry.env,
        entry.episode,
        entry.start,
        actions,
        reward_steps,
        rewards,
        entry.engine,
        entry.format,
        digests,
    )


def _digests(found: Any, steps: int) -> Digests | None:
    if found is None:
        return None
    if not isinstance(found, dict) or found.get("of") not in _DIGEST_OF:
        raise ReplayDamaged(f"its digests must be of {' or '.join(_DIGEST_OF)}")
    every = _int(found, "every", 1, MAX_STEPS)
    end = found.get("end")
    obs_type = found.get("obs_type")
    if type(end) is not bool or not isinstance(found.get("values"), str):
        raise ReplayDamaged("its digests need 'end' (true or false) and 'values' (text)")
    if found["of"] == "observation" and obs_type not in ("standard", "rgb", "grayscale"):
        raise ReplayDamaged(f"its digests name no observation type, got {_short(obs_type)}")
    digests = Digests(str(found["of"]), every, np.zeros(0, np.uint8), end, obs_type)
    wanted = digests.count(steps)
    values = decode_array(found["values"], "uint8", (), limit=wanted)
    if len(values) != wanted:
        raise ReplayDamaged(f"it has {len(values)} state digests, {wanted} for {steps} steps")
    return Digests(digests.of, every, values, end, obs_type)


def read_replays(path: str | os.PathLike[str]) -> tuple[dict[tuple[int, int], Replay], int]:
    """Every well-formed replay of a file by ``(env, episode)``, and how many lines were not.

    Decodes the whole file: for a file of one run in a test or a tool; verifying decodes one
    line at a time (:func:`index_replays`, :func:`load_replay`).
    """
    index = index_replays(path)
    found: dict[tuple[int, int], Replay] = {}
    damaged = len(index.damaged)
    for key, entry in index.entries.items():
        try:
            found[key] = load_replay(path, entry)
        except ReplayDamaged:
            damaged += 1
    return found, damaged
