"""Probes kept off the coordinates the objective does not depend on (``skip_flat``, ``FlatCoordinates``)."""

from __future__ import annotations

import numpy as np
import pytest

import zeroopt
from applications.hardlabel import attack
from applications.hardlabel.flat import flat_pixels
from zeroopt import FlatCoordinates, IndependentGroup, SolverContext, drive, make_solver, run_solver

D, LIVE = 10, 4  # the objective reads the first LIVE coordinates only


class ReadsFew(zeroopt.Oracle):
    """A quadratic of the first LIVE coordinates that says so, and records every point it is asked about."""

    def __init__(self, budget: int, knows: bool = True) -> None:
        super().__init__(budget=budget)
        self.knows, self.points = knows, []

    def _values(self, points, eps):  # type: ignore[no-untyped-def]
        self.points.append(points.copy())
        return np.sum((points[:, :LIVE] - 1.0) ** 2, axis=1), np.zeros(len(points))

    def flat_coordinates(self, request: FlatCoordinates) -> zeroopt.FlatMask:
        if not self.knows:
            return super().flat_coordinates(request)
        return zeroopt.FlatMask(flat=np.arange(D) >= LIVE, queries=self.queries)


def _run(skip_flat: bool, knows: bool = True) -> tuple[zeroopt.OptimizeResult, ReadsFew]:
    oracle = ReadsFew(budget=3000, knows=knows)
    solver = make_solver("sign-growing", SolverContext(dim=D), skip_flat=skip_flat)
    (res,) = drive([run_solver(solver, np.zeros(D), rng=np.random.default_rng(0))], IndependentGroup([oracle]))
    return res, oracle


def test_probes_stay_off_the_coordinates_the_oracle_calls_flat_and_the_run_still_converges() -> None:
    res, oracle = _run(skip_flat=True)
    asked = np.concatenate(oracle.points)
    assert np.all(asked[:, LIVE:] == 0.0)  # no probe, no step ever moved a flat coordinate away from the start
    assert res.fun < 1e-3 and res.queries <= 3000
    plain, plain_oracle = _run(skip_flat=False)
    assert np.abs(np.concatenate(plain_oracle.points)[:, LIVE:]).max() > 0  # without it they are probed


def test_an_oracle_that_knows_nothing_leaves_the_run_as_it_was() -> None:
    res, _ = _run(skip_flat=True, knows=False)
    plain, _ = _run(skip_flat=False, knows=False)
    np.testing.assert_array_equal(res.x, plain.x)
    assert res.queries == plain.queries
    answer = zeroopt.as_oracle(lambda x: float(x @ x), (3,)).answer(FlatCoordinates(np.ones(3), 3.0, 0.1))
    assert answer.flat is None and answer.point is None and answer.queries == 0


def test_flat_pixels_are_those_past_a_bound_and_pulling_them_back_keeps_the_point_the_model_sees() -> None:
    rng = np.random.default_rng(2)
    x0 = np.where(rng.random(64) < 0.6, 0.0, rng.random(64))  # most pixels at the lower bound, like MNIST
    theta = rng.standard_normal(64)
    theta /= np.linalg.norm(theta)
    value = 1.5
    mask = flat_pixels(x0, theta, value, 0.01, 0.0, 1.0, queries=3)
    point = x0 + value * theta
    assert mask.flat is not None and mask.flat.any()
    assert np.all(((point < 0) | (point > 1))[mask.flat])
    assert mask.value < value and mask.point is not None
    moved = mask.point / np.linalg.norm(mask.point)
    np.testing.assert_allclose(np.clip(x0 + mask.value * moved, 0, 1), np.clip(point, 0, 1), atol=1e-12)
    inside = flat_pixels(np.full(64, 0.5), theta, 0.1, 0.01, 0.0, 1.0, queries=3)
    assert not inside.flat.any() and inside.point is None  # nothing clipped: nothing flat, nowhere to move


def _interior_or_saturated(saturated: bool, skip_flat: bool) -> np.ndarray:
    rng = np.random.default_rng(4)
    d = 64
    w = rng.standard_normal(d)
    x = np.where(rng.random((2, d)) < 0.7, 0.0, 0.5) if saturated else rng.uniform(0.4, 0.6, (2, d))
    b = float(-(x[0] @ w) + 0.3 * np.linalg.norm(w))

    def model(z: np.ndarray) -> np.ndarray:
        return (z.reshape(len(z), -1) @ w + b > 0).astype(np.int64)

    res = attack(model, x, model(x), budget=1500, seed=0, n_classes=2, solver_options={"skip_flat": skip_flat})
    assert res.success.all() and np.all(res.queries <= 1500)
    return res.distortion


def test_the_attack_takes_skip_flat_and_changes_nothing_where_no_pixel_is_at_a_bound() -> None:
    np.testing.assert_array_equal(_interior_or_saturated(False, True), _interior_or_saturated(False, False))
    _interior_or_saturated(True, True)  # saturated inputs: succeeds within budget
    with pytest.raises(TypeError, match="skip_flat"):
        make_solver("sign-growing", SolverContext(dim=4), skip_flat="yes")


def test_a_sampler_tied_to_a_shape_is_masked_instead_of_drawn_within() -> None:
    """A sampler without ``shape_free`` draws in the full space; the flat coordinates are cut out and each probe
    keeps its length, so the probes still stay off them."""

    class ShapeBound:
        def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> np.ndarray:
            assert d == D  # always asked for the full space
            u = rng.standard_normal((q, d))
            return u / np.linalg.norm(u, axis=1, keepdims=True)

        def scale(self, d: int) -> float:
            return float(d)

    base = make_solver("sign-growing", SolverContext(dim=D), skip_flat=True)
    solver = base.with_part(zeroopt.Sample(ShapeBound()))
    oracle = ReadsFew(budget=3000)
    (res,) = drive([run_solver(solver, np.zeros(D), rng=np.random.default_rng(0))], IndependentGroup([oracle]))
    asked = np.concatenate(oracle.points)
    assert np.all(asked[:, LIVE:] == 0.0)
    assert res.fun < 1e-3
