"""Checks of what callers pass, shared by :func:`zeroopt.minimize` and the applications built on zeroopt.

Each raises before the first query, with the same type and message wherever the argument is taken:
``TypeError`` for a value of the wrong kind, ``ValueError`` for one of the right kind out of range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .arrays import host, is_foreign, namespace, norm
from .errors import NonFiniteValueError, ObjectiveError

__all__ = [
    "NONE_MESSAGE", "as_scalar_value", "check_budget", "check_callbacks", "check_max_iter", "check_seed",
    "check_target", "check_x0", "non_finite_error",
]

NONE_MESSAGE = "fun returned None — did you forget a return? The objective must return a real number"

#: What an objective's NaN or ±inf value may be taken as: ``"worse"`` than any finite value (answered as +inf, the
#: run goes on) or ``"raise"`` (:class:`~zeroopt.core.errors.NonFiniteValueError` ends the run, its partial result
#: kept).
OnNonFinite = Literal["worse", "raise"]
ON_NON_FINITE: tuple[str, ...] = ("worse", "raise")


def check_on_non_finite(on_non_finite: object) -> OnNonFinite:
    """``on_non_finite`` checked: ``ValueError`` unless one of :data:`ON_NON_FINITE`.

    >>> check_on_non_finite("raise")
    'raise'
    """
    if not isinstance(on_non_finite, str) or on_non_finite not in ON_NON_FINITE:
        raise ValueError(f"on_non_finite must be 'worse' (a NaN or inf value is worse than any finite one, and the "
                         f"run goes on) or 'raise' (NonFiniteValueError ends the run); got {on_non_finite!r}")
    return on_non_finite  # type: ignore[return-value]


def check_budget(budget: object) -> int:
    """``budget`` as an int: ``TypeError`` unless an integer (``100.0`` included), ``ValueError`` unless positive."""
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise TypeError(f"budget must be a positive integer number of queries, got {budget!r}")
    if budget <= 0:
        raise ValueError(f"budget must be a positive integer number of queries, got {budget!r}")
    return int(budget)


_SEED_KINDS = "a non-negative integer, a sequence of them, a numpy Generator or SeedSequence, or None"


def check_seed(seed: object, name: str = "seed") -> Any:
    """``seed`` as :func:`numpy.random.default_rng` takes it, checked: ``TypeError`` for a float, a string, a bool
    or another kind, ``ValueError`` for a negative integer.

    >>> check_seed(3), check_seed([1, 2])
    (3, [1, 2])
    """
    if seed is None or isinstance(seed, (np.random.Generator, np.random.SeedSequence)):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        if seed < 0:
            raise ValueError(f"{name} must be {_SEED_KINDS}; got the negative integer {seed}")
        return int(seed)
    if isinstance(seed, Iterable) and not isinstance(seed, (str, bytes)):
        entries = list(seed)
        for k, entry in enumerate(entries):
            if isinstance(entry, (bool, np.bool_)) or not isinstance(entry, (int, np.integer)):
                raise TypeError(f"{name} must be {_SEED_KINDS}; entry {k} is {entry!r}")
            if entry < 0:
                raise ValueError(f"{name} must be {_SEED_KINDS}; entry {k} is the negative integer {entry}")
        return [int(e) for e in entries]
    raise TypeError(f"{name} must be {_SEED_KINDS}; got {seed!r} ({type(seed).__name__})")


def check_x0(x0: ArrayLike) -> NDArray[np.float64]:
    """A finite, non-empty real array (any shape, a 0-d one included) as float64.

    An array of another library (one with ``__array_namespace__``: a torch tensor, say) is checked on the host
    and returned as it is, so the run computes in its namespace and on its device (:mod:`zeroopt.core.arrays`)."""
    if is_foreign(x0):
        if not namespace(x0).isdtype(x0.dtype, "real floating"):
            raise TypeError(f"x0 must be a floating-point array, got dtype {x0.dtype}; convert it to float64")
        check_x0(host(x0))
        return x0  # type: ignore[return-value]
    arr = np.asarray(x0)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(
            f"x0 must be an array of real numbers, got dtype {arr.dtype}; convert it with np.asarray(x0, dtype=float)"
        )
    if arr.size == 0:
        raise ValueError("x0 is empty; pass the starting point as a non-empty array")
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"x0 contains {int((~np.isfinite(arr)).sum())} non-finite value(s) (NaN or inf); start from a finite point"
        )
    return arr.astype(float)


def check_target(target: object) -> float | None:
    """``None`` or a real number that is not NaN (a NaN target could never be reached, silently)."""
    if target is None:
        return None
    if isinstance(target, bool) or not isinstance(target, (int, float, np.integer, np.floating)):
        raise TypeError(f"target must be a real number or None, got {target!r}")
    if math.isnan(float(target)):
        raise ValueError("target is NaN, which no value can reach; pass a number (or None for no target)")
    return float(target)


def check_max_iter(max_iter: object) -> int | None:
    """``None`` or a non-negative integer."""
    if max_iter is None:
        return None
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, float, np.integer, np.floating)) \
            or int(max_iter) != max_iter or max_iter < 0:
        raise ValueError(f"max_iter must be a non-negative integer or None, got {max_iter!r}")
    return int(max_iter)


def check_callbacks(callbacks: object) -> list[Callable[..., Any]]:
    """A list of callables from one callable or an iterable of them."""
    if callbacks is None:
        return []
    items = [callbacks] if callable(callbacks) else callbacks
    if not isinstance(items, Iterable) or isinstance(items, (str, bytes)):
        raise TypeError(f"callbacks must be a callable or a list of callables, got {type(callbacks).__name__}")
    out = list(items)
    for cb in out:
        if not callable(cb):
            raise TypeError(f"every callback must be callable cb(record) -> bool | None, got {cb!r}")
    return out


# ------------------------------------------------------------------------------- what an objective returns


def as_scalar_value(value: object) -> float:
    """One objective value as a float: :class:`ObjectiveError` (a ``TypeError``) for ``None`` or a non-number."""
    if value is None:
        raise ObjectiveError(NONE_MESSAGE)
    if np.iscomplexobj(value):  # numpy would drop the imaginary part with only a warning
        raise ObjectiveError(f"the objective must return a real number, got {value!r} (complex)")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise ObjectiveError(f"the objective must return a real number, got {value!r}") from err
    if arr.size != 1:
        raise ValueError(f"the objective must return a scalar, got an array of shape {arr.shape}")
    return float(arr.reshape(()))


def non_finite_error(value: float, point: NDArray[np.float64], i: int, m: int) -> NonFiniteValueError:
    """The error for a NaN/inf value at the ``i``-th of ``m`` points."""
    return NonFiniteValueError(
        f"the objective returned {value} at a point with norm {norm(point):.4g} "
        f"(the {i}-th of a batch of {m}); zeroopt needs finite values — check the objective "
        "for overflow or log/sqrt of negatives, or bound the search region"
    )
