"""Stopping rules: the behaviours that end a run, or reset its step when it stalls.

* :class:`StallRule` — when the step size falls below a floor, reset it, shrink β, converge at a β floor (the OPT
  reference code's rule);
* :class:`NoProgressRule` — converge when the iterates' best value stops improving over a window (for step rules
  that never shrink, such as the theory's fixed step);
* :class:`DiminishingReturnsRule` — converge when the second half of a run gained less than a fraction.

Each is a :class:`~zeroopt.core.base.Behaviour`: ``rule(solver, before, estimate, move) -> Move``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..core.base import GradientEstimate, Move, SolverSettings, SolverState
from ..core.constants import REFERENCE_BETA_DECAY, REFERENCE_BETA_MIN, REFERENCE_STEP_MIN, REFERENCE_STEP_RESET
from ..core.stages import StopsRun

__all__ = ["NO_PROGRESS_WINDOW", "DiminishingReturnsRule", "NoProgressRule", "StallRule"]

#: Iterations without improvement after which a fixed-step run stops (:class:`NoProgressRule`).
NO_PROGRESS_WINDOW = 200


@dataclass(frozen=True)
class StallRule(StopsRun):
    """The OPT reference code's stall rule.

    When the step size falls below ``step_min``, the finite differences are too coarse for the current
    neighbourhood: the step restarts at ``step_reset`` (the solver's initial step when ``None``), β is
    multiplied by ``beta_decay``, and the run converges once β < ``beta_min``. The defaults are the reference
    code's, as the built-in recipes pass them.
    """

    step_min: float = REFERENCE_STEP_MIN
    step_reset: float | None = REFERENCE_STEP_RESET
    beta_decay: float = REFERENCE_BETA_DECAY
    beta_min: float = REFERENCE_BETA_MIN

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        if not move.next_step < self.step_min:
            return move
        beta = move.beta * self.beta_decay
        reset = self.step_reset if self.step_reset is not None else solver.step
        return replace(move, next_step=reset, beta=beta, converged=beta < self.beta_min)


@dataclass(frozen=True)
class NoProgressRule(StopsRun):
    """Converge when the iterate's value has not improved in ``window`` consecutive iterations.

    An improvement is a value below the best iterate value so far by more than ``rtol · |best| + atol``.
    A step rule that never shrinks (the theory's fixed step) has no other rule to end a run: without this
    one, only the budget would. It remembers ``(best, iterations since)`` in the state's ``memory`` under
    ``key``, so one solver object serves any number of runs.
    """

    window: int = NO_PROGRESS_WINDOW
    rtol: float = 1e-9
    atol: float = 0.0
    key: str = field(default="no_progress", repr=False)  # where it keeps its memory: not a setting

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        best, since = move.memory.get(self.key, (before.fx, 0))
        if move.fx < best - (self.rtol * abs(best) + self.atol):
            best, since = move.fx, 0
        else:
            since += 1
        memory = {**move.memory, self.key: (best, since)}
        return replace(move, memory=memory, converged=move.converged or since >= self.window)


@dataclass(frozen=True)
class DiminishingReturnsRule(StopsRun):
    """Converge once the second half of the run improved its value by less than ``min_gain`` (relative).

    At iteration t >= ``first_check`` the iterate's value is compared with the one at iteration ⌈t/2⌉: a
    scale-free test of a run that still improves, but ever more slowly — the budget it would spend crawling
    buys more from a fresh start (:func:`~zeroopt.solve_many` with ``fresh_start``). The iterate values are
    kept in the state's ``memory`` under ``key``: an append-only log and the length of it this state has seen.
    """

    min_gain: float = 0.01
    first_check: int = 16
    key: str = field(default="diminishing_returns", repr=False)  # where it keeps its memory: not a setting

    def __call__(self, solver: SolverSettings, before: SolverState, estimate: GradientEstimate, move: Move) -> Move:
        # log[t] = f after iteration t. Extending the log in place costs O(1) per iteration (a copy would cost
        # O(t)); every state keeps its own length, so earlier states still see their prefix, and a state whose
        # log another move has already extended (two moves from one state) branches off a copy of its prefix.
        log, seen = move.memory.get(self.key, (None, 0))
        if log is None:
            log, seen = [before.fx], 1
        elif len(log) != seen:
            log = log[:seen]
        log.append(move.fx)
        t = seen
        converged = move.converged
        if t >= self.first_check:
            half = log[(t + 1) // 2]
            converged = converged or (half - move.fx) < self.min_gain * abs(half)
        return replace(move, memory={**move.memory, self.key: (log, t + 1)}, converged=converged)
