"""Precision rules: what precision ε a solver asks the oracle for at smoothing radius β.

Each is a :class:`~zeroopt.core.base.Precision`: ``rule(beta, value) -> eps | None``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..core.stages import SetsPrecision

__all__ = ["MIN_RELATIVE_EPS", "FixedPrecision", "PrecisionFollowsBeta", "PrecisionFollowsValue"]


@dataclass(frozen=True)
class FixedPrecision(SetsPrecision):
    """Always request ``eps``."""

    eps: float

    def __call__(self, beta: float, value: float = math.nan) -> float | None:
        return self.eps


@dataclass(frozen=True)
class PrecisionFollowsBeta(SetsPrecision):
    """Request ``eps = per_beta * beta``: the precision follows the smoothing radius.

    Theorem 1 (Cheng et al. 2019) ties ε to β; the reference code's binary searches stop at β/500.
    """

    per_beta: float

    def __call__(self, beta: float, value: float = math.nan) -> float | None:
        return self.per_beta * beta


#: :class:`PrecisionFollowsValue` never asks for less than this (a value at or near 0 would ask for ε = 0,
#: which no search reaches).
MIN_RELATIVE_EPS = 1e-12


@dataclass(frozen=True)
class PrecisionFollowsValue(SetsPrecision):
    """Request ``eps = per_beta * beta * |value|``: a precision relative to the current value.

    For a positive objective that scales with its argument, such as a distance g(θ) to a boundary, the
    differences a probe at radius β sees scale with the value itself: ε = β/500 in absolute terms is needlessly
    fine while the value is large (early, every search spends queries on digits nobody compares) and too coarse
    once it is small (late on a small-distance problem, ε reaches the size of the differences the comparisons
    must resolve, and the descent stalls). Relative precision keeps ε at the same fraction of what is compared.
    Before any value is known (or for an infinite one) it is ``per_beta * beta``; never below
    :data:`MIN_RELATIVE_EPS`.
    """

    per_beta: float

    def __call__(self, beta: float, value: float = math.nan) -> float | None:
        scale = abs(value) if math.isfinite(value) else 1.0
        return max(self.per_beta * beta * scale, MIN_RELATIVE_EPS)
