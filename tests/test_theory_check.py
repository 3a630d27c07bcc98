"""theory.check: a run measured against Theorem 1's bound and its precision condition."""

from __future__ import annotations

import math

import numpy as np
import pytest

import zeroopt
from theory import Theorem1Monitor, admissible_beta, check_run, iteration_bound, make_problem, pseudo_huber
from theory.hitting import FirstHitStop, gradient_norms

DELTA = 0.3


def _run(problem: zeroopt.Problem, **options: object) -> zeroopt.OptimizeResult:
    grad0 = float(np.linalg.norm(problem.gradient(problem.x0)))
    return zeroopt.minimize(
        problem, problem.x0, solver="rgf-fixed", budget=10**7, seed=7, max_iter=20_000,
        patience=None, callbacks=[FirstHitStop(DELTA, grad0)], **options,  # type: ignore[arg-type]
    )


def test_exact_run_meets_its_bound_and_the_precision_condition() -> None:
    problem = make_problem("log_norm", 8, delta=DELTA, seed=3)
    beta = admissible_beta(8, 2.0, DELTA)
    res = _run(problem, beta=beta)
    check = check_run(res, problem, DELTA)
    assert check.bound_iterations == iteration_bound(8, 2.0, DELTA, math.log(2.0), beta=beta)
    assert check.within_bound is True and 0 < check.ratio < 1, check.summary()
    assert check.precision_ok and check.violations == 0 and check.first_violation is None
    assert check.hit_iterate.iteration <= check.hit_average.iteration
    assert check.beta == pytest.approx(beta) and check.eps == 0.0
    assert check.step == pytest.approx(1 / (4 * 12 * 2.0))
    assert check.bound_queries == 1 + 2 * check.bound_iterations
    assert "average hit" in check.summary() and check.to_dict()["violations"] == 0


def test_coarse_oracle_is_flagged_and_the_bound_says_why() -> None:
    beta = admissible_beta(8, 1.0, DELTA)
    eps = 1000 * beta * DELTA**2
    problem = make_problem("rotated_quadratic", 8, delta=DELTA, seed=3).with_noise("uniform", eps, seed=1)
    grad0 = float(np.linalg.norm(problem.gradient(problem.x0)))
    res = zeroopt.minimize(problem, problem.x0, solver="rgf-fixed", budget=10**7, seed=7, max_iter=300, beta=beta,
                           patience=None, callbacks=[FirstHitStop(DELTA, grad0)])
    check = check_run(res, problem, DELTA, error="zero-mean")
    assert not check.precision_ok
    assert check.violations == res.iterations and check.first_violation == 0
    assert math.isinf(check.bound_iterations) and "eps" in check.note
    assert check.precision_threshold == pytest.approx(beta * DELTA**2)
    assert "cβδ²" in check.summary()


def test_replayed_monitor_agrees_with_a_live_one() -> None:
    beta = admissible_beta(8, 1.0, DELTA)
    problem = make_problem("rotated_quadratic", 8, delta=DELTA, seed=3).with_noise("uniform", 3 * beta * DELTA**2)
    monitor = zeroopt.ToleranceMonitor(DELTA, warn=False)
    res = zeroopt.minimize(problem, problem.x0, solver="rgf-fixed", budget=10**7, seed=7, max_iter=50, beta=beta,
                           patience=None, callbacks=[monitor])
    check = check_run(res, problem, DELTA)
    assert check.violations == len(monitor.violations) == 50
    assert res.flags and "tolerance" in res.flags[0]


def test_too_large_beta_gives_no_guarantee() -> None:
    problem = pseudo_huber(8, slope=2 * DELTA, L1=1.0, f_gap=1.0, seed=0)
    res = _run(problem, beta=0.5)
    check = check_run(res, problem, DELTA)
    assert math.isinf(check.bound_iterations) and "beta" in check.note
    assert math.isnan(check.ratio)


def test_needs_true_gradients_and_an_L1() -> None:
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(4), solver="rgf", budget=200, seed=0)
    with pytest.raises(ValueError, match="true gradient"):
        gradient_norms(res, 1.0)
    rosen = zeroopt.oracles.problems.rosenbrock(4)
    res = zeroopt.minimize(rosen, rosen.x0, solver="rgf", budget=200, seed=0)
    with pytest.raises(ValueError, match="L1"):
        check_run(res, rosen, DELTA)


def test_pseudo_huber_has_the_promised_constants() -> None:
    p = pseudo_huber(12, slope=0.4, L1=2.0, f_gap=1.5, seed=4)
    assert p(p.x0) == pytest.approx(1.5)
    assert p.L1 == 2.0 and p.f_star == 0.0
    s = 0.4 / 2.0
    assert np.linalg.norm(p.gradient(np.zeros(12))) == 0.0
    # ‖∇f‖ = a r/√(s² + r²) = δ at r = s/√3 for a = 2δ
    x = np.eye(12)[0] * s / math.sqrt(3)
    assert np.linalg.norm(p.gradient(x)) == pytest.approx(0.2)
    # Hessian's largest eigenvalue at 0 is a/s = L1 (finite difference along a direction)
    h = 1e-6
    assert (np.linalg.norm(p.gradient(np.eye(12)[1] * h)) / h) == pytest.approx(2.0, rel=1e-4)


def test_live_monitor_agrees_with_the_post_hoc_check() -> None:
    problem = make_problem("log_norm", 8, delta=DELTA, seed=3)
    monitor = Theorem1Monitor(problem, DELTA, stop=True)
    res = zeroopt.minimize(problem, problem.x0, solver="rgf-fixed", budget=10**7, seed=7, max_iter=20_000,
                           patience=None, beta=admissible_beta(8, 2.0, DELTA), callbacks=[monitor])
    check = check_run(res, problem, DELTA)
    assert res.status.value == "callback" and monitor.hit == res.iterations == check.hit_average.iteration
    assert monitor.bound == check.bound_iterations
    assert res.flags == [f"theorem1: mean |grad f|^2 <= delta^2 at iteration {monitor.hit} (bound N = {monitor.bound})"]


def test_live_monitor_flags_a_coarse_oracle_and_a_missing_guarantee() -> None:
    beta = admissible_beta(8, 1.0, DELTA)
    problem = make_problem("rotated_quadratic", 8, delta=DELTA, seed=3).with_noise("uniform", 1000 * beta * DELTA**2)
    monitor = Theorem1Monitor(problem, DELTA)
    res = zeroopt.minimize(problem, problem.x0, solver="rgf-fixed", budget=10**7, seed=7, max_iter=100, beta=beta,
                           patience=None, callbacks=[monitor])
    assert any(f.startswith("theorem1: tolerance") for f in res.flags)
    assert any("no guarantee" in f and "eps" in f for f in res.flags)
