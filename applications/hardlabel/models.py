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
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

__all__ = ["LabelModel", "ModelOutputError", "as_label_model", "infer_n_classes"]

# LightGBM objectives (and their aliases) whose Booster.predict gives P(class 1) of shape (n,).
_LGBM_BINARY = frozenset({"binary", "cross_entropy", "xentropy"})
# ... and those whose predict gives class probabilities of shape (n, K).
_LGBM_MULTICLASS = frozenset({"multiclass", "softmax", "multiclassova", "multiclass_ova", "ova", "ovr"})

Batch = np.ndarray | torch.Tensor


class ModelOutputError(RuntimeError):
    """The model raised, or returned something that is not one valid label (or score row) per input."""


class LabelModel:
    """Hard-label view of a classifier: ``labels = label_model(x)``.

    Build one with :func:`as_label_model`; the constructor is for adapters.

    Parameters
    ----------
    invoke
        Calls the model on one chunk of inputs and returns its raw output.
    decode
        Turns the raw output for a chunk of ``n`` inputs into ``int64`` labels ``(n,)`` and the score width
        ``K`` (``None`` when the model returned labels), raising :class:`ModelOutputError` on a malformed
        output.
    kind
        Short name of the adapter, e.g. ``"torch"``.
    n_classes
        Number of classes, or ``None`` when unknown; labels are checked to lie in ``[0, n_classes)``.
    batch_size
        Largest number of inputs sent to the model at once; ``None`` sends each batch whole.
    takes_tensor
        Whether ``invoke`` accepts a ``torch.Tensor`` as is (torch models); otherwise tensors become numpy
        arrays.
    check_input
        Optional check of a whole batch before anything is sent (e.g. the feature count of a fitted model); it
        raises ``ValueError`` for input the model cannot take.

    Attributes
    ----------
    n_classes : int or None
        Number of classes, when known.
    kind : str
        Which adapter this is.
    calls : int
        Number of times the model was invoked (a batch larger than ``batch_size`` takes several).
    samples : int
        Number of inputs sent to the model: the query count. Both counters are incremented when a chunk is
        sent, so a chunk on which the model fails still counts.
    """

    def __init__(
        self,
        invoke: Callable[[Batch], Any],
        decode: Callable[[Any, int], tuple[np.ndarray, int | None]],
        *,
        kind: str,
        n_classes: int | None = None,
        batch_size: int | None = None,
        takes_tensor: bool = False,
        check_input: Callable[[Batch], None] | None = None,
    ) -> None:
        self._invoke = invoke
        self._check_model_input = check_input
        self._decode = decode
        self.kind = kind
        self.n_classes = _check_n_classes(n_classes)
        self.batch_size = _check_batch_size(batch_size)
        self._takes_tensor = takes_tensor
        # Score width seen so far when n_classes is unknown: a model whose width changes between calls is
        # broken.
        self._width: int | None = None
        self.calls = 0
        self.samples = 0

    def __call__(self, x: Batch) -> np.ndarray:
        """Labels of a batch.

        Parameters
        ----------
        x
            ``(n, *input_shape)`` float32 or float64 numpy array, or a floating ``torch.Tensor`` (passed to a
            torch model without a round trip through numpy). Must be finite.

        Returns
        -------
        numpy.ndarray
            ``int64`` labels, shape ``(n,)``. An empty batch returns an empty array without calling the model.

        Raises
        ------
        TypeError
            If ``x`` is not a floating array or tensor.
        ValueError
            If ``x`` has no batch axis or holds NaN or inf.
        ModelOutputError
            If the model raises or returns anything but one valid label or score row per input.
        """
        x = self._check_input(x)
        if self._check_model_input is not None:
            self._check_model_input(x)
        n = int(x.shape[0])
        if n == 0:
            return np.empty(0, dtype=np.int64)
        if self.batch_size is None or n <= self.batch_size:
            return self._query(x)  # no slicing: a torch model gets the caller's tensor object itself
        step = self.batch_size
        return np.concatenate([self._query(x[start : start + step]) for start in range(0, n, step)])

    def reset_counters(self) -> None:
        """Set ``calls`` and ``samples`` back to zero."""
        self.calls = 0
        self.samples = 0

    def __repr__(self) -> str:
        return (
            f"LabelModel(kind={self.kind!r}, n_classes={self.n_classes}, batch_size={self.batch_size}, "
            f"calls={self.calls}, samples={self.samples})"
        )

    def _check_input(self, x: Batch) -> Batch:
        if isinstance(x, torch.Tensor):
            if not x.is_floating_point():
                raise TypeError(f"x must be a floating tensor, got {x.dtype}; convert it with x.float()")
            finite = bool(torch.isfinite(x).all())
            if not self._takes_tensor:
                x = x.detach().cpu().numpy()
        elif isinstance(x, np.ndarray):
            if x.dtype not in (np.float32, np.float64):
                raise TypeError(
                    f"x must be a float32 or float64 array, got {x.dtype}; convert it with "
                    "x.astype(np.float32) after scaling it to the range the model expects"
                )
            finite = bool(np.isfinite(x).all())
        else:
            raise TypeError(
                "x must be a numpy array or torch.Tensor of shape (n, *input_shape), "
                f"got {type(x).__name__}; use np.asarray(x, dtype=np.float32)"
            )
        if x.ndim < 2:
            raise ValueError(
                f"x must have a batch axis, shape (n, *input_shape), got shape {tuple(x.shape)}; "
                "for a single input use x[None]"
            )
        if not finite:
            raise ValueError("x holds NaN or inf; a label for such an input is meaningless")
        return x

    def _query(self, chunk: Batch) -> np.ndarray:
        n = int(chunk.shape[0])
        self.calls += 1
        self.samples += n
        try:
            raw = self._invoke(chunk)
        except Exception as err:
            hint = ""
            if isinstance(err, MemoryError | torch.cuda.OutOfMemoryError):
                hint = "; pass a smaller batch_size to as_label_model"
            raise ModelOutputError(
                f"the {self.kind} model raised {type(err).__name__}: {err} "
                f"(input: shape {tuple(chunk.shape)}, dtype {chunk.dtype}){hint}"
            ) from err
        labels, width = self._decode(raw, n)
        if width is not None:
            if self._width is not None and width != self._width:
                raise ModelOutputError(
                    f"the {self.kind} model returned {width} scores per input, "
                    f"but {self._width} on an earlier call"
                )
            self._width = width
        return _check_label_range(labels, self.n_classes, self.kind)


# --------------------------------------------------------------------------------------- output checking


def _describe(raw: Any) -> str:
    """Short description of a model output for error messages."""
    shape = getattr(raw, "shape", None)
    dtype = getattr(raw, "dtype", None)
    if shape is not None:
        return f"{type(raw).__name__} of shape {tuple(shape)} and dtype {dtype}"
    return type(raw).__name__


def _as_numpy_output(raw: Any, kind: str) -> np.ndarray:
    if isinstance(raw, torch.Tensor):
        tensor = raw.detach().cpu()
        if tensor.dtype in (torch.float16, torch.bfloat16):
            tensor = tensor.float()  # numpy has no bfloat16
        return tensor.numpy()
    try:
        out = np.asarray(raw)
    except Exception as err:  # ragged lists and the like
        raise ModelOutputError(f"the {kind} model returned {_describe(raw)}, which is not an array") from err
    if not (np.issubdtype(out.dtype, np.number) or out.dtype == np.bool_):
        raise ModelOutputError(
            f"the {kind} model returned {_describe(raw)}; expected numeric labels (n,) or scores (n, K)"
        )
    return out


def _decode_labels_or_scores(
    raw: Any, n: int, n_classes: int | None, kind: str
) -> tuple[np.ndarray, int | None]:
    """Labels from an output that is either labels ``(n,)`` or scores ``(n, K)`` (argmax)."""
    out = _as_numpy_output(raw, kind)
    if out.shape == (n,):
        return _integral_labels(out, kind), None
    if out.ndim == 2 and out.shape[0] == n and out.shape[1] >= 2:
        if n_classes is not None and out.shape[1] != n_classes:
            raise ModelOutputError(
                f"the {kind} model returned scores of shape {out.shape}, "
                f"expected (n, n_classes) = ({n}, {n_classes})"
            )
        if not np.isfinite(out).all():
            raise ModelOutputError(
                f"the {kind} model returned {int(np.size(out) - np.isfinite(out).sum())} NaN/inf scores "
                f"in an output of shape {out.shape}; scores must be finite"
            )
        return np.argmax(out, axis=1).astype(np.int64, copy=False), int(out.shape[1])
    raise ModelOutputError(
        f"the {kind} model returned {_describe(out)} for {n} inputs; expected labels of shape ({n},) "
        f"or scores of shape ({n}, K) with K >= 2"
    )


def _integral_labels(out: np.ndarray, kind: str) -> np.ndarray:
    if np.issubdtype(out.dtype, np.floating):
        if not np.isfinite(out).all():
            raise ModelOutputError(f"the {kind} model returned NaN/inf labels: {out[~np.isfinite(out)][:5]}")
        if not (out == np.round(out)).all():
            raise ModelOutputError(
                f"the {kind} model returned non-integer labels of shape {out.shape}, e.g. "
                f"{out[out != np.round(out)][:5]}; if these are probabilities of class 1, return "
                "(p > 0.5).astype(int) instead, or scores of shape (n, K)"
            )
    return out.astype(np.int64)


def _check_label_range(labels: np.ndarray, n_classes: int | None, kind: str) -> np.ndarray:
    low = int(labels.min())
    high = int(labels.max())
    if low < 0 or (n_classes is not None and high >= n_classes):
        expected = "labels >= 0" if n_classes is None else f"labels in [0, {n_classes})"
        raise ModelOutputError(f"the {kind} model returned labels from {low} to {high}; expected {expected}")
    return labels


# ------------------------------------------------------------------------------------------------ torch


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


def _torch_label_model(
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
        if isinstance(chunk, np.ndarray):
            # torch refuses negative strides and warns on read-only buffers; a copy costs less than a forward.
            if not (chunk.flags.c_contiguous and chunk.flags.writeable):
                chunk = np.array(chunk, order="C")
            chunk = torch.from_numpy(chunk)
        with torch.inference_mode():
            return module(chunk.to(device=run_on, dtype=dtype))

    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        if not isinstance(raw, torch.Tensor):
            raise ModelOutputError(
                f"the torch model returned {_describe(raw)}; expected a tensor of logits (n, K). "
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
        return _decode_labels_or_scores(raw, n, n_classes, "torch")

    return LabelModel(
        invoke, decode, kind="torch", n_classes=n_classes, batch_size=batch_size, takes_tensor=True
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


# ------------------------------------------------------------------------------------------ scikit-learn


def _is_sklearn_classifier(model: Any) -> bool:
    # hasattr is False for unfitted estimators: sklearn's NotFittedError is an AttributeError.
    return callable(getattr(model, "predict", None)) and hasattr(model, "classes_")


def _flatten(chunk: Batch) -> np.ndarray:
    return np.asarray(chunk).reshape(chunk.shape[0], -1)


def _n_features(model: Any) -> int | None:
    count = getattr(model, "n_features_in_", None)
    return int(count) if isinstance(count, int | np.integer) else None


def _check_width(chunk: Batch, expected: int | None, what: str) -> None:
    width = int(np.prod(chunk.shape[1:]))
    if expected is not None and width != expected:
        raise ValueError(
            f"the {what} was fitted on {expected} features but each input has shape {tuple(chunk.shape[1:])} "
            f"= {width} values; pass inputs of the shape the model was trained on"
        )


def _sklearn_label_model(model: Any, batch_size: int | None) -> LabelModel:
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
        _check_width(x, n_features, name)

    def invoke(chunk: Batch) -> Any:
        return model.predict(_flatten(chunk))

    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        predicted = np.asarray(raw)
        if predicted.shape != (n,):
            raise ModelOutputError(
                f"{name}.predict returned {_describe(predicted)} for {n} inputs; expected shape ({n},)"
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
        invoke, decode, kind="sklearn", n_classes=classes.size, batch_size=batch_size, check_input=check_input
    )


# ---------------------------------------------------------------------------------------------- LightGBM


def _is_lightgbm_booster(model: Any) -> bool:
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


def _booster_n_classes(booster: Any) -> int:
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


def _booster_label_model(booster: Any, batch_size: int | None) -> LabelModel:
    k = _booster_n_classes(booster)
    binary = _booster_objective(booster) in _LGBM_BINARY
    n_features = int(booster.num_feature())

    def check_input(x: Batch) -> None:
        _check_width(x, n_features, "lightgbm.Booster")

    def invoke(chunk: Batch) -> Any:
        return booster.predict(_flatten(chunk))

    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        out = np.asarray(raw)
        expected = (n,) if binary else (n, k)
        if out.shape != expected:
            raise ModelOutputError(
                f"lightgbm.Booster.predict returned {_describe(out)}; "
                f"expected probabilities of shape {expected}"
            )
        if not np.isfinite(out).all():
            raise ModelOutputError("lightgbm.Booster.predict returned NaN/inf probabilities")
        if binary:
            # Same tie rule as LGBMClassifier.predict (argmax of [1 - p, p]): p == 0.5 is class 0.
            return (out > 0.5).astype(np.int64), None
        return np.argmax(out, axis=1).astype(np.int64), k

    return LabelModel(
        invoke, decode, kind="lightgbm", n_classes=k, batch_size=batch_size, check_input=check_input
    )


# ------------------------------------------------------------------------------------------ plain callable


def _callable_label_model(
    fn: Callable[[np.ndarray], Any], n_classes: int | None, batch_size: int | None
) -> LabelModel:
    def decode(raw: Any, n: int) -> tuple[np.ndarray, int | None]:
        return _decode_labels_or_scores(raw, n, n_classes, "callable")

    return LabelModel(fn, decode, kind="callable", n_classes=n_classes, batch_size=batch_size)


# -------------------------------------------------------------------------------------------- public API


def _check_n_classes(n_classes: int | None) -> int | None:
    if n_classes is None:
        return None
    if isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2 or None, got {n_classes!r}")
    return int(n_classes)


def _check_batch_size(batch_size: int | None) -> int | None:
    if batch_size is None:
        return None
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}")
    return int(batch_size)


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
    if isinstance(model, torch.nn.Module):
        return None
    if _is_lightgbm_booster(model):
        try:
            return _booster_n_classes(model)
        except TypeError:
            return None
    if _is_sklearn_classifier(model):
        classes = np.asarray(model.classes_)
        return int(classes.size) if classes.ndim == 1 else None
    return None


def as_label_model(
    model: Any,
    *,
    n_classes: int | None = None,
    device: str | torch.device | None = None,
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
    n_classes = _check_n_classes(n_classes)
    batch_size = _check_batch_size(batch_size)
    if device is not None and not isinstance(model, torch.nn.Module):
        raise ValueError(f"device applies to torch modules only, not to {type(model).__name__}")

    if isinstance(model, LabelModel):
        if batch_size is not None:
            raise ValueError("model is already a LabelModel; give batch_size when creating it")
        _check_consistent(n_classes, model.n_classes, "the LabelModel")
        return model
    if isinstance(model, torch.nn.Module):
        return _torch_label_model(model, n_classes, device, batch_size)
    if _is_lightgbm_booster(model):
        label_model = _booster_label_model(model, batch_size)
    elif _is_sklearn_classifier(model):
        label_model = _sklearn_label_model(model, batch_size)
    elif callable(model):
        return _callable_label_model(model, n_classes, batch_size)
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
