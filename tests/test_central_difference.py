"""Central differences (zeroopt.estimate.estimators.central_difference, option differences="central" of rgf and
coordinate) and the switch to them once the noise widens β (zeroopt.AdaptiveDifferences, differences="adaptive"):
exact on a quadratic at every radius, what they report, when the switch happens, lower true values under noise."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from zeroopt.estimate.estimators import central_difference, forward_difference
from zeroopt.oracles.problems import rotated_quadratic
from zeroopt.oracles.requests import Evaluate, Evaluation
from zeroopt.step.noise import CENTRAL_NOISE_CEILING_RATIO, NOISE_CEILING_RATIO, RadiusAboveNoise


def _answer(estimator, f, x, directions, beta, scale, eps_of=lambda v: 0.0):
    """Drive an estimator generator with exact answers of ``f`` (each with precision ``eps_of(value)``)."""
    gen = estimator(x, f(x), directions, beta, scale, None)
    request = next(gen)
    while True:
        assert isinstance(request, Evaluate)
        values = np.array([f(p) for p in request.points])
        try:
            answer = Evaluation(values=values, eps=np.array([eps_of(v) for v in values]), queries=len(values))
            request = gen.send(answer)
        except StopIteration as done:
            return done.value, request


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10**6), st.floats(1e-3, 10.0))
def test_central_differences_are_exact_on_a_quadratic_at_every_radius(d: int, seed: int, beta: float) -> None:
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(d, d))
    a, b = m @ m.T + np.eye(d), rng.normal(size=d)
    f = lambda x: float(0.5 * x @ a @ x + b @ x)  # noqa: E731
    x = rng.normal(size=d)
    every = np.eye(d)  # each coordinate once, at the coordinate sampler's scale d: the whole gradient
    central, _ = _answer(central_difference, f, x, every, beta, float(d))
    forward, _ = _answer(forward_difference, f, x, every, beta, float(d))
    assert np.allclose(central.g, a @ x + b, rtol=1e-7, atol=1e-7 * (1 + np.abs(a @ x + b).max()))
    # The forward difference carries its curvature term β Aᵢᵢ / 2.
    assert np.allclose(forward.g - (a @ x + b), beta * np.diag(a) / 2, rtol=1e-6, atol=1e-6 * (1 + beta))


def test_it_reports_pair_differences_their_precision_and_drops_a_pair_with_an_infinite_side() -> None:
    f = lambda x: np.inf if x[1] > 0.5 else float(x @ x)  # noqa: E731
    x, u = np.array([1.0, 0.0]), np.eye(2)
    est, request = _answer(central_difference, f, x, u, 1.0, 2.0, eps_of=lambda v: 0.1 * v if np.isfinite(v) else 0)
    assert len(request.points) == 4  # a pair per probe: x + βu, then x − βu
    assert est.used == 1 and np.allclose(est.differences, [4.0 - 0.0])  # f(2, 0) − f(0, 0); the second pair drops
    assert np.allclose(est.g, [2.0 * 4.0 / 2.0, 0.0])  # scale 2 over the one pair used
    assert est.eps == pytest.approx(0.4)  # the larger precision of the pair kept
    assert est.best_f == 0.0 and np.array_equal(est.best_x, [0.0, 0.0])


@pytest.mark.parametrize("solver", ["rgf", "coordinate"])
def test_the_option_puts_the_estimator_in_the_chain(solver: str) -> None:
    ctx = zeroopt.SolverContext(dim=3)
    chain = zeroopt.make_solver(solver, ctx, differences="central")
    # The estimate part runs inside the estimate of an unstated noise (zeroopt.estimate.unstated_noise): its ``inner``.
    assert chain.parts_at("estimate")[0].inner.estimator is central_difference
    assert zeroopt.make_solver(solver, ctx).parts_at("estimate")[0].inner.estimator is forward_difference
    assert "<- differences" in zeroopt.get_solver(solver).describe(ctx, differences="central")
    with pytest.raises(ValueError, match="differences must be one of"):
        zeroopt.make_solver(solver, ctx, differences="centre")


@pytest.mark.parametrize(("differences", "ceiling"), [("forward", NOISE_CEILING_RATIO),
                                                      ("central", CENTRAL_NOISE_CEILING_RATIO),
                                                      ("adaptive", CENTRAL_NOISE_CEILING_RATIO)])
def test_the_noise_aware_radius_gets_the_bound_of_the_differences_taken(differences: str, ceiling: float) -> None:
    chain = zeroopt.make_solver("coordinate", zeroopt.SolverContext(dim=3), differences=differences,
                                beta_above_noise=True)
    assert chain.find(RadiusAboveNoise).ceiling_ratio == ceiling


def test_each_answer_is_a_query() -> None:
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(4), solver="coordinate", budget=101, seed=0, q=4,
                           differences="central")
    assert res.queries <= 101 and res.fun < 4.0


QUAD = rotated_quadratic(20, mu=1e-3, L=1.0, seed=0)
GAP = QUAD(QUAD.x0) - QUAD.f_star


@pytest.mark.parametrize("differences", ["central", "adaptive"])
def test_a_lower_true_value_than_forward_differences_under_noise_on_every_seed(differences: str) -> None:
    """Finite-difference quasi-Newton on a noisy condition-1000 quadratic: the forward estimate's curvature term
    keeps the noise-aware radius narrow and the estimate biased; the central one lets it widen."""
    gains = []
    for seed in range(6):
        gap = {}
        for kind in ("forward", differences):
            oracle = QUAD.with_noise("uniform", 1e-2 * GAP, seed=seed).make_oracle()
            # The two estimates compared alone: the steps as long as the estimates make them (step_bound=None).
            res = zeroopt.minimize(oracle, QUAD.x0, solver="coordinate", budget=10_000, seed=seed, q=20,
                                   quasi_newton=10, beta_above_noise=True, differences=kind, step_bound=None)
            gap[kind] = QUAD(res.x) - QUAD.f_star
        gains.append(gap["forward"] / gap[differences])
    assert min(gains) > 1.0 and float(np.median(gains)) > 2.0, gains


class _Batches(zeroopt.Oracle):
    """QUAD with uniform noise of ``share`` × its gap (0: exact), stating it, recording each batch's size."""

    def __init__(self, share: float, seed: int = 0) -> None:
        super().__init__()
        self.share, self.sizes = share, []
        self.rng = np.random.default_rng(seed)

    def _values(self, points: np.ndarray, eps: float | None) -> tuple[np.ndarray, np.ndarray]:
        self.sizes.append(len(points))
        noise = self.share * GAP
        values = QUAD.values(points) + self.rng.uniform(-noise, noise, size=len(points))
        return values, np.full(len(points), noise)


def test_adaptive_differences_go_central_once_the_noise_widens_beta_and_not_on_exact_answers() -> None:
    run = dict(solver="coordinate", budget=3000, seed=0, q=20, beta_above_noise=True, differences="adaptive")
    noisy, exact = _Batches(1e-2), _Batches(0.0)
    zeroopt.minimize(noisy, QUAD.x0, **run)
    zeroopt.minimize(exact, QUAD.x0, **run)
    assert 20 in noisy.sizes and 40 in noisy.sizes  # forward estimates first, central ones once β is widened
    assert noisy.sizes.index(20) < noisy.sizes.index(40)
    assert 40 not in exact.sizes and 20 in exact.sizes
    forward = zeroopt.minimize(QUAD.make_oracle(), QUAD.x0, **{**run, "differences": "forward"})
    same = zeroopt.minimize(QUAD.make_oracle(), QUAD.x0, **run)
    assert np.array_equal(forward.x, same.x) and forward.queries == same.queries


def test_adaptive_differences_need_the_noise_aware_radius() -> None:
    with pytest.raises(ValueError, match="beta_above_noise=True"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), solver="coordinate", budget=20, differences="adaptive")
