"""The hard-label interface every adapter produces, and the output checks they share.

:class:`LabelModel` counts what it was asked (``calls`` and ``samples``) and checks every answer. It needs
only numpy: torch tensors are recognised when torch is already imported (a tensor cannot exist otherwise).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Batch", "LabelModel", "ModelOutputError", "check_batch_size", "check_n_classes"]

Batch = Any  # a numpy array, or a torch.Tensor for torch models


def _torch() -> Any:
    """The torch module if something already imported it, else None (never imports torch)."""
    return sys.modules.get("torch")


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
    copies_input
        Whether ``invoke`` already hands the model memory of its own (the torch adapter's move to the model's
        device and dtype copies, or it clones); otherwise every chunk is copied before ``invoke`` sees it.
    piecewise_constant
        Whether the model is a tree ensemble (labels constant between its splits' thresholds), which the attack
        tells its solver (``zeroopt.SolverContext(piecewise_constant=True)``).
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

    Notes
    -----
    The model is given its own copy of every chunk: a model that normalises its input in place cannot change
    the points the attack measures and keeps.
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
        copies_input: bool = False,
        check_input: Callable[[Batch], None] | None = None,
        piecewise_constant: bool = False,
        device: Any = None,
    ) -> None:
        self._invoke = invoke
        self.device = device  # a torch model's device, where the attack may compute (ModelOptions.arrays)
        self._check_model_input = check_input
        self._decode = decode
        self.kind = kind
        self.piecewise_constant = bool(piecewise_constant)  # a tree model: its labels change only across splits
        self.n_classes = check_n_classes(n_classes)
        self.batch_size = check_batch_size(batch_size)
        self._takes_tensor = takes_tensor
        self._copies_input = copies_input
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

        Any exception raised carries ``samples_sent``: how many of the batch's inputs the model was sent
        before the failure (the chunk it failed on included; chunks after it are never sent).
        """
        sent_before = self.samples
        try:
            x = self._check_input(x)
            if self._check_model_input is not None:
                self._check_model_input(x)
            n = int(x.shape[0])
            if n == 0:
                return np.empty(0, dtype=np.int64)
            if self.batch_size is None or n <= self.batch_size:
                return self._query(x)
            step = self.batch_size
            return np.concatenate([self._query(x[start : start + step]) for start in range(0, n, step)])
        except BaseException as err:
            # How many of this batch's inputs reached the model (the failing chunk included), so that a
            # caller who paid for the whole batch can give back the rest.
            err.samples_sent = self.samples - sent_before  # type: ignore[attr-defined]
            raise

    @property
    def score_width(self) -> int | None:
        """Scores per input the model returned (``K``), once it has returned scores; ``None`` before or for labels."""
        return self._width

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
        torch = _torch()
        if torch is not None and isinstance(x, torch.Tensor):
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
            # (a finite sum has finite terms: one pass, no temporary; an overflowing sum takes the full check)
            finite = bool(np.isfinite(x.sum()) or np.isfinite(x).all())
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
            raw = self._invoke(chunk if self._copies_input else _own_copy(chunk))
        except SystemExit as err:  # the model's own code: an error of the model, not the end of the program
            raise ModelOutputError(f"the {self.kind} model called sys.exit({err.code!r}) instead of returning "
                                   f"labels or scores (input: shape {tuple(chunk.shape)})") from None
        except Exception as err:
            hint = ""
            torch = _torch()
            if isinstance(err, MemoryError) or (torch is not None and isinstance(err, torch.cuda.OutOfMemoryError)):
                hint = ("; pass a smaller batch size: attack(..., model_options=ModelOptions(batch_size=...)) or "
                        "as_label_model(..., batch_size=...)")
            elif n > 1:
                hint = (f"; if the model cannot take {n} inputs in one call, pass the most it takes as batch_size: "
                        "attack(..., model_options=ModelOptions(batch_size=...)) or "
                        "as_label_model(..., batch_size=...)")
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


def _own_copy(chunk: Batch) -> Batch:
    """A copy of ``chunk`` that the model may write into (normalising in place is common) without touching
    the caller's array, from which the attack takes its distances and best points."""
    torch = _torch()
    if torch is not None and isinstance(chunk, torch.Tensor):
        return chunk.clone()
    return np.array(chunk, order="C", copy=True)


# --------------------------------------------------------------------------------------- output checking


def describe(raw: Any) -> str:
    """Short description of a model output for error messages."""
    shape = getattr(raw, "shape", None)
    dtype = getattr(raw, "dtype", None)
    if shape is not None:
        return f"{type(raw).__name__} of shape {tuple(shape)} and dtype {dtype}"
    return type(raw).__name__


def _as_numpy_output(raw: Any, kind: str) -> np.ndarray:
    torch = _torch()
    if torch is not None and isinstance(raw, torch.Tensor):
        if raw.is_complex():
            raise ModelOutputError(f"the {kind} model returned complex values ({describe(raw)}); expected real "
                                   "labels (n,) or scores (n, K)")
        tensor = raw.detach().cpu()
        if tensor.dtype in (torch.float16, torch.bfloat16):
            tensor = tensor.float()  # numpy has no bfloat16
        return tensor.numpy()
    try:
        out = np.asarray(raw)
    except Exception as err:  # ragged lists and the like
        raise ModelOutputError(f"the {kind} model returned {describe(raw)}, which is not an array") from err
    if np.iscomplexobj(out):
        raise ModelOutputError(f"the {kind} model returned complex values ({describe(raw)}); expected real labels "
                               "(n,) or scores (n, K)")
    if not (np.issubdtype(out.dtype, np.number) or out.dtype == np.bool_):
        raise ModelOutputError(
            f"the {kind} model returned {describe(raw)}; expected numeric labels (n,) or scores (n, K)"
        )
    return out


def decode_labels_or_scores(
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
        f"the {kind} model returned {describe(out)} for {n} inputs; expected labels of shape ({n},) "
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



def flatten(chunk: Batch) -> np.ndarray:
    return np.asarray(chunk).reshape(chunk.shape[0], -1)


def _n_features(model: Any) -> int | None:
    count = getattr(model, "n_features_in_", None)
    return int(count) if isinstance(count, int | np.integer) else None


def check_width(chunk: Batch, expected: int | None, what: str) -> None:
    width = int(np.prod(chunk.shape[1:]))
    if expected is not None and width != expected:
        raise ValueError(
            f"the {what} was fitted on {expected} features but each input has shape {tuple(chunk.shape[1:])} "
            f"= {width} values; pass inputs of the shape the model was trained on"
        )


def check_n_classes(n_classes: int | None) -> int | None:
    if n_classes is None:
        return None
    if isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer) or n_classes < 2:
        raise ValueError(f"n_classes must be an integer >= 2 or None, got {n_classes!r}")
    return int(n_classes)


def check_batch_size(batch_size: int | None) -> int | None:
    if batch_size is None:
        return None
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer or None, got {batch_size!r}")
    return int(batch_size)
