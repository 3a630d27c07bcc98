"""The solver registry: swap a solver by name, list every solver with its options and defaults."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .solver import ComposedSolver

__all__ = ["SolverContext", "SolverSpec", "get_solver", "list_solvers", "make_solver", "register_solver"]


@dataclass(frozen=True)
class SolverContext:
    """What a solver factory may know about the problem: its dimension and, if known, its L₁."""

    dim: int
    lipschitz: float | None = None


@dataclass(frozen=True)
class SolverSpec:
    """A registered solver: name, one-line summary, options dataclass (with defaults) and factory."""

    name: str
    summary: str
    options_type: type
    factory: Callable[[Any, SolverContext], ComposedSolver]

    def defaults(self) -> dict[str, Any]:
        """Every option with its default value."""
        out = {}
        for f in dataclasses.fields(self.options_type):
            if f.default is not dataclasses.MISSING:
                out[f.name] = f.default
            elif f.default_factory is not dataclasses.MISSING:
                out[f.name] = f.default_factory()
        return out

    def options(self, **given: Any) -> Any:
        """Build the options object, with an error that lists valid names for an unknown one."""
        valid = [f.name for f in dataclasses.fields(self.options_type)]
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


_REGISTRY: dict[str, SolverSpec] = {}


def register_solver(name: str, options_type: type, summary: str) -> Callable[[Callable], Callable]:
    """Decorator registering ``factory(options, context) -> ComposedSolver`` under ``name``."""

    def deco(factory: Callable[[Any, SolverContext], ComposedSolver]) -> Callable:
        if name in _REGISTRY:
            raise ValueError(f"a solver named {name!r} is already registered")
        _REGISTRY[name] = SolverSpec(name=name, summary=summary, options_type=options_type, factory=factory)
        return factory

    return deco


def list_solvers() -> dict[str, SolverSpec]:
    """All registered solvers by name (a copy)."""
    return dict(_REGISTRY)


def get_solver(name: str) -> SolverSpec:
    """The spec registered under ``name``, with a helpful error for an unknown name."""
    if not isinstance(name, str):
        raise TypeError(f"solver must be a name (str), got {type(name).__name__}; choose from {sorted(_REGISTRY)}")
    try:
        return _REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown solver {name!r}.{hint} Registered solvers: {sorted(_REGISTRY)}") from None


def make_solver(name: str, context: SolverContext, **options: Any) -> ComposedSolver:
    """Build the named solver for a problem described by ``context``."""
    spec = get_solver(name)
    return spec.factory(spec.options(**options), context)
