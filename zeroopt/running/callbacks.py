"""Analysis hooks: callbacks that watch (and may stop) a run.

A callback is any callable ``cb(record: IterationRecord) -> bool | None``; returning ``True`` stops the
run with status ``"callback"``. Callbacks may also expose ``flags`` (a list of strings) that the result
collects — :class:`ToleranceMonitor` does.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from .records import IterationRecord

__all__ = ["GradientNormStop", "StallStop", "ToleranceMonitor", "ToleranceWarning"]


class ToleranceWarning(UserWarning):
    """The oracle's precision is too coarse for the smoothing radius and the target accuracy."""


@dataclass
class ToleranceMonitor:
    """Flag iterations whose oracle precision breaks Theorem 1's condition ε ≲ c·β·δ².

    Theorem 1 (Cheng et al. 2019) keeps the O(d/δ²) rate while the error of each function value is
    ``O(β δ²)``. Coarser values bias the gradient estimate by up to ~ε/β (the appendix states a looser
    (2ε/β)√d; ``theory.bounds`` has the sharp form), so the run stalls at a floor instead of reaching
    ‖∇f‖ ≤ δ. A redone proof needs only ε = O(βδ), so a flagged run may still converge: the flag says the
    theorem no longer guarantees it.

    Parameters
    ----------
    delta
        Target accuracy δ (the run aims at ‖∇f‖² ≤ δ²).
    constant
        The constant c of the O(·); 1 by default.
    stop
        Stop the run at the first violation instead of only flagging it.
    warn
        Emit one :class:`ToleranceWarning` at the first violation.
    """

    delta: float
    constant: float = 1.0
    stop: bool = False
    warn: bool = True
    violations: list[int] = field(default_factory=list)

    def threshold(self, beta: float) -> float:
        """Largest admissible ε at smoothing radius ``beta``."""
        return self.constant * beta * self.delta**2

    def __call__(self, record: IterationRecord) -> bool:
        if record.eps > self.threshold(record.beta):
            if not self.violations and self.warn:
                warnings.warn(self._message(record), ToleranceWarning, stacklevel=3)
            self.violations.append(record.iteration)
            return self.stop
        return False

    def _message(self, record: IterationRecord) -> str:
        return (
            f"oracle precision eps={record.eps:.3g} exceeds c*beta*delta^2={self.threshold(record.beta):.3g} "
            f"(beta={record.beta:.3g}, delta={self.delta:.3g}) at iteration {record.iteration}: "
            "Theorem 1's rate no longer holds and the run will stall at a floor; request a smaller eps "
            "or a larger beta"
        )

    @property
    def flags(self) -> list[str]:
        if not self.violations:
            return []
        return [
            f"tolerance: eps above c*beta*delta^2 (delta={self.delta:g}, c={self.constant:g}) in "
            f"{len(self.violations)} iteration(s), first at {self.violations[0]}"
        ]


@dataclass
class GradientNormStop:
    """Stop once the *true* gradient norm (known for synthetic problems) is at most ``tol``."""

    tol: float

    def __call__(self, record: IterationRecord) -> bool:
        return record.true_grad_norm is not None and record.true_grad_norm <= self.tol


@dataclass
class StallStop:
    """Stop when the best value has not improved by ``rtol`` (relative) in ``patience`` iterations."""

    patience: int = 50
    rtol: float = 1e-9
    _best: float = float("inf")
    _since: int = 0

    def __call__(self, record: IterationRecord) -> bool:
        if record.best_f < self._best - self.rtol * abs(self._best if self._best != float("inf") else 1.0):
            self._best, self._since = record.best_f, 0
        else:
            self._since += 1
        return self._since >= self.patience
