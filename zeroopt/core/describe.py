"""A built solver's chain of parts, stage by stage, as text: what runs, in which order, with which settings.

>>> import zeroopt
>>> print(zeroopt.get_solver("rgf").describe(zeroopt.SolverContext(dim=10)))  # doctest: +ELLIPSIS
rgf for SolverContext(dim=10): beta = 0.005, step = 0.2
   1 count      FixedProbes(q=20)  <- q, q_start
   2 sample     GaussianDirections()  <- directions
...
"""

from __future__ import annotations

import functools
from typing import Any

from .stages import wrapped

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
    """A :class:`~zeroopt.Chain`'s parts in the order each iteration runs them, a line each with its stage."""
    lines = [f"{solver.name}{_context(context)}: beta = {solver.beta:g}, step = {solver.step:g}"]
    for k, part in enumerate(solver.parts, start=1):
        shown = describe_part(wrapped(part))
        options = solver.options[k - 1] if solver.options else ()
        lines.append(f"  {k:>2} {part.stage:<10} {shown}" + (f"  <- {', '.join(options)}" if options else ""))
    lines.append(f"     {'retract':<10} {describe_part(solver.retract)}")
    return "\n".join(lines)
