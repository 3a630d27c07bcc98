"""Pretrained models from the shared folder, as ``torch.nn.Module`` taking ``[0, 1]`` NCHW input."""

from applications.models.mnist_cnn import MnistCwBn, load_mnist_cw_bn
from applications.models.resnet20 import (
    CIFAR10_MEAN,
    CIFAR10_STD,
    Normalize,
    NormalizedModel,
    ResNet20,
    load_cifar10_resnet20,
)

__all__ = [
    "CIFAR10_MEAN",
    "CIFAR10_STD",
    "MnistCwBn",
    "Normalize",
    "NormalizedModel",
    "ResNet20",
    "load_cifar10_resnet20",
    "load_mnist_cw_bn",
]
