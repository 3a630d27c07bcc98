"""The global phase between restarts: a CMA-ES from the best point, counted by the one ledger, handing over."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.running.global_phase import GlobalPhase, default_population


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


def test_the_coco_adapter_runs_an_entry_with_the_global_phase(tmp_path) -> None:  # noqa: ANN001
    from benchmarks.coco.run import Plan, solvers_known

    assert solvers_known(["coordinate+qn/global", "rgf/global"]) == []
    pytest.importorskip("cocoex")
    from benchmarks.coco.run import run_plan

    records = run_plan(Plan("bbob", (2,), (1,), (17,), ("coordinate+qn/global",), budget_multiplier=200), tmp_path)
    assert [r["evaluations"] for r in records] == [400] and records[0]["ending"] == "stopped"


def test_a_failure_inside_a_phase_carries_every_answered_query() -> None:
    calls = {"n": 0}

    def failing(x: np.ndarray) -> float:
        calls["n"] += 1
        if calls["n"] == 700:  # (the failing call counts, as every call the objective answered or not)
            raise RuntimeError("the simulator crashed")
        return _rastrigin(x)

    policy = zeroopt.Restarts(global_phase=GlobalPhase())
    with pytest.raises(RuntimeError) as err:
        zeroopt.minimize(failing, np.zeros(4), solver="coordinate", budget=5000, seed=0, restarts=policy)
    part = err.value.partial_result
    assert part.solver == "coordinate" and np.isnan(part.history[-1].grad_norm_estimate)  # (ended in a phase)
    assert part.status is zeroopt.Status.ERROR and part.queries == 700
    assert part.fun == pytest.approx(_rastrigin(part.x))


def test_a_budget_too_large_to_spend_still_ends_with_phases() -> None:
    policy = zeroopt.Restarts(global_phase=GlobalPhase())
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(5), solver="coordinate", budget=10**18, seed=0,
                           restarts=policy)
    assert res.queries < 10**5 and res.fun < 1e-12 and policy.phase_level(4) == 0  # levels 1, 2, 4, 8 of σ0
