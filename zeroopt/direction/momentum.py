"""Direction rules: what a descent iteration steps along, given the gradient estimate and what came before.

A :class:`~zeroopt.Chain` with a part of the ``direction`` stage hands the step rule what ``rule(solver, before,
estimate) -> (direction, memory)`` returns instead of the raw estimate; the rule keeps what it needs in the state's
``memory`` (a fresh run, a restart included, starts with none). Several run in turn, each on the previous one's
direction; a rule of your own is a dataclass of that form with :class:`~zeroopt.core.stages.ChoosesDirection`.

:class:`AdaptiveMomentum` is heavy-ball momentum whose weight follows the evidence that the steps overshoot.
The step rules descend along −p, p the (ascent) direction they were handed. A step that went as far as it
should leaves a gradient with no component along p, on average; one that stopped short leaves a gradient
that still agrees with p; one that overshot — across a narrow valley, say — leaves a gradient that points
back, ``ĝ · p < 0``. That sign is a one-bit measurement, noisy but unbiased, every iteration, at no query. The
rule keeps a running average of "overshot" and adds the previous direction with a weight that grows with how
far that average lies beyond ½: nothing while steps overshoot no more often than they stop short, up to
``max_weight`` once they always overshoot. Adding the previous direction to an estimate that turns back
against it cancels the part of the two that flips sign from one step to the next (the zigzag across the
valley) and keeps the part they share (the way along it).

"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import norm as vector_norm
from ..core.base import GradientEstimate, SolverSettings, SolverState
from ..core.stages import ChoosesDirection

__all__ = ["MOMENTUM_MEMORY", "AdaptiveMomentum"]

#: The weight of the newest iteration in :class:`AdaptiveMomentum`'s running average of overshoots:
#: about the last ten iterations count, so the weight follows the run's phases without chasing one-bit noise.
MOMENTUM_MEMORY = 0.1


@dataclass(frozen=True)
class AdaptiveMomentum(ChoosesDirection):
    """Heavy-ball momentum weighted by how often the steps overshoot (see the module docstring).

    The direction is ``ĝ/‖ĝ‖ + μ p`` (rescaled to ‖ĝ‖), with p the previous direction (unit) and
    ``μ = max_weight · max(0, 2a − 1)``, where a is the running average (weight ``memory_weight`` per
    iteration, from ½) of ``[ĝ · p < 0]`` — the estimate saying the last step overshot. Scale-free: only
    directions enter.

    Parameters
    ----------
    max_weight
        μ once every step overshoots.
    memory_weight
        Weight of the newest iteration in the running average (:data:`MOMENTUM_MEMORY`).
    key
        Where the previous direction and the average live in the state's ``memory``.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt import SolverContext, make_solver, minimize
    >>> f = lambda x: float(x[0] ** 2 + 100 * x[1] ** 2)  # a narrow valley
    >>> res = minimize(f, np.array([3.0, 0.3]), solver="sign-growing", budget=3000, seed=0, momentum=1.0)
    >>> bool(res.fun < 1e-2)
    True
    """

    max_weight: float = 1.0
    memory_weight: float = MOMENTUM_MEMORY
    key: str = field(default="momentum", repr=False)  # where it keeps its memory: not a setting

    def __post_init__(self) -> None:
        if not (np.isfinite(self.max_weight) and self.max_weight >= 0):
            raise ValueError(f"max_weight must be a non-negative number, got {self.max_weight!r}")
        if not 0 < self.memory_weight <= 1:
            raise ValueError(f"memory_weight must be in (0, 1], got {self.memory_weight!r}")

    def weight(self, average: float) -> float:
        """μ for a running overshoot average ``average``."""
        return self.max_weight * max(0.0, 2.0 * average - 1.0)

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        g = estimate.g
        norm = vector_norm(g)
        memory = dict(before.memory)
        if not (np.isfinite(norm) and norm > 0):
            return g, memory  # no estimate to blend; the previous direction is kept for the next iteration
        previous, average = memory.get(self.key, (None, 0.5))
        direction = g / norm
        if previous is not None:
            overshot = float(g @ previous < 0)  # the new estimate points back against the way followed
            average = (1 - self.memory_weight) * average + self.memory_weight * overshot
            direction = direction + self.weight(average) * previous
        size = vector_norm(direction)
        unit = direction / size if size > 0 else g / norm
        memory[self.key] = (unit, average)
        return norm * unit, memory  # the estimate's length: step rules that scale with it see no change
