"""Start parts: directions toward uniform points of a box, and a race between candidate starts."""

from __future__ import annotations

import numpy as np
import pytest

from applications.hardlabel import attack
from zeroopt import BoxDirections, IndependentGroup, SolverContext, as_oracle, make_solver, race


def test_box_directions_point_to_points_of_the_box_and_lean_to_its_centre() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 1.0, 50)
    box = BoxDirections(0.0 - x, 1.0 - x)
    z = box.offsets(rng, 400, x.size)
    assert np.all(x + z >= 0.0) and np.all(x + z <= 1.0)  # every offset lands inside the box
    u = box.sample(rng, 400, x.size, 0)
    assert np.allclose(np.linalg.norm(u, axis=1), 1.0)
    # On average toward the centre: positive where x is below 0.5, negative above.
    assert np.all(np.sign(z.mean(axis=0)) == np.sign(0.5 - x))
    assert box.scale(x.size) == x.size


@pytest.mark.parametrize(("lower", "upper", "match"), [
    (0.1, 1.0, "inside the box"), (-1.0, -0.1, "inside the box"), (0.0, 0.0, "single point"),
    (-np.inf, 1.0, "finite"),
])
def test_box_directions_reject_a_box_that_does_not_hold_the_point(lower: float, upper: float, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        BoxDirections(lower, upper)


def _plateau_and_slope(x: np.ndarray) -> float:
    """1 on the half-plane x0 < 0 (flat: no descent leaves it); a bowl with minimum 0 at (3, 0) elsewhere."""
    return 1.0 if x[0] < 0 else float((x[0] - 3.0) ** 2 / 4 + x[1] ** 2)


def test_race_keeps_the_start_that_got_lowest_not_the_lowest_start() -> None:
    low_but_flat = (np.array([-1.0, 0.0]), 1.0, 0.0)
    high_on_a_slope = (np.array([0.5, 0.0]), _plateau_and_slope(np.array([0.5, 0.0])), 0.0)
    assert high_on_a_slope[1] > low_but_flat[1]
    group = IndependentGroup([as_oracle(_plateau_and_slope, (2,), budget=2000)])
    solver = make_solver("rgf", SolverContext(dim=2))
    (x, fx, _), = race(solver, [[low_but_flat, high_on_a_slope]], group, rngs=[np.random.default_rng(0)])
    assert fx < low_but_flat[1] and x[0] > 0
    assert fx == pytest.approx(_plateau_and_slope(x))
    assert 0 < group.queries(0) <= 2000


def test_race_spends_nothing_on_a_single_candidate_and_checks_its_arguments() -> None:
    group = IndependentGroup([as_oracle(_plateau_and_slope, (2,), budget=100) for _ in range(2)])
    solver = make_solver("rgf", SolverContext(dim=2))
    only = (np.array([0.5, 0.0]), 1.5625, 0.0)
    out = race(solver, [[only], []], group, rngs=[np.random.default_rng(s) for s in (0, 1)])
    assert out[0] is only and out[1] is None
    assert group.queries(0) == group.queries(1) == 0
    with pytest.raises(ValueError, match="iterations"):
        race(solver, [[only]], group, rngs=[np.random.default_rng(0)], iterations=0)
    with pytest.raises(ValueError, match="one entry per member"):
        race(solver, [[only]], group, rngs=[])


@pytest.mark.parametrize("race_iterations", [0, 2])
def test_attack_with_uniform_candidates_and_a_race_stays_in_budget(race_iterations: int) -> None:
    rng = np.random.default_rng(5)
    d = 64
    w = rng.standard_normal(d)
    x = np.clip(0.5 + 0.05 * rng.standard_normal((2, d)), 0, 1)
    b = float(-(x[0] @ w) + 0.5 * np.linalg.norm(w))  # input 0 lies 0.5 from the boundary, on the class-1 side
    model = lambda z: (z.reshape(len(z), -1) @ w + b > 0).astype(np.int64)  # noqa: E731
    y = model(x)
    res = attack(model, x, y, budget=1500, solver="sign-growing", seed=0, n_classes=2, n_uniform=5,
                 race_iterations=race_iterations)
    assert res.success.all() and np.all(res.queries <= 1500)
    assert res.distortion[0] < 0.5 * 1.1


def test_uniform_candidates_are_probed_inside_the_input_domain() -> None:
    """HopSkipJump's start: each uniform candidate's first query is a uniform point of the domain itself."""
    seen: list[np.ndarray] = []

    def model(z: np.ndarray) -> np.ndarray:
        seen.append(z.reshape(len(z), -1).copy())
        return np.zeros(len(z), dtype=np.int64)  # nothing is ever adversarial: only the probes are sent

    x = np.full((1, 16), 0.2)
    attack(model, x, np.array([0]), budget=200, seed=0, n_classes=2, n_initial=1, n_uniform=7, verify=0)
    first = np.concatenate(seen)[1:9]  # after the one query that labels x0: 1 sampler + 7 uniform candidates
    uniform = first[1:]
    assert np.all((uniform >= 0) & (uniform <= 1))
    assert uniform.std() > 0.2  # spread over [0, 1], not around x0


@pytest.mark.parametrize(("n_uniform", "race_iterations"), [(0, 0), (3, 2)])
def test_inputs_no_random_direction_serves_start_toward_the_other_inputs(n_uniform: int, race_iterations: int) -> None:
    """Class 1 is a small ball around the second input: from the first, no random or uniform candidate reaches
    it, so the start falls back to the direction toward the other input, and ends at the ball's surface."""
    d, radius = 16, 0.5
    x = np.stack([np.full(d, 0.2), np.full(d, 0.8)])

    def model(z: np.ndarray) -> np.ndarray:
        return (np.linalg.norm(z.reshape(len(z), -1) - x[1], axis=1) < radius).astype(np.int64)

    y = model(x)
    assert y.tolist() == [0, 1]
    res = attack(model, x, y, budget=1000, seed=0, n_classes=2, n_uniform=n_uniform, race_iterations=race_iterations)
    assert res.success.all() and np.all(res.queries <= 1000)
    gap = float(np.linalg.norm(x[1] - x[0])) - radius  # the ball's surface along the segment between the inputs
    assert gap <= res.distortion[0] <= gap * 1.01
