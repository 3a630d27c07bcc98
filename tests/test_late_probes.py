"""benchmarks.studies.late_probes on a flat boundary, where every comparison at the tangent level is exact."""

import numpy as np
import pytest

from benchmarks.studies.late_probes import first_crossing, probe_quality


def _linear(d: int, seed: int):
    rng = np.random.default_rng(seed)
    w, x0 = rng.standard_normal(d), rng.standard_normal(d)
    b = -float(w @ x0) - 1.0  # margin w·x + b is -1 at x0: x0 is not adversarial

    def labels(points):
        return (np.asarray(points) @ w + b > 0).astype(np.int64)

    def adversarial(lab):
        return lab == 1

    def g(direction):
        unit = direction / np.linalg.norm(direction)
        return 1.0 / float(w @ unit)

    theta = w / np.linalg.norm(w) + 0.5 * rng.standard_normal(d) / np.sqrt(d)
    theta *= g(theta) / np.linalg.norm(theta)  # on the boundary
    return labels, adversarial, w, x0, theta, g


@pytest.mark.parametrize("seed", [0, 1])
def test_first_crossing_is_the_hyperplanes_distance(seed):
    labels, adversarial, _, x0, theta, g = _linear(12, seed)
    g0 = float(np.linalg.norm(theta))
    dirs = theta[None] + 0.1 * g0 * np.random.default_rng(seed).standard_normal((40, 12))
    got = first_crossing(labels, adversarial, x0, dirs, g0, -1e6, 1e6, bisections=40)
    want = np.array([g(d) for d in dirs])
    inside = np.abs(want / g0 - 1) < 0.09
    assert inside.any() and (~inside).any()
    assert np.allclose(got[inside], want[inside], rtol=1e-6)
    outside = np.abs(want / g0 - 1) > 0.11
    assert np.isnan(got[outside]).all()  # beyond the window: no crossing is claimed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flat_boundary_every_comparison_has_the_slopes_sign(seed):
    labels, adversarial, w, x0, theta, _ = _linear(30, seed)
    rows = probe_quality(labels, adversarial, lambda x: w, x0, theta, -1e6, 1e6, betas=(0.005, 0.05), q=20,
                         rng=np.random.default_rng(seed))
    for row in rows:
        assert row["agree"] == 1.0
        assert row["found"] == 1.0
        assert row["cos"] == pytest.approx(row["cos_ideal"], abs=1e-9)
        assert row["cos_antithetic"] == pytest.approx(row["cos_ideal"], abs=1e-9)
        assert 0.0 < row["higher"] < 1.0


def test_a_wrong_gradient_is_caught():
    labels, adversarial, w, x0, theta, _ = _linear(30, 3)
    rows = probe_quality(labels, adversarial, lambda x: -w, x0, theta, -1e6, 1e6, betas=(0.01,), q=20,
                         rng=np.random.default_rng(3))
    assert rows[0]["agree"] == 0.0 and rows[0]["cos"] < 0
