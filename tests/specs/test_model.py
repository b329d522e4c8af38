"""The typed spec (`specs/model.py`): what a `Spec` shows when printed."""

from __future__ import annotations

import pytest

from arcadebench.specs import list_specs, load_spec


def test_a_spec_prints_as_one_line_naming_it_by_version_and_hash():
    saber = load_spec("saber")
    assert repr(saber) == str(saber) == "Spec('saber' v2, sha256:e8f835bcbf3b, atari, 61 games)"
    assert saber.short_hash == "e8f835bcbf3b"
    assert repr(load_spec("sonic")).endswith(", retro, 58 levels)")


@pytest.mark.parametrize("name", list_specs())
def test_every_spec_and_a_list_of_them_print_short(name):
    spec = load_spec(name)
    text = repr([spec, spec])  # print(report.closest) and the like print lists of them
    assert "\n" not in text and len(text) < 2 * 70
