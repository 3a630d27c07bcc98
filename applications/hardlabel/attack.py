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
from zeroopt import SolverState
from zeroopt.core.arrays import like
from zeroopt.core.constants import PRESETS
from zeroopt.core.errors import attach_partial_result, partial_result

from .config import (
    AttackConfig,
    check_inputs,
    check_solver_options,
    default_solver,
    default_solver_options,
    default_start,
    explains_misplaced_keywords,
    limit_blas,
    seeds_for,
    start_for,
)
from .criterion import Criterion, as_criterion
from .distance import Distance, as_distance
from .initial import already_adversarial, fresh_initial_search, initial_directions
from .inputs import as_labels
from .pieces import BoundarySearch, ModelOptions, Polish, Race, Runs, Start, Verify
from .result import AttackResult
from .run import AttackRun, label_oracle, solver_for
from .verify import final_check

__all__ = ["PAPER_DEFAULTS", "REFERENCE_CODE_DEFAULTS", "attack", "descend"]

# The paper's constants and the authors' reference code's (zeroopt.core.constants.PRESETS), under their old names.
PAPER_DEFAULTS: dict[str, Any] = dict(PRESETS["paper"])
REFERENCE_CODE_DEFAULTS: dict[str, Any] = dict(PRESETS["reference"])


@explains_misplaced_keywords
def attack(
    model: Any,
    x0: ArrayLike,
    y0: ArrayLike,
    *,
    target: ArrayLike | None = None,
    criterion: Criterion | None = None,
    budget: int = 20_000,
    solver: str | None = None,
    seed: int | Sequence[int] | None = None,
    bounds: tuple[ArrayLike, ArrayLike] = (0.0, 1.0),
    norm: float | str | Distance = 2,
    distance: Distance | None = None,
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

    The attack is assembled from named pieces (the table in docs/attack.md): a criterion (``criterion``, or
    ``target``), a distance (``distance``, or ``norm``), a :class:`~.pieces.Start`, a :class:`~.pieces.Race`
    between starts, a :class:`~.pieces.BoundarySearch`, the solver chain (``solver``, ``solver_options``) and its
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
        The criterion's short spelling: ``None`` (default) for an untargeted attack, or target labels ``(N,)``
        (``criterion=TargetedMisclassification(target)``). A targeted attack starts from examples of the target
        class: ``start=Start(target_examples=...)`` or ``start=Start(target_pool=(x, y))``.
    criterion : Criterion, optional
        What makes a point adversarial (:mod:`.criterion`): :class:`~.criterion.Misclassification` (the default),
        :class:`~.criterion.TargetedMisclassification`, or a subclass of one's own that writes
        ``is_adversarial(labels, label, index)``. Not with ``target``.
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
        The distance's short spelling: ``2`` (L2, the paper's) or ``np.inf`` (L∞; also ``"inf"``, ``"linf"``).
    distance : Distance, optional
        The distance minimised and reported (:mod:`.distance`): ``L2`` (the default), ``LINF``,
        ``LpDistance(p)``, or a subclass of one's own that writes ``lengths(rows)``. Every ray is measured in it,
        so g(θ) is the distance to the boundary in it. Not with another ``norm`` than 2.
    progress : bool, default False
        Show a progress bar (queries spent out of the total budget).
    n_classes : int, optional
        The number of classes, where the model cannot tell (torch modules, callables): labels are then checked
        before the first query. A plain keyword, not a piece's setting, as most calls on a torch model give it.
    start : Start, optional
        The initial search (default ``Start()``: 30 low-frequency candidates, the record search; in L∞
        ``Start(n_initial=1, all_ones_first=True)``, :data:`~.config.LINF_START`).
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
        for a unit-sphere, adjustable-precision, radial :class:`zeroopt.SolverContext` — and in L∞ the
        ``layout`` of the goal (:data:`~.config.LINF_LAYOUT`) where ``sign-flips`` runs and none is given.

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
        Per input: ``x_adv`` (the best adversarial found, verified by the model), ``distortion`` (in the distance,
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
    # 1. The criterion, the distance, the pieces and the solver's options, checked before the first query.
    criterion, distance = as_criterion(criterion, target), as_distance(norm, distance)
    solver = default_solver(distance) if solver is None else solver
    x, lo, hi = check_inputs(x0, budget, solver, bounds)
    cfg = AttackConfig.of(start=start_for(default_start(distance) if start is None else start, distance), race=race,
                          boundary_search=boundary_search, runs=runs, polish=polish, verify=verify,
                          model_options=model_options)
    options = check_solver_options(solver_options, solver)
    # 2. The model as a hard-label oracle; the labels and the criterion checked against the batch.
    label_model = label_oracle(model, cfg, n_classes)
    k = n_classes if n_classes is not None else label_model.n_classes
    y = as_labels(y0, len(x), "y0", k)
    criterion = criterion.for_batch(y, k)
    cfg.start.check_targets(criterion.targets, x.shape[1:])
    options = default_solver_options(distance, solver, criterion.targets is not None, options)
    rngs = [np.random.default_rng(s) for s in seeds_for(seed, len(x))]
    # 3. The run: the solver as the registry builds it for g(θ), one ledger and generator per input.
    run = AttackRun.open(label_model, x, y, criterion, distance, cfg,
                         solver_for(solver, options, x.shape[1:], cfg, label_model), rngs=rngs, bounds=(lo, hi),
                         budget=budget, progress=progress, started=started)
    restore_blas = limit_blas(cfg.model_options.blas_threads)
    try:
        # 4. Inputs the model already gets wrong are done at once; the others get initial directions, raced.
        todo = already_adversarial(run.group)
        members, theta0, g0, states = initial_directions(run, todo, *run.race_plan())
        # 5. One zeroopt run per input, in lockstep, restarted while converged with budget left.
        descend(run, members, theta0, g0, states)
        # 6. Re-check each best point.
        verified = final_check(run)
    except BaseException as err:
        # Nothing found so far is lost, whatever stopped the attack (the model, Ctrl-C): the exception keeps
        # its type and carries every adversarial the model labelled up to the failure, and the runs' results.
        raised = attach_partial_result(err, run.result([img.best_point is not None for img in run.images]))
        if raised is err:
            raise
        raise raised from err
    finally:
        restore_blas()
        run.close()
    return run.result(verified)


def descend(run: AttackRun, members: list[int], theta0: list[Any], g0: list[float],
            states: list[SolverState | None]) -> None:
    """One zeroopt run per input of ``members``, all in lockstep, restarted while converged with budget left
    (once a run's basin is spent, from a new initial search); their results go to ``run.solver_results``."""
    if run.on_device is not None:  # the runs compute where the model lives (a run going on from a state: as it was)
        theta0 = [t if s is not None else like(t, run.on_device) for t, s in zip(theta0, states, strict=True)]
    cfg = run.config
    # Pruning takes coordinates out of a perturbation: only a distance that this shortens prunes (L2, not L∞).
    prunes = cfg.polish.prune and run.group.distance.prunes
    fresh = fresh_initial_search(run, members) if cfg.runs.fresh_restarts else None
    ran: Any = None
    try:
        ran = zeroopt.solve_many(run.solver, theta0, run.group, rngs=[run.rngs[i] for i in members],
                                 members=members, f0=g0, f0_eps=run.eps, max_iter=cfg.runs.max_iter,
                                 restarts=cfg.runs.restarts, fresh_start=fresh,
                                 polish=zeroopt.pruning() if prunes else None,
                                 polish_reserve=cfg.polish.polish_reserve, states=states)
    except BaseException as err:
        ran = partial_result(err)  # one partial OptimizeResult per run
        raise
    finally:
        if isinstance(ran, list) and len(ran) == len(members):
            for i, r in zip(members, ran, strict=True):
                run.solver_results[i] = r
