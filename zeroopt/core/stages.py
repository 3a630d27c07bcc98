"""The one contract every part of a solver keeps: ``init`` and ``update`` over the :class:`Iteration` record.

An iteration is a record passed along the solver's chain of parts (:func:`zeroopt.chain`); each part reads
what the parts before it wrote and returns the record with its own stage's field written:

=============  ==================================  ===========================================================
stage          writes                              parts
=============  ==================================  ===========================================================
``flat``       ``state``, ``active``               :class:`SkipFlat`
``precision``  ``eps``                             :mod:`zeroopt.sample.precision`
``count``      ``q``                               :class:`FixedProbes`, ``SqrtProbeGrowth``, ``ProbeSchedule``
``sample``     ``probes``, ``scale``               :class:`Sample` (any :class:`~zeroopt.core.base.DirectionSampler`)
``shape``      ``probes``                          ``IterateShapedProbes``, ``HistorySubspaceProbes``
``estimate``   ``estimate``, ``direction``         :class:`Estimate` (any :class:`~zeroopt.core.base.GradientEstimator`)
``direction``  ``direction``, ``memory``           ``AdaptiveMomentum``, ``HistoryPrior``, ``QuasiNewton``
``step``       ``move``                            :class:`Step` (any :class:`~zeroopt.core.base.StepRule`)
``amend``      ``move``                            ``BestProbe``, the probe-radius rules, :class:`Amend`
``stop``       ``move`` (its ``converged``)         :mod:`zeroopt.step.stopping`
=============  ==================================  ===========================================================

``init(x0)`` gives what the part remembers from the start (entries of the state's ``memory``; most parts start
with none); ``update(it)`` returns the next record — or, for the parts that ask the oracle (estimating, stepping,
skipping flat coordinates), a generator that yields requests and returns it. Parts are frozen dataclasses of
their own settings: what a part remembers between iterations travels in ``memory``, by key, and is never mutated.
The stage mixins below turn a stage's plain function (``behaviour(solver, before, estimate, move)``, a precision
rule ``rule(beta, value)``, …) into that contract, so a part is written as the function its stage needs.
"""

from __future__ import annotations

import inspect
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from ..oracles.requests import FlatCoordinates, FlatMask, Request, Response
from .arrays import like
from .base import (
    Behaviour,
    DirectionSampler,
    GradientEstimate,
    GradientEstimator,
    Move,
    SolverSettings,
    SolverState,
    StepResult,
    StepRule,
)

__all__ = [
    "STAGES", "WRAPPED", "Amend", "AmendsMove", "ChoosesDirection", "CountsProbes", "Estimate", "FixedProbes",
    "Iteration", "Part", "Sample", "SetsPrecision", "ShapesProbes", "SkipFlat", "Step", "StopsRun", "carried",
    "wrapped",
]

#: The stages in the order an iteration runs them.
STAGES = ("flat", "precision", "count", "sample", "shape", "estimate", "direction", "step", "amend", "stop")
#: Where the wrapper parts (:class:`Sample`, :class:`Estimate`, :class:`Step`, :class:`Amend`) keep what they wrap.
WRAPPED = ("sampler", "estimator", "rule", "behaviour")


def wrapped(part: Any) -> Any:
    """The sampler, estimator, step rule or behaviour a wrapper part carries; any other part itself."""
    return next((getattr(part, a) for a in WRAPPED if hasattr(part, a)), part)


def carried(part: Any) -> list[Any]:
    """``part`` and, outermost first, what it carries: the part a decorating part runs (its ``inner``, e.g.
    :class:`~zeroopt.estimate.unstated_noise.EstimatedNoise`'s), and what each wrapper wraps (:func:`wrapped`)."""
    out = [part]
    while True:
        nxt = getattr(out[-1], "inner", None) or wrapped(out[-1])
        if any(nxt is seen for seen in out):  # a part that carries nothing is its own wrapped()
            return out
        out.append(nxt)


@dataclass(frozen=True)
class Iteration:
    """One iteration as it passes along the chain: each stage writes its field (None until it has run)."""

    solver: SolverSettings
    state: SolverState  # the iteration's starting state (a flat-coordinates part may move it first)
    memory: Mapping[str, Any] = field(default_factory=dict)
    eps: float | None = None  # the precision to request
    q: int = 0
    active: NDArray[np.intp] | None = None  # the coordinates to probe (None: all)
    probes: NDArray[np.float64] | None = None
    scale: float = 1.0  # the estimator's factor c with c·E[uuᵀ] = I for the probes' sampler
    estimate: GradientEstimate | None = None
    direction: NDArray[np.float64] | None = None  # what the step rule follows
    move: Move | None = None


@runtime_checkable
class Part(Protocol):
    """A solver's part: its stage, what it starts with, and how it changes an iteration."""

    stage: ClassVar[str]

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]: ...

    def update(self, it: Iteration) -> Iteration | Generator[Request, Response, Iteration]: ...


class _Starts:
    """Parts that remember nothing from the start."""

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}


class SetsPrecision(_Starts):
    """Stage ``precision``: a rule ``rule(beta, value) -> eps`` sets the precision the iteration requests."""

    stage: ClassVar[str] = "precision"

    def update(self, it: Iteration) -> Iteration:
        return replace(it, eps=self(it.state.beta, it.state.fx))  # type: ignore[operator]


class CountsProbes(_Starts):
    """Stage ``count``: a schedule ``schedule(state) -> int`` sets the iteration's number of probes."""

    stage: ClassVar[str] = "count"

    def update(self, it: Iteration) -> Iteration:
        return replace(it, q=int(self(it.state)))  # type: ignore[operator]


class ShapesProbes(_Starts):
    """Stage ``shape``: ``shape(probes, x, active) -> probes`` reshapes the drawn probes (their lengths kept)."""

    stage: ClassVar[str] = "shape"

    def update(self, it: Iteration) -> Iteration:
        return replace(it, probes=self(it.probes, it.state.x, it.active))  # type: ignore[operator]


class ChoosesDirection(_Starts):
    """Stage ``direction``: ``rule(solver, before, estimate) -> (direction, memory)`` turns the estimate (or the
    previous direction rule's direction, as the estimate's ``g``) into what the step rule follows."""

    stage: ClassVar[str] = "direction"

    def update(self, it: Iteration) -> Iteration:
        before = it.state if it.memory is it.state.memory else replace(it.state, memory=it.memory)
        estimate = it.estimate if it.direction is it.estimate.g else replace(it.estimate, g=it.direction)  # type: ignore[union-attr]
        direction, memory = self(it.solver, before, estimate)  # type: ignore[operator]
        return replace(it, direction=direction, memory=memory)


class AmendsMove(_Starts):
    """Stage ``amend``: ``behaviour(solver, before, estimate, move) -> move`` amends the proposed move."""

    stage: ClassVar[str] = "amend"

    def update(self, it: Iteration) -> Iteration:
        return replace(it, move=self(it.solver, it.state, it.estimate, it.move))  # type: ignore[operator]


class StopsRun(AmendsMove):
    """Stage ``stop``: a behaviour that resets a stalled run or ends it (the move's ``converged``)."""

    stage: ClassVar[str] = "stop"


@dataclass(frozen=True)
class FixedProbes(CountsProbes):
    """The same number of probes ``q`` every iteration."""

    q: int

    def __call__(self, state: SolverState) -> int:
        return self.q


@dataclass(frozen=True)
class Amend(AmendsMove):
    """A behaviour of your own (any ``behaviour(solver, before, estimate, move) -> Move``) as a part."""

    behaviour: Behaviour

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        return self.behaviour(solver, before, estimate, move)


@dataclass(frozen=True)
class SkipFlat(_Starts):
    """Stage ``flat``: ask the oracle which coordinates the objective does not depend on near the iterate
    (:class:`~zeroopt.oracles.requests.FlatCoordinates`, no query) and keep the probes off them; where it names
    an equivalent point of lower value (:class:`~zeroopt.oracles.requests.FlatMask`) the iterate moves there
    first. An oracle that knows nothing leaves the iteration as it is."""

    stage: ClassVar[str] = "flat"

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        state = it.state
        resp = yield FlatCoordinates(point=state.x, value=float(state.fx), radius=float(state.beta))
        if not isinstance(resp, FlatMask):
            return it
        if resp.point is not None and resp.value < state.fx:
            state = replace(state, x=np.asarray(resp.point, dtype=float), fx=float(resp.value))
        if resp.flat is None:
            return replace(it, state=state)
        active = np.flatnonzero(~np.asarray(resp.flat, dtype=bool))
        # Nothing flat: the plain draw. Fewer than two coordinates left: no direction to compare, so no restriction.
        return replace(it, state=state, active=active if 2 <= active.size < state.x.size else None)


@dataclass(frozen=True)
class Sample(_Starts):
    """Stage ``sample``: the sampler's ``q`` directions (within the iteration's ``active`` coordinates when a
    flat-coordinates part named some), drawn on the host from the state's generator — the same draws in every
    array namespace — and the estimator's scale for them."""

    sampler: DirectionSampler
    stage: ClassVar[str] = "sample"

    def update(self, it: Iteration) -> Iteration:
        u, scale = self.draw(it.state, it.q, it.active)
        return replace(it, probes=like(u, it.state.x), scale=scale)

    def draw(
        self, state: SolverState, q: int, active: NDArray[np.intp] | None
    ) -> tuple[NDArray[np.float64], float]:
        """``q`` directions for ``state`` (within ``active`` when given) and their scale."""
        d = state.x.shape[0]
        if active is None:
            return self.sampler.sample(state.rng, q, d, state.iteration), self.sampler.scale(d)
        n = active.size
        if getattr(self.sampler, "shape_free", False):
            within, scale = self.sampler.sample(state.rng, q, n, state.iteration), self.sampler.scale(n)
        else:  # a sampler tied to the input's shape: its draws, masked, at their own lengths
            full = self.sampler.sample(state.rng, q, d, state.iteration)
            within = full[:, active]
            kept = np.linalg.norm(within, axis=1, keepdims=True)
            within = np.where(kept > 0, within * np.linalg.norm(full, axis=1, keepdims=True) / np.maximum(kept, 1e-300),
                              0.0)
            scale = self.sampler.scale(d) * n / d
        u = np.zeros((len(within), d))
        u[:, active] = within
        return u, scale


@dataclass(frozen=True)
class Estimate(_Starts):
    """Stage ``estimate``: the estimator turns the probes' answers into a gradient estimate (at radius β, to the
    iteration's precision); the direction starts as the estimate itself."""

    estimator: GradientEstimator
    stage: ClassVar[str] = "estimate"

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s = it.state
        est: GradientEstimate = yield from self.estimator(s.x, s.fx, it.probes, s.beta, it.scale, it.eps)
        return replace(it, estimate=est, direction=est.g)


@dataclass(frozen=True)
class Step(_Starts):
    """Stage ``step``: the step rule moves along the direction and proposes the move.

    A rule with a keyword argument ``iteration`` is also handed the iteration's number t (0 for the first), so a
    schedule such as a 1/√t step is the rule itself.
    """

    rule: StepRule
    stage: ClassVar[str] = "step"

    def __post_init__(self) -> None:
        try:
            takes = "iteration" in inspect.signature(self.rule).parameters
        except (TypeError, ValueError):  # a callable whose signature cannot be read: the six arguments only
            takes = False
        object.__setattr__(self, "_takes_iteration", takes)

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s = it.state
        extra = {"iteration": s.iteration} if self._takes_iteration else {}  # type: ignore[attr-defined]
        res: StepResult = yield from self.rule(s.x, s.fx, it.direction, s.step, it.eps, it.solver.retract, **extra)
        move = Move(res.x, res.fx, res.fx_eps, res.step_taken, res.next_step, s.beta, memory=it.memory)
        if not np.isfinite(move.fx) and np.isfinite(s.fx):
            # A step rule that moves unconditionally (the theory's fixed step) can land where the oracle answers
            # +inf (outside the function's domain): the iterate stays put, from where differences can be formed.
            move = replace(move, x=s.x, fx=s.fx, fx_eps=s.fx_eps, step_taken=0.0)
        return replace(it, move=move)
