"""The solver registry: the one place that knows a solver — its options, their defaults in each context, its factory.

A solver is registered once with its options dataclass (schema, defaults, ``validate()``), its factory and,
optionally, a ``defaults(context)`` function giving the options it wants in a given *context*: a
:class:`SolverContext` describes the problem by its mathematical traits (dimension, L₁, input shape,
whether the objective depends on a direction only so iterates live on the unit sphere, whether the
oracle's precision can be chosen per request). Applications describe their problem and ask the registry;
they never keep per-solver tables of their own.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .base import SolverContext
from .chain import Chain
from .constants import REFERENCE_EPS_PER_BETA
from .parts import unit_sphere

__all__ = [
    "SEARCH_SPACES", "SolverContext", "SolverSpec", "generic_defaults", "get_solver", "list_solvers", "make_solver",
    "options_from", "register_solver",
]


def generic_defaults(context: SolverContext) -> dict[str, Any]:
    """Defaults any solver gets in ``context``, for the options it has.

    ``retract`` = :func:`~zeroopt.parts.unit_sphere` on the unit sphere; ``eps_per_beta`` = 1/500 (the
    reference code's ε = β/500) with an oracle of adjustable precision.
    """
    out: dict[str, Any] = {}
    if context.adjustable_precision:
        out["eps_per_beta"] = REFERENCE_EPS_PER_BETA
    if context.unit_sphere:
        out["retract"] = unit_sphere
    return out


ContextDefaults = Callable[[SolverContext], Mapping[str, Any]]
#: Where a registered solver's iterates live: ℝᵈ, or the scaled sign vectors of a discrete search.
SEARCH_SPACES = ("real", "sign vectors")


def options_from(recipe: Callable[..., Chain]) -> type:
    """The frozen dataclass of ``recipe``'s keyword-only arguments, with their defaults: a recipe's options for
    the registry, written once (in its signature)."""
    params = [p for p in inspect.signature(recipe).parameters.values() if p.kind is p.KEYWORD_ONLY]
    missing = [p.name for p in params if p.default is p.empty]
    if missing:
        raise TypeError(f"{recipe.__name__}: every keyword-only argument needs a default to be an option: {missing}")
    title = "".join(w.capitalize() for w in recipe.__name__.split("_"))
    return dataclasses.make_dataclass(f"{title}Options", [(p.name, p.annotation, dataclasses.field(default=p.default))
                                                         for p in params], frozen=True)


@dataclass(frozen=True)
class SolverSpec:
    """A registered solver: name, one-line summary, options dataclass, factory and context defaults."""

    name: str
    summary: str
    options_type: type
    factory: Callable[[Any, SolverContext], Chain]
    context_defaults_fn: ContextDefaults | None = None
    search_space: str = "real"

    def option_names(self) -> list[str]:
        """Names of the solver's options."""
        return [f.name for f in dataclasses.fields(self.options_type)]

    def accepts(self, option: str) -> bool:
        """Whether the solver has an option called ``option``."""
        return option in self.option_names()

    def context_defaults(self, context: SolverContext) -> dict[str, Any]:
        """The options this solver takes in ``context`` before the caller's overrides.

        :func:`generic_defaults` for the options the solver has, then what the solver declared for the context.
        """
        out = {k: v for k, v in generic_defaults(context).items() if self.accepts(k)}
        if self.context_defaults_fn is not None:
            out.update(self.context_defaults_fn(context))
        return out

    def defaults(self, context: SolverContext | None = None) -> dict[str, Any]:
        """Every option with its default value (in ``context``, when given)."""
        out = {}
        for f in dataclasses.fields(self.options_type):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        if context is not None:
            out.update(self.context_defaults(context))
        return out

    def resolve(self, context: SolverContext, **overrides: Any) -> dict[str, Any]:
        """The context's defaults with the caller's ``overrides`` on top (options not named keep their default)."""
        return {**self.context_defaults(context), **overrides}

    def options(self, **given: Any) -> Any:
        """Build the options object, with an error that lists valid names for an unknown one."""
        valid = self.option_names()
        for key in given:
            if key not in valid:
                close = difflib.get_close_matches(key, valid, n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise TypeError(f"solver {self.name!r} has no option {key!r}.{hint} Its options: {valid}")
        opts = self.options_type(**given)
        validate = getattr(opts, "validate", None)
        if callable(validate):
            validate()
        return opts

    def refusal(self, context: SolverContext) -> str | None:
        """Why the solver refuses to build for ``context`` with its defaults (its error's message), or ``None``
        where it builds — a model-based solver refuses iterates on the unit sphere, say."""
        try:
            self.build(context)
        except ValueError as err:
            return str(err)
        return None

    def build(self, context: SolverContext, **overrides: Any) -> Chain:
        """The solver for ``context``: its context defaults, then ``overrides``, validated."""
        return self.factory(self.options(**self.resolve(context, **overrides)), context)

    def describe(self, context: SolverContext | None = None, **overrides: Any) -> str:
        """The chain of parts this solver runs in ``context`` (default: a plain objective of dimension 10), stage
        by stage with each part's settings, as :meth:`build` makes it."""
        context = SolverContext(dim=10) if context is None else context
        return self.build(context, **overrides).describe(context)


_REGISTRY: dict[str, SolverSpec] = {}


def register_solver(
    name: str, options_type: type, summary: str, *, defaults: ContextDefaults | None = None,
    search_space: str = "real",
) -> Callable[[Callable], Callable]:
    """Decorator registering ``factory(options, context) -> Chain`` under ``name``.

    Parameters
    ----------
    name
        The name users pass as ``solver=``.
    options_type
        A dataclass of the options with their defaults; an optional ``validate()`` method raises for bad values.
    summary
        One line for :func:`list_solvers`.
    defaults
        Optional ``defaults(context) -> dict``: the options the solver wants in a :class:`SolverContext`
        (e.g. a step scaled for unit-norm directions). Without it the solver still gets
        :func:`generic_defaults` for the options it has.
    search_space
        Where the iterates live: ``"real"`` (ℝᵈ, or the unit sphere in such a context) or one of
        :data:`SEARCH_SPACES`' others, such as ``"sign vectors"`` (``c·s`` for ``s`` in {±1}ᵈ, ``c`` fixed by the
        start: such a solver minimises over those points only).
    """
    if search_space not in SEARCH_SPACES:
        raise ValueError(f"search_space {search_space!r} is not one of {SEARCH_SPACES}")

    def deco(factory: Callable[[Any, SolverContext], Chain]) -> Callable:
        if name in _REGISTRY:
            raise ValueError(f"a solver named {name!r} is already registered")
        if not dataclasses.is_dataclass(options_type):
            raise TypeError(f"options_type of solver {name!r} must be a dataclass, got {options_type!r}")
        _REGISTRY[name] = SolverSpec(name, summary, options_type, factory, defaults, search_space)
        return factory

    return deco


def list_solvers() -> dict[str, SolverSpec]:
    """All registered solvers by name (a copy)."""
    return dict(_REGISTRY)


def get_solver(name: str) -> SolverSpec:
    """The spec registered under ``name``, with a helpful error for an unknown name.

    A name not registered is looked for in the plugins not loaded yet (``ZEROOPT_PLUGINS`` and the
    ``zeroopt.solvers`` entry points: :mod:`zeroopt.plugins`) before it is called unknown.
    """
    if not isinstance(name, str):
        raise TypeError(f"solver must be a name (str), got {type(name).__name__}; choose from {sorted(_REGISTRY)}")
    try:
        return _REGISTRY[name]
    except KeyError:
        import sys

        # The plugin loader (imported with zeroopt) is looked up, not imported: it imports this module.
        plugins = sys.modules.get(f"{__package__}.plugins")
        if plugins is not None and plugins.discover(name):
            return _REGISTRY[name]
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown solver {name!r}.{hint} Registered solvers: {sorted(_REGISTRY)} (a solver of "
                         "your own: zeroopt.load_plugin(MODULE) or --plugin MODULE)") from None


def make_solver(name: str, context: SolverContext, **options: Any) -> Chain:
    """Build the named solver for a problem described by ``context`` (its context defaults, then ``options``)."""
    return get_solver(name).build(context, **options)
