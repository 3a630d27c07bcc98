"""``attack``: the OPT hard-label attack (Cheng et al., ICLR 2019) on a batch of inputs.

The attack turns "find a small adversarial perturbation with top-1 labels only" into minimising
g(θ) = distance from x0 to the decision boundary along θ, evaluated by :mod:`.boundary`, and hands g to
any solver of the zeroopt registry, which knows the solver's settings for such an objective. All inputs of
the batch are attacked together: their initial searches, probes and line searches share model calls.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

import zeroopt
from zeroopt import QueryLedger
from zeroopt.arrays import like
from zeroopt.descent import PRESETS
from zeroopt.errors import attach_partial_result, partial_result

from .adapters import LabelModel, as_label_model
from .boundary import BoundaryOracleGroup, ImageState
from .config import (
    AttackConfig,
    boundary_context,
    check_inputs,
    check_solver_options,
    default_solver,
    default_start,
    explains_misplaced_keywords,
    initial_precision,
    limit_blas,
    progress_bar,
    seeds_for,
)
from .distance import L2, as_distance
from .initial import already_adversarial, fresh_initial_search, initial_directions
from .inputs import as_labels, check_labels_fit
from .pieces import BoundarySearch, ModelOptions, Polish, Race, Runs, Start, Verify
from .result import AttackResult
from .verify import final_check

__all__ = ["PAPER_DEFAULTS", "REFERENCE_CODE_DEFAULTS", "attack"]

# The paper's constants and the authors' reference code's (zeroopt.descent.PRESETS), under their old names.
PAPER_DEFAULTS: dict[str, Any] = dict(PRESETS["paper"])
REFERENCE_CODE_DEFAULTS: dict[str, Any] = dict(PRESETS["reference"])


@explains_misplaced_keywords
def attack(
    model: Any,
    x0: ArrayLike,
    y0: ArrayLike,
    *,
    target: ArrayLike | None = None,
    budget: int = 20_000,
    solver: str | None = None,
    seed: int | Sequence[int] | None = None,
    bounds: tuple[ArrayLike, ArrayLike] = (0.0, 1.0),
    norm: float | str = 2,
    progress: bool = False,
    n_classes: int | None = None,
    start: Start | None = None,
    race: Race | None = None,
    boundary_search: BoundarySearch | None = None,
    runs: Runs | None = None,
    polish: Polish | None = None,
    verify: Verify | None = None,
    model_options: ModelOptions | None = None,
    solver_options: Mapping[str, Any] | None = None,
) -> AttackResult:
    """Hard-label attack on a batch of inputs (OPT: boundary-distance minimisation).

    The attack is assembled from named pieces (the table in docs/attack.md): a criterion (``target``), a
    distance (``norm``), a :class:`~.pieces.Start`, a :class:`~.pieces.Race` between starts, a
    :class:`~.pieces.BoundarySearch`, the solver chain (``solver``, ``solver_options``) and its
    :class:`~.pieces.Runs`, a :class:`~.pieces.Polish`, and a :class:`~.pieces.Verify` that every attack ends
    with. Each piece is one frozen dataclass of settings, passed whole (``start=Start(n_initial=50)``); one left
    out takes its own defaults, which are the attack's. A piece's setting or a solver option given as a keyword
    of its own (``n_initial=50``, ``q=10``) raises a ``TypeError`` that names where it goes.

    Parameters
    ----------
    model : torch.nn.Module, callable, scikit-learn classifier or LightGBM model
        A ``torch.nn.Module`` returning logits, a callable on a batch returning labels ``(N,)`` or scores
        ``(N, K)``, a scikit-learn classifier, a LightGBM ``Booster``/``LGBMClassifier``, or a ``LabelModel``.
        Only the top-1 label is ever used.
    x0 : array_like
        Inputs, batch first ``(N, *input_shape)``, inside ``bounds``.
    y0 : array_like
        Their labels ``(N,)`` (class indices).
    target : array_like, optional
        The criterion: ``None`` (default) for an untargeted attack, or target labels ``(N,)``. A targeted attack
        starts from examples of the target class: ``start=Start(target_examples=...)`` or
        ``start=Start(target_pool=(x, y))``.
    budget : int, default 20_000
        Per-input hard cap on model queries (every sample sent to the model counts one).
    solver : str, optional
        Any solver of :func:`zeroopt.list_solvers`: ``"rgf"`` is the paper's, ``"sign"`` Sign-OPT's (one-query
        comparisons). ``None`` (default): ``"sign-growing"`` in L2, ``"sign-flips"`` (a search over sign vectors)
        in L∞ (:func:`~.config.default_solver`). Why the defaults are the defaults: docs/attack.md.
    seed : int, sequence of int or None, default None
        Seed for every random choice (``None``: one fresh draw). Each input's randomness depends on ``seed``
        only, not on its position in the batch; a sequence of N seeds gives each input its own. A batch gives
        bit-identical per-input results to one-at-a-time attacks when the model labels each input independently
        of the others in its call. A neural network's outputs can change in the last bits with the batch's size
        and content, which can flip a label within ε of the boundary and so the search from there on; with
        ``model_options=ModelOptions(batch_size=1)`` every model call holds one input, and batched and
        one-at-a-time results are bit-identical (for a model that is deterministic on one input).
    bounds : tuple of array_like, default ``(0.0, 1.0)``
        ``(lower, upper)`` of the input domain, scalars or arrays broadcastable to one input's shape (per-feature
        boxes for tabular data); every query is clipped to it.
    norm : {2, numpy.inf}, default 2
        The distance minimised and reported: ``2`` (L2, the paper's) or ``np.inf`` (L∞; also ``"inf"``,
        ``"linf"``). Every ray is measured in it, so g(θ) is the distance in that norm (:mod:`.distance`).
    progress : bool, default False
        Show a progress bar (queries spent out of the total budget).
    n_classes : int, optional
        The number of classes, where the model cannot tell (torch modules, callables): labels are then checked
        before the first query. A plain keyword, not a piece's setting, as most calls on a torch model give it.
    start : Start, optional
        The initial search (default ``Start()``: 30 low-frequency candidates, the record search; in L∞
        ``Start(n_initial=1)``, :data:`~.config.LINF_START`).
    race : Race, optional
        The race between independent starts (default ``Race()``: sized by the budget, ``race_starts="auto"``).
    boundary_search : BoundarySearch, optional
        The search for g(θ) along a ray (default ``BoundarySearch()``: α = 0.01, galloping).
    runs : Runs, optional
        The solver's published constants and the runs' restarts (default ``Runs()``: the paper's constants, up to
        10 restarts, fresh once a basin is spent).
    polish : Polish, optional
        The pruning pass before each budget ends (default ``Polish()``: on, 100 queries before the end).
    verify : Verify, optional
        The final verification of every returned point (default ``Verify()``: 3 queries per input).
    model_options : ModelOptions, optional
        How the model is wrapped as a label oracle (default ``ModelOptions()``: batches of at most 256 samples,
        4096 for a torch module on a GPU; one BLAS thread; tree ensembles told from the model).
    solver_options : mapping, optional
        The solver's own options over its defaults for g(θ) (``{"q": 10, "beta": 0.02}``; ``step``, ``eps``,
        ``momentum``, ``probe_shape``, ...): the defaults are ``zeroopt.get_solver(solver).defaults(context)``
        for a unit-sphere, adjustable-precision, radial :class:`zeroopt.SolverContext`.

    Raises
    ------
    TypeError, ValueError
        For a bad argument, piece, solver or option (unknown, misspelt, out of range, in the wrong place):
        always before the first model query. A label beyond the model's score width, when no ``n_classes`` says
        it beforehand, is a ``ValueError`` after the first model call.
    ModelOutputError
        When the model raises or returns something malformed (NaN, wrong shape, labels out of range).
    Exception
        Whatever stops the attack after its first query (``ModelOutputError``, ``KeyboardInterrupt``, ...)
        is re-raised as it is, with ``partial_result`` attached: the :class:`AttackResult` up to the failure
        (every adversarial the model labelled so far; ``success`` marks those, not re-checked).

    Returns
    -------
    AttackResult
        Per input: ``x_adv`` (the best adversarial found, verified by the model), ``distortion`` (in ``norm``,
        ``inf`` when none was found), ``queries``, ``success``, ``trace``; plus ``model_calls`` and ``wall_time``.

    See Also
    --------
    applications.hardlabel.pieces : the pieces and their settings.
    applications.hardlabel.config.attack_keywords : flat settings (a campaign's ``[options]``) as pieces.

    Examples
    --------
    >>> import numpy as np
    >>> from applications.hardlabel import Start, attack
    >>> w = np.array([[1.0, -1.0], [-1.0, 1.0]])
    >>> model = lambda x: x.reshape(len(x), -1) @ w.T  # scores of a 2-class linear model
    >>> res = attack(model, np.array([[0.8, 0.2]]), np.array([0]), budget=500, seed=0)
    >>> bool(res.success[0] and res.distortion[0] < 0.43 and res.queries[0] <= 500)
    True
    >>> attack(model, np.array([[0.8, 0.2]]), np.array([0]), budget=500, n_initial=50)
    Traceback (most recent call last):
    TypeError: n_initial belongs to the start: pass start=Start(n_initial=50)
    """
    started = time.perf_counter()
    # 1. Validate the common arguments, the pieces and the solver's options.
    solver = default_solver(norm) if solver is None else solver
    x, lo, hi = check_inputs(x0, budget, solver, bounds)
    distance = as_distance(norm)
    start = default_start(norm) if start is None else start
    cfg = AttackConfig.of(start=start, race=race, boundary_search=boundary_search, runs=runs, polish=polish,
                          verify=verify, model_options=model_options)
    options = check_solver_options(solver_options, solver)
    n, shape = x.shape[0], x.shape[1:]
    # 2. Adapt the model to a hard-label oracle.
    if isinstance(model, LabelModel):
        cfg.model_options.check_wrapped(model)
    label_model: LabelModel = model if isinstance(model, LabelModel) else as_label_model(
        model, n_classes=n_classes, batch_size=cfg.model_options.batch_for(model))
    calls_before, k = label_model.calls, n_classes if n_classes is not None else label_model.n_classes
    y = as_labels(y0, n, "y0", k)
    tgt = None if target is None else as_labels(target, n, "target", k)
    if tgt is not None and (tgt == y).any():
        i = int(np.flatnonzero(tgt == y)[0])
        raise ValueError(f"target equals y0 for input {i} (label {y[i]}); a targeted attack needs another class")
    cfg.start.check_targets(tgt, shape)
    rngs = [np.random.default_rng(s) for s in seeds_for(seed, n)]
    # 3. The solver, as the registry builds it for g(θ).
    piecewise = cfg.model_options.piecewise_constant
    piecewise = label_model.piecewise_constant if piecewise is None else piecewise
    spec, context = zeroopt.get_solver(solver), boundary_context(shape, cfg.runs.preset, piecewise)
    resolved = spec.resolve(context, **options)
    built, eps0 = spec.build(context, **resolved), initial_precision(resolved)
    # 4. The boundary oracle group: one ledger per input (the final check's reserve held back).
    # The model sees float32 inputs: work from exactly those values, so every reported distance is exact.
    flat = x.reshape(n, -1).astype(np.float32).astype(np.float64)
    reserve = cfg.verify.reserve(int(budget))
    images = [ImageState(flat[i], int(y[i]), None if tgt is None else int(tgt[i]),
                         QueryLedger(budget=int(budget) - reserve)) for i in range(n)]
    on_device = on_model_device(flat, cfg.model_options.device_for(label_model))
    for i, img in enumerate(images):  # the rays start on the model's device (or stay in numpy: None)
        img.x0_device = None if on_device is None else on_device[i]
    bar = progress_bar(progress, n * int(budget))
    group = BoundaryOracleGroup(_labels_checked(label_model, y, tgt), images, shape, (lo, hi), default_eps=eps0,
                                ratio=cfg.boundary_search.local_ratio, growth=cfg.boundary_search.local_growth,
                                on_round=None if bar is None else bar.update, distance=distance)

    def result(solver_results: list[Any], passed: Any) -> AttackResult:
        return AttackResult.from_images(images, shape, solver_results, label_model.calls - calls_before,
                                        time.perf_counter() - started, group.model_seconds, passed, distance.name)

    members: list[int] = []
    ran: Any = None
    restore_blas = limit_blas(cfg.model_options.blas_threads)
    solver_results: list[Any] = [None] * n  # per input, filled when the runs end (or are cut short)
    try:
        # 5. Inputs the model already gets wrong are done at once; the others get initial directions.
        todo = already_adversarial(group)
        starts, race_queries = cfg.race.plan(int(budget), targeted=tgt is not None, dim=context.dim)
        members, theta0, g0, states = initial_directions(group, todo, rngs, cfg, shape, tgt, eps0, context,
                                                         built, starts=starts, race_queries=race_queries)
        if on_device is not None:  # the runs compute where the model lives (a run going on from a state: as it was)
            theta0 = [t if s is not None else like(t, on_device) for t, s in zip(theta0, states, strict=True)]
        # 6. One zeroopt run per input, all in lockstep, restarted while converged with budget left (once a
        # run's basin is spent, from a new initial search).
        fresh = None
        # Pruning takes coordinates out of a perturbation, which shortens it in L2 but not in L∞ (its largest
        # coordinate stays), so an L∞ attack never prunes.
        prunes = cfg.polish.prune and distance == L2
        if cfg.runs.fresh_restarts:
            fresh = fresh_initial_search(group, members, rngs, cfg, shape, tgt, eps0, context, built)
        try:
            ran = zeroopt.solve_many(built, theta0, group, rngs=[rngs[i] for i in members], members=members,
                                     f0=g0, f0_eps=eps0, max_iter=cfg.runs.max_iter, restarts=cfg.runs.restarts,
                                     fresh_start=fresh, polish=zeroopt.pruning() if prunes else None,
                                     polish_reserve=cfg.polish.polish_reserve, states=states)
        except BaseException as err:
            ran = partial_result(err)  # one partial OptimizeResult per run
            raise
        finally:
            if isinstance(ran, list) and len(ran) == len(members):
                solver_results = [None] * n
                for i, r in zip(members, ran, strict=True):
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


def on_model_device(flat: Any, device: Any) -> Any:
    """``flat`` (the inputs, float64) as a torch tensor on ``device``, or ``None`` when the attack stays in numpy."""
    if device is None:
        return None
    import torch

    return torch.as_tensor(flat, dtype=torch.float64, device=device)


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
