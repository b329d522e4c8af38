"""The library is typed for the people who use it.

mypy passes over ``src/``, ``examples/`` and ``perf/`` with the configuration in pyproject.toml
(strict below the benchmark stages and on scoring), and the installed package says it is typed
(``py.typed``), so a user's own code is checked against arcadebench's annotations: misusing the
public API is a type error in *their* editor, not a traceback after an hour of training.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from importlib import resources
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".mypy_cache"  # shared by both runs: the second reuses numpy's and gymnasium's

USER_CODE = """
from pathlib import Path
from typing import Any

import gymnasium as gym
from typing_extensions import assert_type

import arcadebench
from arcadebench.benchmarks.scoring.results import Results
from arcadebench.specs.model import AtariSettings, RetroSettings

results = arcadebench.score("atari5", {"mine": {"pong": 1.0}}, reps=0)
assert_type(results, Results)
assert_type(results.table(), str)
assert_type(arcadebench.make(Path("my_spec.yaml"), "pong"), gym.Env)
assert_type(arcadebench.load_spec("saber").environment, AtariSettings | RetroSettings | None)
report = arcadebench.check("saber", ["pong"], frames=20_000, progress="off")


class Learner:
    def act(self, obs: object) -> int:
        return 0

    def observe(
        self, obs: object, reward: float, terminated: bool, truncated: bool, info: dict[str, Any]
    ) -> None:
        pass


class Forgetful:
    def act(self, obs: object) -> int:
        return 0

    def observe(self, obs: object) -> None:
        pass


learner: arcadebench.LearningAgent = Learner()
arcadebench.evaluate(Learner, "sonic", split="test", backend="ray")
arcadebench.evaluate(lambda obs: 0, "atari5", progress="bars")

arcadebench.score("atari5", {"mine": {"pong": 1.0}}, reps="many")  # error
arcadebench.score("atari5", 42)  # error
arcadebench.check("saber", progress="quiet")  # error
arcadebench.evaluate(42, "saber")  # error
forgetful: arcadebench.LearningAgent = Forgetful()  # error
arcadebench.evaluate("random", "saber", backend="dask")  # error
arcadebench.evaluate("random", "sonic", split="validation")  # error
"""


def _mypy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(CACHE), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_mypy_finds_no_error_in_the_library_its_examples_and_benchmarks():
    done = _mypy(cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("Success: no issues found"), done.stdout


def test_the_built_wheel_ships_the_py_typed_marker(tmp_path):
    assert (resources.files("arcadebench") / "py.typed").is_file()  # the installed package
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("arcadebench-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert "arcadebench/py.typed" in names and "arcadebench/specs/saber.yaml" in names


def test_a_users_code_is_checked_against_the_public_api(tmp_path):
    # outside the repository: arcadebench is found as an installed package, typed by py.typed
    (tmp_path / "user.py").write_text(USER_CODE, encoding="utf-8")
    done = _mypy("--config-file", str(ROOT / "pyproject.toml"), "user.py", cwd=tmp_path)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    expected = [i for i, line in enumerate(USER_CODE.splitlines(), 1) if line.endswith("# error")]
    assert [int(line.split(":")[1]) for line in errors] == expected, done.stdout
    assert 'Argument "reps" to "score" has incompatible type "str"; expected "int"' in errors[0]
    assert 'Argument 2 to "score" has incompatible type "int"' in errors[1]
    assert 'Argument "progress" to "check" has incompatible type' in errors[2]


def test_every_type_ignore_names_its_code_and_says_why_on_its_line():
    unexplained = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for folder in ("src", "examples", "perf")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "type: ignore" in line and not re.search(r"type: ignore\[[-a-z, ]+\]\s+#\s*\S", line)
    ]
    assert not unexplained, "\n".join(unexplained)
