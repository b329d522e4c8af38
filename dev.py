#!/usr/bin/env python3
"""Set up and run arcadebench from a fresh clone with nothing but Python >= 3.10.

    python3 dev.py <arcadebench arguments>   # e.g. run atari5 --agent random --episodes 1
    python3 dev.py test [pytest arguments]   # the whole test suite
    python3 dev.py perf <script> [arguments] # a perf/ benchmark, e.g. perf bench_envs

The first call creates ``.venv/`` next to this file and installs the package with its test and
report extras; later calls reinstall only when pyproject.toml changed, so they start at once.
"""

from __future__ import annotations

import hashlib
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
EXTRAS = "test,report"


def _requirements_hash() -> str:
    return hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + EXTRAS.encode()).hexdigest()


def ensure_installed() -> None:
    """Create the virtual environment and install the package unless already up to date."""
    if sys.version_info < (3, 10):  # noqa: UP036 - dev.py must explain this on old Pythons
        sys.exit(f"arcadebench needs Python >= 3.10; this is {sys.version.split()[0]}")
    if not PYTHON.exists():
        print(f"creating {VENV} ...", file=sys.stderr)
        venv.EnvBuilder(with_pip=True).create(VENV)
    wanted = _requirements_hash()
    if STAMP.exists() and STAMP.read_text() == wanted:
        return
    print("installing arcadebench and its dependencies (first run only) ...", file=sys.stderr)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[{EXTRAS}]"], check=True)
    STAMP.write_text(wanted)


def main(argv: list[str]) -> int:
    """Install if needed, then run the tests or the arcadebench command."""
    ensure_installed()
    if argv[:1] == ["test"]:
        command = [str(PYTHON), "-m", "pytest", *argv[1:]]
    elif argv[:1] == ["perf"]:
        scripts = sorted(path.stem for path in (ROOT / "perf").glob("bench_*.py"))
        script = argv[1].removesuffix(".py") if len(argv) > 1 else ""
        if script not in scripts:
            sys.exit(f"usage: python3 dev.py perf <script> [args]; scripts: {', '.join(scripts)}")
        command = [str(PYTHON), str(ROOT / "perf" / f"{script}.py"), *argv[2:]]
    else:
        command = [str(PYTHON), "-m", "arcadebench", *argv]
    return subprocess.run(command, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
