"""Adapters that turn a classifier into a hard-label oracle: a batch of inputs in, one label per input out.

The hard-label attack only ever sees labels, so every supported kind of model is reduced to the same
interface, :class:`LabelModel`, which also counts what it was asked (``calls`` and ``samples``) and checks
every answer. Supported models (see :func:`as_label_model`):

* ``torch.nn.Module`` returning logits ``(N, K)``, run under ``torch.inference_mode`` on its own device;
* plain callables on a numpy batch returning labels ``(N,)`` or scores ``(N, K)``;
* fitted scikit-learn classifiers (``predict`` and ``classes_``), ``lightgbm.LGBMClassifier`` included;
* ``lightgbm.Booster`` trained with a binary, cross-entropy or multiclass objective.

Labels are always integers in ``0..K-1``. For scikit-learn style classifiers they are **indices into**
``classes_`` (not the class values themselves), so the label of an input and the target class given to the
attack must both be such indices.

There is one module per kind of model; each imports its framework only when a model of its kind comes
in, so a callable or a LightGBM model never imports torch. (The pretrained networks the benchmarks attack
are a different thing: :mod:`applications.models`.)
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .base import LabelModel, ModelOutputError, check_batch_size, check_n_classes
from .callable_adapter import callable_label_model
from .lightgbm_adapter import booster_label_model, booster_n_classes, is_lightgbm_booster
from .sklearn_adapter import is_sklearn_classifier, sklearn_label_model

__all__ = ["LabelModel", "ModelOutputError", "as_label_model", "infer_n_classes"]


def _is_torch_module(model: Any) -> bool:
    # Only look if torch is already imported: a model cannot be a torch module otherwise.
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def infer_n_classes(model: Any) -> int | None:
    """Number of classes of a model, when it can be read without querying the model.

    Parameters
    ----------
    model
        Any model :func:`as_label_model` accepts.

    Returns
    -------
    int or None
        ``len(classes_)`` for scikit-learn style classifiers, 2 for a binary ``lightgbm.Booster`` and its
        number of classes for a multiclass one, ``n_classes`` of a :class:`LabelModel`; ``None`` for torch
        modules and plain callables, whose class count would take a query to learn.
    """
    if isinstance(model, LabelModel):
        return model.n_classes
    if _is_torch_module(model):
        return None
    if is_lightgbm_booster(model):
        try:
            return booster_n_classes(model)
        except TypeError:
            return None
    if is_sklearn_classifier(model):
        classes = np.asarray(model.classes_)
        return int(classes.size) if classes.ndim == 1 else None
    return None


def as_label_model(
    model: Any,
    *,
    n_classes: int | None = None,
    device: Any = None,
    batch_size: int | None = None,
) -> LabelModel:
    """Wrap a classifier as a hard-label oracle.

    Parameters
    ----------
    model
        One of

        * a ``torch.nn.Module`` returning logits ``(N, K)`` (or integer labels ``(N,)``). It runs under
          ``torch.inference_mode`` on the device of its parameters (CPU if it has none), with inputs converted
          to its dtype; put it in eval mode first (a warning is given if dropout or batch-norm layers are in
          training mode). It is not moved or modified;
        * a fitted scikit-learn classifier (``predict`` and ``classes_``), ``lightgbm.LGBMClassifier``
          included. Inputs are flattened to ``(n, -1)``; labels are **indices into** ``classes_``;
        * a ``lightgbm.Booster`` with a binary / cross-entropy objective (label ``p > 0.5``) or a multiclass
          one (argmax of the probabilities). Inputs are flattened to ``(n, -1)``;
        * any other callable taking a numpy batch ``(n, *input_shape)`` and returning labels ``(n,)`` or
          scores ``(n, K)`` (argmax);
        * a :class:`LabelModel`, returned as is (so its counters keep counting).
    n_classes
        Number of classes, used to check labels. Inferred for scikit-learn and LightGBM models (a different
        value is an error); ``None`` for torch modules and callables leaves labels checked only for being
        ``>= 0``.
    device
        For torch modules only: the device to send inputs to. Defaults to the module's own device; useful for
        a module without parameters. Must agree with where its parameters are.
    batch_size
        Largest number of inputs per model invocation; larger batches are split. ``None``: one invocation per
        batch.

    Returns
    -------
    LabelModel
        Callable ``(n, *input_shape) -> int64 (n,)``, with ``n_classes`` and the query counters ``calls`` and
        ``samples``.

    Raises
    ------
    TypeError
        If the model is of no supported kind (e.g. an unfitted estimator or a regression Booster).
    ValueError
        If an option is invalid or contradicts the model (``n_classes``, ``device``).
    """
    n_classes = check_n_classes(n_classes)
    batch_size = check_batch_size(batch_size)
    if device is not None and not _is_torch_module(model):
        raise ValueError(f"device applies to torch modules only, not to {type(model).__name__}")

    if isinstance(model, LabelModel):
        if batch_size is not None:
            raise ValueError("model is already a LabelModel; give batch_size when creating it")
        _check_consistent(n_classes, model.n_classes, "the LabelModel")
        return model
    if _is_torch_module(model):
        from .torch_adapter import torch_label_model  # torch is imported only for torch models

        return torch_label_model(model, n_classes, device, batch_size)
    if is_lightgbm_booster(model):
        label_model = booster_label_model(model, batch_size)
    elif is_sklearn_classifier(model):
        label_model = sklearn_label_model(model, batch_size)
    elif callable(model):
        return callable_label_model(model, n_classes, batch_size)
    elif callable(getattr(model, "predict", None)):
        raise TypeError(
            f"{type(model).__name__} has predict() but no classes_: if it is a classifier, fit it first; "
            "otherwise pass a callable that returns labels, "
            "e.g. lambda x: model.predict(x.reshape(len(x), -1))"
        )
    else:
        raise TypeError(
            f"unsupported model type {type(model).__name__}: expected a torch.nn.Module, a fitted "
            "scikit-learn or LightGBM classifier, a lightgbm.Booster, or a callable returning labels or "
            "scores"
        )
    _check_consistent(n_classes, label_model.n_classes, type(model).__name__)
    return label_model


def _check_consistent(given: int | None, inferred: int | None, what: str) -> None:
    if given is not None and inferred is not None and given != inferred:
        raise ValueError(f"n_classes={given} was given but {what} has {inferred} classes")
