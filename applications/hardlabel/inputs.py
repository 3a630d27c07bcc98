"""Checking and converting what users pass to the attack (arrays or tensors, labels)."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["as_batch", "as_labels", "check_labels_fit"]


def as_batch(x: Any, name: str) -> NDArray[np.float64]:
    if hasattr(x, "detach"):  # torch.Tensor
        x = x.detach().cpu().numpy()
    arr = np.asarray(x)
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)) or arr.dtype == bool:
        raise TypeError(f"{name} must be a numeric array or tensor, got dtype {arr.dtype}")
    return arr.astype(np.float64)


def as_labels(y: Any, n: int, name: str, n_classes: int | None) -> NDArray[np.int64]:
    if hasattr(y, "detach"):
        y = y.detach().cpu().numpy()
    arr = np.asarray(y)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.shape != (n,):
        raise ValueError(f"{name} must have one label per input: expected shape ({n},), got {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer):
        if np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        elif arr.dtype.kind in "USO":
            raise TypeError(
                f"{name} must hold integer class indices, got class names such as {arr.ravel()[:3].tolist()}; "
                "for a scikit-learn or LightGBM model pass their indices into classes_: "
                f"np.searchsorted(model.classes_, {name}) (classes_ is sorted)"
            )
        else:
            raise TypeError(f"{name} must hold integer class indices, got dtype {arr.dtype}")
    if (arr < 0).any() or (n_classes is not None and (arr >= n_classes).any()):
        bad = arr[(arr < 0) | ((arr >= n_classes) if n_classes is not None else False)]
        raise ValueError(
            f"{name} holds label(s) {bad[:5].tolist()} outside the model's classes 0..{(n_classes or 0) - 1}; "
            "labels are class indices (for scikit-learn and LightGBM models: indices into classes_)"
        )
    return arr.astype(np.int64)


def check_labels_fit(width: int | None, labels: dict[str, NDArray[np.int64] | None]) -> None:
    """Raise ``ValueError`` if a label is not a column of the model's scores (``width`` of them, once known).

    A model given without ``n_classes`` reveals its class count only with its first scores; a label beyond
    them would otherwise read as "already misclassified".
    """
    if width is None:
        return
    for name, arr in labels.items():
        if arr is not None and len(arr) and int(arr.max()) >= width:
            bad = arr[arr >= width]
            raise ValueError(
                f"{name} holds label(s) {bad[:5].tolist()} but the model returns scores for {width} classes "
                f"(0..{width - 1}); labels are class indices. Pass n_classes= to have this checked before any query"
            )
