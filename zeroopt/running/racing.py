"""A race between starting points: each runs for a while, the one that got furthest goes on.

Which start is best is not which has the lowest value: on an objective with many basins, a start a little
higher up a steep slope can end far lower than the lowest start in a shallow basin. An initial search that
keeps only its lowest candidate bets on the value alone. :func:`race` instead runs every candidate start of
a member for a few iterations of the solver (or until the member has spent a share of its budget), all in
lockstep, and keeps the point that got lowest — a successive-halving round with one survivor, paid for with
the losers' queries. :func:`race_plan` sizes such a race from a budget: a large budget can afford to look
at several basins before it commits to one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import flat, same
from ..core.base import SolverState
from ..core.chain import Chain
from ..core.checks import check_budget
from ..oracles.oracle import OracleGroup
from .driver import drive, run_solver
from .records import IterationRecord, OptimizeResult

__all__ = [
    "RACE_FRACTION", "RACE_ITERATIONS", "RACE_MAX_STARTS", "RACE_MIN_SHARE", "RACE_MIN_SHARE_DIM", "RaceWinner",
    "RaceCandidate", "halving_rounds", "race", "race_plan",
]

#: Iterations each candidate runs before the race is decided: one iteration's gain is mostly its first step
#: size's luck; two already show the slope.
RACE_ITERATIONS = 2
#: :func:`race_plan`: the share of a budget a race between independent starts may spend, all starts together.
RACE_FRACTION = 0.15
#: :func:`race_plan`: the fewest queries each start gets: a run's early value foretells its end only once it has
#: taken a few steps, and a much shorter race picks its winner mostly by luck (docs/defaults.md).
RACE_MIN_SHARE = 500
#: :func:`race_plan` with ``dim``: the dimension :data:`RACE_MIN_SHARE` was chosen at (MNIST's 28 × 28); in more
#: dimensions each start gets proportionally more. A run needs iterations in proportion to d before it settles
#: (the paper's Theorem 1: O(d/δ²)), so its early L2 tells less of its end the larger d is.
RACE_MIN_SHARE_DIM = 784
#: :func:`race_plan`: the most starts a race takes (each also costs its own initial search).
RACE_MAX_STARTS = 8

#: A candidate start in a race: a starting point, its value, and the precision of that value.
RaceCandidate = tuple[NDArray[np.float64], float, float]


class RaceWinner(NamedTuple):
    """What a member's race left: the lowest point ``x`` its candidates reached, its value ``f`` and that value's
    precision ``eps``, and ``state``, the state of the run that reached it with ``x`` as its iterate — from which
    :func:`~zeroopt.run_solver` (``state=``) or :func:`~zeroopt.solve_many` (``states=``) go on, so the winner
    keeps its step size, smoothing radius, iteration count (a probe schedule keeps growing) and memory.
    ``state`` is ``None`` for a member that did not race (one candidate) or whose budget ran out first."""

    x: NDArray[np.float64]
    f: float
    eps: float
    state: SolverState | None = None


def _winner_of(result: OptimizeResult) -> RaceWinner:
    x = flat(result.x)
    state = result.state
    if state is not None and not same(state.x, x):
        # The lowest point was not the run's last iterate (a probe, a line-search candidate): go on from it.
        state = replace(state, x=x, fx=float(result.fun), fx_eps=float(result.fun_eps))
    return RaceWinner(x, float(result.fun), float(result.fun_eps), state)


def race_plan(
    budget: int,
    *,
    fraction: float = RACE_FRACTION,
    min_share: int = RACE_MIN_SHARE,
    max_starts: int = RACE_MAX_STARTS,
    halving: bool = False,
    dim: int | None = None,
) -> tuple[int, int]:
    """How many independent starts a budget can race, and the queries their race may spend.

    The race may spend ``fraction`` of ``budget``; the number of starts doubles from 1 while each would still
    get ``min_share`` queries — in ``dim`` dimensions, ``min_share · dim / RACE_MIN_SHARE_DIM`` when that is more
    (:data:`RACE_MIN_SHARE_DIM`: a run shows where it will end after a number of queries that grows with d) —
    up to ``max_starts``. Below twice that share over ``fraction`` there is no race: ``(1, 0)``. With ``halving``
    (a race of :func:`halving_rounds` rounds, :func:`race`), twice as many starts for the same queries: the
    halving rounds give the starts that fall behind early less than the share each, and the last two
    candidates more.

    Examples
    --------
    >>> race_plan(4000), race_plan(8000), race_plan(20000), race_plan(50000)
    ((1, 0), (2, 1200), (4, 3000), (8, 7500))
    >>> race_plan(20000, dim=784), race_plan(20000, dim=3072), race_plan(50000, dim=3072)
    ((4, 3000), (1, 0), (2, 7500))
    """
    budget = check_budget(budget)  # the same TypeError / ValueError as everywhere a budget is taken
    if not (isinstance(fraction, (int, float, np.floating)) and 0 <= fraction < 1):
        raise ValueError(f"fraction must be a number in [0, 1), got {fraction!r}")
    for name, value in (("min_share", min_share), ("max_starts", max_starts)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if dim is not None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ValueError(f"dim must be a positive integer or None, got {dim!r}")
        min_share = max(int(min_share), math.ceil(min_share * int(dim) / RACE_MIN_SHARE_DIM))
    total = int(fraction * budget)
    starts = 1
    while 2 * starts <= max_starts and total // (2 * starts) >= min_share:
        starts *= 2
    if starts == 1:
        return 1, 0
    return (2 * starts if halving else starts), total


def halving_rounds(starts: int) -> int:
    """The rounds of a successive-halving race between ``starts`` candidates down to one: ⌈log₂ starts⌉ (1 for
    two or fewer — a plain race).

    Examples
    --------
    >>> [halving_rounds(k) for k in (1, 2, 4, 8, 16)]
    [1, 1, 2, 3, 4]
    """
    return max(1, math.ceil(math.log2(max(1, int(starts)))))


def _check_length(iterations: int | None, queries: int | None) -> None:
    for name, value in (("iterations", iterations), ("queries", queries)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1):
            raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
    if iterations is None and queries is None:
        raise ValueError("a race needs an end: give iterations= or queries= (or both)")


def race(
    solver: Chain,
    candidates: Sequence[Sequence[RaceCandidate]],
    group: OracleGroup,
    *,
    rngs: Sequence[np.random.Generator],
    members: Sequence[int] | None = None,
    iterations: int | None = RACE_ITERATIONS,
    queries: int | None = None,
    rounds: int = 1,
) -> list[RaceWinner | None]:
    """The best point each member's candidate starts reach in a race of ``solver`` runs, and its run's state.

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
        Iterations per candidate (``None``: no iteration limit).
    queries
        The race's length in the member's queries, all its candidates together: a candidate stops at the
        end of its first iteration after the member has spent this many since the race began (``None``: no
        such limit). Every run also ends at its member's budget.
    rounds
        Successive halving: ``queries`` is cut into ``rounds`` equal rounds (``iterations``, when given, bounds
        each round); after each round but the last, a member keeps the better half of its candidates (by the
        lowest value each reached, rounded up), which go on from their runs' states. 1 (default): one round,
        every candidate to the end. Why: a short run ranks its start only roughly (``RACE_MIN_SHARE``), so
        the rounds spend little on the starts that are clearly behind and the most on the close contest at the
        end; with twice the starts per halving round, the race looks at more basins for the same queries.

    Returns
    -------
    list of RaceWinner
        Per member, the lowest point any of its candidates reached, with the state of the run that reached it
        (:class:`RaceWinner`); the lowest start (no state) when the budget ran out before any iteration finished;
        ``None`` for a member without candidates.

    Examples
    --------
    >>> import numpy as np
    >>> from zeroopt import IndependentGroup, SolverContext, as_oracle, make_solver
    >>> f = lambda x: float(np.sum((x - 1.0) ** 2))
    >>> group = IndependentGroup([as_oracle(f, (2,), budget=500)])
    >>> starts = [(np.zeros(2), 2.0, 0.0), (np.full(2, 3.0), 8.0, 0.0)]
    >>> (winner,) = race(make_solver("rgf", SolverContext(dim=2)), [starts], group,
    ...                  rngs=[np.random.default_rng(0)])
    >>> bool(winner.f < 2.0), winner.state.iteration
    (True, 2)
    """
    _check_length(iterations, queries)
    if isinstance(rounds, bool) or not isinstance(rounds, (int, np.integer)) or rounds < 1:
        raise ValueError(f"rounds must be a positive integer, got {rounds!r}")
    members = list(range(len(candidates))) if members is None else list(members)
    if not len(candidates) == len(members) == len(rngs):
        raise ValueError("candidates, rngs and members must have one entry per member")
    out: list[RaceWinner | None] = [None if not c else RaceWinner(*min(c, key=lambda s: s[1])) for c in candidates]
    # Per member, its candidates still in the race: (start, the state its run ended in, its generator).
    alive: dict[int, list[tuple[RaceCandidate, SolverState | None, np.random.Generator]]] = {
        # (each candidate's generator: the member's children in reverse, as the race drew them before rounds)
        j: [(start, None, rng) for start, rng in zip(c, reversed(rngs[j].spawn(len(c))), strict=True)]
        for j, c in enumerate(candidates) if len(c) > 1}
    share = None if queries is None else max(1, queries // rounds)
    for round_ in range(rounds):
        entries = [(j, entry) for j, cands in alive.items() if len(cands) > 1 for entry in cands]
        if not entries:
            break
        # record.queries is the member's total spending (its oracle's count), shared by all its candidates.
        until = {j: group.queries(members[j]) + share if share is not None else math.inf for j, _ in entries}

        def stop_after(j: int, until: dict[int, float] = until) -> Callable[[IterationRecord], bool]:
            return lambda record: record.queries >= until[j]  # a callback: True ends the run there

        runs = [
            run_solver(solver, flat(s[0]), rng=rng, f0=s[1], f0_eps=s[2],
                       max_iter=iterations, callbacks=(stop_after(j),), state=state)
            for j, (s, state, rng) in entries
        ]
        results = drive(runs, group, members=[members[j] for j, _ in entries])
        reached: dict[int, list[tuple[RaceCandidate, SolverState | None, np.random.Generator]]] = {}
        for (j, (_, _, rng)), r in zip(entries, results, strict=True):
            winner = _winner_of(r)
            best = out[j]
            if best is None or winner.f < best.f:
                out[j] = winner
            reached.setdefault(j, []).append(((winner.x, winner.f, winner.eps), winner.state, rng))
        if round_ < rounds - 1:  # the better half of each member's candidates goes on
            alive = {j: sorted(c, key=lambda e: e[0][1])[: (len(c) + 1) // 2] for j, c in reached.items()}
    return out
