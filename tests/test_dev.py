"""``dev.py``: the clone's own command, run where the user stands, and its PyTorch choice.

The commands run ``dev.py`` itself, copied into a clone of its own whose ``.venv`` is this
interpreter's (its ``bin`` and ``lib``) with an install stamp saying everything is installed, so
that nothing is installed and the suite's environment is never written to.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from testdata import REPO


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev", REPO / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


dev = _dev()


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clone holding dev.py and pyproject.toml, its .venv this interpreter's, all installed."""
    root = tmp_path_factory.mktemp("clone")
    shutil.copy(REPO / "dev.py", root / "dev.py")
    shutil.copy(REPO / "pyproject.toml", root / "pyproject.toml")
    venv = root / ".venv"
    venv.mkdir()
    for part in ("bin", "lib"):
        (venv / part).symlink_to(Path(sys.prefix) / part)
    shutil.copy(Path(sys.prefix) / "pyvenv.cfg", venv / "pyvenv.cfg")
    pyproject = hashlib.sha256((root / "pyproject.toml").read_bytes()).hexdigest()
    stamp = {"pyproject": pyproject, "extras": ["report", "sb3", "test"]}
    (venv / ".arcadebench-installed").write_text(json.dumps(stamp))
    return root


def _call(clone: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python3 <clone>/dev.py ARGS`` typed in ``cwd``, as a user calls it from elsewhere."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, str(clone / "dev.py"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


# -- the caller's directory --------------------------------------------------------------------
def test_a_relative_path_is_read_where_the_user_stands(clone, tmp_path):
    # `python3 ../ab/dev.py score atari5 pong.csv`, run from another directory
    (tmp_path / "pong.csv").write_text("game,score\nPong,-21\n")
    done = _call(clone, tmp_path, "score", "atari5", "pong.csv")
    assert done.returncode == 0, done.stderr
    # atari5's Pong: HNS (-21 - -20.71) / (14.6 - -20.71) = -0.82 %
    assert "-0.82%" in done.stdout


def test_an_agent_module_and_the_default_results_are_the_callers(clone, tmp_path):
    (tmp_path / "my_policy.py").write_text("def noop(obs):\n    return 0\n")
    done = _call(
        clone, tmp_path, "run", "saber", "--games", "Pong", "--agent", "my_policy:noop",
        "--episodes", "1", "--progress", "off",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "results" / "results.json").exists()
    assert not (clone / "results").exists()
    assert "logs and results.json in results" in done.stderr


def test_test_arguments_name_the_callers_files_when_they_exist_there(tmp_path):
    (tmp_path / "test_mine.py").write_text("")
    found = dev.caller_paths(
        ["-q", "test_mine.py::test_a", "tests/test_docs.py", "-k", "x"], tmp_path
    )
    mine = str((tmp_path / "test_mine.py").resolve())
    assert found == ["-q", f"{mine}::test_a", "tests/test_docs.py", "-k", "x"]


# -- installs ----------------------------------------------------------------------------------
def test_pytorch_is_the_cpu_build_without_an_nvidia_gpu_on_linux():
    pin = dev.torch_pin((REPO / "pyproject.toml").read_text())
    assert pin == "torch==2.13.0"  # the test extra's pin: the build CI keeps on disk
    cpu = [pin, "--extra-index-url", "https://download.pytorch.org/whl/cpu"]
    install = dev.cpu_torch_install
    assert install({"report", "sb3"}, pin, linux=True, gpu=False, torch_installed=False) == cpu
    assert install({"test"}, pin, linux=True, gpu=False, torch_installed=False) == cpu
    # pip's default where the CUDA build is wanted or there is no choice; nothing once installed
    assert install({"sb3"}, pin, linux=True, gpu=True, torch_installed=False) is None
    assert install({"sb3"}, pin, linux=False, gpu=False, torch_installed=False) is None
    assert install({"sb3"}, pin, linux=True, gpu=False, torch_installed=True) is None
    assert install({"report", "onnx"}, pin, linux=True, gpu=False, torch_installed=False) is None


def test_install_names_the_extras_it_knows(clone, tmp_path):
    extras = dev.extras_of((REPO / "pyproject.toml").read_text())
    assert {"report", "sb3", "rllib", "ray", "onnx", "test"} <= set(extras)
    done = _call(clone, tmp_path, "install", "sb4")
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"usage: python3 dev.py install <extra>...; extras: {', '.join(extras)} (not sb4)"
    )
    done = _call(clone, tmp_path, "install", "rllib")
    assert done.returncode == 1
    assert "give it a virtual environment of its own" in done.stderr


def test_install_of_what_is_installed_does_nothing(clone, tmp_path):
    done = _call(clone, tmp_path, "install", "sb3")
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == f"installed arcadebench with sb3 in {clone / '.venv'}"


@pytest.mark.long
def test_the_sb3_install_of_a_fresh_clone_stays_within_1_6_gb(tmp_path):
    """The README's SB3 step on a machine without a GPU (6.0 GB with CUDA's build)."""
    if dev.has_nvidia_gpu():
        pytest.skip("this machine has an NVIDIA GPU: pip's CUDA build is the one wanted")
    fresh = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(fresh)], check=True, timeout=300)
    shutil.copy(REPO / "dev.py", fresh / "dev.py")  # the clone is of the last commit
    base = Path(getattr(sys, "_base_executable", sys.executable))
    for step in (["specs"], ["install", "sb3"]):
        done = subprocess.run(
            [str(base), "dev.py", *step], cwd=fresh, capture_output=True, text=True, timeout=1800
        )
        assert done.returncode == 0, done.stderr[-3000:]
    size = sum(p.lstat().st_size for p in (fresh / ".venv").rglob("*") if not p.is_dir())
    assert size <= 1.6e9, f"{size / 1e9:.2f} GB"
    torch = subprocess.run(
        [str(fresh / ".venv" / "bin" / "python"), "-c", "import torch; print(torch.version.cuda)"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert torch.stdout.strip() == "None"  # the CPU build


def test_only_the_first_install_says_once():
    assert dev.install_banner(["report"], first=True).endswith("(once) ...")
    assert "(once)" not in dev.install_banner(["sb3"], first=False)
    assert dev.install_banner(["test"], first=False).startswith("installing the test tool chain")
