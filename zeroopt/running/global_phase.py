"""A global phase between local runs: CMA-ES sampling from the best point, its population growing with each phase.

A local solver restarted from fresh points (:mod:`zeroopt.running.whole_budget`) lands in the nearest basin of each
start; on a function whose many local minima sit on a global trend (Rastrigin, Schaffer, Griewank–Rosenbrock) that is a
lottery. An evolution strategy with a large population sees the trend instead: its weighted recombination averages
the ripples out, and a larger population smooths more (IPOP-CMA-ES, Auger & Hansen 2005). :class:`GlobalPhase` is
that search as a restart policy's part: where :class:`~zeroopt.Restarts` would start the solver from a fresh point,
it runs a CMA-ES (Hansen's (μ/μ_w, λ) with cumulative step-size adaptation and rank-one and rank-μ covariance
updates) centred on the best point so far, and the local solver then starts from the ES's best point. Each phase
doubles the population (IPOP) and draws its first step size from the restart policy's growing widths, so the phases
alternate with local runs the way BIPOP-CMA-ES alternates large and small populations.

An ES phase ends on its own when its sampling width falls below the local solver's first step (it has found a basin,
which the local solver polishes faster), when its best value has not improved for a stagnation window of
generations, or when the budget, the call's iterations or a callback end it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core.arrays import host, like
from ..oracles.requests import Evaluate, Evaluation, Request, Response
from .faults import Abort
from .records import IterationRecord, OptimizeResult, Status

__all__ = ["POPULATION_GROWTH", "GlobalPhase", "default_population", "es_run"]

#: Each global phase doubles the population of the one before (IPOP-CMA-ES's factor).
POPULATION_GROWTH = 2
#: The largest condition number of the covariance an ES phase keeps sampling with (Hansen's ``tolconditioncov``).
WIDEST_CONDITION = 1e14


def default_population(d: int) -> int:
    """CMA-ES's default population for dimension ``d``: 4 + ⌊3 ln d⌋."""
    return 4 + math.floor(3 * math.log(max(d, 1)))


@dataclass(frozen=True)
class GlobalPhase:
    """An IPOP-style CMA-ES phase run by :class:`~zeroopt.Restarts` in place of a fresh start.

    Parameters
    ----------
    population
        The first phase's population (``None``: :func:`default_population` of the dimension); phase k samples
        ``population · growth**k`` points a generation.
    growth
        The population's factor from one phase to the next.
    sigma_share
        The first phase's first step size as a share of the start's scale max(‖x0‖∞, 1); each later phase starts
        ``growth`` times wider (the restart policy's factor), up to its widest share.
    handover
        The phase ends once its widest sampling standard deviation is below ``handover`` times the restart
        policy's first fresh width (the local solver's first step): the ES has found a basin.

    Examples
    --------
    >>> GlobalPhase().population_for(10, 1)
    20
    """

    population: int | None = None
    growth: int = POPULATION_GROWTH
    sigma_share: float = 1.0
    handover: float = 1.0

    def __post_init__(self) -> None:
        if self.population is not None and (isinstance(self.population, bool) or int(self.population) < 2):
            raise ValueError(f"GlobalPhase: population must be None or at least 2, got {self.population!r}")
        if isinstance(self.growth, bool) or int(self.growth) < 1:
            raise ValueError(f"GlobalPhase: growth must be an integer >= 1, got {self.growth!r}")
        for name in ("sigma_share", "handover"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not (math.isfinite(value)
                                                                                      and value > 0):
                raise ValueError(f"GlobalPhase: {name} must be a positive finite number, got {value!r}")

    def population_for(self, d: int, phase: int) -> int:
        """The population of the ``phase``-th global phase (from 0) in dimension ``d``."""
        first = default_population(d) if self.population is None else int(self.population)
        return first * int(self.growth) ** phase


def _weights(lam: int) -> np.ndarray:
    """Recombination weights of the best ⌊λ/2⌋ of ``lam``: log-linear, positive, summing to one."""
    mu = lam // 2
    w = math.log((lam + 1) / 2) - np.log(np.arange(1, mu + 1))
    return w / w.sum()


def es_run(
    x0: Any,
    f0: float | None,
    sigma: float,
    lam: int,
    rng: np.random.Generator,
    max_iter: int | None,
    callback: Callable[[IterationRecord], Any],
    *,
    floor: float,
) -> Generator[Request, Response, OptimizeResult]:
    """One CMA-ES phase from flat ``x0`` (value ``f0``, or ``None``) with step size ``sigma`` and population ``lam``.

    Parameters
    ----------
    x0, f0
        The mean of the first generation, and its value where known (it only seeds the phase's best point).
    sigma
        The first step size.
    lam
        Points a generation.
    rng
        Every draw of the phase.
    max_iter
        At most this many generations (``None``: no limit).
    callback
        Called with each generation's record; True ends the phase (status ``callback``).
    floor
        The phase ends (status ``converged``) once σ·√(largest eigenvalue of C) is below it.

    Returns
    -------
    OptimizeResult
        The phase's best point and value, the oracle's queries, one record per generation.
    """
    template = x0
    mean = host(x0).astype(float).ravel()
    n = mean.size
    w = _weights(lam)
    mu, mueff = w.size, 1.0 / float(w @ w)
    cs = (mueff + 2) / (n + mueff + 5)
    ds = 1 + 2 * max(0.0, math.sqrt((mueff - 1) / (n + 1)) - 1) + cs
    cc = (4 + mueff / n) / (n + 4 + 2 * mueff / n)
    c1 = 2 / ((n + 1.3) ** 2 + mueff)
    cmu = min(1 - c1, 2 * (mueff - 2 + 1 / mueff) / ((n + 2) ** 2 + mueff))
    chi = math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n))
    # The eigendecomposition is refreshed every few generations only, as Hansen's reference does, so a generation
    # costs O(n²) arithmetic on average however large n is.
    refresh = max(1, int(1 / (10 * n * (c1 + cmu))))
    cov, basis, scales = np.eye(n), np.eye(n), np.ones(n)
    ps, pc = np.zeros(n), np.zeros(n)
    best_x = mean.copy()
    best_f, best_eps = (math.inf if f0 is None else float(f0)), 0.0
    stagnation = 10 + math.ceil(30 * n / lam)  # generations without a new best before the phase gives up
    history: list[IterationRecord] = []
    queries, gen, last_gain, status = 0, 0, 0, Status.CONVERGED

    def result(why: Status) -> OptimizeResult:
        return OptimizeResult(x=like(best_x, template), fun=best_f, fun_eps=best_eps, queries=queries,
                              iterations=gen, status=why, message=OptimizeResult.message_for(why),
                              history=history, x_last=like(mean.copy(), template), solver="global-phase")

    while True:
        if max_iter is not None and gen >= max_iter:
            return result(Status.MAX_ITER)
        z = rng.standard_normal((lam, n))
        y = (z * scales) @ basis.T
        try:
            answer = yield Evaluate(like(mean + sigma * y, template))
        except Abort as abort:  # something else failed: what the phase found, the answered part too, is its result
            if isinstance(abort.response, Evaluation):
                queries = int(abort.response.queries)
                got = np.asarray(host(abort.response.values), dtype=float)
                if got.size and np.min(got) < best_f:
                    i = int(np.argmin(got))
                    best_f, best_x = float(got[i]), mean + sigma * y[i]
                    best_eps = float(np.asarray(host(abort.response.eps), dtype=float)[i])
            return result(abort.status)
        if not isinstance(answer, Evaluation):
            raise TypeError(f"a global phase asks for values; the oracle answered {type(answer).__name__}")
        queries = int(answer.queries)
        values = np.asarray(host(answer.values), dtype=float)
        got = values.size
        if got:
            i = int(np.argmin(values))
            if values[i] < best_f:
                best_f, best_eps = float(values[i]), float(np.asarray(host(answer.eps), dtype=float)[i])
                best_x, last_gain = mean + sigma * y[i], gen
        if answer.exhausted or got < lam:
            return result(Status.BUDGET)
        order = np.argsort(np.where(np.isnan(values), np.inf, values), kind="stable")[:mu]
        yw = w @ y[order]
        mean = mean + sigma * yw
        inv_sqrt = (basis / scales) @ basis.T
        ps = (1 - cs) * ps + math.sqrt(cs * (2 - cs) * mueff) * (inv_sqrt @ yw)
        hs = np.linalg.norm(ps) / math.sqrt(1 - (1 - cs) ** (2 * (gen + 1))) < (1.4 + 2 / (n + 1)) * chi
        pc = (1 - cc) * pc + hs * math.sqrt(cc * (2 - cc) * mueff) * yw
        rank_mu = (y[order].T * w) @ y[order]
        cov = ((1 - c1 - cmu + (1 - hs) * c1 * cc * (2 - cc)) * cov + c1 * np.outer(pc, pc) + cmu * rank_mu)
        sigma *= math.exp(min(1.0, (cs / ds) * (np.linalg.norm(ps) / chi - 1)))
        gen += 1
        if gen % refresh == 0:
            cov = (cov + cov.T) / 2
            eig, basis = np.linalg.eigh(cov)
            scales = np.sqrt(np.maximum(eig, 1e-300))
        width = sigma * float(scales.max())
        rec = IterationRecord(iteration=gen - 1, queries=queries, f=float(values[order[0]]), best_f=best_f,
                              eps=0.0, beta=width, step_size=sigma * float(np.linalg.norm(yw)),
                              grad_norm_estimate=math.nan)
        history.append(rec)
        if callback(rec):
            return result(Status.CALLBACK)
        if (width < floor or gen - last_gain > stagnation or not math.isfinite(sigma)
                or scales.max() > math.sqrt(WIDEST_CONDITION) * scales.min()):
            return result(status)
