"""Predicted stationary floors of fixed-step RGF — second-moment calculations, not bounds.

:mod:`theory.bounds` gives guarantees; these give the level a run actually settles at on a quadratic,
to draw beside the measured floors. Both follow from ``E‖x+‖²`` for ``x+ = x − α ĝ`` with one Gaussian
direction per iteration, solved for the stationary second moment.
"""

from __future__ import annotations

import math

from .bounds import theory_step

__all__ = ["oracle_noise_floor", "smoothing_noise_floor"]


def smoothing_noise_floor(d: int, curvature: float, beta: float, *, L1: float | None = None) -> float:
    """Stationary RMS ‖∇f‖ of RGF (theory step) on ``f = (c/2)‖x‖²`` with smoothing radius β, exact oracle.

    The forward difference is ``c⟨x,u⟩ + (cβ/2)‖u‖²``: its second term is noise of size ≈ cβd/2 that does
    not shrink with x. With ``E‖u‖⁶ = d(d+2)(d+4)`` the stationary ``E‖x‖² = α c β² d(d+2)(d+4) /
    (4 (2 − α c (d+2)))``, so the floor is ``c`` times its root — about ``0.38 β d`` for c = L1 = 2
    (``log(1+‖x‖²)`` near its minimiser): it grows like β d, which is why β must shrink like δ/d.
    """
    alpha = theory_step(d, L1 if L1 is not None else curvature)
    denom = 2.0 - alpha * curvature * (d + 2)
    if denom <= 0:
        return math.inf
    r2 = alpha * curvature * beta**2 * d * (d + 2) * (d + 4) / (4.0 * denom)
    return curvature * math.sqrt(r2)


def oracle_noise_floor(trace: float, d: int, L1: float, beta: float, eps: float, *, noise: str = "uniform") -> float:
    """Stationary RMS ‖∇f‖ of RGF (theory step) on a quadratic with Hessian trace ``trace``, oracle error ε.

    Each probe difference carries an error Δe with ``Var Δe = 2ε²/3`` (two independent uniform errors;
    ``2ε²`` for Gaussian ones), i.e. noise ``σ² = Var Δe / β²`` per coordinate of ĝ. Together with the
    estimator's multiplicative noise the stationary ``G = E‖∇f‖²`` solves ``G = α tr(A) (G + σ²) / 2``:
    ``G = α tr(A) σ² / (2 − α tr(A))``. The floor grows like ε/β and not with d — the reason Theorem 1
    asks for ε to shrink with β.
    """
    var = {"uniform": 2.0 / 3.0, "gaussian": 2.0}[noise] * eps**2
    alpha = theory_step(d, L1)
    at = alpha * trace
    if at >= 2:
        return math.inf
    return math.sqrt(at * (var / beta**2) / (2.0 - at))
