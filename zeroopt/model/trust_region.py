"""A model-based trust region as a chain of parts: a quadratic through the answers paid for, minimized in a ball.

Every answer the run has paid for stays in its memory; each iteration fits a quadratic model around the iterate
to the nearest of them (:func:`~zeroopt.model.quadratic_model.fit_quadratic`: Powell's least-change Hessian, the
update of NEWUOA, BOBYQA and COBYQA), steps to the model's minimizer inside the trust radius Δ and asks one value
there. The ratio of the decrease found to the one promised moves Δ; a step that fails where the points near the
iterate span the space badly is followed by a point that repairs the geometry, not by a smaller Δ. An iteration
thus costs one answer, plus the 2n of the first model (the iterate ± Δ along each coordinate, BOBYQA's start).

======================  ============  ===========================================================================
part                    stage         what it does
======================  ============  ===========================================================================
:class:`ModelProbes`    ``count``     2n probes first, ``repair`` after a step the geometry failed, else none
:class:`GeometryProbes` ``sample``    ±eᵢ first; then the directions the nearby points span worst
:class:`ModelEstimate`  ``estimate``  asks the probes at x + Δu, fits the model; its gradient is the estimate
:class:`ModelStep`      ``direction`` the model's minimizer in the ball of radius Δ
:class:`TrustStep`      ``step``      asks the value there, moves on a decrease, sets Δ from the ratio
:class:`RadiusFloor`    ``stop``      converges once Δ is below its floor
======================  ============  ===========================================================================

The model's arithmetic is on the host (a dense n × n Hessian): points reach the oracle in the iterate's array
namespace. The model is of a function on ℝⁿ: for iterates kept on the unit sphere (the attack's g(θ)), whose
points leave a quadratic through them undetermined, the solver is refused (:func:`zeroopt.make_solver`).
Answers that are not finite are left out of the model.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import host, like
from ..core.base import GradientEstimate, Move, SolverSettings, SolverState
from ..core.stages import CountsProbes, Iteration, StopsRun
from ..oracles.requests import Evaluate, Evaluation, Request, Response
from .quadratic_model import QuadraticModel, ball_minimizer, fit_quadratic, full_quadratic_size, least_covered

__all__ = [
    "RADIUS_SHARE", "GeometryProbes", "ModelEstimate", "ModelProbes", "ModelStep", "RadiusFloor", "TrustStep",
]

#: Memory keys: every point answered, its value; the trust radius; the model's Hessian; the decrease the model
#: promises the iteration's step; whether the next iteration repairs the geometry.
POINTS, VALUES, RADIUS, HESSIAN, PROMISED, REPAIR = ("tr.points", "tr.values", "tr.radius", "tr.hessian",
                                                     "tr.promised", "tr.repair")
#: The first Δ as a share of max(‖x0‖∞, 1): Py-BOBYQA's and COBYQA's default first radius.
RADIUS_SHARE = 0.1
#: The most points a default model is fitted to: its system has one row per point, solved every iteration.
MODEL_POINTS_MAX = 300
#: The points that count as near the iterate for its geometry: within this many Δ.
NEAR = 2.0
#: The nearby points span the space well enough to trust a failed step's verdict when their displacements over Δ
#: have a smallest singular value of at least this (±Δeᵢ have √2).
WELL_SPREAD = 0.1


def default_points(n: int) -> int:
    """Points a model in ``n`` variables is fitted to by default: as many as a full quadratic has coefficients,
    (n + 1)(n + 2)/2, up to :data:`MODEL_POINTS_MAX` — and never fewer than 2n + 1 (NEWUOA's, BOBYQA's and
    COBYQA's number, which the least-change Hessian makes enough)."""
    return max(2 * n + 1, min(full_quadratic_size(n), MODEL_POINTS_MAX))


def _host_flat(x: Any) -> NDArray[np.float64]:
    return np.asarray(host(x), dtype=float).ravel()


def _remember(memory: dict[str, Any], points: NDArray[np.float64], values: NDArray[np.float64]) -> None:
    """Add answered ``points`` and their ``values`` to the ``memory`` copy an iteration writes."""
    memory[POINTS] = np.concatenate([memory[POINTS], points])
    memory[VALUES] = np.concatenate([memory[VALUES], values])


def _near(memory: Mapping[str, Any], x: NDArray[np.float64], within: float) -> NDArray[np.float64]:
    """Displacements from ``x`` of the remembered points within ``within`` of it (``x`` itself left out)."""
    z = memory[POINTS] - x
    dist = np.linalg.norm(z, axis=1)
    return z[(dist > 0) & (dist <= within)]


def well_spread(memory: Mapping[str, Any], x: NDArray[np.float64]) -> bool:
    """Whether the points within NEAR·Δ of ``x`` span every direction at Δ's scale (:data:`WELL_SPREAD`)."""
    radius = memory[RADIUS]
    z = _near(memory, x, NEAR * radius) / radius
    return least_covered(z, x.size)[1] >= WELL_SPREAD


@dataclass(frozen=True)
class ModelProbes(CountsProbes):
    """Stage ``count``: 2n probes for the first model, ``repair`` after a step whose failure the geometry
    explains (:data:`REPAIR`), none otherwise."""

    repair: int = 1

    def __call__(self, state: SolverState) -> int:
        memory = state.memory
        if len(memory[POINTS]) == 0:
            return 2 * int(state.x.shape[0])
        return self.repair if memory[REPAIR] else 0


@dataclass(frozen=True)
class GeometryProbes:
    """Stage ``sample``: unit directions for the probes — ±eᵢ for the first model, then each the direction the
    points near the iterate (and the probes already chosen) span worst. It draws nothing: the solver makes the same
    run at every seed."""

    stage: ClassVar[str] = "sample"
    draws: ClassVar[bool] = False

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}

    def update(self, it: Iteration) -> Iteration:
        x = _host_flat(it.state.x)
        n, memory = x.size, it.memory
        if len(memory[POINTS]) == 0:
            probes = np.concatenate([np.eye(n), -np.eye(n)])[: it.q]
        else:
            radius = memory[RADIUS]
            z = _near(memory, x, NEAR * radius) / radius
            chosen: list[NDArray[np.float64]] = []
            for _ in range(it.q):
                spanned = np.concatenate([z, *[c[None] for c in chosen]])
                chosen.append(least_covered(spanned, n)[0])
            probes = np.array(chosen).reshape(len(chosen), n)
        return replace(it, probes=like(probes, it.state.x), scale=1.0)


@dataclass(frozen=True)
class ModelEstimate:
    """Stage ``estimate``: ask the probes at x + Δu, keep every answer, fit the model to the iterate and its
    ``points`` − 1 nearest remembered points (``None``: :func:`default_points`; more than (n + 1)(n + 2)/2 makes
    it a regression). ``radius``: the first Δ (``None``: :data:`RADIUS_SHARE` ·
    max(‖x0‖∞, 1))."""

    radius: float | None = None
    points: int | None = None
    stage: ClassVar[str] = "estimate"

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        x = _host_flat(x0)
        first = self.radius if self.radius is not None else RADIUS_SHARE * max(float(np.abs(x).max()), 1.0)
        return {POINTS: np.zeros((0, x.size)), VALUES: np.zeros(0), RADIUS: float(first),
                HESSIAN: np.zeros((x.size, x.size)), PROMISED: 0.0, REPAIR: False}

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s, memory = it.state, dict(it.memory)
        x, radius = _host_flat(s.x), memory[RADIUS]
        best: dict[str, Any] = {}
        eps = 0.0
        if it.probes is not None and len(it.probes):
            points = x + radius * _host_flat(it.probes).reshape(len(it.probes), x.size)
            resp = yield Evaluate(points=like(points, s.x), eps=it.eps, hints=np.full(len(points), s.fx))
            assert isinstance(resp, Evaluation)
            values = np.asarray(resp.values, dtype=float)
            finite = np.isfinite(values)
            _remember(memory, points[finite], values[finite])
            if finite.any():
                i = int(np.argmin(np.where(finite, values, np.inf)))
                best = {"best_x": like(points[i], s.x), "best_f": float(values[i]),
                        "best_eps": float(resp.eps[i])}
                eps = float(np.asarray(resp.eps)[finite].max())
        g, used = self._fit(memory, x, s.fx, radius)
        estimate = GradientEstimate(g=like(g, s.x), eps=eps, used=used, **best)
        return replace(it, estimate=estimate, direction=estimate.g, memory=memory)

    def _fit(self, memory: dict[str, Any], x: NDArray[np.float64], fx: float,
             radius: float) -> tuple[NDArray[np.float64], int]:
        """Fit the model around ``x`` (writing its Hessian into ``memory``); its gradient and the points used."""
        n = x.size
        z = memory[POINTS] - x
        dist = np.linalg.norm(z, axis=1)
        order = np.argsort(dist, kind="stable")
        order = order[dist[order] > 0][: (self.points or default_points(n)) - 1]
        z, f = z[order] / radius, memory[VALUES][order]
        if np.isfinite(fx):
            z, f = np.concatenate([np.zeros((1, n)), z]), np.concatenate([[fx], f])
        if len(z) < 2:
            return np.zeros(n), 0
        model = fit_quadratic(z, f, memory[HESSIAN] * radius**2)
        memory[HESSIAN] = model.h / radius**2
        return model.g / radius, len(z)


@dataclass(frozen=True)
class ModelStep:
    """Stage ``direction``: the step to the model's minimizer in the ball of radius Δ
    (:func:`~zeroopt.model.quadratic_model.ball_minimizer`), and the decrease the model promises for it."""

    stage: ClassVar[str] = "direction"

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}

    def update(self, it: Iteration) -> Iteration:
        radius, h = it.memory[RADIUS], it.memory[HESSIAN]
        g = _host_flat(it.direction)
        step = radius * ball_minimizer(radius * g, radius**2 * h)
        promised = QuadraticModel(0.0, g, h).decrease(step)
        return replace(it, direction=like(step, it.state.x), memory={**it.memory, PROMISED: promised})


@dataclass(frozen=True)
class TrustStep:
    """Stage ``step``: ask the value at the model's step and move on a decrease; Δ from the ratio ρ of the decrease
    found to the one promised — ``grow`` × the step past ``rho_grow``, kept (at least ``shrink`` × Δ) past
    ``rho_keep``, and below it ``shrink`` × Δ where the nearby points span the space (:func:`well_spread`), else
    Δ kept and the geometry repaired next iteration (:class:`ModelProbes`); a step answered +inf (NaN, an overflow,
    outside f's domain) shrinks Δ below the step's length. Defaults: BOBYQA's."""

    rho_keep: float = 0.1
    rho_grow: float = 0.7
    grow: float = 2.0
    shrink: float = 0.5
    stage: ClassVar[str] = "step"

    def init(self, x0: NDArray[np.float64]) -> Mapping[str, Any]:
        return {}

    def update(self, it: Iteration) -> Generator[Request, Response, Iteration]:
        s, memory = it.state, dict(it.memory)
        x, step, radius = _host_flat(s.x), _host_flat(it.direction), memory[RADIUS]
        length, promised = float(np.linalg.norm(step)), memory[PROMISED]
        trial, value, value_eps, ratio = x, np.inf, 0.0, -np.inf
        if promised > 0 and length > 0:
            trial = x + step
            resp = yield Evaluate(points=like(trial[None], s.x), eps=it.eps, hints=np.array([s.fx]))
            assert isinstance(resp, Evaluation)
            value, value_eps = float(resp.values[0]), float(resp.eps[0])
            if np.isfinite(value):
                _remember(memory, trial[None], np.array([value]))
                ratio = (s.fx - value) / promised
        repair = False
        if promised > 0 and length > 0 and not np.isfinite(value):  # beyond where f is finite: a smaller region
            radius = self.shrink * min(radius, length)
        elif ratio >= self.rho_grow:
            radius = max(radius, self.grow * length)
        elif ratio >= self.rho_keep:
            radius = max(self.shrink * radius, length)
        elif well_spread(memory, x):
            radius = self.shrink * radius
        else:
            repair = True
        memory[RADIUS], memory[REPAIR] = radius, repair
        moved = value < s.fx
        move = Move(like(trial, s.x) if moved else s.x, value if moved else s.fx, value_eps if moved else s.fx_eps,
                    length if moved else 0.0, radius, radius, memory=memory)
        return replace(it, move=move)


@dataclass(frozen=True)
class RadiusFloor(StopsRun):
    """Stage ``stop``: the run converges once the trust radius is below ``radius_min`` (BOBYQA's ρ_end)."""

    radius_min: float = 1e-8

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        return replace(move, converged=move.converged or move.memory[RADIUS] < self.radius_min)
