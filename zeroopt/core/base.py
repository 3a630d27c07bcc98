"""What every part of a solver shares: the problem's context, the state, a move, and the part protocols.

A leaf: it imports none of zeroopt's parts, so every part imports it and none imports another part for its
types. A solver is a chain of parts (:func:`zeroopt.chain`), each of one stage of an iteration and each keeping one
contract, ``init`` and ``update`` over the iteration's record (:mod:`zeroopt.core.stages`); a part is written as its
stage's function, whose protocol is here:

=================  ===========================================================  ===============================
stage              protocol (call signature)                                    built-in parts, in ``zeroopt.``
=================  ===========================================================  ===============================
sampling           :class:`DirectionSampler` ``sample(rng, q, d, t)``           ``samplers``, ``orthogonal``,
                                                                                ``subspace``, ``box``
probe shaping      :class:`ProbeShape` ``(directions, x, active)``              ``shaping``, ``history_subspace``
estimating         :class:`GradientEstimator` ``(x, fx, u, beta, scale, eps)``  ``estimators``
direction          :class:`DirectionRule` ``(solver, before, estimate)``        ``momentum``, ``prior``,
                                                                                ``quasi_newton``
stepping           :class:`StepRule` ``(x, fx, g, step, eps, retract)``         ``stepping``
amending the move  :class:`Behaviour` ``(solver, before, estimate, move)``      ``parts`` (the best probe); the
                                                                                probe radius: ``radius``,
                                                                                ``radius_step``, ``noise``
stopping           :class:`Behaviour` that sets ``converged``                   ``stopping``
precision          :class:`Precision` ``(beta, value)``                         ``precision``
=================  ===========================================================  ===============================

Estimators and step rules are generators: they ``yield`` oracle requests (:mod:`zeroopt.oracles.requests`) and
``return`` their result, so a solver runs alone or in lockstep with others. Parts that read the solver see
only its :class:`SolverSettings`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from ..oracles.requests import Request, Response
from .constants import PRESETS

__all__ = [
    "Behaviour", "DirectionRule", "DirectionSampler", "GradientEstimate", "GradientEstimator", "Move", "Precision",
    "ProbeShape", "Retraction", "SolverContext", "SolverSettings", "SolverState", "StepOutcome", "StepResult",
    "StepRule",
]

Retraction = Callable[[NDArray[np.float64]], NDArray[np.float64]]


@dataclass(frozen=True)
class SolverContext:
    """What a solver may know about the problem it is built for.

    Attributes
    ----------
    dim
        Dimension d of the (flattened) variable.
    lipschitz
        L₁, the Lipschitz constant of the gradient, when known.
    shape
        The variable's array shape (e.g. an image's ``(1, 28, 28)``), for parts that need its structure.
    unit_sphere
        The objective depends on the direction of x only (like g(θ), a distance along the ray of θ):
        iterates are kept on the unit sphere and probes are unit-norm directions.
    radial
        The value is a *radius*: the distance from a centre, along the ray of x, to a set (the hard-label
        attack's g(θ)), so "is f(θ') < r?" asks whether the point at radius r along θ' lies in the set, and
        the semicircular step (:func:`~zeroopt.step.stepping.semicircle_step`) applies. Implies ``unit_sphere``.
    adjustable_precision
        The oracle answers to a requested precision ε, at a cost that grows as ε shrinks, so a solver
        may tie ε to its smoothing radius β.
    piecewise_constant
        The value is piecewise constant (a tree ensemble's boundary distance jumps only where the ray's first
        crossing moves to another leaf's face): parts that assume a slope everywhere may be left out.
    constants
        A published constant set (:data:`zeroopt.core.constants.PRESETS`: ``"paper"`` or ``"reference"``) for
        solvers that take their q and β from one; ``None``: the solver's own defaults.
    """

    dim: int
    lipschitz: float | None = None
    shape: tuple[int, ...] | None = None
    unit_sphere: bool = False
    adjustable_precision: bool = False
    constants: str | None = None
    radial: bool = False
    piecewise_constant: bool = False

    def __post_init__(self) -> None:
        if self.radial and not self.unit_sphere:
            raise ValueError("a radial objective depends on the direction of x only: pass unit_sphere=True too")
        if self.constants is not None and self.constants not in PRESETS:
            raise ValueError(f"constants (preset) must be one of {sorted(PRESETS)} or None, got {self.constants!r}")


class SolverSettings(Protocol):
    """What a part may read off the solver it runs in (:class:`~zeroopt.Chain` has all of it)."""

    @property
    def name(self) -> str: ...
    @property
    def beta(self) -> float: ...  # the initial smoothing radius
    @property
    def step(self) -> float: ...  # the initial step size
    @property
    def retract(self) -> Retraction | None: ...


@dataclass(frozen=True)
class SolverState:
    """Everything a solver carries between iterations."""

    x: NDArray[np.float64]
    fx: float
    fx_eps: float
    beta: float
    step: float
    iteration: int
    rng: np.random.Generator
    #: What behaviours remember between iterations (e.g. :class:`~zeroopt.NoProgressRule`'s window),
    #: by key; a behaviour returns an updated copy in its :class:`Move`, never mutates it.
    memory: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class StepOutcome:
    """The state after one iteration plus what the iteration's record needs."""

    state: SolverState
    eps: float
    beta: float  # the smoothing radius this iteration's probes used (the state may already hold a smaller one)
    step_taken: float
    grad_norm: float
    converged: bool = False


@dataclass(frozen=True)
class GradientEstimate:
    """An estimate of ∇f (of its smoothed version, for forward differences).

    Attributes
    ----------
    g
        The estimate.
    eps
        Largest precision reported for the probe values (0 for comparisons).
    used
        Number of probes that contributed (probes with an infinite value are dropped).
    best_x, best_f, best_eps
        The best probe point and its value, when values were observed (forward differences).
    below_fraction
        For comparison estimators: the fraction of probes that found a lower value (``None`` otherwise). Far
        from ½, the probes mostly measure an offset common to all of them (curvature at radius β, the
        precision of f(x)) rather than the slope, which a behaviour may act on
        (:class:`~zeroopt.step.radius.RadiusFollowsBalance` narrows the probe radius on it).
    probes, weights
        The estimate's terms, when the estimator states them: ``g = weights @ probes`` (one row of ``probes``
        per probe that contributed). A direction rule that weighs the estimate's own noise
        (:class:`~zeroopt.direction.prior.HistoryPrior`) reads them; ``None`` otherwise.
    differences
        The value differences ``f(x + βu_i) − f(x)`` of the probes that contributed, when values were observed
        (forward differences): a part that weighs them against the precision ``eps``
        (:class:`~zeroopt.step.noise.RadiusAboveNoise`) reads them; ``None`` otherwise.
    """

    g: NDArray[np.float64]
    eps: float
    used: int
    best_x: NDArray[np.float64] | None = None
    best_f: float = float("inf")
    best_eps: float = 0.0
    below_fraction: float | None = None
    probes: NDArray[np.float64] | None = None
    weights: NDArray[np.float64] | None = None
    differences: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class StepResult:
    """The new iterate and the step-size state to carry to the next iteration."""

    x: NDArray[np.float64]
    fx: float
    fx_eps: float
    step_taken: float  # 0 when the iterate did not move
    next_step: float  # the step size to start from next iteration


@dataclass(frozen=True)
class Move:
    """The outcome of one iteration as it passes through the behaviours.

    Attributes
    ----------
    x, fx, fx_eps
        The next iterate, its value and the precision of that value.
    step_taken
        Distance moved along the estimate (0 when the iterate did not move).
    next_step
        The step size the next iteration starts from.
    beta
        The smoothing radius of the next iteration.
    converged
        Whether the solver's own stopping rule fired.
    memory
        What behaviours remember into the next iteration (the state's ``memory``, updated by copy).
    """

    x: NDArray[np.float64]
    fx: float
    fx_eps: float
    step_taken: float
    next_step: float
    beta: float
    converged: bool = False
    memory: Mapping[str, Any] = field(default_factory=dict)


class DirectionSampler(Protocol):
    """Draws probe directions. A sampler whose draws do not depend on an input's shape may say so with a class
    attribute ``shape_free = True``: a solver that keeps its probes off some coordinates
    (``skip_flat``) then draws it within the others; any other sampler's draws are masked there instead."""

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        """Return ``(q, d)`` directions."""
        ...

    def scale(self, d: int) -> float:
        """Factor c with ``c * E[u u^T] = I``."""
        ...


class ProbeShape(Protocol):
    """Reshapes an iteration's probes: ``shape(directions, x, active) -> directions`` of the same shape.

    Called by :class:`~zeroopt.Chain` on every iteration's ``(q, d)`` probe directions with the iterate
    ``x`` and the indices of the probed coordinates (``None``: all of them)."""

    def __call__(
        self, directions: NDArray[np.float64], x: NDArray[np.float64], active: NDArray[np.intp] | None
    ) -> NDArray[np.float64]: ...


class GradientEstimator(Protocol):
    """Signature shared by estimators."""

    def __call__(
        self,
        x: NDArray[np.float64],
        fx: float,
        directions: NDArray[np.float64],
        beta: float,
        scale: float,
        eps: float | None,
    ) -> Generator[Request, Response, GradientEstimate]: ...


class DirectionRule(Protocol):
    """Turns an iteration's gradient estimate into the direction the step rule follows."""

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate
    ) -> tuple[NDArray[np.float64], dict[str, Any]]: ...


#: A step rule: ``rule(x, fx, direction, step, eps, retract, **settings)`` yields requests, returns a StepResult; a
#: rule with a keyword argument ``iteration`` is also given the iteration's number (:class:`~zeroopt.core.stages.Step`).
StepRule = Callable[..., Generator[Request, Response, StepResult]]


class Behaviour(Protocol):
    """Amends the move an iteration proposes (:mod:`zeroopt.step.amends`, :mod:`zeroopt.step.radius`, ...)."""

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move
    ) -> Move: ...


class Precision(Protocol):
    """The precision ε to request from the oracle at smoothing radius β (``None``: the oracle's default).

    ``value`` is the current iterate's value (``nan`` before any is known), for precisions that scale with it.
    """

    def __call__(self, beta: float, value: float = math.nan) -> float | None: ...
