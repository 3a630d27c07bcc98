"""A race between starting points: each runs a few iterations, the one that got furthest goes on.

Which start is best is not which has the lowest value: on an objective with many basins, a start a little
higher up a steep slope can end far lower than the lowest start in a shallow basin. An initial search that
keeps only its lowest candidate bets on the value alone. :func:`race` instead runs every candidate start of
a member for a few iterations of the solver, all in lockstep, and keeps the point that got lowest — a
successive-halving round with one survivor, paid for with the losers' iterations.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from .oracle import OracleGroup
from .restarts import solve_many
from .solver import ComposedSolver

__all__ = ["RACE_ITERATIONS", "Start", "race"]

#: Iterations each candidate runs before the race is decided: one iteration's gain is mostly its first step
#: size's luck; two already show the slope.
RACE_ITERATIONS = 2

#: A starting point, its value, and the precision of that value.
Start = tuple[NDArray[np.float64], float, float]


def race(
    solver: ComposedSolver,
    candidates: Sequence[Sequence[Start]],
    group: OracleGroup,
    *,
    rngs: Sequence[np.random.Generator],
    members: Sequence[int] | None = None,
    iterations: int = RACE_ITERATIONS,
) -> list[Start | None]:
    """The best point each member's candidate starts reach in ``iterations`` iterations of ``solver``.

    Parameters
    ----------
    solver
        The solver each candidate runs (the one that will go on from the winner).
    candidates
        Per member, its candidate starts ``(x, f(x), precision)``. A member with one candidate gets it back
        as it is (no query); one with none gets ``None``.
    group
        Answers the runs' requests; entry ``j`` races on member ``members[j]`` (default ``j``).
    rngs
        One generator per member; each candidate runs on its own child (``Generator.spawn``), so the race is
        reproducible from the member's seed.
    iterations
        Iterations per candidate (each also ends at its member's budget).

    Returns
    -------
    list
        Per member, the lowest point any of its candidates reached ``(x, f, precision)``; the lowest start
        when the budget ran out before any iteration finished.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt import IndependentGroup, SolverContext, as_oracle, make_solver
    >>> f = lambda x: float(np.sum((x - 1.0) ** 2))
    >>> group = IndependentGroup([as_oracle(f, (2,), budget=500)])
    >>> starts = [(np.zeros(2), 2.0, 0.0), (np.full(2, 3.0), 8.0, 0.0)]
    >>> (x, fx, _), = race(make_solver("rgf", SolverContext(dim=2)), [starts], group,
    ...                    rngs=[np.random.default_rng(0)])
    >>> bool(fx < 2.0)
    True
    """
    if isinstance(iterations, bool) or not isinstance(iterations, (int, np.integer)) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
    members = list(range(len(candidates))) if members is None else list(members)
    if not len(candidates) == len(members) == len(rngs):
        raise ValueError("candidates, rngs and members must have one entry per member")
    out: list[Start | None] = [None if not c else min(c, key=lambda s: s[1]) for c in candidates]
    entries = [(j, start) for j, c in enumerate(candidates) if len(c) > 1 for start in c]
    if not entries:
        return out
    children = {j: list(rngs[j].spawn(len(candidates[j]))) for j in {j for j, _ in entries}}
    runs = solve_many(
        solver, [np.asarray(s[0], dtype=float).ravel() for _, s in entries], group,
        rngs=[children[j].pop() for j, _ in entries], members=[members[j] for j, _ in entries],
        f0=[s[1] for _, s in entries], f0_eps=max(s[2] for _, s in entries), max_iter=int(iterations),
    )
    for (j, _), r in zip(entries, runs, strict=True):
        best = out[j]
        if best is None or r.fun < best[1]:
            out[j] = (np.asarray(r.x, dtype=float).ravel(), float(r.fun), float(r.fun_eps))
    return out
