"""What a solver asks an oracle, and what the oracle answers: values, one-bit comparisons, flat coordinates.

A run (:func:`zeroopt.run_solver`) yields these requests; an oracle or an oracle group answers them
(:mod:`zeroopt.oracles.oracle`, where they are importable as well).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

__all__ = ["Compare", "Comparison", "Evaluate", "Evaluation", "FlatCoordinates", "FlatMask", "Request", "Response"]


@dataclass(frozen=True)
class Evaluate:
    """Ask for f at a batch of points.

    Attributes
    ----------
    points
        ``(m, d)`` array of points.
    eps
        Requested precision: each returned value should be within ``eps`` of the truth. ``None`` lets
        the oracle use its default. An exact oracle ignores it and reports 0.
    hints
        Optional ``(m,)`` values believed close to the answers (e.g. f at a nearby point); an oracle that
        searches for its value (the hard-label boundary distance) starts there.
    cap
        Optional level: a value known to be ``>= cap`` may be reported as ``+inf`` ("not below cap")
        without computing it precisely, which some oracles do far more cheaply. Line searches use it.
    lower
        Optional ``(m,)`` values known to lie at or below the answers, with ``hints`` the values an earlier,
        coarser answer gave for the same points (the two ends of its bracket): an oracle that searches for
        its value may refine that bracket instead of searching afresh. Others ignore it.
    upper
        Optional ``(m,)`` values known to lie at or above the answers (e.g. a level a comparison just found
        the point below): an oracle that searches may take each as its bracket's upper end without asking
        again, and search up from a ``hint`` below it no further than it. Others ignore it.
    """

    points: NDArray[np.float64]
    eps: float | None = None
    hints: NDArray[np.float64] | None = None
    cap: float | None = None
    lower: NDArray[np.float64] | None = None
    upper: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class Compare:
    """Ask, for each point, whether f(point) < level — one bit per point."""

    points: NDArray[np.float64]
    levels: NDArray[np.float64]


@dataclass(frozen=True)
class FlatCoordinates:
    """Ask, at no query, which coordinates f does not depend on near ``point`` (of value ``value``): moves of the
    size a probe of radius ``radius`` makes along them leave f unchanged — a feature clipped at the bound of its
    box, say. An oracle that does not know answers that every coordinate counts. It may also name an equivalent
    point of no higher value (see :class:`FlatMask`)."""

    point: NDArray[np.float64]
    value: float
    radius: float


Request = Evaluate | Compare | FlatCoordinates


@dataclass(frozen=True)
class Evaluation:
    """Answer to :class:`Evaluate`.

    ``values`` and ``eps`` hold answers for the first ``k <= m`` points (``k < m`` only when the budget ran
    out, which ``exhausted`` then says). ``eps`` is the precision the oracle *achieved* (0 when exact);
    a value may be ``+inf`` when it was censored above the request's ``cap`` or when the oracle knows the
    objective is unbounded there. ``queries`` is the oracle's total spending after answering.
    """

    values: NDArray[np.float64]
    eps: NDArray[np.float64]
    queries: int
    exhausted: bool = False


@dataclass(frozen=True)
class Comparison:
    """Answer to :class:`Compare`: ``below[i]`` is True when f(points[i]) < levels[i].

    An oracle that had to compute the values to compare them reports them in ``values``/``eps`` (so the
    best point seen is never lost); a true one-bit oracle leaves them ``None``.
    """

    below: NDArray[np.bool_]
    queries: int
    exhausted: bool = False
    values: NDArray[np.float64] | None = None
    eps: NDArray[np.float64] | None = None


@dataclass(frozen=True)
class FlatMask:
    """Answer to :class:`FlatCoordinates`: ``flat[i]`` is True where f is locally constant along coordinate i
    (``None``: the oracle does not know; every coordinate counts). ``point``/``value``, when given: a point the
    oracle knows f to be at most ``value`` at, reached from the asked one by moving flat coordinates only — the
    solver may go there at no query. Costs nothing: ``queries`` is the oracle's spending as it was."""

    flat: NDArray[np.bool_] | None
    queries: int
    point: NDArray[np.float64] | None = None
    value: float = float("inf")
    exhausted: bool = False
    values: None = None  # (no values observed: a run's best point is not changed by this answer)
    eps: None = None


Response = Evaluation | Comparison | FlatMask
