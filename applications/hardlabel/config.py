"""What configures each part of the attack, and the checks of what the caller passed.

:class:`AttackConfig` groups the parameters of the attack's parts (model adapter, initial search, boundary
search, solver runs, final check); :meth:`AttackConfig.split` separates them from the solver's own options
in the keywords :func:`~applications.hardlabel.attack` receives, so every keyword still works.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import zeroopt
from zeroopt.checks import check_budget, check_max_iter, check_seed
from zeroopt.descent import PAPER_BETA, PRESETS, REFERENCE_EPS_PER_BETA

from .boundary import GALLOPING_GROWTH, PAPER_LOCAL_GROWTH, PAPER_LOCAL_RATIO
from .bounds import check_inside, flat_bounds
from .initial import SELECTIONS
from .inputs import as_batch

__all__ = [
    "BLAS_THREADS", "CHEAP_START", "DEFAULT_SOLVER", "RACE_AUTO", "RACE_KEEPS_STATE", "RACE_UNTARGETED",
    "REFERENCE_START",
    "AttackConfig",
    "boundary_context",
    "check_inputs", "initial_precision", "limit_blas", "numpy_blas_paths", "seeds_for",
]

N_INITIAL_DIRECTIONS = 100  # reference code: 100 random directions (untargeted) / target examples (targeted)
# The cheap start (the default): 30 low-frequency candidates, each asked once just below the best distance so
# far (the record search, applications/hardlabel/record.py), only the winner bisected — 52-65 queries, where
# the knock-out tournament ("tournament") took 82-130 and the reference code 300-400 (benchmarks/results/
# ablation/record-start/: per input 7-33% lower at 250 queries on both CNNs, level from 4k). The
# "multi-scale" mixture (low-frequency bands and the full space) is better on the CIFAR ResNet up to 1k queries
# but far worse on a tree ensemble over MNIST pixels (benchmarks/results/ablation/suite_tags.md): not the default.
# Neither are uniform candidates (n_uniform, HopSkipJump's start: far better on both CNNs at 250-500 queries, worse
# on MNIST from 1k and on GBDT MNIST) nor the race between families (race_iterations: wins on GBDT MNIST, loses on
# both CNNs) — benchmarks/results/ablation/race/. At large budgets the attack races several such searches for a
# share of the budget (zeroopt.race_plan's starts): g has many basins, and which one a single start lands in is a
# lottery that moves a 20-input median by several percent from seed to seed. The race takes bad basins away while
# the typical input pays a little for the losers' queries — more the larger d, as a start's early L2 tells less of
# its end (zeroopt.RACE_MIN_SHARE_DIM). race_starts="auto" (RACE_AUTO, the default): an untargeted attack, whose
# basins are the other classes, races by the budget alone (from ~6.7k queries): MNIST mean L2 at 20k 1.068 -> 1.047
# (C&W 1.003), GBDT MNIST 0.87 per input at 32.2k (benchmarks/results/ablation/race-untargeted/), and on 30 CIFAR-10
# inputs at 14k the race's median 0.0557 against 0.0621 without it, though 1.4% higher per input
# (ablation/race-dimension/batched-30/); a targeted attack races with each start's share grown with d (MNIST from
# ~6.7k, CIFAR-10 from ~26k): MNIST targeted means 1.7-3.2% lower at 14k-20k, per input 1.000-1.013, where on
# CIFAR-10 the race cost 1.7-3.5% per input at 8k-20k and raised its means (ablation/race-starts/, race-dimension/).
RACE_UNTARGETED = "untargeted"
RACE_AUTO = "auto"
CHEAP_START: dict[str, Any] = {
    "initial_directions": "low-frequency", "initial_selection": "record", "n_initial": 30, "n_uniform": 0,
    "race_iterations": 0, "race_starts": RACE_AUTO,
}
# The reference code's start and search, for reproducing the paper: 100 Gaussian directions, every adversarial
# one bisected, Algorithm 1's fixed widening ratio, and no pruning at the end.
REFERENCE_START: dict[str, Any] = {
    "initial_directions": "gaussian", "initial_selection": "bisect-all", "n_initial": N_INITIAL_DIRECTIONS,
    "local_growth": PAPER_LOCAL_GROWTH, "n_uniform": 0, "race_iterations": 0, "race_starts": 1, "prune": False,
}
#: The attack's default solver: the best composition in benchmarks/results/ablation ("rgf" is the paper's).
DEFAULT_SOLVER = "sign-growing"
# Largest chunk sent to the model at once ("auto"): it bounds peak memory whatever N·q is, and on a CPU a
# CNN runs ~40% faster per sample at batch 100-200 than at 1024 (activations stay in cache); a GPU wants more.
CPU_MODEL_BATCH = 256
GPU_MODEL_BATCH = 4096
# Prune each input's best perturbation about 100 queries before its budget ends (zeroopt.pruning): the coordinates
# the boundary does not need go back to x0's, one query per block of them (smallest first, each block 1% of the
# squared norm); on a smooth model the first refusals end the pass (8 queries) and the descent goes on.
PRUNE = True
# Whether the race's winner goes on with its run's state (step size, probe count, memory) rather than afresh
# from its point. Measured, not on: per input 0.996-0.999 on the untargeted CNN experiments at 8k-20k, 3% higher
# on GBDT MNIST at 11.9k, where a fresh run's cheap first steps serve better (benchmarks/results/ablation/race-state/).
RACE_KEEPS_STATE = False
# Whether the race between starts is a successive-halving one (zeroopt.race_plan(halving=True): twice the starts
# for the same queries, the worse half dropped after each of zeroopt.halving_rounds rounds).
RACE_HALVING = False
# Threads the numpy/scipy BLAS may use while the attack runs (None: as they are). The attack's own linear algebra
# is small (orthonormalising a few hundred probes of d values), and an idle OpenBLAS worker keeps spinning for a
# while after each call: on 2 cores it took a core from the model's forward pass. With 1, the default attack on 20
# MNIST images made 2119 / 2173 queries/s at 2k / 4k instead of 1776 / 1782, the model's share of the time 87-88%
# instead of 80-81% (benchmarks/results/hardlabel/mnist_speed.md and results README §1).
BLAS_THREADS = 1
MAX_RESTARTS = 10  # restarts of a run that converged with budget left (0: stop there, as the reference code)
VERIFY_QUERIES = 3  # final re-check of 2 slightly safer versions of the best point along its ray, then the point


def _is_real(value: Any) -> bool:
    """A real number (Python or NumPy), not a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


@dataclass(frozen=True)
class AttackConfig:
    """The parameters of the attack's parts (see :func:`~applications.hardlabel.attack` for each one).

    Attributes
    ----------
    preset
        The solver's published constants (``"paper"`` or ``"reference"``), asked of the solver registry.
    n_initial, initial_directions, initial_selection, target_examples, target_pool
        The initial search: how many candidate directions, which zeroopt sampler draws the untargeted ones
        (``"gaussian"`` is the reference code's), how the best is picked (``"record"``, ``"tournament"``,
        ``"halving-tournament"`` or the reference code's ``"bisect-all"``), and where targeted starts come from.
        :data:`REFERENCE_START` restores the reference code's start: ``attack(..., **REFERENCE_START)``.
    n_uniform, race_iterations
        Untargeted candidates toward uniform points of the input domain (a family of their own), and the
        iterations of the race between the families' winners (:func:`zeroopt.race`; 0: no race).
    race_starts, race_fraction
        Independent initial searches (each of ``n_initial`` new candidates) whose winners race until the input
        has spent ``race_fraction`` of its budget on the race (:func:`zeroopt.race` with ``queries=``); the
        lowest point goes on. ``None``: as many as :func:`zeroopt.race_plan` gives the budget and the input's
        dimension (on MNIST's 784 values 1, no race, below about 6.7k queries, 2 from there, 4 from 13.3k, 8 from
        26.7k; on CIFAR-10's 3072 none below about 26k); ``"untargeted"``: the budget's starts for untargeted
        attacks whatever the dimension and one search for targeted ones; ``"auto"`` (default): the budget's starts
        for untargeted attacks whatever the dimension, the budget's and the dimension's for targeted ones; 1: one
        search, no race.
    race_halving
        Whether the race between starts halves its field after each round (:func:`zeroopt.race` with
        :func:`zeroopt.halving_rounds` rounds), with twice the starts a plain race sized by the budget gets
        (:func:`zeroopt.race_plan` with ``halving=True``; :data:`RACE_HALVING`).
    race_keeps_state
        Whether the race's winner goes on with its run's state (:class:`zeroopt.RaceWinner`: its step size,
        iteration count — so its probe count keeps growing — and memory) or, by default, starts afresh from its
        point (:data:`RACE_KEEPS_STATE`).
    n_classes, batch_size
        The model adapter.
    blas_threads
        Threads numpy's and scipy's BLAS may use while the attack runs, restored afterwards (:data:`BLAS_THREADS`;
        ``None``: left as they are).
    local_ratio, local_growth
        The boundary search: Algorithm 1's ratio α, and the factor it grows by after each step away from
        the hint (default: galloping, ×2, which brackets a large change in a few queries; 1 is the paper's).
    max_iter, restarts, fresh_restarts
        The solver runs: a run that converged with budget left restarts (at most ``restarts`` times) from its
        best point while that pays, and — with ``fresh_restarts`` — from a new initial search once it does
        not (:func:`zeroopt.solve_many`): another basin of g, often another adversarial class.
    prune, polish_reserve
        Whether each input's best perturbation is pruned, and how many queries before its budget ends
        (:func:`zeroopt.pruning`, the polish of :func:`zeroopt.solve_many`; default
        :data:`zeroopt.POLISH_RESERVE`, 100).
    verify
        The final check.
    """

    preset: str = "paper"
    n_initial: int = CHEAP_START["n_initial"]
    initial_directions: str = CHEAP_START["initial_directions"]
    initial_selection: str = CHEAP_START["initial_selection"]
    n_uniform: int = CHEAP_START["n_uniform"]
    race_iterations: int = CHEAP_START["race_iterations"]
    race_starts: int | str | None = CHEAP_START["race_starts"]
    race_fraction: float = zeroopt.RACE_FRACTION
    race_keeps_state: bool = RACE_KEEPS_STATE
    race_halving: bool = RACE_HALVING
    target_examples: ArrayLike | None = None
    target_pool: tuple[ArrayLike, ArrayLike] | None = None
    n_classes: int | None = None
    local_ratio: float = PAPER_LOCAL_RATIO
    local_growth: float = GALLOPING_GROWTH
    max_iter: int | None = None
    verify: int = VERIFY_QUERIES
    restarts: int = MAX_RESTARTS
    fresh_restarts: bool = True
    prune: bool = PRUNE
    polish_reserve: int = zeroopt.POLISH_RESERVE
    batch_size: int | str | None = "auto"
    piecewise_constant: bool | None = None
    blas_threads: int | None = BLAS_THREADS

    @classmethod
    def split(cls, config: AttackConfig | None, options: dict[str, Any]) -> tuple[AttackConfig, dict[str, Any]]:
        """``(config with the keywords that name its fields applied, the rest: the solver's options)``."""
        names = {f.name for f in dataclasses.fields(cls)}
        mine = {k: v for k, v in options.items() if k in names}
        config = dataclasses.replace(config or cls(), **mine)
        config.check()
        return config, {k: v for k, v in options.items() if k not in names}

    def check(self) -> None:
        """Raise ``ValueError`` for a malformed value, before any query."""
        for name in ("verify", "restarts", "n_uniform", "race_iterations", "polish_reserve"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        k = self.race_starts
        if k is not None and k not in (RACE_UNTARGETED, RACE_AUTO) and (
                isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1):
            raise ValueError(f"race_starts must be a positive integer, None (sized by the budget and dimension) or "
                             f"{RACE_UNTARGETED!r} (sized by the budget for untargeted attacks only) or {RACE_AUTO!r} "
                             f"(that, and sized by budget and dimension for targeted ones), got {k!r}")
        if not _is_real(self.race_fraction) or not 0 < self.race_fraction < 1:
            raise ValueError(f"race_fraction must be a number in (0, 1), got {self.race_fraction!r}")
        if self.piecewise_constant is not None and not isinstance(self.piecewise_constant, (bool, np.bool_)):
            raise ValueError(f"piecewise_constant must be True, False or None (from the model), got "
                             f"{self.piecewise_constant!r}")
        for name in ("fresh_restarts", "prune", "race_keeps_state", "race_halving"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {getattr(self, name)!r}")
        t = self.blas_threads
        if t is not None and (isinstance(t, bool) or not isinstance(t, (int, np.integer)) or t < 1):
            raise ValueError(f"blas_threads must be a positive integer or None (leave the BLAS as it is), got {t!r}")
        b = self.batch_size
        if b != "auto" and b is not None and (isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b <= 0):
            raise ValueError(f"batch_size must be a positive integer, 'auto' or None, got {b!r}")
        self.check_search()

    def check_search(self) -> None:
        """The initial search's, boundary search's and runs' parameters (before any query, like the rest)."""
        n = self.n_initial
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
            raise ValueError(f"n_initial must be a positive integer, got {n!r}")
        r, g = self.local_ratio, self.local_growth
        if not _is_real(r) or not 0 < r < 1:
            raise ValueError(f"local_ratio must be a number in (0, 1), got {r!r}")
        if not _is_real(g) or not 1 <= g < math.inf:
            raise ValueError(f"local_growth must be a finite number >= 1 (1: the paper's fixed ratio), got {g!r}")
        if self.initial_selection not in SELECTIONS:
            raise ValueError(f"initial_selection must be one of {SELECTIONS}, got {self.initial_selection!r}")
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {sorted(PRESETS)}, got {self.preset!r}")
        check_max_iter(self.max_iter)

    def check_targets(self, tgt: NDArray[np.int64] | None, input_shape: tuple[int, ...]) -> None:
        """The examples a targeted attack starts from (or an untargeted one falls back on): their shapes, and
        for a targeted attack that every target class has some. Before any query."""
        dim = int(np.prod(input_shape))
        for name, arr in (("target_examples", self.target_examples),
                          ("target_pool x", None if self.target_pool is None else self.target_pool[0])):
            if arr is not None and (np.ndim(arr) < 1 or np.size(arr) % dim or np.size(arr) == 0):
                raise ValueError(f"{name} must hold inputs of shape {tuple(input_shape)}, got shape {np.shape(arr)}")
        if self.target_pool is not None:
            n_pool, n_labels = np.size(self.target_pool[0]) // dim, np.size(self.target_pool[1])
            if n_labels != n_pool:
                raise ValueError(f"target_pool=(x, y) needs one label per input: x has {n_pool}, y {n_labels}")
        if tgt is None:
            return
        if self.target_examples is None and self.target_pool is None:
            raise ValueError(
                "a targeted attack starts from examples of the target class: pass target_examples=(M, *input_shape) "
                "inputs, or target_pool=(x, y) to draw them from a dataset"
            )
        if self.target_examples is None and self.target_pool is not None:
            pool_y = np.asarray(self.target_pool[1])
            missing = sorted({int(t) for t in tgt} - {int(v) for v in pool_y.ravel()})
            if missing:
                raise ValueError(f"target_pool holds no example of target class(es) {missing}")

    def race_for(self, budget: int, *, targeted: bool = False, dim: int | None = None) -> tuple[int, int]:
        """``(starts, queries)``: the initial searches per input and the queries their race may spend, for an
        untargeted attack or (``targeted``) a targeted one on inputs of ``dim`` values (``race_starts=None``, and
        ``"auto"`` for a targeted attack, give each start more queries in more dimensions: :func:`zeroopt.race_plan`'s
        ``dim``)."""
        plan = partial(zeroopt.race_plan, int(budget), fraction=float(self.race_fraction),
                       halving=bool(self.race_halving))
        if self.race_starts is None:
            return plan(dim=dim)
        if self.race_starts == RACE_UNTARGETED:  # the budget alone, untargeted only
            return (1, 0) if targeted else plan()
        if self.race_starts == RACE_AUTO:  # the default: see RACE_AUTO's comment
            return plan(dim=dim) if targeted else plan()
        k = int(self.race_starts)
        return (k, int(self.race_fraction * budget)) if k > 1 else (1, 0)

    def model_batch(self, model: Any) -> int | None:
        """The batch size to wrap ``model`` with: ``"auto"`` is 4096 for a torch module on a GPU, else 256."""
        if self.batch_size != "auto":
            return self.batch_size  # type: ignore[return-value]
        params = getattr(model, "parameters", None)
        if callable(params):
            try:
                first = next(iter(params()))
            except (StopIteration, TypeError):
                return CPU_MODEL_BATCH
            if getattr(first, "is_cuda", False):
                return GPU_MODEL_BATCH
        return CPU_MODEL_BATCH

    def reserve(self, budget: int) -> int:
        """Queries per input kept for the final check (none when the budget is below 4 × verify)."""
        return int(self.verify) if budget >= 4 * self.verify else 0


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
    the whole sphere instead of smoothing across neighbouring features (on HIGGS the sphere start is the
    better one: benchmarks/results/ablation/suite_tags.md). ``piecewise_constant``: g of a tree ensemble.
    """
    dim = int(np.prod(shape))
    array_shape = tuple(shape) if len(shape) > 1 else None
    return zeroopt.SolverContext(dim=dim, shape=array_shape, unit_sphere=True, adjustable_precision=True,
                                 constants=preset, radial=True, piecewise_constant=piecewise_constant)


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
