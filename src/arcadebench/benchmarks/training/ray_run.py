"""A training run on a Ray cluster: one owner, one log, one budget, environments on any node.

A run's files are shared between the processes of one machine (:mod:`arcadebench.records.live`);
the machines of a cluster share no such thing (KubeRay, the cloud autoscalers and ``ray up``
give every node its own disk, and a network file system is refused). So a run whose
environments play on many machines is held by one process: :class:`RayRun`, made by the driver,
starts the run's *owner*, a Ray actor pinned to the driver's node that holds the log, the
counters and the budget (a :class:`~arcadebench.records.RunHolder`) and writes every line with
one ``write`` and ``fsync``. The learner gets an :class:`EnvCreator` from
:meth:`RayRun.env_creator`: wherever it builds an environment — an RLlib env runner on another
node, a plain Ray actor, the driver — the environment is a stream of the run whose records
travel to the owner (:mod:`arcadebench.records.relay`).

- **Frames and checkpoints** are the run's: every stream's, summed by the owner, which also
  sets each record's run totals, so the log reads as a local run's and is scored as one.
- **The budget** stops every environment within ``sync_steps`` steps (128 by default) of the
  owner's count reaching it, and in practice within about one step: each stream reports its
  totals at most every ``sync_steps`` steps, and more often as the budget nears
  (:mod:`arcadebench.records.relay` gives the bound). A learner that cannot stop in the middle
  of a rollout (RLlib's env runners fill their batches) gets environments that, once the budget
  is used up, play nothing (:class:`IdleAfterBudget`); a plain loop sees the monitor's
  ``end_reason: "budget"`` and ``BudgetExhausted``.
- **A node that dies** takes its streams' episodes in flight (and their steps since their last
  report); its finished episodes are in the owner's log, and the run's counters stay in the
  owner, so environments recreated elsewhere (RLlib's ``restart_failed_env_runners``, an actor's
  ``max_restarts``) continue the same run as new streams. A driver that dies ends the owner; the
  run continues from its log with ``resume=True``, as a local run does.

With RLlib: ``tune.register_env(name, run.env_creator(...))``, ``config.environment(name)`` and
``config.callbacks(on_train_result=run.on_train_result)``, which adds the protocol's view to
each result (``result["arcadebench"]``, :meth:`RayRun.progress`). ``examples/rllib_ppo.py`` and
``examples/apex_ray.py`` are complete runs.

Classes: RayRun, EnvCreator, RunOwner, IdleAfterBudget, RLlibObservation.
Functions: import_ray.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.envs.factory import make_protocol_env
from arcadebench.benchmarks.training.protocol_view import CheckpointScores
from arcadebench.errors import ArcadebenchError, InvalidArgument, MissingDependency, install_hint
from arcadebench.records import (
    SYNC_STEPS,
    Grant,
    Relay,
    RunHolder,
    StreamStart,
    check_budget,
    check_run,
    log_path,
)
from arcadebench.specs import Spec, load_spec, spec_reference
from arcadebench.wrappers.monitor import find_monitor

__all__ = [
    "EnvCreator",
    "IdleAfterBudget",
    "RLlibObservation",
    "RayRun",
    "RunOwner",
    "import_ray",
]


def import_ray(purpose: str = "a training run on Ray") -> Any:
    """The ``ray`` module, or a one-line error saying how to install it for ``purpose``."""
    try:
        import ray
    except ImportError:
        raise MissingDependency(
            f"{purpose} needs Ray, which is not installed: {install_hint('ray', 'ray')}"
        ) from None
    return ray


def _get(ray: Any, ref: Any, log: str) -> Any:
    """``ray.get(ref)``, with the owner's own error (one line) instead of Ray's wrapping."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as error:
        cause = getattr(error, "cause", None)
        if isinstance(cause, ArcadebenchError):
            raise cause from None
        raise
    except ray.exceptions.RayActorError:
        raise ArcadebenchError(
            f"the owner of {log} is gone (its driver ended, or the driver's node died), so this "
            "environment's episodes can no longer be logged; continue the run with resume=True"
        ) from None


# -- the owner ------------------------------------------------------------------------------


class RunOwner:
    """The run's owner, a Ray actor on the driver's node: a :class:`~arcadebench.records.RunHolder`.

    Its methods are the holder's, called by the streams (``join``, ``report``, ``append``,
    ``leave``) and by the driver (``progress``, ``close``). An error opening the log is kept
    and raised by :meth:`opened`, so that the driver reports it in one line.

    Args:
        spec: the spec's name or YAML file.
        game: the canonical game or level.
        run: the run id.
        log: the log's absolute path on this node.
        resume: continue a log with episodes.
        budget_steps: the run's step budget (tighter than the spec's).
        budget_frames: the run's frame budget.
        sync_steps: the most steps a stream plays between two reports.
    """

    def __init__(
        self,
        spec: str,
        game: str,
        run: str,
        log: str,
        resume: bool,
        budget_steps: int | None,
        budget_frames: int | None,
        sync_steps: int,
    ) -> None:
        self._holder: RunHolder | None = None
        self._error: ArcadebenchError | None = None
        try:
            self._holder = RunHolder(
                load_spec(spec),
                game,
                run,
                Path(log),
                resume=resume,
                budget_steps=budget_steps,
                budget_frames=budget_frames,
                sync_steps=sync_steps,
            )
        except ArcadebenchError as error:
            self._error = error

    @property
    def holder(self) -> RunHolder:
        """The run, or the error that kept it from opening."""
        if self._holder is None:
            raise self._error or ArcadebenchError("the run's owner has no run")
        return self._holder

    def opened(self) -> None:
        """Raise the error that kept the run from opening, if any."""
        _ = self.holder

    def join(self) -> StreamStart:
        """A new stream's start (:meth:`RunHolder.join`)."""
        return self.holder.join()

    def report(self, slot: int, steps: int, frames: int) -> Grant:
        """A stream's live totals (:meth:`RunHolder.report`)."""
        return self.holder.report(slot, steps, frames)

    def append(self, slot: int, line: bytes) -> Grant:
        """A stream's line (:meth:`RunHolder.append`)."""
        return self.holder.append(slot, line)

    def leave(self, slot: int) -> None:
        """A stream closed (:meth:`RunHolder.leave`)."""
        if self._holder is not None:
            self._holder.leave(slot)

    def totals(self) -> tuple[int, int, bool]:
        """The run's steps, frames, and whether its budget is used up."""
        return (*self.holder.totals(), self.holder.used_up())

    def progress(self) -> tuple[int, int, bool, list[dict[str, Any]]]:
        """:meth:`totals`, and the episodes written since the last call."""
        return (*self.totals(), self.holder.take_episodes())

    def close(self) -> None:
        """Close the run: the log is complete."""
        if self._holder is not None:
            self._holder.close()


# -- the environments -----------------------------------------------------------------------


class IdleAfterBudget(gym.Wrapper[Any, Any, Any, Any]):
    """Once the run's budget is used up, the environment plays nothing (for RLlib's env runners).

    Learners that sample fixed-size batches (RLlib's env runners) cannot stop in the middle of
    one. The monitor ends the episode the budget cuts (``truncated``, ``end_reason: "budget"``) and
    then starts no episode; from the next reset on, each step returns the last observation with
    reward 0 and ``truncated=True`` and touches no emulator, and ``info["arcadebench"]`` says
    ``budget_exhausted``. Those steps are not the protocol's: the learner's loop stops at the
    end of that iteration (``result["arcadebench"]["budget_used_up"]``).
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self._idle = False
        self._obs: Any = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Reset the environment, unless the run is over (then the last observation again)."""
        if self._idle:
            return self._obs, {"arcadebench": {"budget_exhausted": True}}
        obs, info = self.env.reset(seed=seed, options=options)
        self._obs = obs
        self._idle = bool((info.get("arcadebench") or {}).get("budget_exhausted"))
        return obs, info

    def step(self, action: Any) -> tuple[Any, SupportsFloat, bool, bool, dict[str, Any]]:
        """Step, or, once the run is over, a one-step truncated episode that plays nothing."""
        if self._idle:
            return self._obs, 0.0, False, True, {"arcadebench": {"budget_exhausted": True}}
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._obs = obs
        return obs, reward, terminated, truncated, info


class RLlibObservation(gym.ObservationWrapper[Any, Any, Any]):
    """The observation as RLlib's default encoders take it: float32 in [-1, 1], channels last.

    The standard observation (4 stacked 84x84 frames, channels first) becomes 84x84x4, the
    layout of RLlib's CNN encoders (and of its own Atari preprocessing, which also scales bytes
    to [-1, 1]); other observations (RAM bytes, grayscale or RGB screens) keep their shape.
    Agent-side only: the monitor below still logs the protocol's returns.
    """

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, gym.spaces.Box) or space.dtype != np.uint8:
            raise InvalidArgument(
                f"`env` must have byte observations (a protocol env), got {space!r}"
            )
        shape = space.shape
        self._channels_first = shape == (4, 84, 84)
        if self._channels_first:
            shape = (84, 84, 4)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape, np.float32)

    def observation(self, observation: Any) -> Any:
        """Bytes to [-1, 1]; a frame stack to channels last."""
        scaled = np.asarray(observation, dtype=np.float32) / 128.0 - 1.0
        return np.moveaxis(scaled, 0, -1) if self._channels_first else scaled


@dataclass(frozen=True)
class EnvCreator:
    """Builds an environment of the run wherever it is called: RLlib's env creator, an actor's.

    Call it with RLlib's env context (its ``env_config`` items are more environment settings)
    or with nothing. The environment is the protocol environment with its episodes relayed to
    the run's owner (a new stream of the run), the run's budget, and the ``wrappers`` on top,
    outermost last. Made by :meth:`RayRun.env_creator`; it pickles small (names, numbers, the
    owner's handle), so Ray sends it to any node.
    """

    spec: str
    spec_hash: str
    game: str
    run: str
    log: str
    owner: Any
    algorithm: str | None
    budget_steps: int | None
    budget_frames: int | None
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    wrappers: Sequence[Callable[[gym.Env[Any, Any]], gym.Env[Any, Any]]] = ()
    idle_after_budget: bool = True

    def __call__(self, config: Mapping[str, Any] | None = None) -> gym.Env[Any, Any]:
        """A new environment of the run (a new stream), on this process's node.

        Raises:
            ArcadebenchError: the spec file differs from the driver's here, the run's owner is
                gone, or the settings are refused (one line each).
        """
        kwargs = {**self.env_kwargs, **dict(config or {})}
        env = make_protocol_env(
            self.spec, self.game, log_dir=False, run=self.run, algorithm=self.algorithm, **kwargs
        )
        try:
            return self.attach(env)
        except BaseException:
            env.close()
            raise

    def attach(self, env: gym.Env[Any, Any]) -> gym.Env[Any, Any]:
        """Make ``env`` (a protocol env, no log yet) a stream of the run; the env to use.

        What ``__call__()`` does once it has made the environment: the run's budget, the
        episodes relayed to the owner, :class:`IdleAfterBudget` and the ``wrappers`` on top.
        """
        ray = import_ray()
        monitor = find_monitor(env)
        if monitor is None:
            raise InvalidArgument(f"`env` must be a protocol environment, got {env}")
        if monitor.protocol.hash != self.spec_hash:
            raise ArcadebenchError(
                f"`spec` {self.spec!r} on this node is not the driver's (hash "
                f"{monitor.protocol.hash}, the driver's {self.spec_hash}): copy the same file to "
                "every node"
            )
        monitor.set_budget(self.budget_steps, self.budget_frames)
        owner, log = self.owner, self.log
        start: StreamStart = _get(ray, owner.join.remote(), log)
        slot = start.slot

        def leave() -> None:
            try:
                owner.leave.remote(slot)
            except Exception:  # noqa: BLE001 - the owner may be gone at shutdown
                pass

        relay = Relay(
            start,
            lambda line: _get(ray, owner.append.remote(slot, line), log),
            lambda steps, frames: _get(ray, owner.report.remote(slot, steps, frames), log),
            leave,
        )
        try:
            monitor.open_log(log, run=self.run, relay=relay)
        except BaseException:
            leave()
            raise
        if self.idle_after_budget:
            env = IdleAfterBudget(env)
        for wrap in self.wrappers:
            env = wrap(env)
        return env


# -- the driver's handle ----------------------------------------------------------------------


class RayRun:
    """The driver's handle of a training run whose environments play anywhere on a Ray cluster.

    Starts the run's owner (a :class:`RunOwner` actor on this process's node, so the log lives
    on this machine) and hands out env creators (:class:`EnvCreator`). Connects to Ray with
    ``ray.init()`` (``RAY_ADDRESS`` or a local instance) unless it is connected already. Close
    it (or use it as a context manager) when training ends; closing does not shut Ray down.

    Args:
        spec: the protocol (a built-in name, a YAML file every node can read, or a loaded spec).
        game: the game or level.
        log_dir: the log root on this machine: the log is ``<log_dir>/<spec>/<game>/<run>.jsonl``.
        run: the run id.
        resume: continue a log that has episodes (a run whose driver died).
        algorithm: the agent's name, for the log's header.
        budget_steps: a tighter step budget than the spec's.
        budget_frames: a tighter frame budget than the spec's.
        sync_steps: the most steps an environment plays between two reports to the owner.

    Raises:
        ArcadebenchError: the log holds episodes and ``resume`` is off, or another run's (one
            line, from the owner).
        MissingDependency: Ray is not installed.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as tmp:  # doctest: +SKIP
        ...     with RayRun("saber", "pong", tmp, budget_frames=4_000) as run:
        ...         env = run.env_creator(obs_type="ram")()  # what an env runner does
        ...         _ = env.reset(seed=0)
        ...         done = False
        ...         while not done:
        ...             *_, truncated, info = env.step(0)
        ...             done = info["arcadebench"].get("end_reason") == "budget"
        ...         print(run.progress()["budget_used_up"])
        True
    """

    def __init__(
        self,
        spec: str | Path | Spec,
        game: str,
        log_dir: str | Path,
        *,
        run: str = "0",
        resume: bool = False,
        algorithm: str | None = None,
        budget_steps: int | None = None,
        budget_frames: int | None = None,
        sync_steps: int = SYNC_STEPS,
    ) -> None:
        loaded = load_spec(spec)
        self.game = loaded.resolve_game(game)
        self.run = check_run(run)
        if not isinstance(log_dir, str | Path) or not str(log_dir):
            raise InvalidArgument(f"`log_dir` must be a directory, got {log_dir!r}")
        check_budget("budget_steps", budget_steps)
        check_budget("budget_frames", budget_frames)
        if type(sync_steps) is not int or sync_steps < 1:
            raise InvalidArgument(f"`sync_steps` must be a positive integer, got {sync_steps!r}")
        self.spec_ref = spec_reference(loaded)
        self.spec_hash = loaded.hash
        self.algorithm = algorithm
        self.budget_steps = budget_steps
        self.budget_frames = budget_frames
        self.log = log_path(Path(log_dir).resolve(), loaded.name, self.game, self.run)
        self._spec: Spec | None = loaded
        self._checkpoints: CheckpointScores | None = None
        ray = import_ray()
        if not ray.is_initialized():
            ray.init()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
        owner = ray.remote(RunOwner).options(num_cpus=0, scheduling_strategy=here, max_restarts=0)
        self.owner: Any = owner.remote(
            self.spec_ref,
            self.game,
            self.run,
            str(self.log),
            resume,
            budget_steps,
            budget_frames,
            sync_steps,
        )
        try:
            _get(ray, self.owner.opened.remote(), str(self.log))
        except BaseException:
            ray.kill(self.owner)
            raise
        self._closed = False

    @property
    def spec(self) -> Spec:
        """The protocol."""
        if self._spec is None:
            self._spec = load_spec(self.spec_ref)
        return self._spec

    def env_creator(
        self,
        *,
        wrappers: Sequence[Callable[[gym.Env[Any, Any]], gym.Env[Any, Any]]] = (),
        idle_after_budget: bool = True,
        **env_kwargs: Any,
    ) -> EnvCreator:
        """What a learner calls to build an environment of this run, on any node.

        Args:
            wrappers: agent-side wrappers to put on top (e.g. :class:`RLlibObservation`), each
                a picklable callable taking and returning an environment.
            idle_after_budget: once the budget is used up, steps play nothing instead of
                raising (:class:`IdleAfterBudget`; for RLlib). Off, a step after the budget
                raises :class:`~arcadebench.errors.BudgetExhausted`, as a local env does.
            env_kwargs: environment settings and options (``obs_type``, ...), as for
                ``gym.make``; not ``log_dir``, ``run`` or ``resume``, which are the run's.
        """
        reserved = sorted({"log_dir", "run", "resume", "algorithm"} & set(env_kwargs))
        if reserved:
            raise InvalidArgument(
                f"`env_kwargs` must not set {', '.join(reserved)}: they are the run's (give "
                "them to RayRun)"
            )
        return EnvCreator(
            self.spec_ref,
            self.spec_hash,
            self.game,
            self.run,
            str(self.log),
            self.owner,
            self.algorithm,
            self.budget_steps,
            self.budget_frames,
            dict(env_kwargs),
            tuple(wrappers),
            idle_after_budget,
        )

    def _call(self, method: str, *args: Any) -> Any:
        ray = import_ray()
        return _get(ray, getattr(self.owner, method).remote(*args), str(self.log))

    def totals(self) -> tuple[int, int]:
        """The run's ``(steps, frames)`` so far: every environment's, on every node."""
        steps, frames, _ = self._call("totals")
        return int(steps), int(frames)

    def progress(self) -> dict[str, Any]:
        """The protocol's view of the run since the last call (what ``on_train_result`` adds).

        Returns:
            ``run_steps`` and ``run_frames`` (every environment's), ``budget_used_up``,
            ``episodes`` (how many ended since the last call), ``episode_return_mean`` (their
            protocol returns' mean, complete episodes only; absent without one) and
            ``checkpoints``: ``{frames: {metric: value}}`` for every checkpoint of the spec the
            run has passed, scored from the log as ``arcadebench score`` does.
        """
        steps, frames, used_up, episodes = self._call("progress")
        view: dict[str, Any] = {
            "run_steps": int(steps),
            "run_frames": int(frames),
            "budget_used_up": bool(used_up),
            "episodes": len(episodes),
        }
        returns = [float(e["return"]) for e in episodes if e["complete"]]
        if returns:
            view["episode_return_mean"] = math.fsum(returns) / len(returns)
        if self._checkpoints is None:
            self._checkpoints = CheckpointScores(self.spec, self.game, self.log)
        self._checkpoints.update(int(frames))
        view["checkpoints"] = dict(self._checkpoints.scored)
        return view

    def used_up(self) -> bool:
        """Whether the run's budget is used up (the owner's count)."""
        return bool(self._call("totals")[2])

    def on_train_result(self, *, result: dict[str, Any], **kwargs: Any) -> None:
        """RLlib's ``on_train_result`` callback, at the driver: ``result["arcadebench"]``.

        Use it as ``config.callbacks(on_train_result=run.on_train_result)``; the training loop
        stops when ``result["arcadebench"]["budget_used_up"]``.
        """
        result["arcadebench"] = self.progress()

    def close(self) -> None:
        """Close the run (the log is complete) and stop its owner; Ray stays connected."""
        if self._closed:
            return
        self._closed = True
        ray = import_ray()
        try:
            _get(ray, self.owner.close.remote(), str(self.log))
        finally:
            ray.kill(self.owner)

    def __enter__(self) -> RayRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        # RLlib sends its config, this run's bound on_train_result included, to every env
        # runner: only names, numbers and the owner's handle travel
        return {**self.__dict__, "_spec": None, "_checkpoints": None}
