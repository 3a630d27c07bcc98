"""Going on from a run's state: ``run_solver(state=)``, ``solve_many(states=)`` and the race's winner."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from applications.hardlabel import Race, Runs, attack
from zeroopt import IndependentGroup, SolverContext, as_oracle, drive, make_solver, run_solver, solve_many

DIM = 12


def _quadratic(x: np.ndarray) -> float:
    return float(np.sum((x - 1.0) ** 2 * np.arange(1, DIM + 1)))


def _split_and_whole(solver_name: str, first: int, then: int) -> tuple[zeroopt.OptimizeResult, ...]:
    """A run of ``first`` iterations continued for ``then`` more from its state, and one run of both at once,
    each on its own oracle and with the same seed."""
    solver = make_solver(solver_name, SolverContext(dim=DIM))
    x0 = np.zeros(DIM)
    rng = np.random.default_rng(3)
    group = IndependentGroup([as_oracle(_quadratic, (DIM,), budget=10**6)])
    (head,) = drive([run_solver(solver, x0, rng=rng, max_iter=first)], group)
    # The same generator goes on, as it would inside one run; the state's own is replaced by it.
    (tail,) = drive([run_solver(solver, np.full(DIM, 9.0), rng=rng, max_iter=then, state=head.state)], group)
    whole_group = IndependentGroup([as_oracle(_quadratic, (DIM,), budget=10**6)])
    (whole,) = drive([run_solver(solver, x0, rng=np.random.default_rng(3), max_iter=first + then)], whole_group)
    return head, tail, whole


@pytest.mark.parametrize("solver_name", ["sign-growing", "rgf"])
def test_a_run_continued_from_its_state_is_the_run_that_never_stopped(solver_name: str) -> None:
    """Same iterates, same queries: the state carries everything the run needs (step size, smoothing radius,
    iteration count — sign-growing's probe count grows with it — and the behaviours' memory)."""
    head, tail, whole = _split_and_whole(solver_name, first=7, then=9)
    assert head.state is not None and head.state.iteration == 7
    assert tail.iterations == whole.iterations == 16  # the count goes on; max_iter counted the tail's 9
    assert [r.iteration for r in tail.history] == list(range(7, 16))
    np.testing.assert_array_equal(tail.x, whole.x)
    assert tail.fun == whole.fun
    assert tail.queries == whole.queries  # the oracle's count: the head's queries plus the tail's
    # A fresh start from the head's point does not reproduce it: the state is what made the difference.
    fresh_group = IndependentGroup([as_oracle(_quadratic, (DIM,), budget=10**6)])
    (fresh,) = drive([run_solver(make_solver(solver_name, SolverContext(dim=DIM)), head.state.x,
                                 rng=np.random.default_rng(3), max_iter=9)], fresh_group)
    assert not np.array_equal(fresh.x, whole.x)


def test_solve_many_goes_on_from_the_states_it_is_given() -> None:
    solver = make_solver("sign-growing", SolverContext(dim=DIM))
    head, _, whole = _split_and_whole("sign-growing", first=5, then=6)
    group = IndependentGroup([as_oracle(_quadratic, (DIM,), budget=10**6) for _ in range(2)])
    rng = np.random.default_rng(3)
    (first,) = drive([run_solver(solver, np.zeros(DIM), rng=rng, max_iter=5)], group, members=[0])
    runs = solve_many(solver, [np.zeros(DIM), np.zeros(DIM)], group, rngs=[rng, np.random.default_rng(8)],
                      max_iter=6, states=[first.state, None])
    np.testing.assert_array_equal(runs[0].x, whole.x)
    assert runs[0].iterations == 11 and runs[1].iterations == 6  # the second run started afresh
    with pytest.raises(ValueError, match="one entry per run"):
        solve_many(solver, [np.zeros(DIM)], group, rngs=[rng], states=[None, None])


def _two_class_attack(keep: bool) -> tuple[np.ndarray, list[int]]:
    rng = np.random.default_rng(1)
    d = 48
    w = rng.standard_normal((3, d))
    x = rng.uniform(0.3, 0.7, (2, d))

    def model(z: np.ndarray) -> np.ndarray:
        return np.argmax(z.reshape(len(z), -1) @ w.T, axis=1)

    # race_starts=2 with a small budget: two searches race for 30% of it, then the winner goes on.
    res = attack(model, x, model(x), budget=3000, seed=0, n_classes=3, runs=Runs(restarts=0),
                 race=Race(race_starts=2, race_fraction=0.3, race_keeps_state=keep))
    assert res.success.all() and np.all(res.queries <= 3000)
    return res.distortion, [r.history[0].iteration for r in res.solver_results]


def test_the_attack_s_race_winner_goes_on_with_its_run_s_state_unless_asked_not_to() -> None:
    _, first_kept = _two_class_attack(keep=True)
    _, first_fresh = _two_class_attack(keep=False)
    assert all(i > 0 for i in first_kept)  # the descent's first iteration is numbered after the race's
    assert first_fresh == [0, 0]
    with pytest.raises(ValueError, match="Race: race_keeps_state"):
        attack(lambda z: np.zeros(len(z), dtype=int), np.zeros((1, 4)), np.array([0]), budget=100,
               n_classes=2, race=Race(race_keeps_state="yes"))


def test_after_a_fault_the_partial_result_s_state_lets_the_run_go_on() -> None:
    """Nothing lost on failure, the run's progress included: the partial result carries the state of the last
    finished iteration, and a new run goes on from there on a healthy oracle (its iteration count and step)."""
    calls = {"n": 0}

    def flaky(x: np.ndarray) -> float:
        calls["n"] += 1
        if calls["n"] == 300:
            raise RuntimeError("the objective's server went away")
        return _quadratic(x)

    solver = make_solver("sign-growing", SolverContext(dim=DIM))
    with pytest.raises(RuntimeError) as info:
        drive([run_solver(solver, np.zeros(DIM), rng=np.random.default_rng(0))],
              IndependentGroup([as_oracle(flaky, (DIM,), budget=5000)]))
    (partial,) = zeroopt.partial_result(info.value)
    assert partial.status is zeroopt.Status.ERROR and partial.state is not None and partial.state.iteration > 0
    (resumed,) = drive([run_solver(solver, np.zeros(DIM), rng=np.random.default_rng(1), state=partial.state,
                                   max_iter=20)], IndependentGroup([as_oracle(_quadratic, (DIM,), budget=5000)]))
    assert resumed.history[0].iteration == partial.state.iteration  # the count goes on from where it stopped
    assert resumed.fun < partial.state.fx
