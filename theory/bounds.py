"""Nesterov–Spokoiny's RGF analysis and Theorem 1 of Cheng et al. (ICLR 2019) as functions.

Notation (the paper's): ``d`` dimension, ``L1`` Lipschitz constant of ∇f, ``delta`` target accuracy
(the goal is an average ``E‖∇f‖² <= delta²``), ``f_gap = f(x0) − f*``, ``beta`` smoothing radius,
``eps`` oracle precision (each value within ``eps`` of the truth), ``q`` directions averaged per
iteration. Sources are cited as

* **NS** — Y. Nesterov, V. Spokoiny, "Random gradient-free minimization of convex functions",
  Found. Comput. Math. 17 (2017); the results the paper quotes: Theorem 1 (smoothing error),
  Theorem 3 (second moment of the directional-derivative estimator), Lemma 1 (Gaussian moments),
  Lemma 4 (‖∇f‖ versus ‖∇f_β‖) and the nonconvex analysis of Section 7 (step ``1/(4(n+4)L1)``).
* **Paper** — Cheng et al., Section 3.3 (Theorem 1) and the appendix "Proof of Theorem 1"
  (``/work/shared/paper/opt-attack.tex``). The appendix has no equation numbers; its displays are
  cited by what they bound.

Three places where this module departs from the appendix, each on the safe side or a correction
(the derivation is written out in :func:`average_gradient_bound`):

1. The appendix's second-moment display has ``4 β ε L1 (d+4)²`` and ``8 ε² d``; redoing the algebra
   (divide the squared difference by β²) gives ``4 ε L1 (d+4)²`` and ``8 ε² d / β²``.
2. The appendix bounds the bias of the inexact estimator by ``(2ε/β)√d · 1`` (a vector of norm
   ``2εd/β``); the sharp bound is ``√(2/π) ε/β`` (:func:`estimator_bias_bound`).
3. The appendix ends with "clearly … ≤ δ²" for the bias term; here that term is carried through
   exactly (a quadratic inequality in the root-mean-square gradient), so every constant is explicit.

With these, the bound keeps the theorem's shape — ``N = O(d/δ²)`` iterations under
``β = O(δ/(d L1))`` — and the precision it needs is ``ε = O(β δ)``, weaker than the paper's sufficient
``ε = O(β δ²)`` (which :func:`theorem1_eps` and :class:`zeroopt.ToleranceMonitor` use).
"""

from __future__ import annotations

import math

from .estimator_bounds import (  # re-exported: theory.bounds is the one place to import the bounds from
    _ROUND_TOL,
    ErrorModel,
    _check,
    _check_nonneg,
    _check_q,
    estimator_bias_bound,
    estimator_second_moment_bound,
    gaussian_moment,
    gaussian_moment_bound,
    second_moment_bound,
    smoothed_gradient_gap_bound,
    smoothing_error_bound,
    theorem1_beta,
    theorem1_eps,
    theory_step,
)

__all__ = [
    "ErrorModel",
    "admissible_beta",
    "admissible_eps",
    "average_gradient_bound",
    "estimator_bias_bound",
    "estimator_second_moment_bound",
    "gaussian_moment",
    "gaussian_moment_bound",
    "gradient_floor",
    "iteration_bound",
    "leading_iteration_bound",
    "query_bound",
    "second_moment_bound",
    "smoothed_gradient_gap_bound",
    "smoothing_error_bound",
    "theorem1_beta",
    "theorem1_eps",
    "theory_step",
]

# ------------------------------------------------------------------------------- the iteration bound


def _terms(
    d: int, L1: float, beta: float, eps: float, q: int, step: float | None, error: ErrorModel
) -> tuple[float, float, float, float]:
    """(α, κ, b, r) of the per-iteration inequality ``E f_β(x+) <= f_β(x) − α(κ G − b √G − r)``."""
    _check(d, L1)
    _check_q(q)
    _check_nonneg(beta=beta, eps=eps)
    alpha = theory_step(d, L1) if step is None else float(step)
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"step must be positive and finite, got {step!r}")
    half = alpha * L1 / 2.0
    kappa = 1.0 - half * (2.0 * (1.0 - 1.0 / q) + 4.0 * (d + 4) / q)
    if kappa <= 0:
        raise ValueError(
            f"step {alpha:.3g} is too large for this analysis (needs α L1 (2(1−1/q) + 4(d+4)/q) < 2); "
            f"the theory step is {theory_step(d, L1):.3g}"
        )
    if eps > 0 and beta == 0:
        return alpha, kappa, math.inf, math.inf
    b = estimator_bias_bound(beta, eps, error=error)
    c_beta = 1.5 * beta**2 * L1**2 * (d + 5) ** 3
    c_eps = 4.0 * eps * L1 * (d + 4) ** 2 + (8.0 * eps**2 * d / beta**2 if eps > 0 else 0.0)
    r = half * (2.0 * (1.0 - 1.0 / q) * b**2 + (c_beta + c_eps) / q)
    return alpha, kappa, b, r


def average_gradient_bound(
    n_iter: int | float,
    d: int,
    L1: float,
    f_gap: float,
    *,
    beta: float = 0.0,
    eps: float = 0.0,
    q: int = 1,
    step: float | None = None,
    error: ErrorModel = "adversarial",
) -> float:
    """Upper bound on ``(1/(N+1)) Σ_{k=0}^{N} E‖∇f(x_k)‖²`` after ``N = n_iter`` RGF iterations.

    ``n_iter = math.inf`` gives the floor the average cannot be guaranteed below (see
    :func:`gradient_floor`). Pass ``eps = 0`` for NS's exact-oracle analysis, ``eps > 0`` for Theorem 1.

    Derivation (the paper's appendix, restated with explicit constants and the q-average):

    1. ``f_β`` has an L1-Lipschitz gradient, so with ``x+ = x − α ḡ``:
       ``f_β(x+) <= f_β(x) − α⟨∇f_β, ḡ⟩ + (α² L1/2) ‖ḡ‖²``  (appendix, "since g_β has
       Lipschitz-continuous gradient").
    2. ``E ḡ = ∇f_β + b`` with ``‖b‖ <= b̄`` (:func:`estimator_bias_bound`), and for the mean of q
       directions ``E‖ḡ‖² <= (1 − 1/q)(2G + 2b̄²) + M/q`` where ``G = ‖∇f_β‖²`` and M is the
       one-direction second moment (:func:`estimator_second_moment_bound`).
    3. ``M <= 4(d+4)G + (3/2)β²L1²(d+5)³ + 4εL1(d+4)² + 8ε²d/β²`` (appendix: ``‖∇f‖² <= 2‖∇f_β‖² +
       β²L1²(d+4)²/2`` and ``(d+6)³ + 2(d+4)³ <= 3(d+5)³``).
    4. Together: ``E f_β(x+) <= f_β(x) − α(κ G − b̄ √G − r)`` with
       ``κ = 1 − (αL1/2)(2(1 − 1/q) + 4(d+4)/q)`` (1/2 for q = 1 and the theory step) and
       ``r = (αL1/2)(2(1 − 1/q) b̄² + ((3/2)β²L1²(d+5)³ + 4εL1(d+4)² + 8ε²d/β²)/q)``.
    5. Sum over k = 0..N, use ``f_β >= f*``, ``f_β(x0) − f* <= f_gap + β²L1d/2``
       (:func:`smoothing_error_bound`) and Jensen (mean of ``√G_k`` <= ``√`` mean of ``G_k``):
       ``κ s² − b̄ s − r <= (f_gap + β²L1d/2) / (α (N+1))`` for ``s²`` the average of ``E G_k``.
    6. Solve for s and return ``2 s² + β² L1² (d+4)² / 2`` (back from ``∇f_β`` to ``∇f``).

    With ``ε = β = 0``, ``q = 1`` and the theory step this is ``16 (d+4) L1 f_gap / (N+1)`` — NS's
    ``8(n+4)L1 (f(x0) − f*)/(N+1)`` for ``‖∇f_β‖²`` (also the paper's last display), doubled by step 6.
    """
    _check_nonneg(f_gap=f_gap)
    if not n_iter >= 0:
        raise ValueError(f"n_iter must be >= 0, got {n_iter!r}")
    alpha, kappa, b, r = _terms(d, L1, beta, eps, q, step, error)
    if not math.isfinite(r):
        return math.inf
    gap = f_gap + smoothing_error_bound(d, L1, beta)
    c = 0.0 if math.isinf(n_iter) else gap / (alpha * (n_iter + 1))
    s = (b + math.sqrt(b * b + 4.0 * kappa * (c + r))) / (2.0 * kappa)
    return 2.0 * s * s + 0.5 * beta**2 * L1**2 * (d + 4) ** 2


def gradient_floor(
    d: int,
    L1: float,
    *,
    beta: float = 0.0,
    eps: float = 0.0,
    q: int = 1,
    step: float | None = None,
    error: ErrorModel = "adversarial",
) -> float:
    """The smallest δ the bound can guarantee: ``√`` of :func:`average_gradient_bound` as N → ∞.

    Targets ``delta <= gradient_floor(...)`` get ``iteration_bound = inf``. Zero for an exact oracle
    and β = 0; it grows like ``β L1 (d+4)`` (smoothing) and like ``ε/β`` (oracle error).
    """
    return math.sqrt(average_gradient_bound(math.inf, d, L1, 0.0, beta=beta, eps=eps, q=q, step=step, error=error))


def iteration_bound(
    d: int,
    L1: float,
    delta: float,
    f_gap: float,
    *,
    beta: float = 0.0,
    eps: float = 0.0,
    q: int = 1,
    step: float | None = None,
    error: ErrorModel = "adversarial",
) -> float:
    """Iterations N after which ``(1/(N+1)) Σ_{k<=N} E‖∇f(x_k)‖² <= δ²`` is guaranteed.

    The inverse of :func:`average_gradient_bound`: the smallest integer N with bound <= δ², or
    ``math.inf`` when δ is at or below :func:`gradient_floor` (β too large or ε too coarse — the
    "stall at a floor"). NS's analysis for ``eps = 0``; the paper's Theorem 1 for ``eps > 0``; the result
    is ``O(d/δ²)`` whenever ``β <= c δ/(d L1)`` and ``ε <= c' β δ``.

    Examples
    --------
    Worked by hand: d = 16, L1 = 2, f(x0) − f* = 1, δ = 0.1, exact oracle, β → 0, q = 1 gives
    ``N + 1 = 16 · 20 · 2 · 1 / 0.01 = 64000``.

    >>> iteration_bound(16, 2.0, 0.1, 1.0)
    63999
    """
    _check_nonneg(delta=delta, f_gap=f_gap)
    if delta == 0:
        return math.inf
    alpha, kappa, b, r = _terms(d, L1, beta, eps, q, step, error)
    s2 = (delta**2 - 0.5 * beta**2 * L1**2 * (d + 4) ** 2) / 2.0
    if not math.isfinite(r) or s2 <= 0:
        return math.inf
    margin = kappa * s2 - b * math.sqrt(s2) - r
    if margin <= 0:
        return math.inf
    gap = f_gap + smoothing_error_bound(d, L1, beta)
    n_plus_1 = gap / (alpha * margin)
    return max(0, math.ceil(n_plus_1 * (1.0 - _ROUND_TOL)) - 1)


def leading_iteration_bound(d: int, L1: float, delta: float, f_gap: float) -> float:
    """The bound's leading term ``16 (d+4) L1 (f(x0) − f*) / δ²`` (β, ε → 0, q = 1, theory step).

    NS Section 7's ``O(n L1 (f(x0) − f*)/ε²)`` with its constant (``8(n+4)L1`` for ``‖∇f_β‖²``, ×2 for
    ``‖∇f‖²``); the paper's "N is bounded by O(d/δ²)". Equals ``iteration_bound(...) + 1`` up to rounding.
    """
    _check(d, L1)
    _check_nonneg(f_gap=f_gap)
    if not delta > 0:
        raise ValueError(f"delta must be > 0, got {delta!r}")
    return 16.0 * (d + 4) * L1 * f_gap / delta**2


def query_bound(n_iter: float, q: int = 1) -> float:
    """Oracle queries of N RGF iterations with the fixed step: ``1 + N (q + 1)``.

    One value at x0, then per iteration q probes and the value at the new iterate (zeroopt's
    ``"rgf-fixed"`` spends exactly this; the paper's Algorithm 1 with q = 1 spends 2 per iteration).
    """
    _check_q(q)
    return math.inf if math.isinf(n_iter) else 1 + int(n_iter) * (q + 1)


def admissible_beta(d: int, L1: float, delta: float, *, q: int = 1, share: float = 0.5) -> float:
    """Largest β whose smoothing terms use at most ``share`` of the target δ² (exact oracle).

    Solves ``β² L1² (d+4)²/2 + 2 r_β / κ = share · δ²`` with ``r_β`` the β part of r in
    :func:`average_gradient_bound` (theory step). The result scales like ``δ/((d+4) L1)`` — Theorem 1's
    ``β <= O(δ/(d L1))`` — with constant about ``0.63 √(2·share)`` for q = 1. Keeping ``share < 1``
    leaves room for ε and makes N at most ``1/(1 − share)`` times its β → 0 value.
    """
    _check(d, L1)
    _check_q(q)
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1), got {share!r}")
    _, kappa, _, _ = _terms(d, L1, 0.0, 0.0, q, None, "adversarial")
    half = theory_step(d, L1) * L1 / 2.0
    coef = L1**2 * (0.5 * (d + 4) ** 2 + 2.0 * half * 1.5 * (d + 5) ** 3 / (q * kappa))
    return delta * math.sqrt(share / coef)


def admissible_eps(
    d: int,
    L1: float,
    delta: float,
    beta: float,
    *,
    q: int = 1,
    slack: float = 1.0,
    error: ErrorModel = "adversarial",
) -> float:
    """Largest ε for which the iteration bound grows by at most a factor ``1 + slack`` over ε = 0.

    The explicit form of Theorem 1's precision condition: with ``β = δ/((d+4)L1)`` it scales like
    ``β δ`` (the bias and cross terms are linear in ε), so the paper's ``ε = O(β δ²)`` is sufficient.
    Returns 0 when ``beta`` itself leaves no margin (``iteration_bound`` is inf at ε = 0).
    """
    if not slack > 0:
        raise ValueError(f"slack must be > 0, got {slack!r}")
    if not beta > 0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    alpha, kappa, _, r0 = _terms(d, L1, beta, 0.0, q, None, error)
    s2 = (delta**2 - 0.5 * beta**2 * L1**2 * (d + 4) ** 2) / 2.0
    if s2 <= 0 or kappa * s2 - r0 <= 0:
        return 0.0
    margin0 = kappa * s2 - r0
    allowed = margin0 * slack / (1.0 + slack)  # margin lost to ε: N ∝ 1/margin
    s = math.sqrt(s2)
    half = alpha * L1 / 2.0
    # ε enters the margin as  b̄(ε) s + half (2(1−1/q) b̄² + (4 ε L1 (d+4)² + 8 ε² d/β²)/q).
    bias_per_eps = 0.0 if error == "zero-mean" else math.sqrt(2.0 / math.pi) / beta
    lin = bias_per_eps * s + half * 4.0 * L1 * (d + 4) ** 2 / q
    quad = half * (2.0 * (1.0 - 1.0 / q) * bias_per_eps**2 + 8.0 * d / (q * beta**2))
    return (-lin + math.sqrt(lin * lin + 4.0 * quad * allowed)) / (2.0 * quad)
