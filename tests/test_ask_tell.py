"""zeroopt.running.ask_tell: the same runs as minimize, hard budgets, and clear errors for a wrong tell."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt

# Options a solver cannot run without on a plain objective (the theory step needs L1).
NEEDS = {"rgf-fixed": {"lipschitz": 4.0}}


def objective(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float).ravel()
    return float(np.sum((x - 0.3) ** 2) + 0.1 * np.sum(x**4))


def drive_by_hand(opt: zeroopt.AskTell, f=objective) -> list[int]:
    sizes = []
    while not opt.done:
        pts = opt.ask()
        assert pts.ndim == 2 and pts.shape[1] == opt.dim
        sizes.append(len(pts))
        opt.tell([f(p) for p in pts])
    return sizes


@pytest.mark.parametrize("solver", sorted(zeroopt.list_solvers()))
@pytest.mark.parametrize("budget", [1, 37, 600])
def test_same_run_as_minimize(solver: str, budget: int) -> None:
    x0 = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    # ask_tell drives one run: minimize's restarts (a run that stops early goes on) are off for the comparison
    ref = zeroopt.minimize(objective, x0, solver=solver, budget=budget, seed=11, restarts=False,
                           **NEEDS.get(solver, {}))
    opt = zeroopt.ask_tell(solver, x0, budget=budget, seed=11, **NEEDS.get(solver, {}))
    sizes = drive_by_hand(opt)
    res = opt.result
    assert isinstance(res, zeroopt.OptimizeResult)
    assert res.x.shape == x0.shape
    np.testing.assert_array_equal(res.x, ref.x)
    assert res.fun == ref.fun and res.queries == ref.queries == sum(sizes) == opt.queries
    assert res.status == ref.status and res.iterations == ref.iterations


def test_sign_solver_compares_by_evaluating() -> None:
    # sign asks Compare requests: ask hands out their points, and the run still matches minimize's
    opt = zeroopt.ask_tell("sign", np.ones(4), budget=300, seed=2)
    drive_by_hand(opt)
    ref = zeroopt.minimize(objective, np.ones(4), solver="sign", budget=300, seed=2)
    assert opt.result.fun == ref.fun < objective(np.ones(4))


def test_wrong_length_is_a_value_error_and_the_run_goes_on() -> None:
    opt = zeroopt.ask_tell("rgf", np.ones(3), budget=200, seed=0)
    pts = opt.ask()
    with pytest.raises(ValueError, match="one value per point"):
        opt.tell(np.zeros(len(pts) + 1))
    opt.tell([objective(p) for p in pts])  # a corrected tell is accepted
    assert opt.queries == len(pts)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_value_is_a_value_error(bad: float) -> None:
    opt = zeroopt.ask_tell("rgf", np.ones(3), budget=200, seed=0)
    pts = opt.ask()
    vals = [objective(p) for p in pts]
    vals[-1] = bad
    with pytest.raises(ValueError, match="non-finite"):
        opt.tell(vals)
    assert opt.queries == 0


def test_tell_without_ask_and_second_tell_are_runtime_errors() -> None:
    opt = zeroopt.ask_tell("rgf", np.ones(3), budget=200, seed=0)
    with pytest.raises(RuntimeError, match="call opt.ask"):
        opt.tell([1.0])
    pts = opt.ask()
    np.testing.assert_array_equal(opt.ask(), pts)  # asking again hands out the same points
    opt.tell([objective(p) for p in pts])
    with pytest.raises(RuntimeError, match="call opt.ask"):
        opt.tell([objective(p) for p in pts])


def test_result_before_done_and_ask_after_done() -> None:
    opt = zeroopt.ask_tell("rgf", np.ones(3), budget=5, seed=0)
    with pytest.raises(RuntimeError, match="not ended"):
        _ = opt.result
    drive_by_hand(opt)
    assert opt.result.status is zeroopt.Status.BUDGET and opt.result.queries == 5
    with pytest.raises(RuntimeError, match="ended"):
        opt.ask()


def test_stop_keeps_the_best_point_told() -> None:
    opt = zeroopt.ask_tell("rgf", np.ones(3), budget=10_000, seed=0)
    best = np.inf
    for _ in range(5):
        pts = opt.ask()
        vals = [objective(p) for p in pts]
        best = min(best, *vals)
        opt.tell(vals)
    res = opt.stop()
    assert opt.done and res.status is zeroopt.Status.CALLBACK and res.fun == best


def test_bad_arguments_fail_before_any_point() -> None:
    with pytest.raises(TypeError):
        zeroopt.ask_tell("rgf", np.ones(3), budget=10.0)
    with pytest.raises(ValueError):
        zeroopt.ask_tell("no-such-solver", np.ones(3), budget=10)


@settings(max_examples=40, deadline=None)
@given(solver=st.sampled_from(sorted(zeroopt.list_solvers())), budget=st.integers(1, 400),
       dim=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_queries_never_exceed_budget(solver: str, budget: int, dim: int, seed: int) -> None:
    opt = zeroopt.ask_tell(solver, np.full(dim, 2.0), budget=budget, seed=seed, **NEEDS.get(solver, {}))
    handed = 0
    while not opt.done:
        left = opt.budget_left
        pts = opt.ask()
        assert 1 <= len(pts) <= left
        handed += len(pts)
        opt.tell(np.sum(pts**2, axis=1))
    assert opt.result.queries == handed <= budget


def test_docstring_example_runs() -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module("zeroopt.running.ask_tell"))
    assert result.attempted > 0 and result.failed == 0
