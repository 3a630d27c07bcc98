"""sign-growing on a staircase: the extreme of a tree ensemble's piecewise-constant g, which jumps where a ray's
first crossing changes leaf. Its probes must reach past the iterate's own stair to see a slope."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

import zeroopt


def test_sign_growing_s_wider_probes_see_the_slope_of_a_staircase() -> None:
    """A staircase (the extreme of a tree ensemble's g, which jumps where a ray's first crossing changes
    leaf): Sign-OPT's β = 0.001 probes mostly land on the iterate's own stair, where every comparison is a
    tie; sign-growing's default β on the unit sphere crosses stairs and descends."""
    d, stair = 30, 0.002
    target = np.ones(d) / np.sqrt(d)

    def staircase(x: np.ndarray) -> float:
        return float(np.ceil(np.linalg.norm(x / np.linalg.norm(x) - target) / stair) * stair)

    sphere = zeroopt.SolverContext(dim=d, unit_sphere=True, adjustable_precision=True)
    assert zeroopt.make_solver("sign-growing", sphere).beta == 0.01 > 0.001
    assert zeroopt.make_solver("sign", sphere).beta == 0.001  # the paper's solvers keep Sign-OPT's β

    def final_value(seed: int, **options: float) -> float:
        solver = zeroopt.make_solver("sign-growing", sphere, **options)
        group = zeroopt.IndependentGroup([zeroopt.as_oracle(staircase, (d,), budget=1500)])
        x0 = np.random.default_rng(100 + seed).standard_normal(d)
        (res,) = zeroopt.drive([zeroopt.run_solver(solver, x0, rng=np.random.default_rng(seed))], group)
        return res.fun

    for seed in range(4):
        assert final_value(seed) < 0.25 * final_value(seed, beta=0.001)


def test_a_piecewise_constant_radius_gets_wider_probes_at_the_tangent_level_and_descends_its_stairs() -> None:
    """A hard-label g of a tree ensemble, in the extreme: the distance along θ to a plane, rounded up to stairs
    of 0.01 (the optimum is 1). Where the context says the radius is piecewise constant, sign-growing's probes are
    wider (0.5 rad: :func:`~zeroopt.recipes.sign_solvers.sign_growing_in`) and compared with the tangent plane's level;
    with the smooth radius's β and level they mostly meet the iterate's own stair and stall far above the optimum."""
    d, stair = 50, 0.01
    normal = np.abs(np.random.default_rng(7).standard_normal(d))
    normal /= np.linalg.norm(normal)

    def stairs(theta: np.ndarray) -> float:
        cos = float(normal @ theta) / float(np.linalg.norm(theta))
        return float(np.ceil(1 / cos / stair) * stair) if cos > 1e-9 else 1e6

    trees = zeroopt.SolverContext(dim=d, unit_sphere=True, radial=True, piecewise_constant=True,
                                  adjustable_precision=True)
    spec = zeroopt.get_solver("sign-growing")
    resolved = spec.resolve(trees)
    assert resolved["beta"] == 0.5 > 0.01
    assert resolved["probe_level"] == "tangent"
    smooth = spec.resolve(dataclasses.replace(trees, piecewise_constant=False))
    # a smooth radius starts narrower and follows its steps down to 0.01 rad (tests/test_radius_step.py)
    assert smooth["beta"] == 0.04 < 0.5
    assert "beta_per_step" not in resolved
    assert zeroopt.make_solver("sign-growing", trees, beta=0.01).beta == 0.01  # asked for, it is there

    def final_value(seed: int, **options: Any) -> float:
        solver = zeroopt.make_solver("sign-growing", trees, **options)
        group = zeroopt.IndependentGroup([zeroopt.as_oracle(stairs, (d,), budget=2000)])
        x0 = np.abs(np.random.default_rng(100 + seed).standard_normal(d))
        (res,) = zeroopt.drive([zeroopt.run_solver(solver, x0, rng=np.random.default_rng(seed))], group)
        return res.fun

    for seed in range(4):
        assert final_value(seed) < 0.85 * final_value(seed, beta=0.01, probe_level="value")
