"""``attack``: the OPT hard-label attack (Cheng et al., ICLR 2019) on a batch of inputs.

The attack turns "find a small adversarial perturbation with top-1 labels only" into minimising
g(θ) = distance from x0 to the decision boundary along θ, evaluated by :mod:`.boundary`, and hands g to
any solver of the zeroopt registry, which knows the solver's settings for such an objective. All inputs of
the batch are attacked together: their initial searches, probes and line searches share model calls.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

import zeroopt
from zeroopt import QueryLedger
from zeroopt.descent import PRESETS
from zeroopt.errors import attach_partial_result, partial_result

from .adapters import LabelModel, as_label_model
from .boundary import BoundaryOracleGroup, ImageState
from .config import (
    DEFAULT_SOLVER,
    AttackConfig,
    boundary_context,
    check_inputs,
    initial_precision,
    limit_blas,
    progress_bar,
    seeds_for,
)
from .distance import as_distance
from .initial import already_adversarial, fresh_initial_search, initial_directions
from .inputs import as_labels, check_labels_fit
from .result import AttackResult
from .verify import final_check

__all__ = ["PAPER_DEFAULTS", "REFERENCE_CODE_DEFAULTS", "attack"]

# The paper's constants and the authors' reference code's (zeroopt.descent.PRESETS), under their old names.
PAPER_DEFAULTS: dict[str, Any] = dict(PRESETS["paper"])
REFERENCE_CODE_DEFAULTS: dict[str, Any] = dict(PRESETS["reference"])


def attack(
    model: Any,
    x0: ArrayLike,
    y0: ArrayLike,
    *,
    target: ArrayLike | None = None,
    budget: int = 20_000,
    solver: str = DEFAULT_SOLVER,
    seed: int | Sequence[int] | None = None,
    bounds: tuple[ArrayLike, ArrayLike] = (0.0, 1.0),
    norm: float | str = 2,
    progress: bool = False,
    config: AttackConfig | None = None,
    **options: Any,
) -> AttackResult:
    """Hard-label attack on a batch of inputs (OPT: boundary-distance minimisation).

    Parameters
    ----------
    model
        A ``torch.nn.Module`` returning logits, a callable on a batch returning labels ``(N,)`` or scores
        ``(N, K)``, a scikit-learn classifier, or a LightGBM ``Booster``/``LGBMClassifier``. Only the top-1
        label is ever used.
    x0
        Inputs, batch first ``(N, *input_shape)``, inside ``bounds``.
    y0
        Their labels ``(N,)`` (class indices).
    target
        ``None`` for an untargeted attack, or target labels ``(N,)``.
    budget
        Per-input hard cap on model queries (every sample sent to the model counts one).
    solver
        Any solver of :func:`zeroopt.list_solvers`. The default, ``"sign-growing"``, is the most query-efficient
        composition measured (benchmarks/results/ablation); ``"rgf"`` is the paper's; ``"sign"`` uses the oracle's
        one-query comparison (Sign-OPT).
    seed
        Seed for every random choice. Each input's randomness depends on ``seed`` only, not on its position
        in the batch; a sequence of N seeds gives each input its own. A batch gives bit-identical per-input
        results to one-at-a-time attacks when the model labels each input independently of the others in its
        call. Many do not, exactly: a neural network's outputs can change in the last bits with the batch's
        size and content (other kernels, other summation orders), which can flip a label within ε of the
        boundary and so change the search from there on: the distortions then differ slightly. With
        ``batch_size=1`` every model call holds one input, and batched and one-at-a-time results are
        bit-identical (for a model that is deterministic on one input).
    bounds
        ``(lower, upper)`` of the input domain, scalars or arrays broadcastable to one input's shape
        (per-feature boxes for tabular data); every query is clipped to it.
    norm
        The distance minimised and reported: ``2`` (L2, the paper's) or ``np.inf`` (L∞). Every ray is measured in
        it, so g(θ) is the distance in that norm and the solver runs unchanged (:mod:`.distance`).
    progress
        Show a progress bar (queries spent out of the total budget).
    config
        An :class:`~applications.hardlabel.config.AttackConfig` grouping the parameters of the attack's parts
        below; any of them may also be given as a keyword (a keyword wins).
    preset
        ``"paper"`` (q = 20, β = 0.005) or ``"reference"`` (the authors' code: q = 10, β = 0.001): the
        constant set asked of the solver registry.
    n_initial, initial_directions, initial_selection
        Number of initial directions tried (random for untargeted, target-class examples for targeted), the
        zeroopt direction sampler that draws the untargeted ones (default ``"low-frequency"``; ``"multi-scale"``
        mixes low-frequency bands and the full space; the reference code's: ``"gaussian"``), and how the best
        one is picked (``"record"``, the default: each candidate asked once, just below the best distance so
        far, only the winner bisected; ``"tournament"``: knocked out at shared radii that fall faster after a
        round nobody lost, only the winner bisected; ``"halving-tournament"``: the radius halves every round;
        ``"bisect-all"``: the reference code's). ``**REFERENCE_START`` gives the reference code's start (100
        Gaussian directions, all bisected).
    n_uniform, race_iterations
        Untargeted attacks also try ``n_uniform`` directions toward uniform random points of the input domain
        (HopSkipJump's start: :class:`zeroopt.BoxDirections`), searched as a family of their own; the best
        of each family then runs ``race_iterations`` solver iterations and the one that got lowest goes on
        (:func:`zeroopt.race`; 0: the lowest candidate goes on, no race).
    race_starts, race_fraction
        ``race_starts`` independent initial searches (each of ``n_initial`` new candidates), whose winners
        descend in lockstep until the input has spent ``race_fraction`` (0.15) of its budget on them; the lowest
        point goes on. ``None``: as many starts as :func:`zeroopt.race_plan` gives the budget and the input's
        dimension (on 784 values none below about 6.7k queries, 2 from there, 4 from 13.3k, 8 from 26.7k; each
        start's share grows with d, so on CIFAR-10's 3072 none below about 26k). ``"untargeted"``: the budget's
        starts for untargeted attacks whatever d, one search for targeted ones (the untargeted-only race). ``"auto"``
        (default): the budget's starts for untargeted attacks whatever d, the budget's and d's for targeted ones.
        1: one search. g has many basins and which one a run ends in is set early; the race takes the bad ones
        away (MNIST untargeted mean L2 at 20k 2% lower, GBDT MNIST 13% lower per input at 32k, MNIST targeted
        means 2-3% lower at 14k-20k) while the typical input pays a little, more in more dimensions (CIFAR-10
        1.4-3.5% per input at 8k-20k); an untargeted attack's basins are the other classes, and on CIFAR-10 the
        race still lowered the median of 30 inputs at 14k by 10%, where targeted the race cost CIFAR-10 its means
        too (benchmarks/results/ablation/race-untargeted/, race-starts/, race-dimension/).
    race_keeps_state
        With ``True`` the race's winner goes on with its run's state — its step size, iteration count (the probes
        keep growing from where they were) and memory — rather than afresh from its point (:class:`zeroopt.RaceWinner`).
        Default ``False``: per input 0.996-0.999 on untargeted CNN attacks at 8k-20k, 3% higher on GBDT MNIST at
        11.9k (benchmarks/results/ablation/race-state/).
    race_halving
        With ``True`` the race between starts is a successive-halving one: twice the starts
        (:func:`zeroopt.race_plan` with ``halving=True``), the worse half of them dropped after each of
        :func:`zeroopt.halving_rounds` rounds, so more basins are looked at for the same queries.
    target_examples, target_pool
        For targeted attacks: candidate inputs ``(M, *input_shape)`` (those the model labels as the target
        are used), or a dataset ``(x, y)`` from which examples of each target class are drawn. For untargeted
        attacks ``target_pool`` is a fallback: an input for which no random direction leads to another class
        starts toward pool examples of other classes (and, failing those, toward the batch's other inputs).
    n_classes
        Number of classes, when the model cannot tell (torch modules, callables); used to check labels.
    local_ratio, local_growth
        Algorithm 1's widening ratio α of the local boundary search, and the factor by which it grows after
        each step away from the hint: ``2`` (default) gallops, so a value 30% below the hint costs 26
        queries instead of 50 (bracketed in 7 instead of 36); ``1`` is the paper's fixed ratio (part of
        ``REFERENCE_START``).
    max_iter
        Optional cap on solver iterations per input.
    restarts, fresh_restarts
        How many times a run that converged before its budget (β below its floor) restarts with the initial β
        and step; 0 stops there, as the reference code does. It restarts from its best direction while the
        last run there still gained; once it did not (the basin is spent), from a new initial search when
        ``fresh_restarts`` (default), whose basin may be another class's (:func:`zeroopt.solve_many`).
    prune
        About 100 queries before the budget ends (``zeroopt.POLISH_RESERVE``), take out of each input's best
        perturbation the coordinates the boundary does not need (:func:`zeroopt.pruning` as the polish of
        :func:`zeroopt.solve_many`: the smallest first, in blocks of 1% of its squared norm, one query per
        block; a pass ends after 8 refusals in a row), and go on from the pruned point: the coordinates a
        tree ensemble never splits on go back to x0's; on a CNN the pass is refused at once.
        ``REFERENCE_START`` turns it off. ``polish_reserve`` sets the queries left when it happens (default
        100, :data:`zeroopt.POLISH_RESERVE`).
    piecewise_constant
        Whether the model is a tree ensemble, whose g(θ) is piecewise constant (``zeroopt.SolverContext``'s
        trait; the registry then leaves out parts that assume a slope, such as ``sign-growing``'s probes shaped
        by the direction, and widens ``sign-growing``'s probes to 0.5 rad compared with the tangent plane's level,
        :data:`zeroopt.solvers.GROWING_PIECEWISE_BETA`). ``None`` (default): from the model — true for LightGBM
        and scikit-learn tree models, false for anything else, a plain callable included (say ``True`` for a tree
        model behind a callable).
    verify
        Queries per input reserved (inside the budget) for a final re-check: slightly safer versions of the
        best point (perturbation scaled by 1.001, 1.002, ...) are labelled again, each alone in its own model
        call, and the nearest of them the model still calls adversarial is returned — else the best point
        itself, which the last query labels alone (where the target class is a sliver along the ray). The best
        point found by a binary search sits within ε of the boundary, where a different batch composition or a
        GPU's reduced-precision arithmetic can flip its label; the re-check makes the returned point robustly
        adversarial where it can, at a cost of at most 0.1% × ``verify`` distortion (:mod:`.recheck`). Skipped
        when the budget is below 4 × verify; 0 disables it.
    blas_threads
        Threads numpy's and scipy's BLAS may use during the attack (default 1, restored afterwards; ``None``:
        as they are): an idle OpenBLAS worker spins after each call and takes a core from the model.
    batch_size
        Largest number of samples sent to the model in one call (a larger round is split), which bounds
        peak memory; ``"auto"``: 4096 for a torch module on a GPU, else 256 (a CNN on a CPU runs faster per
        sample at a few hundred than at thousands); ``None`` sends each round whole. Ignored when ``model``
        is already a ``LabelModel``.
    **solver_options
        Overrides of the solver's options (``q``, ``beta``, ``step``, ``eps``, ``momentum``, ``probe_shape``,
        ...). The defaults are the solver's own for g(θ) — a unit-sphere, adjustable-precision, radial
        :class:`zeroopt.SolverContext` — as the registry gives them: ``zeroopt.get_solver(name).defaults(context)``.

    Raises
    ------
    TypeError, ValueError
        For a bad argument, solver or option (unknown, misspelt, out of range): always before the first
        model query. A label beyond the model's score width, when no ``n_classes`` says it beforehand, is a
        ``ValueError`` after the first model call.
    ModelOutputError
        When the model raises or returns something malformed (NaN, wrong shape, labels out of range).
    Exception
        Whatever stops the attack after its first query (``ModelOutputError``, ``KeyboardInterrupt``, ...)
        is re-raised as it is, with ``partial_result`` attached: the :class:`AttackResult` up to the failure
        (every adversarial the model labelled so far; ``success`` marks those, not re-checked).

    Returns
    -------
    AttackResult
        Per input: ``x_adv`` (the best adversarial found, verified by the model), ``distortion`` (L2,
        ``inf`` when none was found), ``queries``, ``success``, ``trace``; plus ``model_calls`` and
        ``wall_time``.

    Examples
    --------
    >>> import numpy as np
    >>> from applications.hardlabel import attack
    >>> w = np.array([[1.0, -1.0], [-1.0, 1.0]])
    >>> model = lambda x: x.reshape(len(x), -1) @ w.T  # scores of a 2-class linear model
    >>> res = attack(model, np.array([[0.8, 0.2]]), np.array([0]), budget=500, seed=0)
    >>> bool(res.success[0] and res.distortion[0] < 0.43 and res.queries[0] <= 500)
    True
    """
    started = time.perf_counter()
    # 1. Validate, and split the keywords between the attack's parts and the solver.
    x, lo, hi = check_inputs(x0, budget, solver, bounds)
    distance = as_distance(norm)
    cfg, solver_options = AttackConfig.split(config, options)
    n, shape = x.shape[0], x.shape[1:]
    # 2. Adapt the model to a hard-label oracle.
    label_model: LabelModel = model if isinstance(model, LabelModel) else as_label_model(
        model, n_classes=cfg.n_classes, batch_size=cfg.model_batch(model))
    calls_before, k = label_model.calls, cfg.n_classes if cfg.n_classes is not None else label_model.n_classes
    y = as_labels(y0, n, "y0", k)
    tgt = None if target is None else as_labels(target, n, "target", k)
    if tgt is not None and (tgt == y).any():
        i = int(np.flatnonzero(tgt == y)[0])
        raise ValueError(f"target equals y0 for input {i} (label {y[i]}); a targeted attack needs another class")
    cfg.check_targets(tgt, shape)
    rngs = [np.random.default_rng(s) for s in seeds_for(seed, n)]
    # 3. The solver, as the registry builds it for g(θ).
    piecewise = label_model.piecewise_constant if cfg.piecewise_constant is None else cfg.piecewise_constant
    spec, context = zeroopt.get_solver(solver), boundary_context(shape, cfg.preset, piecewise)
    resolved = spec.resolve(context, **solver_options)
    built, eps0 = spec.build(context, **resolved), initial_precision(resolved)
    # 4. The boundary oracle group: one ledger per input (the final check's reserve held back).
    # The model sees float32 inputs: work from exactly those values, so every reported distance is exact.
    flat = x.reshape(n, -1).astype(np.float32).astype(np.float64)
    reserve = cfg.reserve(int(budget))
    images = [ImageState(flat[i], int(y[i]), None if tgt is None else int(tgt[i]),
                         QueryLedger(budget=int(budget) - reserve)) for i in range(n)]
    bar = progress_bar(progress, n * int(budget))
    group = BoundaryOracleGroup(_labels_checked(label_model, y, tgt), images, shape, (lo, hi), default_eps=eps0,
                                ratio=cfg.local_ratio, growth=cfg.local_growth,
                                on_round=None if bar is None else bar.update, distance=distance)

    def result(solver_results: list[Any], passed: Any) -> AttackResult:
        return AttackResult.from_images(images, shape, solver_results, label_model.calls - calls_before,
                                        time.perf_counter() - started, group.model_seconds, passed, distance.name)

    members: list[int] = []
    runs: Any = None
    restore_blas = limit_blas(cfg.blas_threads)
    solver_results: list[Any] = [None] * n  # per input, filled when the runs end (or are cut short)
    try:
        # 5. Inputs the model already gets wrong are done at once; the others get initial directions.
        todo = already_adversarial(group)
        starts, race_queries = cfg.race_for(int(budget), targeted=tgt is not None, dim=context.dim)
        members, theta0, g0, states = initial_directions(group, todo, rngs, cfg, shape, tgt, eps0, context,
                                                         built, starts=starts, race_queries=race_queries)
        # 6. One zeroopt run per input, all in lockstep, restarted while converged with budget left (once a
        # run's basin is spent, from a new initial search).
        fresh = None
        if cfg.fresh_restarts:
            fresh = fresh_initial_search(group, members, rngs, cfg, shape, tgt, eps0, context, built)
        try:
            runs = zeroopt.solve_many(built, theta0, group, rngs=[rngs[i] for i in members], members=members,
                                      f0=g0, f0_eps=eps0, max_iter=cfg.max_iter, restarts=cfg.restarts,
                                      fresh_start=fresh, polish=zeroopt.pruning() if cfg.prune else None,
                                      polish_reserve=cfg.polish_reserve, states=states)
        except BaseException as err:
            runs = partial_result(err)  # one partial OptimizeResult per run
            raise
        finally:
            if isinstance(runs, list) and len(runs) == len(members):
                solver_results = [None] * n
                for i, r in zip(members, runs, strict=True):
                    solver_results[i] = r
        # 7. Re-check each best point.
        verified = final_check(group, reserve, int(budget), (lo, hi))
    except BaseException as err:
        # Nothing found so far is lost, whatever stopped the attack (the model, Ctrl-C): the exception keeps
        # its type and carries every adversarial the model labelled up to the failure, and the runs' results.
        raised = attach_partial_result(err, result(solver_results, [img.best_point is not None for img in images]))
        if raised is err:
            raise
        raise raised from err
    finally:
        restore_blas()
        if bar is not None:
            bar.close()
    return result(solver_results, verified)


def _labels_checked(label_model: LabelModel, y: Any, tgt: Any) -> Any:
    """The model as the attack queries it: labels beyond its score width (once known) are an error.

    Without ``n_classes`` the width is learnt from the first scores; the check comes before any label is
    used, so a label 12 on a 10-class model is never taken for "already misclassified".
    """
    if label_model.n_classes is not None:
        return label_model

    def labels(batch: Any) -> Any:
        out = label_model(batch)
        check_labels_fit(label_model.score_width, {"y0": y, "target": tgt})
        return out

    return labels
