"""Hard-label views of the attacked models, and their raw forward throughput.

A *label function* maps a float32 batch ``(B, *shape)`` to int64 labels ``(B,)``; it is what the
:class:`~benchmarks.monitor.QueryMonitor` wraps and what every black-box attack sees. Each model call is one
call of the label function, however many samples it holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import torch

LabelFn = Callable[[np.ndarray], np.ndarray]


def torch_label_fn(model: torch.nn.Module) -> LabelFn:
    """Labels from a torch classifier returning logits (CPU, no gradients)."""
    device = next(model.parameters()).device

    def label(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            logits = model(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(device))
        return logits.argmax(dim=1).cpu().numpy().astype(np.int64)

    return label


def booster_label_fn(booster: object, n_features: int) -> LabelFn:
    """Labels from a LightGBM ``Booster`` (binary: probability > 0.5; multiclass: argmax)."""

    def label(x: np.ndarray) -> np.ndarray:
        scores = np.asarray(booster.predict(np.asarray(x, dtype=np.float64).reshape(len(x), n_features)))
        if scores.ndim == 1:
            return (scores > 0.5).astype(np.int64)
        return scores.argmax(axis=1).astype(np.int64)

    return label


def forward_throughput(
    label_fn: LabelFn, pool: np.ndarray, batch_sizes: tuple[int, ...] = (1, 20, 100), seconds: float = 1.0
) -> dict[int, float]:
    """Samples per second of ``label_fn`` at each batch size: the ceiling for any attack's queries/s.

    Parameters
    ----------
    label_fn : callable
        The model's label function.
    pool : numpy.ndarray
        Inputs to cycle through (at least one).
    batch_sizes : tuple of int
        Batch sizes to time.
    seconds : float
        Minimum timing duration per batch size (after one warm-up call).
    """
    out: dict[int, float] = {}
    for b in batch_sizes:
        reps = -(-b // len(pool))
        batch = np.ascontiguousarray(np.concatenate([pool] * reps)[:b], dtype=np.float32)
        label_fn(batch)
        n = 0
        start = time.perf_counter()
        while (elapsed := time.perf_counter() - start) < seconds:
            label_fn(batch)
            n += b
        out[b] = n / elapsed
    return out
