"""Test helpers shared by the benchmark-harness tests: a 3-class linear model on toy inputs."""

from __future__ import annotations

import numpy as np

D = 6  # input dimension of the toy problems
W = np.eye(3, D)  # 3-class linear model: label = argmax of the first three coordinates


def linear_labels(x: np.ndarray) -> np.ndarray:
    """A 3-class linear classifier on (B, D) inputs."""
    return np.argmax(x.reshape(len(x), -1) @ W.T, axis=1).astype(np.int64)


class CountingLabels:
    """``linear_labels`` that remembers every sample it was shown."""

    def __init__(self) -> None:
        self.seen: list[np.ndarray] = []

    def __call__(self, x: np.ndarray) -> np.ndarray:
        self.seen.append(np.array(x))
        return linear_labels(x)


def originals(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Inputs in [0, 1]^D, at least 0.5 apart in the last 3 coordinates, labelled by the largest of the first 3."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 0.6, size=(n, D)).astype(np.float32)
    y = np.arange(n) % 3
    x[np.arange(n), y] = 0.8
    x[:, 3:] = (np.arange(n)[:, None] * 0.3 + 0.05).astype(np.float32)  # separate the originals
    return x, y
