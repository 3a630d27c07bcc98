"""One entry as an OptiProfiler solver: its budget OptiProfiler's, every evaluation counted, the best point returned.

OptiProfiler calls an unconstrained solver as ``solver(fun, x0)`` and gives it no budget; it records every value
``fun`` answers and stops counting at ``max_eval_factor · n``. :class:`Solver` is told the same factor, so a zeroopt
entry runs ``zeroopt.minimize`` with ``budget = max_eval_factor · n`` (exact counting: it never asks one more), and
a peer runs through the DFO harness's counting wrapper, which refuses the evaluation past it.

A truncated value is a value of stated precision: OptiProfiler's ``truncated`` feature rounds f to ``s`` significant
digits, so each answer is within half a unit of its last digit (within one and a half when the trailing digits are
perturbed). :func:`truncation_precision` is that bound as a function of the answer; a ``+noise`` entry is told it
with every value (the DFO harness's :class:`~benchmarks.dfo.peers.StatedPrecision`), the others are not.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..dfo.peers import Counted, is_zeroopt, run
from ..dfo.run import named_seed

__all__ = ["FEATURES", "Solver", "as_solver", "truncation_precision"]

#: The features the command line runs, each as OptiProfiler's ``feature_name`` and its options: ``noisy`` with
#: OptiProfiler's defaults (relative Gaussian noise of level 1e-3, unstated to every solver), ``truncated`` to 6
#: significant digits (stated to the ``+noise`` entries).
FEATURES: dict[str, dict[str, Any]] = {
    "plain": {"feature_name": "plain"},
    "noisy": {"feature_name": "noisy", "n_runs": 1},
    "truncated": {"feature_name": "truncated", "significant_digits": 6},
}


def truncation_precision(significant_digits: int, perturbed: bool = False) -> Callable[[float], float]:
    """The bound on the error of a value rounded to ``significant_digits`` (OptiProfiler's ``truncated``).

    Rounding ``f`` to ``s`` significant digits moves it by at most half a unit in its ``s``-th digit,
    ``0.5 · 10**(floor(log10|v|) + 1 - s)``, measured on the answer ``v`` (a rounding that carries into the next
    decade only makes that bound larger); with ``perturbed`` trailing digits a uniform draw of up to one more unit
    is added. A zero answer is bounded as OptiProfiler rounds zero, at its ``(s - 1)``-th decimal.

    Examples
    --------
    >>> truncation_precision(6)(123.456)
    0.0005
    """
    units = 1.5 if perturbed else 0.5

    def precision(value: float) -> float:
        if not math.isfinite(value):
            return 0.0
        exponent = (math.floor(math.log10(abs(value))) + 1 - significant_digits) if value != 0 else \
            1 - significant_digits
        return units * 10.0 ** exponent

    return precision


class _Best(Counted):
    """The harness's counting wrapper, also keeping the best point (OptiProfiler scores what a solver returns)."""

    def __init__(self, f: Callable[[NDArray[np.float64]], float], budget: int) -> None:
        super().__init__(f, budget)
        self.x: NDArray[np.float64] | None = None

    def __call__(self, x: Any) -> float:
        best = self.best
        value = super().__call__(x)
        if value < best or self.x is None:
            self.x = np.array(x, dtype=float).ravel()
        return value


@dataclass(frozen=True)
class Solver:
    """``entry`` (a zeroopt entry or a DFO-harness peer) as OptiProfiler's ``solver(fun, x0) -> x``.

    Parameters
    ----------
    entry
        A name :func:`benchmarks.dfo.peers.run` runs: a zeroopt solver or harness entry (``coordinate+qn``,
        ``coordinate+qn+noise``, ``.../one-run``) or a peer (``Powell``, ``COBYQA``, ``pycma``, ...).
    max_eval_factor
        OptiProfiler's ``max_eval_factor``: the budget is this times the dimension.
    precision
        The bound on each value's error that the problem states (``None``: exact), told to ``+noise`` entries.
    seed
        The seed every run draws from, with the start point and the entry's name (one seed, the same run in
        every process OptiProfiler may use).
    """

    entry: str
    max_eval_factor: int
    precision: Callable[[float], float] | None = None
    seed: int = 0

    def __call__(self, fun: Callable[[NDArray[np.float64]], float], x0: NDArray[np.float64]) -> NDArray[np.float64]:
        x0 = np.asarray(x0, dtype=float).ravel()
        f = _Best(fun, self.max_eval_factor * x0.size)
        start = hashlib.sha256(x0.tobytes()).hexdigest()[:16]
        run(self.entry, f, x0, named_seed(self.seed, start, self.entry), False, self.precision)
        return x0 if f.x is None else f.x

    @property
    def randomized(self) -> bool:
        """Whether the entry draws random numbers (every zeroopt entry does; of the peers, the evolution
        strategies and NGOpt)."""
        return is_zeroopt(self.entry) or self.entry in ("pycma", "ng-NGOpt", "ng-CMA", "ng-TBPSA")


def as_solver(entry: str, max_eval_factor: int, feature: str = "plain", seed: int = 0,
              significant_digits: int = 6) -> Solver:
    """``entry`` as an OptiProfiler solver for ``feature``: under ``truncated`` its values' stated precision is
    :func:`truncation_precision` of ``significant_digits`` (used by ``+noise`` entries only)."""
    precision = truncation_precision(significant_digits) if feature == "truncated" else None
    return Solver(entry, max_eval_factor, precision, seed)
