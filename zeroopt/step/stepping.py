"""Step rules: how far to move along a gradient estimate.

Each rule is a generator function that yields :class:`~zeroopt.oracles.requests.Evaluate` requests for candidate
points and returns a :class:`StepResult`. Line searches ask with ``cap`` = the value to beat, so oracles
that can tell "not better" cheaply (the hard-label attack: one query) do so.
"""

from __future__ import annotations

from collections.abc import Callable, Generator

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import norm as vector_norm
from ..core.base import StepResult
from ..core.constants import REFERENCE_SHRINK
from ..oracles.requests import Compare, Comparison, Evaluate, Evaluation, Request, Response

__all__ = ["NON_FINITE_STEP_SHRINK", "armijo_step", "fixed_step", "opt_line_search", "semicircle_step"]

#: A fixed step that lands where the objective answers +inf (NaN, overflow, outside its domain) is not taken, and the
#: next one is a quarter as long: the reference line search's shrink, the one factor a step rule here backs off by.
NON_FINITE_STEP_SHRINK = REFERENCE_SHRINK

Retraction = Callable[[NDArray[np.float64]], NDArray[np.float64]]


def _evaluate_one(
    x: NDArray[np.float64], eps: float | None, hint: float, cap: float | None, lower: float | None = None,
    upper: float | None = None,
) -> Generator[Request, Response, tuple[float, float]]:
    resp = yield Evaluate(points=x[None, :], eps=eps, hints=np.array([hint]), cap=cap,
                          lower=None if lower is None else np.array([lower]),
                          upper=None if upper is None else np.array([upper]))
    assert isinstance(resp, Evaluation)
    return float(resp.values[0]), float(resp.eps[0])


def _identity(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return x


def fixed_step(
    x: NDArray[np.float64],
    fx: float,
    g: NDArray[np.float64],
    step: float,
    eps: float | None,
    retract: Retraction | None = None,
) -> Generator[Request, Response, StepResult]:
    """Move by ``step`` unconditionally and evaluate the new point (Nesterov–Spokoiny's RGF).

    Where the new point's value is +inf from a finite one (outside the objective's domain, an overflow) the iterate
    stays and the step is shrunk by :data:`NON_FINITE_STEP_SHRINK`.
    """
    new = (retract or _identity)(x - step * g)
    f_new, e_new = yield from _evaluate_one(new, eps, fx, None)
    if not np.isfinite(f_new) and np.isfinite(fx):
        return StepResult(x, fx, 0.0, 0.0, step * NON_FINITE_STEP_SHRINK)
    return StepResult(new, f_new, e_new, step, step)


def opt_line_search(
    x: NDArray[np.float64],
    fx: float,
    g: NDArray[np.float64],
    step: float,
    eps: float | None,
    retract: Retraction | None = None,
    *,
    grow: float = 2.0,
    shrink: float = 0.25,
    max_grow: int = 15,
    max_shrink: int = 15,
    coarse: float = 1.0,
) -> Generator[Request, Response, StepResult]:
    """The OPT reference code's backtracking line search (doubling, then quartering).

    Starting from ``step``, try ``x - step * g`` and keep multiplying the step by ``grow`` while the value
    improves; if the first try did not improve, multiply by ``shrink`` until one does (at most
    ``max_shrink`` tries). The step size reached is carried to the next iteration, as in the reference.

    With ``coarse > 1`` (and a requested ``eps``) the candidates are evaluated to ``coarse · eps`` only —
    enough to rank them — and the one kept is refined to ``eps`` from its bracket (the request's ``lower``),
    so a candidate the search moves past never pays for digits nobody compares.
    """
    retract = retract or _identity
    eps_try = eps if eps is None or coarse <= 1 else eps * coarse
    best_x, best_f, best_eps, taken = x, fx, 0.0, 0.0
    for _ in range(max_grow):
        cand = retract(x - step * g)
        f_new, e_new = yield from _evaluate_one(cand, eps_try, best_f, best_f)
        tried = step
        step *= grow
        if f_new < best_f:
            best_x, best_f, best_eps, taken = cand, f_new, e_new, tried
        else:
            break
    if best_f >= fx:
        for _ in range(max_shrink):
            step *= shrink
            cand = retract(x - step * g)
            f_new, e_new = yield from _evaluate_one(cand, eps_try, fx, fx)
            if f_new < fx:
                best_x, best_f, best_eps, taken = cand, f_new, e_new, step
                break
    if coarse > 1 and eps is not None and taken > 0 and best_eps > eps and np.isfinite(best_f):
        # Refine the kept candidate within its bracket [best_f - best_eps, best_f].
        f_fine, e_fine = yield from _evaluate_one(best_x, eps, best_f, None, best_f - best_eps)
        if np.isfinite(f_fine):  # (an answer cut short by the budget keeps the coarse value)
            best_f, best_eps = f_fine, e_fine
    return StepResult(best_x, best_f, best_eps, taken, step)


def armijo_step(
    x: NDArray[np.float64],
    fx: float,
    g: NDArray[np.float64],
    step: float,
    eps: float | None,
    retract: Retraction | None = None,
    *,
    grow: float = 2.0,
    shrink: float = 0.5,
    max_shrink: int = 30,
    c: float = 1e-4,
) -> Generator[Request, Response, StepResult]:
    """Armijo backtracking: accept the first ``t`` with ``f(x - t g) <= f(x) - c t ‖g‖²``.

    Starts from ``grow`` times the last accepted step, so the step can recover after shrinking.
    """
    retract = retract or _identity
    gg = float(g @ g)
    t = step * grow
    for _ in range(max_shrink):
        cand = retract(x - t * g)
        threshold = fx - c * t * gg
        f_new, e_new = yield from _evaluate_one(cand, eps, fx, threshold)
        if f_new <= threshold:
            return StepResult(cand, f_new, e_new, t, t)
        t *= shrink
    return StepResult(x, fx, 0.0, 0.0, t)


def _on_circle(t: NDArray[np.float64], v: NDArray[np.float64], angle: float) -> NDArray[np.float64]:
    return float(np.cos(angle)) * t + float(np.sin(angle)) * v


def _circle_point_inside(
    t: NDArray[np.float64], v: NDArray[np.float64], angle: float, fx: float
) -> Generator[Request, Response, bool]:
    """Whether the circle's point at ``angle`` — radius ``fx cos(angle)`` along θ(angle) — lies in S (one query)."""
    resp = yield Compare(points=_on_circle(t, v, angle)[None, :], levels=np.array([fx * np.cos(angle)]))
    assert isinstance(resp, Comparison)  # (a driver ends the run when the budget runs out)
    return bool(resp.below[0])


def semicircle_step(
    x: NDArray[np.float64],
    fx: float,
    g: NDArray[np.float64],
    step: float,
    eps: float | None,
    retract: Retraction | None = None,
    *,
    grow: float = 2.0,
    shrink: float = 0.25,
    angle_rtol: float = 0.1,
    extend: bool = True,
    min_angle: float = 1e-4,
    max_tries: int = 30,
) -> Generator[Request, Response, StepResult]:
    """A geometric step for a distance along a direction (CGBA's semicircular search, Reza et al., ICCV 2023).

    For objectives on the unit sphere whose value is a *radius* — ``f(θ)`` the distance from a centre
    ``c`` to a set ``S`` along the ray ``c + r θ`` (the hard-label attack's g) — the point of S nearest ``c``
    within the plane of ``θ`` and the descent direction ``v`` lies, when S's boundary there is flat, on the
    circle with diameter ``[c, c + f(θ) θ]`` (Thales): the point at angle φ from θ is at radius
    ``f(θ) cos φ`` along ``θ(φ) = cos φ θ + sin φ v``. So one comparison per angle — "is
    ``f(θ(φ)) < f(θ) cos φ``?" — brackets the best angle: doubling (``grow``) or shrinking (``shrink``)
    from the last angle ``step``, then bisecting until the bracket is narrower than ``angle_rtol`` times its
    lower end. Why relative to the angle: around the best angle φ* a flat boundary's radius along θ(φ) grows
    like ``(φ − φ*)²/2`` while the step gains ``1 − cos φ* ≈ φ*²/2``, so an angle known to 10% loses at most
    about 1% of the step's gain, at every scale (late steps are small). The angle kept is refined once, to
    ``eps``, by an evaluation bracketed by its known radius (``Evaluate(upper=)``) and by the radius of the
    circle's first point outside S (a lower end where the boundary is flat). With ``extend``, larger angles are
    then tried while f keeps falling, one capped evaluation each (the circle is cautious where S's boundary
    curves away from the centre, and a jumping f — a tree ensemble's — may fall beyond it). A line search
    instead evaluates f to ε at every candidate step.

    ``step`` is an angle in radians here (the next iteration starts from the one taken); when no angle
    above ``min_angle`` improves, the iterate stays and the next step is below ``min_angle``, so a stall rule
    sees it. A non-positive or infinite ``fx`` is no radius to search from: the iterate stays and the next step
    is below ``min_angle`` too, so a stall rule shrinks β and, in the end, ends the run.
    """
    if not (np.isfinite(fx) and fx > 0):
        return StepResult(x, fx, 0.0, 0.0, 0.5 * min_angle)
    norm = vector_norm(x)
    t = x / norm
    v = -(g - (g @ t) * t)  # the descent direction, in the tangent plane at θ
    v_norm = vector_norm(v)
    if not v_norm > 0:
        return StepResult(x, fx, 0.0, 0.0, step)
    v = v / v_norm

    def iterate_at(angle: float) -> NDArray[np.float64]:  # the direction θ(angle), at x's norm, retracted
        point = _on_circle(t, v, angle) * norm
        return point if retract is None else retract(point)

    right = np.pi / 2  # at φ = π/2 the circle reaches the centre itself, radius 0: never in S
    lo, hi = 0.0, right
    angle = float(min(max(step, min_angle), right / grow))
    for _ in range(max_tries):
        if (yield from _circle_point_inside(t, v, angle, fx)):
            lo = angle
            if hi < right or angle * grow >= right:
                break
            angle *= grow
        else:
            hi = angle
            if lo > 0:
                break
            angle *= shrink
            if angle < min_angle:
                return StepResult(x, fx, 0.0, 0.0, angle)
    if lo == 0.0:
        return StepResult(x, fx, 0.0, 0.0, min(angle, step))
    for _ in range(max_tries):  # bisect the bracket [lo, hi] (lo in S, hi not)
        if hi - lo <= angle_rtol * lo:
            break
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if (yield from _circle_point_inside(t, v, mid, fx)) else (lo, mid)

    new = iterate_at(lo)
    radius = fx * np.cos(lo)  # known: f(new) < radius
    # Where S's boundary is flat, f(new) is at least f(θ) cos(hi) (the radius of the circle's first point
    # outside S): start there, below the known upper end, and the search is a short bisection of that bracket.
    hint = fx * np.cos(hi) if hi < right else radius
    f_new, e_new = yield from _evaluate_one(new, eps, hint, None, upper=radius)
    if not f_new < fx:  # S is not as the step assumed (its boundary curves back): stay
        return StepResult(x, fx, 0.0, 0.0, lo)
    best = StepResult(new, float(f_new), float(e_new), lo, lo)
    angle = lo
    while extend and angle * grow < right:
        # A candidate that does not beat the best costs one query (it is censored at the cap).
        angle *= grow
        cand = iterate_at(angle)
        f_cand, e_cand = yield from _evaluate_one(cand, eps, best.fx, best.fx)
        if not f_cand < best.fx:
            break
        best = StepResult(cand, float(f_cand), float(e_cand), angle, angle)
    return best
