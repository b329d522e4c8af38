"""A run's numbers belong to the agent that played them: its identity in the logs, checked on rerun.

A model retrained at the same path and a module edited between two evaluations are other agents
under the same name: the runner refuses to report or resume their logs as one run, in one line,
and ``--overwrite`` starts the name afresh. The models are real SB3 ones, the runs real.
"""

from __future__ import annotations

import hashlib
import json
import warnings

import pytest
from log_helpers import records
from stable_baselines3 import PPO
from testdata import DATA
from torch_helpers import one_torch_thread  # noqa: F401 - a module fixture

import arcadebench
from arcadebench.benchmarks.report import load_report_data
from arcadebench.benchmarks.training.sb3 import make_sb3_vec_env
from arcadebench.cli import main
from arcadebench.errors import ArcadebenchError

SPEC = str(DATA / "specs" / "run_budget.yaml")  # 18 actions, episodes capped at 2,000 frames


def save_model(path, seed: int) -> str:
    """An untrained PPO CnnPolicy of the 18 actions, saved at ``path``: its sha256."""
    envs = make_sb3_vec_env(SPEC, "pong", 1, log_dir=False)
    PPO("CnnPolicy", envs, n_steps=64, batch_size=64, device="cpu", seed=seed).save(path)
    envs.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(out, *arguments, capsys):
    status = main(
        ["run", SPEC, "--games", "pong", "--episodes", "1", "--reps", "0", "--progress", "off",
         "--out", str(out), "--envs", "1", "--workers", "1", *arguments]
    )  # fmt: skip
    return status, capsys.readouterr()


def header(out, agent: str) -> dict:
    return records(out / agent / "runbudget" / "pong" / "0.jsonl")[0]


def test_a_model_retrained_at_the_same_path_is_refused_in_one_line(tmp_path, capsys):
    model = tmp_path / "ppo_pong.zip"
    first = save_model(model, seed=0)
    status, out = run(tmp_path / "out", "--agent", f"sb3:PPO:{model}", capsys=capsys)
    assert status == 0, out.err
    logged = header(tmp_path / "out", "ppo_pong")
    assert logged["agent"] == {
        "kind": "saved",
        "name": "ppo_pong",
        "reference": f"sb3:PPO:{model}",
        "learns": False,
        "file": str(model),
        "sha256": first,
    }
    assert {"torch", "stable_baselines3"} <= set(logged["versions"])
    before = (tmp_path / "out" / "results.json").read_bytes()

    second = save_model(model, seed=1)  # retrained: same path, other weights
    assert second != first
    for extra in ((), ("--resume",)):
        status, out = run(tmp_path / "out", "--agent", f"sb3:PPO:{model}", *extra, capsys=capsys)
        assert status == 2
        (line,) = out.err.strip().splitlines()
        assert f"sha256 {first[:12]}" in line and f"sha256 {second[:12]}" in line, line
        assert "another `--out`, or `--overwrite`" in line, line
        assert (tmp_path / "out" / "results.json").read_bytes() == before  # nothing lost

    status, out = run(tmp_path / "out", "--agent", f"sb3:PPO:{model}", "--overwrite", capsys=capsys)
    assert status == 0, out.err
    assert header(tmp_path / "out", "ppo_pong")["agent"]["sha256"] == second
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["provenance"]["agent_identity"]["sha256"] == second


def test_an_edited_module_agent_is_another_agent(tmp_path, monkeypatch):
    module = tmp_path / "edited_agents.py"
    module.write_text("def act(obs):\n    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    options = {"games": "pong", "episodes": 1, "reps": 0, "progress": "off", "workers": 1}
    out = tmp_path / "out"
    arcadebench.evaluate("edited_agents:act", SPEC, log_dir=out, **options)
    logged = header(out, "edited_agents_act")["agent"]
    assert logged["kind"] == "module" and logged["file"] == str(module)
    assert logged["sha256"] == hashlib.sha256(module.read_bytes()).hexdigest()
    scored = arcadebench.score(SPEC, [str(out)], reps=0)  # scored from the logs alone
    assert scored.provenance["agents"] == {"edited_agents:act [frozen policy]": [logged]}

    module.write_text("def act(obs):\n    return 1\n")
    with pytest.raises(ArcadebenchError, match="was played by module edited_agents:act") as error:
        arcadebench.evaluate("edited_agents:act", SPEC, log_dir=out, **options)
    assert "\n" not in str(error.value)


def test_overwrite_removes_the_names_logs_only(tmp_path):
    options = {"games": "pong", "reps": 0, "progress": "off", "workers": 1}
    out = tmp_path / "out"
    arcadebench.evaluate("random", SPEC, log_dir=out, episodes=2, **options)
    arcadebench.evaluate("noop", SPEC, log_dir=out, episodes=1, **options)
    kept = (out / "noop" / "runbudget" / "pong" / "0.jsonl").read_bytes()
    results = arcadebench.evaluate(
        "random", SPEC, log_dir=out, episodes=1, overwrite=True, **options
    )
    logged = records(out / "random" / "runbudget" / "pong" / "0.jsonl")
    assert sum(r["kind"] == "episode" for r in logged) == 1  # the two before are gone
    assert (out / "noop" / "runbudget" / "pong" / "0.jsonl").read_bytes() == kept
    assert set(results.algorithms) == {"random", "noop"}
    with pytest.raises(ArcadebenchError, match="`overwrite` and `resume` are alternatives"):
        arcadebench.evaluate(
            "random", SPEC, log_dir=out, episodes=1, overwrite=True, resume=True, **options
        )


def test_other_versions_are_noted_not_refused(tmp_path):
    options = {"games": "pong", "episodes": 1, "reps": 0, "progress": "off", "workers": 1}
    out = tmp_path / "out"
    arcadebench.evaluate("random", SPEC, log_dir=out, **options)
    log = out / "random" / "runbudget" / "pong" / "0.jsonl"
    lines = log.read_text().splitlines()
    first = json.loads(lines[0])
    first["versions"]["numpy"] = "0.0.1"
    log.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        arcadebench.evaluate("random", SPEC, log_dir=out, **options)
    notes = [str(w.message) for w in caught if "numpy 0.0.1" in str(w.message)]
    assert notes and "this run uses" in notes[0]


def test_a_name_labels_the_run_in_its_logs_and_results(tmp_path):
    options = {"games": "pong", "episodes": 1, "reps": 0, "progress": "off", "workers": 1}
    out = tmp_path / "out"
    results = arcadebench.evaluate("random", SPEC, log_dir=out, name="Random (ε=0)", **options)
    assert list(results.algorithms) == ["Random (ε=0)"]
    logged = header(out, "Random_0")
    assert logged["algorithm"] == "Random (ε=0)" and logged["agent"]["name"] == "random"
    rescored = arcadebench.score(SPEC, [str(out)])
    assert list(rescored.algorithms) == ["Random (ε=0)"]
    assert "Random\\\\($\\varepsilon$=0)" in rescored.to_latex()  # its column's header
    data = load_report_data([out / "Random_0"], spec=SPEC, reps=0)  # from the logs alone
    assert [e.name for e in data.entries if e.kind == "result"] == ["Random (ε=0)"]
    for bad in ("", "two\nlines", "x" * 81):
        with pytest.raises(ArcadebenchError, match="`name` must be a label"):
            arcadebench.evaluate("random", SPEC, log_dir=out, name=bad, **options)


def test_a_frozen_policy_under_a_protocol_of_training_episodes_is_set_apart(tmp_path, monkeypatch):
    """SABER scores a learning run's training episodes; a frozen policy's are an evaluation."""
    (tmp_path / "frozen_agents.py").write_text(
        "def act(obs):\n    return 0\n\n\n"
        "class Learner:\n    def act(self, obs):\n        return 0\n\n"
        "    def observe(self, *args, **kwargs):\n        pass\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "out"
    options = {"games": "pong", "episodes": 1, "reps": 0, "progress": "off", "workers": 1}
    for agent in ("frozen_agents:act", "frozen_agents:Learner", "random"):
        results = arcadebench.evaluate(agent, "saber", log_dir=out, **options)
    frozen = "frozen_agents:act [frozen policy]"
    assert set(results.algorithms) == {frozen, "frozen_agents:Learner", "random"}
    entry = results.algorithms[frozen]
    assert entry["frozen_policy"] is True and "a frozen policy's episodes" in entry["notes"][0]
    assert not any(
        results.algorithms[n].get("frozen_policy") for n in ("random", "frozen_agents:Learner")
    )
    table = results.table()
    published = table[table.index("published results") :]
    assert f"(not here: {frozen}, a frozen policy's evaluation" in published
    assert frozen not in published.replace(f"(not here: {frozen}", "")
    markdown = results.to_markdown()
    assert "frozen policy, 1 game" in markdown  # a column group of its own
    rescored = arcadebench.score("saber", [str(out / "results.json")], reps=0)
    assert rescored.algorithms[frozen]["frozen_policy"] is True  # a results file keeps it
    evaluated = arcadebench.evaluate(
        "frozen_agents:act", "atari100k", log_dir=tmp_path / "a100k", **options
    )
    assert list(evaluated.algorithms) == ["frozen_agents:act"]  # evaluation is that protocol's
