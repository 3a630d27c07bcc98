"""The solver registry: the one place that knows a solver — its options, its recipe in each context, its factory.

A built-in solver is a *recipe* (:func:`register_recipe`): a function ``recipe(context, **settings) -> Chain``
whose keyword-only arguments are its options, with their defaults in its signature, and whose body is the literal
:func:`~zeroopt.chain` of its parts. The flat view of those options (``solver_options=``, ``-o key=value`` on the
command lines, a campaign's ``[options]``) is the dataclass :func:`options_from` generates from the signature. A
solver may run another recipe, or the same one with a few arguments written out, in a given *context*: a
:class:`SolverContext` describes the problem by its mathematical traits (dimension, L₁, input shape, whether the
objective depends on a direction only so iterates live on the unit sphere, whether the oracle's precision can be
chosen per request); the solver's ``in_context(context) -> (recipe, arguments)``, in the recipe's own file,
says what runs there. Applications describe their problem and ask the registry; they never keep per-solver
tables of their own. A solver of your own may also be a factory with an options dataclass
(:func:`register_solver`).
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..core.base import SolverContext
from ..core.chain import Chain
from ..core.describe import describe_part
from ..core.stages import wrapped

__all__ = [
    "SEARCH_SPACES", "SolverSpec", "get_solver", "list_solvers", "make_solver", "options_from",
    "recipe_defaults", "register_recipe", "register_solver", "set_solver_discovery",
]

ContextDefaults = Callable[[SolverContext], Mapping[str, Any]]
#: A recipe: ``recipe(context, **settings) -> Chain``, its settings keyword-only with their defaults.
Recipe = Callable[..., Chain]
#: What a solver runs in a context: the recipe, and the arguments written out for it there.
InContext = Callable[[SolverContext], tuple[Recipe, Mapping[str, Any]]]
#: Where a registered solver's iterates live: ℝᵈ, or the scaled sign vectors of a discrete search.
SEARCH_SPACES = ("real", "sign vectors")


def _keyword_only(recipe: Callable[..., Chain]) -> list[inspect.Parameter]:
    return [p for p in inspect.signature(recipe).parameters.values() if p.kind is p.KEYWORD_ONLY]


def recipe_defaults(recipe: Callable[..., Chain]) -> dict[str, Any]:
    """``recipe``'s keyword-only arguments with their defaults: its settings as its signature writes them."""
    return {p.name: p.default for p in _keyword_only(recipe)}


def options_from(recipe: Callable[..., Chain], check: Callable[[Mapping[str, Any]], None] | None = None) -> type:
    """The frozen dataclass of ``recipe``'s keyword-only arguments, with their defaults: a recipe's options for
    the registry, written once (in its signature). With ``check``, its ``validate()`` hands the options to
    ``check`` (which raises for a bad value)."""
    params = _keyword_only(recipe)
    missing = [p.name for p in params if p.default is p.empty]
    if missing:
        raise TypeError(f"{recipe.__name__}: every keyword-only argument needs a default to be an option: {missing}")
    title = "".join(w.capitalize() for w in recipe.__name__.split("_"))
    namespace = {} if check is None else {"validate": lambda self: check(dataclasses.asdict(self))}
    return dataclasses.make_dataclass(f"{title}Options", [(p.name, p.annotation, dataclasses.field(default=p.default))
                                                         for p in params], frozen=True, namespace=namespace)


def _same(a: Any, b: Any) -> bool:
    return a is b or (type(a) is type(b) and a == b)


def _alternatives(value: Any, hint: Any) -> list[Any]:
    """Other values of an option, to see which parts it sets (:meth:`SolverSpec.setters`): the other members of a
    ``Literal``, the other truth value, a number doubled, halved or plus one, a value for ``None``."""
    args = typing.get_args(hint)
    literals = [a for h in (hint, *args) if typing.get_origin(h) is typing.Literal for a in typing.get_args(h)]
    if isinstance(value, bool) or (bool in args and value is not None):
        out: list[Any] = [b for b in (True, False) if not _same(b, value)]
    elif isinstance(value, int):
        out = [value + 1]
    elif isinstance(value, float):
        out = [value * 2, value / 2]
    elif value is None:
        out = [True] if bool in args else [2] if int in args else [0.5] if float in args else []
    else:
        out = []
    return [*out, *(a for a in literals if not _same(a, value))]


@dataclass(frozen=True)
class SolverSpec:
    """A registered solver: name, one-line summary, options dataclass, factory and what it runs in a context —
    a recipe's (``recipe``, ``in_context``) or a factory's ``context_defaults_fn``."""

    name: str
    summary: str
    options_type: type
    factory: Callable[[Any, SolverContext], Chain]
    context_defaults_fn: ContextDefaults | None = None
    search_space: str = "real"
    recipe: Recipe | None = None
    in_context: InContext | None = None

    def option_names(self) -> list[str]:
        """Names of the solver's options."""
        return [f.name for f in dataclasses.fields(self.options_type)]

    def accepts(self, option: str) -> bool:
        """Whether the solver has an option called ``option``."""
        return option in self.option_names()

    def recipe_for(self, context: SolverContext) -> tuple[Recipe, dict[str, Any]]:
        """The recipe this solver runs in ``context`` and the arguments written out for it there."""
        if self.recipe is None:
            raise TypeError(f"solver {self.name!r} is a factory, not a recipe")
        chosen, arguments = (self.recipe, {}) if self.in_context is None else self.in_context(context)
        return chosen, dict(arguments)

    def context_defaults(self, context: SolverContext) -> dict[str, Any]:
        """The options whose value in ``context`` is not the option's own default: for a recipe, what its recipe
        there (its signature's defaults and the arguments written out for it) sets otherwise; for a factory,
        what it declared for the context."""
        if self.recipe is None:
            return {} if self.context_defaults_fn is None else dict(self.context_defaults_fn(context))
        chosen, arguments = self.recipe_for(context)
        own = recipe_defaults(self.recipe)
        return {k: v for k, v in {**recipe_defaults(chosen), **arguments}.items() if k not in own
                or not _same(v, own[k])}

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

    def setters(self, context: SolverContext, **overrides: Any) -> tuple[tuple[str, ...], ...]:
        """For each part of :meth:`build`'s chain, the options that set it: those whose other values (another
        member of its ``Literal``, the other truth value, a number doubled or halved, ...) change that part or
        leave it out. Read off the solver itself, so a recipe whose body is a literal chain declares nothing."""
        def shown(chain: Chain) -> list[tuple[type, str]]:
            return [(type(p), describe_part(wrapped(p))) for p in chain.parts]

        base = shown(self.build(context, **overrides))
        given = self.defaults(context) | overrides
        try:  # the options' annotations, resolved where the solver is written
            module = sys.modules.get((self.recipe or self.factory).__module__)
            hints = typing.get_type_hints(self.recipe or self.options_type, vars(module) if module else None)
        except Exception:  # an annotation that does not resolve: numbers, flags and None still get their others
            hints = {}
        setters: list[list[str]] = [[] for _ in base]
        for name, value in given.items():
            for other in _alternatives(value, hints.get(name)):
                try:
                    changed = shown(self.build(context, **{**overrides, name: other}))
                except (TypeError, ValueError):
                    continue
                matcher = difflib.SequenceMatcher(a=base, b=changed, autojunk=False)
                for tag, i1, i2, _, _ in matcher.get_opcodes():
                    for k in range(i1, i2) if tag in ("replace", "delete") else ():
                        if name not in setters[k]:
                            setters[k].append(name)
        return tuple(tuple(names) for names in setters)

    def describe(self, context: SolverContext | None = None, **overrides: Any) -> str:
        """The chain of parts this solver runs in ``context`` (default: a plain objective of dimension 10), stage
        by stage with each part's settings and, after ``<-``, the options that set it (:meth:`setters`)."""
        context = SolverContext(dim=10) if context is None else context
        built = self.build(context, **overrides)
        if not built.options:
            built = dataclasses.replace(built, options=self.setters(context, **overrides))
        return built.describe(context)


_REGISTRY: dict[str, SolverSpec] = {}
#: What :func:`get_solver` asks about a name not registered (:func:`set_solver_discovery`).
_DISCOVERY: dict[str, Callable[[str], bool] | None] = {"hook": None}


def set_solver_discovery(discover: Callable[[str], bool] | None) -> None:
    """Set what :func:`get_solver` calls with a name not registered, before it calls the name unknown.

    :mod:`zeroopt.recipes.plugins` sets its ``discover`` here when it is imported, so a solver of a plugin named by
    ``ZEROOPT_PLUGINS`` or an entry point is found by name.

    Parameters
    ----------
    discover : callable or None
        ``discover(name) -> bool``: loads what may register ``name`` and says whether it is registered now;
        ``None`` looks nowhere else.
    """
    _DISCOVERY["hook"] = discover


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
        (e.g. a step scaled for unit-norm directions); without it, the options' own defaults everywhere.
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


def register_recipe(
    name: str, recipe: Recipe, summary: str, *, in_context: InContext | None = None,
    check: Callable[[Mapping[str, Any]], None] | None = None, search_space: str = "real",
) -> Recipe:
    """Register ``recipe(context, **settings) -> Chain`` under ``name``; returns the recipe.

    Parameters
    ----------
    name
        The name users pass as ``solver=``.
    recipe
        The recipe: its keyword-only arguments are the solver's options (:func:`options_from`), and every recipe
        ``in_context`` names has the same ones.
    summary
        One line for :func:`list_solvers`.
    in_context
        Optional ``in_context(context) -> (recipe, arguments)``: the recipe the solver runs in a
        :class:`SolverContext` and the arguments written out for it there; without it, ``recipe`` with its own
        defaults everywhere.
    check
        Optional ``check(options)``, run by the options' ``validate()`` before anything is built.
    search_space
        As for :func:`register_solver`.
    """
    if search_space not in SEARCH_SPACES:
        raise ValueError(f"search_space {search_space!r} is not one of {SEARCH_SPACES}")
    if name in _REGISTRY:
        raise ValueError(f"a solver named {name!r} is already registered")
    options_type = options_from(recipe, check)

    def factory(opts: Any, context: SolverContext) -> Chain:
        return _REGISTRY[name].recipe_for(context)[0](context, **dataclasses.asdict(opts))

    _REGISTRY[name] = SolverSpec(name, summary, options_type, factory, None, search_space, recipe, in_context)
    return recipe


def list_solvers() -> dict[str, SolverSpec]:
    """All registered solvers by name (a copy)."""
    return dict(_REGISTRY)


def get_solver(name: str) -> SolverSpec:
    """The spec registered under ``name``, with a helpful error for an unknown name.

    A name not registered is looked for in the plugins not loaded yet (``ZEROOPT_PLUGINS`` and the
    ``zeroopt.solvers`` entry points: :mod:`zeroopt.recipes.plugins`, through :func:`set_solver_discovery`) before it
    is called unknown.
    """
    if not isinstance(name, str):
        raise TypeError(f"solver must be a name (str), got {type(name).__name__}; choose from {sorted(_REGISTRY)}")
    try:
        return _REGISTRY[name]
    except KeyError:
        discover = _DISCOVERY["hook"]
        if discover is not None and discover(name):
            return _REGISTRY[name]
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"unknown solver {name!r}.{hint} Registered solvers: {sorted(_REGISTRY)} (a solver of "
                         "your own: zeroopt.load_plugin(MODULE) or --plugin MODULE)") from None


def make_solver(name: str, context: SolverContext, **options: Any) -> Chain:
    """Build the named solver for a problem described by ``context`` (its context defaults, then ``options``)."""
    return get_solver(name).build(context, **options)
