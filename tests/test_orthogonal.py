"""Orthogonal probe directions (:class:`zeroopt.OrthogonalDirections`): orthonormal per estimate, each one
uniform on the sphere, and a sign estimate closer to the gradient than independent directions give."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import zeroopt
from zeroopt.sample.samplers import make_sampler


@settings(max_examples=40, deadline=None)
@given(q=st.integers(0, 40), d=st.integers(1, 16), seed=st.integers(0, 2**32 - 1))
def test_rows_are_unit_and_orthonormal_within_each_block_of_d(q: int, d: int, seed: int) -> None:
    u = zeroopt.orthonormal_rows(np.random.default_rng(seed), q, d)
    assert u.shape == (q, d) and np.all(np.isfinite(u))
    for start in range(0, q, d):
        block = u[start:start + d]
        assert np.allclose(block @ block.T, np.eye(len(block)), atol=1e-10)


def test_each_direction_is_uniform_on_the_sphere() -> None:
    """Haar (sign-corrected QR): every coordinate of every row has mean 0 and second moment 1/d; without
    the sign correction the first row's first coordinate would lean to one sign."""
    rng = np.random.default_rng(0)
    d, q = 6, 4
    u = np.stack([zeroopt.orthonormal_rows(rng, q, d) for _ in range(20_000)])  # (draws, q, d)
    assert np.abs(u.mean(axis=0)).max() < 0.02
    assert np.abs((u**2).mean(axis=0) - 1.0 / d).max() < 0.01
    assert abs(float(np.mean(u[:, 0, 0] > 0)) - 0.5) < 0.02


def test_the_sampler_is_registered_seeded_and_scaled_like_the_sphere() -> None:
    s = make_sampler("orthogonal")
    assert isinstance(s, zeroopt.OrthogonalDirections) and s.scale(50) == 50.0
    a = s.sample(np.random.default_rng(3), 7, 50, 0)
    b = s.sample(np.random.default_rng(3), 7, 50, 5)
    assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="directions"):
        zeroopt.orthonormal_rows(np.random.default_rng(0), -1, 5)


def _sign_cosine(sample, d: int, q: int, reps: int, seed: int) -> float:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    cos = []
    for _ in range(reps):
        grad = rng.standard_normal(d)
        u = sample(rng, q, d)
        est = np.sign(u @ grad) @ u
        cos.append(est @ grad / (np.linalg.norm(est) * np.linalg.norm(grad)))
    return float(np.mean(cos))


def test_sign_estimate_is_closer_to_the_gradient_than_with_independent_directions() -> None:
    """At q/d = 1/4 orthogonal probes measure q distinct directions; independent ones overlap, and the sign
    estimate's cosine to a structureless gradient is lower (about 0.37 against 0.40 at q = 200, d = 784)."""
    d, q = 256, 64
    sphere = zeroopt.SphereDirections()
    iid = _sign_cosine(lambda rng, q, d: sphere.sample(rng, q, d, 0), d, q, reps=300, seed=1)
    orth = _sign_cosine(zeroopt.orthonormal_rows, d, q, reps=300, seed=1)
    assert orth > iid + 0.01, (orth, iid)
    # With q = d the orthogonal sign estimate is the gradient's sign pattern in a random basis: E cos = √(2/π).
    full = _sign_cosine(zeroopt.orthonormal_rows, 64, 64, reps=300, seed=2)
    assert abs(full - np.sqrt(2 / np.pi)) < 0.03, full


def test_sign_growing_probes_orthogonally_on_the_unit_sphere_only() -> None:
    """The attack's context (directions on the unit sphere) gets orthogonal probes by default; a plain objective
    and the paper's solvers keep independent ones; and the probes of one iteration are orthonormal."""
    sphere = zeroopt.SolverContext(dim=40, unit_sphere=True, adjustable_precision=True)
    built = zeroopt.make_solver("sign-growing", sphere)
    assert built.find(zeroopt.OrthogonalDirections) is not None
    plain = zeroopt.make_solver("sign-growing", zeroopt.SolverContext(dim=40))
    assert isinstance(plain.find(zeroopt.Sample).sampler, zeroopt.SphereDirections)
    assert isinstance(zeroopt.make_solver("sign", sphere).find(zeroopt.Sample).sampler, zeroopt.SphereDirections)
    q = built.probes(built.init(np.ones(40), 1.0, 0.0, np.random.default_rng(0)))
    u = built.find(zeroopt.Sample).sampler.sample(np.random.default_rng(0), q, 40, 0)
    q_start = zeroopt.recipes.registry.recipe_defaults(zeroopt.sign_growing_on_radius)["q_start"]
    assert len(u) == q_start and np.allclose(u @ u.T, np.eye(len(u)))


@settings(max_examples=60, deadline=None)
@given(q=st.integers(1, 50), d=st.integers(2, 24), weight=st.floats(0.05, 1.0), seed=st.integers(0, 2**32 - 1))
def test_a_deferred_draw_reshaped_and_orthonormalised_once_gives_the_directions_two_passes_give(
        q: int, d: int, weight: float, seed: int) -> None:
    # The solver's probes with a shape: the sampler's Gram-Schmidt pass is redundant (the shape's pass yields the
    # same rows), so the deferred draw must not change a single direction — blocks over d/2 rows included.
    x = np.random.default_rng(seed + 1).standard_normal(d)
    shape = zeroopt.IterateShapedProbes(weight, orthonormal=True)
    twice = shape(zeroopt.orthonormal_rows(np.random.default_rng(seed), q, d), x, None)
    once = shape(zeroopt.orthonormal_rows(np.random.default_rng(seed), q, d, deferred=True), x, None)
    np.testing.assert_allclose(once, twice, atol=1e-8)
    # An iterate with nothing to shape by still gets orthonormal rows, the plain draw's.
    plain = shape(zeroopt.orthonormal_rows(np.random.default_rng(seed), q, d, deferred=True), np.zeros(d), None)
    np.testing.assert_allclose(plain, zeroopt.orthonormal_rows(np.random.default_rng(seed), q, d), atol=1e-8)


def test_a_deferred_draw_is_unit_gaussian_rows_not_yet_orthonormal() -> None:
    u = zeroopt.orthonormal_rows(np.random.default_rng(0), 10, 40, deferred=True)
    np.testing.assert_allclose(np.linalg.norm(u, axis=1), 1.0)
    assert not np.allclose(u @ u.T, np.eye(10), atol=1e-3)


def test_the_solver_defers_the_draws_orthonormalisation_only_to_a_shape_that_orthonormalises() -> None:
    radial = zeroopt.SolverContext(dim=30, unit_sphere=True, radial=True)
    shaped = zeroopt.make_solver("sign-growing", radial)
    shape = shaped.find(zeroopt.IterateShapedProbes)
    assert shape is not None and shape.orthonormal
    assert shaped.find(zeroopt.Sample).sampler == zeroopt.OrthogonalDirections(deferred=True)
    unshaped = zeroopt.make_solver("sign-growing", radial, probe_shape=None)
    assert unshaped.find(zeroopt.Sample).sampler == zeroopt.OrthogonalDirections()
    sphere = zeroopt.make_solver("sign-growing", zeroopt.SolverContext(dim=30, unit_sphere=True))
    assert sphere.find(zeroopt.Sample).sampler == zeroopt.OrthogonalDirections()
