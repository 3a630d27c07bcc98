"""Synthetic smooth problems with known L₁ and f*, and oracles with injected error.

The families are built so that difficulty does not drift with the dimension: the starting point has a
fixed distance to the minimiser and L₁, f(x0) − f* do not depend on d. That is what lets a study read
the d-dependence of a solver off its query counts (Nesterov–Spokoiny: O(d/δ²)).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .oracle import Oracle

__all__ = [
    "NoisyOracle",
    "Problem",
    "log_norm",
    "logistic_regression",
    "rosenbrock",
    "rotated_quadratic",
]

NoiseKind = Literal["none", "bounded", "uniform", "gaussian"]


class NoisyOracle(Oracle):
    """A value oracle whose answers carry an injected error of size ε.

    Parameters
    ----------
    values
        Batched objective ``(m, d) -> (m,)``.
    eps
        Error size. ``"uniform"``: uniform in [−ε, ε]; ``"bounded"``: a deterministic, x-dependent
        error in [−ε, ε] (a fixed rough function of x, the adversarial-like case of Theorem 1);
        ``"gaussian"``: N(0, ε²) — then ε is a standard deviation, not a bound.
    kind
        One of ``"none"``, ``"bounded"``, ``"uniform"``, ``"gaussian"``.
    budget
        Hard cap on evaluations.
    seed
        Seed of the error's randomness (independent of the solver's).
    """

    def __init__(
        self,
        values: Callable[[NDArray[np.float64]], NDArray[np.float64]],
        *,
        eps: float = 0.0,
        kind: NoiseKind = "uniform",
        budget: int | None = None,
        seed: int | np.random.SeedSequence | None = None,
    ) -> None:
        super().__init__(budget=budget)
        if kind not in ("none", "bounded", "uniform", "gaussian"):
            raise ValueError(f"noise kind must be 'none', 'bounded', 'uniform' or 'gaussian', got {kind!r}")
        if not np.isfinite(eps) or eps < 0:
            raise ValueError(f"eps must be finite and >= 0, got {eps!r}")
        self.values_fn = values
        self.eps = 0.0 if kind == "none" else float(eps)
        self.kind = kind
        self.rng = np.random.default_rng(seed)
        self._freq: NDArray[np.float64] | None = None

    def _values(
        self, points: NDArray[np.float64], eps: float | None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        v = np.asarray(self.values_fn(points), dtype=float)
        if self.eps == 0:
            return v, np.zeros(len(points))
        if self.kind == "uniform":
            err = self.rng.uniform(-self.eps, self.eps, size=len(points))
        elif self.kind == "gaussian":
            err = self.rng.normal(0.0, self.eps, size=len(points))
        else:
            if self._freq is None:
                self._freq = self.rng.standard_normal(points.shape[1]) * 1e3
            err = self.eps * np.sin(points @ self._freq)
        return v + err, np.full(len(points), self.eps)


@dataclass(frozen=True)
class Problem:
    """A smooth test function with what the theory needs to know about it.

    Attributes
    ----------
    name
        Short description.
    dim
        Dimension d.
    values
        Batched objective ``(m, d) -> (m,)``.
    grad
        Gradient ``(d,) -> (d,)``.
    L1
        Lipschitz constant of the gradient (an upper bound), or ``None`` when it has none globally.
    f_star
        Minimum value.
    x0
        Default starting point.
    noise, eps, noise_seed
        Injected error of the oracle :meth:`make_oracle` builds.
    """

    name: str
    dim: int
    values: Callable[[NDArray[np.float64]], NDArray[np.float64]] = field(repr=False)
    grad: Callable[[NDArray[np.float64]], NDArray[np.float64]] = field(repr=False)
    L1: float | None
    f_star: float
    x0: NDArray[np.float64] = field(repr=False)
    noise: NoiseKind = "none"
    eps: float = 0.0
    noise_seed: int | None = None

    def __call__(self, x: NDArray[np.float64]) -> float:
        return float(self.values(np.asarray(x, dtype=float).reshape(1, -1))[0])

    def gradient(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """∇f(x)."""
        return self.grad(np.asarray(x, dtype=float).ravel())

    def make_oracle(self, budget: int | None = None) -> NoisyOracle:
        """An oracle for this problem, with the configured injected error."""
        return NoisyOracle(self.values, eps=self.eps, kind=self.noise, budget=budget, seed=self.noise_seed)

    def with_noise(self, kind: NoiseKind, eps: float, seed: int | None = 0) -> Problem:
        """The same problem whose oracle answers within ``eps`` (see :class:`NoisyOracle`)."""
        return Problem(self.name, self.dim, self.values, self.grad, self.L1, self.f_star, self.x0, kind, eps, seed)


def _start(dim: int, radius: float, seed: int | None) -> NDArray[np.float64]:
    """A point at distance ``radius`` from 0 in a random (seeded) direction."""
    u = np.random.default_rng(seed).standard_normal(dim)
    return radius * u / np.linalg.norm(u)


def log_norm(dim: int, *, radius: float = 3.0, seed: int | None = 0) -> Problem:
    """f(x) = log(1 + ‖x‖²): smooth, nonconvex, L₁ = 2, f* = 0, f(x0) − f* = log(1 + r²) for every d."""

    def values(p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.log1p(np.einsum("ij,ij->i", p, p))

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return 2.0 * x / (1.0 + x @ x)

    return Problem(f"log_norm(d={dim})", dim, values, grad, 2.0, 0.0, _start(dim, radius, seed))


def rotated_quadratic(
    dim: int, *, mu: float = 0.1, L: float = 1.0, radius: float = 3.0, seed: int | None = 0
) -> Problem:
    """f(x) = ½ xᵀ Qᵀ Λ Q x with a random rotation Q and spectrum Λ evenly spread in [μ, L].

    L₁ = L and f* = 0 for every d; the fixed spectrum keeps the conditioning independent of d.
    """
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    q = q * np.sign(np.diag(r))
    lam = np.linspace(mu, L, dim) if dim > 1 else np.array([L])
    a = (q.T * lam) @ q

    def values(p: NDArray[np.float64]) -> NDArray[np.float64]:
        return 0.5 * np.einsum("ij,ij->i", p @ a, p)

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return a @ x

    return Problem(f"rotated_quadratic(d={dim})", dim, values, grad, float(L), 0.0, _start(dim, radius, seed))


def rosenbrock(dim: int) -> Problem:
    """The extended Rosenbrock function (f* = 0 at 1); no global L₁, reported as ``None``."""
    if dim < 2:
        raise ValueError("rosenbrock needs dim >= 2")

    def values(p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.sum(100.0 * (p[:, 1:] - p[:, :-1] ** 2) ** 2 + (1 - p[:, :-1]) ** 2, axis=1)

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        g = np.zeros_like(x)
        g[:-1] = -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
        g[1:] += 200 * (x[1:] - x[:-1] ** 2)
        return g

    return Problem(f"rosenbrock(d={dim})", dim, values, grad, None, 0.0, np.full(dim, -1.0))


def logistic_regression(
    dim: int, *, n_samples: int = 200, l2: float = 0.1, seed: int | None = 0
) -> Problem:
    """Regularised logistic regression on seeded synthetic data.

    f(w) = mean log(1 + exp(−y aᵀw)) + (l2/2)‖w‖², with rows of A scaled to norm 1 so L₁ ≤ 1/4 + l2 for
    every d. f* is computed once with scipy (L-BFGS with the exact gradient).
    """
    from scipy.optimize import minimize as scipy_minimize

    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n_samples, dim))
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    w_true = rng.standard_normal(dim)
    y = np.where(a @ w_true + 0.1 * rng.standard_normal(n_samples) > 0, 1.0, -1.0)
    ya = y[:, None] * a

    def values(p: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.mean(np.logaddexp(0.0, -(p @ ya.T)), axis=1) + 0.5 * l2 * np.einsum("ij,ij->i", p, p)

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        s = -1.0 / (1.0 + np.exp(ya @ x))
        return ya.T @ s / n_samples + l2 * x

    opt = scipy_minimize(lambda w: float(values(w[None])[0]), np.zeros(dim), jac=grad, method="L-BFGS-B",
                         options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    return Problem(f"logistic_regression(d={dim})", dim, values, grad, 0.25 + l2, float(opt.fun), np.zeros(dim))
