"""A built solver's chain of parts, stage by stage, as text: what runs, in which order, with which settings.

>>> import zeroopt
>>> print(zeroopt.get_solver("rgf").describe(zeroopt.SolverContext(dim=10)))  # doctest: +ELLIPSIS
rgf for SolverContext(dim=10)
  1 sample     GaussianDirections(...) x q = 20 per iteration
...
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

__all__ = ["describe_chain", "describe_part"]

_CONTEXT_FLAGS = ("unit_sphere", "radial", "adjustable_precision", "piecewise_constant")


def describe_part(part: Any) -> str:
    """One part as ``name(settings)``: a ``functools.partial`` by its function and bound keywords, a function by
    its name, ``None`` as ``-``, anything else by its ``repr``.

    >>> import functools
    >>> describe_part(functools.partial(round, ndigits=2)), describe_part(None)
    ('round(ndigits=2)', '-')
    """
    if part is None:
        return "-"
    if isinstance(part, functools.partial):
        bound = ", ".join([*(repr(a) for a in part.args), *(f"{k}={v!r}" for k, v in part.keywords.items())])
        return f"{getattr(part.func, '__name__', repr(part.func))}({bound})"
    if callable(part) and hasattr(part, "__name__") and not isinstance(part, type):
        return str(part.__name__)
    return repr(part)


def _context(context: Any) -> str:
    if context is None:
        return ""
    shown = [f"dim={context.dim}"]
    if getattr(context, "shape", None) is not None:
        shown.append(f"shape={tuple(context.shape)}")
    shown += [flag for flag in _CONTEXT_FLAGS if getattr(context, flag, False)]
    for name in ("lipschitz", "constants"):
        if getattr(context, name, None) is not None:
            shown.append(f"{name}={getattr(context, name)!r}")
    return f" for SolverContext({', '.join(shown)})"


def describe_chain(solver: Any, context: Any = None) -> str:
    """The stages of a :class:`~zeroopt.ComposedSolver` in the order each iteration runs them."""
    q = solver.q if isinstance(solver.q, int) else describe_part(solver.q)
    behaviours = "\n               -> ".join(describe_part(b) for b in solver.behaviours) or "-"
    flat = "skip coordinates the oracle calls flat, then " if solver.skip_flat else ""
    stages = [
        ("sample", f"{flat}{describe_part(solver.sampler)} x q = {q} per iteration"),
        ("shape", describe_part(solver.probe_shape)),
        ("history", describe_part(solver.probe_history)),
        ("estimate", f"{describe_part(solver.estimator)} at radius beta = {solver.beta:g}"),
        ("direction", describe_part(solver.direction) if solver.direction is not None else "the estimate itself"),
        ("step", f"{describe_part(solver.step_rule)} from step {solver.step:g}"),
        ("then", behaviours),
    ]
    lines = [f"{solver.name}{_context(context)}"]
    lines += [f"  {k} {stage:<10} {text}" for k, (stage, text) in enumerate(stages, start=1)]
    precision = describe_part(solver.precision) if solver.precision is not None else "the oracle's default"
    lines.append(f"    precision  {precision}")
    lines.append(f"    retract    {describe_part(solver.retract)}")
    known = {"name", "sampler", "estimator", "step_rule", "q", "beta", "step", "precision", "retract", "behaviours",
             "direction", "skip_flat", "probe_shape", "probe_history"}
    lines += [f"    {f.name:<10} {describe_part(getattr(solver, f.name))}"
              for f in dataclasses.fields(solver) if f.name not in known]
    return "\n".join(lines)
