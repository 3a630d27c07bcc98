"""minimize spends the whole budget: a run that stops early is restarted, one ledger, one best point, one seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from zeroopt.running.whole_budget import Restarts, restarts_ran

DIM = 4


def ellipsoid(x: np.ndarray) -> float:
    return float(np.sum(np.arange(1, x.size + 1) * (x - 0.3) ** 2))


def rastrigin(x: np.ndarray) -> float:
    return float(10 * x.size + np.sum(x**2 - 10 * np.cos(2 * np.pi * x)))


class Counting:
    """The objective, counting its own calls: the ledger's count must be the objective's."""

    def __init__(self, f) -> None:  # noqa: ANN001
        self.f, self.calls = f, 0

    def __call__(self, x: np.ndarray) -> float:
        self.calls += 1
        return self.f(x)


@settings(max_examples=6, deadline=None)
@given(budget=st.integers(60, 1500), seed=st.integers(0, 2**16), solver=st.sampled_from(["coordinate", "rgf"]))
def test_restarts_spend_the_budget_and_never_more(budget: int, seed: int, solver: str) -> None:
    f = Counting(ellipsoid)
    res = zeroopt.minimize(f, np.ones(DIM), solver=solver, budget=budget, seed=seed)
    assert res.queries == f.calls <= budget
    assert res.status is zeroopt.Status.BUDGET and res.queries == budget  # a smooth run converges: restarts go on
    assert len(res.history) == res.iterations
    assert [r.iteration for r in res.history] == list(range(res.iterations))
    best = res.history_array("best_f")
    assert np.all(np.diff(best) <= 0) and best[-1] >= res.fun


def test_the_result_is_the_best_of_every_run() -> None:
    seen: list[float] = []
    f = lambda x: seen.append(rastrigin(x)) or seen[-1]  # noqa: E731
    res = zeroopt.minimize(f, np.full(DIM, 2.2), solver="coordinate", budget=3000, seed=0)
    assert restarts_ran(res) > 1 and res.fun == min(seen) and res.queries == len(seen) <= 3000
    assert rastrigin(res.x) == res.fun
    one = zeroopt.minimize(rastrigin, np.full(DIM, 2.2), solver="coordinate", budget=3000, seed=0, restarts=False)
    assert res.fun <= one.fun


def test_restarts_off_is_the_single_run_and_the_first_run_is_unchanged() -> None:
    one = zeroopt.minimize(ellipsoid, np.ones(DIM), solver="trust-region", budget=400, seed=1, restarts=False)
    assert one.status is zeroopt.Status.CONVERGED and one.queries < 400 and restarts_ran(one) == 0
    many = zeroopt.minimize(ellipsoid, np.ones(DIM), solver="trust-region", budget=400, seed=1)
    assert restarts_ran(many) >= 1 and many.queries == 400 and many.fun <= one.fun
    assert many.history[:len(one.history)] == one.history  # the first run is the single run, record for record
    capped = zeroopt.minimize(ellipsoid, np.ones(DIM), solver="trust-region", budget=400, seed=1,
                              restarts=Restarts(max_restarts=0))
    assert capped.fun == one.fun and capped.queries == one.queries and np.array_equal(capped.x, one.x)


def test_same_seed_same_result() -> None:
    runs = [zeroopt.minimize(rastrigin, np.full(DIM, 2.2), solver="rgf", budget=1500, seed=seed)
            for seed in (7, 7, np.random.SeedSequence(7))]
    assert runs[0].fun == runs[1].fun == runs[2].fun and np.array_equal(runs[0].x, runs[2].x)
    assert [r.f for r in runs[0].history] == [r.f for r in runs[1].history]
    other = zeroopt.minimize(rastrigin, np.full(DIM, 2.2), solver="rgf", budget=1500, seed=8)
    assert other.fun != runs[0].fun


def test_max_iter_target_and_callbacks_keep_their_meaning_across_restarts() -> None:
    capped = zeroopt.minimize(ellipsoid, np.ones(DIM), solver="coordinate", budget=10_000, seed=0, max_iter=300)
    assert capped.iterations == 300 and capped.status is zeroopt.Status.MAX_ITER and restarts_ran(capped) >= 1
    hit = zeroopt.minimize(rastrigin, np.full(DIM, 2.2), solver="coordinate", budget=10_000, seed=0, target=3.5)
    assert hit.status is zeroopt.Status.TARGET and hit.fun <= 3.5 and hit.queries < 10_000
    records: list[zeroopt.IterationRecord] = []

    def stop_late(record: zeroopt.IterationRecord) -> bool:
        records.append(record)
        return record.iteration >= 150

    stopped = zeroopt.minimize(ellipsoid, np.ones(DIM), solver="coordinate", budget=10_000, seed=0,
                               callbacks=stop_late)
    assert stopped.status is zeroopt.Status.CALLBACK and restarts_ran(stopped) >= 1
    assert records == stopped.history and records[-1].iteration == 150


def test_a_failure_in_a_restart_carries_the_best_of_every_run() -> None:
    calls = {"n": 0}

    def f(x: np.ndarray) -> float:
        calls["n"] += 1
        if calls["n"] == 700:
            raise RuntimeError("the simulator fell over")
        return ellipsoid(x)

    with pytest.raises(RuntimeError, match="fell over") as caught:
        zeroopt.minimize(f, np.ones(DIM), solver="coordinate", budget=5000, seed=0)
    part = caught.value.partial_result
    assert part.status is zeroopt.Status.ERROR and restarts_ran(part) >= 1 and part.queries == 700
    assert math.isfinite(part.fun) and part.fun < ellipsoid(np.ones(DIM)) * 1e-6


def test_a_budget_too_large_to_spend_still_ends() -> None:
    res = zeroopt.minimize(ellipsoid, np.ones(DIM), solver="coordinate", budget=10**18, seed=0)
    assert res.status is zeroopt.Status.CONVERGED and restarts_ran(res) >= zeroopt.running.whole_budget.STALE_RESTARTS
    assert res.queries < 10**5 and res.fun < 1e-12


def test_a_restart_that_leaves_the_finite_region_goes_on_or_raises_as_told() -> None:
    def walled(x: np.ndarray) -> float:
        return ellipsoid(x) if np.max(np.abs(x)) < 1.0 else math.inf

    kw = {"solver": "coordinate", "budget": 5000, "seed": 0}
    one = zeroopt.minimize(walled, np.full(DIM, 0.5), restarts=False, **kw)
    worse = zeroopt.minimize(walled, np.full(DIM, 0.5), **kw)  # inf is worse than any value: the restarts go on
    assert worse.queries == 5000 and worse.fun <= one.fun
    with pytest.raises(zeroopt.NonFiniteValueError) as caught:  # asked to raise: a restart's inf raises too
        zeroopt.minimize(walled, np.full(DIM, 0.5), on_non_finite="raise", **kw)
    part = caught.value.partial_result
    assert part.status is zeroopt.Status.ERROR and restarts_ran(part) >= 1 and part.fun <= one.fun


def test_on_non_finite_reaches_the_oracle_and_is_checked_before_any_query() -> None:
    calls = {"n": 0}

    def overflowing(x: np.ndarray) -> float:
        calls["n"] += 1
        return math.inf if x[0] > 1.2 else ellipsoid(x)

    res = zeroopt.minimize(overflowing, np.ones(DIM), solver="coordinate", budget=400, seed=0, on_non_finite="worse")
    assert res.queries == 400 and math.isfinite(res.fun)
    with pytest.raises(ValueError, match="on_non_finite"):
        zeroopt.minimize(overflowing, np.ones(DIM), budget=400, on_non_finite="ignore")
    assert calls["n"] == 400


@pytest.mark.parametrize("bad", [1, "yes", 0.5])
def test_restarts_takes_a_policy_or_a_bool(bad: object) -> None:
    with pytest.raises(TypeError, match="restarts must be"):
        zeroopt.minimize(ellipsoid, np.ones(DIM), budget=10, restarts=bad)
    with pytest.raises(ValueError, match="max_restarts"):
        Restarts(max_restarts=-1)
    with pytest.raises(ValueError, match="growth"):
        Restarts(growth=0.5)


def test_fresh_starts_grow_and_start_over() -> None:
    policy = Restarts()
    widths = [policy.half_width(k, 2.0) for k in range(9)]
    assert widths[:7] == pytest.approx([0.2 * 2**k for k in range(7)]) and widths[7] == widths[0]
