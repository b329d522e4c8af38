#!/usr/bin/env python3
"""Set up and run arcadebench from a fresh clone with nothing but Python >= 3.10.

    python3 dev.py <arcadebench arguments>   # e.g. run atari5 --agent random --episodes 1
    python3 dev.py test [pytest arguments]   # the whole test suite
    python3 dev.py perf <script> [arguments] # a perf/ benchmark, e.g. perf bench_envs

The first call creates ``.venv/`` next to this file and installs what that call needs: the
package and its report extra for the ``arcadebench`` command (about 640 MB), the test extras
(PyTorch, Ray, the linters) only when the tests or a benchmark first run. Later calls reinstall
only when pyproject.toml changed, so they start at once.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".arcadebench-installed"
COMMAND_EXTRAS = ("report",)  # what `arcadebench run/score/report` use
TEST_EXTRAS = ("test", "report")  # the suite and perf/ need every integration


def _pyproject_hash() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()


def _installed() -> set[str]:
    """The extras installed for the current pyproject.toml (none when it changed since)."""
    try:
        stamp = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return set()
    if not isinstance(stamp, dict) or stamp.get("pyproject") != _pyproject_hash():
        return set()
    return set(stamp.get("extras", ()))


def ensure_installed(extras: tuple[str, ...]) -> None:
    """Create the virtual environment and install the package with ``extras`` unless done."""
    if sys.version_info < (3, 10):  # noqa: UP036 - dev.py must explain this on old Pythons
        sys.exit(f"arcadebench needs Python >= 3.10; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating {VENV} ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    installed = _installed()
    if set(extras) <= installed:
        return
    wanted = sorted(installed | set(extras))
    first = not STAMP.exists()
    what = "the test tool chain" if "test" in extras else "arcadebench"
    print(f"installing {what} into {VENV} (once) ...", file=sys.stderr)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[{','.join(wanted)}]"], check=True)
    STAMP.write_text(json.dumps({"pyproject": _pyproject_hash(), "extras": wanted}))
    if first:
        activate = BIN / ("activate.bat" if os.name == "nt" else "activate")
        print(
            f"arcadebench is installed in {VENV}; to type `arcadebench` directly, put it on your "
            f"PATH: source {activate} (or call {BIN / 'arcadebench'})",
            file=sys.stderr,
        )


def main(argv: list[str]) -> int:
    """Install what the call needs, then run the tests, a benchmark or the arcadebench command."""
    if argv[:1] == ["test"]:
        ensure_installed(TEST_EXTRAS)
        command = [str(PYTHON), "-m", "pytest", *argv[1:]]
    elif argv[:1] == ["perf"]:
        scripts = sorted(path.stem for path in (ROOT / "perf").glob("bench_*.py"))
        script = argv[1].removesuffix(".py") if len(argv) > 1 else ""
        if script not in scripts:
            sys.exit(f"usage: python3 dev.py perf <script> [args]; scripts: {', '.join(scripts)}")
        ensure_installed(TEST_EXTRAS)
        command = [str(PYTHON), str(ROOT / "perf" / f"{script}.py"), *argv[2:]]
    else:
        ensure_installed(COMMAND_EXTRAS)
        command = [str(PYTHON), "-m", "arcadebench", *argv]
    return subprocess.run(command, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
