"""TorchScript and ONNX files as batched runner agents: real torch and onnxruntime."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
import torch
from torch import nn
from torch_helpers import one_torch_thread  # noqa: F401 - a module fixture

import arcadebench
from arcadebench.benchmarks.runner.saved import saved_kind
from arcadebench.benchmarks.training.onnx_policy import OnnxPolicy
from arcadebench.benchmarks.training.torchscript_policy import TorchScriptPolicy
from arcadebench.errors import IncompatibleAgent, InvalidArgument, MissingDependency

STANDARD = gym.spaces.Box(0, 255, (4, 84, 84), np.uint8)

# torch 2.13 deprecates TorchScript (torch.jit.script, save and load) for torch.export
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.* is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def ort():
    """onnxruntime, for the ONNX cases: skipped only where it has no wheel to install."""
    return pytest.importorskip("onnxruntime")


class Logits(nn.Module):
    """CleanRL's Atari actor (Nature CNN to 512, then one logit per action) on uint8 input."""

    def __init__(self, actions: int) -> None:
        super().__init__()
        self.network = nn.Sequential(
            nn.Conv2d(4, 32, 8, stride=4),
            nn.ReLU(),
            nn.Conv2d(32, 64, 4, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
            nn.Linear(64 * 7 * 7, 512),
            nn.ReLU(),
        )
        self.actor = nn.Linear(512, actions)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.actor(self.network(x.float() / 255.0))


class Greedy(nn.Module):
    """The same network exported with its argmax inside: a ``(B,)`` actions output."""

    def __init__(self, logits: Logits) -> None:
        super().__init__()
        self.logits = logits

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(self.logits(x), dim=1)


class Ram(nn.Module):
    """A linear policy on the 128 RAM bytes: 6 logits."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(128, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x.float() / 255.0)


class Seven(nn.Module):
    """Always action 7: outside a 6-action space, found only when it plays."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.shape[0], dtype=torch.long) + 7


def onnx_export(module: nn.Module, example: torch.Tensor, path, dynamic: bool = True):
    """torch's TorchScript-based exporter: it needs no onnxscript and takes 0.3 s, not 3 s."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's deprecation notice
        torch.onnx.export(
            module,
            (example,),
            str(path),
            dynamo=False,
            input_names=["obs"],
            output_names=["out"],
            dynamic_axes={"obs": {0: "batch"}, "out": {0: "batch"}} if dynamic else None,
        )
    return path


@pytest.fixture(scope="module")
def pong():
    """Five real standard observations of Pong (SABER), and the env's spaces."""
    env = arcadebench.make("saber", "Pong", obs_type="standard", log_dir=False)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    frames = []
    for step in range(1, 251):
        obs, *_ = env.step(int(rng.integers(6)))
        if step % 50 == 0:
            frames.append(obs)
    spaces = env.observation_space, env.action_space
    env.close()
    return np.stack(frames), spaces


@pytest.fixture(scope="module")
def files(tmp_path_factory, ort):
    """The CNN (18 logits) and its argmax, each as TorchScript and ONNX; a RAM policy."""
    out = tmp_path_factory.mktemp("exported")
    torch.manual_seed(0)
    logits = Logits(18).eval()
    example = torch.zeros((1, 4, 84, 84), dtype=torch.uint8)
    paths = {"net": logits}
    for name, module in (("policy", logits), ("greedy", Greedy(logits))):
        paths[f"{name}.pt"] = out / f"{name}.pt"
        torch.jit.save(torch.jit.script(module), str(paths[f"{name}.pt"]))
        paths[f"{name}.onnx"] = onnx_export(module, example, out / f"{name}.onnx")
    ram = Ram().eval()
    paths["ram.onnx"] = onnx_export(ram, torch.zeros((1, 128), dtype=torch.uint8), out / "ram.onnx")
    paths["ram1.onnx"] = onnx_export(
        ram, torch.zeros((1, 128), dtype=torch.uint8), out / "ram1.onnx", dynamic=False
    )
    paths["ram.pt"] = out / "ram.pt"
    torch.jit.save(
        torch.jit.script(ram),
        str(paths["ram.pt"]),
        _extra_files={"arcadebench.json": json.dumps({"observation_shape": [128], "actions": 6})},
    )
    paths["ram_module"] = ram
    return paths


FORMATS = [(TorchScriptPolicy, ".pt"), (OnnxPolicy, ".onnx")]


def one_line(error: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(error.value)
    assert "\n" not in message and len(message) < 400, message
    return message


def torch_logits(net: nn.Module, obs: np.ndarray) -> np.ndarray:
    with torch.no_grad():
        return net(torch.from_numpy(obs)).numpy()


@pytest.mark.parametrize(("cls", "suffix"), FORMATS)
def test_greedy_actions_are_the_torch_models_argmax_on_real_observations(cls, suffix, files, pong):
    obs, (observation_space, action_space) = pong
    logits = torch_logits(files["net"], obs)
    top2 = np.sort(logits, axis=1)[:, -2:]
    assert (top2[:, 1] - top2[:, 0] > 1e-4).all()  # no near-tie the two runtimes could split
    policy = cls(files[f"policy{suffix}"])
    assert policy.name == "policy" and policy.env_kwargs == {"obs_type": "standard"}
    policy.load(threads=1)
    policy.check(observation_space, action_space)
    assert policy.action_space == gym.spaces.Discrete(18)
    rngs = [np.random.default_rng(i) for i in range(5)]
    actions = policy.act_batch(obs, rngs)
    assert actions.dtype == np.int64 and actions.shape == (5,)
    assert actions.tolist() == np.argmax(logits, axis=1).tolist()
    # greedy draws nothing from the episodes' generators
    assert [rng.random() for rng in rngs] == [np.random.default_rng(i).random() for i in range(5)]


@pytest.mark.parametrize(("cls", "suffix"), FORMATS)
def test_a_sampled_action_depends_on_its_own_rows_generator_only(cls, suffix, files, pong):
    obs, _ = pong
    seeds = [11, 12, 13, 14, 15]
    policy = cls(files[f"policy{suffix}"], deterministic=False)
    rngs = [np.random.default_rng(s) for s in seeds]
    together = policy.act_batch(obs, rngs)
    alone = [
        int(policy.act_batch(obs[i : i + 1], [np.random.default_rng(s)])[0])
        for i, s in enumerate(seeds)
    ]
    assert together.tolist() == alone
    # the inverse CDF of softmax(logits) at one random() of each row's generator
    logits = torch_logits(files["net"], obs).astype(np.float64)
    probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    expected = [
        int(np.searchsorted(np.cumsum(p), np.random.default_rng(s).random(), side="right"))
        for p, s in zip(probabilities, seeds, strict=True)
    ]
    assert together.tolist() == expected
    # one draw per row: each generator is at its second number now
    assert [rng.random() for rng in rngs] == [np.random.default_rng(s).random(2)[1] for s in seeds]


@pytest.mark.parametrize(("cls", "suffix"), FORMATS)
def test_an_actions_output_is_played_as_it_is(cls, suffix, files, pong):
    obs, (observation_space, action_space) = pong
    policy = cls(files[f"greedy{suffix}"])
    policy.check(observation_space, action_space)
    assert policy.action_space == gym.spaces.Discrete(18)
    expected = np.argmax(torch_logits(files["net"], obs), axis=1)
    assert policy.act_batch(obs, [np.random.default_rng(0)] * 5).tolist() == expected.tolist()
    sampled = cls(files[f"greedy{suffix}"], deterministic=False)
    with pytest.raises(IncompatibleAgent) as error:
        sampled.check(observation_space, action_space)
    assert "outputs actions, so it cannot be sampled from" in one_line(error)


def test_an_action_outside_the_action_space_is_refused_when_it_is_played(tmp_path, pong):
    obs, _ = pong
    path = tmp_path / "seven.pt"
    torch.jit.save(torch.jit.script(Seven()), str(path))
    policy = TorchScriptPolicy(path)
    policy.check(STANDARD, gym.spaces.Discrete(6))  # zero observations: action 7 is not seen...
    with pytest.raises(IncompatibleAgent) as error:  # ...until it plays
        policy.act_batch(obs[:2], [np.random.default_rng(0)] * 2)
    assert one_line(error) == (
        "seven chose action 7, outside the 6 actions checked; export a model for this "
        "environment's action set"
    )


@pytest.mark.parametrize(("cls", "suffix"), FORMATS)
def test_18_logits_are_refused_by_an_environment_of_6_actions(cls, suffix, files):
    policy = cls(files[f"policy{suffix}"])
    with pytest.raises(IncompatibleAgent) as error:
        policy.check(STANDARD, gym.spaces.Discrete(6))
    assert one_line(error) == (
        "policy outputs 18 logits per observation, the environment has 6 actions "
        "(Discrete(6)); export a model with one output per action of this environment's "
        "action set"
    )


@pytest.mark.parametrize(("cls", "suffix"), FORMATS)
def test_observations_of_another_shape_are_refused(cls, suffix, files):
    rgb = gym.spaces.Box(0, 255, (210, 160, 3), np.uint8)
    policy = cls(files[f"policy{suffix}"])
    with pytest.raises(IncompatibleAgent) as error:
        policy.check(rgb, gym.spaces.Discrete(18))
    message = one_line(error)
    if cls is OnnxPolicy:  # the graph declares its input: refused before running anything
        assert message == (
            "policy takes observations of shape (4, 84, 84) (obs_type 'standard'), the "
            "environment gives (210, 160, 3); evaluate it with env_kwargs={'obs_type': "
            "'standard'} or export a model for (210, 160, 3) observations"
        )
    else:  # TorchScript does not: the zero batch fails in the first convolution
        assert message.startswith(
            "policy fails on a zero batch of the environment's observations (2, 210, 160, 3) "
            "uint8 (RuntimeError: "
        )
        assert "expected input[2, 210, 160, 3] to have 4 channels" in message
        assert message.endswith(
            "export a model that takes (B, *(210, 160, 3)) uint8 observations "
            "as the environment gives them"
        )


def test_the_file_chooses_the_observations_it_is_evaluated_on(files, ort):
    ram = OnnxPolicy(files["ram.onnx"])
    assert ram.env_kwargs == {"obs_type": "ram"}
    assert ram.observation_space == gym.spaces.Box(0, 255, (128,), np.uint8)
    assert ram.action_space == gym.spaces.Discrete(6)  # the graph's (B, 6) output
    scripted = TorchScriptPolicy(files["ram.pt"])  # told by its arcadebench.json
    assert scripted.env_kwargs == {"obs_type": "ram"}
    assert scripted.observation_space == ram.observation_space
    assert scripted.action_space == gym.spaces.Discrete(6)
    assert TorchScriptPolicy(files["policy.pt"]).action_space is None  # no arcadebench.json
    # a graph exported with a fixed batch of 1 is run row by row, to the same actions
    fixed = OnnxPolicy(files["ram1.onnx"])
    obs = np.random.default_rng(0).integers(0, 256, (5, 128), dtype=np.uint8)
    expected = np.argmax(torch_logits(files["ram_module"], obs), axis=1).tolist()
    rngs = [np.random.default_rng(0)] * 5
    for policy in (ram, scripted, fixed):
        assert policy.act_batch(obs, rngs).tolist() == expected


@pytest.mark.parametrize(("cls", "suffix"), FORMATS)
def test_a_damaged_file_is_refused_when_the_agent_is_constructed(cls, suffix, files, tmp_path):
    data = files[f"policy{suffix}"].read_bytes()
    truncated = tmp_path / f"truncated{suffix}"
    truncated.write_bytes(data[: len(data) // 2])
    noise = tmp_path / f"noise{suffix}"
    noise.write_bytes(np.random.default_rng(0).integers(0, 256, 4096, dtype=np.uint8).tobytes())
    for path in (truncated, noise):
        with pytest.raises(IncompatibleAgent) as error:
            cls(path)
        assert one_line(error).startswith(f"{path} is not a")
        assert "damaged" in str(error.value)
    with pytest.raises(IncompatibleAgent) as error:
        cls(tmp_path / f"missing{suffix}")
    assert one_line(error).startswith(f"{tmp_path / f'missing{suffix}'}: no such file; give")


def test_a_torchscript_files_arcadebench_json_must_be_well_formed(tmp_path):
    path = tmp_path / "told.pt"
    said = '{"observation_shape": "big"}'
    torch.jit.save(torch.jit.script(Ram()), str(path), _extra_files={"arcadebench.json": said})
    with pytest.raises(IncompatibleAgent) as error:
        TorchScriptPolicy(path)
    assert one_line(error) == (
        f"{path}: its arcadebench.json must be a JSON object such as "
        '{"observation_shape": [4, 84, 84], "actions": 18}, got '
        f"{said.encode()!r}; save it again"
    )


def test_a_file_of_the_other_format_is_refused_with_the_right_prefix(files, tmp_path):
    onnx, script = files["policy.onnx"], files["policy.pt"]
    with pytest.raises(IncompatibleAgent) as error:
        TorchScriptPolicy(onnx)
    assert (
        one_line(error) == f"{onnx} is an ONNX model, not TorchScript; evaluate it as onnx:{onnx}"
    )
    with pytest.raises(IncompatibleAgent) as error:
        OnnxPolicy(script)
    assert one_line(error) == (
        f"{script} is a zip archive (TorchScript or torch.save), not an ONNX model; evaluate a "
        f"TorchScript file as torchscript:{script}"
    )
    state = tmp_path / "state.pt"
    torch.save(files["net"].state_dict(), state)
    with pytest.raises(IncompatibleAgent) as error:
        TorchScriptPolicy(state)
    assert one_line(error) == (
        f"{state} was saved with torch.save (a state dict or a pickled module), not "
        "TorchScript; save it with torch.jit.save(torch.jit.script(module), path)"
    )


def test_onnx_weights_kept_beside_the_model_must_come_with_it(files, tmp_path):
    import onnx

    model = onnx.load(str(files["ram.onnx"]))
    path = tmp_path / "outside.onnx"
    onnx.save_model(
        model, str(path), save_as_external_data=True, location="outside.weights", size_threshold=0
    )
    obs = np.zeros((2, 128), np.uint8)
    assert OnnxPolicy(path).act_batch(obs, [np.random.default_rng(0)] * 2).shape == (2,)
    (tmp_path / "outside.weights").unlink()
    with pytest.raises(IncompatibleAgent) as error:
        OnnxPolicy(path)
    assert one_line(error) == (
        f"{path} keeps its weights in outside.weights, which is not beside it; copy the "
        "weights file with the model"
    )


@pytest.mark.parametrize(
    ("cls", "suffix", "module", "hint"),
    [
        (
            TorchScriptPolicy,
            ".pt",
            "torch",
            "pip install torch (in a clone of arcadebench: pip install -e '.[sb3]')",
        ),
        (
            OnnxPolicy,
            ".onnx",
            "onnxruntime",
            "pip install onnxruntime (in a clone of arcadebench: pip install -e '.[onnx]')",
        ),
    ],
)
def test_a_missing_framework_is_named_with_its_install_command(
    cls, suffix, module, hint, files, monkeypatch
):
    policy = cls(files[f"policy{suffix}"])  # constructing needs no framework...
    monkeypatch.setitem(sys.modules, module, None)  # ...loading does: as if it were not installed
    with pytest.raises(MissingDependency) as error:
        policy.load()
    what = "the TorchScript policy" if cls is TorchScriptPolicy else "the ONNX policy"
    path = files[f"policy{suffix}"]
    assert one_line(error) == f"{module} is needed to run {what} {path}: {hint}"


def test_a_device_that_is_not_there_is_refused_naming_what_is(files):
    with pytest.raises(IncompatibleAgent) as error:
        TorchScriptPolicy(files["policy.pt"], device="cuda").load()
    assert one_line(error) == (
        f"device 'cuda' is not available to torch {torch.__version__} here (available: cpu); "
        "use device='cpu'"
    )
    with pytest.raises(IncompatibleAgent) as error:
        OnnxPolicy(files["policy.onnx"], device="cuda:1").load()
    message = one_line(error)
    assert message.startswith("device 'cuda:1' needs onnxruntime's CUDAExecutionProvider")
    assert "CPUExecutionProvider" in message and message.endswith("install onnxruntime-gpu")
    with pytest.raises(InvalidArgument) as error:
        OnnxPolicy(files["policy.onnx"], device="gpu")
    assert one_line(error) == "`device` must be 'cpu', 'cuda' or 'cuda:N', got 'gpu'"


@pytest.mark.parametrize(("cls", "suffix"), FORMATS)
def test_pickling_sends_the_path_and_settings_not_the_model(cls, suffix, files, pong):
    obs, _ = pong
    policy = cls(files[f"policy{suffix}"], deterministic=False)
    policy.load()
    before = policy.act_batch(obs, [np.random.default_rng(3)] * 5)
    policy.check(STANDARD, gym.spaces.Discrete(18))
    data = pickle.dumps(policy)
    assert len(data) < 2000  # the weights alone are 6.8 MB
    copy = pickle.loads(data)
    assert copy._model is None and policy._model is not None
    assert (copy.observation_space, copy.action_space) == (STANDARD, gym.spaces.Discrete(18))
    assert (copy.path, copy.deterministic, copy.device) == (policy.path, False, "cpu")
    assert copy.act_batch(obs, [np.random.default_rng(3)] * 5).tolist() == before.tolist()


def read(text: str, device: str = "cpu"):
    """What ``--agent text`` reads: the kind its prefix names."""
    kind = saved_kind(text)
    assert kind is not None
    return kind.read(text, device)


def test_both_kinds_read_their_prefixes(files):
    script, onnx = files["policy.pt"], files["policy.onnx"]
    agent = read(f"torchscript:{script}")
    assert (
        isinstance(agent, TorchScriptPolicy) and agent.deterministic and agent.path == str(script)
    )
    agent = read(f"onnx:{onnx}:stochastic", device="cuda:0")
    assert isinstance(agent, OnnxPolicy) and not agent.deterministic and agent.device == "cuda:0"
    assert saved_kind("pt:policy.pt") is None and saved_kind("policy.onnx") is None
    for text in ("torchscript:", "onnx::stochastic"):
        with pytest.raises(InvalidArgument) as error:
            read(text)
        assert one_line(error).endswith(f"got {text!r}")


CONSTRUCT = """
import sys
from arcadebench.benchmarks.training.onnx_policy import OnnxPolicy
from arcadebench.benchmarks.training.torchscript_policy import TorchScriptPolicy
policies = [TorchScriptPolicy(sys.argv[1]), OnnxPolicy(sys.argv[2])]
print(policies[1].observation_space.shape, policies[1].action_space)
print(sorted({"torch", "onnxruntime"} & set(sys.modules)))
"""


def test_constructing_imports_no_framework(files):
    """The parent reads the files (ONNX with the onnx package) but runs neither framework."""
    done = subprocess.run(
        [sys.executable, "-c", CONSTRUCT, str(files["policy.pt"]), str(files["policy.onnx"])],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["(4, 84, 84) Discrete(18)", "[]"]
