"""The history prior (zeroopt.direction.prior): its noise measurement is right, its filter averages a steady gradient's
estimates by their precision, and it lets go of the past once the gradient turns."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt import GradientEstimate, GradientFilter, HistoryPrior, SolverState
from zeroopt.direction.prior import noise_energy
from zeroopt.direction.step_bound import BoundedStep


def _sign_probes(rng: np.random.Generator, n: np.ndarray, q: int, flip: float = 0.0):  # type: ignore[no-untyped-def]
    """q unit probes and the sign estimator's weights for gradient ``n``, each sign flipped with prob ``flip``."""
    u = rng.standard_normal((q, n.size))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    s = np.sign(u @ n)
    s[rng.random(q) < flip] *= -1
    return u, s / q


def _cos(v: np.ndarray, n: np.ndarray) -> float:
    return float(v @ n / np.linalg.norm(v))


def test_noise_energy_measures_the_estimates_spread() -> None:
    rng = np.random.default_rng(0)
    d, q = 200, 10
    n = np.eye(d)[0]
    draws = [_sign_probes(rng, n, q) for _ in range(3000)]
    estimates = np.array([w @ u for u, w in draws])
    spread = np.mean(np.sum((estimates - estimates.mean(axis=0)) ** 2, axis=1))  # E‖g − E g‖²
    assert np.mean([noise_energy(u, w) for u, w in draws]) == pytest.approx(spread, rel=0.05)


def test_the_filter_weighs_estimates_by_their_noise_until_the_gradient_drifts() -> None:
    f = GradientFilter.start(np.array([1.0, 0.0]), noise=1.0)
    f = f.update(np.array([0.0, 1.0]), noise=3.0, memory_weight=0.1)  # the noisier estimate counts less
    assert f.gain == pytest.approx(0.25) and np.allclose(f.mean, [0.75, 0.25])
    assert f.variance == pytest.approx(0.75)  # 1/(1/1 + 1/3)
    # Innovations far larger than the noise can explain: the measured drift raises the gain toward 1.
    for k in range(30):
        f = f.update(np.array([10.0 * (-1) ** k, 0.0]), noise=1.0, memory_weight=0.1)
    assert f.drift > 10 and f.gain > 0.9


def _state(memory: dict) -> SolverState:  # type: ignore[type-arg]
    return SolverState(x=np.zeros(3), fx=1.0, fx_eps=0.0, beta=0.1, step=0.1, iteration=0,
                       rng=np.random.default_rng(0), memory=memory)


def _run_rule(rule: HistoryPrior, gradients: list[np.ndarray], q: int, seed: int) -> list[float]:
    """The cosine of the rule's direction to each iteration's gradient."""
    rng = np.random.default_rng(seed)
    memory: dict = {}  # type: ignore[type-arg]
    cosines = []
    for n in gradients:
        u, w = _sign_probes(rng, n, q, flip=0.1)
        est = GradientEstimate(g=w @ u, eps=0.0, used=q, probes=u, weights=w)
        g, memory = rule(None, _state(memory), est)  # type: ignore[arg-type]
        assert np.linalg.norm(g) == pytest.approx(np.linalg.norm(est.g))  # the estimate's length is kept
        cosines.append(_cos(g, n))
    return cosines


def test_the_rule_accumulates_a_steady_gradient_and_lets_go_when_it_turns() -> None:
    d, q = 500, 20
    n1, n2 = np.eye(d)[0], np.eye(d)[1]
    runs = np.array([_run_rule(HistoryPrior(), [n1] * 15 + [n2] * 15, q, seed) for seed in range(40)])
    single = np.mean([_run_rule(HistoryPrior(), [n1], q, seed)[0] for seed in range(40)])  # no prior yet
    assert single < 0.25
    steady = runs[:, 14].mean()
    assert steady > 2 * single  # fifteen iterations along one gradient: a much better direction
    # The gradient turns by 90°: the old prior says nothing of the new one, and within a few iterations the
    # direction is at least as good as a single estimate again, then better.
    assert runs[:, 15 + 3].mean() > 0.9 * single
    assert runs[:, 29].mean() > 2 * single


def test_an_estimate_without_terms_passes_unchanged() -> None:
    g = np.array([1.0, 2.0, 3.0])
    out, memory = HistoryPrior()(None, _state({}), GradientEstimate(g=g, eps=0.0, used=1))  # type: ignore[arg-type]
    assert np.array_equal(out, g) and "history_prior" not in memory


def test_the_options_compose_prior_and_momentum() -> None:
    ctx = zeroopt.SolverContext(dim=4)
    prior = zeroopt.make_solver("sign-growing", ctx, history_prior=True).parts_at("direction")
    # (last, the step bound shortens what the others make: zeroopt.direction.step_bound)
    assert [type(p) for p in prior] == [HistoryPrior, BoundedStep]
    both = zeroopt.make_solver("rgf", ctx, history_prior=True, momentum=1.0).parts_at("direction")
    assert [type(r) for r in both] == [HistoryPrior, zeroopt.AdaptiveMomentum, BoundedStep]
    assert [type(r) for r in zeroopt.make_solver("sign", ctx).parts_at("direction")] == [BoundedStep]
    assert zeroopt.make_solver("sign", ctx, step_bound=None).parts_at("direction") == ()
    with pytest.raises(TypeError, match="history_prior"):
        zeroopt.make_solver("sign", ctx, history_prior="yes")
    with pytest.raises(ValueError, match="memory_weight"):
        HistoryPrior(memory_weight=0.0)
