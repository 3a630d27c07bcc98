"""Loading a shared state_dict into a module, shared by the model loaders."""

from __future__ import annotations

import os

import torch
from torch import nn

from applications.datasets import shared_path


def load_weights(
    module: nn.Module, default_name: str, path: str | os.PathLike[str] | None
) -> nn.Module:
    """Load ``path`` (default: ``<shared>/models/<default_name>``) into ``module`` strictly, on the CPU."""
    if path is None:
        file: str | os.PathLike[str] = shared_path("models", default_name)
    elif not os.path.exists(path):
        raise FileNotFoundError(f"model file not found: {path} (check the path argument)")
    else:
        file = path
    module.load_state_dict(torch.load(file, map_location="cpu", weights_only=True))
    return module


def default_device(device: str | torch.device | None) -> str | torch.device:
    """``device``, or CUDA when present and the CPU otherwise."""
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device
