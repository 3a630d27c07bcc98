"""Quadratic models over the answers already paid for, and the step that minimizes one inside a ball.

The arithmetic of the model-based trust-region solver (:mod:`zeroopt.model.trust_region`), on host arrays only:
:func:`fit_quadratic` interpolates (or, given more points than a quadratic has coefficients, regresses) values
around a centre, changing the previous model's Hessian as little as the values allow — Powell's least
Frobenius-norm update (NEWUOA, BOBYQA, COBYQA); :func:`ball_minimizer` solves ``min gᵀs + ½ sᵀHs, ‖s‖ ≤ 1``
exactly from H's eigendecomposition (Moré–Sorensen, with the hard case); :func:`least_covered` is the
direction a set of displacements spans worst, where a point repairs the model's geometry.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> z = rng.normal(size=(6, 2))                      # 6 points around the centre: a full quadratic in 2-d
>>> h = np.array([[2.0, 0.5], [0.5, 1.0]])
>>> f = 1.0 + z @ [1.0, -2.0] + 0.5 * np.einsum("pi,ij,pj->p", z, h, z)
>>> model = fit_quadratic(z, f, np.zeros((2, 2)))
>>> bool(np.allclose(model.g, [1.0, -2.0]) and np.allclose(model.h, h))
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["QuadraticModel", "ball_minimizer", "fit_quadratic", "full_quadratic_size", "least_covered"]

#: Singular values of the model's system below this share of its largest are dropped: points on a surface (the unit
#: sphere) make it singular, and the solution along such a direction would follow the values' last bits.
MODEL_RCOND = 1e-10
#: Bisection steps on the multiplier of the ball's constraint: each halves its bracket, 60 reach float precision.
MULTIPLIER_BISECTIONS = 60


@dataclass(frozen=True)
class QuadraticModel:
    """``m(z) = c + gᵀz + ½ zᵀhz`` in the displacement coordinates it was fitted in."""

    c: float
    g: NDArray[np.float64]
    h: NDArray[np.float64]

    def decrease(self, z: NDArray[np.float64]) -> float:
        """``m(0) − m(z)``: what the model promises a step ``z`` gains."""
        return float(-(self.g @ z) - 0.5 * z @ self.h @ z)


def full_quadratic_size(n: int) -> int:
    """Coefficients of a quadratic in ``n`` variables: (n + 1)(n + 2)/2."""
    return (n + 1) * (n + 2) // 2


def fit_quadratic(z: NDArray[np.float64], f: NDArray[np.float64], h_prev: NDArray[np.float64]) -> QuadraticModel:
    """The quadratic through values ``f`` at displacements ``z`` (rows; the centre is one of them, ``z = 0``)
    whose Hessian differs least from ``h_prev`` in Frobenius norm; least squares over a full quadratic when the
    points outnumber its coefficients. The values are taken relative to their mean, for conditioning."""
    p, n = z.shape
    shift = float(f.mean())
    b = f - shift
    if p > full_quadratic_size(n):
        return _regression(z, b, shift)
    # Powell's system: h = h_prev + Σ λ_i z_i z_iᵀ, with Σ λ_i = 0 and Σ λ_i z_i = 0 (the change of least norm).
    residual = b - 0.5 * np.einsum("pi,ij,pj->p", z, h_prev, z)
    a = 0.5 * (z @ z.T) ** 2
    kkt = np.zeros((p + n + 1, p + n + 1))
    kkt[:p, :p] = a
    kkt[:p, p] = kkt[p, :p] = 1.0
    kkt[:p, p + 1:] = z
    kkt[p + 1:, :p] = z.T
    rhs = np.concatenate([residual, np.zeros(n + 1)])
    sol = np.linalg.lstsq(kkt, rhs, rcond=MODEL_RCOND)[0]
    lam, c, g = sol[:p], sol[p], sol[p + 1:]
    return QuadraticModel(c=c + shift, g=g, h=h_prev + (z.T * lam) @ z)


def _regression(z: NDArray[np.float64], b: NDArray[np.float64], shift: float) -> QuadraticModel:
    p, n = z.shape
    rows, cols = np.triu_indices(n)
    # Off-diagonal products appear twice in zᵀhz, the diagonal ones once (with the ½ of the model).
    weight = np.where(rows == cols, 0.5, 1.0)
    design = np.concatenate([np.ones((p, 1)), z, z[:, rows] * z[:, cols] * weight], axis=1)
    coef = np.linalg.lstsq(design, b, rcond=MODEL_RCOND)[0]
    h = np.zeros((n, n))
    h[rows, cols] = coef[1 + n:]
    h = h + np.triu(h, 1).T
    return QuadraticModel(c=float(coef[0]) + shift, g=coef[1:1 + n], h=h)


def ball_minimizer(g: NDArray[np.float64], h: NDArray[np.float64]) -> NDArray[np.float64]:
    """The exact minimizer of ``gᵀs + ½ sᵀhs`` over the unit ball ``‖s‖ ≤ 1``.

    Inside the ball when h is positive definite and its Newton step is shorter than 1; otherwise on the sphere,
    ``s = −(h + μI)⁻¹g`` with μ ≥ max(0, −λ_min) found by bisection on ``‖s(μ)‖ = 1``; in the hard case (g
    orthogonal to h's lowest eigenvectors) that step plus the lowest eigenvector, to the sphere.
    """
    lam, q = np.linalg.eigh(0.5 * (h + h.T))
    gq = q.T @ g
    low = float(lam[0])
    if low > 0:
        newton = -gq / lam
        if np.linalg.norm(newton) <= 1.0:
            return q @ newton
    floor = max(0.0, -low)

    def length(mu: float) -> float:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.linalg.norm(gq / (lam + mu)))

    gap = 1e-12 * max(1.0, abs(low))
    if length(floor + gap) <= 1.0:  # the hard case: no μ above the floor reaches the sphere
        s = -np.divide(gq, lam + floor, out=np.zeros_like(gq), where=np.abs(lam + floor) > gap)
        short = float(np.sqrt(max(0.0, 1.0 - s @ s)))
        s[0] += short
        return q @ s
    lo, hi = floor + gap, floor + float(np.linalg.norm(g)) + 1.0
    for _ in range(MULTIPLIER_BISECTIONS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if length(mid) > 1.0 else (lo, mid)
    s = -gq / (lam + hi)
    return q @ s


def least_covered(z: NDArray[np.float64], n: int) -> tuple[NDArray[np.float64], float]:
    """The unit direction the displacements ``z`` (rows, in ``n`` variables) span worst, and how well they span
    it: the smallest singular value of ``z`` (0 where they span fewer than ``n`` directions)."""
    if len(z) == 0:
        return np.eye(n)[0], 0.0
    _, sv, vt = np.linalg.svd(z, full_matrices=True)
    spread = float(sv[-1]) if len(sv) == n else 0.0
    return vt[-1], spread
