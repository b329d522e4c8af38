"""The guard where inputs meet the scorer: another protocol's results or logs are never scored.

Every path says which two specs met and points at `arcadebench diff`: a results JSON or a log of
another spec is refused, a directory's logs of other specs are skipped with a warning.
"""

from __future__ import annotations

import json
import re

import pytest
from report_helpers import write_log, write_results

import arcadebench
from arcadebench.benchmarks.scoring.inputs import spec_of_log
from arcadebench.cli import main
from arcadebench.errors import InputError, NoScores, OtherSpec
from arcadebench.records import LogWarning

SABER, ATARI100K = arcadebench.load_spec("saber"), arcadebench.load_spec("atari100k")


def test_a_results_file_of_another_spec_is_refused(tmp_path):
    results = write_results(tmp_path / "saber.json", "saber", {"x": {"pong": [1.0, 2.0]}}, reps=0)
    with pytest.raises(OtherSpec) as error:
        arcadebench.score("atari100k", results, reps=0)
    assert str(error.value) == (
        f"{results}:3: was scored with spec 'saber' v2 ({SABER.short_hash}), not 'atari100k' v1 "
        f"({ATARI100K.short_hash}); results of two protocols are never scored together: score "
        "it with its own spec (`arcadebench score saber ...`), and see how the two differ with "
        "`arcadebench diff saber atari100k`"
    )
    assert arcadebench.score("saber", results, reps=0).algorithms["x"]["games"]["pong"]["runs"] == [
        1.0,
        2.0,
    ]  # with its own spec it is re-scored as before


def test_a_results_file_of_another_version_or_without_a_spec_is_refused(tmp_path):
    path = write_results(tmp_path / "old.json", "saber", {"x": {"pong": 1.0}}, reps=0)
    data = json.loads(path.read_text())
    data["spec"].update(version=1, hash="sha256:" + "0" * 64)
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="another version of the 'saber' spec") as error:
        arcadebench.score("saber", path, reps=0)
    assert not isinstance(error.value, OtherSpec)
    assert "(v1, 000000000000; this one is v2" in str(error.value)
    assert "`arcadebench diff <that file> saber`" in str(error.value)
    del data["spec"]
    path.write_text(json.dumps(data))
    with pytest.raises(InputError, match="a results file must name the spec it was scored with"):
        arcadebench.score("saber", path, reps=0)


def test_a_log_of_another_spec_named_on_its_own_is_refused(tmp_path):
    log = write_log(tmp_path / "dqn", "saber", "dqn", "pong", "0", [1.0, 2.0], 1000)
    assert spec_of_log(log) == "saber" and spec_of_log(tmp_path / "missing.jsonl") is None
    with pytest.raises(OtherSpec) as error:
        arcadebench.score("hwr", log, reps=0)
    assert str(error.value) == (
        f"{log}:2: was written for spec 'saber', not 'hwr'; score it with that spec "
        "(`arcadebench score saber ...`); see how the two protocols differ with "
        "`arcadebench diff saber hwr`"
    )


def test_a_directory_skips_other_specs_logs_and_says_so(tmp_path):
    write_log(tmp_path / "dqn", "saber", "dqn", "pong", "0", [1.0, 3.0], 1000)
    write_log(tmp_path / "dqn", "hwr", "dqn", "pong", "0", [5.0], 1000)
    write_log(tmp_path / "ppo", "hwr", "ppo", "pong", "0", [7.0], 1000)
    message = (
        f"{tmp_path}: not scoring 2 logs of other specs (hwr: 2): results of two protocols are "
        "never scored together; score them with their own spec, and see how the protocols "
        "differ with `arcadebench diff hwr saber`"
    )
    with pytest.warns(LogWarning, match=re.escape(message)):
        results = arcadebench.score("saber", tmp_path, reps=0)
    assert list(results.algorithms) == ["dqn"]
    assert results.algorithms["dqn"]["games"]["pong"]["runs"] == [2.0]  # (1 + 3) / 2
    with pytest.raises(NoScores) as error:
        arcadebench.score("atari5", tmp_path, reps=0)
    assert str(error.value).endswith(
        "has no logs of the 'atari5' spec (3 of other specs); they were written for hwr: 2, "
        "saber: 1: score them with their own spec, and see how the protocols differ with "
        "`arcadebench diff hwr atari5` and `arcadebench diff saber atari5`"
    )


def test_the_score_command_refuses_in_one_line(tmp_path, capsys):
    results = write_results(tmp_path / "saber.json", "saber", {"x": {"pong": 1.0}}, reps=0)
    assert main(["score", "atari100k", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"arcadebench: error: {results}:3: was scored with spec 'saber' v2")
    assert err.rstrip().endswith("`arcadebench diff saber atari100k`")
