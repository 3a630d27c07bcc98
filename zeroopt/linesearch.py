"""Step rules: how far to move along a gradient estimate.

Each rule is a generator function that yields :class:`~zeroopt.oracle.Evaluate` requests for candidate
points and returns a :class:`StepResult`. Line searches ask with ``cap`` = the value to beat, so oracles
that can tell "not better" cheaply (the hard-label attack: one query) do so.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .oracle import Evaluate, Evaluation, Request, Response

__all__ = ["StepResult", "armijo_step", "fixed_step", "opt_line_search"]

Retraction = Callable[[NDArray[np.float64]], NDArray[np.float64]]


@dataclass(frozen=True)
class StepResult:
    """The new iterate and the step-size state to carry to the next iteration."""

    x: NDArray[np.float64]
    fx: float
    fx_eps: float
    step_taken: float  # 0 when the iterate did not move
    next_step: float  # the step size to start from next iteration


def _evaluate_one(
    x: NDArray[np.float64], eps: float | None, hint: float, cap: float | None, lower: float | None = None
) -> Generator[Request, Response, tuple[float, float]]:
    resp = yield Evaluate(points=x[None, :], eps=eps, hints=np.array([hint]), cap=cap,
                          lower=None if lower is None else np.array([lower]))
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
    """Move by ``step`` unconditionally and evaluate the new point (Nesterov–Spokoiny's RGF)."""
    new = (retract or _identity)(x - step * g)
    f_new, e_new = yield from _evaluate_one(new, eps, fx, None)
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
