"""Forward differences while they stand above the noise, central ones while they do not: :class:`AdaptiveDifferences`.

A forward difference costs one answer per probe and carries a curvature term ``β uᵀHu / 2``; a central one costs
two and carries none (:func:`~zeroopt.estimate.estimators.central_difference`). Far from a minimum the slope dwarfs both
the curvature term and the noise, and forward differences give the same estimate at half the answers; near it,
under noise, the noise-aware radius (:class:`~zeroopt.step.noise.RadiusAboveNoise`) widens β to keep the differences
above the noise, where the forward estimate's curvature term grows with β and the central one's does not. The
switch is read off that rule's own signal: central differences while β stands wider than the solver's own (the
rule has had to widen it), forward ones otherwise — the classical switch of finite-difference quasi-Newton codes
from forward to central differences once the forward estimate's error is no longer small beside the gradient
(Gill, Murray & Wright, *Practical Optimization*, 1981, §8.6).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..core.stages import Estimate, Iteration
from ..oracles.requests import Request, Response
from .estimators import central_difference, forward_difference

__all__ = ["AdaptiveDifferences", "WIDER_THAN_OWN"]

#: β counts as widened once it exceeds the solver's own by more than rounding: the noise rule's widening is a factor.
WIDER_THAN_OWN = 1.0 + 1e-9


@dataclass(frozen=True)
class AdaptiveDifferences:
    """Stage ``estimate``: :func:`~zeroopt.estimate.estimators.forward_difference` at the solver's own β (or narrower),
    :func:`~zeroopt.estimate.estimators.central_difference` once β has been widened beyond it (module docstring).

    With an exact oracle the noise rule never widens β, so the run is the forward-difference run, answer for
    answer. Needs the noise-aware radius in the chain (option ``beta_above_noise=True``); without it β is never
    widened and the part would be forward differences under another name, so the options refuse it.

    Examples
    --------
    >>> import numpy as np, zeroopt
    >>> f = lambda x: float(x @ x)
    >>> plain = zeroopt.minimize(f, np.ones(3), solver="coordinate", budget=200, seed=0, beta_above_noise=True)
    >>> same = zeroopt.minimize(f, np.ones(3), solver="coordinate", budget=200, seed=0, beta_above_noise=True,
    ...                         differences="adaptive")
    >>> bool(np.array_equal(plain.x, same.x))  # exact answers: never widened, so forward throughout
    True
    """

    stage: ClassVar[str] = "estimate"

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s = it.state
        widened = s.beta > float(it.solver.beta) * WIDER_THAN_OWN
        return (yield from Estimate(central_difference if widened else forward_difference).update(it))
