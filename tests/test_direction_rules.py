"""Parts that change what a descent iteration steps along: the baseline of the sign estimator and momentum."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.core.base import GradientEstimate, SolverState
from zeroopt.estimate.unstated_noise import EstimatedNoise
from zeroopt.oracles.requests import Comparison


def _run(estimator, u: np.ndarray, below_of, beta: float = 0.1) -> GradientEstimate:  # type: ignore[no-untyped-def]
    """Run a comparison estimator at x = 0 with probes ``u``, answering its one request with ``below_of(request)``."""
    gen = estimator(np.zeros(u.shape[1]), 0.0, u, beta, float(u.shape[1]), None)
    req = next(gen)
    below = below_of(req)
    try:
        gen.send(Comparison(below=below, queries=len(below), exhausted=False))
    except StopIteration as done:
        return done.value
    raise AssertionError("the estimator asked for more than one batch")


def _estimate(estimator, g: np.ndarray, u: np.ndarray, offset: float, curvature: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """The estimate at x = 0 of f(x) = g·x + ½ xᵀHx (H = diag(curvature)), whose comparisons at radius β = 1
    are shifted by ``offset`` (a value f(0) known only to a precision)."""
    def below_of(req):  # type: ignore[no-untyped-def]
        return req.points @ g + 0.5 * (req.points**2) @ curvature < req.levels + offset

    return _run(estimator, u, below_of, beta=1.0).g


def _cosines(estimator, offset: float, reps: int = 300, d: int = 100, q: int = 50) -> np.ndarray:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(0)
    out = []
    for _ in range(reps):
        g = rng.standard_normal(d)
        g /= np.linalg.norm(g)
        # Positive, unequal curvature: about 88% of the probes land higher, whatever their slope.
        curvature = 0.3 * np.abs(rng.standard_normal(d))
        u = rng.standard_normal((q, d))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        est = _estimate(estimator, g, u, offset, curvature)
        out.append(est @ g / (np.linalg.norm(est) + 1e-300))  # the estimate ascends, as ∇f does
    return np.array(out)


def test_the_baseline_raises_the_cosine_where_most_comparisons_agree() -> None:
    """Curvature at the probe radius pushes most comparisons to 'higher': the plain sign estimate then carries
    s̄·Σu, noise; the baseline removes it. Same probes, same answers, a better direction."""
    plain = _cosines(zeroopt.sign_of_difference, 0.0)
    centred = _cosines(zeroopt.centered_sign_of_difference, 0.0)
    assert centred.mean() > 1.3 * plain.mean() > 0.1


def test_the_baseline_changes_nothing_when_the_comparisons_are_balanced() -> None:
    u = np.eye(4)
    done = _run(zeroopt.centered_sign_of_difference, u, lambda req: np.array([True, False, True, False]))
    assert np.allclose(done.g, np.array([-1, 1, -1, 1]) / 4)
    assert done.below_fraction == 0.5
    # All answers equal: nothing disagrees, so nothing to centre on: the plain estimate.
    done = _run(zeroopt.centered_sign_of_difference, u, lambda req: np.zeros(4, bool))
    assert np.allclose(done.g, np.full(4, 0.25))


def _answer(estimator, below: np.ndarray, u: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    return _run(estimator, u, lambda req: below).g


def test_the_shrunk_baseline_is_plain_when_balanced_and_centred_when_not() -> None:
    rng = np.random.default_rng(1)
    u = rng.standard_normal((100, 30))
    plain, centred, shrunk = (zeroopt.sign_of_difference, zeroopt.centered_sign_of_difference,
                              zeroopt.shrunk_centered_sign_of_difference)
    # 48 of 100 lower: s̄ = 0.04 is well within its noise (0.1): nothing is subtracted.
    balanced = np.arange(100) < 48
    assert np.array_equal(_answer(shrunk, balanced, u), _answer(plain, balanced, u))
    assert not np.allclose(_answer(centred, balanced, u), _answer(plain, balanced, u))
    # 5 of 100 lower: s̄ = 0.9, 20 standard deviations from 0: nearly the full baseline.
    lopsided = np.arange(100) < 5
    gap = np.linalg.norm(_answer(shrunk, lopsided, u) - _answer(centred, lopsided, u))
    assert gap < 0.01 * np.linalg.norm(_answer(centred, lopsided, u) - _answer(plain, lopsided, u))


def test_the_shrunk_baseline_keeps_the_centred_cosine_under_curvature() -> None:
    plain = _cosines(zeroopt.sign_of_difference, 0.0)
    centred = _cosines(zeroopt.centered_sign_of_difference, 0.0)
    shrunk = _cosines(zeroopt.shrunk_centered_sign_of_difference, 0.0)
    assert shrunk.mean() > 1.3 * plain.mean() and shrunk.mean() > 0.95 * centred.mean()


def test_sign_solvers_take_the_baseline_by_option() -> None:
    ctx = zeroopt.SolverContext(dim=8)
    # (On a plain objective the noise estimate wraps the estimate: EstimatedNoise, whose inner part it runs.)
    def estimator(name: str, **options: object) -> object:
        return zeroopt.make_solver(name, ctx, **options).find(EstimatedNoise).inner.estimator  # type: ignore

    assert estimator("sign") is zeroopt.sign_of_difference
    assert estimator("sign", baseline=True) is zeroopt.centered_sign_of_difference
    assert estimator("sign-growing", baseline="shrunk") is zeroopt.shrunk_centered_sign_of_difference
    bare = zeroopt.make_solver("sign", ctx, estimate_noise=False).find(zeroopt.Estimate)
    assert bare is not None and bare.estimator is zeroopt.sign_of_difference
    with pytest.raises(TypeError, match="baseline"):
        zeroopt.make_solver("sign-growing", ctx, baseline="yes")


def _state(memory: dict) -> SolverState:  # type: ignore[type-arg]
    return SolverState(x=np.zeros(3), fx=1.0, fx_eps=0.0, beta=0.1, step=0.1, iteration=0,
                       rng=np.random.default_rng(0), memory=memory)


def test_momentum_weight_follows_how_often_steps_overshoot() -> None:
    rule = zeroopt.AdaptiveMomentum(max_weight=1.0)
    assert rule.weight(0.5) == 0.0 and rule.weight(0.3) == 0.0 and rule.weight(1.0) == 1.0
    e1, e2 = np.eye(3)[0], np.eye(3)[1]
    # First iteration: no previous direction, the estimate itself (its length kept).
    g, memory = rule(None, _state({}), GradientEstimate(g=3 * e1, eps=0.0, used=1))  # type: ignore[arg-type]
    assert np.allclose(g, 3 * e1)
    # Estimates that keep pointing back against the last direction (the step overshot): the average of
    # 'overshot' rises above ½ and the direction leans on the previous one, more with every such iteration.
    leans = []
    for _ in range(8):
        p = memory["momentum"][0]
        side = np.cross(p, e2) if abs(p @ e2) < 0.9 else np.cross(p, e1)
        estimate = side / np.linalg.norm(side) - 0.2 * p
        g, memory = rule(None, _state(memory), GradientEstimate(g=estimate, eps=0.0, used=1))  # type: ignore[arg-type]
        leans.append(g @ p / np.linalg.norm(g) - estimate @ p / np.linalg.norm(estimate))
    assert memory["momentum"][1] > 0.5
    assert leans[0] > 0 and leans[-1] > leans[0]
    # Estimates that agree with the last direction (the step fell short) bring the weight back to 0.
    for _ in range(30):
        g, memory = rule(None, _state(memory), GradientEstimate(g=memory["momentum"][0], eps=0.0, used=1))  # type: ignore[arg-type]
    assert memory["momentum"][1] < 0.5


def test_momentum_rejects_a_negative_weight() -> None:
    with pytest.raises(ValueError, match="max_weight"):
        zeroopt.AdaptiveMomentum(max_weight=-1.0)
    with pytest.raises(ValueError, match="momentum"):
        zeroopt.make_solver("sign-growing", zeroopt.SolverContext(dim=4), momentum=0.0)


def test_momentum_carries_a_sign_descent_along_a_narrow_valley() -> None:
    """On an ill-conditioned quadratic (condition 100, d = 20) the steps of a sign descent zigzag across the
    valley; with momentum the same budget ends lower, over ten seeds."""
    h = np.logspace(0, 2, 20)

    def f(x: np.ndarray) -> float:
        return float(np.sum(h * x**2))

    def final(seed: int, **options: float) -> float:
        return zeroopt.minimize(f, np.ones(20), solver="sign-growing", budget=3000, seed=seed, **options).fun

    ratio = [final(s, momentum=1.0) / final(s) for s in range(10)]
    assert np.exp(np.mean(np.log(ratio))) < 0.85
