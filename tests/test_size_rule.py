"""The default's size rule: full-space orthonormal probes on small arrays, a low-frequency band on large images."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import zeroopt
from zeroopt.sample.samplers import make_sampler
from zeroopt.sample.subspace import DEFAULT_FREQUENCY_FRACTION, FULL_BAND_SIDE, band_fraction


def _context(shape: tuple[int, ...] | None) -> zeroopt.SolverContext:
    dim = int(np.prod(shape)) if shape else 64
    return zeroopt.SolverContext(dim=dim, shape=shape, unit_sphere=True, adjustable_precision=True, radial=True)


@pytest.mark.parametrize("shape", [None, (1, 28, 28), (3, 32, 32), (784,), (4096,)])
def test_small_or_shapeless_inputs_keep_the_full_space_orthonormal_sampler(shape):
    sampler = make_sampler("by-size", _context(shape))
    assert sampler == make_sampler("orthogonal", _context(shape))


@pytest.mark.parametrize(("side", "fraction"), [(64, 0.5), (128, 0.25), (224, 0.25), (240, 0.25)])
def test_large_images_get_a_band_at_least_32_wide_and_at_most_a_quarter(side, fraction):
    sampler = make_sampler("by-size", _context((3, side, side)))
    assert isinstance(sampler, zeroopt.LowFrequencyDirections)
    assert sampler.fraction == pytest.approx(fraction)
    u = sampler.sample(np.random.default_rng(0), 4, 3 * side * side, 0)
    assert np.allclose(np.linalg.norm(u, axis=1), 1.0)


@given(st.integers(8, 1024), st.integers(8, 1024))
def test_the_band_never_narrows_below_the_full_side_nor_widens_past_it(rows, cols):
    f = band_fraction((3, rows, cols))
    longest = max(rows, cols)
    assert DEFAULT_FREQUENCY_FRACTION <= f <= 1.0
    assert f == 1.0 or round(f * longest) >= min(FULL_BAND_SIDE, longest) * 0.999


def test_sign_growing_in_the_attack_context_draws_from_the_rule():
    spec = zeroopt.get_solver("sign-growing")
    assert "LowFrequencyDirections" in spec.describe(_context((3, 224, 224)))
    assert "OrthogonalDirections" in spec.describe(_context((3, 32, 32)))
