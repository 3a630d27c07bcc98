"""benchmarks.gpu_scale's two measurements, on a small torch model on the CPU (the script itself runs on a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.gpu_scale import attack_rate, forward_rate

torch = pytest.importorskip("torch")


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(48, 4)).eval()


def test_forward_rate_counts_images_per_second() -> None:
    x = np.random.default_rng(0).random((8, 3, 4, 4), dtype=np.float32)
    assert forward_rate(_model(), x, batch=32, seconds=0.2) > 0


def test_attack_rate_on_the_device_and_on_the_host_measure_the_same_attack() -> None:
    model = _model()
    x = np.random.default_rng(1).random((3, 3, 4, 4), dtype=np.float32)
    with torch.inference_mode():
        y = model(torch.as_tensor(x)).argmax(1).numpy()
    rows = [attack_rate(model, x, y, budget=80, arrays=arrays, n_classes=4) for arrays in ("model", "numpy")]
    for row in rows:
        assert row["queries"] == 3 * 80 and row["success"] == 3
        assert row["queries_per_s"] == pytest.approx(row["queries"] / row["wall_s"])
        assert 0 <= row["model_s"] <= row["wall_s"]
    assert rows[0]["median_l2"] == rows[1]["median_l2"] and rows[0]["model_calls"] == rows[1]["model_calls"]
