"""Every built-in solver's chain in the contexts zeroopt is used in, as one page (``docs/solvers.md``).

>>> from zeroopt.recipes.catalogue import chains_page
>>> "sign-growing for SolverContext(dim=784" in chains_page()
True
"""

from __future__ import annotations

from ..core.base import SolverContext
from .registry import list_solvers

__all__ = ["PAGE_CONTEXTS", "chains_page"]


#: The contexts :func:`chains_page` shows each built-in solver in: the traits of the problems zeroopt is used on.
PAGE_CONTEXTS = (
    ("A plain objective of 10 variables", {"dim": 10}),
    ("A smooth radius along a direction of a 28×28 array, to adjustable precision (the hard-label g(θ) of a "
     "network)", {"dim": 784, "shape": (1, 28, 28), "unit_sphere": True, "radial": True,
                  "adjustable_precision": True}),
    ("A piecewise-constant radius along a direction of 784 features (the g(θ) of a tree ensemble)",
     {"dim": 784, "unit_sphere": True, "radial": True, "adjustable_precision": True, "piecewise_constant": True}),
)


def chains_page() -> str:
    """Markdown of every built-in solver's chain in each of :data:`PAGE_CONTEXTS` (``docs/solvers.md`` is this
    page)."""
    out = ["# The built-in solvers, part by part", "",
           "Each solver's chain as `zeroopt.get_solver(name).describe(context)` prints it, in the contexts zeroopt",
           "is used in; the stages and the parts' contract are tabled in `zeroopt.core.stages`. Written by",
           "`python -c \"import zeroopt.recipes.catalogue as c; print(c.chains_page(), end='')\" > docs/solvers.md`",
           "(a test keeps it current). Beside each part, after `<-`, the options that set it (every other option",
           "sets the chain's own `beta`, `step` or `retract`). Why the default solver is set as it is:",
           "[defaults.md](defaults.md).", ""]
    solvers = sorted(name for name, spec in list_solvers().items()
                     if (spec.recipe or spec.factory).__module__.startswith("zeroopt."))
    for title, traits in PAGE_CONTEXTS:
        out += [f"## {title}", ""]
        for name in solvers:
            lipschitz = {"lipschitz": 2.0} if name == "rgf-fixed" else {}
            context = SolverContext(**traits, **lipschitz)
            refused = list_solvers()[name].refusal(context)
            shown = f"{name}: refused here — {refused}" if refused else list_solvers()[name].describe(context)
            out += ["```text", shown, "```", ""]
    return "\n".join(out)
