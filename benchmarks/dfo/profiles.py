"""Data and performance profiles (Moré & Wild 2009, §2) from the best-value traces of runs.

A run solves problem p at tolerance τ after t evaluations when its best value f_t satisfies the convergence test
f(x0) − f_t ≥ (1 − τ)(f(x0) − f_L), f_L the best value any solver found on p. The data profile of solver s is
d_s(κ) = |{p : t_{p,s} ≤ κ (n_p + 1)}| / |P|, the performance profile ρ_s(α) = |{p : t_{p,s} ≤ α min_s t_{p,s}}| / |P|.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

#: The tolerances of the paper's figures.
TAUS = (1e-1, 1e-3, 1e-5)


def solve_time(trace: Sequence[Sequence[float]], f0: float, f_low: float, tau: float) -> float:
    """Evaluations a run with best-value ``trace`` [(evaluation, best)] needed to pass the test (inf: never).

    Examples
    --------
    >>> solve_time([(1, 10.0), (5, 2.0), (9, 0.5)], f0=10.0, f_low=0.0, tau=0.1)
    9.0
    >>> solve_time([(1, 10.0), (5, 2.0)], f0=10.0, f_low=0.0, tau=0.1)
    inf
    """
    goal = f0 - (1.0 - tau) * (f0 - f_low)
    for k, best in trace:
        if best <= goal:
            return float(k)
    return math.inf


def solve_times(runs: dict[str, dict[str, list[list[float]]]], f0: dict[str, float], tau: float,
                solvers: Sequence[str]) -> np.ndarray:
    """``(problems, solvers)`` evaluations to pass the test; ``runs[problem][solver]`` is a trace."""
    names = list(runs)
    out = np.full((len(names), len(solvers)), math.inf)
    for i, p in enumerate(names):
        traces = {s: runs[p][s] for s in solvers if runs[p].get(s)}
        if not traces:
            continue
        f_low = min(t[-1][1] for t in traces.values())
        if not f_low < f0[p]:
            continue  # no solver improved on x0: no solver solves p
        for j, s in enumerate(solvers):
            if s in traces:
                out[i, j] = solve_time(traces[s], f0[p], f_low, tau)
    return out


def data_profile(times: np.ndarray, dims: Sequence[int], kappas: Sequence[float]) -> np.ndarray:
    """``(solvers, kappas)``: share of problems solved within κ(n_p + 1) evaluations, in [0, 1], non-decreasing."""
    scale = np.asarray(dims, dtype=float)[:, None] + 1.0
    units = times / scale  # simplex gradients needed
    return np.array([[np.mean(units[:, j] <= k) for k in kappas] for j in range(times.shape[1])])


def performance_profile(times: np.ndarray, alphas: Sequence[float]) -> np.ndarray:
    """``(solvers, alphas)``: share of problems solved within α times the fastest solver's evaluations."""
    best = times.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        ratio = np.where(np.isfinite(best), times / best, math.inf)
    return np.array([[np.mean(ratio[:, j] <= a) for a in alphas] for j in range(times.shape[1])])


def area(profile: np.ndarray) -> np.ndarray:
    """Mean of each solver's profile over its grid (the area under it, normalised to [0, 1])."""
    return profile.mean(axis=1)
