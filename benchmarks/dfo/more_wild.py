"""The Moré–Wild benchmark: 53 problems from 22 MGH functions, smooth, noisy and piecewise smooth.

Moré & Wild, "Benchmarking derivative-free optimization algorithms", SIAM J. Optim. 20(1):172–191, 2009.
Each problem is a row ``(function, n, m, s)`` of their table: function number (:data:`mgh.FUNCTIONS`),
dimension, number of residuals, and the start ``10**s`` times the function's standard start. The variants:

* ``smooth``: f = Σ F_i²;
* ``deterministic``: f = (1 + ε_f φ(x)) Σ F_i², with φ = T₃(φ₀), φ₀(x) = 0.9 sin(100‖x‖₁) cos(100‖x‖∞)
  + 0.1 cos(‖x‖₂) and the Chebyshev polynomial T₃(α) = α(4α² − 3);
* ``stochastic``: f = (1 + ε_f u) Σ F_i² with u uniform in [−√3, √3] (unit variance), drawn afresh per call;
* ``nondiff``: f = Σ |F_i| (piecewise smooth).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from .mgh import FUNCTIONS

#: Moré–Wild's relative noise level ε_f.
NOISE_LEVEL = 1e-3

#: (function, n, m, s) for the 53 problems, in the paper's order.
TABLE: tuple[tuple[int, int, int, int], ...] = (
    (1, 9, 45, 0), (1, 9, 45, 1), (2, 7, 35, 0), (2, 7, 35, 1), (3, 7, 35, 0), (3, 7, 35, 1),
    (4, 2, 2, 0), (4, 2, 2, 1), (5, 3, 3, 0), (5, 3, 3, 1), (6, 4, 4, 0), (6, 4, 4, 1), (7, 2, 2, 0),
    (7, 2, 2, 1), (8, 3, 15, 0), (8, 3, 15, 1), (9, 4, 11, 0), (10, 3, 16, 0), (11, 6, 31, 0), (11, 6, 31, 1),
    (11, 9, 31, 0), (11, 9, 31, 1), (11, 12, 31, 0), (11, 12, 31, 1), (12, 3, 10, 0), (13, 2, 10, 0),
    (14, 4, 20, 0), (14, 4, 20, 1), (15, 6, 6, 0), (15, 7, 7, 0), (15, 8, 8, 0), (15, 9, 9, 0), (15, 10, 10, 0),
    (15, 11, 11, 0), (16, 10, 10, 0), (17, 5, 33, 0), (18, 11, 65, 0), (18, 11, 65, 1), (19, 8, 8, 0),
    (19, 10, 12, 0), (19, 11, 14, 0), (19, 12, 16, 0), (20, 5, 5, 0), (20, 6, 6, 0), (20, 8, 8, 0),
    (21, 5, 5, 0), (21, 5, 5, 1), (21, 8, 8, 0), (21, 10, 10, 0), (21, 12, 12, 0), (21, 12, 12, 1),
    (22, 8, 8, 0), (22, 8, 8, 1),
)

VARIANTS = ("smooth", "deterministic", "stochastic", "nondiff")

#: Returned for a point where the residuals overflow (Moré–Wild's calfun returns inf; solvers need finite values).
OVERFLOW_VALUE = 1e300


def wild_phi(x: NDArray[np.float64]) -> float:
    """Moré–Wild's deterministic noise φ(x) = T₃(φ₀(x)), in [−1, 1]."""
    phi0 = 0.9 * np.sin(100 * np.abs(x).sum()) * np.cos(100 * np.abs(x).max()) + 0.1 * np.cos(np.linalg.norm(x))
    return float(phi0 * (4 * phi0**2 - 3))


@dataclass
class DFOProblem:
    """One benchmark problem in one variant: ``f(x)`` is what a solver sees.

    ``noise_seed`` seeds the stochastic variant's draws: a fresh :meth:`copy` restarts them, so every solver
    sees the same sequence of draws (the k-th evaluation of each gets the same u).
    """

    name: str
    family: str
    n: int
    x0: NDArray[np.float64] = field(repr=False)
    smooth_f: Callable[[NDArray[np.float64]], float] = field(repr=False)
    variant: str = "smooth"
    noise_level: float = 0.0
    noise_seed: int = 0
    _rng: np.random.Generator | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._rng = np.random.default_rng(self.noise_seed)

    def copy(self) -> DFOProblem:
        """The same problem with its noise draws restarted."""
        return DFOProblem(self.name, self.family, self.n, self.x0, self.smooth_f, self.variant, self.noise_level,
                          self.noise_seed)

    def __call__(self, x: NDArray[np.float64]) -> float:
        x = np.asarray(x, dtype=float).ravel()
        value = self.smooth_f(x)
        if self.variant == "stochastic":
            assert self._rng is not None
            value = value * (1.0 + self.noise_level * self._rng.uniform(-np.sqrt(3.0), np.sqrt(3.0)))
        elif self.variant == "deterministic":
            value = value * (1.0 + self.noise_level * wild_phi(x))
        return float(value) if np.isfinite(value) else OVERFLOW_VALUE


def _objective(fn: int, m: int, variant: str) -> Callable[[NDArray[np.float64]], float]:
    residuals = FUNCTIONS[fn][1]

    def f(x: NDArray[np.float64]) -> float:
        with np.errstate(all="ignore"):
            r = residuals(x, m)
            return float(np.abs(r).sum() if variant == "nondiff" else r @ r)

    return f


def problem(index: int, variant: str = "smooth", *, noise_level: float = NOISE_LEVEL,
            noise_seed: int = 0) -> DFOProblem:
    """Problem ``index`` (1–53, the paper's numbering) in ``variant`` (one of :data:`VARIANTS`).

    Examples
    --------
    >>> p = problem(7)  # Rosenbrock from (-1.2, 1)
    >>> p.name, p.n, round(p(p.x0), 6), p(np.ones(2))
    ('rosenbrock_n2_s0', 2, 24.2, 0.0)
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 1 <= index <= len(TABLE):
        raise ValueError(f"Moré–Wild problems are numbered 1 to {len(TABLE)}, got {index!r}")  # not TABLE[-1]
    fn, n, m, s = TABLE[index - 1]
    family, _, start = FUNCTIONS[fn]
    noisy = variant in ("deterministic", "stochastic")
    return DFOProblem(f"{family}_n{n}_s{s}", family, n, start(n) * 10.0**s, _objective(fn, m, variant), variant,
                      noise_level if noisy else 0.0, noise_seed)


def problems(variant: str = "smooth", indices: list[int] | None = None, **kwargs: float) -> list[DFOProblem]:
    """The benchmark's problems (all 53, or those numbered in ``indices``) in ``variant``."""
    return [problem(i, variant, **kwargs) for i in (indices or range(1, len(TABLE) + 1))]  # type: ignore[arg-type]
