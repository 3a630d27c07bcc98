"""Per-feature boxes: ``bounds`` as arrays in the attack and its boundary oracle."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from applications.hardlabel import attack
from applications.hardlabel.boundary import Ray
from applications.hardlabel.bounds import check_inside, flat_bounds


def test_scalars_and_arrays_normalise_to_flat_arrays() -> None:
    lo, hi = flat_bounds((0, 1), (2, 3))
    assert lo.shape == hi.shape == (6,) and np.all(lo == 0) and np.all(hi == 1)
    lo, hi = flat_bounds((np.array([[-1.0], [0.0]]), 5.0), (2, 3))  # per row, broadcast over columns
    assert lo.tolist() == [-1, -1, -1, 0, 0, 0] and np.all(hi == 5)


@pytest.mark.parametrize(
    ("bounds", "match"),
    [((1.0, 1.0), "lower < upper"), ((np.array([0.0, 2.0]), 1.0), "flat feature 1"),
     ((np.zeros(3), 1.0), "does not broadcast"), ((0.0,), "pair"), ((np.nan, 1.0), "NaN")],
)
def test_bad_bounds_say_what_is_wrong(bounds: tuple, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        flat_bounds(bounds, (2,))


def test_inputs_outside_a_per_feature_box_are_named() -> None:
    lo, hi = flat_bounds(([0.0, 0.0], [1.0, 0.5]), (2,))
    check_inside(np.array([[0.2, 0.5]]), lo, hi)
    with pytest.raises(ValueError, match="input 1, flat feature 1"):
        check_inside(np.array([[0.2, 0.5], [0.2, 0.7]]), lo, hi)


def test_attack_stays_inside_a_per_feature_box() -> None:
    # A linear 2-class model on 3 features whose boxes differ by orders of magnitude: every query and the
    # returned point must stay in the box, and the attack still finds the boundary.
    w = np.array([1.0, 1.0, 1.0])
    lo, hi = np.array([-1.0, -0.01, -100.0]), np.array([1.0, 0.01, 100.0])
    seen: list[np.ndarray] = []

    def model(x: np.ndarray) -> np.ndarray:
        seen.append(x.reshape(len(x), -1).copy())
        return (x.reshape(len(x), -1) @ w > 0.5).astype(np.int64)

    x0 = np.array([[0.0, 0.0, 0.0]])
    res = attack(model, x0, np.array([0]), budget=600, seed=0, bounds=(lo, hi), n_classes=2)
    queried = np.concatenate(seen)
    assert np.all(queried >= lo.astype(np.float32)) and np.all(queried <= hi.astype(np.float32))
    assert res.success[0] and abs(res.x_adv[0].sum() - 0.5) < 0.05
    assert np.all(res.x_adv[0] >= lo) and np.all(res.x_adv[0] <= hi)
    with pytest.raises(ValueError, match="outside the bounds"):
        attack(model, np.array([[0.0, 0.5, 0.0]]), np.array([0]), budget=100, bounds=(lo, hi), n_classes=2)


@settings(max_examples=50, deadline=None)
@given(d=st.integers(1, 12), seed=st.integers(0, 2**32 - 1), lam=st.floats(0.0, 5.0))
def test_a_comparisons_ray_without_its_reach_asks_the_same_point(d: int, seed: int, lam: float) -> None:
    # Comparisons (the probes' one query each) build their rays without lam_max: the point they ask must be the one a
    # full ray gives, clipped to the box the same way, whatever λ (inside the box or far beyond its edge).
    rng = np.random.default_rng(seed)
    lo, hi = -rng.random(d), rng.random(d)
    x0, theta = rng.uniform(lo, hi), rng.standard_normal(d)
    full, cheap = Ray.make(x0, theta, lo, hi), Ray.make(x0, theta, lo, hi, reach=False)
    assert full is not None and cheap is not None and cheap.lam_max == math.inf
    np.testing.assert_array_equal(cheap.point(lam, lo, hi), full.point(lam, lo, hi))
    assert Ray.make(x0, np.zeros(d), lo, hi, reach=False) is None  # no direction, no ray, as before
