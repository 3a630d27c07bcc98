"""Adapter for plain callables on a numpy batch returning labels ``(N,)`` or scores ``(N, K)``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .base import LabelModel, decode_labels_or_scores

__all__ = ["callable_label_model"]


def callable_label_model(
    fn: Callable[[np.ndarray], Any], n_classes: int | None, batch_size: int | None
) -> LabelModel:
    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        return decode_labels_or_scores(raw, n, n_classes, "callable")

    return LabelModel(fn, decode, kind="callable", n_classes=n_classes, batch_size=batch_size)
