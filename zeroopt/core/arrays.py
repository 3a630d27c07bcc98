"""Arrays from any library: the namespace a run computes in, and the few conversions its parts need.

A run computes in the namespace of its starting point: numpy for a numpy ``x0``, and for any other array
library (a torch tensor on a GPU, say) the Python array API standard, reached through ``array-api-compat``
(``pip install array-api-compat``). Randomness is drawn on the host by the run's ``numpy.random.Generator`` and
moved to the arrays' device once per draw, so a seed gives the same draws in every namespace. numpy arrays take
numpy's own functions, exactly as a numpy-only zeroopt would call them.

Examples
--------
>>> import numpy as np
>>> from zeroopt.core.arrays import namespace, like, norm
>>> x = np.ones(4)
>>> namespace(x) is np, norm(like(np.array([3.0, 4.0]), x))
(True, 5.0)
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["copy", "distance", "flat", "host", "is_foreign", "is_numpy", "like", "namespace", "norm", "rows", "same",
           "take", "zeros_like"]

INSTALL_HINT = "pip install array-api-compat"


def is_numpy(a: Any) -> bool:
    """Whether ``a`` is a numpy array or scalar (or a Python number), which numpy's own functions serve."""
    return isinstance(a, (np.ndarray, np.generic, float, int))


def is_foreign(a: Any) -> bool:
    """Whether ``a`` is an array of another library than numpy (a torch tensor, a CuPy or JAX array, ...)."""
    if is_numpy(a) or a is None:
        return False
    if hasattr(a, "__array_namespace__"):
        return True
    try:
        from array_api_compat import is_array_api_obj
    except ImportError:
        return type(a).__module__.split(".")[0] in ("torch", "cupy", "jax", "jaxlib", "dask")
    return bool(is_array_api_obj(a))


def namespace(*arrays: Any) -> Any:
    """The array namespace of ``arrays``: ``numpy`` itself for numpy arrays, else the array API namespace."""
    if all(is_numpy(a) or a is None for a in arrays):
        return np
    try:
        from array_api_compat import array_namespace
    except ImportError:
        kinds = sorted({type(a).__module__.split(".")[0] for a in arrays if not is_numpy(a)})
        raise ImportError(f"zeroopt computes on {', '.join(kinds)} arrays through the array API standard: "
                          f"{INSTALL_HINT}") from None
    return array_namespace(*(a for a in arrays if a is not None and not is_numpy(a)))


def like(values: Any, ref: Any) -> Any:
    """``values`` as an array of ``ref``'s namespace, device and (floating) dtype; numpy ``ref``: as it is.

    For numpy arrays nothing is converted or copied, so numpy runs stay exactly what they were.
    """
    if is_numpy(ref):
        return values
    xp = namespace(ref)
    if not is_numpy(values) and namespace(values) is xp and values.device == ref.device and values.dtype == ref.dtype:
        return values
    from array_api_compat import device

    return xp.asarray(np.asarray(values, dtype=float) if is_numpy(values) else values, dtype=ref.dtype,
                      device=device(ref))


def host(a: Any) -> np.ndarray:
    """``a`` as a numpy array on the host (a copy only when it lives elsewhere)."""
    if is_numpy(a):
        return np.asarray(a)
    from array_api_compat import to_device

    return np.asarray(to_device(a, "cpu"))


def flat(a: Any) -> Any:
    """``a`` as a flat float vector in its own namespace (numpy: ``np.asarray(a, dtype=float).ravel()``)."""
    return a.reshape(-1) if is_foreign(a) else np.asarray(a, dtype=float).ravel()


def same(a: Any, b: Any) -> bool:
    """Whether two arrays hold the same values (``np.array_equal``; arrays of two namespaces never do)."""
    if is_foreign(a) or is_foreign(b):
        return is_foreign(a) and is_foreign(b) and a.shape == b.shape and bool(namespace(a).all(a == b))
    return bool(np.array_equal(a, b))


def copy(a: Any) -> Any:
    """A copy of ``a`` in its own namespace (what an objective may write into)."""
    return a.copy() if isinstance(a, np.ndarray) else namespace(a).asarray(a, copy=True)


def norm(a: Any) -> float:
    """The Euclidean norm of a vector, as a Python float."""
    if is_numpy(a):
        return float(np.linalg.norm(a))
    return float(namespace(a).linalg.vector_norm(a))


def distance(a: Any, b: Any) -> float:
    """The Euclidean distance between two points of the same array library, as a Python float."""
    return norm(a - b if is_foreign(a) else np.asarray(a) - np.asarray(b))


def take(a: Any, index: np.ndarray) -> Any:
    """The rows of ``a`` at the host integer ``index`` (numpy: ``a[index]``)."""
    if is_numpy(a):
        return a[index]
    from array_api_compat import device

    xp = namespace(a)
    return xp.take(a, xp.asarray(np.asarray(index, dtype=np.int64), device=device(a)), axis=0)


def zeros_like(a: Any) -> Any:
    """Zeros of ``a``'s shape, dtype and device."""
    return np.zeros_like(a) if is_numpy(a) else namespace(a).zeros_like(a)


def rows(a: Any, keep: np.ndarray) -> Any:
    """The rows of ``a`` where the host boolean mask ``keep`` is true (as boolean indexing: a copy)."""
    if is_numpy(a):
        return a[keep]
    from array_api_compat import device

    return a[namespace(a).asarray(np.flatnonzero(keep), device=device(a))]
