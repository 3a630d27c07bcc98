"""benchmarks.studies.gradient_structure: its measures on vectors whose answer is known, and its traced solver."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.fft import idctn

import zeroopt
from benchmarks.studies import gradient_structure as gs


def test_bands_cover_every_coordinate_and_grow_outwards() -> None:
    bands = gs.band_index((3, 28, 28))
    assert bands.shape == (3 * 28 * 28,)
    image = bands.reshape(3, 28, 28)[0]
    assert image[0, 0] == 0 and image[27, 27] == len(gs.BAND_EDGES) - 1
    assert np.all(np.diff(image[0]) >= 0) and np.all(np.diff(image[:, 0]) >= 0)
    assert (image == bands.reshape(3, 28, 28)[2]).all()  # every channel alike


def test_band_shares_put_a_single_frequency_in_its_band() -> None:
    shape = (1, 28, 28)
    bands = gs.band_index(shape)
    coef = np.zeros(shape)
    coef[0, 5, 3] = 2.0  # max(i, j) = 5: the band of 4-6
    shares = gs.band_shares(idctn(coef, axes=(-2, -1), norm="ortho").reshape(-1), shape, bands)
    assert shares.sum() == pytest.approx(1.0)
    assert shares[2] == pytest.approx(1.0)
    noise = gs.band_shares(np.random.default_rng(0).standard_normal(784), shape, bands)
    assert noise.sum() == pytest.approx(1.0) and np.all(noise > 0)


def test_span_share_of_a_vector_in_and_out_of_the_span() -> None:
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((4, 50))
    assert gs.span_share(rows.T @ rng.standard_normal(4), rows) == pytest.approx(1.0)
    outside = rng.standard_normal(50)
    outside -= rows.T @ np.linalg.lstsq(rows.T, outside, rcond=None)[0]
    assert gs.span_share(outside, rows) == pytest.approx(0.0, abs=1e-12)


def test_exact_signs_on_isotropic_probes_give_the_textbook_cosine() -> None:
    """Σ sign(g·u_i) u_i over q orthonormal random probes: cos² ≈ (2/π) q/d."""
    rng = np.random.default_rng(2)
    g = rng.standard_normal(400)
    cos2 = gs.sign_cos2(g, rng, q=40, draws=60)
    assert cos2 == pytest.approx(2 / np.pi * 40 / 400, rel=0.15)


def test_a_prior_on_the_gradients_band_raises_the_cosine() -> None:
    shape = (1, 16, 16)
    bands = gs.band_index(shape, edges=(0, 4))
    coef = np.zeros(shape)
    coef[0, :4, :4] = np.random.default_rng(3).standard_normal((4, 4))  # all of it in the lowest band
    g = idctn(coef, axes=(-2, -1), norm="ortho").reshape(-1)
    rng = np.random.default_rng(4)
    iso = gs.sign_cos2(g, rng, q=10, draws=20)
    prior = gs.sign_cos2(g, rng, shape=shape, bands=bands, band_variance=np.array([16.0, 0.01]), q=10, draws=20)
    assert prior > 3 * iso


@pytest.fixture()
def traced():
    gs._register_traced()
    yield gs.TRACED
    zeroopt.recipes.registry._REGISTRY.pop(gs.TRACED, None)  # other tests see the registry as the package leaves it
    gs._SINK.clear()


def test_the_traced_solver_is_sign_growing_and_records_each_step(traced: str) -> None:
    def f(x: np.ndarray) -> float:
        return float(np.sum((x - 1.0) ** 2))

    gs._SINK.clear()
    # The study traces the attack's chain, which estimates no noise (zeroopt.recipes.descent.ON_THE_SPHERE): here,
    # on a plain objective, neither does the copy.
    plain = zeroopt.minimize(f, np.zeros(12), solver="sign-growing", budget=600, seed=5, estimate_noise=False)
    copy = zeroopt.minimize(f, np.zeros(12), solver=traced, budget=600, seed=5, estimate_noise=False)
    assert copy.fun == plain.fun and np.array_equal(copy.x, plain.x) and copy.queries == plain.queries
    assert len(gs._SINK) == copy.iterations
    run, iteration, x, estimate, after, value = gs._SINK[-1]
    assert iteration == copy.iterations - 1 and x.shape == estimate.shape == after.shape == (12,)
    assert np.isfinite(value) and value >= copy.fun
