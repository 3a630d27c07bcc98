"""Input boxes: scalar ``(lower, upper)`` or per-feature arrays, normalised to two flat float arrays.

Images live in one global range (``(0, 1)``), tabular data does not: each feature of HIGGS has its own range,
and a box that is the global range of all features lets an attack move a feature far outside the values it
ever takes. ``bounds=(lo, hi)`` therefore accepts scalars or arrays broadcastable to one input's shape; every
consumer (the attack, its boundary oracle, the exact tree solver) works with the two flat arrays returned by
:func:`flat_bounds`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["FlatBounds", "check_inside", "flat_bounds"]

FlatBounds = tuple[NDArray[np.float64], NDArray[np.float64]]


def flat_bounds(bounds: Any, input_shape: tuple[int, ...]) -> FlatBounds:
    """``(lower, upper)`` as two flat float64 arrays of one input's size, checked.

    Parameters
    ----------
    bounds
        ``(lower, upper)``: scalars or arrays broadcastable to ``input_shape`` (e.g. one value per feature of
        a tabular input, or per channel as ``(C, 1, 1)``).
    input_shape
        Shape of one input (without the batch axis).

    Returns
    -------
    (lo, hi) : tuple of numpy.ndarray
        Flat float64 arrays of ``prod(input_shape)`` values.

    Raises
    ------
    ValueError
        When ``bounds`` is not a pair, does not broadcast to ``input_shape``, holds NaN, or has
        ``lower >= upper`` somewhere.

    Examples
    --------
    >>> lo, hi = flat_bounds((0.0, [1.0, 2.0]), (2,))
    >>> lo.tolist(), hi.tolist()
    ([0.0, 0.0], [1.0, 2.0])
    """
    try:
        lower, upper = bounds
    except (TypeError, ValueError):
        raise ValueError(
            f"bounds must be a pair (lower, upper) of scalars or arrays broadcastable to the input shape "
            f"{tuple(input_shape)}, got {bounds!r}"
        ) from None
    dim = int(np.prod(input_shape, dtype=np.int64))
    out = []
    for name, b in (("lower", lower), ("upper", upper)):
        try:
            arr = np.asarray(b, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"bounds: the {name} bound must be numeric, got {b!r}") from None
        try:
            arr = np.broadcast_to(arr, tuple(input_shape))
        except ValueError:
            raise ValueError(
                f"bounds: the {name} bound has shape {arr.shape}, which does not broadcast to the input shape "
                f"{tuple(input_shape)}; pass a scalar or one value per feature"
            ) from None
        if np.isnan(arr).any():
            raise ValueError(f"bounds: the {name} bound holds NaN")
        out.append(np.array(arr, dtype=np.float64).reshape(dim))
    lo, hi = out
    bad = np.flatnonzero(~(lo < hi))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"bounds must have lower < upper elementwise; at flat feature {i} lower = {lo[i]:.6g} >= upper = "
            f"{hi[i]:.6g} ({bad.size} feature(s) in all). A feature that never varies still needs lower < upper"
        )
    return lo, hi


def check_inside(x: NDArray[Any], lo: NDArray[np.float64], hi: NDArray[np.float64], name: str = "x0") -> None:
    """Raise ``ValueError`` naming the first input and feature of the batch ``x`` outside ``[lo, hi]``."""
    flat = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    outside = (flat < lo) | (flat > hi)
    if outside.any():
        i, j = (int(v) for v in np.argwhere(outside)[0])
        raise ValueError(
            f"{name} lies outside the bounds: input {i}, flat feature {j} is {flat[i, j]:.6g}, outside "
            f"[{lo[j]:.6g}, {hi[j]:.6g}] ({int(outside.sum())} value(s) in all, on {int(outside.any(1).sum())} "
            "input(s)); scale the inputs to the model's domain or pass bounds=(lower, upper) that contain them"
        )
