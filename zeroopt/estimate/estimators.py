"""Gradient estimators: turn probe answers into a search direction.

An estimator is a generator function: it yields one request for all ``q`` probes at once (so they are
evaluated in one batch) and returns a :class:`GradientEstimate`.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import host, like, namespace, norm, rows, zeros_like
from ..core.base import GradientEstimate
from ..core.rowwise import row_norms
from ..oracles.requests import Compare, Comparison, Evaluate, Evaluation, Request, Response

__all__ = [
    "PROBE_LEVELS", "ProbeLevel", "central_difference",
    "centered_sign_of_difference", "forward_difference", "probe_levels", "shrunk_centered_sign_of_difference",
    "sign_of_difference",
]

#: What a comparison estimator compares each probe's value with: ``"value"``, f(x) itself; ``"tangent"``, for an
#: objective that is a radius (see :func:`probe_levels`), f(x) / cos∠(x, probe).
ProbeLevel = Literal["value", "tangent"]
PROBE_LEVELS: tuple[str, ...] = ("value", "tangent")


def forward_difference(
    x: NDArray[np.float64],
    fx: float,
    directions: NDArray[np.float64],
    beta: float,
    scale: float,
    eps: float | None,
) -> Generator[Request, Response, GradientEstimate]:
    """RGF estimator averaged over q directions (Nesterov–Spokoiny; paper eq. (5) with averaging).

    ``g = scale/q * sum_i (f(x + beta u_i) - f(x)) / beta * u_i``. With ``scale * E[u u^T] = I`` this is an
    unbiased estimate of ∇f_β, the gradient of the Gaussian- (or sphere-) smoothed objective.
    """
    points = x[None, :] + beta * directions
    resp = yield Evaluate(points=points, eps=eps, hints=np.full(points.shape[0], fx))
    assert isinstance(resp, Evaluation)
    values = resp.values
    # An oracle may answer +inf (e.g. no decision boundary along a direction): such a probe carries no
    # finite difference, so it is left out of the average rather than poisoning it.
    finite = np.isfinite(values)
    used = int(finite.sum())
    if used == 0:
        return GradientEstimate(g=zeros_like(x), eps=0.0, used=0)
    i = int(np.argmin(np.where(finite, values, np.inf)))
    if not np.isfinite(fx):
        # No finite difference from an infinite base value (a start outside the domain): no gradient, but
        # the best finite probe is still offered to solvers that may move to it.
        return GradientEstimate(
            g=zeros_like(x), eps=0.0, used=0, best_x=points[i], best_f=float(values[i]), best_eps=float(resp.eps[i])
        )
    best = {"best_x": points[i], "best_f": float(values[i]), "best_eps": float(resp.eps[i])}
    return _averaged(x, directions, finite, values[finite] - fx, beta, scale, float(resp.eps[finite].max()), best)


def central_difference(
    x: NDArray[np.float64],
    fx: float,
    directions: NDArray[np.float64],
    beta: float,
    scale: float,
    eps: float | None,
) -> Generator[Request, Response, GradientEstimate]:
    """Two-sided differences averaged over q directions: ``g = scale/q · Σ (f(x + βu) − f(x − βu)) / 2β · u``.

    Twice the probes of :func:`forward_difference` for an estimate without its curvature term: the difference
    of a probe pair is ``2β ∇f·u + O(β³)``, exact on a quadratic at every β. Under noise that is what lets the
    probe radius grow until the differences stand above the answers' errors without the estimate gaining a
    bias ``β uᵀHu / 2`` (the forward difference's), so an estimate near a minimum stays resolvable where the
    forward one drowns (the central difference of Moré & Wild's noisy derivative estimates, its error
    ``ε/β + β² M₃/6`` against the forward ``ε/β + β M₂/2``). ``differences`` holds ``f(x + βu) − f(x − βu)``,
    the difference of two answers, as the noise-aware radius rule reads it.
    """
    q = directions.shape[0]
    points = namespace(x).concat([x[None, :] + beta * directions, x[None, :] - beta * directions], axis=0)
    resp = yield Evaluate(points=points, eps=eps, hints=np.full(2 * q, fx))
    assert isinstance(resp, Evaluation)
    values = resp.values
    plus, minus = values[:q], values[q:]
    finite = np.isfinite(plus) & np.isfinite(minus)  # a pair with an infinite side carries no difference
    used = int(finite.sum())
    seen = np.isfinite(values)
    i = int(np.argmin(np.where(seen, values, np.inf)))
    best = {"best_x": points[i], "best_f": float(values[i]), "best_eps": float(resp.eps[i])} if seen.any() else {}
    if used == 0:
        return GradientEstimate(g=zeros_like(x), eps=0.0, used=0, **best)
    pair_eps = np.maximum(resp.eps[:q], resp.eps[q:])[finite]
    return _averaged(x, directions, finite, plus[finite] - minus[finite], 2.0 * beta, scale, float(pair_eps.max()),
                     best)


def _averaged(
    x: NDArray[np.float64], directions: NDArray[np.float64], kept: NDArray[np.bool_], differences: NDArray[np.float64],
    width: float, scale: float, eps: float, best: dict[str, object],
) -> GradientEstimate:
    """``scale/used · Σ (differences / width) · u`` over the ``kept`` probes, with the terms a part may read."""
    used = int(kept.sum())
    diffs = differences / width
    probes = rows(directions, kept)
    g = scale * (like(diffs, x) @ probes) / used
    return GradientEstimate(g=g, probes=probes, weights=scale * diffs / used, differences=differences, eps=eps,
                            used=used, **best)  # type: ignore[arg-type]


def sign_of_difference(
    x: NDArray[np.float64],
    fx: float,
    directions: NDArray[np.float64],
    beta: float,
    scale: float,
    eps: float | None,
    *,
    level: ProbeLevel = "value",
) -> Generator[Request, Response, GradientEstimate]:
    """Sign-OPT / ZO-signSGD estimator: ``g = 1/q * sum_i sign(f(x + beta u_i) - f(x)) u_i``.

    Each sign comes from one comparison "is f(x + beta u_i) < f(x)?", which some oracles answer with a
    single query (the hard-label attack) and any value oracle answers by evaluating. ``level="tangent"``
    compares with the tangent plane's level instead (:func:`probe_levels`), for objectives that are a radius.
    """
    return (yield from _sign_estimate(x, fx, directions, beta, level=level))


def centered_sign_of_difference(
    x: NDArray[np.float64],
    fx: float,
    directions: NDArray[np.float64],
    beta: float,
    scale: float,
    eps: float | None,
    *,
    level: ProbeLevel = "value",
) -> Generator[Request, Response, GradientEstimate]:
    """The sign estimator with a baseline (HopSkipJump's, Chen et al. 2020): ``g = 1/q * sum_i (s_i - s̄) u_i``.

    Same probes and queries as :func:`sign_of_difference`. Why subtract the mean sign s̄: when something
    common to every probe shifts the comparisons — the objective's curvature at radius β (late in a run,
    near a minimum), or a value f(x) known only to a precision — most of them agree whatever their
    direction, and the plain estimate carries ``s̄ * sum_i u_i``, a random vector of norm about
    ``|s̄| * sqrt(q)`` that says nothing about the slope. The baseline removes it; the probes that disagree
    with the majority, which carry the slope, keep their weight. When the signs are balanced (s̄ ≈ 0) the
    two estimators agree. All signs equal: nothing disagrees, and the plain estimate is returned.

    Examples
    --------
    >>> import numpy as np
    >>> u = np.eye(4)
    >>> gen = centered_sign_of_difference(np.zeros(4), 0.0, u, 0.1, 4.0, None)
    >>> req = next(gen)
    >>> from zeroopt.oracles.requests import Comparison
    >>> try:
    ...     gen.send(Comparison(below=np.array([True, False, False, False]), queries=4, exhausted=False))
    ... except StopIteration as done:
    ...     print(done.value.g, done.value.below_fraction)
    [-0.375  0.125  0.125  0.125] 0.25
    """
    return (yield from _sign_estimate(x, fx, directions, beta, baseline="mean", level=level))


def shrunk_centered_sign_of_difference(
    x: NDArray[np.float64],
    fx: float,
    directions: NDArray[np.float64],
    beta: float,
    scale: float,
    eps: float | None,
    *,
    level: ProbeLevel = "value",
) -> Generator[Request, Response, GradientEstimate]:
    """The centred sign estimator with its baseline shrunk by the baseline's own noise: ``g = 1/q Σ (s_i − b) u_i``.

    ``b = s̄ · max(0, 1 − (1 − s̄²) / (q s̄²))`` — the positive-part James–Stein shrinkage of the mean sign s̄
    toward 0, whose sampling variance is ``(1 − s̄²)/q``. Why: where the comparisons are balanced (early in a
    run, far from a minimum) s̄ is noise, and subtracting it only moves the estimate by that noise; there ``b``
    is 0 and this is :func:`sign_of_difference`. Where most comparisons agree (curvature at radius β, near a
    minimum), ``s̄`` stands far above its noise and ``b ≈ s̄``: :func:`centered_sign_of_difference`. No constant
    decides between the two; the q answers do. Same probes and queries as both.

    Examples
    --------
    >>> import numpy as np
    >>> signs = lambda lower, q: np.where(np.arange(q) < lower, -1.0, 1.0)
    >>> round(shrunk_mean_sign(signs(45, 100)), 4)  # s̄ = 0.1: one standard deviation, nearly all shrunk
    0.001
    >>> round(shrunk_mean_sign(signs(10, 100)), 4)  # s̄ = 0.8: far beyond its noise, nearly kept
    0.7955
    """
    return (yield from _sign_estimate(x, fx, directions, beta, baseline="shrunk", level=level))


def shrunk_mean_sign(signs: NDArray[np.float64]) -> float:
    """The mean of ±1 ``signs`` shrunk toward 0 by its sampling variance ``(1 − s̄²)/q`` (positive-part
    James–Stein): 0 when the mean is within about one standard deviation of 0, close to the mean far beyond."""
    mean = float(signs.mean())
    if mean == 0.0:
        return 0.0
    noise = (1.0 - mean * mean) / (len(signs) * mean * mean)
    return mean * max(0.0, 1.0 - noise)


def probe_levels(
    x: NDArray[np.float64], fx: float, points: NDArray[np.float64], level: ProbeLevel
) -> NDArray[np.float64]:
    """The levels a comparison estimator compares the probes ``points`` around ``x`` with.

    ``"value"``: f(x) for every probe. ``"tangent"``: ``f(x) / cos∠(x, p)`` for probe p — for an objective that
    is a *radius*, f(θ) the distance from a centre c along the ray c + rθ to a set S (the hard-label attack's
    g). Why: the comparison "is f(p) < level?" asks whether the ray along p is in S at radius ``level``. With
    level f(x) that point lies on the sphere of radius f(x) around c, which curves away from S's boundary by
    about f(x)·β²/2 at angle β; near a minimum, where the slope along a probe is small, that offset outweighs
    it and most probes find a higher value whatever their direction. With level f(x)/cos∠(x, p) the point lies
    on the plane through the current boundary point c + f(x)·x/‖x‖ perpendicular to x: where S's boundary is
    flat, the probe is in S exactly when the slope along it is negative, whatever β — HopSkipJump's probes
    around a boundary point, on that plane. A curved boundary biases it only by its own curvature.

    A value known to a precision shifts either level: the hard-label oracle answers the upper end of a bracket
    of width up to ε, about ε/2 above the truth. With ``sign-growing``'s defaults in the attack (β = 0.01,
    ε = β/100 · f) that shift and the sphere's offset f·β²/2 are the same size and cancel: comparing with the
    value is, to first order, comparing the bracket's midpoint with the tangent plane, and ``"tangent"`` moves
    every level down by ε/2, so with those defaults the two levels do about equally (docs/defaults.md). The
    tangent level is the one whose meaning does not hang on how β
    and ε are set (a wider β, a coarser ε), and the attack compares with it wherever its probes are wider: on
    neural networks, whose probes start 0.04 rad wide, and on tree ensembles, 0.5 rad
    (:func:`zeroopt.recipes.sign_solvers.sign_growing_on_radius`,
    :func:`~zeroopt.recipes.sign_solvers.sign_growing_in`).

    Examples
    --------
    >>> import numpy as np
    >>> x, p = np.array([1.0, 0.0]), np.array([[1.0, 1.0], [1.0, 0.0]])
    >>> probe_levels(x, 2.0, p, "tangent").round(4)  # 45 degrees: the plane x = 2 is 2√2 away along p
    array([2.8284, 2.    ])
    """
    if level == "value":
        return np.full(points.shape[0], float(fx))
    if level != "tangent":
        raise ValueError(f"level must be one of {PROBE_LEVELS}, got {level!r}")
    cos = host((points @ x) / (row_norms(points) * norm(x)))
    # A probe at or beyond a right angle has no crossing with the plane: +inf, "always below".
    with np.errstate(divide="ignore"):
        return np.where(cos > 0, fx / np.maximum(cos, 1e-300), np.inf)


def _sign_estimate(
    x: NDArray[np.float64], fx: float, directions: NDArray[np.float64], beta: float, *, baseline: str = "none",
    level: ProbeLevel = "value",
) -> Generator[Request, Response, GradientEstimate]:
    """One comparison per probe (at :func:`probe_levels`), then the mean of ``sign · u`` — minus a baseline
    first: the mean sign (``"mean"``) or the mean shrunk by its noise (``"shrunk"``); none when every sign
    agrees, when there is nothing to centre on."""
    points = directions * beta
    points += x  # (x + β·u, built in one q×d array)
    resp = yield Compare(points=points, levels=probe_levels(x, fx, points, level))
    assert isinstance(resp, Comparison)
    signs = np.where(resp.below, -1.0, 1.0)
    if baseline != "none" and abs(mean := float(signs.mean())) < 1.0:
        signs = signs - (mean if baseline == "mean" else shrunk_mean_sign(signs))
    g = (like(signs, x) @ directions) / len(signs)
    return GradientEstimate(g=g, eps=0.0, used=len(signs), below_fraction=float(np.mean(resp.below)),
                            probes=directions, weights=signs / len(signs))
