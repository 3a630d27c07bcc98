"""A probe radius that stays where the probes' differences stand above the oracle's noise: :class:`RadiusAboveNoise`.

A forward-difference estimator forms, per probe u, the difference f(x + βu) − f(x) of two answers, each known to
the precision ε the oracle states with it (:class:`~zeroopt.oracles.requests.Evaluation`'s ``eps``). Expanding,

    f(x + βu) − f(x) ≈ β ∇f·u + β²/2 uᵀHu  (+ the answers' errors, up to 2ε),

so as the slope shrinks toward a minimum the differences shrink with it, while the errors do not: at a fixed β
the estimate becomes noise divided by β, the line search then compares noise, and the stall rule, taking the
failed steps for a radius too coarse, divides β by ten — where the differences drown further. This behaviour
reads the differences the estimator observed and keeps β where they stand above the noise by a ratio
:data:`NOISE_SNR`; once they stand well above it, β returns toward the solver's own. Where the curvature term
dominates (near a minimum), the β it settles at scales as the forward-difference step of Moré & Wild for a noise
level ε (the one their ECnoise estimates; "Estimating derivatives of noisy simulations", ACM TOMS 38(3), 2012),
β ∝ √(ε/L): the curvature term L β²/2 a few noise levels high. A central-difference estimator's differences
f(x + βu) − f(x − βu) ≈ 2β ∇f·u carry no curvature term, so there the rule keeps the slope's term above the
noise and β grows as the slope shrinks, up to a bound (:data:`CENTRAL_NOISE_CEILING_RATIO`); nor is it narrower than
a share of the step the iterate just took (``step_share``), the scale over which the step already trusts f to be
quadratic. :func:`drowned` tells an estimate whose differences the noise alone may have made, which
:class:`~zeroopt.QuasiNewton` keeps out of its curvature pairs.

An exact oracle (ε = 0 on every answer) makes it a no-op, and so do estimators that observe no values
(comparisons): nothing is weighed, the move passes unchanged — unless a noise nobody stated is estimated, when
:class:`~zeroopt.estimate.unstated_noise.EstimatedNoise` keeps the values a plain objective's comparisons carry as
the estimate's differences.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ..core.arrays import distance
from ..core.base import GradientEstimate, Move, SolverSettings, SolverState
from ..core.stages import StopsRun

__all__ = [
    "CENTRAL_NOISE_CEILING_RATIO", "ESTIMATED_NOISE", "ESTIMATED_NOISE_CEILING", "NOISE_CEILING_RATIO", "NOISE_RETURN",
    "NOISE_SNR", "RadiusAboveNoise", "difference_noise", "drowned",
]

#: The memory key under which :class:`~zeroopt.estimate.unstated_noise.EstimatedNoise` leaves the noise it estimated
#: where the oracle states none (0.0: none seen, or a precision the oracle states).
ESTIMATED_NOISE = "estimated_noise"
#: The memory key of the widest β a radius weighing an estimated noise may set (the start's scale, which
#: :class:`~zeroopt.estimate.unstated_noise.EstimatedNoise` writes): a probe is never further from the iterate than a
#: step.
ESTIMATED_NOISE_CEILING = "estimated_noise_ceiling"

#: The probes' differences must stand three noise levels above the error their two answers may carry (root mean
#: square against the errors' standard deviation): the usual three-sigma line between a signal and noise. The
#: noise then adds at most a ninth to the estimate's variance per probe.
NOISE_SNR = 3.0
#: Once the differences stand above the noise with room to spare, β returns toward the solver's own by halving,
#: once per estimate, never below where the differences would drown (the floor the rule keeps).
NOISE_RETURN = 0.5
#: β never beyond 2¹⁰ times the solver's own: a bound, not a target. Where f is flat at every scale the probes
#: reach (a plateau) the differences never rise above the noise, and β would grow without end; three decades of
#: β cover six decades of ε/L, as the rule's β grows like √(ε/L) where the curvature dominates.
NOISE_CEILING_RATIO = 1024.0
#: The bound for central differences, 2²⁰: they carry no curvature term, so near a minimum their differences rise
#: above the noise through the slope alone and β grows as the slope shrinks (on a quadratic the estimate is exact
#: at every β); six decades leave that room from a β as narrow as coordinate descent's 1e-4.
CENTRAL_NOISE_CEILING_RATIO = 2.0**20


def difference_noise(estimate: GradientEstimate, before: SolverState) -> float:
    """The standard deviation a probe's difference may carry from its two answers' errors, at most.

    An error within [−ε, ε] has a standard deviation of at most ε (a two-point error at ±ε reaches it), and two
    independent ones ε₁, ε₂ at most √(ε₁² + ε₂²): the probes' precision (the estimate's ``eps``, the largest
    among them) with the iterate's value's (``before.fx_eps``) — which, for central differences, stands for the
    second probe's, an answer of the same oracle near the same value.
    """
    return math.hypot(float(estimate.eps), float(before.fx_eps))


def drowned(estimate: GradientEstimate, before: SolverState) -> bool:
    """Whether the estimate's differences may be the answers' errors alone: their root mean square no larger than
    the standard deviation those errors may have (:func:`difference_noise`). False where nothing is stated (an exact
    oracle) or no differences were observed (comparisons).

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt.core.base import GradientEstimate, SolverState
    >>> state = SolverState(x=np.zeros(2), fx=1.0, fx_eps=1e-4, beta=0.01, step=0.1, iteration=3, rng=None)
    >>> drowned(GradientEstimate(g=np.zeros(2), eps=1e-4, used=2, differences=np.array([1e-4, -2e-4])), state)
    False
    >>> drowned(GradientEstimate(g=np.zeros(2), eps=1e-4, used=2, differences=np.array([1e-4, -1e-4])), state)
    True
    """
    weighed = _differences_and_noise(estimate, before)
    return weighed is not None and weighed[0] <= weighed[1]


def _differences_and_noise(estimate: GradientEstimate, before: SolverState) -> tuple[float, float] | None:
    """The differences' root mean square and :func:`difference_noise`, or None where there is nothing to weigh (no
    differences observed, or no finite positive noise stated)."""
    differences = estimate.differences
    if differences is None or len(differences) == 0:
        return None
    noise = difference_noise(estimate, before)
    if not (noise > 0 and math.isfinite(noise)):
        return None
    return float(np.sqrt(np.mean(np.square(np.asarray(differences, dtype=float))))), noise


@dataclass(frozen=True)
class RadiusAboveNoise(StopsRun):
    """Keep the smoothing radius β where the probes' differences stand above the answers' stated noise.

    After each value-difference estimate with differences δᵢ = f(x + βuᵢ) − f(x) (the estimate's ``differences``;
    f(x + βuᵢ) − f(x − βuᵢ) for central differences) and noise σ (:func:`difference_noise`), the root mean square
    ``r = √(mean δᵢ²)`` sets a floor ``β · snr · σ / r``: the narrowest radius whose differences, in proportion to β
    (the slope's term), still stand ``snr`` noise levels high. Below it β rises to it — above β itself when the
    differences are not above the noise now (a wider probe), and over the stall rule's shrink when that would drown
    them. A β this rule widened first returns toward the solver's own by ``back`` per estimate, down to the floor. β
    never exceeds ``ceiling_ratio`` times the solver's own.

    Stage ``stop``: it follows the stall rule in a chain, and where it undoes the stall rule's shrink of β it
    withdraws a convergence the stall rule declared on it (the stall rule ends a run once β falls below a floor; under
    noise that β is one the probes cannot resolve, so the run goes on at the floor — and ends by its budget, or
    by :class:`~zeroopt.DiminishingReturnsRule`'s ``min_progress`` when set).

    With ``step_share`` (central differences), β is also kept at least that share of the distance the iterate just
    moved: their error beyond the noise's is the β²f‴ term, of the order the step's own model already neglects over
    that distance, so a radius within the step costs the estimate nothing in order, and the noise's share of it falls
    as 1/β — the reason Py-BOBYQA samples at a share of its trust radius. Forward differences carry the β f″ term
    and are not widened so.

    No precision stated (ε = 0 on every answer, an exact oracle), no differences observed (comparison
    estimators) or no finite difference: the move passes unchanged.

    Parameters
    ----------
    snr
        How many noise levels the differences' root mean square must stand above the noise, > 0.
    back
        The factor of each return toward the solver's own β, in (0, 1).
    ceiling_ratio
        The widest β as a multiple of the solver's own, >= 1.
    step_share
        The narrowest β as a share of the distance the iterate moved this iteration, > 0; ``None``: none.
    only_estimated
        Weigh only a noise estimated where the oracle states none (:data:`ESTIMATED_NOISE`, written by
        :class:`~zeroopt.estimate.unstated_noise.EstimatedNoise`): a precision the oracle states is then left to the
        parts that ask for it (``beta_above_noise``), and β stays within the start's scale
        (:data:`ESTIMATED_NOISE_CEILING`).

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt.core.base import GradientEstimate, Move, SolverState
    >>> class Solver:  # the one attribute the rule reads
    ...     beta = 0.01
    >>> before = SolverState(x=np.zeros(2), fx=1.0, fx_eps=1e-4, beta=0.01, step=0.1, iteration=3, rng=None)
    >>> move = Move(x=np.zeros(2), fx=1.0, fx_eps=1e-4, step_taken=0.1, next_step=0.1, beta=0.01)
    >>> drowned = GradientEstimate(g=np.zeros(2), eps=1e-4, used=2, differences=np.array([1e-4, -2e-4]))
    >>> round(RadiusAboveNoise()(Solver(), before, drowned, move).beta, 4)  # r = 1.6e-4 against σ = 1.4e-4
    0.0268
    >>> exact = SolverState(x=np.zeros(2), fx=1.0, fx_eps=0.0, beta=0.01, step=0.1, iteration=3, rng=None)
    >>> clean = GradientEstimate(g=np.zeros(2), eps=0.0, used=2, differences=np.array([1e-4, -2e-4]))
    >>> RadiusAboveNoise()(Solver(), exact, clean, move) is move  # an exact oracle: unchanged
    True
    """

    snr: float = NOISE_SNR
    back: float = NOISE_RETURN
    ceiling_ratio: float = NOISE_CEILING_RATIO
    step_share: float | None = None
    only_estimated: bool = False

    def __post_init__(self) -> None:
        if not (math.isfinite(self.snr) and self.snr > 0):
            raise ValueError(f"snr is a number of noise levels, positive and finite; got {self.snr!r}")
        if not 0 < self.back < 1:
            raise ValueError(f"back is the factor of one return toward the solver's β, in (0, 1); got {self.back!r}")
        if not (math.isfinite(self.ceiling_ratio) and self.ceiling_ratio >= 1):
            raise ValueError(f"ceiling_ratio is a multiple of the solver's β, finite and >= 1; got "
                             f"{self.ceiling_ratio!r}")
        if self.step_share is not None and not (math.isfinite(self.step_share) and self.step_share > 0):
            raise ValueError(f"step_share is β as a share of the step, positive and finite (or None); got "
                             f"{self.step_share!r}")

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move
    ) -> Move:
        if self.only_estimated and not move.memory.get(ESTIMATED_NOISE, 0.0) > 0:
            return move
        weighed = _differences_and_noise(estimate, before)
        if weighed is None:
            return move
        rms, noise = weighed
        own = float(solver.beta)
        ceiling = own * self.ceiling_ratio
        if self.only_estimated:
            ceiling = max(min(ceiling, float(move.memory.get(ESTIMATED_NOISE_CEILING, ceiling))), own)
        floor = before.beta * self.snr * noise / rms if rms > 0 else ceiling
        if self.step_share is not None:
            moved = distance(move.x, before.x)
            if math.isfinite(moved):
                floor = max(floor, self.step_share * moved)
        target = move.beta
        if target > own * (1 + 1e-9):  # widened by this rule earlier: on the way back toward the solver's own β
            target = max(target * self.back, own)
        beta = min(max(target, floor), ceiling)
        if beta == move.beta:
            return move
        # The stall rule shrank β this iteration and may have converged on it: a shrink undone withdraws that.
        withdrawn = beta > move.beta and move.beta < before.beta
        return replace(move, beta=beta, converged=move.converged and not withdrawn)
