"""Steps that stay at the problem's scale: :class:`BoundedStep`, and the probe radius kept where answers are finite:
:class:`RadiusOffNonFinite`.

A value-difference estimate is as large as the objective is steep: on a badly scaled function (the bent cigar,
f = x₁² + 10⁶ Σ xᵢ²) the estimate at a start three units out has a norm near 10⁷, and a line search that starts
from the reference step 0.2 first tries a point millions of units away, where the objective overflows or its
simulator fails; under noise nobody stated, an estimate of noise over a narrow radius is as large, and the first
try lands as far. A trust region never asks that far: its radius starts at a share of the start's scale and grows
only on success. :class:`BoundedStep` gives a descent the same safeguard: the first point each step tries lies at
most :data:`STEP_BOUND` times the start's scale ``max(‖x0‖, 1)`` from the iterate. A line search still grows the
step past it while the value keeps falling, as a trust region grows on success; the next iteration starts within
the bound again.

:class:`RadiusOffNonFinite` narrows the probe radius β when some probes were answered +inf (a NaN, an overflow, a
point outside the objective's domain, which the estimators leave out): the probes reach past where the objective
is defined, so the next ones are drawn closer.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import host, norm
from ..core.base import GradientEstimate, SolverSettings, SolverState
from ..core.stages import ChoosesDirection, Iteration

__all__ = ["NON_FINITE_BETA_SHRINK", "STEP_BOUND", "BoundedStep", "RadiusOffNonFinite", "start_scale"]

#: The first try of each step at most once the start's scale max(‖x0‖, 1) from the iterate. A trust region's first
#: radius is a tenth of it (Py-BOBYQA's, COBYQA's, CMA-ES's σ₀ by custom); a descent whose estimate is sound takes
#: steps well inside the whole scale, so the bound only acts where the estimate is far steeper than the distance
#: to the start's own scale can use: a badly scaled function, or noise over a narrow radius.
STEP_BOUND = 1.0
#: β is halved after an estimate that lost probes to +inf answers: the probes reached beyond where f is finite.
NON_FINITE_BETA_SHRINK = 0.5


def start_scale(x0: NDArray[np.float64]) -> float:
    """The start's scale, ``max(‖x0‖, 1)``: what a step's first try and a probe radius are bounded by."""
    return max(float(norm(x0)), 1.0)


@dataclass(frozen=True)
class BoundedStep(ChoosesDirection):
    """Stage ``direction``: the direction shortened so that the step rule's first try, ``step · ‖direction‖``
    from the iterate, is at most ``share · max(‖x0‖, 1)`` (module docstring); a shorter one passes as it is.

    Parameters
    ----------
    share
        The bound as a multiple of the scale, > 0.

    Examples
    --------
    >>> import numpy as np, zeroopt
    >>> cigar = lambda x: float(x[0] ** 2 + 1e6 * np.sum(x[1:] ** 2))
    >>> far = []
    >>> res = zeroopt.minimize(lambda x: far.append(np.linalg.norm(x)) or cigar(x), np.full(10, 3.0),
    ...                        solver="coordinate", budget=300, seed=0)
    >>> bool(max(far) < 3 * np.linalg.norm(np.full(10, 3.0)))  # the reference step 0.2 would try 10⁶ units out
    True
    """

    share: float = STEP_BOUND
    key: str = field(default="step_bound", repr=False)  # where it keeps the start's scale: not a setting

    def __post_init__(self) -> None:
        if not (math.isfinite(self.share) and self.share > 0):
            raise ValueError(f"the step bound is a multiple of the start's scale, positive and finite; got "
                             f"{self.share!r}")

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {self.key: start_scale(x0)}

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        memory = dict(before.memory)
        g = estimate.g
        length = float(before.step) * float(norm(g))
        bound = self.share * float(memory.get(self.key, 1.0))
        if not length > bound:  # (a NaN length passes: no step rule moves along it)
            return g, memory
        return g * (bound / length), memory


@dataclass(frozen=True)
class RadiusOffNonFinite:
    """Stage ``amend``: β times ``shrink`` after an estimate that used fewer probes than it drew — those answered
    +inf, which the value-difference estimators leave out (module docstring); otherwise the move as it is.

    Parameters
    ----------
    shrink
        The factor, in (0, 1).
    """

    shrink: float = NON_FINITE_BETA_SHRINK
    stage: ClassVar[str] = "amend"

    def __post_init__(self) -> None:
        if not 0 < self.shrink < 1:
            raise ValueError(f"shrink is the factor of β after probes answered +inf, in (0, 1); got {self.shrink!r}")

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}

    def update(self, it: Iteration) -> Iteration:
        est, move = it.estimate, it.move
        if est is None or move is None or est.differences is None and est.used > 0:
            return it  # (comparisons observe no values: nothing was left out)
        if est.used >= it.q or it.q == 0 or not np.isfinite(host(it.state.fx)):
            return it
        return replace(it, move=replace(move, beta=move.beta * self.shrink))
