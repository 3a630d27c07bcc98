"""Directions toward uniform random points of a box: the start of HopSkipJump and the Boundary Attack.

From a point x inside a box [lower, upper], the direction to a uniform random point of the box is not a
zero-mean random direction: it points, on average, toward the box's centre. For an image classifier that is
a loss of contrast plus noise, which crosses a decision boundary much sooner than a zero-mean perturbation
of the same length (what it was measured against: docs/defaults.md).
:class:`BoxDirections` draws such directions for any problem whose variable lives in a box.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["BoxDirections"]


@dataclass(frozen=True)
class BoxDirections:
    """Unit directions ``(z - x) / ‖z - x‖`` for ``z`` uniform in a box around a point ``x``.

    Parameters
    ----------
    lower, upper
        The box's offsets from the point, ``lower <= 0 <= upper`` (scalars or one value per coordinate):
        ``lower = box_low - x`` and ``upper = box_high - x``.

    Notes
    -----
    ``E[u uᵀ]`` is not isotropic (the directions lean toward the box's centre), so :meth:`scale` returns
    ``d`` as for any unit-norm sampler: fit for candidate searches and sign estimators, a preconditioned
    (biased) gradient for a forward-difference estimate.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([0.1, 0.9, 0.5])
    >>> s = BoxDirections(0.0 - x, 1.0 - x)
    >>> u = s.sample(np.random.default_rng(0), 200, 3, 0)
    >>> u.shape, bool(np.allclose(np.linalg.norm(u, axis=1), 1.0))
    ((200, 3), True)
    >>> bool(u[:, 0].mean() > 0 > u[:, 1].mean())  # toward the centre: up from 0.1, down from 0.9
    True
    """

    lower: ArrayLike
    upper: ArrayLike

    def __post_init__(self) -> None:
        lo, hi = np.asarray(self.lower, dtype=float), np.asarray(self.upper, dtype=float)
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError("the box's offsets must be finite")
        if np.any(lo > 0) or np.any(hi < 0):
            raise ValueError("the point must lie inside the box: need lower <= 0 <= upper for every coordinate")
        if not np.any(hi - lo > 0):
            raise ValueError("the box is a single point: it has no direction to offer")

    def offsets(self, rng: np.random.Generator, q: int, d: int) -> NDArray[np.float64]:
        """``(q, d)`` offsets ``z - x`` to uniform random points ``z`` of the box (not normalised)."""
        lo, hi = np.asarray(self.lower, dtype=float), np.asarray(self.upper, dtype=float)
        if lo.size not in (1, d) or hi.size not in (1, d):
            raise ValueError(f"the box has {max(lo.size, hi.size)} coordinates, the problem d = {d}")
        z = lo.reshape(-1) + rng.uniform(0.0, 1.0, (q, d)) * (hi - lo).reshape(-1)
        norm = np.linalg.norm(z, axis=1, keepdims=True)
        # A draw exactly at the point (probability 0 unless the box is tiny) becomes a draw toward the far corner.
        far = np.broadcast_to(np.where(np.abs(hi) >= np.abs(lo), hi, lo).reshape(-1), (d,))
        return np.where(norm > 0, z, far)

    def sample(self, rng: np.random.Generator, q: int, d: int, iteration: int) -> NDArray[np.float64]:
        z = self.offsets(rng, q, d)
        return z / np.linalg.norm(z, axis=1, keepdims=True)

    def scale(self, d: int) -> float:
        return float(d)
