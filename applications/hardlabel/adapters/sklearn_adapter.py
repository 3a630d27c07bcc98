"""Adapter for fitted scikit-learn classifiers (``predict`` and ``classes_``), LGBMClassifier included."""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import Batch, LabelModel, ModelOutputError, check_width, describe, flatten

__all__ = ["is_sklearn_classifier", "sklearn_label_model"]


def is_sklearn_classifier(model: Any) -> bool:
    # hasattr is False for unfitted estimators: sklearn's NotFittedError is an AttributeError.
    return callable(getattr(model, "predict", None)) and hasattr(model, "classes_")


def _n_features(model: Any) -> int | None:
    count = getattr(model, "n_features_in_", None)
    return int(count) if isinstance(count, int | np.integer) else None


def sklearn_label_model(model: Any, batch_size: int | None) -> LabelModel:
    classes = np.asarray(model.classes_)
    if classes.ndim != 1 or classes.size < 2:
        raise ValueError(
            f"classes_ of {type(model).__name__} has shape {classes.shape}; "
            "expected a single-output classifier with at least 2 classes"
        )
    order = np.argsort(classes, kind="stable")
    sorted_classes = classes[order]
    n_features = _n_features(model)
    name = type(model).__name__

    def check_input(x: Batch) -> None:
        check_width(x, n_features, name)

    def invoke(chunk: Batch) -> Any:
        return model.predict(flatten(chunk))

    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        predicted = np.asarray(raw)
        if predicted.shape != (n,):
            raise ModelOutputError(
                f"{name}.predict returned {describe(predicted)} for {n} inputs; expected shape ({n},)"
            )
        position = np.clip(np.searchsorted(sorted_classes, predicted), 0, classes.size - 1)
        unknown = sorted_classes[position] != predicted
        if unknown.any():
            raise ModelOutputError(
                f"{name}.predict returned values not in classes_ {classes.tolist()}: "
                f"{predicted[unknown][:5].tolist()}"
            )
        # Indices into classes_, as documented: the attack works with 0..K-1.
        return order[position].astype(np.int64), None

    return LabelModel(
        invoke, decode, kind="sklearn", n_classes=classes.size, batch_size=batch_size, check_input=check_input,
        piecewise_constant=is_tree_model(model),
    )


#: scikit-learn's tree models and the ensembles made only of trees (their labels are piecewise constant).
_TREE_ENSEMBLES = ("RandomForest", "ExtraTrees", "GradientBoosting", "HistGradientBoosting", "IsolationForest")


#: Gradient-boosted tree libraries whose scikit-learn wrappers (``LGBMClassifier``, ``XGBClassifier``, ...) come here.
_TREE_LIBRARIES = ("lightgbm", "xgboost", "catboost")


def is_tree_model(model: Any) -> bool:
    """Whether ``model`` is a decision tree or an ensemble made only of trees: scikit-learn's, or the scikit-learn
    wrapper of a gradient-boosted tree library."""
    module, name = type(model).__module__, type(model).__name__
    return (module.startswith(("sklearn.tree", *_TREE_LIBRARIES))
            or (module.startswith("sklearn.ensemble") and name.startswith(_TREE_ENSEMBLES)))
