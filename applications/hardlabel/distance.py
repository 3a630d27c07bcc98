"""The distance an attack minimises, measured the same way everywhere: L2 (the paper's), L∞, Lp, or one's own.

The boundary searches parametrise each ray by its distance: the point at λ along θ is ``x0 + λ θ/‖θ‖``
in the attack's distance, so λ — every value, level, hint and cap the solver sees — *is* that distance (before
clipping to the input bounds), and g(θ) stays a function of θ's direction only. The solver needs no change.

A distance measures flat perturbations in numpy and, where the rays live on the model's device, in that device's
array library. A distance of one's own subclasses :class:`Distance` and writes :meth:`Distance.lengths` once,
in the namespace of the array it is given (:func:`zeroopt.core.arrays.namespace`), so both paths measure alike:

>>> import numpy as np
>>> from zeroopt.core.arrays import namespace
>>> class L1(Distance):
...     name = "L1"
...     def lengths(self, rows):
...         xp = namespace(rows)
...         return xp.sum(xp.abs(rows), axis=1)
>>> L1().length(np.array([3.0, -4.0])), LpDistance(1).length(np.array([3.0, -4.0]))
(7.0, 7.0)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from zeroopt.core.arrays import host, is_foreign, namespace
from zeroopt.core.arrays import norm as vector_norm

__all__ = ["L2", "LINF", "Distance", "LpDistance", "as_distance"]


class Distance:
    """A norm on flat perturbations ``(d,)``.

    A subclass writes :meth:`lengths` (rows of an array of any namespace, in that namespace); :meth:`length`
    and :meth:`of` follow from it.

    Attributes
    ----------
    name : str
        The name results are reported under (``AttackResult.norm``).
    prunes : bool
        Whether taking coordinates out of a perturbation can shorten it, so the attack's polish prunes
        (``Polish(prune=True)``). Off unless a distance says so: L∞ keeps its largest coordinate, and a
        pruning pass spends queries.
    """

    name: str = "distance"
    prunes: bool = False

    def lengths(self, rows: Any) -> Any:
        """‖θ‖ of each row of an ``(m, d)`` array, in the array's own namespace (numpy, torch, ...)."""
        raise NotImplementedError(f"{type(self).__name__} must define lengths(rows)")

    def length(self, theta: Any) -> float:
        """‖θ‖ of one flat vector (of any array namespace)."""
        return float(host(self.lengths(theta[None, :]))[0])

    def of(self, deltas: NDArray[np.float64]) -> NDArray[np.float64]:
        """‖δ‖ of each row of the numpy array ``deltas`` ``(n, d)``."""
        return np.asarray(self.lengths(deltas), dtype=np.float64)

    def toward(self, thetas: NDArray[np.float64], x0: NDArray[np.float64], lo: Any, hi: Any) -> NDArray[np.float64]:
        """The start's directions toward examples ``x0 + thetas`` (rows): in this distance's geometry, the ones
        the start asks. Default: ``thetas`` themselves."""
        return thetas

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@dataclass(frozen=True, repr=False)
class LpDistance(Distance):
    """The Lp norm ``(Σ |δ_i|^p)^(1/p)``; ``p = inf``: the largest ``|δ_i|``.

    Parameters
    ----------
    p : float
        ``p ≥ 1``, or ``numpy.inf``.
    """

    p: float

    def __post_init__(self) -> None:
        if isinstance(self.p, bool) or not isinstance(self.p, numbers.Real) or not self.p >= 1:
            raise ValueError(f"LpDistance takes p >= 1 or numpy.inf, got {self.p!r}")

    @property
    def name(self) -> str:  # type: ignore[override]
        return "L∞" if math.isinf(self.p) else f"L{self.p:g}"

    @property
    def prunes(self) -> bool:  # type: ignore[override]
        # Pruning takes coordinates out of a perturbation: shorter in L2 (where it was measured), not in L∞.
        return self.p == 2

    @property
    def _ord(self) -> float | None:
        """``ord`` as :func:`numpy.linalg.norm` takes it (``None``: L2's own path)."""
        return None if self.p == 2 else float(self.p)

    def lengths(self, rows: Any) -> Any:
        xp = namespace(rows)
        if self.p == 2:
            return xp.linalg.vector_norm(rows, axis=1)
        if math.isinf(self.p):
            return xp.max(xp.abs(rows), axis=1)
        if xp is np:
            return np.linalg.norm(rows, ord=self.p, axis=1)
        return xp.linalg.vector_norm(rows, axis=1, ord=float(self.p))

    def length(self, theta: Any) -> float:
        if is_foreign(theta):
            return vector_norm(theta) if self.p == 2 else float(host(self.lengths(theta[None, :]))[0])
        return float(np.linalg.norm(theta, ord=self._ord))

    def of(self, deltas: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.linalg.norm(deltas, ord=self._ord, axis=1)

    def toward(self, thetas: NDArray[np.float64], x0: NDArray[np.float64], lo: Any, hi: Any) -> NDArray[np.float64]:
        """In L∞, each direction taken to the vertex of the cube on its side, of the same L∞ length: every
        coordinate moved by the whole radius where the example differs from x0, and where it does not, pushed
        toward x0's nearer bound (which the box clips, so it moves least). At one L∞ radius a vertex moves every
        coordinate as far as it may, where the straight line to the example moves most of them less; the sign
        search then starts on the cube. Other norms: the directions themselves."""
        if not math.isinf(self.p):
            return thetas
        toward_nearer = np.where(x0 - lo <= hi - x0, -1.0, 1.0)
        signs = np.where(thetas > 0, 1.0, np.where(thetas < 0, -1.0, toward_nearer))
        return signs * np.abs(thetas).max(axis=1, keepdims=True)

    def __repr__(self) -> str:
        return f"LpDistance({self.p!r})"


L2 = LpDistance(2)
LINF = LpDistance(np.inf)
_NAMES = {2: L2, "2": L2, "l2": L2, np.inf: LINF, "inf": LINF, "linf": LINF}


def as_distance(norm: Any = 2, distance: Distance | None = None) -> Distance:
    """The attack's distance: ``distance`` itself, else the one ``norm`` spells — ``2`` / ``"l2"`` for L2,
    ``np.inf`` / ``"inf"`` / ``"linf"`` for L∞, a :class:`Distance` for itself.

    >>> as_distance(2).name, as_distance(np.inf).name, as_distance(distance=LpDistance(3)).name
    ('L2', 'L∞', 'L3')
    """
    if isinstance(norm, Distance):
        spelled = norm
    else:
        key = norm.lower() if isinstance(norm, str) else norm
        try:
            spelled = _NAMES[key]
        except (KeyError, TypeError):
            raise ValueError(f"norm must be 2 (L2) or np.inf (L∞), or a Distance (LpDistance(p), one's own), "
                             f"got {norm!r}") from None
    if distance is None:
        return spelled
    if spelled != L2:  # (norm's default, 2, leaves the distance to distance=)
        raise TypeError("pass the distance as norm= or as distance=, not both: distance=LpDistance(p)")
    if not isinstance(distance, Distance):
        raise TypeError(f"distance takes a Distance (L2, LINF, LpDistance(p) or a subclass of one's own that "
                        f"writes lengths), got {distance!r}")
    return distance
