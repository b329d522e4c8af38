"""Shared fixtures: real emulators only, and the Sonic-ROM gate.

- ``retro_env``: stable-retro's bundled Airstriker-Genesis-v0 (headless), closed after the test;
  stable-retro allows one emulator per process, so never hold two.
- ``@pytest.mark.sonic_rom``: the test needs a Sonic ROM imported into stable-retro; it runs
  whenever the ROM is present and is skipped (with the import command) otherwise.
- ``@pytest.mark.long``: runs only with ARCADEBENCH_LONG=1 (soak tests, extended fuzzing).
"""

from __future__ import annotations

import compileall
import gc
import os
import sys
from pathlib import Path

import pytest

# One thread per library pool in the test processes and every process they start: the suite runs
# a worker per core plus one, and pools sized to the machine (torch's OpenMP, OpenBLAS) spin
# against each other (the README's SB3 block: 13.7 CPU-s in the suite, 4.9 alone with one thread).
os.environ.setdefault("OMP_NUM_THREADS", "1")

# pytest keeps the rewritten test modules' bytecode only where bytecode may be written: with
# PYTHONDONTWRITEBYTECODE set (common in containers) every worker of every run would rewrite and
# compile all of them again (2.5 CPU-s a worker). The caches go to the tests' __pycache__
# directories (ignored by git); the processes the tests start keep the user's setting.
sys.dont_write_bytecode = False

SRC = Path(__file__).resolve().parent.parent / "src" / "arcadebench"


def _sonic_rom_present() -> bool:
    import stable_retro

    try:
        stable_retro.data.get_romfile_path("SonicTheHedgehog-Genesis-v0")
    except FileNotFoundError:
        return False
    return True


def pytest_configure(config: pytest.Config) -> None:
    """Compile the package's bytecode once, in the controller before its workers start.

    The suite starts some 300 Python processes (workers, CLI runs, Ray tasks, examples); with
    PYTHONDONTWRITEBYTECODE set (common in containers) each would compile every arcadebench
    module it imports from source again, 40 ms a process.
    """
    if not hasattr(config, "workerinput"):
        compileall.compile_dir(SRC, quiet=1)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Exempt what collection loaded (torch, scipy, every module) from later garbage collections.

    stable-retro runs a full ``gc.collect()`` before each emulator it creates, and a test worker
    has imported every library of every test: each collection walked them all (0.1 s, 17 of them
    in the joint-env test, which took 4 s after the SB3 tests and 0.8 s alone). What a test
    creates is still collected as usual.
    """
    gc.freeze()


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """One worker per core, plus one: a fifth of the suite's time is spent waiting (Ray nodes
    starting, time limits running out, subprocesses), which the extra worker fills."""
    return (os.cpu_count() or 1) + 1


# The slowest tests and groups (measured with --durations), started first so that both cores
# stay busy to the end instead of one finishing a long test alone.
SLOWEST_FIRST = (
    "tests/benchmarks/conformance/test_suite.py",  # the sweep of every game of every spec
    "tests/benchmarks/audit/test_stacks.py",  # the audits of docs/audit.md
    "tests/benchmarks/training/test_ray_cluster_training.py",
    "tests/test_docs.py::test_every_block_of_the_readme_runs_as_written",
    "tests/examples/test_examples.py::test_cleanrl_ppo_on_both_vector_paths",
    "tests/examples/test_examples.py::test_sb3_ppo",
    "tests/benchmarks/runner/test_ray_cluster.py",
    "tests/benchmarks/runner/test_backends.py",
    "tests/cli/test_run_command.py::test_a_run_killed_with_sigkill",
    "tests/records/test_live.py::test_a_killed_worker",
    "tests/benchmarks/training/test_sb3.py",
)


def _rank(item: pytest.Item) -> int:
    return next(
        (i for i, prefix in enumerate(SLOWEST_FIRST) if item.nodeid.startswith(prefix)),
        len(SLOWEST_FIRST),
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=_rank)  # stable: the order within a file is kept
    long_mode = os.environ.get("ARCADEBENCH_LONG") == "1"
    has_rom = None
    for item in items:
        if "long" in item.keywords and not long_mode:
            item.add_marker(pytest.mark.skip(reason="long mode: run with ARCADEBENCH_LONG=1"))
        if "sonic_rom" in item.keywords:
            if has_rom is None:
                has_rom = _sonic_rom_present()
            if not has_rom:
                item.add_marker(
                    pytest.mark.skip(
                        reason="Sonic ROM not imported: "
                        "python -m stable_retro.import <dir with the ROM>"
                    )
                )


@pytest.fixture
def retro_env():
    """A headless Airstriker-Genesis-v0 RetroEnv (one emulator frame per step)."""
    import stable_retro

    env = stable_retro.make("Airstriker-Genesis-v0", render_mode=None)
    try:
        yield env
    finally:
        env.close()
