"""The package as published: its licence and citation in step with the code and the specs."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys
from pathlib import Path

import yaml

import arcadebench
from arcadebench.specs import load_spec
from arcadebench.specs.loader import list_specs

ROOT = Path(__file__).resolve().parents[1]


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
