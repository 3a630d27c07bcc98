"""The CGBA reference code as a suite peer: every sample through the monitor, stopped at the budget."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
cgba = pytest.importorskip("benchmarks.attacks.cgba_peer")

from benchmarks.attacks.base import Batch  # noqa: E402
from benchmarks.monitor import QueryMonitor  # noqa: E402

pytestmark = pytest.mark.skipif(cgba.CGBA().unavailable() is not None, reason="the CGBA reference code is absent")


def _linear(shape: tuple[int, ...], seed: int = 0):
    w = np.random.default_rng(seed).standard_normal((3, int(np.prod(shape))))

    def labels(x: np.ndarray) -> np.ndarray:
        return np.argmax(np.asarray(x, dtype=float).reshape(len(x), -1) @ w.T, axis=1)

    return labels


@pytest.mark.parametrize("name", ["cgba-h", "cgba"])
def test_the_reference_code_is_stopped_at_the_budget_and_every_sample_counted(name):
    shape = (3, 16, 16)
    labels = _linear(shape)
    x0 = np.random.default_rng(1).uniform(0.2, 0.8, (1, *shape)).astype(np.float32)
    y0 = labels(x0)
    batch = Batch(x0=x0, y0=y0, target=None, starts=None, bounds=(0.0, 1.0), n_classes=3)
    monitor = QueryMonitor(labels, (0.0, 1.0), budget=120, on_exhausted="raise")
    monitor.register(x0, y0)
    with monitor.owned_by(0):
        cgba.CGBA(name).run(monitor, batch, 120, seed=0)
    trace = monitor.inputs[0]
    assert trace.count == 120 == monitor.model_samples
    assert np.isfinite(trace.best_at(120)) and trace.best_at(120) < trace.best_at(40)


def test_the_authors_reduction_per_size_and_what_it_refuses():
    assert cgba.reduction_for((3, 32, 32)) == 1 and cgba.reduction_for((3, 224, 224)) == 4
    flat = Batch(x0=np.zeros((1, 10), np.float32), y0=np.zeros(1, int), target=None, starts=None,
                 bounds=(0.0, 1.0), n_classes=3)
    assert "3-channel square" in cgba.CGBA().applicable(flat)
    assert "unknown CGBA variant" in cgba.CGBA("cgba-x").unavailable()
