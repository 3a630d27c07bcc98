"""ART's GeoDA as a suite peer: where it applies, the DCT basis it is handed, and a run stopped at the budget."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from benchmarks.attacks.art_peers import ArtGeoDA, _geoda_basis
from benchmarks.attacks.base import Batch, Reported
from benchmarks.monitor import QueryMonitor


def _halves(x: np.ndarray) -> np.ndarray:
    """Class 1 where the left half of a 1 x 8 x 8 image is brighter than the right half, else class 0."""
    x = np.asarray(x).reshape(len(x), 1, 8, 8)
    return (x[:, 0, :, :4].mean(axis=(1, 2)) > x[:, 0, :, 4:].mean(axis=(1, 2))).astype(np.int64)


def _image_batch(target: np.ndarray | None = None) -> Batch:
    x0 = np.full((1, 1, 8, 8), 0.6, dtype=np.float32)
    x0[..., :4] = 0.4  # class 0; the nearest class-1 image is 0.2 / sqrt(2) per pixel away, L2 0.8
    return Batch(x0=x0, y0=np.array([0]), target=target, starts=None, bounds=(0.0, 1.0), n_classes=2)


@pytest.mark.parametrize(("sub_dim", "res"), [(10, 28), (3, 8), (8, 8)])
def test_the_basis_is_orthonormal_and_starts_from_the_constant_image(sub_dim: int, res: int) -> None:
    basis = _geoda_basis(sub_dim, res)
    assert basis.shape == (res * res, sub_dim * sub_dim)
    np.testing.assert_allclose(basis.T @ basis, np.eye(sub_dim * sub_dim), atol=1e-12)
    np.testing.assert_allclose(basis[:, 0], 1.0 / res)  # frequency (0, 0): the mean
    # Column u * sub_dim + v varies like cos(u ...) along x (the last axis) and cos(v ...) along y.
    second = basis[:, 1].reshape(res, res)
    np.testing.assert_allclose(second, second[:, :1] * np.ones((1, res)))  # v = 1: constant along x


def test_geoda_applies_to_untargeted_square_images_only() -> None:
    attack = ArtGeoDA()
    assert attack.applicable(_image_batch()) is None
    assert "untargeted only" in (attack.applicable(_image_batch(target=np.array([1]))) or "")
    flat = Batch(x0=np.zeros((1, 28)), y0=np.array([0]), target=None, starts=None, bounds=(0.0, 1.0), n_classes=2)
    assert "square images" in (attack.applicable(flat) or "")
    with pytest.raises(ValueError, match="untargeted only"):
        attack.run(None, _image_batch(target=np.array([1])), 300, seed=0)  # type: ignore[arg-type]


@pytest.mark.skipif(importlib.util.find_spec("art") is None, reason="ART not installed")
def test_geoda_is_stopped_by_the_monitor_and_leaves_the_working_directory_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # the DCT basis is cached under ~/.cache
    batch = _image_batch()
    traces = []
    for _ in range(2):
        mon = QueryMonitor(_halves, batch.bounds, budget=600, on_exhausted="raise")
        mon.register(batch.x0, batch.y0)
        with mon.owned_by(0):
            out = ArtGeoDA().run(mon, batch, 600, seed=0)
        assert isinstance(out[0], Reported)
        assert mon.inputs[0].count <= 600
        assert 0.8 - 1e-6 <= mon.inputs[0].best < 3.0  # adversarial, and no closer than the true minimum
        traces.append((list(mon.inputs[0].steps_q), list(mon.inputs[0].steps_d)))
    assert traces[0] == traces[1]  # seeded
    assert list(tmp_path.glob("*.npy")) == []  # GeoDA saves its basis in the cwd: the adapter moves it
    assert list((tmp_path / "home" / ".cache" / "zeroopt" / "art-geoda").glob("2d_dct_basis_10_8.npy"))
