"""A zeroth-order solver composed of three parts: direction sampler, gradient estimator, step rule.

``init`` builds the state from the starting point; ``step`` is a generator that yields oracle requests and
returns the next state — so the same solver runs alone (:func:`zeroopt.minimize`) or in lockstep with
other runs whose requests are answered together (:func:`zeroopt.drive`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from .directions import DirectionSampler
from .estimators import GradientEstimate, GradientEstimator
from .linesearch import StepResult
from .oracle import Request, Response

__all__ = ["ComposedSolver", "SolverState", "StepOutcome", "StepRule"]

StepRule = Callable[..., Generator[Request, Response, StepResult]]


@dataclass(frozen=True)
class SolverState:
    """Everything a solver carries between iterations."""

    x: NDArray[np.float64]
    fx: float
    fx_eps: float
    beta: float
    step: float
    iteration: int
    rng: np.random.Generator


@dataclass(frozen=True)
class StepOutcome:
    """The state after one iteration plus what the iteration's record needs."""

    state: SolverState
    eps: float
    beta: float  # the smoothing radius this iteration's probes used (the state may already hold a smaller one)
    step_taken: float
    grad_norm: float
    converged: bool = False


@dataclass(frozen=True)
class ComposedSolver:
    """Zeroth-order descent built from parts.

    Parameters
    ----------
    name
        Registry name, for results and messages.
    sampler, estimator, step_rule
        The three parts.
    q
        Probe directions per iteration (the paper's averaging size).
    beta
        Initial smoothing radius (finite-difference step).
    step
        Initial step size for the step rule.
    eps
        Precision to request from the oracle (``None``: the oracle's default).
    eps_per_beta
        When set, request ``eps = eps_per_beta * beta`` so the precision follows the smoothing radius
        (Theorem 1 ties ε to β; the reference code uses β/500).
    step_min, step_reset, beta_decay, beta_min
        Stall handling from the OPT reference code: when the step size falls below ``step_min`` it is reset
        to ``step_reset`` and β is multiplied by ``beta_decay``; the run converges once β < ``beta_min``.
        ``beta_decay = 1`` disables it.
    use_best_probe
        Move to the best probe point when it beats the line search's result (as the OPT code does).
    retract
        Optional map applied to every new iterate (e.g. normalisation onto a sphere).
    step_rule_options
        Extra keyword arguments for the step rule.
    """

    name: str
    sampler: DirectionSampler
    estimator: GradientEstimator
    step_rule: StepRule
    q: int
    beta: float
    step: float
    eps: float | None = None
    eps_per_beta: float | None = None
    step_min: float = 0.0
    step_reset: float | None = None
    beta_decay: float = 1.0
    beta_min: float = 0.0
    use_best_probe: bool = False
    retract: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None
    step_rule_options: tuple[tuple[str, object], ...] = ()

    def requested_eps(self, beta: float) -> float | None:
        """Precision to request at smoothing radius ``beta``."""
        if self.eps_per_beta is not None:
            return self.eps_per_beta * beta
        return self.eps

    def init(self, x0: NDArray[np.float64], f0: float, f0_eps: float, rng: np.random.Generator) -> SolverState:
        """State at the starting point (``f0`` already known, so nothing is re-evaluated)."""
        x = np.asarray(x0, dtype=float)
        if self.retract is not None:
            x = self.retract(x)
        return SolverState(x=x, fx=f0, fx_eps=f0_eps, beta=self.beta, step=self.step, iteration=0, rng=rng)

    def step_generator(self, state: SolverState) -> Generator[Request, Response, StepOutcome]:
        """One iteration: estimate the gradient with ``q`` probes, then apply the step rule."""
        d = state.x.size
        eps = self.requested_eps(state.beta)
        u = self.sampler.sample(state.rng, self.q, d, state.iteration)
        est: GradientEstimate = yield from self.estimator(state.x, state.fx, u, state.beta, self.sampler.scale(d), eps)
        res: StepResult = yield from self.step_rule(
            state.x, state.fx, est.g, state.step, eps, self.retract, **dict(self.step_rule_options)
        )
        x, fx, fx_eps, taken = res.x, res.fx, res.fx_eps, res.step_taken
        if not np.isfinite(fx) and np.isfinite(state.fx):
            # A step rule that moves unconditionally (the theory's fixed step) can land where the oracle
            # answers +inf (outside the function's domain, e.g. no decision boundary along a direction).
            # The iterate stays put instead: from there no finite difference could be formed.
            x, fx, fx_eps, taken = state.x, state.fx, state.fx_eps, 0.0
        if self.use_best_probe and est.best_x is not None and est.best_f < fx:
            x = est.best_x if self.retract is None else self.retract(est.best_x)
            fx, fx_eps, taken = est.best_f, est.best_eps, float(np.linalg.norm(x - state.x))
        next_step, beta, converged = res.next_step, state.beta, False
        if next_step < self.step_min:
            # The reference code's stall rule: a vanishing step means the finite differences are too
            # coarse for the current neighbourhood, so refine the smoothing radius.
            next_step = self.step_reset if self.step_reset is not None else self.step
            beta *= self.beta_decay
            converged = beta < self.beta_min
        new_state = replace(state, x=x, fx=fx, fx_eps=fx_eps, beta=beta, step=next_step, iteration=state.iteration + 1)
        used_eps = max(est.eps, fx_eps, state.fx_eps)
        return StepOutcome(
            state=new_state,
            eps=used_eps,
            beta=state.beta,
            step_taken=taken,
            grad_norm=float(np.linalg.norm(est.g)),
            converged=converged,
        )
