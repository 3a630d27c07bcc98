"""The noisy-oracle interface: what a solver may ask of an objective, and what it costs.

A solver never calls an objective directly. It *yields requests* (:class:`Evaluate`, :class:`Compare`,
:class:`FlatCoordinates`; :mod:`zeroopt.oracles.requests`) and receives *responses* (:class:`Evaluation`,
:class:`Comparison`, :class:`FlatMask`). An :class:`Oracle` answers them and
counts every unit of cost itself in its :class:`QueryLedger`, which enforces a hard budget *before* each
unit is spent. Because requests are plain data, the answers of many independent runs can be computed
together (see :class:`OracleGroup`) — that is how the hard-label attack sends the probes of N images to
the model in one call.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from ..core.arrays import copy, host
from ..core.checks import (
    NONE_MESSAGE,
    OnNonFinite,
    as_scalar_value,
    check_on_non_finite,
    non_finite_error,
)
from ..core.errors import NonFiniteValueWarning, ObjectiveError, set_quietly
from .requests import Compare, Comparison, Evaluate, Evaluation, FlatCoordinates, FlatMask, Request, Response

__all__ = [
    "BudgetExhaustedError",
    "CallableOracle",
    "IndependentGroup",
    "Oracle",
    "OracleGroup",
    "QueryLedger",
    "SubsetGroup",
    "as_oracle",
]


class BudgetExhaustedError(RuntimeError):
    """Raised by :meth:`QueryLedger.charge` when a charge would exceed the budget."""


@dataclass
class QueryLedger:
    """Exact accounting of an oracle's cost with an optional hard cap.

    Parameters
    ----------
    budget
        Maximum number of units that may ever be spent; ``None`` for no cap.

    Notes
    -----
    The cap is checked *before* a unit is spent: :meth:`affordable` tells an oracle how many of the
    units it is about to spend it may spend, and :meth:`charge` refuses any charge beyond the cap.
    """

    budget: int | None = None
    spent: int = 0

    @property
    def remaining(self) -> int | float:
        """Units still available (``inf`` without a budget)."""
        return float("inf") if self.budget is None else self.budget - self.spent

    def affordable(self, wanted: int) -> int:
        """How many of ``wanted`` units can still be spent."""
        if self.budget is None:
            return wanted
        return max(0, min(wanted, self.budget - self.spent))

    def charge(self, units: int = 1) -> None:
        """Spend ``units``; raise :class:`BudgetExhaustedError` (spending nothing) if that would exceed the cap."""
        if units < 0:
            raise ValueError(f"cannot charge a negative number of units ({units})")
        if self.budget is not None and self.spent + units > self.budget:
            raise BudgetExhaustedError(
                f"charging {units} unit(s) would exceed the budget ({self.spent}/{self.budget} spent)"
            )
        self.spent += units

    def refund(self, units: int = 1) -> None:
        """Give back ``units`` charged for work that never happened (samples a failed call never sent)."""
        if not 0 <= units <= self.spent:
            raise ValueError(f"cannot refund {units} unit(s) of {self.spent} spent")
        self.spent -= units


# ---------------------------------------------------------------------------------------------- oracles


class Oracle(ABC):
    """An objective known only through requests, each answered at a counted cost.

    Subclasses implement :meth:`_values` (cost one unit per point). The base class enforces the budget,
    answers :class:`Compare` by evaluating (one unit per point) unless a subclass offers a cheaper
    comparison. An answer of ``+inf`` is a point worse than any other: solvers do not move there and leave such a
    probe out of their estimates.

    Parameters
    ----------
    budget
        Hard cap on units of cost; ``None`` for none.
    """

    def __init__(self, *, budget: int | None = None) -> None:
        self.ledger = QueryLedger(budget=budget)

    @property
    def queries(self) -> int:
        """Units of cost spent so far."""
        return self.ledger.spent

    def answer(self, request: Request) -> Response:
        """Answer one request, spending at most the remaining budget."""
        if isinstance(request, Evaluate):
            return self.evaluate(request)
        if isinstance(request, Compare):
            return self.compare(request)
        if isinstance(request, FlatCoordinates):
            return self.flat_coordinates(request)
        raise TypeError(f"unknown request type {type(request).__name__}; expected Evaluate, Compare or FlatCoordinates")

    def flat_coordinates(self, request: FlatCoordinates) -> FlatMask:
        """Which coordinates f is locally constant along near the point: none known, unless a subclass knows."""
        return FlatMask(flat=None, queries=self.queries)

    def evaluate(self, request: Evaluate) -> Evaluation:
        """Values at ``request.points``; stops early (``exhausted=True``) when the budget runs out."""
        m = len(request.points)
        k = self.ledger.affordable(m)
        self.ledger.charge(k)
        if k:
            try:
                values, eps = self._values(request.points[:k], request.eps)
            except BaseException as err:
                # The k units are spent. What was answered before the fault (a subclass leaves the values of
                # the first points in ``err.zeroopt_values``) goes with the error, so no run loses it.
                done = np.asarray(getattr(err, "zeroopt_values", np.empty(0)), dtype=float)
                # Units charged for points the objective was never called on are given back.
                called = getattr(err, "zeroopt_called", k)
                self.ledger.spent -= k - min(max(int(called), len(done)), k)
                set_quietly(err, "zeroopt_answer", Evaluation(values=done, eps=np.zeros(len(done)),
                                                              queries=self.ledger.spent, exhausted=True))
                raise
        else:
            values, eps = np.empty(0), np.empty(0)
        return Evaluation(values=values, eps=eps, queries=self.ledger.spent, exhausted=k < m)

    def compare(self, request: Compare) -> Comparison:
        """Answer ``f(p) < level`` by evaluating each point (one unit per point)."""
        ev = self.evaluate(Evaluate(points=request.points))
        below = ev.values < np.asarray(request.levels)[: len(ev.values)]
        return Comparison(below=below, queries=ev.queries, exhausted=ev.exhausted, values=ev.values, eps=ev.eps)

    @abstractmethod
    def _values(
        self, points: NDArray[np.float64], eps: float | None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Return ``(values, achieved_eps)`` for ``points``; already paid for."""


class CallableOracle(Oracle):
    """Wrap a plain callable ``f(x) -> float`` as an exact oracle (ε = 0).

    Parameters
    ----------
    fun
        The objective. Called on one point of shape ``shape`` at a time, or on a batch ``(m, *shape)``
        returning ``(m,)`` values when ``batched=True``.
    shape
        Shape of one point as ``fun`` expects it (solvers work on flat vectors).
    budget
        Hard cap on the number of evaluations.
    batched
        Whether ``fun`` takes a whole batch at once.
    on_non_finite
        What a NaN or ±inf value is (:data:`ON_NON_FINITE`): ``"worse"`` (the default), worse than any finite
        value — it is answered as ``+inf``, which every solver reads as a point not to move to and a probe to
        leave out of its estimate, so the run goes on (a simulator that fails far from the start, a
        log-likelihood of 0, an overflow); ``"raise"``, the end of the run with
        :class:`~zeroopt.core.errors.NonFiniteValueError`, the partial result attached. ``None`` and values that are
        not numbers are errors either way (:class:`~zeroopt.core.errors.ObjectiveError`).

    Attributes
    ----------
    non_finite
        How many answers were NaN or ±inf (each answered as ``+inf`` under ``"worse"``).
    first_non_finite
        The first such value as the objective returned it (NaN, ``inf`` or ``-inf``), ``None`` until one comes.
    """

    def __init__(
        self,
        fun: Callable[..., object],
        shape: tuple[int, ...],
        *,
        budget: int | None = None,
        batched: bool = False,
        on_non_finite: OnNonFinite = "worse",
    ) -> None:
        super().__init__(budget=budget)
        if not callable(fun):
            raise TypeError(f"the objective must be callable, got {type(fun).__name__}")
        self.fun = fun
        self.shape = tuple(shape)
        self.batched = batched
        self.on_non_finite = check_on_non_finite(on_non_finite)
        self.non_finite = 0
        self.first_non_finite: float | None = None

    def _worse(self, values: NDArray[np.float64], points: NDArray[np.float64]) -> NDArray[np.float64]:
        """``values`` with every NaN/±inf answered as ``+inf``, counted, and warned of once per oracle."""
        bad = ~np.isfinite(values)
        if not bad.any():
            return values
        i = int(np.argmax(bad))
        if self.first_non_finite is None:
            self.first_non_finite = float(values[i])
            warnings.warn(f"{non_finite_error(values[i], points[i], i, len(values))}. It is taken as worse than "
                          "any finite value (+inf) and the run goes on; pass on_non_finite='raise' to stop instead",
                          NonFiniteValueWarning, stacklevel=2)
        self.non_finite += int(bad.sum())
        return np.where(bad, np.inf, values)

    def _values(
        self, points: NDArray[np.float64], eps: float | None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        # ``fun`` always gets a copy: one that writes into its argument must not move the solver's points.
        raising = self.on_non_finite == "raise"
        if self.batched:
            raw_out = self.fun(copy(points.reshape((len(points), *self.shape))))
            if raw_out is None:
                raise ObjectiveError(NONE_MESSAGE)
            raw_host = host(raw_out)
            if np.iscomplexobj(raw_host):
                raise ObjectiveError(f"the batched objective must return real numbers, got dtype {raw_host.dtype}")
            raw = np.asarray(raw_host, dtype=float)
            if raw.shape != (len(points),):
                raise ValueError(
                    f"batched objective returned shape {raw.shape} for {len(points)} points; "
                    f"expected ({len(points)},)"
                )
            bad = ~np.isfinite(raw)
            if bad.any() and raising:
                i = int(np.argmax(bad))
                err = non_finite_error(raw[i], points[i], i, len(raw))
                err.zeroopt_values = raw[:i].copy()  # type: ignore[attr-defined]
                raise err
            return self._worse(raw, points), np.zeros(len(points))
        values = np.empty(len(points))
        for i, p in enumerate(points):
            try:
                values[i] = as_scalar_value(self.fun(copy(p.reshape(self.shape))))
                if raising and not np.isfinite(values[i]):
                    raise non_finite_error(values[i], p, i, len(points))
            except BaseException as err:
                set_quietly(err, "zeroopt_values", values[:i].copy())  # answered before the fault
                set_quietly(err, "zeroopt_called", i + 1)  # points the objective was called on
                raise
        return self._worse(values, points), np.zeros(len(points))


def as_oracle(
    fun: object, shape: tuple[int, ...], *, budget: int | None = None, on_non_finite: OnNonFinite | None = None,
) -> Oracle:
    """Return ``fun`` itself if it is an :class:`Oracle`, else wrap it as an exact :class:`CallableOracle`.

    Objects with a ``make_oracle(budget=...)`` method (the synthetic problems) build their own oracle.
    ``on_non_finite`` (:data:`ON_NON_FINITE`): what a NaN or ±inf value of a callable is — ``"worse"`` than any
    finite value (``None``: the default) or ``"raise"``; given for a :class:`CallableOracle` it sets that oracle's.
    An oracle of another kind answers as it was built to (the hard-label attack's answers +inf where no boundary
    lies), and asking it for another policy is an error.
    """
    if on_non_finite is not None:
        check_on_non_finite(on_non_finite)
    if isinstance(fun, Oracle):
        if budget is not None:
            if fun.ledger.budget is not None and fun.ledger.budget != budget:
                raise ValueError(
                    f"the oracle already has a budget of {fun.ledger.budget} but budget={budget} was given; "
                    "pass one or the other"
                )
            fun.ledger.budget = budget
        if on_non_finite is not None:
            if not isinstance(fun, CallableOracle):
                raise ValueError(f"on_non_finite={on_non_finite!r} sets how a CallableOracle answers NaN/inf; "
                                 f"a {type(fun).__name__} answers as it was built to: leave it out")
            fun.on_non_finite = on_non_finite
        return fun
    make = getattr(fun, "make_oracle", None)
    if callable(make):
        if on_non_finite is not None:
            raise ValueError(f"on_non_finite={on_non_finite!r} sets how a callable's NaN/inf values are taken; "
                             f"{type(fun).__name__} builds its own oracle: leave it out")
        oracle = make(budget=budget)
        if not isinstance(oracle, Oracle):
            raise TypeError(f"{type(fun).__name__}.make_oracle() returned {type(oracle).__name__}, not an Oracle")
        return oracle
    if callable(fun):
        return CallableOracle(fun, shape, budget=budget, on_non_finite=on_non_finite or "worse")
    raise TypeError(
        f"cannot minimize a {type(fun).__name__}: pass a callable f(x) -> float, a zeroopt.Oracle, "
        "or a problem from zeroopt.oracles.problems"
    )


# ----------------------------------------------------------------------------------------------- groups


class OracleGroup(ABC):
    """Answers the pending requests of several independent runs at once.

    ``answer`` receives ``(member, request)`` pairs — at most one per member — and returns the responses
    in the same order. Implementations may merge the work of all members (one model call for all of
    them); each member has its own ledger and budget.
    """

    @abstractmethod
    def answer(self, requests: Sequence[tuple[int, Request]]) -> list[Response]:
        """Answer every ``(member, request)`` pair."""

    @abstractmethod
    def queries(self, member: int) -> int:
        """Units spent so far by ``member``."""

    def remaining(self, member: int) -> int | float:
        """Units ``member`` may still spend (``inf`` when the group does not cap it)."""
        return float("inf")


@dataclass
class SubsetGroup(OracleGroup):
    """Some members of ``group``, presented as members ``0..m-1`` (``members[k]`` is member ``k``'s own index).

    Lets a lockstep drive cover only the members that still have work, whatever their index in the group.
    """

    group: OracleGroup
    members: Sequence[int]

    def answer(self, requests: Sequence[tuple[int, Request]]) -> list[Response]:
        return self.group.answer([(self.members[i], r) for i, r in requests])

    def queries(self, member: int) -> int:
        return self.group.queries(self.members[member])

    def remaining(self, member: int) -> int | float:
        return self.group.remaining(self.members[member])


@dataclass
class IndependentGroup(OracleGroup):
    """A group of independent oracles, each answering its own member's requests."""

    oracles: Sequence[Oracle] = field(default_factory=list)

    def answer(self, requests: Sequence[tuple[int, Request]]) -> list[Response]:
        out: list[Response] = []
        for pos, (i, req) in enumerate(requests):
            try:
                out.append(self.oracles[i].answer(req))
            except BaseException as err:
                # The members answered before the fault, and the faulting one's answered prefix, go with the
                # error (by position in ``requests``): :func:`zeroopt.drive` hands them to their runs.
                answers: dict[int, Response] = dict(enumerate(out))
                if getattr(err, "zeroopt_answer", None) is not None:
                    answers[pos] = err.zeroopt_answer  # type: ignore[attr-defined]
                set_quietly(err, "zeroopt_answers", answers)
                raise
        return out

    def queries(self, member: int) -> int:
        return self.oracles[member].queries

    def remaining(self, member: int) -> int | float:
        return self.oracles[member].ledger.remaining
