"""RLlib's own virtual environment, made once by the tests and reused (warm) afterwards.

``ray[rllib]`` 2.54-2.60 pins ``gymnasium==1.2.2``, while the suite's environment keeps the
newest gymnasium (1.4): the package must work on both. So the RLlib path is tested in an
environment of its own: arcadebench installed from this clone (editable, so it always runs the
code under test), ``ray[rllib]`` and gymnasium at RLlib's pins, and the same CPU build of torch
as the suite's (``torch==2.13.0``: the build this project's machines keep on disk; an unpinned
torch would download a multi-gigabyte CUDA build).

It lives in the user's cache (``$XDG_CACHE_HOME`` or ``~/.cache``, under ``arcadebench/``), named
after what it holds (Python, the pins, the clone and its dependencies), so a change of any of
them makes a new one. A file ``ready`` is written last, so a build cut off is made again. The
first build takes about a minute (pip, from the package registry and the machine's wheels);
later runs reuse it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from testdata import REPO

RAY = "2.60.0"
GYMNASIUM = "1.2.2"  # ray[rllib]==2.60.0's pin
TORCH = "2.13.0"  # the suite's CPU build (pyproject.toml, [test])
REQUIREMENTS = (f"ray[rllib]=={RAY}", f"gymnasium=={GYMNASIUM}", f"torch=={TORCH}")


def _key() -> str:
    """What the environment holds: a change of any of it makes a new one."""
    pyproject = (REPO / "pyproject.toml").read_text()
    dependencies = re.search(r"^dependencies = \[(.*?)\]", pyproject, re.DOTALL | re.MULTILINE)
    found = dependencies.group(1) if dependencies else ""
    text = "\n".join([sys.version, str(REPO), *REQUIREMENTS, found])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def rllib_venv() -> Path:
    """The ``bin`` directory of RLlib's environment, made if missing."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "arcadebench"
    venv = cache / f"rllib-py{sys.version_info.major}{sys.version_info.minor}-{_key()}"
    if (venv / "ready").exists():
        return venv / "bin"
    shutil.rmtree(venv, ignore_errors=True)  # a build that was cut off
    cache.mkdir(parents=True, exist_ok=True)
    base = Path(getattr(sys, "_base_executable", sys.executable))
    subprocess.run([str(base), "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "-e", str(REPO)]
        + list(REQUIREMENTS),
        capture_output=True,
        text=True,
        timeout=1200,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cannot build RLlib's environment: {done.stderr[-3000:]}")
    (venv / "ready").write_text("\n".join(REQUIREMENTS) + "\n")  # last: the build is complete
    return venv / "bin"
