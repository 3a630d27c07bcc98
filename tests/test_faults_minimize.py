"""What happens when things go wrong in zeroopt.minimize: partial results, early checks, clear messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from zeroopt import Status


class Recording:
    """An objective that remembers every value it returned, and fails as told at its ``k``-th call."""

    def __init__(self, fail_at: int | None = None, fault: str = "raise") -> None:
        self.fail_at, self.fault = fail_at, fault
        self.calls = 0
        self.values: list[float] = []

    def __call__(self, x: np.ndarray) -> float | None:
        self.calls += 1
        if self.calls == self.fail_at:
            if self.fault == "raise":
                raise RuntimeError("objective failed")
            if self.fault == "interrupt":
                raise KeyboardInterrupt
            return {"nan": float("nan"), "inf": float("inf"), "none": None}[self.fault]
        v = float(np.sum((x - 0.5) ** 2))
        self.values.append(v)
        return v


def raising(f: Recording, shape: tuple[int, ...], fault: str) -> object:
    """``f`` itself, or for a NaN/inf fault ``f`` in an oracle told to raise on it (NaN/inf is otherwise a value
    worse than any, and the run goes on: tests/test_non_finite_and_noise.py)."""
    return zeroopt.CallableOracle(f, shape, on_non_finite="raise") if fault in ("nan", "inf") else f


@pytest.mark.parametrize("fault, error", [("raise", RuntimeError), ("nan", zeroopt.NonFiniteValueError),
                                          ("inf", zeroopt.NonFiniteValueError), ("none", zeroopt.ObjectiveError),
                                          ("interrupt", KeyboardInterrupt)])
def test_a_fault_mid_run_keeps_the_partial_result(fault: str, error: type) -> None:
    f = Recording(fail_at=137, fault=fault)
    with pytest.raises(error) as info:
        zeroopt.minimize(raising(f, (6,), fault), np.zeros(6), budget=10_000, seed=0)
    res = info.value.partial_result
    assert isinstance(res, zeroopt.OptimizeResult) and not res.success
    assert res.status is (Status.INTERRUPTED if fault == "interrupt" else Status.ERROR)
    # Nothing evaluated before the fault is missing, and the queries are the calls made.
    assert res.fun == min(f.values) and res.queries == f.calls == 137
    assert np.isclose(float(np.sum((res.x - 0.5) ** 2)), res.fun)
    assert len(res.history) >= 1 and res.history[-1].queries <= res.queries
    assert zeroopt.partial_result(info.value) is res
    assert any("partial_result" in note for note in getattr(info.value, "__notes__", [])) or fault == "interrupt"


def test_a_batched_objective_fault_keeps_the_values_before_it() -> None:
    seen: list[float] = []

    def batched(x: np.ndarray) -> np.ndarray:
        v = np.sum((x - 0.5) ** 2, axis=1)
        if len(seen) > 100:
            v[len(v) // 2] = np.nan  # the first half of this batch was answered
        seen.extend(v[: len(v) // 2] if len(seen) > 100 else v)
        return v

    oracle = zeroopt.CallableOracle(batched, (5,), batched=True, on_non_finite="raise")
    with pytest.raises(zeroopt.NonFiniteValueError) as info:
        zeroopt.minimize(oracle, np.zeros(5), budget=10_000, seed=0)
    assert info.value.partial_result.fun == min(seen)


def test_a_callback_that_raises_keeps_the_partial_result() -> None:
    def callback(record: zeroopt.IterationRecord) -> None:
        if record.iteration == 4:
            raise ValueError("callback failed")

    with pytest.raises(ValueError, match="callback failed") as info:
        zeroopt.minimize(lambda x: float(x @ x), np.ones(4), budget=5000, seed=0, callbacks=[callback])
    res = info.value.partial_result
    assert res.status is Status.ERROR and res.iterations == 5 and len(res.history) == 5
    assert res.fun == min(r.best_f for r in res.history) and res.queries == res.history[-1].queries


def test_a_fault_in_one_of_several_lockstep_runs_keeps_every_run() -> None:
    def fine(x: np.ndarray) -> float:
        return float(x @ x)

    calls = {"n": 0}

    def flaky(x: np.ndarray) -> float:
        calls["n"] += 1
        if calls["n"] == 60:
            raise RuntimeError("member 1 failed")
        return float(x @ x)

    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=3))
    group = zeroopt.IndependentGroup([zeroopt.CallableOracle(f, (3,), budget=500) for f in (fine, flaky, fine)])
    rngs = [np.random.default_rng(k) for k in range(3)]
    with pytest.raises(RuntimeError, match="member 1") as info:
        zeroopt.solve_many(solver, [np.ones(3)] * 3, group, rngs=rngs)
    partial = info.value.partial_result
    assert len(partial) == 3 and all(isinstance(r, zeroopt.OptimizeResult) for r in partial)
    assert [r.queries for r in partial] == [group.queries(k) for k in range(3)]
    # Member 0 was answered in the round of the fault: its answer reached its run.
    assert all(r.fun < 3.0 for r in partial) and partial[1].status is Status.ERROR


def test_fun_gets_a_copy_it_may_modify() -> None:
    def vandal(x: np.ndarray) -> float:
        v = float(np.sum((x - 1.2) ** 2))
        x[...] = 5.0
        return v

    res = zeroopt.minimize(vandal, np.zeros(4), budget=300, seed=0)
    assert np.isclose(float(np.sum((res.x - 1.2) ** 2)), res.fun) and res.fun < 1.0


def test_a_scalar_x0_gives_a_scalar_x() -> None:
    res = zeroopt.minimize(lambda x: float(x * x), np.float64(3.0), budget=50, seed=0)
    assert res.x.shape == () and np.isclose(float(res.x) ** 2, res.fun)


def test_nan_target_is_an_error() -> None:
    with pytest.raises(ValueError, match="target is NaN"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), budget=50, target=float("nan"))
    with pytest.raises(TypeError, match="target must be a real number"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), budget=50, target="0")  # type: ignore[arg-type]


def test_an_oracle_reused_for_a_second_run_is_refused() -> None:
    oracle = zeroopt.CallableOracle(lambda x: float(x @ x), (3,))
    first = zeroopt.minimize(oracle, np.ones(3), budget=50, seed=0)
    assert first.queries == 50
    with pytest.raises(ValueError, match="already spent 50 queries.*new oracle"):
        zeroopt.minimize(oracle, np.ones(3), budget=50, seed=0)
    oracle.ledger = zeroopt.QueryLedger()  # the documented way to reuse it
    assert zeroopt.minimize(oracle, np.ones(3), budget=50, seed=0).fun == first.fun


def test_one_callable_is_accepted_as_callbacks() -> None:
    seen: list[int] = []
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(3), budget=200, seed=0,
                           callbacks=lambda r: seen.append(r.iteration))
    assert seen == list(range(res.iterations))
    with pytest.raises(TypeError, match="every callback must be callable"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), budget=200, callbacks=[1])  # type: ignore[list-item]


def test_fun_returning_none_says_forgot_a_return() -> None:
    def forgot(x: np.ndarray) -> None:
        float(x @ x)

    with pytest.raises(TypeError, match="fun returned None — did you forget a return"):
        zeroopt.minimize(forgot, np.ones(3), budget=50)


@pytest.mark.parametrize("opts", [{"betta": 0.1}, {"q": 0}, {"patience": 0}, {"solver": "rgf-fixed"},
                                  {"solver": "nope"}, {"budget": 100.0}, {"max_iter": -1}, {"callbacks": 3}])
def test_bad_options_fail_before_the_first_query(opts: dict) -> None:
    f = Recording()
    kw = {"budget": 100, **opts}
    with pytest.raises((TypeError, ValueError)):
        zeroopt.minimize(f, np.ones(3), **kw)
    assert f.calls == 0


def test_fixed_step_runs_end_without_the_budget() -> None:
    # A budget that can never be spent: the no-progress rule ends the run (within a few thousand queries).
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(4), solver="rgf-fixed", lipschitz=2.0,
                           budget=10**18, seed=0)
    assert res.status is Status.CONVERGED and res.queries < 100_000 and res.fun < 1e-3


def test_no_progress_rule_counts_iterations_without_improvement() -> None:
    rule = zeroopt.NoProgressRule(window=3)
    solver = zeroopt.make_solver("rgf-fixed", zeroopt.SolverContext(dim=2), lipschitz=1.0)
    state = solver.init(np.zeros(2), 1.0, 0.0, np.random.default_rng(0))
    memory, outcomes, first = state.memory, [], dict(state.memory)
    for fx in (0.5, 0.5, 0.6, 0.5, 0.4, 0.4, 0.4, 0.4):
        move = zeroopt.Move(np.zeros(2), fx, 0.0, 0.0, 0.1, 0.01, memory=memory)
        moved = rule(solver, state, None, move)  # type: ignore[arg-type]
        outcomes.append(moved.converged)
        memory = moved.memory  # the memory travels in the move, as in Chain.step_generator
    assert outcomes == [False, False, False, True, False, False, False, True]
    assert dict(state.memory) == first  # the rule never mutates what it was given


def test_patience_none_keeps_the_analysed_algorithm() -> None:
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(4), solver="rgf-fixed", lipschitz=2.0, patience=None,
                           budget=10**18, seed=0, max_iter=3000)
    assert res.status is Status.MAX_ITER and res.iterations == 3000


@settings(max_examples=30, deadline=None, derandomize=True)
@given(fail_at=st.integers(1, 400), fault=st.sampled_from(["raise", "nan", "inf", "none", "interrupt"]),
       budget=st.integers(1, 400), solver=st.sampled_from(["rgf", "sign", "coordinate"]), seed=st.integers(0, 3))
def test_random_faults_in_minimize_lose_nothing(fail_at: int, fault: str, budget: int, solver: str,
                                                seed: int) -> None:
    f = Recording(fail_at=fail_at, fault=fault)
    try:
        res = zeroopt.minimize(raising(f, (5,), fault), np.zeros(5), solver=solver, budget=budget, seed=seed)
        assert f.calls < fail_at and res.success
    except (Exception, KeyboardInterrupt) as err:
        assert f.calls == fail_at
        res = err.partial_result
        assert res.status is (Status.INTERRUPTED if fault == "interrupt" else Status.ERROR)
    assert res.queries == f.calls <= budget  # every call counted, none past the budget
    assert res.fun == (min(f.values) if f.values else np.inf)  # the best value computed is the one reported
    if f.values:
        assert np.isclose(float(np.sum((res.x - 0.5) ** 2)), res.fun)
