"""A probe radius that follows the balance of the comparisons: :class:`RadiusFollowsBalance`.

A comparison estimator asks, per probe u, whether f(x + βu) < f(x). Expanding,

    f(x + βu) − f(x) ≈ β ∇f·u + β²/2 uᵀHu,

so far from a minimum the slope term decides and about half the probes find a lower value; near one the slope
shrinks while the curvature term does not, and at a fixed β most probes find a *higher* value whatever their
direction. The answers then carry less about the slope (a comparison that comes out "higher" three times in
four carries 0.81 bits, against 1 bit when balanced), and the estimate crawls. A radius that shrinks with the
slope keeps the two terms in proportion: this behaviour narrows β while the comparisons are lopsided and
widens it again, up to the solver's own β, once they are balanced — so β changes only where the estimator's
own answers say the curvature term has taken over. It reads nothing but the estimate's ``below_fraction``
(comparison estimators state it; others leave β alone).

Not for an objective that is piecewise constant (a tree ensemble's hard-label g): there a narrow probe
resolves jumps rather than slope, and the comparisons are lopsided at every β (a ray must cross into another
leaf before its value changes at all).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from .estimators import GradientEstimate
from .parts import Move

if TYPE_CHECKING:
    from .solver import ComposedSolver, SolverState

__all__ = [
    "BALANCE_FLOOR_RATIO",
    "BALANCE_HIGH",
    "BALANCE_LOW",
    "BALANCE_STEP",
    "RadiusFollowsBalance",
]

#: Narrow β once fewer than a third of the comparisons find a lower value (twice as many higher as lower:
#: 0.92 bits per comparison, where the late comparisons of a hard-label attack at β = 0.01 are ~25% lower).
BALANCE_LOW = 1 / 3
#: Widen β again once more than 45% find a lower value: balanced up to the sampling noise of a few dozen
#: probes (the gap to :data:`BALANCE_LOW` keeps one noisy estimate from undoing the last change).
BALANCE_HIGH = 0.45
#: Each change multiplies or divides β by √2: from the solver's β to its floor (÷10) in about 7 estimates.
BALANCE_STEP = math.sqrt(0.5)
#: Never narrower than a tenth of the solver's own β: for the hard-label attack's sign-growing that is Sign-OPT's
#: published β = 0.001, the narrowest radius measured better late on both CNNs
#: (benchmarks/results/ablation/beta/); below it no measurement says what the probes resolve.
BALANCE_FLOOR_RATIO = 0.1


@dataclass(frozen=True)
class RadiusFollowsBalance:
    """Narrow the smoothing radius β while the comparisons are lopsided, widen it while they are balanced.

    After each estimate with a ``below_fraction`` p (the share of probes that found a lower value): p below
    ``low`` multiplies β by ``step``, p above ``high`` divides it by ``step``; β stays within
    ``[floor_ratio · β₀, β₀]``, β₀ being the solver's own β. A β that another behaviour (the stall rule) moved
    outside that range is left alone. Estimators that state no ``below_fraction`` (forward differences) leave
    β as it is.

    Parameters
    ----------
    low, high
        The band of p in which β holds: ``0 < low < high <= 0.5``.
    step
        The factor of one change, in (0, 1).
    floor_ratio
        The narrowest β as a share of the solver's own, in (0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt.estimators import GradientEstimate
    >>> from zeroopt.parts import Move
    >>> class Solver:  # the one attribute the rule reads
    ...     beta = 0.01
    >>> rule = RadiusFollowsBalance()
    >>> move = Move(x=np.zeros(2), fx=1.0, fx_eps=0.0, step_taken=0.1, next_step=0.1, beta=0.01)
    >>> lopsided = GradientEstimate(g=np.zeros(2), eps=0.0, used=100, below_fraction=0.2)
    >>> round(rule(Solver(), None, lopsided, move).beta, 5)
    0.00707
    >>> balanced = GradientEstimate(g=np.zeros(2), eps=0.0, used=100, below_fraction=0.5)
    >>> rule(Solver(), None, balanced, move).beta  # already at the solver's β: no wider
    0.01
    """

    low: float = BALANCE_LOW
    high: float = BALANCE_HIGH
    step: float = BALANCE_STEP
    floor_ratio: float = BALANCE_FLOOR_RATIO

    def __post_init__(self) -> None:
        if not 0 < self.low < self.high <= 0.5:
            raise ValueError(f"need 0 < low < high <= 0.5 (shares of probes that found a lower value); got "
                             f"low={self.low!r}, high={self.high!r}")
        if not 0 < self.step < 1:
            raise ValueError(f"step is the factor of one change, in (0, 1); got {self.step!r}")
        if not 0 < self.floor_ratio <= 1:
            raise ValueError(f"floor_ratio is a share of the solver's β, in (0, 1]; got {self.floor_ratio!r}")

    def __call__(
        self, solver: ComposedSolver, before: SolverState | None, estimate: GradientEstimate, move: Move
    ) -> Move:
        p = estimate.below_fraction
        if p is None or not math.isfinite(p):
            return move
        ceiling = float(solver.beta)
        floor = ceiling * self.floor_ratio
        beta = move.beta
        # A small relative tolerance: β reached by repeated multiplication lands a rounding off its bounds.
        if not floor * (1 - 1e-9) <= beta <= ceiling * (1 + 1e-9):
            return move
        if p < self.low:
            beta = max(beta * self.step, floor)
        elif p > self.high:
            beta = min(beta / self.step, ceiling)
        return move if beta == move.beta else replace(move, beta=beta)
