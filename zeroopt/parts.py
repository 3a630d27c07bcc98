"""Behaviours of a descent iteration as public, composable parts.

A :class:`~zeroopt.ComposedSolver` is a chain, in the spirit of optax's ``chain``: a direction sampler, a
gradient estimator and a step rule propose a :class:`Move`; then each of its ``behaviours`` may amend that
move in turn. The reference code's habits are such parts:

* :class:`BestProbe` — move to the best probe point when it beats the step rule's result;
* :class:`StallRule` — when the step size falls below a floor, reset it, shrink β, converge at a β floor;
* :class:`DiminishingReturnsRule` — converge when the second half of a run gained less than a fraction;
* :class:`NoProgressRule` — converge when the iterates' best value stops improving over a window (a
  stopping rule for step rules that never shrink, such as the theory's fixed step);
* :func:`unit_sphere` — a retraction that puts every iterate back on the unit sphere;
* :class:`PrecisionFollowsBeta` / :class:`PrecisionFollowsValue` / :class:`FixedPrecision` — what precision ε to ask
  the oracle for;
* :class:`ProbeSchedule` — a number of probes ``q`` that changes over the iterations.

A new behaviour is any callable ``behaviour(solver, before, estimate, move) -> Move``; a new precision rule
any callable ``rule(beta) -> eps | None``; a new schedule any callable ``schedule(state) -> int``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from .arrays import norm as vector_norm
from .base import Behaviour, GradientEstimate, Move, Precision, SolverSettings, SolverState

__all__ = [
    "BestProbe",
    "Behaviour",
    "DiminishingReturnsRule",
    "FixedPrecision",
    "Move",
    "NoProgressRule",
    "Precision",
    "PrecisionFollowsBeta",
    "PrecisionFollowsValue",
    "ProbeSchedule",
    "StallRule",
    "unit_sphere",
]


@dataclass(frozen=True)
class BestProbe:
    """Move to the best probe point when its value beats the step rule's result (the OPT reference code).

    The probe point is retracted like any iterate; the step taken is then the distance moved.
    """

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        if estimate.best_x is None or not estimate.best_f < move.fx:
            return move
        x = estimate.best_x if solver.retract is None else solver.retract(estimate.best_x)
        return replace(move, x=x, fx=estimate.best_f, fx_eps=estimate.best_eps,
                       step_taken=vector_norm(x - before.x))


@dataclass(frozen=True)
class StallRule:
    """The OPT reference code's stall rule.

    When the step size falls below ``step_min``, the finite differences are too coarse for the current
    neighbourhood: the step restarts at ``step_reset`` (the solver's initial step when ``None``), β is
    multiplied by ``beta_decay``, and the run converges once β < ``beta_min``.
    """

    step_min: float
    step_reset: float | None = None
    beta_decay: float = 0.1
    beta_min: float = 0.0

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        if not move.next_step < self.step_min:
            return move
        beta = move.beta * self.beta_decay
        reset = self.step_reset if self.step_reset is not None else solver.step
        return replace(move, next_step=reset, beta=beta, converged=beta < self.beta_min)


@dataclass(frozen=True)
class NoProgressRule:
    """Converge when the iterate's value has not improved in ``window`` consecutive iterations.

    An improvement is a value below the best iterate value so far by more than ``rtol · |best| + atol``.
    A step rule that never shrinks (the theory's fixed step) has no other rule to end a run: without this
    one, only the budget would. It remembers ``(best, iterations since)`` in the state's ``memory`` under
    ``key``, so one solver object serves any number of runs.
    """

    window: int = 200
    rtol: float = 1e-9
    atol: float = 0.0
    key: str = "no_progress"

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        best, since = move.memory.get(self.key, (before.fx, 0))
        if move.fx < best - (self.rtol * abs(best) + self.atol):
            best, since = move.fx, 0
        else:
            since += 1
        memory = {**move.memory, self.key: (best, since)}
        return replace(move, memory=memory, converged=move.converged or since >= self.window)


@dataclass(frozen=True)
class DiminishingReturnsRule:
    """Converge once the second half of the run improved its value by less than ``min_gain`` (relative).

    At iteration t >= ``first_check`` the iterate's value is compared with the one at iteration ⌈t/2⌉: a
    scale-free test of a run that still improves, but ever more slowly — the budget it would spend crawling
    buys more from a fresh start (:func:`~zeroopt.solve_many` with ``fresh_start``). The iterate values are
    kept in the state's ``memory`` under ``key``: an append-only log and the length of it this state has seen.
    """

    min_gain: float = 0.01
    first_check: int = 16
    key: str = "diminishing_returns"

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        # log[t] = f after iteration t. Extending the log in place costs O(1) per iteration (a copy would cost
        # O(t)); every state keeps its own length, so earlier states still see their prefix, and a state whose
        # log another move has already extended (two moves from one state) branches off a copy of its prefix.
        log, seen = move.memory.get(self.key, (None, 0))
        if log is None:
            log, seen = [before.fx], 1
        elif len(log) != seen:
            log = log[:seen]
        log.append(move.fx)
        t = seen
        converged = move.converged
        if t >= self.first_check:
            half = log[(t + 1) // 2]
            converged = converged or (half - move.fx) < self.min_gain * abs(half)
        return replace(move, memory={**move.memory, self.key: (log, t + 1)}, converged=converged)


@dataclass(frozen=True)
class FixedPrecision:
    """Always request ``eps``."""

    eps: float

    def __call__(self, beta: float, value: float = math.nan) -> float | None:
        return self.eps


@dataclass(frozen=True)
class PrecisionFollowsBeta:
    """Request ``eps = per_beta * beta``: the precision follows the smoothing radius.

    Theorem 1 (Cheng et al. 2019) ties ε to β; the reference code's binary searches stop at β/500.
    """

    per_beta: float

    def __call__(self, beta: float, value: float = math.nan) -> float | None:
        return self.per_beta * beta


#: :class:`PrecisionFollowsValue` never asks for less than this (a value at or near 0 would ask for ε = 0,
#: which no search reaches).
MIN_RELATIVE_EPS = 1e-12


@dataclass(frozen=True)
class PrecisionFollowsValue:
    """Request ``eps = per_beta * beta * |value|``: a precision relative to the current value.

    For a positive objective that scales with its argument, such as a distance g(θ) to a boundary, the
    differences a probe at radius β sees scale with the value itself: ε = β/500 in absolute terms is needlessly
    fine while the value is large (early, every search spends queries on digits nobody compares) and too coarse
    once it is small (late on a small-distance problem, ε reaches the size of the differences the comparisons
    must resolve, and the descent stalls). Relative precision keeps ε at the same fraction of what is compared.
    Before any value is known (or for an infinite one) it is ``per_beta * beta``; never below
    :data:`MIN_RELATIVE_EPS`.
    """

    per_beta: float

    def __call__(self, beta: float, value: float = math.nan) -> float | None:
        scale = abs(value) if math.isfinite(value) else 1.0
        return max(self.per_beta * beta * scale, MIN_RELATIVE_EPS)


@dataclass(frozen=True)
class ProbeSchedule:
    """A number of probes that changes over the iterations: ``q = schedule(iteration)``.

    Any callable ``state -> int`` may stand for ``q`` in a :class:`~zeroopt.ComposedSolver`; this one reads
    only the iteration, e.g. ``ProbeSchedule(lambda t: 10 if t < 50 else 20)``.
    """

    schedule: Callable[[int], int]

    def __call__(self, state: SolverState) -> int:
        return int(self.schedule(state.iteration))


@dataclass(frozen=True)
class SqrtProbeGrowth:
    """q growing like √t: ``q_t = min(cap, ceil(start · √(t + 1)))`` (HopSkipJump's schedule).

    Early iterations, far from a minimum, need only a rough direction, and a cheap one lets many more of
    them happen inside a small budget; later ones, whose progress is limited by the estimate's variance,
    get more probes. ``start = cap`` is a constant q.
    """

    start: int
    cap: int

    def __post_init__(self) -> None:
        if not 0 < self.start <= self.cap:
            raise ValueError(f"need 0 < start <= cap probes, got start={self.start}, cap={self.cap}")

    def __call__(self, state: SolverState) -> int:
        return int(min(self.cap, math.ceil(self.start * math.sqrt(state.iteration + 1))))


def unit_sphere(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Retraction onto the unit sphere: ``x / ‖x‖`` (a zero vector is left as it is).

    For objectives that depend on a direction only, e.g. a distance along the ray ``x0 + λ θ/‖θ‖``.
    """
    length = vector_norm(x)
    return x / length if length > 0 else x
