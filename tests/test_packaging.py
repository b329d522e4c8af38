"""The package as published: its sdist and wheel, built from this clone, and what they hold; the
wheel installed outside the clone, running the README's main job; its metadata, licence, citation
and changelog in step with the code and the specs.

The builds and the environment they are installed in are ``tests/package_venv.py``'s: offline,
with the suite's setuptools, the environment made once (pip installs the dependencies from the
package index) and the package alone reinstalled when it changes.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import NamedTuple

import pytest
import yaml
from package_venv import build_sdist, build_wheel, clean_env, installed, wheel_metadata

import arcadebench
from arcadebench.specs import load_spec
from arcadebench.specs.loader import list_specs

ROOT = Path(__file__).resolve().parents[1]
VERSION = arcadebench.__version__
# the licence files the metadata names (pyproject.toml, license-files), in the wheel's dist-info
LICENCES = ("LICENSE", "src/arcadebench/data/atari5_dataset.LICENSE")


class Dists(NamedTuple):
    sdist: Path
    wheel: Path


@pytest.fixture(scope="module")
def dists(tmp_path_factory: pytest.TempPathFactory) -> Dists:
    out = tmp_path_factory.mktemp("dist")
    return Dists(build_sdist(out), build_wheel(out))


def _package_files() -> set[str]:
    """Every file of the package in the clone, as ``arcadebench/...``: all of them ship."""
    src = ROOT / "src"
    return {
        path.relative_to(src).as_posix()
        for path in (src / "arcadebench").rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def _wheel_files(wheel: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(wheel) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def test_the_sdist_holds_the_package_its_licences_citation_and_changelog(dists):
    with tarfile.open(dists.sdist) as archive:
        names = [member.name for member in archive.getmembers() if member.isfile()]
    top = f"arcadebench-{VERSION}/"
    assert all(name.startswith(top) for name in names), names
    files = {name.removeprefix(top) for name in names}
    assert {"LICENSE", "CITATION.cff", "README.md", "CHANGELOG.md"} <= files
    package = {f"src/{name}" for name in _package_files()}
    assert {"src/arcadebench/specs/atari5.yaml", "src/arcadebench/data/REFERENCES.md"} <= package
    # nothing else: no tests (a few of the suite's files would test nothing), no caches
    standard = {"PKG-INFO", "setup.cfg", "pyproject.toml", "MANIFEST.in"}
    assert files == {"LICENSE", "CITATION.cff", "README.md", "CHANGELOG.md"} | standard | package


def test_the_wheel_holds_every_file_of_the_package_and_the_licences(dists):
    files = _wheel_files(dists.wheel)
    package = _package_files()
    assert {"arcadebench/py.typed", "arcadebench/specs/saber.yaml"} <= package
    assert {"arcadebench/data/atari5_dataset.csv", "arcadebench/data/REFERENCES.md"} <= package
    info = f"arcadebench-{VERSION}.dist-info/"
    licences = {f"{info}licenses/{path}" for path in LICENCES}
    metadata = {f"{info}{name}" for name in ("METADATA", "WHEEL", "RECORD")}
    entry_points = {f"{info}entry_points.txt", f"{info}top_level.txt"}
    assert set(files) == package | licences | metadata | entry_points
    for path in LICENCES:
        assert files[f"{info}licenses/{path}"] == (ROOT / path).read_bytes()
    assert files[f"{info}entry_points.txt"].decode().split() == [
        "[console_scripts]",
        "arcadebench",
        "=",
        "arcadebench.cli:main",
    ]


def test_a_wheel_built_from_the_sdist_is_the_one_built_from_the_clone(dists, tmp_path):
    # so the sdist holds everything the package is made of: pip, conda-forge and the like build
    # their own wheel from it
    with tarfile.open(dists.sdist) as archive:
        # the data filter where Python has it (3.10.12+, 3.11.4+); the archive is ours anyway
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(tmp_path, **safe)
    (source,) = tmp_path.glob("arcadebench-*")
    rebuilt = _wheel_files(build_wheel(tmp_path / "dist", source=source))
    assert rebuilt == _wheel_files(dists.wheel)


def test_the_metadata_names_authors_licence_pythons_topic_and_keywords(dists):
    metadata = wheel_metadata(dists.wheel)
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert metadata["Name"] == ["arcadebench"] and metadata["Version"] == [VERSION]
    assert metadata["Author"] == [author["name"] for author in citation["authors"]]
    assert metadata["License-Expression"] == [citation["license"]]
    assert metadata["License-File"] == list(LICENCES)
    keywords = metadata["Keywords"][0].split(",")
    assert set(citation["keywords"]) <= set(keywords), keywords
    classifiers = metadata["Classifier"]
    assert "Topic :: Scientific/Engineering :: Artificial Intelligence" in classifiers
    assert "Typing :: Typed" in classifiers  # it ships py.typed (tests/test_typing.py)
    assert not [c for c in classifiers if c.startswith("License ::")]  # the expression says it
    # the Python versions it claims: from Requires-Python's oldest, one after the other, the
    # suite's among them (the wheel runs there: the test below)
    (requires,) = metadata["Requires-Python"]
    oldest = re.fullmatch(r">=3\.(\d+)", requires)
    assert oldest, requires
    minors = [
        int(c.rsplit(".", 1)[1])
        for c in classifiers
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    first = int(oldest.group(1))
    assert minors == list(range(first, first + len(minors))), minors
    assert sys.version_info.minor in minors, minors
    assert metadata["Description-Content-Type"] == ["text/markdown"]


def test_the_installed_wheel_runs_the_main_job_outside_the_clone(dists, tmp_path):
    work = tmp_path / "work"  # the directory the commands run in: not the clone
    work.mkdir()
    assert ROOT not in work.resolve().parents
    with installed(dists.wheel) as bin_dir:
        code = "import arcadebench; print(arcadebench.__version__); print(arcadebench.__file__)"
        imported = subprocess.run(
            [str(bin_dir / "python"), "-c", code],
            cwd=work,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert imported.returncode == 0, imported.stderr
        version, module = imported.stdout.split()
        assert version == VERSION
        assert Path(module).resolve().is_relative_to(bin_dir.parent.resolve()), module
        out = tmp_path / "results"
        command = ["run", "atari5", "--games", "Pong", "--agent", "random", "--episodes", "1"]
        run = subprocess.run(
            [str(bin_dir / "arcadebench"), *command, "--out", str(out)],
            cwd=work,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "atari5 v1" in run.stdout and "pong" in run.stdout
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["spec"]["name"] == "atari5" and results["provenance"]["arcadebench"] == VERSION
    assert results["algorithms"]["random"]["games"]["pong"]["episodes"] == 1


def test_the_changelog_has_this_version():
    # released: "## [0.1.0] - 2026-12-01"; before its release, "Unreleased" says what it becomes
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    released = re.search(rf"^## \[{re.escape(VERSION)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", text, re.M)
    unreleased = re.search(r"^## \[Unreleased\]\n\n(.*)$", text, re.M)
    assert unreleased, "CHANGELOG.md has no '## [Unreleased]' section"
    assert released or f"published as {VERSION}" in unreleased.group(1), (
        f"CHANGELOG.md has no section of {VERSION}, the package's version"
    )


def test_the_citation_names_this_version_and_every_protocols_paper():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0" and citation["version"] == arcadebench.__version__
    metadata = importlib.metadata.metadata("arcadebench")
    assert citation["license"] == metadata.get("License-Expression", metadata.get("License"))
    cited = {reference["url"] for reference in citation["references"]}
    for name in list_specs():
        spec = load_spec(name)
        if spec.platform != "none":  # a spec of scores only cites the paper of its protocol
            assert spec.url in cited, f"CITATION.cff does not cite {name}'s paper ({spec.url})"


def test_the_licence_is_the_one_the_metadata_names():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "atari5_dataset.LICENSE" in text


def test_make_sb3_vec_env_is_at_the_top_imported_on_first_use():
    code = (
        "import sys, arcadebench; heavy = ('torch', 'stable_baselines3'); "
        "before = [m in sys.modules for m in heavy]; "
        "from arcadebench import make_sb3_vec_env; "
        "from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env as defined; "
        "print(before, make_sb3_vec_env is defined, 'make_sb3_vec_env' in dir(arcadebench))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[False,", "False]", "True", "True"]
