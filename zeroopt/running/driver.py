"""Running solvers: one run alone, or many runs in lockstep sharing oracle calls.

A run is a generator that yields oracle requests and returns an :class:`OptimizeResult`. It owns the
bookkeeping every solver needs — the best point seen, the per-iteration history, stopping rules and
callbacks — so solvers stay small. :func:`drive` answers the pending requests of all live runs with one
call to an :class:`~zeroopt.oracles.oracle.OracleGroup` per round, which lets an application merge the work of
independent runs (the hard-label attack sends all images' probes to the model together).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.arrays import copy, flat, host, is_numpy, like, norm
from ..core.base import SolverContext, SolverState
from ..core.chain import Chain
from ..core.checks import check_budget, check_callbacks, check_max_iter, check_seed, check_target, check_x0
from ..core.errors import attach_partial_result, partial_result
from ..oracles.oracle import IndependentGroup, Oracle, OracleGroup, SubsetGroup, as_oracle
from ..oracles.requests import Evaluate, Evaluation, Request, Response
from ..recipes.registry import make_solver
from .faults import Abort, abort_run, status_for
from .records import IterationRecord, OptimizeResult, Status
from .whole_budget import as_restarts, spend_budget

#: Consecutive iterations that cost no oracle query after which a run stops with ``Status.NO_PROGRESS``.
FREE_ITERATION_LIMIT = 10

__all__ = ["drive", "minimize", "run_solver"]

Callback = Callable[[IterationRecord], Any]
RunGenerator = Generator[Request, Response, OptimizeResult]


def run_solver(
    solver: Chain,
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
    polish: Callable[[NDArray[np.float64], float, float], RunGenerator] | None = None,
    polish_at: float = math.inf,
    state: SolverState | None = None,
) -> RunGenerator:
    """Generator for one run of ``solver`` from ``x0`` (flat). Yields requests, returns the result.

    The run stops when the oracle reports its budget exhausted, after ``max_iter`` iterations, when the
    best value reaches ``target``, when a callback returns True, or when the solver converges. Whatever
    stops it, the result holds the best point seen among all evaluated points, and the solver's state where
    it ended (``result.state``).

    ``state``: go on from a state an earlier run ended in (its ``result.state``) instead of starting afresh —
    its iterate, value, step size, smoothing radius, iteration count (a probe schedule goes on growing) and
    behaviours' memory, drawing from ``rng``; ``x0``, ``f0`` and ``f0_eps`` are then the state's. ``max_iter``
    counts this run's iterations.
    """
    if state is not None:  # going on from an earlier run's state: its point and value are the start
        x0 = np.asarray(state.x, dtype=float) if is_numpy(state.x) else state.x
        f0, f0_eps = float(state.fx), float(state.fx_eps)
        resumed: SolverState | None = replace(state, rng=rng)
    else:
        resumed = None
    shape = shape if shape is not None else x0.shape
    queries = 0
    best_x, best_f, best_eps = x0, math.inf, 0.0
    state = None  # the run's current state (the parameter, when given, is in ``resumed``)
    waiting: Request | None = None  # the request the run is waiting on, for an aborting answer's values
    own_flags: list[str] = []

    def observe(req: Request, resp: Response) -> None:
        nonlocal best_x, best_f, best_eps, queries
        queries = max(queries, resp.queries)
        values, eps = resp.values, resp.eps  # a Comparison carries values only when they were computed
        if values is not None and eps is not None and len(values):
            i = int(np.argmin(values))
            if values[i] < best_f:
                best_x, best_f, best_eps = req.points[i], float(values[i]), float(eps[i])

    def finish(status: Status, x_last: NDArray[np.float64] | None, iterations: int) -> OptimizeResult:
        flags = [*own_flags, *(f for cb in callbacks for f in getattr(cb, "flags", []))]
        return OptimizeResult(
            x=copy(best_x).reshape(shape),
            fun=best_f,
            fun_eps=best_eps,
            queries=queries,
            iterations=iterations,
            status=status,
            message=OptimizeResult.message_for(status),
            history=list(history),
            x_last=None if x_last is None else copy(x_last).reshape(shape),
            flags=flags,
            solver=solver.name,
            state=state,
        )

    def partial(status: Status) -> OptimizeResult:
        return finish(status, None if state is None else state.x, 0 if state is None else state.iteration)

    def relay(sub: Generator[Request, Response, Any], *, tell_exhausted: bool) -> Generator[Request, Response, Any]:
        """Pass ``sub``'s requests on, observing every answer; ``(False, what sub returned)``, or ``(True, None)``
        when the budget ran out first. ``sub`` hears an exhausted answer only with ``tell_exhausted`` (and is
        stopped if it asks again after it)."""
        nonlocal waiting
        try:
            req = next(sub)
            while True:
                waiting = req
                resp = yield req
                waiting = None
                observe(req, resp)
                if resp.exhausted and not tell_exhausted:
                    sub.close()
                    return True, None
                req = sub.send(resp)
                if resp.exhausted:
                    sub.close()
                    return True, None
        except StopIteration as done:
            return False, done.value

    history: list[IterationRecord] = []
    try:
        if f0 is None:
            req = Evaluate(points=x0[None, :], eps=solver.requested_eps(solver.beta))
            waiting = req
            resp = yield req
            waiting = None
            observe(req, resp)
            if resp.exhausted:
                return finish(Status.BUDGET, None, 0)
            assert isinstance(resp, Evaluation)
            f0, f0_eps = float(resp.values[0]), float(resp.eps[0])
        else:
            best_x, best_f, best_eps = x0, float(f0), float(f0_eps)

        state = resumed if resumed is not None else solver.init(x0, f0, f0_eps, rng)
        first_iteration = state.iteration
        if target is not None and best_f <= target:
            return finish(Status.TARGET, state.x, state.iteration)
        free_iterations = 0
        while True:
            queries_before = queries
            if max_iter is not None and state.iteration - first_iteration >= max_iter:
                return finish(Status.MAX_ITER, state.x, state.iteration)
            exhausted, outcome = yield from relay(solver.step_generator(state), tell_exhausted=False)
            if exhausted:
                return finish(Status.BUDGET, state.x, state.iteration)
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
                true_grad_norm=None if gradient is None else norm(gradient(state.x.reshape(shape))),
            )
            history.append(record)
            if polish is not None and not own_flags and 2 * queries - queries_before >= polish_at:
                own_flags.append("polished")
                # The polish hears the exhausted answer too, so it returns what it kept.
                exhausted, polished = yield from relay(
                    polish(host(flat(best_x)), best_f, best_eps), tell_exhausted=True)  # (a polish: on the host)
                if exhausted:
                    return finish(Status.BUDGET, state.x, state.iteration)
                if polished.fun < best_f:
                    best_x = like(flat(polished.x), best_x)  # back in the run's namespace
                    best_f, best_eps = float(polished.fun), float(polished.fun_eps)
                    state = replace(state, x=best_x, fx=best_f, fx_eps=best_eps)
                if polished.status is Status.BUDGET:
                    return finish(Status.BUDGET, state.x, state.iteration)
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
    except Abort as abort:
        # Something outside this run failed (the oracle, another run): end with what was found, including
        # the values the oracle answered for this run's last request before the fault.
        if abort.response is not None and waiting is not None:
            observe(waiting, abort.response)
        return partial(abort.status)
    except GeneratorExit:
        raise
    except BaseException as err:
        # This run's own code failed (a callback, the solver, the objective's gradient): the partial result
        # rides on the exception, which keeps its type (Ctrl-C stays a KeyboardInterrupt).
        raised = attach_partial_result(err, partial(status_for(err)))
        if raised is err:
            raise
        raise raised from err


def drive(
    runs: Sequence[RunGenerator], group: OracleGroup, *, members: Sequence[int] | None = None
) -> list[OptimizeResult]:
    """Advance ``runs`` in lockstep: each round, all pending requests go to ``group.answer`` at once.

    Run ``k`` is answered as member ``k`` of the group, or as member ``members[k]`` when given (so runs
    may cover any subset of the group's members).

    If anything fails — the group's oracle, a run's own code, Ctrl-C — the exception is re-raised with
    ``partial_result``: one :class:`OptimizeResult` per run, in order (finished runs their result, the others
    what they had found, status ``"error"``/``"interrupted"``; ``None`` for a run that never started).
    """
    if members is not None:
        group = SubsetGroup(group, list(members))
    results: list[OptimizeResult | None] = [None] * len(runs)
    pending: dict[int, Request] = {}
    # A fault can strike while a round's answers are being delivered: ``delivered`` counts those already sent,
    # so the others (and any part of a failed round the group did answer) still reach their runs.
    items: list[tuple[int, Request]] = []
    answers: dict[int, Response] = {}  # by position in ``items``
    delivered = 0
    current: int | None = None  # the run whose own code is executing
    try:
        for i, run in enumerate(runs):
            current = i
            try:
                pending[i] = next(run)
            except StopIteration as done:
                results[i] = done.value
        current = None
        while pending:
            items, answers, delivered = list(pending.items()), {}, 0
            try:
                answers = dict(enumerate(group.answer(items)))
            except BaseException as err:
                answers = getattr(err, "zeroopt_answers", None) or {}
                raise
            for pos, (i, _) in enumerate(items):
                current = i
                try:
                    pending[i] = runs[i].send(answers[pos])
                except StopIteration as done:
                    results[i] = done.value
                    del pending[i]
                delivered, current = pos + 1, None
    except GeneratorExit:
        raise
    except BaseException as err:
        undelivered = {items[pos][0]: r for pos, r in answers.items() if delivered <= pos < len(items)}
        own = partial_result(err)
        for i in list(pending):
            if i == current and isinstance(own, OptimizeResult):  # its own code raised and left its result
                results[i] = own
            else:
                results[i] = abort_run(runs[i], Abort(status_for(err), undelivered.get(i)))
        raised = attach_partial_result(err, results)
        if raised is err:
            raise
        raise raised from err
    return [r for r in results if r is not None]


def minimize(
    fun: Any,
    x0: ArrayLike,
    *,
    solver: str | Chain = "rgf",
    budget: int,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    callbacks: Iterable[Callback] | Callback = (),
    max_iter: int | None = None,
    target: float | None = None,
    restarts: Any = True,
    on_non_finite: str | None = None,
    **options: Any,
) -> OptimizeResult:
    """Minimize ``fun`` from ``x0`` with a zeroth-order solver under a hard query budget.

    Parameters
    ----------
    fun
        A callable ``f(x) -> float`` (wrapped as an exact oracle; it gets a copy of each point, which it
        may modify), a :class:`zeroopt.Oracle` (e.g. with injected error), or a problem from
        :mod:`zeroopt.oracles.problems` (whose known gradient and L₁ are then used for diagnostics and the theory
        step). An ``Oracle`` counts the queries of one run: one that has already spent queries is refused
        (create a new one per run).
    x0
        Starting point, any shape (a 0-d scalar too); solvers work on its flattened copy, and ``x`` comes
        back in the shape of ``x0``.
    solver
        Registered solver name, see :func:`zeroopt.list_solvers` — or a solver built already
        (:func:`zeroopt.chain`, :meth:`zeroopt.SolverSpec.build`), which takes no ``options``.
    budget
        Hard cap on oracle cost units (function evaluations, model queries); never exceeded. A positive
        integer (``TypeError`` for any other type, ``100.0`` included; ``ValueError`` for <= 0).
    seed
        Seed for every random choice (int, SeedSequence or Generator); same seed, same run, bit for bit, with the
        same number of BLAS threads (linear algebra, as in ``trust-region``, may round differently with another).
    callbacks
        A callable ``cb(record) -> bool | None``, or several, called after every iteration; True stops the run.
    max_iter
        Optional iteration limit of the whole call (every restart's iterations together).
    target
        Stop once the best value is at most this (a number; NaN is an error).
    restarts
        A run that stops on its own with budget left is restarted until the budget is spent
        (:mod:`zeroopt.running.whole_budget`): from its best point with the solver's initial radius while that pays,
        then from fresh points at growing distance; ``history`` and callbacks' records go on across runs, ``x`` is the
        best of all, ``flags`` holds ``restarts=<k>``. True (the default), a :class:`zeroopt.Restarts`, or False
        for one run.
    on_non_finite
        What a NaN or ±inf value of a callable ``fun`` is: ``"worse"`` than any finite value, the run going on
        (``None``, the default, for a callable), or ``"raise"`` (:class:`NonFiniteValueError`); see
        :func:`zeroopt.as_oracle`. An :class:`Oracle` of another kind answers as it was built to.
    **options
        Solver options; ``zeroopt.list_solvers()[solver].defaults()`` lists them. The problem is a plain
        objective (:class:`SolverContext` without traits), so the options' own defaults apply.

    Returns
    -------
    OptimizeResult
        Best point seen (``x``, ``fun``), ``queries`` (as counted by the oracle), ``iterations`` (of all runs),
        ``history`` of :class:`IterationRecord`, ``status``/``message``, and ``flags`` from monitors.

    Raises
    ------
    TypeError, ValueError
        For a bad argument, option or solver: always before the first query.
    Exception
        Whatever stopped the run after its first query — the objective raising or returning NaN/inf under
        ``on_non_finite="raise"`` (:class:`NonFiniteValueError`), ``None``
        (:class:`~zeroopt.core.errors.ObjectiveError`), a callback raising, ``KeyboardInterrupt`` — is re-raised as it
        is, with the best result so far attached as ``err.partial_result`` (an :class:`OptimizeResult` with status
        ``"error"`` or ``"interrupted"``).

    Examples
    --------
    >>> import numpy as np, zeroopt
    >>> res = zeroopt.minimize(lambda x: float(x @ x), np.ones(10), solver="rgf", budget=2000, seed=0)
    >>> res.fun < 1e-3 and res.queries <= 2000
    True
    """
    # Everything is checked before the first query.
    budget = check_budget(budget)
    x = check_x0(x0)
    max_iter, target = check_max_iter(max_iter), check_target(target)
    callbacks = check_callbacks(callbacks)
    policy = as_restarts(restarts)
    context = SolverContext(dim=math.prod(x.shape), lipschitz=getattr(fun, "L1", None), shape=tuple(x.shape))
    if isinstance(solver, Chain):
        if options:
            raise TypeError(f"options {sorted(options)} are for a solver built by name; {solver.name!r} is built "
                            "already: change its parts with with_part")
        built = solver
    else:
        built = make_solver(solver, context, **options)
    if isinstance(fun, Oracle) and fun.queries > 0:
        raise ValueError(
            f"this Oracle has already spent {fun.queries} queries (an earlier run): its ledger counts one run's "
            "budget. Create a new oracle for each minimize call, or give it a fresh ledger: "
            "oracle.ledger = zeroopt.QueryLedger()"
        )
    oracle = as_oracle(fun, x.shape, budget=budget, on_non_finite=on_non_finite)  # (checks it before any query)
    gradient = getattr(fun, "gradient", None)
    rng = np.random.default_rng(check_seed(seed))  # (a Generator is returned as it is)
    group = IndependentGroup([oracle])

    def start(point: Any, f0: float | None, f0_eps: float, rng: np.random.Generator, iterations: int | None,
              callback: Callback) -> RunGenerator:
        return run_solver(built, point, rng=rng, f0=f0, f0_eps=f0_eps, max_iter=iterations, target=target,
                          callbacks=[callback], gradient=gradient if callable(gradient) else None, shape=x.shape)

    return spend_budget(start, lambda run: drive([run], group)[0], x.ravel(), rng=rng, restarts=policy,
                        remaining=lambda: group.remaining(0), max_iter=max_iter, callbacks=callbacks)
