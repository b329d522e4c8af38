#!/usr/bin/env python3
"""Set up and run arcadebench from a fresh clone with nothing but Python >= 3.10.

    python3 dev.py <arcadebench arguments>   # e.g. run atari5 --agent random --episodes 1
    python3 dev.py install <extra>...        # e.g. install sb3: stable-baselines3 and PyTorch
    python3 dev.py test [pytest arguments]   # the whole test suite
    python3 dev.py perf <script> [arguments] # a perf/ benchmark, e.g. perf bench_envs
    python3 dev.py docs                      # the documentation site, built strictly

The first call creates ``.venv/`` next to this file and installs what that call needs: the
package and its report extra for the ``arcadebench`` command (about 640 MB), the test extras
(PyTorch, Ray, the linters) only when the tests or a benchmark first run. Later calls reinstall
only when pyproject.toml changed, so they start at once.

``dev.py <arguments>`` is the ``arcadebench`` command, run where you call it from: relative paths,
``module:attr`` agents and the default ``results/`` are those of your directory, not the clone's.
The tests run in the clone (its ``pyproject.toml`` configures pytest), and a path you give them
that exists where you stand is passed on as that file.

PyTorch (the ``sb3``, ``rllib`` and ``test`` extras): pip's default build on Linux is the CUDA
one, several GB of libraries that a machine without an NVIDIA GPU never loads (``.venv`` 6.0 GB
for the SB3 example). Where no NVIDIA driver is present, PyTorch's CPU build is
installed first (the version the test extra pins, from PyTorch's CPU index), and the extra's own
``torch`` requirement is then already met.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request
import venv
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
STAMP = VENV / ".arcadebench-installed"
COMMAND_EXTRAS = ("report",)  # what `arcadebench run/score/report` use
TEST_EXTRAS = ("test", "report")  # the suite and perf/ need every integration
DOCS_EXTRAS = ("docs", "report")  # Sphinx, and the package it documents
DOCS_OUT = ROOT / "build" / "docs"
TORCH_EXTRAS = ("sb3", "rllib", "test")  # the extras that bring PyTorch
CPU_TORCH_INDEX = "https://download.pytorch.org/whl/cpu"
OWN_VENV_EXTRAS = {
    "rllib": "ray[rllib] pins gymnasium 1.2.2; give it a virtual environment of its own "
    "(docs: guides/train.md, 'On a Ray cluster')",
}


def _pyproject() -> str:
    return (ROOT / "pyproject.toml").read_text()


def _pyproject_hash() -> str:
    return hashlib.sha256(_pyproject().encode()).hexdigest()


def extras_of(pyproject: str) -> list[str]:
    """The optional-dependency groups ``pyproject.toml`` declares, in its order."""
    section = re.search(r"^\[project\.optional-dependencies\]\n(.*?)^\[", pyproject, re.M | re.S)
    return re.findall(r"^([A-Za-z0-9_-]+) = \[", section.group(1), re.M) if section else []


def torch_pin(pyproject: str) -> str:
    """The PyTorch requirement the test extra pins (``torch==2.13.0``): the build the suite runs."""
    found = re.search(r'"(torch==[^";]+)"', pyproject)
    if found is None:
        sys.exit("pyproject.toml's test extra must pin torch (torch==X.Y.Z), as dev.py installs it")
    return found.group(1)


def has_nvidia_gpu() -> bool:
    """Whether an NVIDIA driver is present (then pip's default CUDA build of PyTorch is wanted)."""
    return Path("/proc/driver/nvidia/version").exists() or shutil.which("nvidia-smi") is not None


def cpu_torch_install(
    extras: set[str], pin: str, *, linux: bool, gpu: bool, torch_installed: bool
) -> list[str] | None:
    """The ``pip install`` arguments of PyTorch's CPU build, or ``None`` when it is not wanted.

    Only Linux needs it (pip's macOS and Windows builds hold no CUDA), and only before the
    first install of an extra that brings PyTorch on a machine without an NVIDIA driver. The
    CPU index is an *extra* index: its ``2.13.0+cpu`` sorts above PyPI's ``2.13.0``, and
    PyTorch's own dependencies still come from PyPI.

    Example:
        >>> cpu_torch_install({"sb3"}, "torch==2.13.0", linux=True, gpu=False,
        ...                   torch_installed=False)
        ['torch==2.13.0', '--extra-index-url', 'https://download.pytorch.org/whl/cpu']
        >>> cpu_torch_install({"sb3"}, "torch==2.13.0", linux=True, gpu=True,
        ...                   torch_installed=False) is None
        True
    """
    if not extras & set(TORCH_EXTRAS) or not linux or gpu or torch_installed:
        return None
    return [pin, "--extra-index-url", CPU_TORCH_INDEX]


def reachable(url: str) -> bool:
    """Whether ``url`` answers (a closed network, or a proxy that refuses it: no)."""
    try:
        with urllib.request.urlopen(url, timeout=10):
            return True
    except OSError:
        return False


def _torch_installed() -> bool:
    found = VENV.glob("lib/python*/site-packages/torch-*.dist-info")  # Windows: Lib/site-packages
    return any(found) or any(VENV.glob("Lib/site-packages/torch-*.dist-info"))


def _installed() -> set[str]:
    """The extras installed for the current pyproject.toml (none when it changed since)."""
    try:
        stamp = json.loads(STAMP.read_text())
    except (OSError, ValueError):
        return set()
    if not isinstance(stamp, dict) or stamp.get("pyproject") != _pyproject_hash():
        return set()
    return set(stamp.get("extras", ()))


def install_banner(extras: Iterable[str], first: bool) -> str:
    """What an install says: "(once)" only the first time, a later extra goes beside the rest."""
    what = "the test tool chain" if "test" in extras else "arcadebench"
    return f"installing {what} into {VENV}{' (once)' if first else ''} ..."


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
    print(install_banner(extras, first), file=sys.stderr)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    torch = cpu_torch_install(
        set(wanted),
        torch_pin(_pyproject()),
        linux=sys.platform.startswith("linux"),
        gpu=has_nvidia_gpu(),
        torch_installed=_torch_installed(),
    )
    if torch is not None:
        if reachable(f"{CPU_TORCH_INDEX}/torch/"):
            print(
                f"no NVIDIA GPU here: installing PyTorch's CPU build ({torch[0]}, about 750 MB; "
                "pip's default CUDA build is several GB) ...",
                file=sys.stderr,
            )
        else:  # pip would retry the index for every package; its own indexes may hold the build
            torch = torch[:1]
            print(
                f"no NVIDIA GPU here, but PyTorch's CPU index ({CPU_TORCH_INDEX}) is out of reach: "
                f"installing {torch[0]} from pip's own indexes (a CUDA build of several GB where "
                "they hold no other) ...",
                file=sys.stderr,
            )
        subprocess.run([*pip, *torch], check=True)
    subprocess.run([*pip, "-e", f"{ROOT}[{','.join(wanted)}]"], check=True)
    STAMP.write_text(json.dumps({"pyproject": _pyproject_hash(), "extras": wanted}))
    if first:
        activate = BIN / ("activate.bat" if os.name == "nt" else "activate")
        print(
            f"arcadebench is installed in {VENV}; to type `arcadebench` directly, put it on your "
            f"PATH: source {activate} (or call {BIN / 'arcadebench'})",
            file=sys.stderr,
        )


def docs_command(out: Path, *extra: str) -> list[str]:
    """``sphinx-build``, strict: a warning, a broken link or cross-reference fails the build.

    ``-n`` makes every cross-reference resolve; ``-W --keep-going`` turns warnings into errors
    after listing them all. The site goes to ``out`` (``index.html``), its cache beside it.
    """
    return [
        str(PYTHON), "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
        "-d", str(out.parent / f"{out.name}-doctrees"), *extra, str(ROOT / "docs"), str(out),
    ]  # fmt: skip


def caller_paths(args: list[str], caller: Path) -> list[str]:
    """``args`` with each one that names a path where the caller stands made absolute.

    The tests run in the clone; ``tests/test_docs.py::test_x`` typed in another directory means
    that directory's file when it exists there, and the clone's otherwise.
    """
    found = []
    for arg in args:
        path = arg.split("::", 1)[0]
        if arg.startswith("-") or not path or not (caller / path).exists():
            found.append(arg)
        else:
            found.append(str((caller / path).resolve()) + arg[len(path) :])
    return found


def main(argv: list[str]) -> int:
    """Install what the call needs, then run the tests, a benchmark or the arcadebench command."""
    caller = Path.cwd()
    if argv[:1] == ["test"]:
        ensure_installed(TEST_EXTRAS)
        command = [str(PYTHON), "-m", "pytest", *caller_paths(argv[1:], caller)]
        return subprocess.run(command, cwd=ROOT).returncode
    if argv[:1] == ["install"]:
        known = extras_of(_pyproject())
        unknown = [extra for extra in argv[1:] if extra not in known]
        if not argv[1:] or unknown:
            sys.exit(
                f"usage: python3 dev.py install <extra>...; extras: {', '.join(known)}"
                + (f" (not {', '.join(unknown)})" if unknown else "")
            )
        for extra in argv[1:]:
            if extra in OWN_VENV_EXTRAS:
                sys.exit(f"dev.py install {extra}: {OWN_VENV_EXTRAS[extra]}")
        ensure_installed((*COMMAND_EXTRAS, *argv[1:]))
        print(f"installed arcadebench with {', '.join(argv[1:])} in {VENV}", file=sys.stderr)
        return 0
    if argv[:1] == ["docs"]:
        ensure_installed(DOCS_EXTRAS)
        return subprocess.run(docs_command(DOCS_OUT, *argv[1:]), cwd=ROOT).returncode
    if argv[:1] == ["perf"]:
        scripts = sorted(path.stem for path in (ROOT / "perf").glob("bench_*.py"))
        script = argv[1].removesuffix(".py") if len(argv) > 1 else ""
        if script not in scripts:
            sys.exit(f"usage: python3 dev.py perf <script> [args]; scripts: {', '.join(scripts)}")
        ensure_installed(TEST_EXTRAS)
        command = [str(PYTHON), str(ROOT / "perf" / f"{script}.py"), *argv[2:]]
    else:
        ensure_installed(COMMAND_EXTRAS)
        command = [str(PYTHON), "-m", "arcadebench", *argv]
    return subprocess.run(command, cwd=caller).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
