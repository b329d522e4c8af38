"""The package as published: its licence and citation in step with the code and the specs."""

from __future__ import annotations

import importlib.metadata
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
