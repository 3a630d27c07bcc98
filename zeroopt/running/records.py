"""Typed per-iteration diagnostics and the result of a run."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["IterationRecord", "OptimizeResult", "Status"]


class Status(str, enum.Enum):
    """Why a run stopped."""

    BUDGET = "budget"  # the oracle's hard cap was reached
    MAX_ITER = "max_iter"  # the iteration limit was reached
    TARGET = "target"  # the best value reached the requested target
    CALLBACK = "callback"  # a user callback asked to stop
    CONVERGED = "converged"  # the solver's own stopping rule fired (e.g. smoothing radius below its floor)
    NO_PROGRESS = "no_progress"  # iterations kept costing no queries: the oracle answers nothing new
    ERROR = "error"  # an exception stopped the run; this partial result rides on it (``err.partial_result``)
    INTERRUPTED = "interrupted"  # KeyboardInterrupt (Ctrl-C) stopped the run; likewise a partial result


_MESSAGES = {
    Status.BUDGET: "the query budget is spent",
    Status.MAX_ITER: "the iteration limit was reached",
    Status.TARGET: "the target value was reached",
    Status.CALLBACK: "a callback asked to stop",
    Status.CONVERGED: "the solver converged",
    Status.NO_PROGRESS: "iterations stopped costing queries (the oracle answered every point without looking)",
    Status.ERROR: "an exception stopped the run: this is the best found before it (a partial result)",
    Status.INTERRUPTED: "the run was interrupted (KeyboardInterrupt): this is the best found before it",
}


@dataclass(frozen=True)
class IterationRecord:
    """What happened in one iteration, recorded without re-evaluating f.

    Attributes
    ----------
    iteration
        0-based iteration index (the record is written after the iteration).
    queries
        Oracle units spent so far, as counted by the oracle.
    f
        Objective at the current iterate (as reported by the oracle, within ``eps``).
    best_f
        Best value seen so far.
    eps
        Largest precision the oracle reported for the values this iteration used.
    beta
        Smoothing radius (finite-difference step) this iteration's probes used (a stall rule may shrink it
        for the next iteration).
    step_size
        Step size taken (0 when the iterate did not move).
    grad_norm_estimate
        Norm of the gradient estimate.
    true_grad_norm
        ‖∇f‖ at the current iterate when the problem knows its gradient, else ``None``.
    """

    iteration: int
    queries: int
    f: float
    best_f: float
    eps: float
    beta: float
    step_size: float
    grad_norm_estimate: float
    true_grad_norm: float | None = None


@dataclass
class OptimizeResult:
    """The outcome of :func:`zeroopt.minimize`.

    ``x``/``fun`` are the best point seen and its value (never the last iterate if that is worse);
    ``fun_eps`` is the precision of ``fun`` as the oracle reported it. A run stopped by an exception leaves
    such a result, with status ``"error"`` or ``"interrupted"``, on the exception as ``partial_result``.
    ``state`` is the solver's state where the run ended (a :class:`~zeroopt.SolverState`: iterate, step, smoothing
    radius, iteration count, memory), from which :func:`~zeroopt.run_solver` can go on (``state=``); ``None`` when
    the run ended before its first state.
    """

    x: NDArray[np.float64]
    fun: float
    fun_eps: float
    queries: int
    iterations: int
    status: Status
    message: str
    history: list[IterationRecord] = field(default_factory=list)
    x_last: NDArray[np.float64] | None = None
    flags: list[str] = field(default_factory=list)
    solver: str = ""
    state: Any = None

    @property
    def success(self) -> bool:
        """False for a partial result (the run was stopped by an exception or Ctrl-C), else True."""
        return self.status not in (Status.ERROR, Status.INTERRUPTED)

    @staticmethod
    def message_for(status: Status) -> str:
        return _MESSAGES[status]

    def history_array(self, name: str) -> NDArray[np.float64]:
        """One field of the history as an array (``None`` becomes NaN), e.g. ``res.history_array("best_f")``."""
        if name not in IterationRecord.__dataclass_fields__:
            raise KeyError(f"no record field {name!r}; fields: {list(IterationRecord.__dataclass_fields__)}")
        return np.array([np.nan if getattr(r, name) is None else getattr(r, name) for r in self.history], float)

    def __repr__(self) -> str:
        return (
            f"OptimizeResult(solver={self.solver!r}, fun={self.fun:.6g}, queries={self.queries}, "
            f"iterations={self.iterations}, status={self.status.value!r}, message={self.message!r})"
        )
