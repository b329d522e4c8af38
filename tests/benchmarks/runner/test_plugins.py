"""A kind of saved policy added by an installed package, with no arcadebench file changed.

A small package of the suite's own (a NumPy linear policy saved as ``.npz``) declares its kind
in the ``arcadebench.agents`` entry-point group and is installed with pip into a temporary
``--target`` directory, put on ``PYTHONPATH`` for the command line, its workers and Ray (never
into ``.venv``). ``arcadebench run --agent npz:<file>`` then evaluates a saved file of that kind
in batches, its spaces checked before anything is played, on local workers and on Ray.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from log_helpers import played
from testdata import PYTHONPATH_WITH_TESTS

PACKAGE = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "arcadebench-npz-policy"
        version = "0.1.0"
        dependencies = ["numpy"]

        [project.entry-points."arcadebench.agents"]
        npz = "npz_policy:KIND"
    """,
    "npz_policy/__init__.py": '''
        """A linear policy over ALE's RAM, saved with numpy.savez: ``npz:<file>``."""

        from pathlib import Path

        import gymnasium as gym
        import numpy as np


        class LinearPolicy:
            """Greedy over ``weights @ ram + bias``: one action per row, in one call."""

            def __init__(self, path):
                self.path = str(path)
                self.name = Path(path).stem
                with np.load(path) as saved:
                    self.weights, self.bias = saved["weights"], saved["bias"]
                actions, size = self.weights.shape
                self.observation_space = gym.spaces.Box(0, 255, (size,), np.uint8)
                self.action_space = gym.spaces.Discrete(actions)
                self.env_kwargs = {"obs_type": "ram"}

            def load(self, threads=1):
                """Nothing to load: the weights were read with the file."""

            def act_batch(self, obs, rngs):
                return np.argmax(obs.astype(np.float64) @ self.weights.T + self.bias, axis=1)


        class NpzKind:
            prefix = "npz"
            usage = "npz:<file.npz>"
            framework = None

            def read(self, reference, device):
                return LinearPolicy(reference.removeprefix("npz:"))


        KIND = NpzKind()
    ''',
}


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The package, installed with pip into a directory of its own (not the venv)."""
    root = tmp_path_factory.mktemp("plugin")
    source, target = root / "source", root / "target"
    for name, text in PACKAGE.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
         "--target", str(target), str(source)],
        check=True, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return target


def policy(folder: Path, actions: int = 18) -> Path:
    """A saved linear policy over the RAM's 128 bytes: the file the kind reads."""
    rng = np.random.default_rng(0)
    path = folder / f"linear{actions}.npz"
    np.savez(path, weights=rng.normal(size=(actions, 128)), bias=np.zeros(actions))
    return path


def run(installed: Path, out: Path, agent: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), PYTHONPATH_WITH_TESTS])}
    return subprocess.run(
        [sys.executable, "-m", "arcadebench", "run", "saber", "--games", "Pong", "--agent",
         agent, "--episodes", "4", "--envs", "2", "--workers", "2", "--out", str(out),
         "--reps", "0", "--progress", "off", *extra],
        env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def test_a_kind_from_an_installed_package_is_played_in_batches_on_local_workers(
    installed, tmp_path
):
    out = tmp_path / "local"
    done = run(installed, out, f"npz:{policy(tmp_path)}")
    assert done.returncode == 0, done.stderr[-3000:]
    episodes = played(out)[("pong", "0")]
    assert [e[0] for e in episodes] == [0, 1, 2, 3]  # indices: played in lanes
    log = out / "linear18" / "saber" / "pong" / "0.jsonl"
    header = json.loads(log.read_text().splitlines()[0])
    assert header["algorithm"] == "linear18"  # named after its file, as saved policies are
    assert "linear18" in done.stdout


def test_a_plugin_policy_of_other_spaces_is_refused_before_anything_is_played(installed, tmp_path):
    out = tmp_path / "refused"
    done = run(installed, out, f"npz:{policy(tmp_path, actions=6)}")
    assert done.returncode == 2
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("arcadebench: error:") and "6 actions" in line
    assert not list(out.rglob("*.jsonl"))


def test_a_kind_from_an_installed_package_is_played_on_ray(installed, tmp_path):
    pytest.importorskip("ray")
    local = tmp_path / "local"
    assert run(installed, local, f"npz:{policy(tmp_path)}").returncode == 0
    on_ray = tmp_path / "ray"
    done = run(installed, on_ray, f"npz:{policy(tmp_path)}", "--backend", "ray")
    assert done.returncode == 0, done.stderr[-3000:]
    assert played(on_ray) == played(local)  # the same episodes, whatever the backend
