"""The model-based trust region: its model's arithmetic, its parts, and the solver they make."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize as scipy_minimize
from scipy.optimize import rosen

import zeroopt
from zeroopt.model.quadratic_model import ball_minimizer, fit_quadratic, full_quadratic_size, least_covered
from zeroopt.model.trust_region import default_points


def _quadratic(n: int, seed: int) -> tuple[float, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    return float(rng.normal()), rng.normal(size=n), a + a.T


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 10**6))
def test_a_full_set_of_points_recovers_any_quadratic(n: int, seed: int) -> None:
    c, g, h = _quadratic(n, seed)
    z = np.random.default_rng(seed + 1).normal(size=(full_quadratic_size(n), n))
    f = c + z @ g + 0.5 * np.einsum("pi,ij,pj->p", z, h, z)
    model = fit_quadratic(z, f, np.zeros((n, n)))
    np.testing.assert_allclose(model.g, g, atol=1e-6 * (1 + np.abs(g).max()))
    np.testing.assert_allclose(model.h, h, atol=1e-6 * (1 + np.abs(h).max()))
    # More points than coefficients: a regression, exact on exact values.
    z2 = np.random.default_rng(seed + 2).normal(size=(full_quadratic_size(n) + 5, n))
    f2 = c + z2 @ g + 0.5 * np.einsum("pi,ij,pj->p", z2, h, z2)
    np.testing.assert_allclose(fit_quadratic(z2, f2, np.zeros((n, n))).h, h, atol=1e-6 * (1 + np.abs(h).max()))


def test_fewer_points_interpolate_and_change_the_hessian_least() -> None:
    n = 4
    c, g, h = _quadratic(n, 3)
    z = np.concatenate([np.zeros((1, n)), np.eye(n), -np.eye(n)])  # BOBYQA's first 2n + 1 points
    f = c + z @ g + 0.5 * np.einsum("pi,ij,pj->p", z, h, z)
    model = fit_quadratic(z, f, np.zeros((n, n)))
    predicted = model.c + z @ model.g + 0.5 * np.einsum("pi,ij,pj->p", z, model.h, z)
    np.testing.assert_allclose(predicted, f, atol=1e-9)
    np.testing.assert_allclose(model.g, g, atol=1e-9)  # ± eᵢ: central differences give g exactly
    np.testing.assert_allclose(model.h, np.diag(np.diag(h)), atol=1e-9)  # the diagonal, nothing more
    # Given the true Hessian as the previous one, nothing needs to change.
    np.testing.assert_allclose(fit_quadratic(z, f, h).h, h, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), seed=st.integers(0, 10**6))
def test_the_ball_minimizer_beats_every_other_point_of_the_ball(n: int, seed: int) -> None:
    _, g, h = _quadratic(n, seed)
    s = ball_minimizer(g, h)
    m = lambda v: float(g @ v + 0.5 * v @ h @ v)  # noqa: E731
    assert np.linalg.norm(s) <= 1 + 1e-9
    others = np.random.default_rng(seed).normal(size=(300, n))
    others /= np.maximum(np.linalg.norm(others, axis=1, keepdims=True), 1.0)  # inside and on the sphere
    assert m(s) <= min(m(v) for v in others) + 1e-9


def test_the_ball_minimizer_inside_and_in_the_hard_case() -> None:
    h = np.diag([2.0, 4.0])
    np.testing.assert_allclose(ball_minimizer(np.array([0.2, 0.4]), h), [-0.1, -0.1])  # the Newton step
    s = ball_minimizer(np.array([0.0, 1.0]), np.diag([-1.0, 2.0]))  # g ⟂ the negative curvature's eigenvector
    assert np.linalg.norm(s) == pytest.approx(1.0) and abs(s[0]) > 0.5


def test_least_covered_names_the_direction_the_points_miss() -> None:
    direction, spread = least_covered(np.eye(3)[:2], 3)
    assert abs(direction[2]) == pytest.approx(1.0) and spread == 0.0
    assert least_covered(np.concatenate([np.eye(3), -np.eye(3)]), 3)[1] == pytest.approx(np.sqrt(2))


def test_the_first_model_costs_2n_and_later_iterations_one_answer() -> None:
    calls: list[int] = []

    def f(x: np.ndarray) -> float:
        calls.append(1)
        return float(rosen(x))

    res = zeroopt.minimize(f, np.full(5, -1.2), solver="trust-region", budget=400, seed=0)
    per_iteration = np.diff([0] + [r.queries for r in res.history])
    assert per_iteration[0] == 1 + 2 * 5 + 1  # f(x0), the 2n probes, the first step
    assert set(per_iteration[1:]) <= {0, 1, 2}  # a step, and a repairing point after a step the geometry failed
    assert np.mean(per_iteration[1:]) < 1.5


@pytest.mark.parametrize("n", [2, 5])
def test_it_solves_rosenbrock_in_as_few_evaluations_as_cobyqa(n: int) -> None:
    """The reference model-based method: scipy's COBYQA from the same start and first radius."""
    x0 = np.full(n, -1.2)
    ours = zeroopt.minimize(rosen, x0, solver="trust-region", budget=200 * (n + 1), seed=0)
    cobyqa = scipy_minimize(rosen, x0, method="COBYQA", options={"maxfev": 200 * (n + 1), "initial_tr_radius": 0.12})
    assert ours.fun < 1e-10 and cobyqa.fun < 1e-10
    first = next(r.queries for r in ours.history if r.best_f < 1e-8)
    assert first <= 1.2 * cobyqa.nfev


def test_it_draws_nothing_so_every_seed_makes_the_same_run() -> None:
    runs = [zeroopt.minimize(rosen, np.full(3, -1.2), solver="trust-region", budget=300, seed=s) for s in (0, 1)]
    assert np.array_equal(runs[0].x, runs[1].x) and runs[0].queries == runs[1].queries


def test_default_points_are_a_full_quadratic_within_a_cap() -> None:
    assert default_points(3) == 10 and default_points(12) == 91
    assert default_points(100) == 300 and default_points(1000) == 2001  # 2n + 1 at least


def test_it_refuses_the_unit_sphere_and_huge_dimensions_with_a_clear_error() -> None:
    spec = zeroopt.get_solver("trust-region")
    assert "unit sphere" in spec.refusal(zeroopt.SolverContext(dim=16, unit_sphere=True))
    assert "dense" in spec.refusal(zeroopt.SolverContext(dim=150_528))
    assert spec.refusal(zeroopt.SolverContext(dim=16)) is None
    with pytest.raises(ValueError, match="points"):
        zeroopt.minimize(rosen, np.zeros(3), solver="trust-region", budget=10, points=1)
