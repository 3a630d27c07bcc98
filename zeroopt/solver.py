"""A zeroth-order solver composed of parts: direction sampler, gradient estimator, step rule, behaviours.

``init`` builds the state from the starting point; ``step`` is a generator that yields oracle requests and
returns the next state — so the same solver runs alone (:func:`zeroopt.minimize`) or in lockstep with
other runs whose requests are answered together (:func:`zeroopt.drive`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from .arrays import is_numpy, like, norm
from .base import (
    Behaviour,
    DirectionRule,
    DirectionSampler,
    GradientEstimate,
    GradientEstimator,
    Move,
    Precision,
    ProbeShape,
    SolverState,
    StepOutcome,
    StepResult,
    StepRule,
)
from .history_subspace import HistorySubspaceProbes
from .requests import FlatCoordinates, FlatMask, Request, Response

__all__ = ["ComposedSolver", "SolverState", "StepOutcome", "StepRule"]

@dataclass(frozen=True)
class ComposedSolver:
    """Zeroth-order descent composed of public parts: sampler → [probe shape] → [probe history] → estimator →
    [direction] → step rule → behaviours.

    Parameters
    ----------
    name
        Registry name, for results and messages.
    sampler
        Draws the probe directions (:mod:`zeroopt.directions`).
    estimator
        Turns the probes' answers into a gradient estimate (:mod:`zeroopt.estimators`).
    step_rule
        Moves along the estimate (:mod:`zeroopt.linesearch`); bind its options with ``functools.partial``.
    q
        Probe directions per iteration (the paper's averaging size), or a schedule ``state -> int``
        (e.g. :class:`~zeroopt.parts.ProbeSchedule`).
    beta
        Initial smoothing radius (finite-difference step).
    step
        Initial step size for the step rule.
    precision
        The precision ε to request at smoothing radius β (:class:`~zeroopt.parts.FixedPrecision`,
        :class:`~zeroopt.parts.PrecisionFollowsBeta`); ``None``: the oracle's default.
    retract
        Optional map applied to every new iterate (e.g. :func:`~zeroopt.parts.unit_sphere`).
    behaviours
        Parts that amend each iteration's move, in order (:class:`~zeroopt.parts.BestProbe`,
        :class:`~zeroopt.parts.StallRule`, or any :class:`~zeroopt.parts.Behaviour`).
    direction
        What the step rule follows, from the estimate and the state's memory
        (:class:`~zeroopt.momentum.AdaptiveMomentum`, or any :class:`~zeroopt.momentum.DirectionRule`);
        ``None``: the estimate itself.
    skip_flat
        Before each estimate, ask the oracle which coordinates the objective does not depend on near the iterate
        (:class:`~zeroopt.oracle.FlatCoordinates`, no query) and keep the probes off them: a probe's component
        there changes no comparison and only adds noise to the estimate. Where the oracle names an equivalent
        point of lower value (:class:`~zeroopt.oracle.FlatMask`), the iterate moves there first. An oracle that
        knows nothing leaves the iteration as it would be without.
    probe_shape
        Reshapes each iteration's probes from the iterate (:class:`~zeroopt.shaping.IterateShapedProbes`, or any
        :class:`~zeroopt.shaping.ProbeShape`), after the sampler and any ``skip_flat`` restriction; ``None``:
        the sampler's draws as they are.
    probe_history
        Puts part of each iteration's probes in the span of the last estimates and the rest orthonormal to it
        (:class:`~zeroopt.history_subspace.HistorySubspaceProbes`), after the probe shape; it keeps the
        estimates in the state's memory. ``None``: no history.
    """

    name: str
    sampler: DirectionSampler
    estimator: GradientEstimator
    step_rule: StepRule
    q: int | Callable[[SolverState], int]
    beta: float
    step: float
    precision: Precision | None = None
    retract: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None
    behaviours: tuple[Behaviour, ...] = ()
    direction: DirectionRule | None = None
    skip_flat: bool = False
    probe_shape: ProbeShape | None = None
    probe_history: HistorySubspaceProbes | None = None

    def requested_eps(self, beta: float, value: float = math.nan) -> float | None:
        """Precision to request at smoothing radius ``beta`` from an iterate of value ``value``."""
        return None if self.precision is None else self.precision(beta, value)

    def probes(self, state: SolverState) -> int:
        """Number of probe directions for the iteration starting from ``state``."""
        return int(self.q) if isinstance(self.q, (int, np.integer)) else int(self.q(state))

    def init(self, x0: NDArray[np.float64], f0: float, f0_eps: float, rng: np.random.Generator) -> SolverState:
        """State at the starting point (``f0`` already known, so nothing is re-evaluated)."""
        x = np.asarray(x0, dtype=float) if is_numpy(x0) else x0
        if self.retract is not None:
            x = self.retract(x)
        return SolverState(x=x, fx=f0, fx_eps=f0_eps, beta=self.beta, step=self.step, iteration=0, rng=rng)

    def step_generator(self, state: SolverState) -> Generator[Request, Response, StepOutcome]:
        """One iteration: estimate the gradient with ``q`` probes, apply the step rule, then the behaviours."""
        active = None
        if self.skip_flat:
            state, active = yield from self._off_flat_coordinates(state)
        eps = self.requested_eps(state.beta, state.fx)
        u, scale = self._probe_directions(state, active)
        if self.probe_history is not None:
            u = self.probe_history(u, state.memory, active)
        est: GradientEstimate = yield from self.estimator(state.x, state.fx, u, state.beta, scale, eps)
        g, memory = (est.g, state.memory) if self.direction is None else self.direction(self, state, est)
        if self.probe_history is not None:
            memory = self.probe_history.remember(memory, est.g)
        res: StepResult = yield from self.step_rule(state.x, state.fx, g, state.step, eps, self.retract)
        move = Move(res.x, res.fx, res.fx_eps, res.step_taken, res.next_step, state.beta, memory=memory)
        if not np.isfinite(move.fx) and np.isfinite(state.fx):
            # A step rule that moves unconditionally (the theory's fixed step) can land where the oracle
            # answers +inf (outside the function's domain, e.g. no decision boundary along a direction).
            # The iterate stays put instead: from there no finite difference could be formed.
            move = replace(move, x=state.x, fx=state.fx, fx_eps=state.fx_eps, step_taken=0.0)
        for behaviour in self.behaviours:
            move = behaviour(self, state, est, move)
        new_state = replace(state, x=move.x, fx=move.fx, fx_eps=move.fx_eps, beta=move.beta, step=move.next_step,
                            iteration=state.iteration + 1, memory=move.memory)
        return StepOutcome(
            state=new_state,
            eps=max(est.eps, move.fx_eps, state.fx_eps),
            beta=state.beta,
            step_taken=move.step_taken,
            grad_norm=norm(est.g),
            converged=move.converged,
        )

    def _off_flat_coordinates(
        self, state: SolverState
    ) -> Generator[Request, Response, tuple[SolverState, NDArray[np.intp] | None]]:
        """The iterate (moved to the oracle's equivalent point when it names a lower one) and the indices of the
        coordinates to probe (``None``: all of them)."""
        resp = yield FlatCoordinates(point=state.x, value=float(state.fx), radius=float(state.beta))
        if not isinstance(resp, FlatMask):
            return state, None
        if resp.point is not None and resp.value < state.fx:
            state = replace(state, x=np.asarray(resp.point, dtype=float), fx=float(resp.value))
        if resp.flat is None:
            return state, None
        active = np.flatnonzero(~np.asarray(resp.flat, dtype=bool))
        # Nothing flat: the plain draw. Fewer than two coordinates left: no direction to compare, so no restriction.
        return state, (active if 2 <= active.size < state.x.size else None)

    def _probe_directions(
        self, state: SolverState, active: NDArray[np.intp] | None
    ) -> tuple[NDArray[np.float64], float]:
        """``q`` probe directions (within the ``active`` coordinates when given) and the estimator's scale."""
        u, scale = self._drawn_directions(state, active)
        u = like(u, state.x)  # drawn on the host: the same draws in every namespace
        # The shape keeps each probe's length, so the estimator's scale still holds (for a trace of d).
        return (u, scale) if self.probe_shape is None else (self.probe_shape(u, state.x, active), scale)

    def _drawn_directions(
        self, state: SolverState, active: NDArray[np.intp] | None
    ) -> tuple[NDArray[np.float64], float]:
        """The sampler's ``q`` directions (within the ``active`` coordinates when given) and their scale."""
        d, q = state.x.shape[0], self.probes(state)
        if active is None:
            return self.sampler.sample(state.rng, q, d, state.iteration), self.sampler.scale(d)
        n = active.size
        if getattr(self.sampler, "shape_free", False):
            within, scale = self.sampler.sample(state.rng, q, n, state.iteration), self.sampler.scale(n)
        else:  # a sampler tied to the input's shape: its draws, masked, at their own lengths
            full = self.sampler.sample(state.rng, q, d, state.iteration)
            within = full[:, active]
            kept = np.linalg.norm(within, axis=1, keepdims=True)
            within = np.where(kept > 0, within * np.linalg.norm(full, axis=1, keepdims=True) / np.maximum(kept, 1e-300),
                              0.0)
            scale = self.sampler.scale(d) * n / d
        u = np.zeros((len(within), d))
        u[:, active] = within
        return u, scale
