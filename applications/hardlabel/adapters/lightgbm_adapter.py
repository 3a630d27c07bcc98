"""Adapter for ``lightgbm.Booster`` classifiers (binary, cross-entropy or multiclass objectives)."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .base import Batch, LabelModel, ModelOutputError, check_width, describe, flatten

__all__ = ["booster_label_model", "booster_n_classes", "is_lightgbm_booster"]

# LightGBM objectives (and their aliases) whose Booster.predict gives P(class 1) of shape (n,).
_LGBM_BINARY = frozenset({"binary", "cross_entropy", "xentropy"})
# ... and those whose predict gives class probabilities of shape (n, K).
_LGBM_MULTICLASS = frozenset({"multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr"})


def is_lightgbm_booster(model: Any) -> bool:
    # Only look if lightgbm is already imported: a model cannot be a Booster otherwise, and the import is
    # slow.
    lightgbm = sys.modules.get("lightgbm")
    return lightgbm is not None and isinstance(model, lightgbm.Booster)


def _booster_objective(booster: Any) -> str:
    objective = booster.params.get("objective")
    if not isinstance(objective, str):
        raise TypeError(
            f"this lightgbm.Booster has objective {objective!r}; only built-in binary, cross_entropy and "
            "multiclass objectives give probabilities. For a custom objective pass a callable that returns "
            "labels"
        )
    # A loaded model stores e.g. "binary sigmoid:1"; the first word is the objective.
    return objective.split()[0].lower()


def booster_n_classes(booster: Any) -> int:
    objective = _booster_objective(booster)
    if objective in _LGBM_BINARY:
        return 2
    if objective in _LGBM_MULTICLASS:
        return int(booster.num_model_per_iteration())
    raise TypeError(
        f"this lightgbm.Booster was trained with objective {objective!r}, which is not a classifier; "
        f"supported objectives: {sorted(_LGBM_BINARY | _LGBM_MULTICLASS)}. Pass a callable returning labels "
        "otherwise"
    )


def booster_label_model(booster: Any, batch_size: int | None) -> LabelModel:
    k = booster_n_classes(booster)
    binary = _booster_objective(booster) in _LGBM_BINARY
    n_features = int(booster.num_feature())

    def check_input(x: Batch) -> None:
        check_width(x, n_features, "lightgbm.Booster")

    def invoke(chunk: Batch) -> Any:
        return booster.predict(flatten(chunk))

    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        out = np.asarray(raw)
        expected = (n,) if binary else (n, k)
        if out.shape != expected:
            raise ModelOutputError(
                f"lightgbm.Booster.predict returned {describe(out)}; "
                f"expected probabilities of shape {expected}"
            )
        if not np.isfinite(out).all():
            raise ModelOutputError("lightgbm.Booster.predict returned NaN/inf probabilities")
        if binary:
            # Same tie rule as LGBMClassifier.predict (argmax of [1 - p, p]): p == 0.5 is class 0.
            return (out > 0.5).astype(np.int64), None
        return np.argmax(out, axis=1).astype(np.int64), k

    return LabelModel(
        invoke, decode, kind="lightgbm", n_classes=k, batch_size=batch_size, check_input=check_input,
        piecewise_constant=True,
    )
