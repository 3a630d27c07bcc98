"""The public parts on their own: schedules, samplers that read the context, restarts and subsets in the driver."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import zeroopt
from zeroopt.oracles.problems import rotated_quadratic


def test_probe_schedule_sets_q_per_iteration() -> None:
    solver = zeroopt.chain(
        zeroopt.ProbeSchedule(lambda t: 2 if t == 0 else 5), zeroopt.Sample(zeroopt.GaussianDirections()),
        zeroopt.Estimate(zeroopt.forward_difference), zeroopt.Step(zeroopt.fixed_step), name="sched", beta=1e-3,
        step=0.1,
    )
    prob = rotated_quadratic(6, seed=0)
    run = zeroopt.run_solver(solver, prob.x0, rng=np.random.default_rng(0), max_iter=3)
    (res,) = zeroopt.drive([run], zeroopt.IndependentGroup([prob.make_oracle(budget=1000)]))
    # 1 query at the start, then q probes + 1 step evaluation per iteration.
    assert [r.queries for r in res.history] == [1 + 3, 1 + 3 + 6, 1 + 3 + 12]


@dataclass(frozen=True)
class RowDirections:
    """Probes along one row of the input's 2-D shape: needs the shape, which it reads from the context."""

    shape: tuple[int, ...]

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> np.ndarray:
        u = np.zeros((q, *self.shape))
        rows = rng.integers(self.shape[0], size=q)
        u[np.arange(q), rows] = rng.standard_normal((q, self.shape[1]))
        return u.reshape(q, d)

    def scale(self, d: int) -> float:
        return float(self.shape[0])


def test_a_registered_sampler_gets_the_problem_shape() -> None:
    seen = []

    def factory(context):  # type: ignore[no-untyped-def]
        seen.append(None if context is None else context.shape)
        return RowDirections(context.shape)

    zeroopt.register_sampler("test-rows", factory)
    res = zeroopt.minimize(lambda x: float((x**2).sum()), np.ones((3, 4)), solver="rgf", directions="test-rows",
                           budget=2000, seed=0)
    assert seen == [(3, 4)] and res.fun < 0.1 * 12 and res.x.shape == (3, 4)


def test_solve_many_restarts_converged_runs_and_maps_members() -> None:
    probs = [rotated_quadratic(6, seed=s) for s in (1, 2)]
    # A high β floor makes the stall rule end runs early, with most of the budget left.
    solver = zeroopt.make_solver("rgf", zeroopt.SolverContext(dim=6), beta_min=1e-3)

    def solve(restarts: int) -> tuple[list[zeroopt.OptimizeResult], list[int]]:
        oracles = [p.make_oracle(budget=b) for p, b in zip(probs, (3000, 2000), strict=True)]
        rngs = [np.random.default_rng(7), np.random.default_rng(8)]
        group = zeroopt.IndependentGroup(oracles)
        # Run k works on member (1 - k): its start is that problem's, its queries that oracle's.
        res = zeroopt.solve_many(solver, [probs[1].x0, probs[0].x0], group, rngs=rngs, members=[1, 0],
                                 restarts=restarts)
        return res, [o.queries for o in oracles]

    once, spent_once = solve(0)
    again, spent_again = solve(5)
    assert all(r.status is zeroopt.Status.CONVERGED for r in once)
    assert [r.queries for r in once] == spent_once[::-1]
    for a, b, spent in zip(once, again, spent_again[::-1], strict=True):
        assert b.fun <= a.fun and b.queries == spent > a.queries
