"""The attack's pieces: one frozen dataclass of settings per part, each checking its own fields.

:func:`~applications.hardlabel.attack` is assembled from named pieces — a criterion (``target``), a distance
(``norm``), a :class:`Start`, a :class:`Race` between starts, a :class:`BoundarySearch`, the solver chain
(``solver`` and ``solver_options``) with its :class:`Runs`, a :class:`Polish` and a :class:`Verify` that runs
once for every attack — and :class:`ModelOptions` for the adapter that turns the model into a label oracle.
Each piece is passed whole, ``attack(..., start=Start(n_initial=50))``, and the defaults of its fields are the
attack's defaults: this module is the one place each is written. A setting's name is the same in its piece, in
a campaign's ``[options]`` table and in the benchmark pages (:mod:`.config` maps such flat names onto pieces).
What each setting does and what it measured: ``docs/attack.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from functools import partial
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

import zeroopt
from zeroopt.core.checks import check_max_iter
from zeroopt.core.constants import PRESETS
from zeroopt.running.racing import RACE_FRACTION
from zeroopt.running.restarts import POLISH_RESERVE
from zeroopt.sample.samplers import sampler_names

from .boundary import GALLOPING_GROWTH, PAPER_LOCAL_RATIO

__all__ = [
    "CPU_MODEL_BATCH", "GPU_MODEL_BATCH", "RACE_AUTO", "RACE_UNTARGETED", "SELECTIONS",
    "BoundarySearch", "ModelOptions", "Polish", "Race", "Runs", "Start", "Verify",
]

#: ``Race(race_starts=...)``: race the budget's starts for untargeted attacks only, whatever the dimension.
RACE_UNTARGETED = "untargeted"
#: ``Race(race_starts=...)``: the budget's starts for untargeted attacks, the budget's and dimension's for targeted.
RACE_AUTO = "auto"
#: ``ModelOptions(batch_size="auto")``: the largest chunk sent to a model at once on a CPU, and on a GPU.
CPU_MODEL_BATCH = 256
GPU_MODEL_BATCH = 4096
#: ``Start(initial_selection=...)``: how the initial search picks its best candidate (:func:`.initial.initial_search`).
SELECTIONS = ("tournament", "halving-tournament", "record", "bisect-all")


def _is_real(value: Any) -> bool:
    """A real number (Python or NumPy), not a bool."""
    return not isinstance(value, bool) and isinstance(value, (int, float, np.integer, np.floating))


def _is_int(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, np.integer))


def _need(ok: bool, piece: object, message: str) -> None:
    """Raise ``ValueError("<Piece>: <message>")`` unless ``ok``."""
    if not ok:
        raise ValueError(f"{type(piece).__name__}: {message}")


def _non_negative(piece: object, *names: str) -> None:
    for name in names:
        value = getattr(piece, name)
        _need(_is_int(value) and value >= 0, piece, f"{name} must be a non-negative integer, got {value!r}")


def _flags(piece: object, *names: str) -> None:
    for name in names:
        value = getattr(piece, name)
        _need(isinstance(value, (bool, np.bool_)), piece, f"{name} must be True or False, got {value!r}")


#: Where the attack may compute (:class:`ModelOptions`).
ARRAYS = ("auto", "numpy", "model")

@dataclass(frozen=True)
class Start:
    """The initial search: which directions θ0 the attack tries first, and how it picks the best.

    Parameters
    ----------
    n_initial : int
        Candidate directions per search (random untargeted, toward target-class examples targeted).
    initial_directions : str
        The zeroopt direction sampler that draws the untargeted candidates (``zeroopt.sample.samplers.sampler_names``:
        ``"low-frequency"``, ``"multi-scale"``, ``"gaussian"`` — the reference code's —, ...).
    initial_selection : str
        How the best candidate is picked: ``"record"`` (each asked once just below the best distance so far,
        the winner bisected), ``"tournament"``, ``"halving-tournament"``, ``"bisect-all"`` (the reference code's).
    n_uniform : int
        Untargeted candidates toward uniform random points of the input domain (HopSkipJump's start), searched
        as a family of their own; 0: none.
    target_examples : array_like, optional
        Targeted attacks: candidate inputs ``(M, *input_shape)``; those the model labels as the target are used.
    target_pool : tuple of array_like, optional
        A dataset ``(x, y)`` from which examples of each target class are drawn; for an untargeted attack the
        fallback of an input whose random directions all keep its label.
    relative_precision : float, optional
        The winner's distance is searched to the attack's ε, or to this share of itself where that is coarser
        (0: to ε). A solver that compares values relatively needs no more of the start than its own first
        precision. ``None``: the distance's default (:func:`~.config.start_for`: a tenth in L∞, 0 in L2).
    all_ones_first : bool
        Untargeted: the all-ones direction (RayS's start, the cube's vertex with every coordinate raised) is
        searched first, and the sampler's candidates only where it meets no boundary.
    """

    n_initial: int = 30
    initial_directions: str = "low-frequency"
    initial_selection: str = "record"
    n_uniform: int = 0
    target_examples: ArrayLike | None = None
    target_pool: tuple[ArrayLike, ArrayLike] | None = None
    relative_precision: float | None = None
    all_ones_first: bool = False

    def __post_init__(self) -> None:
        n = self.n_initial
        r = self.relative_precision
        _need(r is None or (_is_real(r) and 0 <= r < 1), self,
              f"relative_precision must be None or in [0, 1), got {r!r}")
        _need(_is_int(n) and n > 0, self, f"n_initial must be a positive integer, got {n!r}")
        _non_negative(self, "n_uniform")
        _flags(self, "all_ones_first")
        names = sampler_names()
        _need(self.initial_directions in names, self,
              f"initial_directions must be one of {names}, got {self.initial_directions!r}")
        _need(self.initial_selection in SELECTIONS, self,
              f"initial_selection must be one of {SELECTIONS}, got {self.initial_selection!r}")
        _need(self.target_pool is None or (isinstance(self.target_pool, tuple | list) and len(self.target_pool) == 2),
              self, "target_pool must be a pair (x, y) of inputs and their labels")

    def precision_of(self, value: float, eps: float) -> float:
        """The precision a start's winner of distance ``value`` was searched to, with the attack's ``eps``."""
        return max(eps, self.relative_precision * value) if self.relative_precision else eps  # None: as 0

    def check_targets(self, tgt: NDArray[np.int64] | None, input_shape: tuple[int, ...]) -> None:
        """Raise ``ValueError`` for examples of the wrong shape, or a target class without any (before any query)."""
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
                "a targeted attack starts from examples of the target class: pass start=Start(target_examples=...) "
                "with (M, *input_shape) inputs, or start=Start(target_pool=(x, y)) to draw them from a dataset"
            )
        if self.target_examples is None and self.target_pool is not None:
            pool_y = np.asarray(self.target_pool[1])
            missing = sorted({int(t) for t in tgt} - {int(v) for v in pool_y.ravel()})
            if missing:
                raise ValueError(f"target_pool holds no example of target class(es) {missing}")


@dataclass(frozen=True)
class Race:
    """The race between starts: independent initial searches whose winners descend in lockstep, the lowest going on.

    Parameters
    ----------
    race_iterations : int
        Solver iterations the best candidate of each family of a search (the sampler's, the uniform ones) runs
        before one is chosen (:func:`zeroopt.race`); 0: the lowest candidate goes on.
    race_starts : int, ``"auto"``, ``"untargeted"`` or None
        Independent searches per input. ``"auto"``: as many as :func:`zeroopt.race_plan` gives the budget for
        an untargeted attack, the budget and the input's dimension for a targeted one; ``"untargeted"``: the
        budget's for untargeted attacks, one search for targeted ones; ``None``: the budget's and dimension's
        for both; an integer: that many (1: one search, no race).
    race_fraction : float
        The share of each input's budget the race between starts may spend, in (0, 1).
    race_keeps_state : bool
        Whether the race's winner goes on with its run's state (step size, iteration count, memory:
        :class:`zeroopt.RaceWinner`) rather than afresh from its point.
    race_halving : bool
        Whether the race is a successive-halving one: twice the starts (``zeroopt.race_plan(halving=True)``),
        the worse half dropped after each of :func:`zeroopt.halving_rounds` rounds.
    """

    race_iterations: int = 0
    race_starts: int | str | None = RACE_AUTO
    race_fraction: float = RACE_FRACTION
    race_keeps_state: bool = False
    race_halving: bool = False

    def __post_init__(self) -> None:
        _non_negative(self, "race_iterations")
        k = self.race_starts
        _need(k is None or k in (RACE_UNTARGETED, RACE_AUTO) or (_is_int(k) and k >= 1), self,
              f"race_starts must be a positive integer, None (sized by the budget and dimension) or "
              f"{RACE_UNTARGETED!r} (sized by the budget for untargeted attacks only) or {RACE_AUTO!r} "
              f"(that, and sized by budget and dimension for targeted ones), got {k!r}")
        f = self.race_fraction
        _need(_is_real(f) and 0 < f < 1, self, f"race_fraction must be a number in (0, 1), got {f!r}")
        _flags(self, "race_keeps_state", "race_halving")

    def plan(self, budget: int, *, targeted: bool = False, dim: int | None = None) -> tuple[int, int]:
        """``(starts, queries)``: the searches per input and the queries their race may spend, for an untargeted
        or (``targeted``) a targeted attack on inputs of ``dim`` values (:func:`zeroopt.race_plan`)."""
        plan = partial(zeroopt.race_plan, int(budget), fraction=float(self.race_fraction),
                       halving=bool(self.race_halving))
        if self.race_starts is None:
            return plan(dim=dim)
        if self.race_starts == RACE_UNTARGETED:  # the budget alone, untargeted only
            return (1, 0) if targeted else plan()
        if self.race_starts == RACE_AUTO:
            return plan(dim=dim) if targeted else plan()
        k = int(self.race_starts)
        return (k, int(self.race_fraction * budget)) if k > 1 else (1, 0)


@dataclass(frozen=True)
class BoundarySearch:
    """The search for g(θ) along a ray: Algorithm 1's widening bracket, then a binary search to ε.

    Parameters
    ----------
    local_ratio : float
        Algorithm 1's widening ratio α, in (0, 1).
    local_growth : float
        The factor α grows by after each step away from the search's hint: ``2`` gallops, ``1`` is the paper's
        fixed ratio; finite and at least 1.
    """

    local_ratio: float = PAPER_LOCAL_RATIO
    local_growth: float = GALLOPING_GROWTH

    def __post_init__(self) -> None:
        r, g = self.local_ratio, self.local_growth
        _need(_is_real(r) and 0 < r < 1, self, f"local_ratio must be a number in (0, 1), got {r!r}")
        _need(_is_real(g) and 1 <= g < math.inf, self,
              f"local_growth must be a finite number >= 1 (1: the paper's fixed ratio), got {g!r}")


@dataclass(frozen=True)
class Runs:
    """The solver runs: the constants asked of the registry, and when a converged run starts again.

    Parameters
    ----------
    preset : str
        The solver's published constants, ``"paper"`` (q = 20, β = 0.005) or ``"reference"`` (the authors'
        code: q = 10, β = 0.001), asked of the solver registry.
    max_iter : int, optional
        A cap on solver iterations per input.
    restarts : int
        How many times a run that converged with budget left restarts with its initial β and step (0: it stops
        there, as the reference code does).
    fresh_restarts : bool
        Whether a restart whose basin is spent begins from a new initial search (:func:`zeroopt.solve_many`'s
        ``fresh_start``) rather than from the run's best direction.
    """

    preset: str = "paper"
    max_iter: int | None = None
    restarts: int = 10
    fresh_restarts: bool = True

    def __post_init__(self) -> None:
        _need(self.preset in PRESETS, self, f"preset must be one of {sorted(PRESETS)}, got {self.preset!r}")
        try:
            check_max_iter(self.max_iter)
        except ValueError as err:
            raise ValueError(f"Runs: {err}") from None
        _non_negative(self, "restarts")
        _flags(self, "fresh_restarts")


@dataclass(frozen=True)
class Polish:
    """The pass that prunes each input's best perturbation shortly before its budget ends.

    Parameters
    ----------
    prune : bool
        Whether the coordinates the boundary does not need go back to x0's (:func:`zeroopt.pruning`, the polish
        of :func:`zeroopt.solve_many`); the descent goes on from the pruned point. L2 only: an L∞ attack never
        prunes (taking coordinates out leaves a perturbation's largest one).
    polish_reserve : int
        Queries left in each input's budget when the pass runs.
    """

    prune: bool = True
    polish_reserve: int = POLISH_RESERVE

    def __post_init__(self) -> None:
        _flags(self, "prune")
        _non_negative(self, "polish_reserve")


@dataclass(frozen=True)
class Verify:
    """The final verification every attack ends with: each returned point is labelled again, alone.

    Parameters
    ----------
    queries : int
        Queries per input reserved inside its budget for it: slightly safer versions of the best point
        (perturbation × 1.001, 1.002, ...) and then the point itself, each in its own model call; the nearest the
        model still labels adversarial is returned (:mod:`.recheck`). Skipped where the budget is below
        4 × ``queries``; 0 turns it off.
    """

    queries: int = 3

    def __post_init__(self) -> None:
        _non_negative(self, "queries")

    def reserve(self, budget: int) -> int:
        """Queries per input kept for the final check (none when the budget is below 4 × queries)."""
        return int(self.queries) if budget >= 4 * self.queries else 0


@dataclass(frozen=True)
class ModelOptions:
    """How the model is wrapped as a label oracle. A model that already is a ``LabelModel`` keeps its own batch size:
    a ``batch_size`` other than ``"auto"`` and the ``LabelModel``'s is refused (``ValueError``), never ignored.

    Parameters
    ----------
    batch_size : int, ``"auto"`` or None
        The largest number of samples sent to the model in one call (a larger round is split), which bounds
        peak memory; ``"auto"``: 4096 for a torch module on a GPU, else 256; ``None`` sends each round whole.
    blas_threads : int or None
        Threads numpy's and scipy's BLAS may use while the attack runs, restored afterwards; ``None``: as they are.
    piecewise_constant : bool or None
        Whether the model is a tree ensemble, whose g(θ) is piecewise constant (``zeroopt.SolverContext``'s
        trait, which the registry answers with parts for stairs); ``None``: from the model (true for LightGBM and
        scikit-learn tree models, false for anything else, a plain callable included).
    arrays : ``"auto"``, ``"numpy"`` or ``"model"``
        Where the attack's own arithmetic runs: ``"numpy"`` on the host; ``"model"`` in torch tensors on the torch
        module's device — the solver's probes, estimates and steps and the boundary search's rays and batches,
        so a GPU model gets its batches without a copy from the host; ``"auto"``: ``"model"`` for a torch module
        on an accelerator, else ``"numpy"``.
    """

    batch_size: int | str | None = "auto"
    blas_threads: int | None = 1
    piecewise_constant: bool | None = None
    arrays: str = "auto"

    def __post_init__(self) -> None:
        b, t, p = self.batch_size, self.blas_threads, self.piecewise_constant
        _need(b == "auto" or b is None or (_is_int(b) and b > 0), self,
              f"batch_size must be a positive integer, 'auto' or None, got {b!r}")
        _need(t is None or (_is_int(t) and t >= 1), self,
              f"blas_threads must be a positive integer or None (leave the BLAS as it is), got {t!r}")
        _need(p is None or isinstance(p, (bool, np.bool_)), self,
              f"piecewise_constant must be True, False or None (from the model), got {p!r}")
        _need(self.arrays in ARRAYS, self, f"arrays must be one of {ARRAYS}, got {self.arrays!r}")

    def device_for(self, label_model: Any) -> Any:
        """The torch device the attack computes on for ``label_model`` (its ``device``), or ``None``: numpy."""
        device = getattr(label_model, "device", None)
        if self.arrays == "model" and device is None:
            raise ValueError("ModelOptions(arrays='model') needs a torch module (its device is where the attack "
                             "computes); for any other model the attack computes in numpy")
        if self.arrays == "numpy" or device is None:
            return None
        return device if self.arrays == "model" or getattr(device, "type", "cpu") != "cpu" else None

    def check_wrapped(self, label_model: Any) -> None:
        """Refuse a ``batch_size`` that a model already wrapped as a ``LabelModel`` would not honour.

        Raises
        ------
        ValueError
            When ``batch_size`` is not ``"auto"`` and differs from ``label_model.batch_size``.
        """
        own = getattr(label_model, "batch_size", None)
        if self.batch_size != "auto" and self.batch_size != own:
            raise ValueError(f"ModelOptions(batch_size={self.batch_size!r}) cannot apply: the model is already a "
                             f"LabelModel with batch_size={own!r}; make it with as_label_model(model, batch_size="
                             f"{self.batch_size!r}), or leave ModelOptions' batch_size at 'auto'")

    def batch_for(self, model: Any) -> int | None:
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


def field_names(piece: type) -> list[str]:
    """The settings of a piece class, in order."""
    return [f.name for f in fields(piece)]
