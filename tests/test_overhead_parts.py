"""The cheaper arithmetic of issue 48: same values to the bit where it promises them, and the opt-in rule."""

from __future__ import annotations

import numpy as np

import zeroopt
from applications.hardlabel.ray import Ray
from zeroopt.core.rowwise import row_norms
from zeroopt.sample.orthogonal import ORTHOGONAL_MIN_RATIO, OrthogonalDirections, orthonormal_rows
from zeroopt.sample.shaping import IterateShapedProbes


def test_row_norms_equal_numpy_norms_to_the_bit() -> None:
    rng = np.random.default_rng(0)
    for shape in [(1, 5), (7, 784), (40, 3072), (3, 150528)]:
        a = rng.standard_normal(shape)
        assert np.array_equal(row_norms(a), np.linalg.norm(a, axis=1))
        assert np.array_equal(row_norms(a, keepdims=True), np.linalg.norm(a, axis=1, keepdims=True))


def test_a_ray_point_written_into_a_buffer_is_the_clipped_point_to_the_bit() -> None:
    rng = np.random.default_rng(1)
    x0, theta = rng.random(500), rng.standard_normal(500)
    lo, hi = 0.0, 1.0
    for reach in (True, False):
        ray = Ray.make(x0, theta, lo, hi, reach=reach)
        assert ray is not None
        expected = np.clip(x0 + 0.7 * (theta / np.linalg.norm(theta)), lo, hi)
        assert np.array_equal(ray.point(0.7, lo, hi, out=np.empty(500)), expected)
        assert np.array_equal(ray.point(0.7, lo, hi), expected)
        assert np.array_equal(ray.direction, theta / np.linalg.norm(theta))


def test_nearly_orthogonal_orthonormalises_only_while_q_over_d_reaches_the_ratio() -> None:
    d = 4000
    small, large = int(ORTHOGONAL_MIN_RATIO * d) - 1, int(ORTHOGONAL_MIN_RATIO * d)
    below = orthonormal_rows(np.random.default_rng(2), small, d, min_ratio=ORTHOGONAL_MIN_RATIO)
    sphere = zeroopt.sample.samplers.SphereDirections().sample(np.random.default_rng(2), small, d, 0)
    assert np.array_equal(below, sphere)  # independent unit rows, as the sphere sampler draws them
    above = orthonormal_rows(np.random.default_rng(2), large, d, min_ratio=ORTHOGONAL_MIN_RATIO)
    assert np.array_equal(above, orthonormal_rows(np.random.default_rng(2), large, d))
    assert np.allclose(above @ above.T, np.eye(large))


def test_the_nearly_orthogonal_solver_shapes_under_the_same_rule_and_orthogonal_stays_exact() -> None:
    ctx = zeroopt.SolverContext(dim=30, unit_sphere=True, radial=True)
    nearly = zeroopt.make_solver("sign-growing", ctx, directions="nearly-orthogonal")
    assert nearly.find(zeroopt.Sample).sampler == OrthogonalDirections(deferred=True, min_ratio=ORTHOGONAL_MIN_RATIO)
    assert nearly.find(IterateShapedProbes) == IterateShapedProbes(0.3, orthonormal=True,
                                                                   min_ratio=ORTHOGONAL_MIN_RATIO)
    assert zeroopt.make_solver("sign-growing", ctx).find(zeroopt.Sample).sampler == OrthogonalDirections(deferred=True)
    x = np.abs(np.random.default_rng(3).standard_normal(3000))
    rows = orthonormal_rows(np.random.default_rng(4), 10, 3000, deferred=True)
    shaped = nearly.find(IterateShapedProbes)(rows, x, None)  # 10/3000 < 1/200: shaped, not orthonormalised
    np.testing.assert_allclose(np.linalg.norm(shaped, axis=1), 1.0)
    assert not np.allclose(shaped @ shaped.T, np.eye(10), atol=1e-3)


def test_the_overhead_benchmark_times_our_attack_outside_the_model() -> None:
    from benchmarks.overhead import one_row

    row = one_row("ours-sign", 784, 1)
    assert row["queries"] == 1000 and row["success"] == 1.0
    assert 0 < row["model_s"] < row["wall_s"] and row["own_ms_per_query"] > 0
