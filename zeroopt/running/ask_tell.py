"""Ask/tell: drive a registered solver by hand, evaluating its points wherever the objective lives.

:func:`ask_tell` runs the same solver generator :func:`zeroopt.minimize` drives (:func:`zeroopt.run_solver`),
answering its requests with the values the caller tells. Each :meth:`AskTell.ask` hands out the points of the
solver's next request (never more than the budget left), each :meth:`AskTell.tell` answers them; requests
that are not plain evaluations are answered the way ``minimize``'s plain-callable oracle answers them (a
:class:`~zeroopt.oracles.requests.Compare` by evaluating its points, a
:class:`~zeroopt.oracles.requests.FlatCoordinates` at no cost with "every coordinate counts"), so the same seed
gives the same run as ``minimize`` bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..core.base import SolverContext
from ..core.checks import check_budget, check_callbacks, check_max_iter, check_seed, check_target, check_x0
from ..oracles.oracle import Oracle
from ..oracles.requests import Compare, Evaluate, Request, Response
from ..recipes.registry import make_solver
from .driver import RunGenerator, run_solver
from .faults import Abort, abort_run
from .records import IterationRecord, OptimizeResult, Status

__all__ = ["AskTell", "ask_tell"]


class _ToldOracle(Oracle):
    """An exact oracle whose values are the ones the caller told (the base class keeps the ledger and compares)."""

    def __init__(self, budget: int) -> None:
        super().__init__(budget=budget)
        self.told: NDArray[np.float64] = np.empty(0)

    def _values(
        self, points: NDArray[np.float64], eps: float | None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.told[: len(points)], np.zeros(len(points))


class AskTell:
    """One run of a solver driven by ``ask``/``tell``; build it with :func:`ask_tell`.

    Attributes
    ----------
    done
        True once the run has ended (budget spent, converged, target or iteration limit reached, or
        :meth:`stop`); :attr:`result` is then its :class:`OptimizeResult`.
    dim
        Number of coordinates of a point (``x0.size``); ``ask`` returns ``(n, dim)`` arrays.
    """

    def __init__(self, run: RunGenerator, budget: int, shape: tuple[int, ...]) -> None:
        self._run = run
        self._oracle = _ToldOracle(budget)
        self._shape = shape
        self.dim = int(np.prod(shape, dtype=int))
        self._request: Request | None = None
        self._asked = 0  # points of the pending request that ask hands out (the budget may cut a request short)
        self._handed = False  # whether ask handed them out since the last tell
        self._result: OptimizeResult | None = None
        self._advance(None)

    @property
    def done(self) -> bool:
        """Whether the run has ended."""
        return self._result is not None

    @property
    def queries(self) -> int:
        """Values told so far (the run's cost)."""
        return self._oracle.queries

    @property
    def budget_left(self) -> int:
        """Values the run may still ask for."""
        return int(self._oracle.ledger.remaining)

    @property
    def result(self) -> OptimizeResult:
        """The run's result (``RuntimeError`` while it goes on: ask and tell until ``done``, or :meth:`stop`)."""
        if self._result is None:
            raise RuntimeError("the run has not ended: ask() and tell() until opt.done, or call opt.stop() to end it "
                               "now with the best point told so far")
        return self._result

    def ask(self) -> NDArray[np.float64]:
        """The points to evaluate next, an ``(n, dim)`` array with ``1 <= n <= budget_left``.

        Asking again before telling returns the same points. ``RuntimeError`` once the run is done.
        """
        if self._result is not None:
            raise RuntimeError(f"the run has ended ({self._result.status.value}): read opt.result; start a new "
                               "run with zeroopt.ask_tell(...) to go on")
        if self._request is None:
            raise RuntimeError("the run stopped on an error (raised by an earlier tell); start a new one")
        self._handed = True
        return np.array(self._request.points[: self._asked], dtype=float)

    def tell(self, values: ArrayLike) -> None:
        """Answer the points of the last :meth:`ask` with their objective values, in the same order.

        ``ValueError`` (the run is unchanged, so a corrected ``tell`` may follow) for values of the wrong
        length, complex or not finite; ``RuntimeError`` for a ``tell`` with no ``ask`` before it.
        """
        if self._result is not None:
            raise RuntimeError("the run has ended: there is nothing to tell; read opt.result")
        if self._request is None:
            raise RuntimeError("the run stopped on an error (raised by an earlier tell); start a new one")
        if not self._handed:
            raise RuntimeError("tell() answers the points of the last ask(): call opt.ask() first (each ask is "
                               "answered by one tell)")
        if np.iscomplexobj(values):  # as minimize refuses an objective's complex value (numpy would drop .imag)
            raise ValueError(f"tell() takes one real value per asked point, got complex values {values!r}")
        try:
            arr = np.asarray(values, dtype=float).reshape(-1)
        except (TypeError, ValueError) as err:
            raise ValueError(f"tell() takes one real value per asked point, got {values!r}") from err
        if arr.size != self._asked:
            raise ValueError(f"tell() got {arr.size} value(s) for the {self._asked} point(s) of the last ask(); "
                             "pass one value per point, in the order ask() gave them")
        bad = ~np.isfinite(arr)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"tell() got a non-finite value ({arr[i]}) for point {i} of {arr.size}: the solvers "
                             "need finite values; tell a large finite penalty for a point that cannot be evaluated")
        self._oracle.told = arr
        response = self._oracle.answer(self._request)
        self._asked, self._handed = 0, False
        self._advance(response)

    def stop(self) -> OptimizeResult:
        """End the run now (status ``"callback"``) with the best point told so far; return its result."""
        if self._result is None:
            self._result = abort_run(self._run, Abort(Status.CALLBACK, None))
            self._asked, self._request = 0, None
        assert self._result is not None
        return self._result

    def _advance(self, response: Response | None) -> None:
        """Send ``response`` (None: start the run) and go on to the next request that needs values."""
        while True:
            try:
                request = next(self._run) if response is None and self._request is None else \
                    self._run.send(response)  # type: ignore[arg-type]
            except StopIteration as finished:
                self._result, self._request = finished.value, None
                return
            except BaseException as err:
                # The run's own code raised (a callback, say): it is over, with the partial result riding on err.
                self._request, self._asked = None, 0
                partial = getattr(err, "partial_result", None)
                self._result = partial if isinstance(partial, OptimizeResult) else self._result
                raise
            self._request = request
            wanted = len(request.points) if isinstance(request, (Evaluate, Compare)) else 0
            self._asked = self._oracle.ledger.affordable(wanted)
            if self._asked > 0:
                return
            # Free requests and those past the budget are answered here, as the plain-callable oracle would.
            response = self._oracle.answer(request)


def ask_tell(
    solver: str,
    x0: ArrayLike,
    *,
    budget: int,
    seed: int | np.random.SeedSequence | np.random.Generator | None = None,
    callbacks: Iterable[Callable[[IterationRecord], Any]] | Callable[[IterationRecord], Any] = (),
    max_iter: int | None = None,
    target: float | None = None,
    **options: Any,
) -> AskTell:
    """Start a run of ``solver`` from ``x0`` that hands out its points to evaluate instead of calling f.

    Parameters
    ----------
    solver
        Registered solver name, see :func:`zeroopt.list_solvers`.
    x0
        Starting point, any shape; points are handed out flat (``(n, x0.size)``) and ``result.x`` has the
        shape of ``x0``.
    budget
        Hard cap on values told; no ``ask`` hands out more points than the budget left.
    seed, callbacks, max_iter, target, **options
        As for :func:`zeroopt.minimize`; the same seed gives the same run as ``minimize`` on an exact objective.

    Returns
    -------
    AskTell
        ``ask()`` the points, ``tell(values)`` their values, until ``done``; then ``result``.

    Raises
    ------
    TypeError, ValueError
        For a bad argument, option or solver, as :func:`zeroopt.minimize` does.

    Examples
    --------
    >>> import numpy as np, zeroopt
    >>> opt = zeroopt.ask_tell("rgf", np.ones(5), budget=500, seed=0)
    >>> while not opt.done:
    ...     pts = opt.ask()
    ...     opt.tell(np.sum(pts**2, axis=1))
    >>> opt.result.queries <= 500 and opt.result.fun < 1e-3
    True
    """
    budget = check_budget(budget)
    x = check_x0(x0)
    max_iter, target = check_max_iter(max_iter), check_target(target)
    callbacks_list = check_callbacks(callbacks)
    built = make_solver(solver, SolverContext(dim=x.size, lipschitz=None, shape=x.shape), **options)
    rng = np.random.default_rng(check_seed(seed))  # (a Generator is returned as it is)
    run = run_solver(built, x.ravel(), rng=rng, max_iter=max_iter, target=target, callbacks=callbacks_list,
                     shape=x.shape)
    return AskTell(run, budget, x.shape)
