"""A ray from an input along a direction, clipped to the input bounds: where the boundary searches query."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from zeroopt.core.arrays import host, is_foreign, like, namespace

__all__ = ["Bound", "Ray"]

Bound = float | NDArray[np.float64]  # a scalar bound, or one per flat feature (see .bounds.flat_bounds)


class Ray:
    """Points x0 + λ θ/‖θ‖ clipped to the input bounds, for one image.

    The unit ``direction`` is computed from θ when first needed: a comparison's ray asks once, and builds its
    point from θ in the row it is written to, so a round of q probes holds no second q×d array of directions.
    """

    __slots__ = ("_norm", "_theta", "_unit", "lam_max", "x0")

    def __init__(self, x0: NDArray[np.float64], theta: NDArray[np.float64], norm: float, lam_max: float) -> None:
        self.x0, self._theta, self._norm, self.lam_max = x0, theta, norm, lam_max
        self._unit: NDArray[np.float64] | None = None

    @property
    def direction(self) -> NDArray[np.float64]:
        """θ/‖θ‖, a unit vector in the ray's norm."""
        if self._unit is None:
            self._unit = self._theta / self._norm
        return self._unit

    @classmethod
    def make(cls, x0: NDArray[np.float64], theta: NDArray[np.float64], lo: Bound, hi: Bound, *,
             reach: bool = True, length: Callable[[NDArray[np.float64]], float] | None = None) -> Ray | None:
        """The ray from ``x0`` along ``theta``; ``lo``/``hi``: scalars or flat per-feature arrays. Without
        ``reach``, ``lam_max`` is left infinite: enough for a comparison's single query at a given λ (clipped all
        the same), and it spares the pass over every feature that finds where the ray leaves the box.
        ``length``: the norm λ is measured in (default L2), so that the point at λ is that far from ``x0``."""
        if is_foreign(theta):  # the model's device arrays: one row of make_many, the same arithmetic
            norms = None if length is None else np.array([length(theta)])
            return cls.make_many(x0, theta[None, :], lo, hi, reach=reach, norms=norms)[0]
        norm = float(np.linalg.norm(theta)) if length is None else length(theta)
        if not np.isfinite(norm) or norm == 0.0:
            return None
        if not reach:
            return cls(x0, theta, norm, math.inf)
        ray = cls(x0, theta, norm, math.inf)
        u = ray.direction
        with np.errstate(divide="ignore", invalid="ignore"):
            to_bound = np.where(u > 0, (hi - x0) / u, np.where(u < 0, (lo - x0) / u, 0.0))
        ray.lam_max = float(np.max(to_bound))
        return ray

    @classmethod
    def make_many(cls, x0: Any, thetas: Any, lo: Any, hi: Any, *, reach: bool = True,
                  norms: Any = None) -> list[Ray | None]:
        """:meth:`make` for each row of ``thetas``, arrays on the model's device: the norms and where each ray leaves
        the box in one pass over the batch, with one copy of each to the host instead of one per ray.
        ``norms``: the rows' norms in the attack's distance, on the device or the host (default L2)."""
        xp = namespace(thetas)
        norms = xp.linalg.vector_norm(thetas, axis=1) if norms is None else like(norms, thetas)
        on_host = host(norms)
        ok = np.isfinite(on_host) & (on_host != 0.0)
        units = thetas / xp.where(norms == 0, xp.ones_like(norms), norms)[:, None]
        lam_max = np.full(len(on_host), math.inf)
        if reach:
            to_bound = xp.where(units > 0, (hi - x0) / units,
                                xp.where(units < 0, (lo - x0) / units, xp.zeros_like(units)))
            lam_max = host(xp.max(to_bound, axis=1))
        rays: list[Ray | None] = []
        for i in range(len(on_host)):
            if not ok[i]:
                rays.append(None)
                continue
            ray = cls(x0, thetas[i], float(on_host[i]), float(lam_max[i]))
            ray._unit = units[i]
            rays.append(ray)
        return rays

    @staticmethod
    def points(rays: list[Ray], lams: list[float], lo: Any, hi: Any) -> Any:
        """``clip(x0 + λ·direction)`` of many rays on the model's device, as one ``(m, d)`` array: the same values as
        their :meth:`point` (elementwise, the same operations), in a few array operations instead of m."""
        xp = namespace(rays[0]._theta)
        from array_api_compat import device

        dev = device(rays[0]._theta)
        thetas = xp.stack([r._theta for r in rays])
        norms = xp.asarray([r._norm for r in rays], dtype=thetas.dtype, device=dev)[:, None]
        steps = xp.asarray(lams, dtype=thetas.dtype, device=dev)[:, None]
        return xp.clip(thetas / norms * steps + xp.stack([r.x0 for r in rays]), lo, hi)

    def point(self, lam: float, lo: Bound, hi: Bound, out: NDArray[np.float64] | None = None,
              into: NDArray[Any] | None = None) -> NDArray[Any]:
        """``clip(x0 + λ·direction)``, built in ``out`` when given (same values to the bit either way); the clipped
        values written into ``into`` when given (e.g. a float32 row: rounded once, as a copy of the row would be)."""
        if self._unit is None:
            row = np.divide(self._theta, self._norm, out=out)
            np.multiply(row, lam, out=row)
        else:
            row = np.multiply(self._unit, lam, out=out)
        np.add(row, self.x0, out=row)
        return np.clip(row, lo, hi, out=row if into is None else into)

