"""The quasi-Newton direction (zeroopt.direction.quasi_newton): L-BFGS's inverse curvature from the steps a run took."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from zeroopt.direction.quasi_newton import QuasiNewton


def _inverse_bfgs(pairs: list[tuple[np.ndarray, np.ndarray]], d: int) -> np.ndarray:
    """The BFGS inverse-Hessian update written out as matrices, from L-BFGS's scaled identity."""
    s, y = pairs[-1]
    h = np.eye(d) * (s @ y) / (y @ y)
    for s, y in pairs:
        rho = 1.0 / (s @ y)
        v = np.eye(d) - rho * np.outer(y, s)
        h = v.T @ h @ v + rho * np.outer(s, s)
    return h


@settings(max_examples=40, deadline=None)
@given(d=st.integers(2, 8), k=st.integers(1, 5), seed=st.integers(0, 2**32 - 1))
def test_the_two_loops_are_the_bfgs_inverse_and_meet_the_last_secant_condition(d: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((d, d))
    hessian = a @ a.T + d * np.eye(d)  # positive definite: every pair has positive curvature
    pairs = [(s, hessian @ s) for s in rng.standard_normal((k, d))]
    g = rng.standard_normal(d)
    kept = tuple((s, y, 1.0 / (s @ y)) for s, y in pairs)
    np.testing.assert_allclose(QuasiNewton.apply(kept, g), _inverse_bfgs(pairs, d) @ g, rtol=1e-8, atol=1e-10)
    s, y = pairs[-1]
    np.testing.assert_allclose(QuasiNewton.apply(kept, y), s, rtol=1e-8, atol=1e-10)  # H y = s


def test_an_ill_conditioned_quadratic_takes_far_fewer_queries_with_curvature() -> None:
    d = 20
    scales = np.logspace(0, 3, d)  # condition number 1000
    f = lambda x: float(scales @ x**2)  # noqa: E731
    runs = {qn: zeroopt.minimize(f, np.ones(d), solver="coordinate", budget=3000, seed=0, q=d, quasi_newton=qn)
            for qn in (None, 10)}
    assert runs[10].fun < 1e-8 * f(np.ones(d)) and runs[10].fun < 1e-5 * runs[None].fun


def test_a_pair_without_positive_curvature_is_not_kept_and_the_history_is_bounded() -> None:
    rule = QuasiNewton(history=2)
    state = zeroopt.SolverState(x=np.zeros(2), fx=0.0, fx_eps=0.0, beta=0.1, step=1.0, iteration=0,
                                rng=np.random.default_rng(0))
    memory: dict = {}
    for x, g in (([0.0, 0.0], [1.0, 0.0]), ([1.0, 0.0], [2.0, 0.0]), ([2.0, 0.0], [1.0, 0.0]),  # s·y < 0
                 ([3.0, 0.0], [3.0, 0.0]), ([4.0, 0.0], [5.0, 0.0])):
        before = zeroopt.SolverState(**{**state.__dict__, "x": np.array(x), "memory": memory})
        _, memory = rule(None, before, zeroopt.GradientEstimate(g=np.array(g), eps=0.0, used=2))  # type: ignore[arg-type]
    pairs = memory["quasi_newton"][2]
    assert len(pairs) == 2 and all(float(s @ y) > 0 for s, y, _ in pairs)
    with pytest.raises(ValueError, match="positive integer"):
        QuasiNewton(history=0)
    with pytest.raises(ValueError, match="quasi_newton"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), solver="coordinate", budget=50, quasi_newton=0.5)


def test_a_pair_from_an_estimate_the_noise_may_have_made_is_not_kept() -> None:
    rule = QuasiNewton()
    memory: dict = {}
    # Stated precision 1e-2 on every answer: differences of 1e-3 may be the errors alone, those of 1.0 may not.
    for x, g, difference in (([0.0, 0.0], [1.0, 0.0], 1e-3), ([1.0, 0.0], [3.0, 0.0], 1.0),
                             ([2.0, 0.0], [5.0, 0.0], 1.0), ([3.0, 0.0], [7.0, 0.0], 1e-3),
                             ([4.0, 0.0], [9.0, 0.0], 1.0), ([5.0, 0.0], [11.0, 0.0], 1.0)):
        before = zeroopt.SolverState(x=np.array(x), fx=0.0, fx_eps=1e-2, beta=0.1, step=1.0, iteration=0,
                                     rng=np.random.default_rng(0), memory=memory)
        estimate = zeroopt.GradientEstimate(g=np.array(g), eps=1e-2, used=2, differences=np.full(2, difference))
        _, memory = rule(None, before, estimate)  # type: ignore[arg-type]
    # Of the five pairs of consecutive estimates, the first and the two beside the fourth estimate meet a drowned one.
    assert [float(s[0]) for s, _, _ in memory["quasi_newton"][2]] == [1.0, 1.0]
