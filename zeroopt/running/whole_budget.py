"""The whole budget: a run that stops early is restarted until the budget is spent, with one ledger and one best point.

A local solver stops on its own rule (a radius floor, a stall) long before a generous budget is spent, and what it
leaves unspent helps no one. :func:`spend_budget` restarts such a run the way the field does (Py-BOBYQA's soft
restarts, IPOP/BIPOP-CMA-ES's growing ones): from the best point with the solver's initial radius while restarting
there still pays, then from fresh points drawn around the best point at a distance that grows by a constant factor
with every fresh start (and starts over once it reaches the widest). Every run asks the same oracle, so the ledger
counts every query of every run and the budget caps them together; the result is the best point of all runs.

The policy is a :class:`Restarts` object; :func:`zeroopt.minimize` takes one (``restarts=``, on by default) and any
solver can run under it, since a restart only starts the solver again (its ``init``) from another point.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import flat, host, like
from ..core.errors import attach_partial_result, partial_result
from ..oracles.requests import Request, Response
from .global_phase import GlobalPhase, es_run
from .records import IterationRecord, OptimizeResult, Status

__all__ = ["FRESH_SHARE", "PAYING_GAIN", "RADIUS_GROWTH", "STALE_RESTARTS", "WIDEST_SHARE", "Restarts", "as_restarts",
           "relative_gain", "restarts_ran", "spend_budget"]

#: A restart from the best point pays while it lowers the best value by at least this fraction of it; once one does
#: not, the basin is spent and the next restart starts from a fresh point (the lockstep restarts' rule, 1 %).
PAYING_GAIN = 0.01
#: The first fresh start's distance from the best point, per coordinate, as a share of the start's scale
#: max(‖x0‖∞, 1): Py-BOBYQA's first trust radius and the DFO harness's first step for every peer.
FRESH_SHARE = 0.1
#: Each fresh start goes this many times farther than the one before (IPOP-CMA-ES doubles its population).
RADIUS_GROWTH = 2.0
#: The farthest a fresh start goes, as a share of the scale; past it the distances start over from the first.
WIDEST_SHARE = 10.0
#: Restarts in a row that do not pay (each lowers the best value by less than :data:`PAYING_GAIN`) after which the
#: call stops restarting: two sweeps of the fresh distances (0.1 … 6.4 of the scale) found nothing. A budget too
#: large to spend (10¹⁸, "no budget") still ends.
STALE_RESTARTS = 14
#: The flag a result carries when restarts ran: ``restarts=<how many>``.
FLAG = "restarts="

Callback = Callable[[IterationRecord], Any]
RunGenerator = Generator[Request, Response, OptimizeResult]
#: ``start_run(x, f0, f0_eps, rng, max_iter, callback)``: a run of the solver from flat ``x`` (``f0`` its value, or
#: ``None`` to evaluate it), drawing from ``rng``, at most ``max_iter`` iterations, calling ``callback`` each one.
StartRun = Callable[[Any, "float | None", float, np.random.Generator, "int | None", Callback], RunGenerator]
#: ``answer(run)``: drive one run to its end against the oracle every run shares; its result.
Answer = Callable[[RunGenerator], OptimizeResult]
_EARLY = (Status.CONVERGED, Status.NO_PROGRESS)  # a run that ended on its own with budget left


@dataclass(frozen=True)
class Restarts:
    """How a run that stopped early is restarted while budget is left (:func:`spend_budget`).

    Parameters
    ----------
    max_restarts
        At most this many restarts (``None``: as many as the budget allows; 0: one run).
    max_stale
        Stop restarting after this many restarts in a row that did not pay (``None``: never).
    paying_gain
        A restart from the best point pays while the run before it lowered the call's best value by at least this
        fraction; otherwise the next restart is from a fresh point.
    fresh_share, growth, widest_share
        The k-th fresh start is the best point plus a uniform draw from the box of half-width
        ``fresh_share · growth**k · max(‖x0‖∞, 1)``; past ``widest_share`` the half-width starts over.
    global_phase
        Where a fresh start would be drawn, run this CMA-ES phase (:class:`~zeroopt.GlobalPhase`) from the best
        point instead, and start the solver from the phase's best point (``None``, the default: fresh starts).

    Examples
    --------
    >>> Restarts(max_restarts=3).growth
    2.0
    """

    max_restarts: int | None = None
    max_stale: int | None = STALE_RESTARTS
    paying_gain: float = PAYING_GAIN
    fresh_share: float = FRESH_SHARE
    growth: float = RADIUS_GROWTH
    widest_share: float = WIDEST_SHARE
    global_phase: GlobalPhase | None = None

    def __post_init__(self) -> None:
        for name in ("max_restarts", "max_stale"):
            m = getattr(self, name)
            if m is not None and (isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 0):
                raise ValueError(f"Restarts: {name} must be None or a non-negative integer, got {m!r}")
        for name in ("paying_gain", "fresh_share", "growth", "widest_share"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not math.isfinite(value):
                raise ValueError(f"Restarts: {name} must be a finite number, got {value!r}")
        if self.paying_gain < 0 or self.fresh_share <= 0 or self.growth < 1 or self.widest_share < self.fresh_share:
            raise ValueError("Restarts: paying_gain >= 0, fresh_share > 0, growth >= 1, widest_share >= fresh_share; "
                             f"got {self!r}")

    def half_width(self, k: int, scale: float) -> float:
        """The half-width of the box the ``k``-th fresh start (from 0) is drawn from, for a start of ``scale``."""
        levels = 1
        if self.growth > 1:
            levels += math.floor(round(math.log(self.widest_share / self.fresh_share) / math.log(self.growth), 9))
        return self.fresh_share * self.growth ** (k % levels) * scale

    def phase_level(self, k: int) -> int:
        """The level of the ``k``-th global phase (from 0): phases widen their first step size by ``growth`` and
        multiply their population by the phase's own growth, level by level, and start over past ``widest_share``
        (so neither grows without bound on a budget too large to spend)."""
        share = self.global_phase.sigma_share if self.global_phase is not None else 1.0
        levels = 1
        if self.growth > 1 and self.widest_share > share:
            levels += math.floor(round(math.log(self.widest_share / share) / math.log(self.growth), 9))
        return k % levels

    def phase_sigma(self, k: int, scale: float) -> float:
        """The first step size of the ``k``-th global phase: ``sigma_share · growth**level`` of the scale."""
        share = self.global_phase.sigma_share if self.global_phase is not None else 1.0
        return min(share * self.growth ** self.phase_level(k), max(self.widest_share, share)) * scale


def as_restarts(restarts: object) -> Restarts | None:
    """``minimize``'s ``restarts=`` checked: ``True`` the default policy, ``False``/``None`` one run, or a
    :class:`Restarts` (``TypeError`` for anything else)."""
    if restarts is True:
        return Restarts()
    if restarts is False or restarts is None:
        return None
    if isinstance(restarts, Restarts):
        return restarts
    raise TypeError(f"restarts must be True, False or a zeroopt.Restarts, got {restarts!r}")


def restarts_ran(result: OptimizeResult) -> int:
    """How many restarts the call that made ``result`` ran (0 for one run)."""
    return next((int(f[len(FLAG):]) for f in result.flags if f.startswith(FLAG)), 0)


class _Continued:
    """The caller's callbacks, each handed the records of the whole call: iterations numbered on from the runs
    before, ``best_f`` the call's best value. Their ``flags`` are the result's."""

    def __init__(self, callbacks: Sequence[Callback]) -> None:
        self.callbacks, self.offset, self.best = list(callbacks), 0, math.inf

    @property
    def flags(self) -> list[str]:
        return [f for cb in self.callbacks for f in getattr(cb, "flags", [])]

    def record(self, rec: IterationRecord) -> IterationRecord:
        if self.offset == 0 and rec.best_f <= self.best:
            return rec
        return replace(rec, iteration=rec.iteration + self.offset, best_f=min(rec.best_f, self.best))

    def shift(self, run: OptimizeResult) -> OptimizeResult:
        """``run`` (just ended) with its history as the call's records."""
        if self.offset == 0 and math.isinf(self.best):
            return run
        return replace(run, history=[self.record(r) for r in run.history])

    def __call__(self, rec: IterationRecord) -> bool:
        mapped, stop = self.record(rec), False
        for cb in self.callbacks:
            stop = bool(cb(mapped)) or stop
        return stop


def relative_gain(before: float, after: float) -> float:
    """Relative improvement from ``before`` to ``after`` (infinite from nothing found yet)."""
    if not math.isfinite(before):
        return math.inf
    return (float(before) - float(after)) / max(abs(float(before)), sys.float_info.min)  # (inf past the largest)


def _combine(runs: Sequence[OptimizeResult]) -> OptimizeResult:
    """The call's result from its runs so far (their histories already the call's records)."""
    last = runs[-1]
    if len(runs) == 1:
        return last
    top = min(runs, key=lambda r: r.fun)  # the first among equals: a restart from it that gained nothing ties
    # The call's solver is the first run's: a global phase between runs (zeroopt.running.global_phase) names itself.
    return replace(last, x=top.x, fun=top.fun, fun_eps=top.fun_eps, solver=runs[0].solver,
                   queries=max(r.queries for r in runs),
                   iterations=sum(r.iterations for r in runs), history=[h for r in runs for h in r.history],
                   flags=[*last.flags, f"{FLAG}{len(runs) - 1}"], message=OptimizeResult.message_for(last.status))


def _run(run: RunGenerator, answer: Answer, runs: list[OptimizeResult], continued: _Continued) -> OptimizeResult:
    """Drive one run, its history as the call's; on a failure the exception carries the call's result so far
    (this run's partial result included)."""
    try:
        last = answer(run)
    except BaseException as err:
        part = partial_result(err)
        if isinstance(part, list):
            part = part[0] if len(part) == 1 else None
        if isinstance(part, OptimizeResult):
            raised = attach_partial_result(err, _combine([*runs, continued.shift(part)]))
            if raised is not err:
                raise raised from err
        raise
    return continued.shift(last)


def spend_budget(
    start_run: StartRun,
    answer: Answer,
    x0: NDArray[np.float64],
    *,
    rng: np.random.Generator,
    restarts: Restarts | None,
    remaining: Callable[[], int | float],
    max_iter: int | None = None,
    callbacks: Sequence[Callback] = (),
) -> OptimizeResult:
    """One run from ``x0``, restarted under ``restarts`` while it stops early with budget left; the best of all.

    Parameters
    ----------
    start_run, answer
        Start a run of the solver (:data:`StartRun`) and drive it to its end (:data:`Answer`); every run asks the
        one oracle, whose ledger ``remaining()`` reads.
    x0
        The flat starting point of the first run.
    rng
        The first run's generator; restart k draws from its k-th child (``Generator.spawn``), its fresh point too.
    restarts
        The policy, or ``None`` for one run. A run that ended converged or without progress is restarted while
        budget is left, the policy allows more restarts (``max_restarts``, ``max_stale``), ``max_iter`` is not
        reached and the run spent a query.
    max_iter
        Iterations of the whole call, every run's together.
    callbacks
        Called after every iteration of every run with the whole call's record (:class:`IterationRecord` numbered
        on across runs, ``best_f`` the call's best); True stops the call.

    Returns
    -------
    OptimizeResult
        The best point of all runs (``x``, ``fun``; the earliest among equals), ``queries`` of the ledger,
        ``iterations`` and ``history`` of every run in order, the last run's ``status``, ``x_last``, ``state`` and
        flags, and the flag ``restarts=<k>`` where k > 0 restarts ran (:func:`restarts_ran`). On a failure the
        exception carries such a result as ``partial_result`` (a restart's too: a fresh start far from the
        runs before may meet a NaN or inf value, which raises only where the oracle was told to raise).
    """
    continued = _Continued(callbacks)
    runs: list[OptimizeResult] = []
    scale = max(float(np.max(np.abs(host(x0)), initial=0.0)), 1.0)
    start: tuple[Any, float | None, float] = (x0, None, 0.0)
    run_rng, fresh_starts, stale = rng, 0, 0
    phase = restarts.global_phase if restarts is not None else None
    global_next = was_global = False  # whether the next run is a global phase (else the solver); the last one
    while True:
        if not was_global:  # a phase and the solver's run from its best point are one restart, judged together
            before = min((r.fun for r in runs), default=math.inf)
        left = None if max_iter is None else max_iter - sum(r.iterations for r in runs)
        if global_next:
            d = int(np.size(host(start[0])))
            # The population doubles with each phase but never past what lets the phase run d generations, the
            # time its step size takes to adapt, on the budget left.
            lam = phase.population_for(d, restarts.phase_level(fresh_starts))
            room = remaining() / d
            if math.isfinite(room):
                lam = max(min(lam, int(room)), min(lam, phase.population_for(d, 0)), 2)
            run = es_run(start[0], start[1], restarts.phase_sigma(fresh_starts, scale), lam, run_rng, left, continued,
                         floor=phase.handover * restarts.half_width(0, scale))
            fresh_starts += 1
        else:
            run = start_run(*start, run_rng, left, continued)
        was_global, global_next = global_next, False
        last = _run(run, answer, runs, continued)
        spent = last.queries - (runs[-1].queries if runs else 0)
        runs.append(last)
        result = _combine(runs)
        continued.offset, continued.best = result.iterations, result.fun
        paid = relative_gain(before, last.fun) >= (math.inf if restarts is None else restarts.paying_gain)
        if not was_global:
            stale = 0 if paid else stale + 1
        if (restarts is None or last.status not in _EARLY or remaining() <= 0 or spent <= 0
                or (restarts.max_restarts is not None and len(runs) > restarts.max_restarts)
                or (restarts.max_stale is not None and stale >= restarts.max_stale)
                or (max_iter is not None and result.iterations >= max_iter)):
            return result
        run_rng = rng.spawn(1)[0]
        if was_global:  # the solver polishes the basin the phase found, whether or not it beats the best yet
            start = (flat(last.x), last.fun, last.fun_eps)
        elif paid:
            start = (flat(result.x), result.fun, result.fun_eps)
        elif phase is not None:
            start, global_next = (flat(result.x), result.fun, result.fun_eps), True
        else:
            center = host(flat(result.x))
            half = restarts.half_width(fresh_starts, scale)
            fresh_starts += 1
            start = (like(center + run_rng.uniform(-half, half, center.shape), flat(result.x)), None, 0.0)
