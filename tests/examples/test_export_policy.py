"""examples/export_policy.py: a CleanRL agent exported both ways and played from the files.

The example's last step, ``arcadebench.evaluate("torchscript:...")``, is the runner's own
(tested with the runner); here the export and each file's load, check and greedy action.
"""

from __future__ import annotations

import importlib.util

import pytest
import torch
from testdata import REPO

from arcadebench.errors import IncompatibleAgent

# torch 2.13 deprecates TorchScript (torch.jit.script, save and load) for torch.export
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.* is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location(
        "export_policy", REPO / "examples" / "export_policy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def _torch_threads():
    threads = torch.get_num_threads()  # the example sets one thread, as a worker does
    yield
    torch.set_num_threads(threads)


def test_an_untrained_agent_is_exported_and_each_file_gives_the_torch_models_action(
    example, tmp_path, capsys
):
    actions = example.main(["--out", str(tmp_path)], evaluate=False)
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"ppo_pong.pt: {{'obs_type': 'standard'}}, Discrete(18), greedy action {actions[0]}",
        f"ppo_pong.onnx: {{'obs_type': 'standard'}}, Discrete(18), greedy action {actions[1]}",
    ]
    assert actions[0] == actions[1]  # and each equals the torch model's (the example checks)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ppo_pong.onnx", "ppo_pong.pt"]


def test_a_cleanrl_checkpoint_of_the_minimal_action_set_is_refused_by_saber(example, tmp_path):
    path = tmp_path / "ppo_atari_envpool.cleanrl_model"
    torch.save(example.Agent(6).state_dict(), path)  # as CleanRL saves it: Pong's 6 actions
    with pytest.raises(IncompatibleAgent) as error:
        example.main(["--out", str(tmp_path), "--state-dict", str(path)], evaluate=False)
    assert str(error.value) == (
        "ppo_pong outputs 6 logits per observation, the environment has 18 actions "
        "(Discrete(18)); export a model with one output per action of this environment's "
        "action set"
    )
