"""Parts of a descent iteration that belong to no single stage module: the best probe, probe schedules, the
unit-sphere retraction. The stopping and precision rules live in :mod:`zeroopt.stopping` and
:mod:`zeroopt.precision`, the move and the state in :mod:`zeroopt.base`.

A solver is a :class:`~zeroopt.Chain` of parts, in the spirit of optax's ``chain``: a probe count, a direction
sampler, a gradient estimator and a step rule propose a :class:`~zeroopt.Move`; then each part after them may amend that
move in turn (the stages and the contract every part keeps: :mod:`zeroopt.stages`):

* :class:`BestProbe` — move to the best probe point when it beats the step rule's result;
* :func:`unit_sphere` — a retraction that puts every iterate back on the unit sphere;
* :class:`ProbeSchedule`, :class:`SqrtProbeGrowth` — a number of probes ``q`` that changes over the iterations.

A new behaviour is a dataclass with ``__call__(solver, before, estimate, move) -> Move`` and the
:class:`~zeroopt.stages.AmendsMove` mixin (or any such function wrapped in :class:`~zeroopt.stages.Amend`); a new
precision rule ``rule(beta, value) -> eps | None`` with :class:`~zeroopt.stages.SetsPrecision`; a new schedule
``schedule(state) -> int`` with :class:`~zeroopt.stages.CountsProbes`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from .arrays import norm as vector_norm
from .base import GradientEstimate, Move, SolverSettings, SolverState
from .stages import AmendsMove, CountsProbes

__all__ = ["BestProbe", "ProbeSchedule", "SqrtProbeGrowth", "unit_sphere"]


@dataclass(frozen=True)
class BestProbe(AmendsMove):
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
class ProbeSchedule(CountsProbes):
    """A number of probes that changes over the iterations: ``q = schedule(iteration)``.

    A chain's ``count`` stage; this one reads only the iteration:
    ``ProbeSchedule(lambda t: 10 if t < 50 else 20)``.
    """

    schedule: Callable[[int], int]

    def __call__(self, state: SolverState) -> int:
        return int(self.schedule(state.iteration))


@dataclass(frozen=True)
class SqrtProbeGrowth(CountsProbes):
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
