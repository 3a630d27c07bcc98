"""A probe radius that follows the balance of the comparisons: :class:`RadiusFollowsBalance`.

A comparison estimator asks, per probe u, whether f(x + βu) < f(x). Expanding,

    f(x + βu) − f(x) ≈ β ∇f·u + β²/2 uᵀHu,

so far from a minimum the slope term decides and about half the probes find a lower value; near one the slope
shrinks while the curvature term does not, and at a fixed β more and more probes find a *higher* value whatever
their direction: the answers say less about the slope, and the estimate crawls. A radius that shrinks with
the slope keeps the two terms in proportion. This behaviour narrows β while the comparisons are lopsided
beyond their sampling noise and widens it again, up to the solver's own β, once they are balanced within
it — so β changes only where the estimator's own answers say the curvature term has taken over. It reads
nothing but the estimate's ``below_fraction`` (comparison estimators state it; others leave β alone).

Not for an objective that is piecewise constant (a tree ensemble's hard-label g): there a narrow probe
resolves jumps rather than slope, and the comparisons are lopsided at every β (a ray must cross into another
leaf before its value changes at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..core.base import GradientEstimate, Move, SolverSettings, SolverState
from ..core.stages import AmendsMove

__all__ = [
    "BALANCE_FLOOR_RATIO",
    "BALANCE_NARROW_Z",
    "BALANCE_STEP",
    "BALANCE_WIDEN_Z",
    "RadiusFollowsBalance",
    "owned_beta_range",
]

#: Narrow β once the mean sign s̄ (+1 for a probe that found a higher value, −1 for a lower one) stands more
#: than two standard errors √((1 − s̄²)/q) above 0: the q comparisons say, beyond their own noise, that most
#: probes find a higher value. With q = 20 that takes 72% of them higher; with q = 200, 57%.
BALANCE_NARROW_Z = 2.0
#: Widen β again once s̄ is within one standard error of 0 (or below it): balanced up to the noise. The gap
#: to :data:`BALANCE_NARROW_Z` keeps one noisy estimate from undoing the last change.
BALANCE_WIDEN_Z = 1.0
#: Each change multiplies or divides β by √2: from the solver's β to its floor (÷10) in about 7 estimates.
BALANCE_STEP = math.sqrt(0.5)
#: Never narrower than a tenth of the solver's own β: for the hard-label attack's sign-growing that is Sign-OPT's
#: published β = 0.001, the narrowest radius the attack was measured at late in a run (docs/defaults.md).
BALANCE_FLOOR_RATIO = 0.1


def owned_beta_range(solver: SolverSettings, floor_ratio: float, beta: float) -> tuple[float, float] | None:
    """The range ``(floor_ratio · β₀, β₀)`` a radius rule keeps β in (β₀ the solver's own β), or ``None`` when
    ``beta`` lies outside it — another behaviour (the stall rule) moved it there, and the rule leaves it alone."""
    ceiling = float(solver.beta)
    floor = ceiling * floor_ratio
    # A small relative tolerance: β reached by repeated multiplication lands a rounding off its bounds.
    return (floor, ceiling) if floor * (1 - 1e-9) <= beta <= ceiling * (1 + 1e-9) else None


@dataclass(frozen=True)
class RadiusFollowsBalance(AmendsMove):
    """Narrow the smoothing radius β while the comparisons are lopsided, widen it while they are balanced.

    After each estimate of q comparisons with a ``below_fraction`` p (the share of probes that found a lower
    value), the mean sign ``s̄ = 1 − 2p`` and its standard error ``√((1 − s̄²)/q)``: s̄ more than ``narrow_z``
    standard errors above 0 multiplies β by ``step``; s̄ within ``widen_z`` standard errors of 0, or below
    it, divides β by ``step``; in between β holds. β stays within ``[floor_ratio · β₀, β₀]``, β₀ being the
    solver's own β. A β that another behaviour (the stall rule) moved outside that range is left alone.
    Estimators that state no ``below_fraction`` (forward differences) leave β as it is. Only a surplus of
    *higher* values narrows β: that is the curvature's sign at a minimum.

    Parameters
    ----------
    narrow_z, widen_z
        Thresholds on s̄ in standard errors, ``0 <= widen_z < narrow_z``.
    step
        The factor of one change, in (0, 1).
    floor_ratio
        The narrowest β as a share of the solver's own, in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt.core.base import GradientEstimate
    >>> from zeroopt import Move
    >>> class Solver:  # the one attribute the rule reads
    ...     beta = 0.01
    >>> rule = RadiusFollowsBalance()
    >>> move = Move(x=np.zeros(2), fx=1.0, fx_eps=0.0, step_taken=0.1, next_step=0.1, beta=0.01)
    >>> lopsided = GradientEstimate(g=np.zeros(2), eps=0.0, used=200, below_fraction=0.38)
    >>> round(rule(Solver(), None, lopsided, move).beta, 5)  # s̄ = 0.24, 3.6 standard errors
    0.00707
    >>> few = GradientEstimate(g=np.zeros(2), eps=0.0, used=20, below_fraction=0.35)
    >>> rule(Solver(), None, few, move).beta  # s̄ = 0.3 from 20 probes: 1.4 standard errors, β holds
    0.01
    """

    narrow_z: float = BALANCE_NARROW_Z
    widen_z: float = BALANCE_WIDEN_Z
    step: float = BALANCE_STEP
    floor_ratio: float = BALANCE_FLOOR_RATIO

    def __post_init__(self) -> None:
        if not 0 <= self.widen_z < self.narrow_z:
            raise ValueError(f"need 0 <= widen_z < narrow_z (standard errors of the mean sign); got "
                             f"widen_z={self.widen_z!r}, narrow_z={self.narrow_z!r}")
        if not 0 < self.step < 1:
            raise ValueError(f"step is the factor of one change, in (0, 1); got {self.step!r}")
        if not 0 < self.floor_ratio <= 1:
            raise ValueError(f"floor_ratio is a share of the solver's β, in (0, 1]; got {self.floor_ratio!r}")

    def __call__(
        self, solver: SolverSettings, before: SolverState | None, estimate: GradientEstimate, move: Move
    ) -> Move:
        p = estimate.below_fraction
        if p is None or not math.isfinite(p):
            return move
        bounds = owned_beta_range(solver, self.floor_ratio, move.beta)
        if bounds is None:
            return move
        floor, ceiling = bounds
        beta = move.beta
        mean = 1.0 - 2.0 * p
        error = math.sqrt(max(1.0 - mean * mean, 0.0) / max(int(estimate.used), 1))
        if mean > self.narrow_z * error:
            beta = max(beta * self.step, floor)
        elif mean <= self.widen_z * error:
            beta = min(beta / self.step, ceiling)
        return move if beta == move.beta else replace(move, beta=beta)
