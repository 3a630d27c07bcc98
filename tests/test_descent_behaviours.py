"""A behaviour of your own goes into a built-in recipe's chain by ``with_added``, in a stated place."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

import zeroopt


def test_own_behaviours_run_after_the_step_rule_and_before_the_stall_rule() -> None:
    seen: list[float] = []

    def tiny_steps(solver, before, estimate, move):  # type: ignore[no-untyped-def]
        seen.append(move.next_step)
        return replace(move, next_step=1e-9)  # below the stall rule's floor: the stall rule must reset it

    context = zeroopt.SolverContext(dim=6)
    solver = zeroopt.rgf(context, q=4, step_min=1e-4, step_reset=0.5).with_added(zeroopt.Amend(tiny_steps))
    names = [type(b).__name__ for b in solver.parts if b.stage in ("amend", "stop")]
    assert names == ["BestProbe", "RadiusOffNonFinite", "Amend", "StallRule", "RadiusAboveNoise"]
    res = zeroopt.run_solver(solver, np.ones(6), rng=np.random.default_rng(0), max_iter=3)
    group = zeroopt.IndependentGroup([zeroopt.as_oracle(lambda x: float(x @ x), (6,), budget=500)])
    (out,) = zeroopt.drive([res], group)
    assert len(seen) == 3 and out.state.step == 0.5  # the stall rule saw 1e-9 and reset the step


def test_without_own_behaviours_the_chain_is_the_recipes() -> None:
    plain = zeroopt.rgf(zeroopt.SolverContext(dim=6), q=4, use_best_probe=False)
    assert [type(b).__name__ for b in plain.parts if b.stage in ("amend", "stop")] == [
        "RadiusOffNonFinite", "StallRule", "RadiusAboveNoise"]  # (β narrowed at +inf, widened over an estimated noise)
