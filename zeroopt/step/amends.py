"""The amend stage's best probe, and the unit-sphere retraction a chain applies to every new iterate.

A solver is a :class:`~zeroopt.Chain` of parts, in the spirit of optax's ``chain``: a probe count, a direction
sampler, a gradient estimator and a step rule propose a :class:`~zeroopt.Move`; then each part after them may amend that
move in turn (the stages and the contract every part keeps: :mod:`zeroopt.core.stages`):

* :class:`BestProbe` — move to the best probe point when it beats the step rule's result;
* :func:`unit_sphere` — a retraction that puts every iterate back on the unit sphere.

A new behaviour is a dataclass with ``__call__(solver, before, estimate, move) -> Move`` and the
:class:`~zeroopt.core.stages.AmendsMove` mixin (or any such function wrapped in :class:`~zeroopt.core.stages.Amend`).
The other amend parts: :mod:`zeroopt.step.radius`, :mod:`zeroopt.step.radius_step`, :mod:`zeroopt.step.noise`; the
probe schedules of the count stage: :mod:`zeroopt.sample.counts`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import norm as vector_norm
from ..core.base import GradientEstimate, Move, SolverSettings, SolverState
from ..core.stages import AmendsMove

__all__ = ["BestProbe", "unit_sphere"]


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


def unit_sphere(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Retraction onto the unit sphere: ``x / ‖x‖`` (a zero vector is left as it is).

    For objectives that depend on a direction only, e.g. a distance along the ray ``x0 + λ θ/‖θ‖``.
    """
    length = vector_norm(x)
    return x / length if length > 0 else x
