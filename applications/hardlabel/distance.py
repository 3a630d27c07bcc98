"""The distance an attack minimises: L2 (the paper's) or L∞, measured the same way everywhere.

The boundary searches parametrise each ray by its distance: the point at λ along θ is ``x0 + λ θ/‖θ‖``
in the attack's norm, so λ — every value, level, hint and cap the solver sees — *is* that distance (before
clipping to the input bounds), and g(θ) stays a function of θ's direction only. The solver needs no change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from zeroopt.arrays import is_foreign, namespace
from zeroopt.arrays import norm as vector_norm

__all__ = ["L2", "LINF", "Distance", "as_distance"]


@dataclass(frozen=True)
class Distance:
    """A norm on flat perturbations: ``ord`` as :func:`numpy.linalg.norm` takes it (``None``: L2)."""

    name: str
    ord: float | None

    def length(self, theta: NDArray[np.float64]) -> float:
        """‖θ‖ of one flat vector (of any array namespace)."""
        if is_foreign(theta):
            return vector_norm(theta) if self.ord is None else float(self.lengths(theta[None, :])[0])
        return float(np.linalg.norm(theta, ord=self.ord))

    def lengths(self, thetas: Any) -> Any:
        """‖θ‖ of each row of another library's ``(m, d)`` array, in its namespace."""
        xp = namespace(thetas)
        return xp.linalg.vector_norm(thetas, axis=1) if self.ord is None else xp.max(xp.abs(thetas), axis=1)

    def of(self, deltas: NDArray[np.float64]) -> NDArray[np.float64]:
        """‖δ‖ of each row of ``deltas`` ``(n, d)``."""
        return np.linalg.norm(deltas, ord=self.ord, axis=1)


L2 = Distance("L2", None)
LINF = Distance("L∞", np.inf)
_NAMES = {2: L2, "2": L2, "l2": L2, np.inf: LINF, "inf": LINF, "linf": LINF}


def as_distance(norm: Any) -> Distance:
    """``2`` / ``"l2"`` or ``np.inf`` / ``"inf"`` / ``"linf"`` as a :class:`Distance`.

    >>> as_distance(2).name, as_distance(np.inf).name
    ('L2', 'L∞')
    """
    if isinstance(norm, Distance):
        return norm
    key = norm.lower() if isinstance(norm, str) else norm
    try:
        return _NAMES[key]
    except (KeyError, TypeError):
        raise ValueError(f"norm must be 2 (L2) or np.inf (L∞), got {norm!r}") from None
