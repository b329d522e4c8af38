"""Sticky actions measured in the emulator: what the protocol env's ALE actually does each frame.

Machado et al. (2018, Section 5.2) define sticky actions per emulator frame: with probability
``p`` the emulator repeats the action it executed on the previous frame instead of the agent's.
SABER (Toromanoff et al. 2019, Table 1), HWR (Fan 2021) and Atari-5 declare ``p = 0.25``. A
setting can be passed and still not take effect (a wrapper that replaces the env, an ALE that
ignores it, sticky decisions per agent step instead of per frame), so this module measures the
rule from the emulator's behaviour instead of reading the setting back.

How: :class:`StickyProbe` stands in for the protocol env's ``ALEInterface`` (``AtariEnv``
calls ``ale.act()`` once per frame of its frame skip), so the protocol's own steps are measured.
Before each frame it clones the emulator state; a reference ``ALEInterface`` of the same ROM
with ``repeat_action_probability = 0`` is restored to that state and stepped once with each
action the emulator could execute (the agent's, or an earlier one that may still be stuck), and
the protocol emulator's result (reward, RAM, screen) is compared with theirs. The executed
action is hidden, so the measurement is a hidden-Markov likelihood over ``p`` on a grid: per
frame the executed action is kept with probability ``p`` or replaced by the agent's, and a
frame's result rules out the actions whose reference result differs. A frame on which the
agent's action and the likeliest other one give identical results (mostly: the game did not read
the joystick) is skipped after those two reference frames; whether a frame is used depends only
on the reference results, never on what the protocol emulator did, so skipping cannot bias the
estimate. With every distinguishable frame a fresh sticky decision, the maximum-likelihood ``p``
is the estimate; in the common case (one previous action, told apart on the first frame) it is
exactly the share of such frames that kept the previous action. The test is a likelihood-ratio
test at 4 standard errors.

Two emulator facts shape it (measured on all 62 games of the Atari specs). A state cloned right
after ``reset_game()`` does not reproduce the next two frames in Amidar and Q*bert (the reset
leaves state outside the clone), so the first :data:`POST_RESET_FRAMES` frames of an episode
are not compared. And a frame can depend on what the emulator did on the frame before, which a
clone does not hold (Yars' Revenge, presumably through undriven data-bus bits; a freshly
loaded ALE).
So before the candidates are tried, the reference plays one frame from the saved state, and
every candidate starts from the same leftovers: either all of them reproduce the protocol
emulator or none does. A frame that no candidate reproduces says nothing about the sticky
decision; it is counted as ``unexplained`` and ignored (with ``p = 0`` the estimate stays
exactly 0 in Yars' Revenge, where about one compared frame in seven is such).

Validation (2,000 frames of a random agent per game, seed 0, all 62 games): ``p = 0`` is
measured as exactly 0 and ``p = 1`` as exactly 1 on every game; ``p = 0.25`` gives an interval
containing 0.25 on every game, with 100-600 informative frames, except Q*bert (input is read
only between jumps: too few samples). Over ten seeds, Pong, Freeway and Montezuma's Revenge
average 0.245-0.247.

Classes: StickyEstimate, StickyProbe.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
from ale_py import Action, ALEInterface, ALEState, LoggerMode, roms
from numpy.typing import NDArray

from arcadebench.errors import InvalidArgument

__all__ = [
    "GRID",
    "MIN_INFORMATIVE",
    "POST_RESET_FRAMES",
    "TOLERANCE_SE",
    "StickyEstimate",
    "StickyProbe",
    "estimate_from_likelihood",
    "reference_emulator",
]

TOLERANCE_SE = 4.0
"""Standard errors within which the measured probability must lie (likelihood-ratio test)."""
MIN_INFORMATIVE = 30
"""Informative frames below which the estimate is reported as too few samples, never failed."""
POST_RESET_FRAMES = 2
"""Frames after ``reset_game()`` that a cloned state does not reproduce (Amidar, Q*bert)."""
GRID = np.linspace(0.0, 1.0, 1001)
"""The probabilities the likelihood is evaluated at (steps of 0.001)."""


@dataclass(frozen=True)
class StickyEstimate:
    """What :class:`StickyProbe` measured.

    Attributes:
        declared: the spec's ``repeat_action_probability``.
        estimate: the maximum-likelihood probability (``None`` without informative frames).
        low: the lowest probability within :data:`TOLERANCE_SE` standard errors.
        high: the highest probability within :data:`TOLERANCE_SE` standard errors.
        informative: frames whose result ruled out some candidate action.
        compared: frames compared with the reference emulator.
        unexplained: frames no candidate action reproduced.
    """

    declared: float
    estimate: float | None
    low: float | None
    high: float | None
    informative: int
    compared: int
    unexplained: int

    @property
    def verdict(self) -> str:
        """``"ok"``, ``"fail"`` (declared outside the interval) or ``"too few samples"``."""
        if self.informative < MIN_INFORMATIVE or self.low is None or self.high is None:
            return "too few samples"
        return "ok" if self.low <= self.declared <= self.high else "fail"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-able dict of the fields and the verdict."""
        return {
            "declared": self.declared,
            "estimate": self.estimate,
            "interval": [self.low, self.high],
            "informative": self.informative,
            "compared": self.compared,
            "unexplained": self.unexplained,
            "verdict": self.verdict,
        }


def _outcome(ale: ALEInterface, reward: float) -> tuple[float, bytes, bytes]:
    return reward, ale.getRAM().tobytes(), ale.getScreen().tobytes()


@functools.lru_cache(maxsize=4)
def reference_emulator(game: str) -> tuple[ALEInterface, ALEState]:
    """A loaded ``ALEInterface`` of ``game`` without sticky actions, and its power-on state.

    Shared by every probe of the game in the process (the check plays a game under several
    specs in a row; the audit's meters follow one env in it): loading a ROM costs 63 ms, a
    third of a short check's play. Sharing is safe because every comparison first restores the
    state it needs (the probed emulator's, or the power-on one for an env made anew).
    """
    rom = roms.get_rom_path(game)
    if rom is None:
        raise InvalidArgument(f"`game` must be an ale-py ROM, got {game!r}")
    reference = ALEInterface()
    reference.setLoggerMode(LoggerMode.Error)
    reference.setFloat("repeat_action_probability", 0.0)
    reference.loadROM(rom)
    return reference, reference.cloneState()


class StickyProbe:
    """Stands in for an ``AtariEnv``'s ``ale`` and measures the sticky-action probability.

    Install it with :meth:`attach` before the env's first reset and remove it with
    :meth:`detach`; everything but ``act`` and ``reset_game`` is passed to the real emulator,
    whose behaviour the probe only reads (the check's determinism rule replays the same seed
    without the probe and compares).

    Args:
        ale (ale_py.ALEInterface): the emulator probed, loaded with ``game``'s ROM.
        game: the ROM's name; a reference emulator of it without sticky actions replays each
            frame.
        declared: the sticky-action probability the spec declares, which the probe is judged
            against.

    Example:
        >>> from ale_py.env import AtariEnv
        >>> env = AtariEnv("pong", repeat_action_probability=0.25, full_action_space=True)
        >>> probe = StickyProbe.attach(env, "pong", 0.25)
        >>> _ = env.reset(seed=0)
        >>> rng = np.random.default_rng(0)
        >>> for _ in range(500):
        ...     _ = env.step(int(rng.integers(18)))
        >>> result = probe.detach(env)
        >>> result.verdict, result.low < 0.25 < result.high
        ('ok', True)
        >>> env.close()
    """

    def __init__(self, ale: ALEInterface, game: str, declared: float) -> None:
        """Probe ``ale`` (a loaded emulator of ``game``) against the ``declared`` probability."""
        if isinstance(declared, bool) or not isinstance(declared, Real) or not 0 <= declared <= 1:
            raise InvalidArgument(f"`declared` must be a probability in [0, 1], got {declared!r}")
        self._ale: ALEInterface = ale
        self._declared: float = float(declared)
        self._grid: NDArray[np.float64] = np.union1d(GRID, [self._declared])
        self._at_declared: int = int(np.searchsorted(self._grid, self._declared))
        self._loglik: NDArray[np.float64] = np.zeros_like(self._grid)
        self._ref: ALEInterface = reference_emulator(game)[0]
        self.informative: int = 0
        self.compared: int = 0
        self.unexplained: int = 0
        self._start()

    @classmethod
    def attach(cls, env: Any, game: str, declared: float) -> StickyProbe:
        """Install a probe in ``env.unwrapped`` (an ``AtariEnv`` of ``game``) and return it.

        ``declared`` is the probability the spec declares, not the one the env was given: the
        probe measures whether the env does what the spec says.
        """
        base = env.unwrapped
        probe = cls(base.ale, game, declared)
        base.ale = probe
        return probe

    def detach(self, env: Any) -> StickyEstimate:
        """Give ``env`` its emulator back; return the estimate."""
        env.unwrapped.ale = self._ale
        return self.estimate()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ale, name)

    def _start(self) -> None:
        """After a reset the executed action is NOOP (ALE's reset) for every ``p``."""
        self._belief: dict[Action, np.ndarray] = {Action.NOOP: np.ones_like(self._grid)}
        self._skip = POST_RESET_FRAMES

    def reset_game(self) -> None:
        """Reset the game (ale-py's ``reset_game``) and the belief about the executed action."""
        self._ale.reset_game()
        self._start()

    def act(self, action: Action, paddle_strength: float = 1.0) -> float:
        """Emulate one frame in the protocol emulator, measuring its sticky decision."""
        belief = self._belief
        if len(belief) == 1 and action in belief:
            return self._ale.act(action, paddle_strength)
        grid = self._grid
        total = sum(belief.values())
        prior = {c: grid * weight for c, weight in belief.items()}
        prior[action] = prior.get(action, 0.0) + (1.0 - grid) * total
        if self._skip:
            self._skip -= 1
            self._belief = _normalised(prior)
            return self._ale.act(action, paddle_strength)
        state = self._ale.cloneState()
        self._ref.restoreState(state)
        self._ref.act(action, paddle_strength)  # the same hidden bus for every candidate
        others = [c for c in prior if c != action]
        contrast = max(others, key=lambda c: float(prior[c][self._at_declared]))
        results = {c: self._reference(state, c, paddle_strength) for c in (action, contrast)}
        if results[action] == results[contrast]:  # the joystick is not read: no information
            self._belief = _normalised(prior)
            return self._ale.act(action, paddle_strength)
        for candidate in others:
            if candidate not in results:
                results[candidate] = self._reference(state, candidate, paddle_strength)
        reward = self._ale.act(action, paddle_strength)
        seen = _outcome(self._ale, reward)
        self.compared += 1
        matching = [c for c in prior if results[c] == seen]
        if not matching:  # not reproducible from the saved state: ignore the frame
            self.unexplained += 1
            self._belief = _normalised(prior)
            return reward
        self.informative += 1
        posterior = {c: prior[c] for c in matching}
        evidence = sum(posterior.values())
        with np.errstate(divide="ignore"):
            self._loglik += np.log(evidence)
        self._belief = {c: w for c, w in _normalised(posterior).items() if w.any()}
        return reward

    def _reference(
        self, state: Any, action: Action, paddle_strength: float
    ) -> tuple[float, bytes, bytes]:
        self._ref.restoreState(state)
        return _outcome(self._ref, self._ref.act(action, paddle_strength))

    def estimate(self) -> StickyEstimate:
        """The maximum-likelihood probability and its interval so far."""
        return estimate_from_likelihood(
            self._grid,
            self._loglik,
            self._declared,
            self.informative,
            self.compared,
            self.unexplained,
        )


def estimate_from_likelihood(
    grid: NDArray[np.float64],
    loglik: NDArray[np.float64],
    declared: float,
    informative: int,
    compared: int,
    unexplained: int,
) -> StickyEstimate:
    """The maximum-likelihood probability on ``grid`` and its likelihood-ratio interval.

    The interval holds the probabilities within :data:`TOLERANCE_SE` standard errors; without
    informative frames there is no estimate. :class:`StickyProbe` and the audit's reference
    emulator (:mod:`arcadebench.benchmarks.audit.shadow`) both end here.

    Example:
        >>> grid = GRID[1:-1]
        >>> loglik = 30 * np.log(grid) + 90 * np.log1p(-grid)  # 30 of 120 frames kept
        >>> e = estimate_from_likelihood(grid, loglik, 0.25, 120, 120, 0)
        >>> e.estimate, e.verdict
        (0.25, 'ok')
    """
    if not informative:
        return StickyEstimate(declared, None, None, None, 0, compared, unexplained)
    best = int(np.argmax(loglik))
    inside = grid[loglik >= loglik[best] - TOLERANCE_SE**2 / 2]
    return StickyEstimate(
        declared=declared,
        estimate=_round(grid[best]),
        low=_round(inside.min()),
        high=_round(inside.max()),
        informative=informative,
        compared=compared,
        unexplained=unexplained,
    )


def _normalised(weights: dict[Action, np.ndarray]) -> dict[Action, np.ndarray]:
    """Divide by the total per grid point; points where every weight is 0 stay 0."""
    total = sum(weights.values())
    safe = np.where(total > 0, total, 1.0)
    return {c: w / safe for c, w in weights.items()}


def _round(value: float) -> float:
    return float(round(float(value), 6)) if math.isfinite(value) else float(value)
