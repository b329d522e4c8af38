"""What every perf/ script shares: interleaved rounds, medians, ratios, targets, a table, JSON.

The machine is noisy (a 2-vCPU VM, +-15 % between runs), so the scripts compare cases measured
in one process, in rounds: every round runs each case once, in a rotated order, so that a slow
spell hits every case alike. They report medians, and a ratio of two cases is the median of the
per-round ratios (paired, so drift between rounds cancels), with its min-max over the rounds.
Targets are checked on those ratios and printed as met or MISSED; ``perf/README.md`` explains
every miss.

Run a script from a fresh clone with ``python3 dev.py perf bench_envs [arguments]`` (or, once set
up, ``.venv/bin/python perf/bench_envs.py``); each writes ``perf/results/<script>.json`` with the
machine, the command, its targets and what it printed, from which ``docs/generate.py`` writes
``docs/performance.md`` (the results are committed with the page they make).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from arcadebench._table import render_table

__all__ = [
    "RESULTS",
    "Target",
    "TimedCalls",
    "emulator_rounds",
    "in_run_ratios",
    "interleave",
    "machine",
    "median",
    "parser",
    "ratio",
    "ratio_range",
    "report_targets",
    "step_player",
    "table",
    "timed",
    "timed_player",
    "write_json",
]

RESULTS = Path(__file__).resolve().parent / "results"


class _Tee:
    """Standard output, also kept: what a script prints goes into its results file."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.kept: list[str] = []

    def write(self, text: str) -> int:
        self.kept.append(text)
        return int(self.stream.write(text))

    def flush(self) -> None:
        self.stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


_OUTPUT = _Tee(sys.stdout)


def parser(doc: str | None) -> argparse.ArgumentParser:
    """An argument parser whose description is the script docstring's first line.

    Every script starts with it, so from here on what the script prints is also kept for its
    results file.
    """
    sys.stdout = _OUTPUT
    return argparse.ArgumentParser(description=(doc or "").strip().splitlines()[0])


def timed(function: Callable[[], Any]) -> float:
    """Seconds ``function()`` takes."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def interleave(
    cases: Mapping[str, Callable[[], float]], rounds: int, warmup: int = 1
) -> dict[str, list[float]]:
    """Run every case once per round, in a rotated order; returns the seconds of each round.

    Each case returns the seconds it measured itself (so its set-up is not timed). ``warmup``
    rounds run first and are dropped.
    """
    names = list(cases)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for index in range(warmup + rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            seconds = cases[name]()
            if index >= warmup:
                samples[name].append(seconds)
    return samples


def step_player(
    env: Any,
    actions: Sequence[Any],
    seed: int = 0,
    after_reset: Callable[[], None] | None = None,
) -> Callable[[], float]:
    """A case stepping a Gymnasium env through ``actions``; returns the seconds of the steps.

    Every round starts with ``reset(seed=seed)`` (not timed), so every round of every case with
    the same actions plays the same frames: the cases differ only in what is measured. An
    episode that ends is reset without a seed, inside the timing (both sides pay it).
    """

    def play() -> float:
        env.reset(seed=seed)
        if after_reset is not None:  # e.g. restart TimedCalls clocks (not timed either)
            after_reset()
        step, reset = env.step, env.reset
        start = time.perf_counter()
        for action in actions:
            _, _, terminated, truncated, _ = step(action)
            if terminated or truncated:
                reset()
        return time.perf_counter() - start

    return play


def timed_player(
    env: Any, actions: Sequence[Any], timers: Sequence[TimedCalls]
) -> Callable[[], float]:
    """:func:`step_player` whose stand-ins' clocks restart after the seeded reset.

    The reset emulates start-up frames too, so the clocks count only what the steps count.
    """

    def restart_clocks() -> None:
        for timer in timers:
            timer.seconds = 0.0

    return step_player(env, actions, after_reset=restart_clocks)


def emulator_rounds(
    envs: Mapping[str, Any], actions: Sequence[Any], rounds: int, emulator: TimedCalls
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Interleaved rounds of every env driving ``emulator``: their seconds and the emulator's.

    Returns, per case, the seconds of each round and the seconds spent in ``emulator`` inside
    them (warm-up dropped): what :func:`in_run_ratios` takes.
    """
    inside: dict[str, list[float]] = {name: [] for name in envs}

    def case(name: str) -> Callable[[], float]:
        play = timed_player(envs[name], actions, [emulator])

        def run() -> float:
            seconds = play()
            inside[name].append(emulator.seconds)
            return seconds

        return run

    samples = interleave({name: case(name) for name in envs}, rounds)
    return samples, {name: values[-rounds:] for name, values in inside.items()}


class TimedCalls:
    """A stand-in for ``target`` that adds up the seconds spent in the named methods.

    Used to time the emulator inside a stack's own steps (e.g. ``TimedCalls(ale, "act")`` as an
    env's ``ale``): the stack's cost relative to the emulator, measured in the very same steps,
    does not depend on how fast the (noisy) machine ran during them. The stand-in's own call
    overhead (about 0.3 us a call) counts as the stack's, which errs on the safe side.
    """

    def __init__(self, target: Any, *names: str) -> None:
        self._target = target
        self.seconds = 0.0
        clock = time.perf_counter
        for name in dir(target):  # bound once: other calls cost what they cost on ``target``
            if not name.startswith("_"):
                setattr(self, name, getattr(target, name))
        for name in names:
            method = getattr(target, name)

            def timed_call(*args: Any, _method: Callable[..., Any] = method, **kwargs: Any) -> Any:
                start = clock()
                result = _method(*args, **kwargs)
                self.seconds += clock() - start
                return result

            setattr(self, name, timed_call)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target, name)


def median(values: Sequence[float]) -> float:
    """The median."""
    return float(statistics.median(values))


def _paired(samples: Mapping[str, Sequence[float]], case: str, base: str) -> list[float]:
    return [b / c for c, b in zip(samples[case], samples[base], strict=True)]


def ratio(samples: Mapping[str, Sequence[float]], case: str, base: str) -> float:
    """Throughput of ``case`` over ``base`` (same work per round): median of t_base / t_case."""
    return median(_paired(samples, case, base))


def in_run_ratios(
    samples: Mapping[str, Sequence[float]],
    inside: Mapping[str, Sequence[float]],
    base: str,
) -> dict[str, float]:
    """Per case: the median over rounds of ``(t / inside)`` of ``base`` over the case's own.

    ``inside`` is the seconds each round spent in the emulator (timed with :class:`TimedCalls`),
    so the ratio compares what the cases add around the emulator in the very same rounds,
    whatever the machine's speed in each.
    """
    return {
        name: median(
            [
                (tb / eb) / (tc / ec)
                for tc, ec, tb, eb in zip(
                    samples[name], inside[name], samples[base], inside[base], strict=True
                )
            ]
        )
        for name in inside
    }


def ratio_range(
    samples: Mapping[str, Sequence[float]], case: str, base: str
) -> tuple[float, float]:
    """Min and max over the rounds of ``t_base / t_case``."""
    paired = _paired(samples, case, base)
    return min(paired), max(paired)


@dataclass(frozen=True)
class Target:
    """A performance target and the value measured for it."""

    name: str
    value: float
    op: str  # ">=", "<=" or "<"
    threshold: float
    unit: str = "x"

    @property
    def met(self) -> bool:
        """Whether the measured value meets the target."""
        if self.op == ">=":
            return self.value >= self.threshold
        if self.op == "<":
            return self.value < self.threshold
        return self.value <= self.threshold

    def line(self) -> str:
        """``name: value (target op threshold): met`` for the console."""
        verdict = "met" if self.met else "MISSED"
        return (
            f"target {self.name}: {self.value:.3f}{self.unit} "
            f"(target {self.op} {self.threshold:g}{self.unit}): {verdict}"
        )


def report_targets(targets: Sequence[Target]) -> list[dict[str, Any]]:
    """Print one line per target; returns them for the JSON."""
    for target in targets:
        print(target.line())
    return [asdict(t) | {"met": t.met} for t in targets]


def table(
    columns: Sequence[str], rows: Sequence[Sequence[object]], title: str, digits: int = 2
) -> str:
    """The plain-text table of the CLI (``arcadebench._table.render_table``)."""
    return render_table(columns, rows, title=title, digits=digits)


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """The machine and the versions that matter for the numbers."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cpus = os.cpu_count() or 1
    versions = {}
    for name in (
        "arcadebench",
        "numpy",
        "gymnasium",
        "ale-py",
        "stable-retro",
        "opencv-python-headless",
        "envpool",
    ):
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            pass
    return {
        "cpu": _cpu_model(),
        "cpus": cpus,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "versions": versions,
    }


def write_json(name: str, payload: Mapping[str, Any]) -> Path:
    """Write ``perf/results/<name>.json``: the payload, the machine, the command and the time."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    record = {
        "benchmark": name,
        "command": " ".join(["python3 dev.py perf", Path(sys.argv[0]).stem, *sys.argv[1:]]),
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        **payload,
        "output": "".join(_OUTPUT.kept),
    }
    out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"\nwrote {out}")
    return out
