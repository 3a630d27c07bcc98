"""A probe radius that follows the step: :class:`RadiusFollowsStep`.

A finite-difference or comparison estimate at radius β answers for the slope of f *averaged over a ball of radius
β*. Early in a run the iterate moves far at each step and that average is what the step needs — a wide ball
smooths over the small-scale roughness (a ReLU network's decision boundary is piecewise linear) that a narrow one
would resolve and the step would not use. Late in a run the steps are short, and a ball wider than the step
averages over ground the iterate will never cross: the estimate then describes a slope the step does not follow.
Py-BOBYQA ties its sampling radius ρ to its trust-region radius Δ for the same reason.

This behaviour sets β to a fixed share of the steps the iterate takes (their running geometric mean, so that one
short or long step does not swing it), between the solver's own β — the widest, used until the first step — and a
floor below it. A step's size is the distance the iterate moved (in the iterate's own units, as β is, whatever the
step rule's step means); an iteration that did not move leaves β as it is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from ..core.arrays import distance
from ..core.base import GradientEstimate, Move, SolverSettings, SolverState
from ..core.stages import AmendsMove
from .radius import owned_beta_range

__all__ = ["STEP_RADIUS_FLOOR_RATIO", "STEP_RADIUS_RATIO", "STEP_RADIUS_SMOOTHING", "RadiusFollowsStep"]

#: β as a share of the step: the probes' ball is a quarter of the angle the iterate moves, so a wide first β
#: holds while the steps are long and narrows to its floor as they shorten (docs/defaults.md).
STEP_RADIUS_RATIO = 0.25
#: Never narrower than a quarter of the solver's own β: for the attack's ``sign-growing`` with β = 0.04, the
#: late radius 0.01 of its fixed-β form (:func:`~zeroopt.recipes.sign_solvers.sign_growing_on_radius`).
STEP_RADIUS_FLOOR_RATIO = 0.25
#: The weight of the newest step in the running mean of log step sizes: the mean forgets a step's effect by half
#: each iteration, so β follows a trend of a few steps, not one step's luck.
STEP_RADIUS_SMOOTHING = 0.5


@dataclass(frozen=True)
class RadiusFollowsStep(AmendsMove):
    """Set the smoothing radius β to ``ratio`` × the running geometric mean of the distances the iterate moved.

    After each iteration that moved, the running mean of the log distance ‖x_new − x‖ takes
    the new one with weight ``smoothing``, and β becomes ``ratio · exp(mean)``, kept within
    ``[floor_ratio · β₀, β₀]`` (β₀ the solver's own β, which the first iteration's probes use). A β that another
    behaviour (the stall rule) moved outside that range is left alone, as is β after an iteration that did not
    move. The running mean lives in the state's ``memory`` under ``key``, so one solver object serves any number
    of runs.

    Parameters
    ----------
    ratio
        β as a share of the step, > 0.
    floor_ratio
        The narrowest β as a share of the solver's own, in (0, 1].
    smoothing
        The newest step's weight in the running mean, in (0, 1] (1: β follows the last step alone).
    key
        Where in the state's ``memory`` the running mean is kept.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt.core.base import GradientEstimate
    >>> class Solver:  # the one attribute of the solver the rule reads
    ...     beta = 0.04
    >>> class Before:  # and of the state before the step
    ...     x = np.zeros(2)
    >>> rule = RadiusFollowsStep()
    >>> estimate = GradientEstimate(g=np.zeros(2), eps=0.0, used=20)
    >>> def moved(distance, memory={}):
    ...     return Move(x=np.array([distance, 0.0]), fx=1.0, fx_eps=0.0, step_taken=1.0, next_step=1.0,
    ...                 beta=0.04, memory=memory)
    >>> rule(Solver(), Before(), estimate, moved(0.3)).beta  # a quarter of 0.3 is above the solver's 0.04: β stays
    0.04
    >>> first = rule(Solver(), Before(), estimate, moved(0.08))
    >>> round(first.beta, 4)  # a quarter of the distance moved
    0.02
    >>> round(rule(Solver(), Before(), estimate, moved(0.02, first.memory)).beta, 4)  # mean of 0.08 and 0.02
    0.01
    """

    ratio: float = STEP_RADIUS_RATIO
    floor_ratio: float = STEP_RADIUS_FLOOR_RATIO
    smoothing: float = STEP_RADIUS_SMOOTHING
    key: str = field(default="radius_follows_step", repr=False)  # where it keeps its memory: not a setting

    def __post_init__(self) -> None:
        if not (math.isfinite(self.ratio) and self.ratio > 0):
            raise ValueError(f"ratio is β as a share of the step, > 0; got {self.ratio!r}")
        if not 0 < self.floor_ratio <= 1:
            raise ValueError(f"floor_ratio is a share of the solver's β, in (0, 1]; got {self.floor_ratio!r}")
        if not 0 < self.smoothing <= 1:
            raise ValueError(f"smoothing is the newest step's weight, in (0, 1]; got {self.smoothing!r}")

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move
    ) -> Move:
        step = distance(move.x, before.x)
        bounds = owned_beta_range(solver, self.floor_ratio, move.beta)
        if not (math.isfinite(step) and step > 0) or bounds is None:
            return move
        floor, ceiling = bounds
        previous = move.memory.get(self.key)
        mean = math.log(step) if previous is None else (1 - self.smoothing) * previous + self.smoothing * math.log(step)
        beta = min(max(self.ratio * math.exp(mean), floor), ceiling)
        return replace(move, beta=beta, memory={**move.memory, self.key: mean})
