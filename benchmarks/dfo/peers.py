"""The solvers under test, each through its own library, every evaluation counted by one :class:`Counted` wrapper.

:class:`Counted` is the only counter: it enforces the budget (the evaluation past it raises :class:`BudgetSpent`,
which stops a peer that does not stop itself) and keeps the best value seen at each improving evaluation. Peers
are imported lazily, here only, so zeroopt itself needs none of them; :func:`available` says which are installed.
"""

from __future__ import annotations

import importlib.util
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

import zeroopt
from zeroopt.direction.quasi_newton import QUASI_NEWTON_MEMORY

#: zeroopt's solvers with an option set, by entry name: (solver, options). The +noise entries are told the precision
#: the problem states with each answer (:class:`StatedPrecision`), which their option reads; the others are not.
#: The +qn entries probe every coordinate each iteration: the coordinate sampler draws min(q, n) of them; +central
#: with a pair of probes on either side of the iterate per coordinate, +adaptive with a pair once the noise widens β.
ZEROOPT_VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "rgf+noise": ("rgf", {"beta_above_noise": True}),
    "coordinate+noise": ("coordinate", {"beta_above_noise": True}),
    "coordinate+qn": ("coordinate", {"q": 10**6, "quasi_newton": QUASI_NEWTON_MEMORY}),
    "coordinate+qn+noise": ("coordinate", {"q": 10**6, "quasi_newton": QUASI_NEWTON_MEMORY, "beta_above_noise": True}),
    "coordinate+central+qn+noise": ("coordinate", {"q": 10**6, "quasi_newton": QUASI_NEWTON_MEMORY,
                                                   "differences": "central", "beta_above_noise": True}),
    "coordinate+adaptive+qn+noise": ("coordinate", {"q": 10**6, "quasi_newton": QUASI_NEWTON_MEMORY,
                                                    "differences": "adaptive", "beta_above_noise": True}),
}
#: zeroopt's solvers in the comparison (rgf-fixed needs the gradient's Lipschitz constant, unknown here).
ZEROOPT_SOLVERS = ("rgf", "sign", "sign-growing", "coordinate", "trust-region", *ZEROOPT_VARIANTS)
#: A zeroopt entry's name with this suffix makes one run (``minimize(restarts=False)``): it ends where the solver's
#: own rule stops it, where the plain entry restarts it until the budget is spent (zeroopt.running.whole_budget).
ONE_RUN = "/one-run"
#: Peers: solver name -> the module it needs.
PEERS = {
    "ng-NGOpt": "nevergrad", "ng-TBPSA": "nevergrad", "ng-CMA": "nevergrad", "pycma": "cma",
    "COBYQA": "scipy", "Powell": "scipy", "Nelder-Mead": "scipy", "Py-BOBYQA": "pybobyqa",
}


class BudgetSpent(Exception):
    """Raised by :class:`Counted` at the evaluation past the budget or the wall-clock limit."""


class Counted:
    """Wrap ``f``: count every call, refuse the one past ``budget`` (or past ``seconds`` of wall time), keep the
    best value seen as ``trace`` — (evaluation number, best so far) at each improvement."""

    def __init__(self, f: Callable[[NDArray[np.float64]], float], budget: int, seconds: float = math.inf) -> None:
        self.f, self.budget, self.calls = f, budget, 0
        self.best = math.inf
        self.trace: list[tuple[int, float]] = []
        self.deadline = time.monotonic() + seconds
        self.timed_out = False

    def __call__(self, x: Any) -> float:
        if self.calls >= self.budget:
            raise BudgetSpent("budget")
        if time.monotonic() > self.deadline:
            self.timed_out = True
            raise BudgetSpent("time")
        value = float(self.f(np.asarray(x, dtype=float).ravel()))
        self.calls += 1
        if value < self.best:
            self.best = value
            self.trace.append((self.calls, value))
        return value


def is_zeroopt(solver: str) -> bool:
    """Whether ``solver`` runs through :func:`zeroopt.minimize`: an entry of :data:`ZEROOPT_SOLVERS`, or any solver
    registered with zeroopt (a plugin's, loaded by ``--plugin``), under a name no peer takes; either with the suffix
    :data:`ONE_RUN`."""
    solver = solver.removesuffix(ONE_RUN)
    return solver in ZEROOPT_SOLVERS or (solver not in PEERS and solver in zeroopt.list_solvers())


def available(solver: str) -> bool:
    """Whether ``solver``'s library is installed (zeroopt's are always)."""
    if is_zeroopt(solver):
        return True
    return importlib.util.find_spec(PEERS[solver]) is not None


def start_radius(x0: NDArray[np.float64], share: float = 0.1) -> float:
    """The first step size every peer that takes one is given: Py-BOBYQA's default, ``share``·max(‖x0‖∞, 1)."""
    return share * max(float(np.abs(x0).max()), 1.0)


def _scalar(value: Any) -> float:
    """``float`` that also takes a one-element array (numpy 2 refuses ``float`` of a 1-d array)."""
    return float(np.asarray(value, dtype=float).reshape(-1)[0]) if np.size(value) == 1 else float(value)


def _nevergrad(name: str, f: Counted, x0: NDArray[np.float64], seed: int, noisy: bool) -> None:
    import nevergrad as ng
    from nevergrad.optimization import metamodel

    # NGOpt's metamodel calls float() on a model's (1,)-shaped prediction, which numpy >= 2 refuses.
    metamodel.float = _scalar  # type: ignore[attr-defined]

    param = ng.p.Array(init=x0.copy())
    param.random_state = np.random.RandomState(seed)
    opt = ng.optimizers.registry[name](parametrization=param, budget=f.budget, num_workers=1)
    while True:
        cand = opt.ask()
        opt.tell(cand, f(cand.value))


def _pycma(f: Counted, x0: NDArray[np.float64], seed: int, noisy: bool) -> None:
    import cma

    opts = {"maxfevals": f.budget, "seed": seed + 1, "verbose": -9}  # cma draws a random seed for 0
    handler = cma.NoiseHandler(len(x0)) if noisy else None
    cma.fmin2(f, x0, start_radius(x0), opts, noise_handler=handler)


def _scipy(method: str, f: Counted, x0: NDArray[np.float64], seed: int, noisy: bool) -> None:
    from scipy.optimize import minimize

    options: dict[str, Any] = {"maxfev": f.budget}
    if method == "COBYQA":
        options["initial_tr_radius"] = start_radius(x0)
    minimize(f, x0, method=method, options=options)


def _pybobyqa(f: Counted, x0: NDArray[np.float64], seed: int, noisy: bool) -> None:
    import pybobyqa

    # Py-BOBYQA's restarts draw from numpy's global generator and take no seed: seeding it is the only way to repeat.
    np.random.seed(seed)  # noqa: NPY002
    pybobyqa.solve(f, x0, maxfun=f.budget, objfun_has_noise=noisy, rhobeg=start_radius(x0))


class StatedPrecision(zeroopt.Oracle):
    """``f`` (one :class:`Counted` wrapper) as a zeroopt oracle that states each answer's precision,
    ``precision(value)``: the bound on its error the problem declares (zeroopt's plain entries get an exact oracle)."""

    def __init__(self, f: Counted, precision: Callable[[float], float]) -> None:
        super().__init__()
        self.f, self.precision = f, precision

    def _values(
        self, points: NDArray[np.float64], eps: float | None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        values = np.array([self.f(p) for p in points], dtype=float)
        return values, np.array([self.precision(v) for v in values], dtype=float)


def _zeroopt(solver: str, f: Counted, x0: NDArray[np.float64], seed: int, noisy: bool,
             precision: Callable[[float], float] | None = None) -> None:
    one_run, solver = solver.endswith(ONE_RUN), solver.removesuffix(ONE_RUN)
    name, options = ZEROOPT_VARIANTS.get(solver, (solver, {}))
    told = f if precision is None or not solver.endswith("+noise") else StatedPrecision(f, precision)
    zeroopt.minimize(told, x0, solver=name, budget=f.budget, seed=seed, restarts=not one_run, **options)


def run(solver: str, f: Counted, x0: NDArray[np.float64], seed: int, noisy: bool,
        precision: Callable[[float], float] | None = None) -> str:
    """Run ``solver`` on ``f`` from ``x0`` until it stops or ``f`` refuses; return how it ended. ``precision``:
    the bound on each answer's error, as a function of the answer, that the problem states (``None``: exact)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            if is_zeroopt(solver):
                _zeroopt(solver, f, x0, seed, noisy, precision)
            elif solver.startswith("ng-"):
                _nevergrad(solver[3:], f, x0, seed, noisy)
            elif solver == "pycma":
                _pycma(f, x0, seed, noisy)
            elif solver == "Py-BOBYQA":
                _pybobyqa(f, x0, seed, noisy)
            else:
                _scipy(solver, f, x0, seed, noisy)
        except BudgetSpent as spent:
            return "time limit" if str(spent) == "time" else "budget"
        except Exception as err:  # noqa: BLE001  (a peer's failure is a result: it ends its run)
            spent_inside = isinstance(getattr(err, "__cause__", None), BudgetSpent) or f.calls >= f.budget
            return "budget" if spent_inside else f"error: {type(err).__name__}: {err}"[:200]
    return "stopped"
