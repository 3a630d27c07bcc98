"""First-hit counts of a run: when ‖∇f‖² first drops below δ², per iterate or on average.

Two criteria, both read off the true gradient norms zeroopt records for synthetic problems:

* ``"iterate"`` — the first k with ``‖∇f(x_k)‖ <= δ`` (equivalently the best iterate so far is δ-stationary);
* ``"average"`` — the first N with ``(1/(N+1)) Σ_{k<=N} ‖∇f(x_k)‖² <= δ²``, the quantity Theorem 1 and
  NS bound (one run's average; the theorems bound its expectation).

The average is never below the minimum, so the iterate hit comes first. A run that stops before a
criterion is met is *censored* at its last iteration: the hit is only known to be later.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from zeroopt import IterationRecord, OptimizeResult

__all__ = ["Criterion", "FirstHit", "FirstHitStop", "first_hit", "gradient_norms", "query_counts"]

Criterion = Literal["iterate", "average"]


def gradient_norms(result: OptimizeResult, grad0: float) -> NDArray[np.float64]:
    """``‖∇f(x_k)‖`` for k = 0..iterations: ``grad0`` at x0, then one value per history record.

    zeroopt writes record k after iteration k, with the gradient at the iterate it produced
    (``x_{k+1}``), so x0's norm has to come from the caller.
    """
    g = result.history_array("true_grad_norm")
    if np.isnan(g).any():
        raise ValueError("the run has no true gradient norms; minimize a zeroopt.oracles.problems Problem to record "
                         "them")
    return np.concatenate([[float(grad0)], g])


def query_counts(result: OptimizeResult) -> NDArray[np.int64]:
    """Oracle queries spent when iterate k was known, k = 0..iterations (1 for x0: its value)."""
    return np.concatenate([[1], np.array([r.queries for r in result.history], dtype=np.int64)])


@dataclass(frozen=True)
class FirstHit:
    """Where a criterion was first met.

    Attributes
    ----------
    iteration
        Iterations done when it was met (k for the iterate x_k), or the last iteration if censored.
    queries
        Oracle queries spent at that point.
    censored
        True when the run ended before the criterion was met (``iteration``/``queries`` are then lower
        bounds on the hit).
    """

    iteration: int
    queries: int
    censored: bool


def first_hit(
    norms: NDArray[np.float64], queries: NDArray[np.int64], delta: float, criterion: Criterion
) -> FirstHit:
    """First index where ``criterion`` holds for the gradient norms ``norms`` (k = 0, 1, …).

    Examples
    --------
    >>> import numpy as np
    >>> g = np.array([1.0, 0.5, 0.05, 0.05]); qs = np.array([1, 3, 5, 7])
    >>> first_hit(g, qs, 0.1, "iterate")
    FirstHit(iteration=2, queries=5, censored=False)
    >>> first_hit(g, qs, 0.65, "average")  # running means of g²: 1, 0.625, 0.4175 <= 0.4225
    FirstHit(iteration=2, queries=5, censored=False)
    """
    if criterion == "iterate":
        met = norms <= delta
    elif criterion == "average":
        sq = np.asarray(norms, dtype=float) ** 2
        met = np.cumsum(sq) / np.arange(1, len(sq) + 1) <= delta**2
    else:
        raise ValueError(f"criterion must be 'iterate' or 'average', got {criterion!r}")
    if met.any():
        k = int(np.argmax(met))
        return FirstHit(k, int(queries[k]), False)
    return FirstHit(len(norms) - 1, int(queries[-1]), True)


@dataclass
class FirstHitStop:
    """Callback: stop a run once every criterion in ``criteria`` has been met (saves the censoring cap).

    Needs the true gradient norm in the records (a :class:`zeroopt.Problem` run) and x0's norm.
    """

    delta: float
    grad0: float
    criteria: Sequence[Criterion] = ("iterate", "average")
    _sum_sq: float = field(default=0.0, init=False)
    _count: int = field(default=0, init=False)
    _min: float = field(default=np.inf, init=False)

    def __post_init__(self) -> None:
        self._sum_sq, self._count, self._min = self.grad0**2, 1, self.grad0

    def __call__(self, record: IterationRecord) -> bool:
        g = record.true_grad_norm
        if g is None:
            return False
        self._sum_sq += g * g
        self._count += 1
        self._min = min(self._min, g)
        done = {"iterate": self._min <= self.delta, "average": self._sum_sq / self._count <= self.delta**2}
        return all(done[c] for c in self.criteria)
