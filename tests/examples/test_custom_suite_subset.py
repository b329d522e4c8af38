"""examples/custom_suite_subset.py runs as a user would run it and builds a loadable MySuite "
"spec."""

from __future__ import annotations

import subprocess
import sys

import pytest
from testdata import REPO

import arcadebench

EXAMPLE = REPO / "examples" / "custom_suite_subset.py"


def test_custom_suite_example_builds_a_spec_and_scores_a_new_agent(tmp_path):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines[:4]] == [
        "MySuite-1",
        "MySuite-3",
        "MySuite-6",
        "MySuite-3-Val",
    ]
    assert "new agent: MySuite-3 estimate of the 12-task median" in done.stdout
    spec = arcadebench.load_spec(str(tmp_path / "mysuite.yaml"))
    assert spec.platform == "none" and len(spec.games) == 12
    three, one = spec.subsets["MySuite-3"], spec.subsets["MySuite-1"]
    assert len(three.games) == 3 and set(one.games) <= set(
        three.games
    )  # nested, as Atari-1 in Atari-3
    assert set(spec.subsets["MySuite-3-Val"].games).isdisjoint(three.games)
    assert set(three.games) <= set(spec.subsets["MySuite-6"].games)
    assert all(c >= 0 for s in spec.subsets.values() for c in s.coefficients)


def test_example_estimate_equals_the_formula_and_is_close_to_the_truth(tmp_path):
    sys.path.insert(0, str(EXAMPLE.parent))
    try:
        import custom_suite_subset
    finally:
        sys.path.remove(str(EXAMPLE.parent))
    numbers = custom_suite_subset.main(["--out", str(tmp_path)])
    assert numbers["estimate"] == pytest.approx(numbers["by_hand"], rel=1e-9)
    assert abs(numbers["estimate"] - numbers["true_median"]) / numbers["true_median"] < 0.5
