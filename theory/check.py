"""Check a finished run against the theory: where it sits relative to N, and whether ε was admissible.

The link between :mod:`theory.bounds` and zeroopt's analysis hooks. The precision check replays the
run's records through :class:`zeroopt.ToleranceMonitor` — the same rule a live run would use — so a
post-hoc check and an online monitor agree by construction.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from zeroopt import IterationRecord, OptimizeResult, Problem, ToleranceMonitor

from .bounds import ErrorModel, iteration_bound, query_bound, theorem1_eps
from .hitting import FirstHit, first_hit, gradient_norms, query_counts
from .problems import f_gap as problem_f_gap

__all__ = ["RunCheck", "Theorem1Monitor", "check_run"]


@dataclass(frozen=True)
class RunCheck:
    """A run measured against its bound.

    Attributes
    ----------
    bound_iterations, bound_queries
        Theorem 1's N for the run's (d, L1, δ, f(x0) − f*, β, ε, q) with the theory step 1/(4(d+4)L1)
        (or the ``step`` given to :func:`check_run`), and its query cost; ``inf`` when the theory
        guarantees nothing (β or ε too large for δ). Not the run's own step: a bound that moved with the
        run's step would be met by a solver whose step were wrong by any factor.
    hit_iterate, hit_average
        First hits of ``‖∇f(x_k)‖ <= δ`` and of the running average ``<= δ²`` (see :mod:`theory.hitting`).
    ratio
        ``hit_average.iteration / bound_iterations`` — below 1 when the run met the guarantee early
        (a lower bound when the hit is censored; NaN when the bound is inf).
    within_bound
        The average reached δ² no later than N (``None`` when the run stopped before N without reaching it,
        so the question is open).
    beta, eps, step
        The largest smoothing radius, oracle precision and step the records show (``step`` is the run's,
        which the bound does not use).
    precision_threshold
        ``c β δ²``, Theorem 1's condition at the largest β.
    precision_ok
        Every iteration had ``ε <= c β δ²`` (by :class:`zeroopt.ToleranceMonitor`).
    violations, first_violation
        Iterations breaking the condition and the first of them.
    note
        Why the bound is inf, when it is ("" otherwise).
    """

    d: int
    delta: float
    bound_iterations: float
    bound_queries: float
    hit_iterate: FirstHit
    hit_average: FirstHit
    ratio: float
    within_bound: bool | None
    beta: float
    eps: float
    step: float
    precision_threshold: float
    precision_ok: bool
    violations: int
    first_violation: int | None
    note: str = ""

    def summary(self) -> str:
        """One line for logs and failure messages."""
        n = f"inf ({self.note})" if math.isinf(self.bound_iterations) else f"{int(self.bound_iterations)}"
        hit = f"{self.hit_average.iteration}{'+ (censored)' if self.hit_average.censored else ''}"
        return (
            f"d={self.d} δ={self.delta:g}: average hit at {hit} vs bound N={n} (ratio {self.ratio:.3g}); "
            f"iterate hit at {self.hit_iterate.iteration}{'+' if self.hit_iterate.censored else ''}; "
            f"ε={self.eps:.3g} {'<=' if self.precision_ok else '>'} cβδ²={self.precision_threshold:.3g}"
            + ("" if self.precision_ok else f" in {self.violations} iteration(s), first {self.first_violation}")
        )

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields (``inf`` becomes ``None``)."""
        out = asdict(self)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in out.items()}


def check_run(
    result: OptimizeResult,
    problem: Problem,
    delta: float,
    *,
    q: int = 1,
    x0: np.ndarray | None = None,
    constant: float = 1.0,
    error: ErrorModel = "adversarial",
    step: float | None = None,
) -> RunCheck:
    """Measure ``result`` (a run of ``"rgf"``/``"rgf-fixed"`` on ``problem``) against Theorem 1.

    Parameters
    ----------
    result
        The run; its records must carry true gradient norms (``problem`` was passed to minimize).
    problem
        The problem minimised (gives L1, f*, ∇f at x0).
    delta
        Target accuracy δ.
    q
        Directions per iteration the run used.
    x0
        Start of the run when it was not ``problem.x0``.
    constant
        The c of the precision condition ``ε <= c β δ²`` (as in :class:`zeroopt.ToleranceMonitor`).
    error
        Error model of the oracle for the bound (``"zero-mean"`` for random noise).
    step
        The step the bound assumes; ``None``: the theory step ``1/(4(d+4)L1)``, the algorithm Theorem 1
        analyses. Pass the run's own step only to ask what the theory promises for that step.
    """
    if problem.L1 is None:
        raise ValueError(f"{problem.name} has no global L1, so Theorem 1 says nothing about it")
    start = problem.x0 if x0 is None else np.asarray(x0, float).ravel()
    norms = gradient_norms(result, float(np.linalg.norm(problem.gradient(start))))
    queries = query_counts(result)
    hit_it = first_hit(norms, queries, delta, "iterate")
    hit_avg = first_hit(norms, queries, delta, "average")
    beta = float(max((r.beta for r in result.history), default=0.0))
    eps = float(max((r.eps for r in result.history), default=0.0))
    run_step = float(max((r.step_size for r in result.history), default=0.0))
    n, note = _bound(problem.dim, problem.L1, delta, problem_f_gap(problem, start), beta, eps, q, step, error)
    monitor = ToleranceMonitor(delta, constant=constant, warn=False)
    for record in result.history:
        monitor(record)
    ratio = hit_avg.iteration / n if math.isfinite(n) and n > 0 else math.nan
    if not hit_avg.censored:
        within: bool | None = hit_avg.iteration <= n
    else:
        within = False if hit_avg.iteration >= n else None
    return RunCheck(
        d=problem.dim, delta=delta, bound_iterations=n, bound_queries=query_bound(n, q),
        hit_iterate=hit_it, hit_average=hit_avg, ratio=ratio, within_bound=within,
        beta=beta, eps=eps, step=run_step, precision_threshold=theorem1_eps(beta, delta, constant),
        precision_ok=not monitor.violations, violations=len(monitor.violations),
        first_violation=monitor.violations[0] if monitor.violations else None, note=note,
    )


def _bound(
    d: int, L1: float, delta: float, gap: float, beta: float, eps: float, q: int, step: float | None,
    error: ErrorModel,
) -> tuple[float, str]:
    """Theorem 1's N for the run's parameters, and why it is inf when it is."""
    try:
        n = iteration_bound(d, L1, delta, gap, beta=beta, eps=eps, q=q, step=step, error=error)
    except ValueError as err:  # a line-searched step beyond the analysis' stability limit
        return math.inf, str(err)
    if math.isfinite(n):
        return n, ""
    if math.isinf(iteration_bound(d, L1, delta, gap, beta=beta, eps=0.0, q=q, step=step, error=error)):
        return n, f"beta={beta:.3g} is too large for delta={delta:g}: the smoothing floor exceeds delta"
    return n, f"eps={eps:.3g} is too coarse for beta={beta:.3g}, delta={delta:g}: the error floor exceeds delta"


@dataclass
class Theorem1Monitor:
    """Callback: watch a live run against Theorem 1 — its running average, its bound N, its precision.

    Pass it to :func:`zeroopt.minimize` (``callbacks=[...]``) for a run on a :class:`zeroopt.Problem`.
    It replays nothing: it follows the records as they come, takes β and ε from them (the bound, for the
    theory step as in :func:`check_run`, is recomputed whenever they change), and reports through
    ``flags``, which zeroopt copies into ``result.flags``: the precision condition (through a
    :class:`zeroopt.ToleranceMonitor`), and whether the running average of ‖∇f(x_k)‖² reached δ² before N.

    Parameters
    ----------
    problem, delta, q, constant, error, x0
        As for :func:`check_run`.
    stop
        Stop the run once the running average reaches δ² (status ``"callback"``).
    """

    problem: Problem
    delta: float
    q: int = 1
    constant: float = 1.0
    error: ErrorModel = "adversarial"
    stop: bool = False
    x0: np.ndarray | None = None
    bound: float = field(default=math.inf, init=False)
    note: str = field(default="", init=False)
    hit: int | None = field(default=None, init=False)
    iterations: int = field(default=0, init=False)
    _tolerance: ToleranceMonitor = field(init=False, repr=False)
    _params: tuple[float, float] | None = field(default=None, init=False, repr=False)
    _sum_sq: float = field(default=0.0, init=False, repr=False)
    _gap: float = field(default=0.0, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.problem.L1 is None:
            raise ValueError(f"{self.problem.name} has no global L1, so Theorem 1 says nothing about it")
        start = self.problem.x0 if self.x0 is None else np.asarray(self.x0, float).ravel()
        self._gap = problem_f_gap(self.problem, start)
        self._sum_sq = float(np.linalg.norm(self.problem.gradient(start))) ** 2
        self._tolerance = ToleranceMonitor(self.delta, constant=self.constant, warn=False)
        if self._sum_sq <= self.delta**2:
            self.hit = 0

    def __call__(self, record: IterationRecord) -> bool:
        self._tolerance(record)
        params = (record.beta, record.eps)
        if params != self._params:
            self._params = params
            self.bound, self.note = _bound(
                self.problem.dim, float(self.problem.L1), self.delta, self._gap,  # type: ignore[arg-type]
                record.beta, record.eps, self.q, None, self.error,
            )
        self.iterations = record.iteration + 1
        if record.true_grad_norm is not None:
            self._sum_sq += record.true_grad_norm**2
        if self.hit is None and self._sum_sq / (self.iterations + 1) <= self.delta**2:
            self.hit = self.iterations
        return self.stop and self.hit is not None

    @property
    def flags(self) -> list[str]:
        """The tolerance monitor's flags, plus where the run stands against N."""
        out = [f"theorem1: {f}" for f in self._tolerance.flags]
        n = "inf" if math.isinf(self.bound) else str(int(self.bound))
        if math.isinf(self.bound):
            out.append(f"theorem1: no guarantee for delta={self.delta:g}: {self.note}")
        if self.hit is not None:
            out.append(f"theorem1: mean |grad f|^2 <= delta^2 at iteration {self.hit} (bound N = {n})")
        elif self.iterations > self.bound:
            out.append(
                f"theorem1: mean |grad f|^2 still above delta^2 after {self.iterations} > N = {n} iterations "
                "(the theorem bounds the expectation, so one run may; many may not)"
            )
        return out
