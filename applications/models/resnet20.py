"""CIFAR-10 ResNet-20 (He et al. 2016, "option A" shortcuts) and a wrapper that normalises its input."""

from __future__ import annotations

import os
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from applications.models._weights import default_device, load_weights

__all__ = [
    "CIFAR10_MEAN",
    "CIFAR10_STD",
    "BasicBlock",
    "Normalize",
    "NormalizedModel",
    "ResNet20",
    "load_cifar10_resnet20",
]

#: Per-channel normalisation the pretrained ResNet-20 was trained with (applied to pixels / 255).
CIFAR10_MEAN: tuple[float, float, float] = (0.485, 0.456, 0.406)
CIFAR10_STD: tuple[float, float, float] = (0.229, 0.224, 0.225)


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm and an "option A" (parameter-free) shortcut."""

    def __init__(self, in_channels: int, out_channels: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.stride = stride
        self.pad_channels = out_channels - in_channels

    def shortcut(self, x: torch.Tensor) -> torch.Tensor:
        """Identity, or (when the shape changes) subsample and zero-pad the new channels on both sides."""
        if self.stride == 1 and self.pad_channels == 0:
            return x
        x = x[:, :, :: self.stride, :: self.stride]
        before = self.pad_channels // 2
        return F.pad(x, (0, 0, 0, 0, before, self.pad_channels - before))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Residual block output."""
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet20(nn.Module):
    """ResNet-20 for 32x32 images; expects **normalised** input (see :class:`NormalizedModel`).

    Layer names match the state_dict ``shared/models/cifar10_resnet20.pt``. Output: ``(N, 10)`` logits.
    """

    def __init__(self, num_classes: int = 10, blocks_per_stage: int = 3) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.layer1 = self._stage(16, 16, blocks_per_stage, stride=1)
        self.layer2 = self._stage(16, 32, blocks_per_stage, stride=2)
        self.layer3 = self._stage(32, 64, blocks_per_stage, stride=2)
        self.linear = nn.Linear(64, num_classes)

    @staticmethod
    def _stage(in_channels: int, out_channels: int, blocks: int, stride: int) -> nn.Sequential:
        layers = [BasicBlock(in_channels, out_channels, stride)]
        layers += [BasicBlock(out_channels, out_channels, 1) for _ in range(blocks - 1)]
        return nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits ``(N, num_classes)`` for normalised images ``(N, 3, 32, 32)``."""
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.layer3(self.layer2(self.layer1(out)))
        out = F.adaptive_avg_pool2d(out, 1).flatten(1)
        return self.linear(out)


class Normalize(nn.Module):
    """Per-channel ``(x - mean) / std`` for NCHW input."""

    def __init__(self, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__()
        if len(mean) != len(std):
            raise ValueError(f"mean has {len(mean)} channels but std has {len(std)}")
        if min(std) <= 0:
            raise ValueError(f"std must be positive, got {tuple(std)}")
        # Not persistent: they are constants of the wrapper, so they stay out of the state_dict.
        mean_t = torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1)
        std_t = torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1)
        self.register_buffer("mean", mean_t, persistent=False)
        self.register_buffer("std", std_t, persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalised input."""
        return (x - self.mean) / self.std


class NormalizedModel(nn.Module):
    """``model(normalize(x))``.

    Lets an attack work in ``[0, 1]`` pixel space while the network sees the input it was trained on.
    """

    def __init__(self, model: nn.Module, mean: Sequence[float], std: Sequence[float]) -> None:
        super().__init__()
        self.normalize = Normalize(mean, std)
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of the wrapped model for ``[0, 1]`` input."""
        return self.model(self.normalize(x))


def load_cifar10_resnet20(
    path: str | os.PathLike[str] | None = None, device: str | torch.device | None = None
) -> NormalizedModel:
    """Load the pretrained CIFAR-10 ResNet-20 wrapped to take ``[0, 1]`` input.

    Accuracy: 91.78% on the real test set (reported), about 81% on the JPEG copies in ``shared/data/cifar10``.

    Parameters
    ----------
    path
        The state_dict file (keys of a bare :class:`ResNet20`);
        default ``shared_dir()/models/cifar10_resnet20.pt``.
    device
        Where to put the model; default CUDA when available, else CPU.

    Returns
    -------
    NormalizedModel
        In eval mode; takes ``(N, 3, 32, 32)`` RGB pixels / 255 in ``[0, 1]`` and returns ``(N, 10)`` logits.
        The bare network is its ``.model`` attribute.

    Raises
    ------
    FileNotFoundError
        If the file is missing.
    """
    device = default_device(device)
    network = load_weights(ResNet20(), "cifar10_resnet20.pt", path)
    return NormalizedModel(network, CIFAR10_MEAN, CIFAR10_STD).to(device).eval()
