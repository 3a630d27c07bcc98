"""The basic facts behind :mod:`theory.bounds`: Nesterov–Spokoiny's smoothing and moment bounds, the inexact
estimator's bias and second moment, and Theorem 1's parameter scales, as functions.

Notation and sources are :mod:`theory.bounds`'s (which re-exports every function here); the iteration bound built
from these is there.
"""

from __future__ import annotations

import math
from typing import Literal

__all__ = [
    "ErrorModel",
    "estimator_bias_bound",
    "estimator_second_moment_bound",
    "gaussian_moment",
    "gaussian_moment_bound",
    "second_moment_bound",
    "smoothed_gradient_gap_bound",
    "smoothing_error_bound",
    "theorem1_beta",
    "theorem1_eps",
    "theory_step",
]

ErrorModel = Literal["adversarial", "zero-mean"]
"""How the oracle's errors behave: ``"adversarial"`` — any values within ±ε, possibly correlated with the
probe direction (the appendix's setting); ``"zero-mean"`` — independent of the probe direction with mean 0
(random noise, e.g. :class:`zeroopt.NoisyOracle` with ``"uniform"`` or ``"gaussian"``), which removes the
bias term."""

# Relative slack when rounding an iteration count up: N computed as 64000.000000000004 must give 64000.
_ROUND_TOL = 1e-9


def _check(d: int, L1: float) -> None:
    if isinstance(d, bool) or int(d) != d or d < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    if not (math.isfinite(L1) and L1 > 0):
        raise ValueError(f"L1 must be positive and finite, got {L1!r}")


def _check_nonneg(**values: float) -> None:
    for name, v in values.items():
        if not (math.isfinite(v) and v >= 0):
            raise ValueError(f"{name} must be finite and >= 0, got {v!r}")


def _check_q(q: int) -> None:
    if isinstance(q, bool) or int(q) != q or q < 1:
        raise ValueError(f"q must be a positive integer, got {q!r}")


# ---------------------------------------------------------------------------------------- basic facts


def theory_step(d: int, L1: float) -> float:
    """The RGF step size ``1 / (4 (d+4) L1)``.

    Source: NS Section 7 (method RG_μ on smooth nonconvex f, step ``h = 1/(4(n+4)L1)``); the paper's
    appendix, "Choosing α_k = α̂ = 1/(4(d+4)L1(f))". zeroopt's ``"rgf-fixed"`` uses the same value.

    Examples
    --------
    >>> theory_step(16, 2.0)  # 1 / (4 · 20 · 2)
    0.00625
    """
    _check(d, L1)
    return 1.0 / (4.0 * (d + 4) * L1)


def smoothing_error_bound(d: int, L1: float, beta: float) -> float:
    """Bound ``|f_β(x) − f(x)| <= β² L1 d / 2`` on the Gaussian smoothing error.

    ``f_β(x) = E_u f(x + β u)``, ``u ~ N(0, I_d)``. Source: NS Theorem 1 (case f ∈ C^{1,1});
    the paper defines ``g_β`` the same way in its appendix. It is exact for ``f = (L1/2)‖x‖²``, where
    ``f_β − f = β² L1 d / 2``.

    Examples
    --------
    >>> smoothing_error_bound(10, 2.0, 0.5)  # 0.25 · 2 · 10 / 2
    2.5
    """
    _check(d, L1)
    _check_nonneg(beta=beta)
    return beta**2 * L1 * d / 2.0


def gaussian_moment(p: float, d: int) -> float:
    """Exact ``M_p = E‖u‖^p`` for ``u ~ N(0, I_d)``: ``2^{p/2} Γ((d+p)/2) / Γ(d/2)``.

    For even ``p`` this is ``d (d+2) … (d+p−2)``; it is the quantity NS Lemma 1 bounds.
    """
    _check(d, 1.0)
    if p < 0:
        raise ValueError(f"p must be >= 0, got {p!r}")
    return math.exp((p / 2) * math.log(2.0) + math.lgamma((d + p) / 2) - math.lgamma(d / 2))


def gaussian_moment_bound(p: float, d: int) -> float:
    """NS Lemma 1 (quoted in the paper's appendix): ``M_p <= d^{p/2}`` for p ∈ [0, 2], ``<= (p+d)^{p/2}`` for p >= 2."""
    _check(d, 1.0)
    if p < 0:
        raise ValueError(f"p must be >= 0, got {p!r}")
    return float(d) ** (p / 2) if p <= 2 else float(p + d) ** (p / 2)


def second_moment_bound(d: int, grad_norm: float, *, q: int = 1) -> float:
    """Bound on the second moment of the directional-derivative estimator ``g₀ = ⟨∇f(x), u⟩ u``.

    ``E‖g₀‖² <= (d+4) ‖∇f‖²`` for one Gaussian direction — NS Theorem 3, quoted in the paper's
    appendix ("E_u(‖g'(θ,u)·u‖²) <= (d+4)‖∇g(x)‖²"). The exact value is ``(d+2)‖∇f‖²``.

    For the average of ``q`` independent directions (the paper's Section 3.2 averaging; not in the
    paper's analysis) ``E‖ḡ₀‖² = ‖∇f‖² + (E‖g₀‖² − ‖∇f‖²)/q <= (1 + (d+3)/q) ‖∇f‖²``, which is the
    single-direction bound at ``q = 1``.

    Examples
    --------
    >>> second_moment_bound(16, 0.5)
    5.0
    >>> second_moment_bound(16, 1.0, q=19)
    2.0
    """
    _check(d, 1.0)
    _check_q(q)
    _check_nonneg(grad_norm=grad_norm)
    return (1.0 + (d + 3) / q) * grad_norm**2


def smoothed_gradient_gap_bound(d: int, L1: float, beta: float) -> float:
    """Bound on ``‖∇f_β(x) − ∇f(x)‖``: ``(β L1 / 2) √(d (d+2))``.

    Derivation: ``∇f_β − ∇f = E[(f(x+βu) − f(x) − β⟨∇f,u⟩) u] / β``, the bracket is at most
    ``L1 β² ‖u‖² / 2``, and Cauchy–Schwarz gives ``E[‖u‖² |⟨u,v⟩|] <= √(E‖u‖⁴) = √(d(d+2))``. It
    implies the inequality the paper's appendix takes from NS Lemma 4,
    ``‖∇f‖² <= 2‖∇f_β‖² + β² L1² (d+4)² / 2``, used by :func:`average_gradient_bound`.
    """
    _check(d, L1)
    _check_nonneg(beta=beta)
    return 0.5 * beta * L1 * math.sqrt(d * (d + 2.0))


def estimator_bias_bound(beta: float, eps: float, *, error: ErrorModel = "adversarial") -> float:
    """Bound on ``‖E ĝ − ∇f_β‖``, the bias that oracle errors of size ``eps`` add to the RGF estimator.

    ``ĝ = (f̃(x+βu) − f̃(x)) u / β`` with ``|f̃ − f| <= ε``. The error at x does not depend on u and
    ``E u = 0``, so the bias is ``E[e(x+βu) u] / β``; for a unit vector v,
    ``E[e ⟨u,v⟩] <= ε E|⟨u,v⟩| = ε √(2/π)``. Hence ``√(2/π) ε / β`` — dimension-free, sharper than the
    paper's appendix bound ``(2ε/β)√n · 1`` (a vector of norm ``2εn/β``). With ``error="zero-mean"``
    (errors independent of u with mean 0) the bias is 0.
    """
    _check_nonneg(eps=eps)
    if eps == 0 or error == "zero-mean":
        return 0.0
    if error != "adversarial":
        raise ValueError(f"error must be 'adversarial' or 'zero-mean', got {error!r}")
    if not beta > 0:
        raise ValueError(f"beta must be > 0 when eps > 0, got {beta!r}")
    return math.sqrt(2.0 / math.pi) * eps / beta


def estimator_second_moment_bound(d: int, L1: float, grad_norm: float, beta: float, eps: float) -> float:
    """Bound on ``E_u ‖ĝ‖²`` for the inexact one-direction RGF estimator at a point with ``‖∇f‖ = grad_norm``.

    ``2(d+4)‖∇f‖² + β² L1² (d+6)³/2 + 4 ε L1 (d+4)² + 8 ε² d / β²``.

    Source: the paper's appendix, first display after "Take expectation over u" (with NS Lemma 1 for
    ``E‖u‖⁶ <= (d+6)³``, ``E‖u‖⁴ <= (d+4)²`` and NS Theorem 3 for the gradient term). The paper prints the
    ε terms as ``4 β ε L1 (d+4)²`` and ``8 ε² d``; dividing the squared difference by β² gives the
    powers used here (the paper's are dimensionally inconsistent with its own first line).
    """
    _check(d, L1)
    _check_nonneg(grad_norm=grad_norm, beta=beta, eps=eps)
    if eps > 0 and beta == 0:
        return math.inf
    eps_terms = 4.0 * eps * L1 * (d + 4) ** 2 + (8.0 * eps**2 * d / beta**2 if eps > 0 else 0.0)
    return 2.0 * (d + 4) * grad_norm**2 + 0.5 * beta**2 * L1**2 * (d + 6) ** 3 + eps_terms


def theorem1_beta(d: int, L1: float, delta: float) -> float:
    """Theorem 1's smoothing-radius scale ``β = δ / ((d+4) L1)`` (the paper: ``β <= O(δ/(d L1))``).

    The constant is the paper's O(·) taken as 1 with ``d+4`` for d; zeroopt's ``"rgf-fixed"`` uses this
    as its default ``beta``. :func:`admissible_beta` gives the largest radius the explicit bound allows.
    """
    _check(d, L1)
    _check_nonneg(delta=delta)
    return delta / ((d + 4) * L1)


def theorem1_eps(beta: float, delta: float, constant: float = 1.0) -> float:
    """Theorem 1's precision condition ``ε <= c β δ²`` (the paper: "ε ∼ O(βδ²)").

    The threshold :class:`zeroopt.ToleranceMonitor` flags against (same ``constant``).
    """
    _check_nonneg(beta=beta, delta=delta, constant=constant)
    return constant * beta * delta**2
