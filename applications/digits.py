"""Built-in demo target: scikit-learn's 8x8 digits and two small classifiers trained on them in seconds.

Nothing here needs downloaded data, so the attack demo and quick tests run anywhere. Training is on the CPU
and deterministic for a given seed: every random draw comes from a seeded ``torch.Generator`` or from the seed
passed to scikit-learn / LightGBM, never from a global random state.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import torch
from torch import nn

__all__ = [
    "DigitsCNN",
    "load_digits_split",
    "train_digits_cnn",
    "train_digits_lightgbm",
]

_PIXEL_MAX = 16.0  # load_digits pixels are counts 0..16


def load_digits_split(
    seed: int = 0, test_size: float = 0.25
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The 1797 scikit-learn digits as images in ``[0, 1]``, split into train and test sets.

    Parameters
    ----------
    seed
        Seed of the stratified split.
    test_size
        Fraction of the images held out for testing (and for attacks).

    Returns
    -------
    x_train, y_train, x_test, y_test : numpy.ndarray
        Images ``float32`` of shape ``(n, 1, 8, 8)`` scaled from 0..16 to ``[0, 1]``; labels ``int64`` 0..9.
    """
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be a fraction in (0, 1), got {test_size}")
    digits = load_digits()
    x = (digits.images.astype(np.float32) / np.float32(_PIXEL_MAX))[:, None, :, :]
    y = digits.target.astype(np.int64)
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=test_size, random_state=seed, stratify=y
    )
    return x_train, y_train, x_test, y_test


class DigitsCNN(nn.Module):
    """Small CNN for ``(N, 1, 8, 8)`` digits in ``[0, 1]``; returns ``(N, 10)`` logits."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 4 * 4, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(N, 10)``."""
        return self.classifier(self.features(x))

    def reset_parameters(self, generator: torch.Generator) -> None:
        """PyTorch's default initialisation, drawn from ``generator`` instead of the global random state."""
        for module in self.modules():
            if isinstance(module, nn.Conv2d | nn.Linear):
                # Same distributions as Conv2d/Linear.reset_parameters.
                nn.init.kaiming_uniform_(module.weight, a=math.sqrt(5), generator=generator)
                fan_in = module.weight[0].numel()
                bound = 1.0 / math.sqrt(fan_in)
                nn.init.uniform_(module.bias, -bound, bound, generator=generator)


def _accuracy(predictions: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(predictions == labels))


@contextmanager
def _torch_threads(count: int) -> Iterator[None]:
    """Run the block with ``count`` intra-op threads, restoring the previous setting afterwards."""
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def train_digits_cnn(
    seed: int = 0,
    *,
    epochs: int = 15,
    batch_size: int = 32,
    learning_rate: float = 3e-3,
    num_threads: int = 1,
) -> tuple[DigitsCNN, float]:
    """Train :class:`DigitsCNN` on the training split of :func:`load_digits_split` (about 98% test accuracy).

    Parameters
    ----------
    seed
        Seeds the split, the initialisation and the mini-batch order.
    epochs, batch_size, learning_rate
        Adam training schedule.
    num_threads
        Torch intra-op threads while training (the previous setting is restored afterwards). One by default:
        the network is too small to gain from threads, extra threads slow training several-fold on a busy
        machine, and a fixed count keeps floating-point reductions, hence the weights, reproducible.

    Returns
    -------
    model : DigitsCNN
        On the CPU, in eval mode, taking ``(N, 1, 8, 8)`` in ``[0, 1]``.
    accuracy : float
        Accuracy on the test split.
    """
    x_train, y_train, x_test, y_test = load_digits_split(seed)
    generator = torch.Generator().manual_seed(seed)
    model = DigitsCNN()
    model.reset_parameters(generator)
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    inputs, targets = torch.from_numpy(x_train), torch.from_numpy(y_train)
    model.train()
    with _torch_threads(num_threads):
        for _ in range(epochs):
            order = torch.randperm(len(inputs), generator=generator)
            for start in range(0, len(inputs), batch_size):
                batch = order[start : start + batch_size]
                optimizer.zero_grad()
                loss = nn.functional.cross_entropy(model(inputs[batch]), targets[batch])
                loss.backward()
                optimizer.step()
        model.eval()
        with torch.inference_mode():
            predictions = model(torch.from_numpy(x_test)).argmax(dim=1).numpy()
    return model, _accuracy(predictions, y_test)


def train_digits_lightgbm(
    seed: int = 0, *, n_estimators: int = 150, num_threads: int = 1
) -> tuple[Any, float]:
    """Train a ``lightgbm.LGBMClassifier`` on the flattened training split (about 97% test accuracy).

    Many digit pixels are exactly 0, and LightGBM puts split thresholds at about ``1e-35`` next to 0, so an
    attack can flip such a model with a perturbation of that size on those pixels: report GBDT distortions
    with that in mind.

    Parameters
    ----------
    seed
        Seeds the split and LightGBM.
    n_estimators
        Number of boosting rounds.
    num_threads
        LightGBM threads; fixed so that results do not depend on the machine.

    Returns
    -------
    model : lightgbm.LGBMClassifier
        Takes ``(n, 64)`` (flatten the images); ``classes_`` is ``0..9``, so its labels are the digits.
    accuracy : float
        Accuracy on the test split.
    """
    import lightgbm

    x_train, y_train, x_test, y_test = load_digits_split(seed)
    model = lightgbm.LGBMClassifier(
        n_estimators=n_estimators,
        num_leaves=15,
        learning_rate=0.1,
        min_child_samples=3,
        # Feature subsampling helps here (97.6% vs 96.4% mean over 5 seeds) and is seeded by random_state.
        colsample_bytree=0.5,
        random_state=seed,
        n_jobs=num_threads,
        deterministic=True,
        force_row_wise=True,
        verbose=-1,
    )
    model.fit(x_train.reshape(len(x_train), -1), y_train)
    predictions = model.predict(x_test.reshape(len(x_test), -1))
    return model, _accuracy(np.asarray(predictions), y_test)
