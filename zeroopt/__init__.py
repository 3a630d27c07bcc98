"""zeroopt: zeroth-order optimization with an inexact oracle.

Quick start::

    import numpy as np, zeroopt
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(50), solver="rgf", budget=20_000, seed=0)
    print(res.fun, res.queries, res.status)

The pieces: oracles answer requests at a counted cost under a hard budget (:mod:`zeroopt.oracle`);
solvers are composed from a direction sampler, a gradient estimator and a step rule
(:mod:`zeroopt.solver`) and registered by name (:func:`list_solvers`); :func:`minimize` runs one,
:func:`drive` runs many in lockstep, sharing oracle calls.
"""

from . import solvers as _builtin_solvers  # noqa: F401  (registers the built-in solvers)
from .callbacks import GradientNormStop, StallStop, ToleranceMonitor, ToleranceWarning
from .driver import drive, minimize, run_solver
from .oracle import (
    BudgetExhaustedError,
    CallableOracle,
    Compare,
    Comparison,
    Evaluate,
    Evaluation,
    IndependentGroup,
    NonFiniteValueError,
    Oracle,
    OracleGroup,
    QueryLedger,
    as_oracle,
)
from .problems import NoisyOracle, Problem
from .records import IterationRecord, OptimizeResult, Status
from .registry import SolverContext, SolverSpec, get_solver, list_solvers, make_solver, register_solver
from .solver import ComposedSolver, SolverState

__version__ = "0.1.0"

__all__ = [
    "BudgetExhaustedError", "CallableOracle", "Compare", "Comparison", "ComposedSolver", "Evaluate",
    "Evaluation", "GradientNormStop", "IndependentGroup", "IterationRecord", "NoisyOracle",
    "NonFiniteValueError", "OptimizeResult", "Oracle", "OracleGroup", "Problem", "QueryLedger",
    "SolverContext", "SolverSpec", "SolverState", "StallStop", "Status", "ToleranceMonitor",
    "ToleranceWarning", "as_oracle", "drive", "get_solver", "list_solvers", "make_solver", "minimize",
    "register_solver", "run_solver",
]
