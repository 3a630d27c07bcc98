"""theory.bounds: hand-worked cases, Monte Carlo checks of each inequality, and consistency properties."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import theory.bounds as B
import theory.hitting
import theory.stats

FAST = settings(derandomize=True, deadline=None, max_examples=40)


@pytest.mark.parametrize("module", [B, theory.hitting, theory.stats])
def test_docstring_examples(module: object) -> None:
    failures, _ = doctest.testmod(module)  # type: ignore[arg-type]
    assert failures == 0


# ------------------------------------------------------------------------------------ hand-worked cases


def test_theory_step_by_hand() -> None:
    assert B.theory_step(16, 2.0) == pytest.approx(1 / 160)  # 1 / (4 · (16+4) · 2)
    assert B.theory_step(1, 0.25) == pytest.approx(0.2)  # 1 / (4 · 5 · 0.25)


def test_smoothing_error_by_hand_and_exact_for_a_quadratic() -> None:
    assert B.smoothing_error_bound(10, 2.0, 0.5) == pytest.approx(2.5)  # 0.25 · 2 · 10 / 2
    # f = (L1/2)‖x‖²: f_β(x) = (L1/2)(‖x‖² + β² d), so the bound is attained.
    d, L1, beta = 7, 3.0, 0.2
    assert (L1 / 2) * beta**2 * d == pytest.approx(B.smoothing_error_bound(d, L1, beta))


def test_second_moment_by_hand() -> None:
    assert B.second_moment_bound(16, 0.5) == pytest.approx(5.0)  # (16+4) · 0.25
    assert B.second_moment_bound(16, 1.0, q=19) == pytest.approx(2.0)  # 1 + 19/19
    assert B.second_moment_bound(3, 2.0, q=1) == pytest.approx(28.0)  # (3+4) · 4


def test_gaussian_moments_by_hand() -> None:
    assert B.gaussian_moment(2, 5) == pytest.approx(5.0)
    assert B.gaussian_moment(4, 5) == pytest.approx(35.0)  # 5 · 7
    assert B.gaussian_moment(6, 5) == pytest.approx(315.0)  # 5 · 7 · 9
    assert B.gaussian_moment_bound(6, 5) == pytest.approx(11.0**3)  # (6+5)^3
    assert B.gaussian_moment_bound(1, 16) == pytest.approx(4.0)  # 16^(1/2)


def test_iteration_bound_by_hand_exact_oracle() -> None:
    # N + 1 = 16 (d+4) L1 (f(x0) − f*) / δ² = 16 · 20 · 2 · 1 / 0.01 = 64000.
    assert B.iteration_bound(16, 2.0, 0.1, 1.0) == 63999
    assert B.leading_iteration_bound(16, 2.0, 0.1, 1.0) == pytest.approx(64000)
    assert B.query_bound(63999, q=1) == 1 + 2 * 63999


def test_iteration_bound_by_hand_with_q() -> None:
    # q = 2: κ = 1 − (αL1/2)(2·(1 − 1/2) + 4·20/2) = 1 − (1 + 40)/160 = 119/160; s² = δ²/2 = 0.005.
    # N + 1 = f_gap / (α κ s²) = 160 / (119/160 · 0.005) = 43025.2  →  N = 43025.
    assert B.iteration_bound(16, 2.0, 0.1, 1.0, q=2) == 43025


def test_iteration_bound_by_hand_inexact_oracle() -> None:
    # d=16, L1=2, δ=0.1, f_gap=1, β=1e-3, ε=1e-6, q=1, theory step α = 1/160, κ = 1/2.
    # gap = 1 + β² L1 d / 2 = 1.000016
    # c_β = 1.5 β² L1² (d+5)³ = 1.5e-6 · 4 · 9261 = 0.055566
    # c_ε = 4 ε L1 (d+4)² + 8 ε² d / β² = 0.0032 + 0.000128 = 0.003328
    # r = (c_β + c_ε)/160 = 0.000368088;  s² = (δ² − β² L1² (d+4)²/2)/2 = (0.01 − 0.0008)/2 = 0.0046
    # zero-mean errors (no bias): margin = κ s² − r = 0.001931912; N + 1 = 1.000016 · 160 / margin = 82820.8
    assert B.iteration_bound(16, 2.0, 0.1, 1.0, beta=1e-3, eps=1e-6, error="zero-mean") == 82820
    # adversarial errors: bias √(2/π) ε/β = 7.979e-4 costs b s = 7.979e-4 · 0.067823 = 5.4115e-5 more margin:
    # N + 1 = 160.00256 / (0.001931912 − 0.000054115) = 85207.6
    assert B.iteration_bound(16, 2.0, 0.1, 1.0, beta=1e-3, eps=1e-6) == 85207


def test_theorem1_scales_by_hand() -> None:
    assert B.theorem1_beta(16, 2.0, 0.1) == pytest.approx(0.1 / 40)
    assert B.theorem1_eps(0.0025, 0.1) == pytest.approx(0.0025 * 0.01)
    assert B.theorem1_eps(0.0025, 0.1, constant=3.0) == pytest.approx(3 * 0.0025 * 0.01)


def test_bias_bound_by_hand() -> None:
    assert B.estimator_bias_bound(0.01, 1e-4) == pytest.approx(math.sqrt(2 / math.pi) * 0.01)
    assert B.estimator_bias_bound(0.01, 1e-4, error="zero-mean") == 0.0
    assert B.estimator_bias_bound(0.0, 0.0) == 0.0


def test_second_moment_bound_inexact_by_hand() -> None:
    # d=4, L1=1, ‖∇f‖=1, β=0.1, ε=0.001: 2·8·1 + 0.01·1000/2 + 4·0.001·64 + 8e-6·4/0.01
    expected = 16 + 5 + 0.256 + 0.0032
    assert B.estimator_second_moment_bound(4, 1.0, 1.0, 0.1, 0.001) == pytest.approx(expected)


# ------------------------------------------------------------------------- Monte Carlo checks (seeded)


def test_second_moment_monte_carlo_is_d_plus_2_below_d_plus_4() -> None:
    rng = np.random.default_rng(1)
    d, n = 12, 200_000
    g = rng.standard_normal(d)
    u = rng.standard_normal((n, d))
    sq = (u @ g) ** 2 * np.einsum("ij,ij->i", u, u)  # ‖⟨g,u⟩u‖²
    mean, se = sq.mean(), sq.std(ddof=1) / math.sqrt(n)
    exact = (d + 2) * float(g @ g)
    assert abs(mean - exact) < 5 * se, f"MC {mean:.4g} ± {se:.2g} vs exact (d+2)‖g‖² = {exact:.4g}"
    assert mean + 5 * se < B.second_moment_bound(d, float(np.linalg.norm(g)))


def test_smoothing_error_monte_carlo_log_norm() -> None:
    # f = log(1 + ‖x‖²) (L1 = 2): |f_β − f| below β² L1 d / 2 with room to spare.
    rng = np.random.default_rng(2)
    d, beta, n = 10, 0.3, 200_000
    x = rng.standard_normal(d) * 0.3
    y = x + beta * rng.standard_normal((n, d))
    fb = np.log1p(np.einsum("ij,ij->i", y, y))
    gap, se = abs(fb.mean() - math.log1p(x @ x)), fb.std(ddof=1) / math.sqrt(n)
    assert gap + 5 * se <= B.smoothing_error_bound(d, 2.0, beta)


def test_bias_bound_is_attained_by_a_sign_error() -> None:
    # e(y) = ε sign(⟨y − x, v⟩) makes E[(e(x+βu) − e(x)) u]/β = ε E|z|/β · v = √(2/π) ε/β · v.
    rng = np.random.default_rng(3)
    d, beta, eps, n = 6, 0.01, 1e-4, 400_000
    v = np.eye(d)[0]
    u = rng.standard_normal((n, d))
    bias = (eps * np.sign(u @ v))[:, None] * u / beta
    est = bias.mean(axis=0)
    se = bias[:, 0].std(ddof=1) / math.sqrt(n)
    bound = B.estimator_bias_bound(beta, eps)
    assert abs(est[0] - bound) < 5 * se
    assert np.linalg.norm(est) <= bound + 5 * se * math.sqrt(d)


def test_inexact_second_moment_monte_carlo() -> None:
    # Quadratic f = ½ xᵀ A x (L1 = 1) with uniform errors of size ε: the mean of ‖ĝ‖² stays below the bound.
    rng = np.random.default_rng(4)
    d, beta, eps, n = 8, 0.05, 1e-3, 100_000
    a = np.diag(np.linspace(0.2, 1.0, d))
    x = rng.standard_normal(d)
    f = lambda p: 0.5 * np.einsum("ij,jk,ik->i", p, a, p)  # noqa: E731
    u = rng.standard_normal((n, d))
    fx = f(x[None])[0] + rng.uniform(-eps, eps)
    fy = f(x + beta * u) + rng.uniform(-eps, eps, n)
    g = ((fy - fx) / beta)[:, None] * u
    sq = np.einsum("ij,ij->i", g, g)
    bound = B.estimator_second_moment_bound(d, 1.0, float(np.linalg.norm(a @ x)), beta, eps)
    assert sq.mean() + 5 * sq.std(ddof=1) / math.sqrt(n) <= bound


def test_smoothed_gradient_gap_by_quadrature() -> None:
    # d = 1, f = log(1 + x²) (L1 = 2): f_β'(x) = E f'(x + βz) by Gauss–Hermite quadrature.
    z, w = np.polynomial.hermite_e.hermegauss(80)
    w = w / w.sum()
    fprime = lambda t: 2 * t / (1 + t * t)  # noqa: E731
    for beta in (0.05, 0.3, 1.0):
        for x in np.linspace(-3, 3, 13):
            gap = abs(float(w @ fprime(x + beta * z)) - fprime(x))
            assert gap <= B.smoothed_gradient_gap_bound(1, 2.0, beta) + 1e-12


# ---------------------------------------------------------------------------------------- properties

dims = st.integers(1, 2000)
deltas = st.floats(1e-3, 1.0)
gaps = st.floats(1e-3, 100.0)
qs = st.integers(1, 64)


@FAST
@given(d=dims, delta=deltas, gap=gaps, q=qs, share=st.floats(0.05, 0.9), eps_frac=st.floats(0.0, 1.0))
def test_iteration_bound_inverts_the_average_bound(
    d: int, delta: float, gap: float, q: int, share: float, eps_frac: float
) -> None:
    beta = B.admissible_beta(d, 2.0, delta, q=q, share=share)
    eps = eps_frac * B.admissible_eps(d, 2.0, delta, beta, q=q)
    n = B.iteration_bound(d, 2.0, delta, gap, beta=beta, eps=eps, q=q)
    assert math.isfinite(n)
    at_n = B.average_gradient_bound(n, d, 2.0, gap, beta=beta, eps=eps, q=q)
    assert at_n <= delta**2 * (1 + 1e-7), f"bound at N={n} is {at_n:.6g} > δ² = {delta**2:.6g}"
    if n > 0:
        before = B.average_gradient_bound(n - 1, d, 2.0, gap, beta=beta, eps=eps, q=q)
        assert before >= delta**2 * (1 - 1e-7), f"bound at N-1={n - 1} is already {before:.6g} <= δ²"


@FAST
@given(d=dims, delta=st.floats(1e-3, 0.5), gap=st.floats(0.1, 100.0), q=qs)
def test_iteration_bound_is_O_of_d_over_delta_squared(d: int, delta: float, gap: float, q: int) -> None:
    # With the admissible β (share 1/2) the bound is 1/(2κ) · 2 · 16(d+4)L1Δ_β/δ², κ ∈ [1/2, 1):
    # exactly twice the leading term for q = 1, between one and two times it for q > 1.
    beta = B.admissible_beta(d, 2.0, delta, q=q)
    n = B.iteration_bound(d, 2.0, delta, gap, beta=beta, q=q) + 1
    lead = B.leading_iteration_bound(d, 2.0, delta, gap) * (1 + B.smoothing_error_bound(d, 2.0, beta) / gap)
    ratio = n / lead
    assert 1.0 - 1e-9 <= ratio <= 2.0 + 1.0 / lead, f"N+1 = {n} is {ratio:.4f} × the leading term"
    if q == 1:
        assert ratio == pytest.approx(2.0, rel=1e-9, abs=1.0 / lead)


@FAST
@given(d=dims, delta=deltas, gap=gaps, q=qs)
def test_monotone_in_every_argument(d: int, delta: float, gap: float, q: int) -> None:
    beta = B.admissible_beta(d, 1.0, delta, q=q)
    eps = 0.5 * B.admissible_eps(d, 1.0, delta, beta, q=q)
    n = B.iteration_bound(d, 1.0, delta, gap, beta=beta, eps=eps, q=q)
    assert B.iteration_bound(d, 1.0, delta, gap * 2, beta=beta, eps=eps, q=q) >= n
    assert B.iteration_bound(d, 1.0, delta * 1.1, gap, beta=beta, eps=eps, q=q) <= n
    assert B.iteration_bound(d, 1.0, delta, gap, beta=beta, eps=eps * 1.5, q=q) >= n
    n0 = B.iteration_bound(d, 1.0, delta, gap, beta=beta, q=q)  # β monotone for an exact oracle (bias ∝ ε/β)
    assert B.iteration_bound(d, 1.0, delta, gap, beta=beta * 1.2, q=q) >= n0
    assert B.iteration_bound(d + 1, 1.0, delta, gap, beta=beta, eps=eps, q=q) >= n
    f1 = B.gradient_floor(d, 1.0, beta=beta, eps=eps, q=q)
    assert B.gradient_floor(d, 1.0, beta=beta, eps=2 * eps + 1e-12, q=q) >= f1
    assert f1 < delta


@FAST
@given(d=dims, delta=deltas, q=qs, share=st.floats(0.05, 0.9))
def test_admissible_beta_costs_the_promised_factor(d: int, delta: float, q: int, share: float) -> None:
    gap = 1.0
    beta = B.admissible_beta(d, 2.0, delta, q=q, share=share)
    n0 = B.iteration_bound(d, 2.0, delta, gap, q=q) + 1
    nb = B.iteration_bound(d, 2.0, delta, gap, beta=beta, q=q) + 1
    promised = (gap + B.smoothing_error_bound(d, 2.0, beta)) / gap / (1 - share)
    assert nb / n0 == pytest.approx(promised, rel=1e-6, abs=(2 + promised) / n0)  # ±1 rounding of each N
    # Theorem 1's scale: β·(d+4)·L1/δ is a constant of order 1 (√share · 0.89 for large d, q = 1).
    assert 0.0 < beta * (d + 4) * 2.0 / delta <= math.sqrt(share * 2)


@FAST
@given(d=dims, q=qs, slack=st.floats(0.1, 5.0), error=st.sampled_from(["adversarial", "zero-mean"]))
def test_admissible_eps_costs_the_promised_factor_and_scales_like_beta_delta(
    d: int, q: int, slack: float, error: B.ErrorModel
) -> None:
    ratios = []
    for delta in (0.01, 0.1):
        beta = B.admissible_beta(d, 2.0, delta, q=q)
        eps = B.admissible_eps(d, 2.0, delta, beta, q=q, slack=slack, error=error)
        n0 = B.iteration_bound(d, 2.0, delta, 1.0, beta=beta, q=q, error=error) + 1
        ne = B.iteration_bound(d, 2.0, delta, 1.0, beta=beta, eps=eps, q=q, error=error) + 1
        assert ne / n0 == pytest.approx(1 + slack, rel=1e-6, abs=(3 + slack) / n0)  # ±1 rounding of each N
        ratios.append(eps / (beta * delta))
    # ε_adm ∝ βδ exactly (β ∝ δ): Theorem 1's O(βδ²) is sufficient, and conservative by a factor ∝ 1/δ.
    assert ratios[0] == pytest.approx(ratios[1], rel=1e-6)


def test_no_guarantee_cases() -> None:
    assert B.iteration_bound(16, 2.0, 0.1, 1.0, beta=0.1) == math.inf  # smoothing floor above δ
    beta = B.admissible_beta(16, 2.0, 0.1)
    assert B.iteration_bound(16, 2.0, 0.1, 1.0, beta=beta, eps=100 * beta * 0.01) == math.inf  # ε far above
    assert B.gradient_floor(16, 2.0, beta=beta, eps=100 * beta * 0.01) > 0.1
    assert B.iteration_bound(16, 2.0, 0.0, 1.0) == math.inf
    assert B.query_bound(math.inf) == math.inf
    with pytest.raises(ValueError, match="too large"):
        B.iteration_bound(16, 2.0, 0.1, 1.0, step=1.0)
    with pytest.raises(ValueError):
        B.theory_step(0, 1.0)
    with pytest.raises(ValueError):
        B.second_moment_bound(4, 1.0, q=0)


def test_fixed_beta_floor_grows_like_d_and_scaled_beta_floor_does_not() -> None:
    fixed = [B.gradient_floor(d, 2.0, beta=0.005) for d in (16, 64, 256)]
    scaled = [B.gradient_floor(d, 2.0, beta=B.admissible_beta(d, 2.0, 0.1)) for d in (16, 64, 256)]
    slope = np.polyfit(np.log([20, 68, 260]), np.log(fixed), 1)[0]
    assert 0.95 < slope < 1.1, f"floor slope {slope:.3f}"
    assert max(scaled) / min(scaled) < 1.01 and max(scaled) < 0.1
