"""The global phase between restarts: a CMA-ES from the best point, counted by the one ledger, handing over."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.global_phase import GlobalPhase, default_population


def _rastrigin(x: np.ndarray) -> float:
    z = np.asarray(x, dtype=float) - 1.3
    return float(10 * z.size + np.sum(z * z - 10 * np.cos(2 * np.pi * z)))


def test_population_doubles_and_arguments_are_checked() -> None:
    assert default_population(10) == 10 and GlobalPhase().population_for(10, 2) == 40
    assert GlobalPhase(population=6, growth=3).population_for(5, 1) == 18
    for bad in ({"population": 1}, {"growth": 0}, {"handover": 0.0}, {"sigma_share": float("nan")}):
        with pytest.raises(ValueError):
            GlobalPhase(**bad)


def test_phases_spend_the_exact_budget_and_keep_one_best_point() -> None:
    seen: list[float] = []
    policy = zeroopt.Restarts(global_phase=GlobalPhase())
    res = zeroopt.minimize(_rastrigin, np.zeros(6), solver="coordinate", budget=1500, seed=3, restarts=policy,
                           callbacks=[lambda rec: seen.append(rec.best_f)])
    assert res.queries == 1500 and zeroopt.restarts_ran(res) >= 2
    assert res.fun == pytest.approx(_rastrigin(res.x)) and res.fun == min(seen)
    assert np.all(np.diff(seen) <= 0)  # the call's best never rises across runs and phases
    again = zeroopt.minimize(_rastrigin, np.zeros(6), solver="coordinate", budget=1500, seed=3, restarts=policy)
    assert again.fun == res.fun and np.array_equal(again.x, res.x)  # one seed, one result


def test_a_callback_and_max_iter_end_a_phase() -> None:
    policy = zeroopt.Restarts(global_phase=GlobalPhase())
    res = zeroopt.minimize(_rastrigin, np.zeros(4), solver="coordinate", budget=10**5, seed=0, restarts=policy,
                           max_iter=100)
    assert res.iterations == 100 and res.status.value == "max_iter"
    stop = zeroopt.minimize(_rastrigin, np.zeros(4), solver="coordinate", budget=10**5, seed=0, restarts=policy,
                            callbacks=[lambda rec: rec.iteration >= 80])
    assert stop.status.value == "callback" and stop.queries < 10**5


def test_a_phase_meets_inf_without_ending_the_call() -> None:
    def walled(x: np.ndarray) -> float:  # +inf outside the box, as an overflowing simulator would answer
        return float("inf") if np.max(np.abs(x)) > 2 else _rastrigin(x)

    policy = zeroopt.Restarts(global_phase=GlobalPhase(sigma_share=3.0))
    res = zeroopt.minimize(walled, np.zeros(5), solver="coordinate", budget=2000, seed=1, restarts=policy)
    assert res.queries == 2000 and np.isfinite(res.fun)
