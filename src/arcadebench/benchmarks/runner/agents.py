"""Agents: everything the runner can play, behind one small interface.

The runner accepts, in this order of precedence:

- a built-in name: ``"random"`` (uniform over the action space, seeded per episode from the job
  seed, so resumed runs replay the same actions) or ``"noop"`` (always action 0);
- a ``"module:attr"`` path (the CLI's ``--agent``), naming any of the below;
- a *factory*: a class, or a callable without required arguments, called once per job so every
  game/level gets a fresh agent; it may accept any of the keywords ``action_space``,
  ``observation_space``, ``spec``, ``game`` and ``seed``;
- a *learning agent*: an object with ``act(obs) -> action`` and
  ``observe(obs, reward, terminated, truncated, info)`` (called after every step with the next
  observation, the protocol reward and the step's ``info``); optionally ``reset_level(level)``
  (called when a job starts, e.g. Sonic's per-test-level reset) or else ``reset()``, and
  ``evaluation()``, called once training is over in a protocol scored on evaluation episodes
  (Atari 100k, DQN 2015): switch to the evaluation policy (e.g. epsilon-greedy with epsilon
  0.001) and return a short description of it, recorded with the evaluation episodes;
- an object with ``predict(obs)`` (stable-baselines3 style, returning ``(action, state)``);
- a policy: a callable ``obs -> action``;
- a *batched* agent (:class:`BatchedAgent`): an object with ``act_batch(obs)``, or a callable with
  ``batched = True``, answering the observations of every episode in flight (stacked on a first
  axis) with one action each, in one call. A saved policy is one: ``sb3:PPO:model.zip``,
  ``torchscript:policy.pt``, ``onnx:policy.onnx`` or a plug-in's kind (:mod:`~.saved`; loaded once
  per worker process, on ``device``). If ``act_batch`` takes a second parameter ``rngs``, it gets
  one ``numpy.random.Generator`` per row, seeded for that row's episode from (job seed, episode
  index): drawn from them, an episode's actions do not depend on the episodes that share its batch.
  The built-in ``random`` and ``noop`` are batched.

Any agent may define ``seed(seed)``, called before every episode with a seed derived from
(job seed, episode index); an agent that draws its randomness from it replays exactly when a
run is resumed. An agent declares what it needs from the environment with attributes: an
``action_set`` (e.g. Sonic's raw ``"buttons"``; retro protocols only) or a dict ``env_kwargs``
passed to the environment (a setting of the spec that differs is recorded as a deviation), and
what it was trained on with ``observation_space`` and ``action_space``, which the runner checks
against the environment's before anything is played
(:mod:`~arcadebench.benchmarks.runner.compatibility`); ``check(observation_space,
action_space)``, if defined, is called too and may refuse by raising.

The kinds are typed for a user's editor and type checker: :class:`ActingAgent`,
:class:`LearningAgent`, :class:`PredictingAgent`, :class:`BatchedAgent`, :data:`Policy`, and
:data:`Agent` for whatever :func:`~arcadebench.evaluate` takes.

What an agent given in any of these forms *is* (its kind, name, whether it learns or batches)
is worked out once, before anything runs (:mod:`~.reference`); a worker then plays it through
an :class:`Actor`.

Classes: ActingAgent, LearningAgent, PredictingAgent, BatchedAgent, RandomAgent, NoopAgent, Actor.
Functions: is_batched.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

import gymnasium as gym
import numpy as np

from arcadebench.benchmarks.runner.jerk import JerkAgent
from arcadebench.errors import AgentError, ArcadebenchError

__all__ = [
    "BUILTIN_AGENTS",
    "ActingAgent",
    "Actor",
    "Agent",
    "BatchedAgent",
    "LearningAgent",
    "NoopAgent",
    "Policy",
    "PredictingAgent",
    "RandomAgent",
    "is_batched",
]


@runtime_checkable
class ActingAgent(Protocol):
    """An agent that chooses actions with ``act(obs)`` and does not learn (e.g. a frozen policy).

    It may also define ``seed(seed)`` (called before every episode), ``reset_level(level)`` or
    ``reset()`` (called when a job starts), ``action_set`` and ``env_kwargs`` (module docstring).
    """

    def act(self, obs: Any, /) -> Any:
        """The action for ``obs`` (an element of the environment's action space)."""


@runtime_checkable
class LearningAgent(ActingAgent, Protocol):
    """An agent that learns while it is evaluated: Sonic's protocol plays 1M learning timesteps.

    ``observe`` is called after every step with the next observation, the protocol reward
    (before any clipping), the step's end flags and its ``info``.
    """

    def observe(
        self, obs: Any, reward: float, terminated: bool, truncated: bool, info: dict[str, Any], /
    ) -> None:
        """Learn from one step."""


@runtime_checkable
class PredictingAgent(Protocol):
    """A stable-baselines3-style model: ``predict(obs)`` returns ``(action, state)``."""

    def predict(self, obs: Any, /) -> Any:
        """``(action, recurrent state)``; only the action is used."""


@runtime_checkable
class BatchedAgent(Protocol):
    """An agent that answers a batch of observations with one call (a saved model, a network).

    ``act_batch(obs)`` gets the observations of the episodes in flight stacked on a first axis
    and returns one action per row. If it has a second parameter ``rngs``, that is one
    ``numpy.random.Generator`` per row, seeded for the row's episode: draw random actions from
    them and an episode is the same whatever the batch. It may also define
    ``observation_space`` and ``action_space`` (what it was trained on, checked against the
    environment before anything is played), ``check(observation_space, action_space)``,
    ``env_kwargs`` and ``evaluation()`` (module docstring).
    """

    def act_batch(self, obs: Any, /) -> Any:
        """One action per row of ``obs``."""


Policy: TypeAlias = Callable[[Any], Any]
"""A callable ``obs -> action``."""

Agent: TypeAlias = str | ActingAgent | PredictingAgent | BatchedAgent | Callable[..., Any]
"""What the runner plays: a built-in name, a saved model or a ``"module:attr"`` path, an agent
object (acting, learning, predicting or batched), a policy, or a factory (a class or
zero-argument callable, called once per job, that returns one of these)."""


class RandomAgent:
    """Uniformly random actions, drawn from a generator seeded before every episode.

    Example:
        >>> agent = RandomAgent(gym.spaces.Discrete(18)); agent.seed(0)
        >>> [int(agent.act(None)) for _ in range(5)]
        [15, 11, 9, 4, 5]
    """

    def __init__(self, action_space: gym.Space[Any]) -> None:
        self.action_space = action_space
        self._n = int(action_space.n) if isinstance(action_space, gym.spaces.Discrete) else None
        self._rng = np.random.default_rng(0)

    def seed(self, seed: int) -> None:
        """Re-seed (the runner calls this before every episode)."""
        self._rng = np.random.default_rng(seed)
        self.action_space.seed(seed)

    def act(self, obs: Any) -> Any:
        """A uniformly random action."""
        if self._n is not None:
            return int(self._rng.integers(self._n))
        return self.action_space.sample()

    def act_batch(self, obs: Any, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """A uniformly random action per row, from the row's episode generator.

        Each row draws as :meth:`act` does after :meth:`seed` with the episode's seed, so an
        episode is the same in a batch as alone.

        Raises:
            AgentError: an action space other than ``Discrete`` (batches draw integers only).
        """
        if self._n is None:
            raise AgentError(
                f"the random agent draws batches on Discrete action spaces only, got "
                f"{self.action_space}"
            )
        return np.fromiter((rng.integers(self._n) for rng in rngs), np.int64, len(rngs))


class NoopAgent:
    """Always action 0 (NOOP on Atari; the first combination of a discrete action set)."""

    def __init__(self, action_space: gym.Space[Any]) -> None:
        self._action = (
            0 if isinstance(action_space, gym.spaces.Discrete) else action_space.sample() * 0
        )

    def act(self, obs: Any) -> Any:
        """Action 0."""
        return self._action

    def act_batch(self, obs: Any) -> list[Any]:
        """Action 0 for every row."""
        return [self._action] * len(obs)


BUILTIN_AGENTS: dict[str, type] = {"random": RandomAgent, "noop": NoopAgent, "jerk": JerkAgent}


def is_batched(obj: Any) -> bool:
    """Whether ``obj`` answers batches: ``act_batch``, or a callable with ``batched = True``.

    Example:
        >>> is_batched(RandomAgent(gym.spaces.Discrete(4))), is_batched(len)
        (True, False)
    """
    if callable(getattr(obj, "act_batch", None)):
        return True
    return callable(obj) and getattr(obj, "batched", False) is True


class Actor:
    """One interface over every kind of agent, as the runner drives it.

    Args:
        agent: the object a job plays (:meth:`~.reference.LoadedAgent.make` made it).
        game: the game or level of the job (``reset_level(game)`` is called, else ``reset()``).
        seed: the job seed (a batched agent's generator for a single row, until an episode's).
    """

    def __init__(self, agent: Any, game: str, seed: int) -> None:
        obj = self.agent = agent
        self.batched = is_batched(obj)
        self._batch: Callable[..., Any] | None = None
        self._takes_rngs = False
        if self.batched:
            self._batch = obj.act_batch if callable(getattr(obj, "act_batch", None)) else obj
            self._takes_rngs = _positional_parameters(self._batch) >= 2
        if isinstance(obj, ActingAgent):
            self.act: Callable[[Any], Any] = obj.act
        elif isinstance(obj, PredictingAgent):
            predict = obj.predict

            def act(obs: Any) -> Any:
                action = predict(obs)
                return action[0] if isinstance(action, tuple) else action

            self.act = act
        elif self._batch is not None:  # a batch of one row
            self.act = lambda obs: self.act_rows(np.expand_dims(obs, 0), [self._rng])[0]
        elif callable(obj):
            self.act = obj
        else:
            raise ArcadebenchError(
                f"agent {type(obj).__name__} has no act(obs), act_batch(obs), predict(obs) or "
                "__call__(obs); it cannot choose actions"
            )
        self.observe: Callable[..., Any] | None = (
            obj.observe if isinstance(obj, LearningAgent) else None
        )
        self._seed = getattr(obj, "seed", None) if callable(getattr(obj, "seed", None)) else None
        self._rng = np.random.default_rng(seed)
        start = getattr(obj, "reset_level", None)
        if callable(start):
            start(game)
        elif callable(getattr(obj, "reset", None)):
            obj.reset()

    def begin_episode(self, seed: int) -> None:
        """Seed the agent for the next episode played one at a time (``seed()``, generator)."""
        self._rng = np.random.default_rng(seed)
        if self._seed is not None:
            self._seed(seed)

    def act_rows(self, obs: np.ndarray, rngs: Sequence[np.random.Generator]) -> np.ndarray:
        """One action per row of ``obs``, in one call of a batched agent."""
        if self._batch is None:
            return np.array([self.act(row) for row in obs])
        actions = self._batch(obs, rngs) if self._takes_rngs else self._batch(obs)
        return np.asarray(actions)

    def evaluation_policy(self) -> str:
        """Switch the agent to its evaluation policy; what it is, for the log.

        Calls the agent's ``evaluation()`` if it has one (its return value, a string, says what
        the policy is); a policy without it is evaluated as it is, and a learning agent without
        it acts as it did at the end of training, which the description says.
        """
        switch = getattr(self.agent, "evaluation", None)
        said = switch() if callable(switch) else None
        if isinstance(said, str) and said.strip():
            return said.strip()
        if callable(switch):
            return "the agent's evaluation() policy"
        if self.observe is not None:
            return "act() as at the end of training (the agent has no evaluation())"
        return "the policy as given (no training)"


def _positional_parameters(function: Callable[..., Any]) -> int:
    """How many positional arguments ``function`` takes (``*args`` counts as many)."""
    try:
        params = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return 1
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 2
    return sum(p.kind in kinds for p in params)
