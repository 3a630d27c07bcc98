"""Runs advanced in lockstep give exactly the results of runs advanced alone."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from zeroopt.core.base import SolverContext
from zeroopt.oracles.problems import log_norm, rotated_quadratic


class CountingGroup(zeroopt.IndependentGroup):
    rounds = 0

    def answer(self, requests):  # type: ignore[no-untyped-def]
        self.rounds += 1
        return super().answer(requests)


@pytest.mark.parametrize("solver", ["rgf", "sign", "coordinate"])
def test_lockstep_equals_alone(solver: str) -> None:
    problems = [rotated_quadratic(8, seed=1), log_norm(8, seed=2), rotated_quadratic(8, seed=3)]
    budgets = [300, 450, 600]

    def runs():  # type: ignore[no-untyped-def]
        return [
            zeroopt.run_solver(zeroopt.make_solver(solver, SolverContext(dim=8)), p.x0, rng=np.random.default_rng(5))
            for p in problems
        ]

    group = CountingGroup([p.make_oracle(budget=b) for p, b in zip(problems, budgets, strict=True)])
    together = zeroopt.drive(runs(), group)
    single_groups = [CountingGroup([p.make_oracle(budget=b)]) for p, b in zip(problems, budgets, strict=True)]
    alone = [zeroopt.drive([r], g)[0] for r, g in zip(runs(), single_groups, strict=True)]
    for t, a, b in zip(together, alone, budgets, strict=True):
        assert t.fun == a.fun and t.queries == a.queries <= b
        np.testing.assert_array_equal(t.x, a.x)
    # One round answers every live run at once: no more rounds than the longest run alone needs.
    assert group.rounds == max(g.rounds for g in single_groups) < sum(g.rounds for g in single_groups)
