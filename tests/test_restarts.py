"""Restarts that leave a spent basin (``solve_many(fresh_start=...)``) and the diminishing-returns rule."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt import Move

# Two basins in 4-d: a shallow one at +2 (floor 1.0) and a deep one at -2 (floor 0.0).
DIM = 4
SHALLOW, DEEP = np.full(DIM, 2.0), np.full(DIM, -2.0)


def two_basins(x: np.ndarray) -> float:
    return float(min(np.sum((x - SHALLOW) ** 2) + 1.0, np.sum((x - DEEP) ** 2)))


def _solve(fresh: bool, budget: int = 4000) -> tuple[zeroopt.OptimizeResult, list[list[int]], int]:
    # A high β floor makes the stall rule end each run early: the budget is left for restarts.
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=DIM), beta_min=1e-3)
    oracle = zeroopt.as_oracle(two_basins, (DIM,), budget=budget)
    group = zeroopt.IndependentGroup([oracle])
    asked: list[list[int]] = []

    def fresh_start(runs: list[int]) -> list[tuple[np.ndarray, float, float] | None]:
        asked.append(list(runs))
        x = DEEP + 0.5  # a start in the other basin, evaluated through the group so that it is charged
        (value,) = group.answer([(0, zeroopt.Evaluate(points=x[None, :]))])[0].values
        return [(x, float(value), 0.0) for _ in runs]

    res = zeroopt.solve_many(solver, [SHALLOW + 0.5], group, rngs=[np.random.default_rng(0)], restarts=6,
                             fresh_start=fresh_start if fresh else None)
    return res[0], asked, oracle.queries


def test_a_spent_basin_is_left_for_a_fresh_start_and_the_best_run_is_returned() -> None:
    stay, asked_stay, spent_stay = _solve(fresh=False)
    leave, asked, spent = _solve(fresh=True)
    assert asked_stay == [] and stay.fun > 0.99  # restarts from the best point never leave the shallow basin
    assert asked and asked[0] == [0]  # the run in the shallow basin was spent: a fresh start was asked for
    assert leave.fun < 0.05 and np.allclose(leave.x, DEEP, atol=0.2)
    assert spent <= 4000 and leave.queries <= spent  # the fresh start's query counts on the run's budget


def test_the_best_of_all_runs_is_returned_when_fresh_starts_are_worse() -> None:
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=DIM), beta_min=1e-3)
    oracle = zeroopt.as_oracle(two_basins, (DIM,), budget=3000)
    group = zeroopt.IndependentGroup([oracle])
    far = SHALLOW + 3.0
    res = zeroopt.solve_many(solver, [DEEP + 0.5], group, rngs=[np.random.default_rng(1)], restarts=4,
                             fresh_start=lambda runs: [(far, two_basins(far), 0.0) for _ in runs])
    assert res[0].fun < 0.05  # the deep basin's result, not the last (shallow) restart's


def test_no_fresh_start_found_falls_back_to_the_best_point() -> None:
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=DIM), beta_min=1e-3)
    oracle = zeroopt.as_oracle(two_basins, (DIM,), budget=2000)
    res = zeroopt.solve_many(solver, [SHALLOW + 0.5], zeroopt.IndependentGroup([oracle]),
                             rngs=[np.random.default_rng(2)], restarts=3, fresh_start=lambda runs: [None] * len(runs))
    assert 1.0 <= res[0].fun < 1.01 and oracle.queries > 0


def _rule_moves(values: list[float], rule: zeroopt.DiminishingReturnsRule) -> list[bool]:
    """Feed the rule a run whose iterate values are ``values`` (values[0]: the start); its verdicts."""
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=2))
    state = solver.init(np.zeros(2), values[0], 0.0, np.random.default_rng(0))
    verdicts, memory = [], {}
    for t, v in enumerate(values[1:]):
        before = zeroopt.SolverState(**{**state.__dict__, "fx": values[t], "iteration": t, "memory": memory})
        move = Move(x=np.zeros(2), fx=v, fx_eps=0.0, step_taken=1.0, next_step=1.0, beta=0.1, memory=memory)
        out = rule(solver, before, None, move)  # type: ignore[arg-type]
        verdicts.append(out.converged)
        memory = out.memory
    return verdicts


def test_diminishing_returns_rule_compares_the_second_half_of_the_run() -> None:
    rule = zeroopt.DiminishingReturnsRule(min_gain=0.01, first_check=4)
    geometric = [0.9**t for t in range(30)]  # gains 10% an iteration: never converges
    assert not any(_rule_moves(geometric, rule))
    crawl = [1.0, 0.5, 0.4, 0.35, 0.3] + [0.3 - 1e-4 * t for t in range(1, 20)]
    # Iteration t compares its value with iteration (t + 1) // 2's: from t = 7 (0.3 → 0.2997) the gain is 0.1%.
    assert _rule_moves(crawl, rule).index(True) + 1 == 7
    late = zeroopt.DiminishingReturnsRule(min_gain=0.01, first_check=10)
    assert _rule_moves(crawl, late).index(True) + 1 == 10  # never before first_check
    with pytest.raises(ValueError, match="min_progress"):
        zeroopt.minimize(lambda x: float(x @ x), np.ones(3), solver="rgf", budget=100, min_progress=-1.0)


def test_diminishing_returns_log_is_not_shared_between_two_moves_from_one_state() -> None:
    rule = zeroopt.DiminishingReturnsRule(min_gain=0.01, first_check=1)
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=2))
    start = solver.init(np.zeros(2), 1.0, 0.0, np.random.default_rng(0))

    def move(fx: float, memory: dict) -> Move:  # type: ignore[type-arg]
        return Move(x=np.zeros(2), fx=fx, fx_eps=0.0, step_taken=1.0, next_step=1.0, beta=0.1, memory=memory)

    first = rule(solver, start, None, move(0.5, {}))  # type: ignore[arg-type]
    after = zeroopt.SolverState(**{**start.__dict__, "fx": 0.5, "iteration": 1, "memory": first.memory})
    crawl = rule(solver, after, None, move(0.499, first.memory))  # type: ignore[arg-type]
    # A second move from the same state: it must compare with its own history, not the first move's.
    leap = rule(solver, after, None, move(0.2, first.memory))  # type: ignore[arg-type]
    assert crawl.converged and not leap.converged
    assert list(leap.memory[rule.key][0]) == [1.0, 0.5, 0.2]
    assert list(crawl.memory[rule.key][0])[:3] == [1.0, 0.5, 0.499]


def test_min_progress_ends_a_crawling_run_early() -> None:
    f = lambda x: float(np.sum(np.abs(x)) ** 0.5)  # noqa: E731  (a cusp: progress slows to a crawl)
    # One run each: minimize's restarts (zeroopt.running.whole_budget) would go on from where the rule ends a run.
    # Without the step bound: with it, sign-growing reaches 0.002 here instead of crawling at 0.6, and its stall
    # rule ends the run before any crawl (zeroopt.direction.step_bound).
    full = zeroopt.minimize(f, np.ones(8), solver="sign-growing", budget=20_000, seed=0, min_progress=None,
                            restarts=False, step_bound=None)
    early = zeroopt.minimize(f, np.ones(8), solver="sign-growing", budget=20_000, seed=0, min_progress=0.05,
                             restarts=False, step_bound=None)
    assert early.status is zeroopt.Status.CONVERGED and early.queries < full.queries


def test_the_attack_can_restart_from_fresh_initial_searches() -> None:
    from applications.hardlabel import Runs, attack

    rng = np.random.default_rng(3)
    w = rng.standard_normal((4, 16))
    model = lambda x: x.reshape(len(x), -1) @ w.T  # noqa: E731  (a 4-class linear model: one basin per class)
    x = rng.uniform(0.3, 0.7, (3, 16))
    y = model(x).argmax(1)
    # A step floor above every step makes runs converge within a few iterations: the budget goes to restarts.
    kw = {"budget": 3000, "seed": 0, "n_classes": 4, "solver_options": {"step_min": 10.0, "beta_min": 1e-3}}
    same = attack(model, x, y, runs=Runs(fresh_restarts=False), **kw)
    fresh = attack(model, x, y, runs=Runs(fresh_restarts=True), **kw)
    again = attack(model, x, y, runs=Runs(fresh_restarts=True), **kw)
    assert fresh.success.all() and np.all(fresh.queries <= 3000)
    np.testing.assert_array_equal(fresh.distortion, again.distortion)  # one seed, one answer
    assert not np.array_equal(fresh.queries, same.queries) or not np.array_equal(fresh.distortion, same.distortion)
    with pytest.raises(ValueError, match="Runs: fresh_restarts"):
        attack(model, x, y, runs=Runs(fresh_restarts="yes"), **kw)


def test_a_failing_fresh_start_keeps_every_runs_best() -> None:
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=DIM), beta_min=1e-3)
    oracle = zeroopt.as_oracle(two_basins, (DIM,), budget=3000)

    def broken(runs: list[int]) -> list[None]:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as info:
        zeroopt.solve_many(solver, [SHALLOW + 0.5], zeroopt.IndependentGroup([oracle]),
                           rngs=[np.random.default_rng(4)], restarts=3, fresh_start=broken)
    (best,) = zeroopt.partial_result(info.value)
    assert 1.0 <= best.fun < 1.01 and best.queries > 0
