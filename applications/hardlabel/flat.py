"""Which pixels the boundary distance g(θ) does not depend on near θ: those its ray has pushed past a bound.

The model sees ``clip(x0 + g θ/‖θ‖)``. A pixel whose point lies past its bound by more than a probe could move it
is clipped whatever the probe does, so g does not depend on it there: a probe's component along it changes no
comparison (zeroopt's ``FlatCoordinates`` request, answered here at no query). The same pixel can also be moved
part of the way back toward its bound for free: the clipped point, and so every label, stays the same, while the
part of θ that pointed out of the box — and with it g, the ray's length to that point — shrinks. Moving it only
part of the way keeps it past the bound, so the model still sees the same point; and a pixel that gets near its
bound in later iterations is probed again, so it can come back into the perturbation.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from zeroopt import FlatMask

__all__ = ["FLAT_MARGIN", "FLAT_PULL", "flat_pixels"]

#: A probe of angle β moves the boundary point by g·β in all, about g·β/√d per pixel: a pixel is flat when its
#: point lies past its bound by more than this many times that.
FLAT_MARGIN = 3.0
#: The share of the way back to its bound a flat pixel's component of θ moves at each request (no query): the pull
#: keeps such pixels from staying out of reach (what it measured: docs/attack.md).
FLAT_PULL = 0.1


def flat_pixels(
    x0: NDArray[np.float64], theta: NDArray[np.float64], value: float, radius: float,
    lo: float | NDArray[np.float64], hi: float | NDArray[np.float64], queries: int,
    *, margin: float = FLAT_MARGIN, pull: float = FLAT_PULL,
) -> FlatMask:
    """The :class:`zeroopt.FlatMask` for the ray from ``x0`` along ``theta`` at distance ``value``.

    Examples
    --------
    >>> import numpy as np
    >>> x0 = np.array([0.0, 0.5, 0.5, 0.5])
    >>> theta = np.array([-0.6, 0.6, 0.4, 0.346])  # pixel 0 points below 0 from a pixel already at 0
    >>> mask = flat_pixels(x0, theta / np.linalg.norm(theta), 0.5, 0.01, 0.0, 1.0, queries=7)
    >>> mask.flat.tolist(), bool(mask.value < 0.5), mask.queries
    ([True, False, False, False], True, 7)
    """
    norm = float(np.linalg.norm(theta))
    if not (np.isfinite(value) and value > 0 and norm > 0):
        return FlatMask(flat=None, queries=queries)
    u = theta / norm
    point = x0 + value * u
    reach = margin * value * radius / np.sqrt(u.size)
    below, above = point < lo - reach, point > hi + reach
    flat = below | above
    if not flat.any():
        return FlatMask(flat=flat, queries=queries)
    # The component at which the pixel's point sits exactly on its bound, at this distance.
    at_bound = (np.where(below, lo, hi) - x0) / value
    moved = u.copy()
    moved[flat] += pull * (at_bound[flat] - u[flat])
    shrink = float(np.linalg.norm(moved))
    # Along the moved ray the same clipped point lies at distance value · shrink: every pixel not flat is where
    # it was, every flat one still past its bound.
    return FlatMask(flat=flat, queries=queries, point=moved / shrink * norm, value=value * shrink)
