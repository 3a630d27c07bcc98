"""Running solvers: one run alone, or many runs in lockstep sharing oracle calls.

A run is a generator that yields oracle requests and returns an :class:`OptimizeResult`. It owns the
bookkeeping every solver needs — the best point seen, the per-iteration history, stopping rules and
callbacks — so solvers stay small. :func:`drive` answers the pending requests of all live runs with one
call to an :class:`~zeroopt.oracle.OracleGroup` per round, which lets an application merge the work of
independent runs (the hard-label attack sends all images' probes to the model together).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .oracle import Evaluate, Evaluation, IndependentGroup, OracleGroup, Request, Response, SubsetGroup, as_oracle
from .records import IterationRecord, OptimizeResult, Status
from .registry import SolverContext, make_solver
from .solver import ComposedSolver

#: Consecutive iterations that cost no oracle query after which a run stops with ``Status.NO_PROGRESS``.
FREE_ITERATION_LIMIT = 10

__all__ = ["drive", "minimize", "run_solver", "solve_many"]

Callback = Callable[[IterationRecord], Any]
RunGenerator = Generator[Request, Response, OptimizeResult]


def run_solver(
    solver: ComposedSolver,
    x0: NDArray[np.float64],
    *,
    rng: np.random.Generator,
    f0: float | None = None,
    f0_eps: float = 0.0,
    max_iter: int | None = None,
    target: float | None = None,
    callbacks: Sequence[Callback] = (),
    gradient: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None,
    shape: tuple[int, ...] | None = None,
) -> RunGenerator:
    """Generator for one run of ``solver`` from ``x0`` (flat). Yields requests, returns the result.

    The run stops when the oracle reports its budget exhausted, after ``max_iter`` iterations, when the
    best value reaches ``target``, when a callback returns True, or when the solver converges. Whatever
    stops it, the result holds the best point seen among all evaluated points.
    """
    shape = shape or x0.shape
    queries = 0
    best_x, best_f, best_eps = x0, math.inf, 0.0

    def observe(req: Request, resp: Response) -> None:
        nonlocal best_x, best_f, best_eps, queries
        queries = resp.queries
        values, eps = resp.values, resp.eps  # a Comparison carries values only when they were computed
        if values is not None and eps is not None and len(values):
            i = int(np.argmin(values))
            if values[i] < best_f:
                best_x, best_f, best_eps = req.points[i], float(values[i]), float(eps[i])

    def finish(status: Status, x_last: NDArray[np.float64] | None, iterations: int) -> OptimizeResult:
        flags = [f for cb in callbacks for f in getattr(cb, "flags", [])]
        return OptimizeResult(
            x=np.array(best_x).reshape(shape),
            fun=best_f,
            fun_eps=best_eps,
            queries=queries,
            iterations=iterations,
            status=status,
            message=OptimizeResult.message_for(status),
            history=history,
            x_last=None if x_last is None else np.array(x_last).reshape(shape),
            flags=flags,
            solver=solver.name,
        )

    history: list[IterationRecord] = []
    if f0 is None:
        req = Evaluate(points=x0[None, :], eps=solver.requested_eps(solver.beta))
        resp = yield req
        observe(req, resp)
        if resp.exhausted:
            return finish(Status.BUDGET, None, 0)
        assert isinstance(resp, Evaluation)
        f0, f0_eps = float(resp.values[0]), float(resp.eps[0])
    else:
        best_x, best_f, best_eps = x0, float(f0), float(f0_eps)

    state = solver.init(x0, f0, f0_eps, rng)
    if target is not None and best_f <= target:
        return finish(Status.TARGET, state.x, 0)
    free_iterations = 0
    while True:
        queries_before = queries
        if max_iter is not None and state.iteration >= max_iter:
            return finish(Status.MAX_ITER, state.x, state.iteration)
        step = solver.step_generator(state)
        try:
            req = next(step)
            while True:
                resp = yield req
                observe(req, resp)
                if resp.exhausted:
                    step.close()
                    return finish(Status.BUDGET, state.x, state.iteration)
                req = step.send(resp)
        except StopIteration as done:
            outcome = done.value
        state = outcome.state
        record = IterationRecord(
            iteration=state.iteration - 1,
            queries=queries,
            f=state.fx,
            best_f=best_f,
            eps=outcome.eps,
            beta=outcome.beta,
            step_size=outcome.step_taken,
            grad_norm_estimate=outcome.grad_norm,
            true_grad_norm=None if gradient is None else float(np.linalg.norm(gradient(state.x.reshape(shape)))),
        )
        history.append(record)
        stop = False
        for cb in callbacks:
            stop = bool(cb(record)) or stop
        if stop:
            return finish(Status.CALLBACK, state.x, state.iteration)
        if target is not None and best_f <= target:
            return finish(Status.TARGET, state.x, state.iteration)
        if outcome.converged:
            return finish(Status.CONVERGED, state.x, state.iteration)
        # An oracle may answer some points at no cost (a hard-label oracle knows a zero direction has no
        # boundary). Iterations that keep costing nothing can never exhaust the budget, so they end the run.
        free_iterations = free_iterations + 1 if queries == queries_before else 0
        if free_iterations >= FREE_ITERATION_LIMIT:
            return finish(Status.NO_PROGRESS, state.x, state.iteration)


def drive(
    runs: Sequence[RunGenerator], group: OracleGroup, *, members: Sequence[int] | None = None
) -> list[OptimizeResult]:
    """Advance ``runs`` in lockstep: each round, all pending requests go to ``group.answer`` at once.

    Run ``k`` is answered as member ``k`` of the group, or as member ``members[k]`` when given (so runs
    may cover any subset of the group's members).
    """
    if members is not None:
        group = SubsetGroup(group, list(members))
    results: list[OptimizeResult | None] = [None] * len(runs)
    pending: dict[int, Request] = {}
    for i, run in enumerate(runs):
        try:
            pending[i] = next(run)
        except StopIteration as done:
            results[i] = done.value
    while pending:
        items = list(pending.items())
        responses = group.answer(items)
        for (i, _), resp in zip(items, responses, strict=True):
            try:
                pending[i] = runs[i].send(resp)
            except StopIteration as done:
                results[i] = done.value
                del pending[i]
    return [r for r in results if r is not None]


def solve_many(
    solver: ComposedSolver,
    starts: Sequence[NDArray[np.float64]],
    group: OracleGroup,
    *,
    rngs: Sequence[np.random.Generator],
    members: Sequence[int] | None = None,
    f0: Sequence[float] | None = None,
    f0_eps: float = 0.0,
    max_iter: int | None = None,
    restarts: int = 0,
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
        How many times a run that converged (its own stopping rule fired) while its member still has
        budget (:meth:`OracleGroup.remaining`) starts again from its best point with the solver's initial
        parameters. On piecewise-constant objectives a stall rule can end runs after a few iterations,
        and budget left unspent helps no one. 0: stop there.

    Returns
    -------
    list of OptimizeResult
        One per start, in order; a restarted run's result is that of its last restart (whose best point
        is at least as good, as it starts from the previous best).
    """
    members = list(range(len(starts))) if members is None else list(members)
    if not len(starts) == len(members) == len(rngs) or (f0 is not None and len(f0) != len(starts)):
        raise ValueError("starts, rngs, members and f0 must have one entry per run")
    runs = [
        run_solver(solver, x, rng=rngs[k], f0=None if f0 is None else f0[k], f0_eps=f0_eps, max_iter=max_iter)
        for k, x in enumerate(starts)
    ]
    results = drive(runs, group, members=members) if runs else []
    for _ in range(restarts):
        again = [k for k, r in enumerate(results) if r.status is Status.CONVERGED and group.remaining(members[k]) > 0]
        if not again:
            break
        reruns = [run_solver(solver, results[k].x, rng=rngs[k], f0=results[k].fun, f0_eps=results[k].fun_eps,
                             max_iter=max_iter) for k in again]
        for k, r in zip(again, drive(reruns, group, members=[members[k] for k in again]), strict=True):
            results[k] = r
    return results


# ------------------------------------------------------------------------------------------- validation


def _check_budget(budget: object) -> int:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)):
        raise TypeError(f"budget must be a positive integer number of oracle queries, got {budget!r}")
    if budget <= 0:
        raise ValueError(f"budget must be a positive integer number of oracle queries, got {budget}")
    return int(budget)


def _check_x0(x0: ArrayLike) -> NDArray[np.float64]:
    arr = np.asarray(x0)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
        raise TypeError(
            f"x0 must be an array of real numbers, got dtype {arr.dtype}; convert it with np.asarray(x0, dtype=float)"
        )
    if arr.size == 0:
        raise ValueError("x0 is empty; pass the starting point as a non-empty array")
    if not np.all(np.isfinite(arr)):
        raise ValueError(
            f"x0 contains {int((~np.isfinite(arr)).sum())} non-finite value(s) (NaN or inf); start from a finite point"
        )
    return arr.astype(float)


def minimize(
    fun: Any,
    x0: ArrayLike,
    *,
    solver: str = "rgf",
    budget: int,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    callbacks: Iterable[Callback] = (),
    max_iter: int | None = None,
    target: float | None = None,
    **options: Any,
) -> OptimizeResult:
    """Minimize ``fun`` from ``x0`` with a zeroth-order solver under a hard query budget.

    Parameters
    ----------
    fun
        A callable ``f(x) -> float`` (wrapped as an exact oracle), a :class:`zeroopt.Oracle` (e.g. with
        injected error), or a problem from :mod:`zeroopt.problems` (whose known gradient and L₁ are then
        used for diagnostics and the theory step).
    x0
        Starting point, any shape; solvers work on its flattened copy.
    solver
        Registered solver name, see :func:`zeroopt.list_solvers`.
    budget
        Hard cap on oracle cost units (function evaluations, model queries); never exceeded.
    seed
        Seed for every random choice (int, SeedSequence or Generator); same seed, same run, bit for bit.
    callbacks
        Callables ``cb(record) -> bool | None`` called after every iteration; True stops the run.
    max_iter
        Optional iteration limit.
    target
        Stop once the best value is at most this.
    **options
        Solver options; ``zeroopt.list_solvers()[solver].defaults()`` lists them. The problem is a plain
        objective (:class:`SolverContext` without traits), so the options' own defaults apply.

    Returns
    -------
    OptimizeResult
        Best point seen (``x``, ``fun``), ``queries`` (as counted by the oracle), ``iterations``,
        ``history`` of :class:`IterationRecord`, ``status``/``message``, and ``flags`` from monitors.

    Examples
    --------
    >>> import numpy as np, zeroopt
    >>> res = zeroopt.minimize(lambda x: float(x @ x), np.ones(10), solver="rgf", budget=2000, seed=0)
    >>> res.fun < 1e-3 and res.queries <= 2000
    True
    """
    budget = _check_budget(budget)
    x = _check_x0(x0)
    if max_iter is not None and (isinstance(max_iter, bool) or int(max_iter) != max_iter or max_iter < 0):
        raise ValueError(f"max_iter must be a non-negative integer or None, got {max_iter!r}")
    context = SolverContext(dim=x.size, lipschitz=getattr(fun, "L1", None), shape=x.shape)
    built = make_solver(solver, context, **options)
    oracle = as_oracle(fun, x.shape, budget=budget)
    gradient = getattr(fun, "gradient", None)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    run = run_solver(
        built,
        x.ravel(),
        rng=rng,
        max_iter=max_iter,
        target=target,
        callbacks=list(callbacks),
        gradient=gradient if callable(gradient) else None,
        shape=x.shape,
    )
    (result,) = drive([run], IndependentGroup([oracle]))
    return result
