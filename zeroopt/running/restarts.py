"""Many runs in lockstep, restarted while their budget lasts: exploit the leader while it pays, else explore.

A descent run converges into one basin. On an objective with many basins (the boundary distance g(θ) of a
classifier has one per class, and more), what a run reaches depends on where it started, and budget left
after it converged is best spent elsewhere. :func:`solve_many` restarts each converged run: from its best
point while the last run there still gained (as the reference code's restarts do), and from a fresh start
that the caller supplies once a run stopped paying — the answer is always the best point of all of them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import flat, host
from ..core.base import SolverState
from ..core.chain import Chain
from ..core.errors import attach_partial_result, partial_result
from ..oracles.oracle import OracleGroup
from .driver import RunGenerator, drive, run_solver
from .pruning import Polisher
from .records import OptimizeResult, Status
from .whole_budget import relative_gain

__all__ = ["EXPLOIT_GAIN", "POLISH_RESERVE", "FreshStart", "solve_many"]

#: A run whose second half improved its value by less than this fraction is not restarted from its best point
#: when a fresh start is available: its basin is spent.
EXPLOIT_GAIN = 0.01

#: Where :func:`solve_many` polishes: once an iteration as costly as the last would end past this many queries
#: before a member's budget ends. A pruning pass (:func:`~zeroopt.pruning`) asks at most one question per block,
#: and its blocks each carry at least 1% of the point's squared norm. With 0 the polish gets only what the last
#: iteration could not complete (nothing lost where it is refused), but a pass then takes out less
#: (docs/defaults.md); where it is refused, the 8 queries a refused pass costs move where the run's last
#: iteration ends, a few inputs up or down a step.
POLISH_RESERVE = 100

#: ``fresh_start(runs)``: a new start ``(x, f(x), precision of f)`` for each run index, or ``None`` when none
#: was found. It may query the runs' oracle group (those queries count on the runs' members as any other).
FreshStart = Callable[[list[int]], Sequence["tuple[NDArray[np.float64], float, float] | None"]]


def _late_gain(result: OptimizeResult, start: float) -> float:
    """What the second half of a run's iterations gained (from ``start`` when it has no history)."""
    if len(result.history) < 2:
        return relative_gain(start, result.fun)
    return relative_gain(result.history[(len(result.history) - 1) // 2].f, result.fun)


def solve_many(
    solver: Chain,
    starts: Sequence[NDArray[np.float64]],
    group: OracleGroup,
    *,
    rngs: Sequence[np.random.Generator],
    members: Sequence[int] | None = None,
    f0: Sequence[float] | None = None,
    f0_eps: float = 0.0,
    max_iter: int | None = None,
    restarts: int = 0,
    fresh_start: FreshStart | None = None,
    exploit_gain: float = EXPLOIT_GAIN,
    polish: Polisher | None = None,
    polish_reserve: int = POLISH_RESERVE,
    states: Sequence[SolverState | None] | None = None,
) -> list[OptimizeResult]:
    """Run ``solver`` from every start in lockstep, restarting runs that converge with budget left.

    Parameters
    ----------
    solver
        The solver (one object serves every run: all per-run state lives in the runs).
    starts
        Flat starting points, one per run.
    group
        Answers the runs' requests; run ``k`` is member ``members[k]`` (default ``k``).
    rngs
        One generator per run; a restart continues with its run's generator.
    f0, f0_eps
        Known values at the starts (and their precision), so they are not evaluated again.
    max_iter
        Iteration limit of each run (and of each restart).
    restarts
        How many times a run that converged (its own stopping rule fired) while its member still has budget
        (:meth:`OracleGroup.remaining`) starts again with the solver's initial parameters. On piecewise-constant
        objectives a stall rule can end runs after a few iterations, and budget left unspent helps no one.
        0: stop there.
    fresh_start
        Where a restart goes once the run that converged is not the leader (its best is not the best found
        for its start so far) or the second half of its iterations gained less than ``exploit_gain``: a callable
        returning new starts (:data:`FreshStart`) — e.g. a new initial search. ``None``, or a ``None`` start:
        every restart is from the best point found.
    exploit_gain
        See ``fresh_start``.
    polish, polish_reserve
        A run that may improve each start's best point once, at the end of its member's budget — e.g.
        :func:`~zeroopt.pruning`, which takes out the coordinates a radial objective's point does not need:
        the run going on when an iteration as costly as its last would end past ``polish_reserve`` queries
        before the budget polishes the member's best point and goes on from the result with its state as it
        was (:func:`~zeroopt.run_solver`); a start whose runs ended before that
        (converged, restarts spent) is polished at the end. ``None``: no polish.
    states
        Per run, a solver state to go on from instead of starting afresh at its start (e.g. the
        :class:`~zeroopt.RaceWinner` state of a race between starts, :func:`~zeroopt.race`), or ``None``; the
        run's start and ``f0`` are then the state's point and value. Restarts begin afresh, as always.

    Returns
    -------
    list of OptimizeResult
        One per start, in order: the best (lowest value; the latest among equals) of that start's runs and
        restarts. On a failure the
        exception carries such a list as ``partial_result`` (see :func:`~zeroopt.drive`).

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt import IndependentGroup, SolverContext, as_oracle, make_solver
    >>> f = lambda x: float(np.sum((x - 1.0) ** 2))
    >>> group = IndependentGroup([as_oracle(f, (3,), budget=2000) for _ in range(2)])
    >>> runs = solve_many(make_solver("rgf", SolverContext(dim=3)), [np.zeros(3), np.full(3, 3.0)], group,
    ...                   rngs=[np.random.default_rng(s) for s in (0, 1)], restarts=3)
    >>> [bool(r.fun < 1e-3) for r in runs]
    [True, True]
    """
    members = list(range(len(starts))) if members is None else list(members)
    if not len(starts) == len(members) == len(rngs) or any(
            v is not None and len(v) != len(starts) for v in (f0, states)):
        raise ValueError("starts, rngs, members, f0 and states must have one entry per run")
    resume = list(states) if states is not None else [None] * len(starts)
    r = polish_reserve
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 0:
        raise ValueError(f"polish_reserve must be a non-negative integer (queries), got {r!r}")
    begun = [math.inf if f0 is None else float(f0[k]) for k in range(len(starts))]  # each run's start value
    for k, st in enumerate(resume):
        if st is not None:
            begun[k] = float(st.fx)
    # Each member's polish happens once, where only the reserve is left of its budget, inside whichever run
    # is going then (zeroopt.run_solver(polish=, polish_at=)), from the member's best point so far: a fresh
    # start's run may be going then, in a worse basin than an earlier run's.
    polish_at = [group.queries(m) + group.remaining(m) - polish_reserve for m in members]
    polished: set[int] = set()
    best: list[OptimizeResult] = []  # each start's best run so far (filled after the first round)

    def hook(k: int) -> dict[str, Any]:
        if polish is None or k in polished:
            return {}
        assert polish is not None

        def from_best(x: NDArray[np.float64], fx: float, fx_eps: float) -> RunGenerator:
            if best and best[k].fun < fx:
                x, fx, fx_eps = host(flat(best[k].x)), best[k].fun, best[k].fun_eps
            return polish(x, fx, fx_eps)

        return {"polish": from_best, "polish_at": polish_at[k]}

    runs = [
        run_solver(solver, x, rng=rngs[k], f0=None if f0 is None else f0[k], f0_eps=f0_eps, max_iter=max_iter,
                   state=resume[k], **hook(k))
        for k, x in enumerate(starts)
    ]
    results = drive(runs, group, members=members) if runs else []
    polished |= {k for k, r in enumerate(results) if "polished" in r.flags}
    best[:] = results
    for _ in range(restarts):
        again = [k for k, r in enumerate(results) if r.status is Status.CONVERGED and group.remaining(members[k]) > 0]
        if not again:
            break
        new: dict[int, tuple[NDArray[np.float64], float, float]] = {}
        if fresh_start is not None:
            spent = [k for k in again if results[k] is not best[k] or _late_gain(results[k], begun[k]) < exploit_gain]
            try:
                fresh = list(fresh_start(spent)) if spent else []
            except BaseException as err:  # the caller's search failed (or Ctrl-C): every run's best rides along
                raised = attach_partial_result(err, list(best))
                if raised is err:
                    raise
                raise raised from err
            new = {k: s for k, s in zip(spent, fresh, strict=True) if s is not None}
        for k in again:  # the leader, or a run no fresh start was found for: again from the best point
            if k not in new:
                new[k] = (flat(best[k].x), best[k].fun, best[k].fun_eps)
        again = [k for k in again if group.remaining(members[k]) > 0]  # a fresh search may have spent the rest
        reruns = [run_solver(solver, new[k][0], rng=rngs[k], f0=new[k][1], f0_eps=new[k][2], max_iter=max_iter,
                             **hook(k))
                  for k in again]
        try:
            rerun_results = drive(reruns, group, members=[members[k] for k in again]) if reruns else []
        except BaseException as err:
            # The partial result covers every run: the best of each, the restarts cut short included.
            partial = partial_result(err)
            if isinstance(partial, list) and len(partial) == len(again):
                for k, r in zip(again, partial, strict=True):
                    if r is not None and r.fun < best[k].fun:
                        best[k] = r
                attach_partial_result(err, list(best))
            raise
        polished |= {k for k, r in zip(again, rerun_results, strict=True) if "polished" in r.flags}
        for k, r in zip(again, rerun_results, strict=True):
            results[k], begun[k] = r, new[k][1]
            if r.fun <= best[k].fun:  # a tie goes to the later run, whose queries include the earlier ones'
                best[k] = r
    if polish is not None:  # runs that ended with budget left before their polish: polish their best now
        _polish(polish, [k for k in range(len(best)) if k not in polished], results, best, group, members)
    return best


def _polish(
    polish: Polisher, todo: list[int], results: list[OptimizeResult], best: list[OptimizeResult],
    group: OracleGroup, members: list[int],
) -> None:
    """Polish the best point of each run in ``todo`` whose member has budget left, in place."""
    todo = [k for k in todo if group.remaining(members[k]) > 0]
    if not todo:
        return
    runs = [polish(host(flat(best[k].x)), best[k].fun, best[k].fun_eps) for k in todo]  # (a polish: on the host)
    try:
        finished = drive(runs, group, members=[members[k] for k in todo])
    except BaseException as err:
        partial = partial_result(err)
        if isinstance(partial, list) and len(partial) == len(todo):
            _adopt(todo, partial, results, best)
        raised = attach_partial_result(err, list(best))
        if raised is err:
            raise
        raise raised from err
    _adopt(todo, finished, results, best)


def _adopt(todo: list[int], found: Sequence[OptimizeResult | None], results: list[OptimizeResult],
           best: list[OptimizeResult]) -> None:
    """Keep each better point, with its start's history (a polish has none of its own)."""
    for k, p in zip(todo, found, strict=True):
        if p is not None and p.fun < best[k].fun:
            best[k] = results[k] = replace(best[k], x=p.x, fun=p.fun, fun_eps=p.fun_eps,
                                           queries=max(best[k].queries, p.queries),
                                           history=best[k].history + p.history, status=p.status)
