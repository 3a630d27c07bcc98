"""Row-wise reductions of a ``(q, d)`` array that allocate one row, not a second ``(q, d)`` array.

``np.linalg.norm(a, axis=1)`` squares the whole array into a temporary first (two of them: ``conj()`` copies);
at d = 150,528 and q in the hundreds those temporaries are hundreds of MB whose allocation and first touch cost
more than the arithmetic. Row by row, in one reused buffer, numpy's pairwise sum runs over the same contiguous
elements in the same order, so the result is the same to the bit.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .arrays import is_foreign, namespace

__all__ = ["row_norms"]


def row_norms(a: NDArray[np.float64], *, keepdims: bool = False) -> NDArray[np.float64]:
    """``np.linalg.norm(a, axis=1, keepdims=keepdims)`` of a 2-D float array, bit for bit, one row at a time.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.random.default_rng(0).standard_normal((3, 1000))
    >>> bool(np.array_equal(row_norms(a), np.linalg.norm(a, axis=1)))
    True
    """
    if is_foreign(a):  # another library's array: its own norm
        out = namespace(a).linalg.vector_norm(a, axis=1)
        return out[:, None] if keepdims else out
    a = np.asarray(a)
    if a.ndim != 2 or not np.issubdtype(a.dtype, np.floating):
        return np.linalg.norm(a, axis=1, keepdims=keepdims)
    buf = np.empty(a.shape[1], dtype=a.dtype)
    out = np.empty(a.shape[0], dtype=a.dtype)
    for i, row in enumerate(a):
        out[i] = np.add.reduce(np.multiply(row, row, out=buf))
    np.sqrt(out, out=out)
    return out[:, None] if keepdims else out
