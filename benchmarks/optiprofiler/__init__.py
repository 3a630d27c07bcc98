"""zeroopt's solvers and the DFO harness's peers as OptiProfiler solvers (``python -m benchmarks.optiprofiler``).

:func:`as_solver` makes one ``solver(fun, x0) -> x`` callable, the signature OptiProfiler's ``benchmark`` calls, from
an entry name; :func:`truncation_precision` is the precision OptiProfiler's ``truncated`` feature states. docs:
docs/optiprofiler.md. ``optiprofiler`` (the optional extra of the same name) is imported by a benchmark, not here.
"""

from .solvers import FEATURES, Solver, as_solver, truncation_precision

__all__ = ["FEATURES", "Solver", "as_solver", "truncation_precision"]
