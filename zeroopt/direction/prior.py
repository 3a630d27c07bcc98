"""The history prior: the earlier estimates as a prior for the gradient, weighted by how fast it turns.

A descent run's consecutive gradients are alike once its steps are small, so what earlier iterations
measured is a *prior* for the new gradient (Cheng et al., NeurIPS 2019, prior-guided random gradient-free
estimation; its history prior). How much to trust it changes along a run — little while large steps turn the
gradient, much once they do not — and :class:`HistoryPrior` measures it every iteration, at no query, with a
Kalman filter of the gradient μ (isotropic: one variance for the whole vector):

- each estimate is ``g = μ + e`` with noise energy ``E‖e‖² = σ²``, which an estimator that states its terms
  (``g = Σ X_i``, i.i.d., ``GradientEstimate.probes`` and ``.weights``) gives as ``σ² ≈ Σ ‖X_i‖²``;
- between iterations μ drifts by an unknown energy D per iteration. The innovation ``r = g − m`` (m the
  filter's mean) has ``E‖r‖² = P + D + σ²`` (P the mean's own error energy), so ``‖r‖² − P − σ²`` is an
  unbiased measurement of D, pooled over the last iterations (:data:`PRIOR_MEMORY`);
- the gain ``K = (P + D) / (P + D + σ²)`` then blends the estimate into the mean: ``m ← m + K r``,
  ``P ← (1 − K)(P + D)``. While the gradient turns fast (D ≫ σ²) K ≈ 1 and the mean is the newest estimate;
  while it holds still, the mean averages ever more estimates, each by its precision (q grows along a run).

One drift is not random: a step rule that searches along its direction (the line searches, the semicircular
step) stops where the derivative along it is about zero, so after a step that moved, the new gradient has lost
its component along the direction followed — and the filter's mean *is* that direction. With
``forget_step=True`` the mean loses that component before the update; after an exact search along the mean
nothing of it is left, and the rule follows the newest estimate alone (identical to no rule after the hard-label
attack's semicircular step, which is such a search). Kept (the default), the mean carries what an inexact search
left behind, along with the stale part (what either was measured against: docs/defaults.md).

No constant is tuned to a model: σ² and D come from the probes' answers. The step follows m. A fixed step
(``line_search="fixed"``) refuses the rule: it never checks that it gained, and the mean's lag behind a gradient
that shrinks toward a minimum makes it overshoot (``rgf-fixed`` diverged on a quadratic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.base import GradientEstimate, SolverSettings, SolverState
from ..core.stages import ChoosesDirection

__all__ = ["PRIOR_MEMORY", "GradientFilter", "HistoryPrior", "noise_energy"]

#: The weight of the newest iteration in :class:`HistoryPrior`'s pooled measurement of the gradient's drift
#: (each iteration's own is unbiased but noisy): about the last ten iterations count.
PRIOR_MEMORY = 0.1


def noise_energy(probes: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    """``Σ ‖X_i‖²`` for the terms ``X_i = weights_i · probes_i`` of ``g = weights @ probes``: the noise energy
    ``E‖g − E g‖²`` of an estimate with i.i.d. terms, up to ``‖E g‖²/q`` (small beside it whenever the
    estimate is noisy enough to need a prior)."""
    terms = weights[:, None] * probes
    return float(np.einsum("ij,ij->", terms, terms))


@dataclass(frozen=True)
class GradientFilter:
    """The filter's state: mean ``m``, its error energy ``P``, the pooled drift ``D`` and the last gain.

    Examples
    --------
    >>> import numpy as np
    >>> f = GradientFilter.start(np.array([1.0, 0.0]), noise=0.5)
    >>> f = f.update(np.array([0.6, 0.2]), noise=0.5, memory_weight=0.1)
    >>> f.gain  # a change the noise explains (no drift): two equally noisy estimates weigh the same
    0.5
    >>> f.mean
    array([0.8, 0.1])
    """

    mean: NDArray[np.float64]
    variance: float
    drift: float = 0.0
    gain: float = 1.0

    @classmethod
    def start(cls, g: NDArray[np.float64], noise: float) -> GradientFilter:
        """The filter after its first estimate: that estimate, with its noise."""
        return cls(mean=np.array(g, dtype=float), variance=float(noise))

    def without(self, direction: NDArray[np.float64]) -> GradientFilter:
        """The filter with its mean's component along the unit ``direction`` removed (its error energy along
        that one of d directions goes too)."""
        mean = self.mean - (self.mean @ direction) * direction
        return GradientFilter(mean=mean, variance=self.variance * (1.0 - 1.0 / max(mean.size, 1)),
                              drift=self.drift, gain=self.gain)

    def update(self, g: NDArray[np.float64], noise: float, memory_weight: float) -> GradientFilter:
        """Blend a new estimate ``g`` of noise energy ``noise`` into the mean (module docstring)."""
        innovation = g - self.mean
        measured = float(innovation @ innovation) - self.variance - noise  # unbiased for D
        drift = (1.0 - memory_weight) * self.drift + memory_weight * measured
        predicted = self.variance + max(drift, 0.0)
        total = predicted + noise
        gain = predicted / total if total > 0 else 1.0
        return GradientFilter(mean=self.mean + gain * innovation, variance=(1.0 - gain) * predicted,
                              drift=drift, gain=float(gain))


@dataclass(frozen=True)
class HistoryPrior(ChoosesDirection):
    """A direction rule (:mod:`zeroopt.direction.momentum`) that follows a Kalman filter of the gradient (module
    docstring).

    It needs an estimator that states its terms (``GradientEstimate.probes`` and ``.weights``: every estimator of
    :mod:`zeroopt.estimate.estimators` does); with one that does not, the estimate passes unchanged. The returned
    direction keeps the estimate's length, so step rules that scale with it see no change.

    Parameters
    ----------
    memory_weight
        Weight of the newest iteration in the pooled drift (:data:`PRIOR_MEMORY`).
    forget_step
        After a step that moved the iterate, remove the mean's component along the direction it followed
        (module docstring): for step rules that search along their direction, which then leave nothing of it.
    key
        Where the :class:`GradientFilter` (with the last direction and iterate) lives in the state's ``memory``.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt import minimize
    >>> f = lambda x: float(x[0] ** 2 + 100 * x[1] ** 2)  # a narrow valley
    >>> res = minimize(f, np.array([3.0, 0.3]), solver="sign-growing", budget=3000, seed=0, history_prior=True)
    >>> bool(res.fun < 1e-2)
    True
    """

    memory_weight: float = PRIOR_MEMORY
    forget_step: bool = False
    key: str = field(default="history_prior", repr=False)  # where it keeps its memory: not a setting

    def __post_init__(self) -> None:
        if not 0 < self.memory_weight <= 1:
            raise ValueError(f"memory_weight must be in (0, 1], got {self.memory_weight!r}")

    def __call__(
        self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate
    ) -> tuple[NDArray[np.float64], dict[str, Any]]:
        g = estimate.g
        memory = dict(before.memory)
        norm = float(np.linalg.norm(g))
        if estimate.probes is None or estimate.weights is None or not (np.isfinite(norm) and norm > 0):
            return g, memory  # nothing to blend; the filter is kept for the next iteration
        noise = noise_energy(estimate.probes, estimate.weights)
        state, followed, at = memory.get(self.key, (None, None, None))
        if state is None or state.mean.shape != g.shape or not np.isfinite(noise):
            state = GradientFilter.start(g, noise)
        else:
            if self.forget_step and followed is not None and not np.array_equal(at, before.x):
                state = state.without(followed)
            state = state.update(g, noise, self.memory_weight)
        size = float(np.linalg.norm(state.mean))
        unit = state.mean / size if np.isfinite(size) and size > 0 else g / norm
        # The direction followed and where from: only forget_step needs them (the copy is of a d-vector).
        memory[self.key] = (state, unit, before.x.copy()) if self.forget_step else (state, None, None)
        return unit * norm, memory
