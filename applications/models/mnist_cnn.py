"""The OPT-attack authors' MNIST CNN (the network attacked in the paper's MNIST experiments)."""

from __future__ import annotations

import os

import torch
from torch import nn

from applications.models._weights import default_device, load_weights

__all__ = ["MnistCwBn", "load_mnist_cw_bn"]


class MnistCwBn(nn.Module):
    """C&W-style MNIST CNN with batch normalisation.

    Input: ``(N, 1, 28, 28)`` pixels / 255 in ``[0, 1]``, no normalisation. Output: ``(N, 10)`` logits.
    The layer names and ``nn.Sequential`` indices match the state_dict ``shared/models/mnist_cw_bn.pt``.
    """

    def __init__(self) -> None:
        super().__init__()
        # Indices 0..13 must stay as they are: the checkpoint's keys are "features.<index>.*".
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.fc1 = nn.Linear(64 * 4 * 4, 200)
        self.fc2 = nn.Linear(200, 200)
        self.fc3 = nn.Linear(200, 10)
        self.relu = nn.ReLU()
        self.dropout = nn.Dropout(0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(N, 10)`` for images ``(N, 1, 28, 28)`` in ``[0, 1]``."""
        h = torch.flatten(self.features(x), 1)
        h = self.dropout(self.relu(self.fc1(h)))
        h = self.dropout(self.relu(self.fc2(h)))
        return self.fc3(h)


def load_mnist_cw_bn(
    path: str | os.PathLike[str] | None = None, device: str | torch.device | None = None
) -> MnistCwBn:
    """Load the pretrained MNIST CNN (99.49% on the 10000 MNIST test images).

    Parameters
    ----------
    path
        The state_dict file; default ``shared_dir()/models/mnist_cw_bn.pt``.
    device
        Where to put the model; default CUDA when available, else CPU.

    Returns
    -------
    MnistCwBn
        The model in eval mode (dropout off, batch-norm running statistics), taking ``[0, 1]`` input.

    Raises
    ------
    FileNotFoundError
        If the file is missing.
    """
    device = default_device(device)
    model = load_weights(MnistCwBn(), "mnist_cw_bn.pt", path)
    return model.to(device).eval()
