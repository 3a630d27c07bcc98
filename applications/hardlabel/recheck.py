"""The final re-check's two rules: which points it labels, and how it asks the model about them.

The best point a boundary search finds lies within ε of the decision boundary, so the model's margin there
is of the order of the arithmetic's own rounding, and a network's logits for the same input can differ in the
last bits between a call with one input and a call with several (the kernels sum in another order): a point the
batched search called adversarial may not be when labelled alone (what that measured: docs/attack.md,
*What the defaults measured*). Hence:

* candidates start a little *beyond* the best point along its ray (perturbation × 1.001, 1.002, ...), where
  the margin is ~1e-3 of the logit gap — orders of magnitude above rounding — for at most 0.1% × ``Verify.queries``
  more distortion;
* each candidate is labelled alone, in its own model call, as anyone checking one adversarial example does;
* the best point itself is the last candidate (with a reserve of two queries or more): where the region a
  targeted attack aims at is a thin sliver along the ray, every point 0.1% further out already belongs to
  another class, yet the point itself, labelled alone, is adversarial — and a re-check of safer versions only
  would report a failure for it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .boundary import BoundaryOracleGroup

__all__ = ["label_alone", "recheck_scales"]


def recheck_scales(reserve: int, step: float) -> NDArray[np.float64]:
    """Perturbation scales of the ``reserve`` re-check candidates, in the order they are preferred.

    ``1 + step``, ``1 + 2 step``, ..., ``1 + (reserve - 1) step``, then ``1`` (the best point itself) last;
    a reserve of one query checks ``1 + step`` only.

    >>> recheck_scales(3, 1e-3).tolist(), recheck_scales(1, 1e-3).tolist()
    ([1.001, 1.002, 1.0], [1.001])
    """
    if reserve < 2:
        return 1.0 + step * np.arange(1, reserve + 1, dtype=np.float64)
    return np.append(1.0 + step * np.arange(1, reserve, dtype=np.float64), 1.0)


def label_alone(
    group: BoundaryOracleGroup, owners: NDArray[np.int64], points: NDArray[np.float64]
) -> NDArray[np.bool_]:
    """Whether each point (already paid for) is adversarial for its owner, one model call per point.

    If a call fails, the points after it were never sent: their owners get those queries back.
    """
    out = np.zeros(len(points), dtype=bool)
    for k in range(len(points)):
        try:
            out[k] = group.query(owners[k : k + 1], points[k : k + 1], record=False)[0]
        except BaseException:
            group.refund_unsent(owners[k + 1 :])
            raise
    return out
