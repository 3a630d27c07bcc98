"""Probes spanning the recent estimates: part of each iteration's probes in the subspace the last estimates span.

Where q is a small fraction of d, q random probes measure about q/d of the gradient's squared norm, whatever the
objective. Consecutive gradients of a smooth objective are not independent, though: the last few estimates span a
few dimensions that hold much more of the next gradient than a random subspace of that size.

:class:`HistorySubspaceProbes` spends ``k`` of the q probes on an orthonormal basis of the span of the last
``span`` estimates (``k`` at most ``max_share`` of q) and makes the other ``q − k`` orthonormal to that basis and
to each other, so the q comparisons still measure q distinct directions. Nothing of this costs a query, and no
estimator changes: the probes' answers are read as before. The probes' second moment is no longer isotropic, so
an estimator that was unbiased for ∇f estimates a preconditioned gradient, weighted toward the recent span —
still a descent direction. The idea is the guided evolution strategies' (Maheswaranathan et al., *Guided
evolutionary strategies*, ICML 2019), with the solver's own estimates as the guiding subspace; Cheng et al.'s
prior-guided RGF (NeurIPS 2019) and its history prior (NeurIPS 2021) weigh one prior direction instead.

The part keeps its estimates in the solver state's memory (:data:`MEMORY_KEY`), so a restart or a race's new
start begins without a history.

On the hard-label attack it is not the default (what it was measured against: docs/defaults.md): a step rule
that searches along its direction (the attack's semicircular step) leaves in that span mostly the zigzag across
the valley it crosses, which momentum cancels; probed better, the estimate points back across the valley.
Where the gradients keep to a few directions, as on an ill-conditioned quadratic that lives on
a subspace, the span is the way down (``tests/test_history_subspace.py``: under half the value without it at
1.5k queries).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.stages import Iteration, ShapesProbes
from .orthogonal import gram_schmidt_rows

__all__ = ["HISTORY_SPAN", "HISTORY_MAX_SHARE", "MEMORY_KEY", "HistorySubspaceProbes"]

#: Where the part keeps its past estimates in :attr:`~zeroopt.SolverState.memory`.
MEMORY_KEY = "history_subspace"
#: The estimates kept by default: the last 10, the smaller of the two spans measured on the attack.
HISTORY_SPAN = 10
#: At most this share of an iteration's probes go to the history's span: the rest keeps every other direction
#: probed, where the next gradient holds most of its norm.
HISTORY_MAX_SHARE = 0.25


@dataclass(frozen=True)
class HistorySubspaceProbes(ShapesProbes):
    """``k`` probes spanning the last ``span`` estimates, the rest orthonormal to them (module docstring).

    Parameters
    ----------
    span
        How many past estimates to keep; their span has at most this dimension.
    max_share
        At most this share of an iteration's q probes go to the span (at least one probe stays outside it).

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt.sample.orthogonal import orthonormal_rows
    >>> part = HistorySubspaceProbes(span=3, max_share=0.5)
    >>> rng = np.random.default_rng(0)
    >>> memory = {}
    >>> for _ in range(3):  # three estimates, all in the first 5 coordinates
    ...     memory = part.remember(memory, np.r_[rng.standard_normal(5), np.zeros(45)])
    >>> u = part(orthonormal_rows(rng, 8, 50), memory, None)
    >>> bool(np.allclose(u @ u.T, np.eye(8)))
    True
    >>> round(float((u[:3, :5] ** 2).sum()), 6)  # the first 3 probes lie wholly in those 5 coordinates
    3.0
    """

    span: int = HISTORY_SPAN
    max_share: float = HISTORY_MAX_SHARE

    def __post_init__(self) -> None:
        if isinstance(self.span, bool) or not isinstance(self.span, (int, np.integer)) or self.span < 1:
            raise ValueError(f"history span must be a positive integer, got {self.span!r}")
        if not (isinstance(self.max_share, (int, float)) and 0 < self.max_share <= 1):
            raise ValueError(f"history max_share must be in (0, 1], got {self.max_share!r}")

    def update(self, it: Iteration) -> Iteration:
        """Stage ``shape``: the iteration's probes, part of them in the span of the estimates remembered."""
        return replace(it, probes=self(it.probes, it.memory, it.active))

    def finish(self, it: Iteration) -> Iteration:
        """After the iteration: its estimate joins the history the next iteration's probes span."""
        move = replace(it.move, memory=self.remember(it.move.memory, it.estimate.g))  # type: ignore[union-attr]
        return replace(it, move=move)

    def remember(self, memory: Mapping[str, Any], estimate: NDArray[np.float64]) -> dict[str, Any]:
        """A copy of ``memory`` with ``estimate`` (as a unit vector) added to the history; an estimate of no
        length or not finite adds nothing."""
        g = np.asarray(estimate, dtype=float).ravel()
        norm = float(np.linalg.norm(g))
        kept = tuple(memory.get(MEMORY_KEY, ()))
        if np.isfinite(norm) and norm > 0:
            kept = (kept + (g / norm,))[-int(self.span):]
        return {**memory, MEMORY_KEY: kept}

    def __call__(
        self, directions: NDArray[np.float64], memory: Mapping[str, Any], active: NDArray[np.intp] | None
    ) -> NDArray[np.float64]:
        """The ``(q, d)`` probes ``directions`` with their first ``k`` rows replaced by a basis of the history's
        span (within the ``active`` coordinates when given) and the others made orthonormal to it."""
        history = memory.get(MEMORY_KEY, ())
        q, d = directions.shape
        k = min(len(history), int(self.max_share * q), q - 1, d - q)
        if k < 1:
            return directions
        past = np.array(history[-k:])
        if active is not None:
            mask = np.zeros(d, dtype=bool)
            mask[active] = True
            past = past * mask[None, :]
        try:
            basis = gram_schmidt_rows(past)
        except np.linalg.LinAlgError:
            return directions  # (dependent estimates: nothing reliable to span)
        rest = directions[k:] - (directions[k:] @ basis.T) @ basis
        try:
            rest = gram_schmidt_rows(rest)
        except np.linalg.LinAlgError:
            return directions
        # Each row keeps the length the sampler drew it with, so the estimator's scale still holds.
        lengths = np.linalg.norm(directions, axis=1, keepdims=True)
        return np.concatenate([basis, rest]) * lengths
