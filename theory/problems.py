"""Problem families for the studies: zeroopt's synthetic problems plus one worst-case family.

Every family keeps L1 and f(x0) − f* fixed as d changes, so a study reads the d-dependence of a
solver off its counts. ``pseudo_huber`` adds what zeroopt's benign families lack: on ``log_norm`` and
``rotated_quadratic`` the gradient shrinks geometrically once near the minimiser, so the first iterate
with ‖∇f‖ <= δ comes after O(d log(1/δ)) iterations — far faster than Theorem 1's O(d/δ²), which is a
worst-case bound. The pseudo-Huber family, indexed by δ like lower-bound constructions, keeps
‖∇f‖ ≈ 2δ along a path whose length makes the bound's 1/δ² appear for single iterates too.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from zeroopt import Problem
from zeroopt.oracles.problems import log_norm, rotated_quadratic

__all__ = ["FAMILIES", "Family", "f_gap", "make_problem", "pseudo_huber"]

Family = Literal["log_norm", "rotated_quadratic", "pseudo_huber"]
FAMILIES: tuple[Family, ...] = ("log_norm", "rotated_quadratic", "pseudo_huber")

# log(1 + ‖x‖²) has its largest gradient (norm 1) at ‖x‖ = 1; starting there keeps f(x0) − f* = log 2
# and every δ < 1 reachable, and it is cheaper than the zeroopt default radius 3 (f(x0) − f* = log 10).
LOG_NORM_RADIUS = 1.0


def pseudo_huber(
    dim: int, *, slope: float, L1: float = 1.0, f_gap: float = 1.0, seed: int | None = 0
) -> Problem:
    """f(x) = a (√(s² + ‖x‖²) − s) with ``a = slope`` and ``s = a / L1``.

    ∇f = a x / √(s² + ‖x‖²) has norm below ``a`` everywhere and close to it once ‖x‖ >> s; the Hessian's
    largest eigenvalue is a/s = L1 (at 0), f* = 0. The start lies at the radius where f(x0) = ``f_gap``,
    in a seeded random direction. With ``slope = 2δ``, reaching ‖∇f‖ <= δ (at ‖x‖ <= s/√3) needs a walk
    of length ≈ f_gap/(2δ) at gradient ≈ 2δ: Θ((d+4) L1 f_gap / δ²) RGF iterations with the theory step.
    """
    if not (slope > 0 and L1 > 0 and f_gap > 0):
        raise ValueError(f"slope, L1 and f_gap must be > 0, got {slope!r}, {L1!r}, {f_gap!r}")
    a, s = float(slope), float(slope) / float(L1)
    radius = math.sqrt((f_gap / a + s) ** 2 - s * s)
    u = np.random.default_rng(seed).standard_normal(dim)
    x0 = radius * u / np.linalg.norm(u)

    def values(p: NDArray[np.float64]) -> NDArray[np.float64]:
        return a * (np.sqrt(s * s + np.einsum("ij,ij->i", p, p)) - s)

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return a * x / math.sqrt(s * s + float(x @ x))

    return Problem(f"pseudo_huber(d={dim}, slope={a:g})", dim, values, grad, float(L1), 0.0, x0)


def make_problem(family: Family, dim: int, *, delta: float, seed: int, **options: Any) -> Problem:
    """A problem of ``family`` in dimension ``dim`` (seeded start, and rotation for the quadratic).

    ``delta`` matters only to ``pseudo_huber`` (slope ``ratio · δ``, ``ratio`` = 2 by default). Options:
    ``log_norm``: ``radius`` (default 1); ``rotated_quadratic``: ``mu`` (0.2), ``L`` (1), ``radius`` (1);
    ``pseudo_huber``: ``ratio``, ``L1`` (1), ``f_gap`` (1).
    """
    if family == "log_norm":
        return log_norm(dim, radius=options.get("radius", LOG_NORM_RADIUS), seed=seed)
    if family == "rotated_quadratic":
        return rotated_quadratic(
            dim, mu=options.get("mu", 0.2), L=options.get("L", 1.0), radius=options.get("radius", 1.0), seed=seed
        )
    if family == "pseudo_huber":
        return pseudo_huber(
            dim, slope=options.get("ratio", 2.0) * delta, L1=options.get("L1", 1.0),
            f_gap=options.get("f_gap", 1.0), seed=seed,
        )
    raise ValueError(f"unknown problem family {family!r}; choose one of {FAMILIES}")


def f_gap(problem: Problem, x0: NDArray[np.float64] | None = None) -> float:
    """``f(x0) − f*`` (at the problem's own start unless ``x0`` is given)."""
    return float(problem(problem.x0 if x0 is None else x0)) - problem.f_star
