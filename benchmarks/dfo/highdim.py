"""The high-dimensional set: an ill-conditioned quadratic, extended Rosenbrock and logistic regression, d >= 100.

Each problem comes smooth and noisy; the noisy one answers through zeroopt's own noise interface
(:meth:`zeroopt.Problem.with_noise`, a :class:`zeroopt.NoisyOracle` with uniform error in [−ε, ε]) at a stated
precision ε = ``NOISE_SHARE`` × (f(x0) − f*), so every problem's noise is the same share of its gap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from zeroopt import Evaluate, NoisyOracle, Problem
from zeroopt.oracles.problems import rosenbrock, rotated_quadratic

#: The noisy variant's precision as a share of the problem's gap f(x0) − f*.
NOISE_SHARE = 1e-4
#: The quadratic's condition number (its spectrum spreads evenly over [1/CONDITION, 1]).
CONDITION = 1e3
#: Ridge weight of the logistic regression.
RIDGE = 1e-2

VARIANTS = ("smooth", "noisy")


def digits_logistic(classes: int, *, l2: float = RIDGE) -> Problem:
    """Softmax regression on scikit-learn's bundled digits (the first ``classes`` digits, standardised pixels).

    d = 64 × classes weights, f(W) = mean cross-entropy + (l2/2)‖W‖², from W = 0; f* by L-BFGS on the gradient.
    """
    from scipy.optimize import minimize as scipy_minimize
    from sklearn.datasets import load_digits

    data = load_digits()
    keep = data.target < classes
    a = data.data[keep].astype(float)
    sd = a.std(axis=0)
    a = (a - a.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    y = data.target[keep]
    onehot = np.eye(classes)[y]
    rows, feats = a.shape

    def values(p: NDArray[np.float64]) -> NDArray[np.float64]:
        logits = np.einsum("nf,bfk->bnk", a, p.reshape(len(p), feats, classes))
        lse = np.logaddexp.reduce(logits, axis=2)
        ce = np.mean(lse - np.einsum("bnk,nk->bn", logits, onehot), axis=1)
        return ce + 0.5 * l2 * np.einsum("ij,ij->i", p, p)

    def grad(x: NDArray[np.float64]) -> NDArray[np.float64]:
        logits = a @ x.reshape(feats, classes)
        prob = np.exp(logits - logits.max(axis=1, keepdims=True))
        prob /= prob.sum(axis=1, keepdims=True)
        return (a.T @ (prob - onehot) / rows).ravel() + l2 * x

    dim = feats * classes
    opt = scipy_minimize(lambda w: float(values(w[None])[0]), np.zeros(dim), jac=grad, method="L-BFGS-B",
                         options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10_000})
    return Problem(f"digits_logistic(d={dim})", dim, values, grad, None, float(opt.fun), np.zeros(dim))


@dataclass
class HighDimProblem:
    """One problem of the set in one variant; ``f(x)`` is what a solver sees (a fresh :meth:`copy` restarts
    the noise draws, so every solver sees the same sequence)."""

    name: str
    family: str
    n: int
    base: Problem = field(repr=False)
    variant: str = "smooth"
    noise_seed: int = 0
    eps: float = 0.0
    x0: NDArray[np.float64] = field(init=False, repr=False)
    _oracle: NoisyOracle | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.x0 = np.asarray(self.base.x0, dtype=float)
        if self.variant == "noisy":
            self.eps = NOISE_SHARE * (self.base(self.x0) - self.base.f_star)
            self._oracle = self.base.with_noise("uniform", self.eps, seed=self.noise_seed).make_oracle()

    def copy(self) -> HighDimProblem:
        """The same problem with its noise draws restarted."""
        return HighDimProblem(self.name, self.family, self.n, self.base, self.variant, self.noise_seed)

    @property
    def f_star(self) -> float:
        return self.base.f_star

    def __call__(self, x: NDArray[np.float64]) -> float:
        x = np.asarray(x, dtype=float).reshape(1, -1)
        if self._oracle is None:
            return float(self.base.values(x)[0])
        return float(self._oracle.answer(Evaluate(points=x)).values[0])


def high_dim_problems(variant: str, dims: tuple[int, ...] = (100,), *, noise_seed: int = 0) -> list[HighDimProblem]:
    """Quadratic and Rosenbrock at each d in ``dims``, and digits logistic regression with d = 64k nearest each.

    Examples
    --------
    >>> [p.name for p in high_dim_problems("smooth", (100,))]
    ['quadratic_d100', 'rosenbrock_d100', 'logistic_d128']
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    out = []
    for d in dims:
        quad = rotated_quadratic(d, mu=1.0 / CONDITION, L=1.0, seed=0)
        out.append(HighDimProblem(f"quadratic_d{d}", "quadratic", d, quad, variant, noise_seed))
        out.append(HighDimProblem(f"rosenbrock_d{d}", "rosenbrock", d, rosenbrock(d), variant, noise_seed))
        classes = min(10, max(2, round(d / 64)))
        logit = digits_logistic(classes)
        out.append(HighDimProblem(f"logistic_d{logit.dim}", "logistic", logit.dim, logit, variant, noise_seed))
    return out
