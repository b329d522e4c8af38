"""The package as a user gets it: built from this clone, installed in an environment of its own.

``build_sdist`` and ``build_wheel`` call setuptools' PEP 517 hooks, the ones ``python -m build
--no-isolation`` and ``pip wheel --no-build-isolation`` call, with the suite's own setuptools:
nothing is downloaded to build. By default setuptools keeps its working files beside the sources
(``build/``, ``src/arcadebench.egg-info``), where a former build's files end up in the next one (a
module deleted since is still shipped, a file once in ``SOURCES.txt`` stays in every sdist) and
two builds of one clone at once (engineers sharing a clone, ``tests/test_typing.py``'s wheel)
write the same files. A configuration file named by ``DIST_EXTRA_CONFIG`` sends them to the
build's own directory, so each build starts from the sources alone, as from a fresh clone (its
sdist has no copy of the egg-info then: ``PKG-INFO`` is the standard's metadata). setuptools
still assembles the sdist in a directory of the clone (``arcadebench-<version>/``, removed
after), so builds of one clone take turns.

``installed(wheel)`` holds a virtual environment outside the clone with the wheel and its
dependencies. Like ``tests/rllib_venv.py``'s, it lives in the user's cache (``$XDG_CACHE_HOME``
or ``~/.cache``, under ``arcadebench/``) and is made once: its name is the Python it runs and the
dependencies the wheel declares, so a change of either makes a new one (pip installs them from
the package index, a few seconds); a changed package (its files' hashes, the wheel's ``RECORD``)
is reinstalled alone. A file ``ready`` is written last, so a build cut off is made again. Runs
of the suite take turns with the environment: each holds it, by a lock, while it uses it.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from email.parser import Parser
from pathlib import Path

from testdata import REPO

CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arcadebench"


def clean_env() -> dict[str, str]:
    """The environment of a process outside the clone: nothing that would find the clone's copy."""
    drop = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV"}
    return {name: value for name, value in os.environ.items() if name not in drop}


@contextmanager
def _lock(name: str) -> Iterator[None]:
    """An exclusive lock on ``name`` among the processes of this machine."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{name}.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _hook(hook: str, source: Path, out: Path) -> Path:
    """Run setuptools' PEP 517 hook ``hook`` on ``source``, its working files under ``out``."""
    work = out / f"{hook}-work"
    work.mkdir(parents=True)
    config = work / "dist-extra.cfg"
    config.write_text(f"[build]\nbuild_base = {work / 'build'}\n[egg_info]\negg_base = {work}\n")
    code = f"import sys, setuptools.build_meta as b; print(b.{hook}(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(out)],
        cwd=source,
        env={**os.environ, "DIST_EXTRA_CONFIG": str(config)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{hook} of {source} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return out / done.stdout.splitlines()[-1]


def build_sdist(out: Path) -> Path:
    """The sdist of this clone, built in ``out``."""
    with _lock(f"build-{hashlib.sha256(str(REPO).encode()).hexdigest()[:16]}"):
        return _hook("build_sdist", REPO, out)


def build_wheel(out: Path, source: Path = REPO) -> Path:
    """The wheel of ``source`` (this clone, or an unpacked sdist), built in ``out``."""
    return _hook("build_wheel", source, out)


def wheel_metadata(wheel: Path) -> dict[str, list[str]]:
    """The wheel's ``METADATA`` fields, each with its values in order (most fields have one)."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        message = Parser().parsestr(archive.read(name).decode())
    return {key: message.get_all(key, []) for key in dict.fromkeys(message.keys())}


def _digest(wheel: Path) -> str:
    """The package's contents: its ``RECORD`` (every file's SHA-256), not the zip's timestamps."""
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/RECORD")]
        return hashlib.sha256(archive.read(name)).hexdigest()


def _pip(venv: Path, *args: str) -> None:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", *args],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cannot install into {venv}: {done.stderr[-3000:]}")


@contextmanager
def installed(wheel: Path) -> Iterator[Path]:
    """The ``bin`` directory of an environment outside the clone holding ``wheel``, held."""
    requires = sorted(wheel_metadata(wheel).get("Requires-Dist", []))
    key = hashlib.sha256("\n".join([sys.version, *requires]).encode()).hexdigest()[:16]
    name = f"package-py{sys.version_info.major}{sys.version_info.minor}-{key}"
    venv, digest = CACHE / name, _digest(wheel)
    with _lock(name):
        if not (venv / "ready").exists():
            shutil.rmtree(venv, ignore_errors=True)  # a build that was cut off
            base = Path(getattr(sys, "_base_executable", sys.executable))
            subprocess.run([str(base), "-m", "venv", str(venv)], check=True, timeout=300)
            _pip(venv, str(wheel))
            (venv / "installed").write_text(digest)
            (venv / "ready").write_text("\n".join(requires) + "\n")  # last: the build is complete
        elif not (venv / "installed").exists() or (venv / "installed").read_text() != digest:
            (venv / "installed").unlink(missing_ok=True)  # until the new package is in
            _pip(venv, "--no-deps", "--force-reinstall", str(wheel))
            (venv / "installed").write_text(digest)
        yield venv / "bin"
