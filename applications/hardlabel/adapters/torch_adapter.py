"""Adapter for ``torch.nn.Module`` classifiers (logits in, labels out). Imported only for torch models."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np
import torch

from .base import Batch, LabelModel, ModelOutputError, decode_labels_or_scores, describe

__all__ = ["exact_float32", "tf32", "torch_label_model"]


def _module_placement(module: torch.nn.Module) -> tuple[torch.device | None, torch.dtype]:
    """Device and floating dtype of the module's first parameter or buffer (None / float32 if it has none)."""
    device: torch.device | None = None
    dtype = torch.float32
    for tensor in (*module.parameters(), *module.buffers()):
        if device is None:
            device = tensor.device
        if tensor.is_floating_point():
            return device, tensor.dtype
    return device, dtype


@contextmanager
def tf32(allowed: bool) -> Iterator[None]:
    """TF32 allowed or not for float32 convolutions and matrix products for the duration (flags restored after)."""
    cudnn, matmul = torch.backends.cudnn, torch.backends.cuda.matmul
    before = (cudnn.allow_tf32, matmul.allow_tf32)
    cudnn.allow_tf32 = matmul.allow_tf32 = allowed
    try:
        yield
    finally:
        cudnn.allow_tf32, matmul.allow_tf32 = before


def exact_float32() -> AbstractContextManager[None]:
    """Float32 convolutions and matrix products without TF32 for the duration (the previous flags restored).

    cuDNN runs float32 convolutions in TF32 (a 10-bit mantissa) by default on Ampere and later GPUs, which
    moves logits by ~1e-3. A boundary search works ~1e-6 from the decision boundary, so with TF32 its labels
    depend on the batch a point was sent in (what that costs the attack on a GPU: docs/attack.md). CPUs never use
    TF32; there the flags change nothing.
    """
    return tf32(False)


def torch_label_model(
    module: torch.nn.Module,
    n_classes: int | None,
    device: str | torch.device | None,
    batch_size: int | None,
) -> LabelModel:
    own_device, dtype = _module_placement(module)
    if device is not None:
        device = torch.device(device)
        if own_device is not None and own_device != device and not _same_device(own_device, device):
            raise ValueError(
                f"the module's parameters are on {own_device} but device={device} was given; "
                f"move it first with module.to({str(device)!r}) or leave device out"
            )
    run_on = device if device is not None else (own_device or torch.device("cpu"))
    if _has_training_mode_layers(module):
        warnings.warn(
            "the module is in training mode, so dropout and batch norm make its labels random and dependent "
            "on the batch; call module.eval() before attacking it",
            UserWarning,
            stacklevel=3,
        )

    def invoke(chunk: Batch) -> Any:
        caller = chunk.ctypes.data if isinstance(chunk, np.ndarray) else chunk.data_ptr()
        if isinstance(chunk, np.ndarray):
            # torch refuses negative strides and warns on read-only buffers; a copy costs less than a forward.
            if not (chunk.flags.c_contiguous and chunk.flags.writeable):
                chunk = np.array(chunk, order="C")
            chunk = torch.from_numpy(chunk)
        with torch.inference_mode(), exact_float32():
            moved = chunk.to(device=run_on, dtype=dtype)
            if moved.data_ptr() == caller:  # already on the model's device and dtype: the model gets a copy
                moved = moved.clone()
            return module(moved)

    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        if not isinstance(raw, torch.Tensor):
            raise ModelOutputError(
                f"the torch model returned {describe(raw)}; expected a tensor of logits (n, K). "
                "If it returns a tuple or dict, wrap it in a module whose forward returns the logits"
            )
        if raw.ndim == 2 and raw.shape[0] == n and raw.shape[1] >= 2 and raw.is_floating_point():
            if n_classes is not None and raw.shape[1] != n_classes:
                raise ModelOutputError(
                    f"the torch model returned logits of shape {tuple(raw.shape)}, "
                    f"expected (n, n_classes) = ({n}, {n_classes})"
                )
            with torch.inference_mode():
                finite = torch.isfinite(raw)
                if not bool(finite.all()):
                    raise ModelOutputError(
                        f"the torch model returned {int((~finite).sum())} NaN/inf logits in an output "
                        f"of shape {tuple(raw.shape)}; logits must be finite"
                    )
                return raw.argmax(dim=1).cpu().numpy().astype(np.int64, copy=False), int(raw.shape[1])
        return decode_labels_or_scores(raw, n, n_classes, "torch")

    return LabelModel(
        invoke, decode, kind="torch", n_classes=n_classes, batch_size=batch_size, takes_tensor=True,
        copies_input=True, device=run_on,
    )


def _has_training_mode_layers(module: torch.nn.Module) -> bool:
    # Only layers known to behave differently in training mode: a parameter-free wrapper left in its default
    # training mode is harmless, and warning about it would bury the warnings that matter.
    random_or_batch_dependent = (torch.nn.modules.dropout._DropoutNd, torch.nn.modules.batchnorm._BatchNorm)
    return any(m.training and isinstance(m, random_or_batch_dependent) for m in module.modules())


def _same_device(a: torch.device, b: torch.device) -> bool:
    # "cuda" and "cuda:0" name the same device when the current device is 0.
    if a.type != b.type:
        return False
    if a.type != "cuda":
        return True
    index = torch.cuda.current_device() if torch.cuda.is_available() else 0
    return (a.index if a.index is not None else index) == (b.index if b.index is not None else index)
