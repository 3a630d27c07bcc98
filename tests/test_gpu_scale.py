"""benchmarks.gpu_scale's two measurements and the forward-rate timer they share with every speed page, on a small
torch model on the CPU (the script itself runs on a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from applications.hardlabel import as_label_model
from benchmarks.gpu_scale import attack_rate, forward_images_per_s
from benchmarks.speed import forward_rate

torch = pytest.importorskip("torch")


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(48, 4)).eval()


def test_forward_rate_counts_images_per_second() -> None:
    x = np.random.default_rng(0).random((8, 3, 4, 4), dtype=np.float32)
    assert forward_images_per_s(_model(), x, batch=32, seconds=0.2, n_classes=4) > 0


def test_forward_rate_sends_each_batch_size_cycled_from_the_pool() -> None:
    sent: list[np.ndarray] = []

    def label_fn(batch: np.ndarray) -> np.ndarray:
        sent.append(batch)
        return np.zeros(len(batch), dtype=np.int64)

    pool = np.arange(3, dtype=np.float64).reshape(3, 1)
    rates = forward_rate(label_fn, pool, (1, 5), seconds=0.05)
    assert set(rates) == {1, 5} and all(r > 0 for r in rates.values())
    five = next(b for b in sent if len(b) == 5)
    assert five.dtype == np.float32 and five[:, 0].tolist() == [0, 1, 2, 0, 1]
    # Rate = inputs sent after the warm-up over the time: every timed call counted, none twice.
    ones = sum(len(b) == 1 for b in sent) - 1
    assert rates[1] == pytest.approx(ones / 0.05, rel=0.5)


class _RecordsTF32(torch.nn.Module):
    """Logits of a fixed linear map; records whether TF32 was allowed during each forward."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(48, 4)
        self.seen: list[bool] = []

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.seen.append(torch.backends.cudnn.allow_tf32 or torch.backends.cuda.matmul.allow_tf32)
        return self.linear(x.flatten(1))


def test_forward_rate_through_the_adapter_times_without_tf32_whatever_the_global_flags() -> None:
    from applications.hardlabel.adapters.torch_adapter import tf32

    model = _RecordsTF32().eval()
    x = np.random.default_rng(2).random((4, 3, 4, 4), dtype=np.float32)
    with tf32(True):  # PyTorch's default on recent GPUs
        forward_rate(as_label_model(model, n_classes=4), torch.as_tensor(x), (4,), seconds=0.02)
    assert model.seen and not any(model.seen)


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
