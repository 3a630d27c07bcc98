"""The bundle of the attack's pieces, the flat names of their settings, and the checks of what the caller passed.

:class:`AttackConfig` holds one of each piece of :mod:`.pieces`; :func:`attack_keywords` maps a flat mapping of
settings (a campaign's ``[options]`` table, a benchmark's option dict) onto pieces and the solver's options;
:func:`misplaced_keywords` says, for a keyword :func:`~applications.hardlabel.attack` does not take, which
piece it belongs to.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

import zeroopt
from zeroopt.core.checks import check_budget, check_seed
from zeroopt.core.constants import PAPER_BETA, REFERENCE_EPS_PER_BETA
from zeroopt.recipes.sign_flips import RELATIVE_EPS as SIGN_FLIPS_RELATIVE_EPS

from .boundary import PAPER_LOCAL_GROWTH
from .bounds import check_inside, flat_bounds
from .distance import LINF, as_distance
from .inputs import as_batch
from .pieces import BoundarySearch, ModelOptions, Polish, Race, Runs, Start, Verify, field_names

__all__ = [
    "CHEAP_START", "DEFAULT_LINF_SOLVER", "DEFAULT_SOLVER", "LINF_LAYOUT", "LINF_START", "LINF_START_PRECISION",
    "N_INITIAL_DIRECTIONS", "REFERENCE_START", "SETTINGS", "AttackConfig",
    "attack_keywords", "attack_solvers", "boundary_context", "check_inputs", "check_solver_options", "default_solver",
    "default_solver_options", "default_start", "start_for",
    "explains_misplaced_keywords",
    "initial_precision", "limit_blas", "misplaced_keywords", "numpy_blas_paths", "seeds_for",
]

#: The attack's default solver ("rgf" is the paper's); why: docs/attack.md.
DEFAULT_SOLVER = "sign-growing"
#: The L∞ attack's default: a search over sign vectors, the vertex directions where an L∞ radius is smallest
#: (docs/attack.md).
DEFAULT_LINF_SOLVER = "sign-flips"
#: The reference code's initial search: 100 random directions (untargeted) or target examples (targeted).
N_INITIAL_DIRECTIONS = 100


#: The L∞ attack's start: the all-ones vertex (RayS's), and one random direction only where that ray meets no
#: boundary. Any ray meets an L∞ boundary near the box's corner, so more random directions buy little; the
#: all-ones one is a sign vector already, whose flips the sign search takes from its first round.
LINF_START = Start(n_initial=1, all_ones_first=True)
#: The L∞ default's blocks (``sign-flips``' ``layout``) by goal: ranges of the flat vector after the untargeted
#: all-ones start, as RayS forms them; square image tiles after a targeted start at the vertex toward a target
#: example (why: docs/attack.md).
LINF_LAYOUT: Mapping[str, str] = MappingProxyType({"untargeted": "memory", "targeted": "tiles"})
#: An L∞ start's distance is searched to the sign search's own relative precision at its first round, no finer: its
#: first comparisons are that coarse (:func:`start_for`).
LINF_START_PRECISION = SIGN_FLIPS_RELATIVE_EPS


def default_solver(norm: Any) -> str:
    """The solver an attack in ``norm`` (a norm's spelling or a :class:`~.distance.Distance`) runs when none is
    named: :data:`DEFAULT_LINF_SOLVER` for L∞, :data:`DEFAULT_SOLVER` otherwise."""
    return DEFAULT_LINF_SOLVER if as_distance(norm) == LINF else DEFAULT_SOLVER


def default_start(norm: Any) -> Start:
    """The start an attack in ``norm`` takes when none is given: :data:`LINF_START` for L∞, ``Start()``
    otherwise."""
    return LINF_START if as_distance(norm) == LINF else Start()


def default_solver_options(norm: Any, solver: str, targeted: bool, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with what the attack's default in ``norm`` sets and they leave out: the L∞ default solver's
    ``layout`` for the goal (:data:`LINF_LAYOUT`); anything else as given."""
    if as_distance(norm) != LINF or solver != DEFAULT_LINF_SOLVER or "layout" in options:
        return dict(options)
    return {**options, "layout": LINF_LAYOUT["targeted" if targeted else "untargeted"]}


def start_for(start: Start, norm: Any) -> Start:
    """``start`` with its relative precision, where it leaves it to the distance, filled in for ``norm``:
    :data:`LINF_START_PRECISION` in L∞, 0 (the attack's ε alone) otherwise. Anything else is returned as it is,
    for the pieces' own check to refuse."""
    if not isinstance(start, Start) or start.relative_precision is not None:
        return start
    return replace(start, relative_precision=LINF_START_PRECISION if as_distance(norm) == LINF else 0.0)


@dataclass(frozen=True)
class AttackConfig:
    """One of each of the attack's pieces; a piece left out takes its own defaults.

    ``attack(model, x0, y0, **config.keywords())`` runs the attack with them.

    Parameters
    ----------
    start : Start
        The initial search.
    race : Race
        The race between independent starts.
    boundary_search : BoundarySearch
        The search for g(θ) along a ray.
    runs : Runs
        The solver runs and their restarts.
    polish : Polish
        The pruning pass before each budget ends.
    verify : Verify
        The final verification.
    model_options : ModelOptions
        How the model is wrapped as a label oracle.
    """

    start: Start = field(default_factory=Start)
    race: Race = field(default_factory=Race)
    boundary_search: BoundarySearch = field(default_factory=BoundarySearch)
    runs: Runs = field(default_factory=Runs)
    polish: Polish = field(default_factory=Polish)
    verify: Verify = field(default_factory=Verify)
    model_options: ModelOptions = field(default_factory=ModelOptions)

    def __post_init__(self) -> None:
        for name, piece in PIECES.items():
            value = getattr(self, name)
            if not isinstance(value, piece):
                flat = next((k for k, (kw, _) in SETTINGS.items() if kw == name and k == name), None)
                example = (f"{name}={piece.__name__}({SETTINGS[flat][1]}={value!r})" if flat is not None
                           else f"{name}={piece.__name__}(...)")
                raise TypeError(f"{name} takes a {piece.__name__}: pass {example}, got {value!r}")

    @classmethod
    def of(cls, **pieces: Any) -> AttackConfig:
        """The bundle of the pieces given (``None``: that piece's defaults)."""
        return cls(**{name: value for name, value in pieces.items() if value is not None})

    def keywords(self) -> dict[str, Any]:
        """The pieces as :func:`~applications.hardlabel.attack`'s keywords."""
        return {name: getattr(self, name) for name in PIECES}

    def settings(self, *names: str) -> dict[str, Any]:
        """The named settings by their flat names (:data:`SETTINGS`), in the order given."""
        return {name: getattr(getattr(self, SETTINGS[name][0]), SETTINGS[name][1]) for name in names}

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any]) -> tuple[AttackConfig, dict[str, Any]]:
        """``(the pieces with the flat settings among settings, the rest)``: the rest is the solver's options."""
        grouped: dict[str, dict[str, Any]] = {}
        for name, value in settings.items():
            if name in SETTINGS:
                keyword, attr = SETTINGS[name]
                grouped.setdefault(keyword, {})[attr] = value
        config = cls(**{kw: PIECES[kw](**attrs) for kw, attrs in grouped.items()})
        return config, {k: v for k, v in settings.items() if k not in SETTINGS}


#: Each piece by its keyword of :func:`~applications.hardlabel.attack` (the class name in snake case).
PIECES: dict[str, type] = {f.name: f.default_factory for f in fields(AttackConfig)}  # type: ignore[misc]
#: What each piece is, in the messages that point a flat keyword to it.
ROLES = {"start": "the start", "race": "the race between starts", "boundary_search": "the boundary search",
         "runs": "the solver runs", "polish": "the polish", "verify": "the final verification",
         "model_options": "the model adapter"}
#: Each setting's flat name → ``(keyword of its piece, its field there)``: a field's own name, but the final
#: verification's count, which keeps the name ``verify``.
SETTINGS: dict[str, tuple[str, str]] = {
    ("verify" if piece is Verify else name): (keyword, name)
    for keyword, piece in PIECES.items() for name in field_names(piece)
}

# The reference code's start and search, for reproducing the paper: 100 Gaussian directions, every adversarial
# one bisected, Algorithm 1's fixed widening ratio, one search and no pruning at the end.
REFERENCE_START: Mapping[str, Any] = MappingProxyType({
    "start": Start(n_initial=N_INITIAL_DIRECTIONS, initial_directions="gaussian", initial_selection="bisect-all"),
    "boundary_search": BoundarySearch(local_growth=PAPER_LOCAL_GROWTH),
    "race": Race(race_starts=1),
    "polish": Polish(prune=False),
})
#: The cheap start, the default: the pieces of the start and the race as they are by default.
CHEAP_START: Mapping[str, Any] = MappingProxyType({"start": Start(), "race": Race()})


def attack_keywords(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of :func:`~applications.hardlabel.attack` for a flat mapping of settings.

    Parameters
    ----------
    settings
        Setting names (:data:`SETTINGS`: ``n_initial``, ``race_starts``, ``prune``, ``verify``, ...) and the
        solver's options (``q``, ``beta``, ...) in one mapping, as a campaign's ``[options]`` table holds them.

    Returns
    -------
    dict
        Every piece (the settings applied to their own) and ``solver_options``: ``attack(..., **keywords)``.
    """
    config, rest = AttackConfig.from_settings(settings)
    return {**config.keywords(), "solver_options": rest}


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 and "\n" not in text else "..."


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def misplaced_keywords(stray: Mapping[str, Any], solver: Any, own: Iterable[str] = ()) -> str:
    """The message for keywords :func:`~applications.hardlabel.attack` does not take.

    Parameters
    ----------
    stray
        The keywords, with their values.
    solver
        The attack's solver, whose options are named as such.
    own
        The attack's own keywords (for the near-miss hint).
    """
    try:
        spec: Any = zeroopt.get_solver(solver)
    except (ValueError, TypeError):
        spec = None
    by_piece: dict[str, dict[str, Any]] = {}
    options: dict[str, Any] = {}
    others: list[str] = []
    for name, value in stray.items():
        if name in SETTINGS and name not in own:
            by_piece.setdefault(SETTINGS[name][0], {})[name] = value
        elif name == "config":
            others.append("config is no keyword of attack(): pass an AttackConfig's pieces, "
                          "attack(..., **config.keywords())")
        elif spec is not None and spec.accepts(name):
            options[name] = value
        else:
            known = [*own, *SETTINGS, *(spec.option_names() if spec is not None else ())]
            close = difflib.get_close_matches(name, known, n=1)
            others.append(f"attack() has no keyword {name!r} and solver {solver!r} has no option {name!r}"
                          + (f" (did you mean {close[0]!r}?)" if close else ""))
    parts = []
    for keyword, given in by_piece.items():
        piece = PIECES[keyword].__name__
        args = ", ".join(f"{SETTINGS[k][1]}={_show(v)}" for k, v in given.items())
        verb = "belongs" if len(given) == 1 else "belong"
        parts.append(f"{_names(list(given))} {verb} to {ROLES[keyword]}: pass {keyword}={piece}({args})")
    if options:
        what = f"is an option of solver {solver!r}" if len(options) == 1 else f"are options of solver {solver!r}"
        shown = ", ".join(f"{k!r}: {_show(v)}" for k, v in options.items())
        parts.append(f"{_names(list(options))} {what}: pass solver_options={{{shown}}}")
    return "; ".join(parts + others)


F = TypeVar("F", bound=Callable[..., Any])


def explains_misplaced_keywords(fn: F) -> F:
    """``fn`` raising a ``TypeError`` that names the piece, or the solver option, of a keyword it does not take."""
    own = tuple(inspect.signature(fn).parameters)

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        stray = {k: v for k, v in kwargs.items() if k not in own}
        if stray:
            solver = kwargs.get("solver") or default_solver(kwargs.get("distance") or kwargs.get("norm", 2))
            raise TypeError(misplaced_keywords(stray, solver, own))
        return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def check_solver_options(solver_options: Mapping[str, Any] | None, solver: str) -> dict[str, Any]:
    """The solver's options as a dict; a ``TypeError`` for one that is a piece's setting or not a mapping."""
    if solver_options is None:
        return {}
    if not isinstance(solver_options, Mapping) or not all(isinstance(k, str) for k in solver_options):
        raise TypeError(f"solver_options must be a mapping of option names to values, e.g. {{'q': 10}}, "
                        f"got {solver_options!r}")
    settings = {k: v for k, v in solver_options.items() if k in SETTINGS}
    if settings:
        raise TypeError(misplaced_keywords(settings, solver) + " (not in solver_options)")
    return dict(solver_options)


def check_inputs(x0: ArrayLike, budget: Any, solver: str, bounds: Any) -> tuple[NDArray, NDArray, NDArray]:
    """Validate the common arguments before anything is queried; return ``(x, lo, hi)``.

    ``bounds`` are scalars or arrays broadcastable to one input's shape; ``lo`` and ``hi`` come back flat.
    """
    check_budget(budget)  # the same TypeError / ValueError as zeroopt.minimize
    zeroopt.get_solver(solver)  # unknown names fail here, before any query
    x = as_batch(x0, "x0")
    if x.ndim < 2:
        raise ValueError(f"x0 must be batch first, shape (N, *input_shape); got shape {x.shape}. Use x0[None]")
    if x.shape[0] == 0:
        raise ValueError(f"x0 holds no inputs (shape {x.shape}); pass at least one input to attack")
    if not np.all(np.isfinite(x)):
        raise ValueError("x0 contains NaN or inf")
    lo, hi = flat_bounds(bounds, x.shape[1:])  # scalars or per-feature arrays -> two flat arrays
    check_inside(x, lo, hi)
    return x, lo, hi


def boundary_context(shape: tuple[int, ...], preset: str, piecewise_constant: bool = False) -> zeroopt.SolverContext:
    """g(θ) described to the solver registry: it depends on θ's direction only (iterates on the unit
    sphere), it is a radius (the distance from x0 along θ to the adversarial region, so one query at radius r
    tells whether g(θ) < r), and its oracle's precision is chosen per request (a binary search's tolerance).

    An input that is one flat vector is taken for tabular features, whose order carries no smoothness: it
    is described without an array shape, so shape-aware samplers ("low-frequency", "multi-scale") draw from
    the whole sphere instead of smoothing across neighbouring features (what that measured: docs/attack.md).
    ``piecewise_constant``: g of a tree ensemble.
    """
    dim = int(np.prod(shape))
    array_shape = tuple(shape) if len(shape) > 1 else None
    return zeroopt.SolverContext(dim=dim, shape=array_shape, unit_sphere=True, adjustable_precision=True,
                                 constants=preset, radial=True, piecewise_constant=piecewise_constant)


def attack_solvers(shape: tuple[int, ...] = (16,)) -> list[str]:
    """The registered solvers that take g(θ) of an input of ``shape`` (the others refuse its context with a clear
    error: :meth:`zeroopt.recipes.registry.SolverSpec.refusal`), in registry order."""
    context = boundary_context(shape, Runs().preset)
    return [name for name, spec in zeroopt.list_solvers().items() if spec.refusal(context) is None]


def initial_precision(options: dict[str, Any]) -> float:
    """ε of the initial search and of requests without one: ``eps``, else ``eps_per_beta · beta``.

    Read from the options the registry resolved (context defaults and the caller's), falling back to the
    reference code's β/500 at the paper's β for a solver that sets neither.
    """
    return options.get("eps") or options.get("eps_per_beta", REFERENCE_EPS_PER_BETA) * options.get("beta", PAPER_BETA)


def seeds_for(seed: int | Sequence[int] | None, n: int) -> list[Any]:
    """One seed per input: the same for all (an int, or one fresh entropy draw), or the caller's N seeds."""
    if seed is None:
        # One fresh entropy draw, shared by the inputs so that batched and single runs stay comparable.
        return [np.random.SeedSequence().entropy] * n
    if not isinstance(seed, Iterable) or isinstance(seed, (str, bytes)):
        return [check_seed(seed)] * n
    seeds = list(seed)
    if len(seeds) != n:
        raise ValueError(f"seed must be an int or one seed per input ({n}), got {len(seeds)} seeds")
    return [check_seed(s, f"seed[{i}]") for i, s in enumerate(seeds)]


#: Folders that hold numpy's and scipy's own BLAS in their wheels (``numpy.libs``, ``scipy_openblas64``, ...).
_NUMPY_SCIPY_DIRS = ("numpy", "numpy.libs", "scipy", "scipy.libs", "scipy_openblas32", "scipy_openblas64")


def numpy_blas_paths(controller: Any = None) -> list[str]:
    """The files of the loaded BLAS libraries that numpy and scipy ship in their own folders — not a model's:
    torch's threads are its own business (``torch.set_num_threads``). A BLAS shared with other packages (a conda
    environment's) is not among them. ``controller``: a ``threadpoolctl.ThreadpoolController`` already made (it
    scans the loaded libraries when made); default: a new one."""
    from threadpoolctl import ThreadpoolController  # the maintained way to see and cap OpenBLAS / MKL threads

    return [str(p["filepath"]) for p in (controller or ThreadpoolController()).info()
            if p["user_api"] == "blas" and any(part in _NUMPY_SCIPY_DIRS for part in Path(p["filepath"]).parts)]


def limit_blas(threads: int | None) -> Callable[[], None]:
    """Limit numpy's and scipy's BLAS (:func:`numpy_blas_paths`) to ``threads`` now; return what restores them."""
    if threads is None:
        return lambda: None
    from threadpoolctl import ThreadpoolController

    controller = ThreadpoolController()  # one scan of the loaded libraries serves both the lookup and the limit
    paths = numpy_blas_paths(controller)
    if not paths:
        return lambda: None
    return controller.limit(limits={path: int(threads) for path in paths}).restore_original_limits


def progress_bar(enabled: bool, total: int):  # type: ignore[no-untyped-def]
    """A tqdm bar over ``total`` queries, or None."""
    if not enabled:
        return None
    from tqdm.auto import tqdm  # tqdm: a maintained progress bar that handles terminals and notebooks

    return tqdm(total=total, unit="query", desc="hard-label attack", smoothing=0.1)
