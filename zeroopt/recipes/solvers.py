"""The built-in value-difference and model-based solvers, each a recipe: its settings and their defaults in its
signature, its body the literal chain of its parts; beside each, what it runs in a context.

``rgf`` (the paper's Algorithm 2), ``rgf_fixed`` (Nesterov–Spokoiny's theory step), ``coordinate`` (coordinate
descent) and ``trust_region`` (a quadratic model in a trust region), registered at the end of this file. On the
unit sphere (:class:`~zeroopt.SolverContext`) the descent solvers take the OPT reference code's settings for
unit-norm directions: the constant set's q and β, the step divided by d where the estimator is unbiased
(:func:`~zeroopt.recipes.descent.unit_sphere_steps`), the iterate kept on the sphere; with an oracle of adjustable
precision, ε = β/500. The sign solvers:
:mod:`zeroopt.recipes.sign_solvers`; the search over sign vectors: :mod:`zeroopt.recipes.sign_flips`.
"""

from __future__ import annotations

from typing import Any, Literal

from ..core.base import SolverContext
from ..core.chain import Chain, chain
from ..core.constants import (
    PAPER_BETA,
    PAPER_Q,
    REFERENCE_BETA_DECAY,
    REFERENCE_BETA_MIN,
    REFERENCE_EPS_PER_BETA,
    REFERENCE_GROW,
    REFERENCE_SHRINK,
    REFERENCE_STEP,
    REFERENCE_STEP_MIN,
    REFERENCE_STEP_RESET,
)
from ..core.stages import SkipFlat
from ..direction.momentum import AdaptiveMomentum
from ..direction.prior import HistoryPrior
from ..direction.quasi_newton import QuasiNewton
from ..direction.step_bound import NON_FINITE_BETA_SHRINK, STEP_BOUND, BoundedStep, RadiusOffNonFinite
from ..model.trust_region import (
    RADIUS_SHARE,
    GeometryProbes,
    ModelEstimate,
    ModelProbes,
    ModelStep,
    RadiusFloor,
    TrustStep,
)
from ..sample.history_subspace import HistorySubspaceProbes
from ..sample.precision import FixedPrecision
from ..sample.samplers import CoordinateDirections, make_sampler
from ..step.amends import BestProbe, unit_sphere
from ..step.radius import RadiusFollowsBalance
from ..step.radius_step import STEP_RADIUS_FLOOR_RATIO, RadiusFollowsStep
from ..step.stopping import NO_PROGRESS_WINDOW, DiminishingReturnsRule, NoProgressRule, StallRule
from .descent import (
    ON_THE_SPHERE,
    Differences,
    Directions,
    LineSearch,
    Retraction,
    check_descent,
    check_positive,
    differences_part,
    noise_aware_radius,
    precision,
    preset_for,
    probe_count,
    sampled,
    step_rule,
    unit_sphere_steps,
)
from .registry import Recipe, register_recipe
from .sign_solvers import sign, sign_growing, sign_growing_in, sign_in

__all__ = ["MODEL_MAX_DIM", "coordinate", "rgf", "rgf_fixed", "theory_step", "trust_region"]

#: rgf-fixed on the unit sphere: g's gradient there scales with g itself (a distance of order 1 for images
#: in [0, 1]), so L₁ = 1 is the neutral order of magnitude when the problem does not know its L₁.
SPHERE_LIPSCHITZ = 1.0
#: The trust-region solver keeps a dense n × n model Hessian and solves with it each iteration: above this d, refused.
MODEL_MAX_DIM = 2000


def rgf(
    context: SolverContext, *, q: int = PAPER_Q, q_start: int | None = None, beta: float = PAPER_BETA,
    directions: Directions = "gaussian", line_search: LineSearch = "opt", step: float = REFERENCE_STEP,
    step_reset: float | None = REFERENCE_STEP_RESET, grow: float = REFERENCE_GROW, shrink: float = REFERENCE_SHRINK,
    step_min: float = REFERENCE_STEP_MIN, beta_decay: float = REFERENCE_BETA_DECAY,
    beta_min: float = REFERENCE_BETA_MIN, eps: float | None = None, eps_per_beta: float | None = None,
    eps_relative: bool = False, retract: Retraction = None, patience: int | None = NO_PROGRESS_WINDOW,
    min_progress: float | None = None, coarse_candidates: float = 1.0, momentum: float | None = None,
    history_prior: bool = False, skip_flat: bool = False, probe_shape: float | None = None, beta_balance: bool = False,
    beta_per_step: float | None = None, beta_step_floor: float = STEP_RADIUS_FLOOR_RATIO,
    history_span: int | None = None, beta_above_noise: bool = False, quasi_newton: int | None = None,
    use_best_probe: bool = True, differences: Differences = "forward", step_bound: float | None = STEP_BOUND,
    non_finite_shrink: float | None = NON_FINITE_BETA_SHRINK, estimate_noise: bool = True,
) -> Chain:
    """``"rgf"``: the paper's Algorithm 2 — forward differences averaged over q directions, the OPT line search, the
    best probe taken when it beats the step (reference code). Each setting is the part it builds: ``q``/``q_start``
    :func:`~zeroopt.recipes.descent.probe_count`, ``eps*`` :func:`~zeroopt.recipes.descent.precision`, ``line_search``
    and its factors :func:`~zeroopt.recipes.descent.step_rule`, the stall rule's four :class:`~zeroopt.StallRule`,
    ``patience`` (fixed step only) :class:`~zeroopt.NoProgressRule`, ``step_bound``
    :class:`~zeroopt.direction.step_bound.BoundedStep` and ``non_finite_shrink``
    :class:`~zeroopt.direction.step_bound.RadiusOffNonFinite` (``None``: none), ``estimate_noise``
    :class:`~zeroopt.estimate.unstated_noise.EstimatedNoise` with the noise-aware radius weighing what it estimates, and
    each optional part its class (docs/solvers.md)."""
    check_descent(locals())
    return chain(
        SkipFlat() if skip_flat else None,
        precision(eps, eps_per_beta, eps_relative),
        probe_count(q, q_start),
        *sampled(make_sampler(directions, context), probe_shape),
        None if history_span is None else HistorySubspaceProbes(int(history_span)),
        differences_part(differences, estimate_noise),
        None if quasi_newton is None else QuasiNewton(int(quasi_newton)),
        HistoryPrior() if history_prior else None,  # before momentum, which then follows the prior
        None if momentum is None else AdaptiveMomentum(float(momentum)),
        None if step_bound is None else BoundedStep(float(step_bound)),  # what the step rule follows, last
        step_rule(line_search, grow=grow, shrink=shrink, coarse_candidates=coarse_candidates, step_min=step_min),
        BestProbe() if use_best_probe else None,
        None if non_finite_shrink is None else RadiusOffNonFinite(float(non_finite_shrink)),
        # The radius rules read β as the probes used it, before the stall rule may shrink it for a stalled step.
        RadiusFollowsBalance() if beta_balance else None,
        None if beta_per_step is None else RadiusFollowsStep(float(beta_per_step), float(beta_step_floor)),
        None if line_search == "fixed" else StallRule(step_min, step_reset, beta_decay, beta_min),
        NoProgressRule(int(patience)) if line_search == "fixed" and patience is not None else None,
        # After the stall rule, whose shrink it may undo.
        noise_aware_radius(differences, beta_above_noise, estimate_noise),
        None if min_progress is None else DiminishingReturnsRule(float(min_progress)),
        name="rgf", beta=beta, step=step, retract=retract)


def rgf_in(context: SolverContext) -> tuple[Recipe, dict[str, Any]]:
    """What ``"rgf"`` runs in ``context``: the recipe with, on the unit sphere, the constant set's q and β,
    unit-norm directions and the steps divided by d, the iterate kept on the sphere (:data:`ON_THE_SPHERE`); ε = β/500
    where the precision is adjustable."""
    written: dict[str, Any] = {"eps_per_beta": REFERENCE_EPS_PER_BETA} if context.adjustable_precision else {}
    if context.unit_sphere:
        written |= {**preset_for(context), "directions": "sphere", **unit_sphere_steps(context), "retract": unit_sphere,
                    **ON_THE_SPHERE}
    return rgf, written


def theory_step(dim: int, lipschitz: float) -> float:
    """Nesterov–Spokoiny's RGF step ``1 / (4 (d + 4) L₁)``."""
    return 1.0 / (4.0 * (dim + 4) * lipschitz)


def check_rgf_fixed(settings: dict[str, Any]) -> None:
    """rgf-fixed's settings: ``lipschitz`` and ``delta``, then the descent checks with the two settings that
    default to a theory value (``beta``, ``step``) filled in."""
    check_positive("lipschitz", settings.get("lipschitz"), allow_none=True)
    check_positive("delta", settings.get("delta"))
    check_descent({**settings, "beta": settings.get("beta") or 1.0, "step": settings.get("step") or 1.0})


def rgf_fixed(
    context: SolverContext, *, q: int = 1, q_start: int | None = None, beta: float | None = None,
    directions: Directions = "gaussian", line_search: LineSearch = "fixed", step: float | None = None,
    step_reset: float | None = REFERENCE_STEP_RESET, grow: float = REFERENCE_GROW, shrink: float = REFERENCE_SHRINK,
    step_min: float = REFERENCE_STEP_MIN, beta_decay: float = REFERENCE_BETA_DECAY,
    beta_min: float = REFERENCE_BETA_MIN, eps: float | None = None, eps_per_beta: float | None = None,
    eps_relative: bool = False, retract: Retraction = None, patience: int | None = NO_PROGRESS_WINDOW,
    min_progress: float | None = None, coarse_candidates: float = 1.0, momentum: float | None = None,
    history_prior: bool = False, skip_flat: bool = False, probe_shape: float | None = None, beta_balance: bool = False,
    beta_per_step: float | None = None, beta_step_floor: float = STEP_RADIUS_FLOOR_RATIO,
    history_span: int | None = None, beta_above_noise: bool = False, quasi_newton: int | None = None,
    lipschitz: float | None = None, delta: float = 1e-2, step_bound: float | None = STEP_BOUND,
    non_finite_shrink: float | None = NON_FINITE_BETA_SHRINK, estimate_noise: bool = False,
) -> Chain:
    """``"rgf-fixed"``: forward differences with Nesterov–Spokoiny's theory step ``1/(4(d+4)L₁)``, as Theorem 1
    analyses it. ``lipschitz`` is L₁ (the context's when it knows it); ``step`` defaults to the theory step and
    ``beta`` to Theorem 1's scaling ``delta / ((d + 4) L₁)`` for the target accuracy ``delta``; the other
    settings build the parts they build in :func:`rgf`; ``estimate_noise`` is off, so the step is the theory's."""
    check_rgf_fixed(locals())
    lip = lipschitz if lipschitz is not None else context.lipschitz
    if lip is None and (step is None or beta is None):
        raise ValueError(
            "rgf-fixed needs the gradient's Lipschitz constant L1 for its theory step: pass lipschitz=L1 "
            "(or both step= and beta=), or minimize a zeroopt.oracles.problems problem, which knows its L1"
        )
    d = context.dim
    return chain(
        SkipFlat() if skip_flat else None,
        precision(eps, eps_per_beta, eps_relative),
        probe_count(q, q_start),
        *sampled(make_sampler(directions, context), probe_shape),
        None if history_span is None else HistorySubspaceProbes(int(history_span)),
        differences_part("forward", estimate_noise),
        None if quasi_newton is None else QuasiNewton(int(quasi_newton)),
        HistoryPrior() if history_prior else None,
        None if momentum is None else AdaptiveMomentum(float(momentum)),
        None if step_bound is None else BoundedStep(float(step_bound)),
        step_rule(line_search, grow=grow, shrink=shrink, coarse_candidates=coarse_candidates, step_min=step_min),
        None if non_finite_shrink is None else RadiusOffNonFinite(float(non_finite_shrink)),
        RadiusFollowsBalance() if beta_balance else None,
        None if beta_per_step is None else RadiusFollowsStep(float(beta_per_step), float(beta_step_floor)),
        None if line_search == "fixed" else StallRule(step_min, step_reset, beta_decay, beta_min),
        NoProgressRule(int(patience)) if line_search == "fixed" and patience is not None else None,
        noise_aware_radius("forward", beta_above_noise, estimate_noise),
        None if min_progress is None else DiminishingReturnsRule(float(min_progress)),
        name="rgf-fixed", beta=beta if beta is not None else delta / ((d + 4) * lip),  # type: ignore[operator]
        step=step if step is not None else theory_step(d, lip), retract=retract)  # type: ignore[arg-type]


def rgf_fixed_in(context: SolverContext) -> tuple[Recipe, dict[str, Any]]:
    """What ``"rgf-fixed"`` runs in ``context``: the recipe with, on the unit sphere, the constant set's q and β,
    unit-norm directions, L₁ = :data:`SPHERE_LIPSCHITZ` when the context knows none, the iterate kept on the
    sphere (:data:`ON_THE_SPHERE`); ε = β/500 where the precision is adjustable."""
    written: dict[str, Any] = {"eps_per_beta": REFERENCE_EPS_PER_BETA} if context.adjustable_precision else {}
    if context.unit_sphere:
        written |= {**preset_for(context), "directions": "sphere", "retract": unit_sphere, **ON_THE_SPHERE}
        if context.lipschitz is None:
            written["lipschitz"] = SPHERE_LIPSCHITZ
    return rgf_fixed, written


def coordinate(
    context: SolverContext, *, q: int = 10, q_start: int | None = None, beta: float = 1e-4,
    directions: Directions = "coordinate", line_search: LineSearch = "opt", step: float = REFERENCE_STEP,
    step_reset: float | None = REFERENCE_STEP_RESET, grow: float = REFERENCE_GROW, shrink: float = REFERENCE_SHRINK,
    step_min: float = REFERENCE_STEP_MIN, beta_decay: float = REFERENCE_BETA_DECAY,
    beta_min: float = REFERENCE_BETA_MIN, eps: float | None = None, eps_per_beta: float | None = None,
    eps_relative: bool = False, retract: Retraction = None, patience: int | None = NO_PROGRESS_WINDOW,
    min_progress: float | None = None, coarse_candidates: float = 1.0, momentum: float | None = None,
    history_prior: bool = False, skip_flat: bool = False, probe_shape: float | None = None, beta_balance: bool = False,
    beta_per_step: float | None = None, beta_step_floor: float = STEP_RADIUS_FLOOR_RATIO,
    history_span: int | None = None, beta_above_noise: bool = False, quasi_newton: int | None = None,
    order: Literal["random", "cyclic"] = "random", differences: Differences = "forward",
    step_bound: float | None = STEP_BOUND, non_finite_shrink: float | None = NON_FINITE_BETA_SHRINK,
    estimate_noise: bool = True,
) -> Chain:
    """``"coordinate"``: zeroth-order coordinate descent on ``q`` coordinates per iteration, ``order``
    ``"random"`` (without replacement within an iteration) or ``"cyclic"``, ``differences`` ``"forward"``,
    ``"central"`` or ``"adaptive"`` (:data:`~zeroopt.recipes.descent.DIFFERENCES`); the best probe is taken when it
    beats the step. The other settings build the parts they build in :func:`rgf` (``directions`` is checked, the
    coordinates are the sampler)."""
    check_descent(locals())
    return chain(
        SkipFlat() if skip_flat else None,
        precision(eps, eps_per_beta, eps_relative),
        probe_count(q, q_start),
        *sampled(CoordinateDirections(cyclic=order == "cyclic"), probe_shape),
        None if history_span is None else HistorySubspaceProbes(int(history_span)),
        differences_part(differences, estimate_noise),
        None if quasi_newton is None else QuasiNewton(int(quasi_newton)),
        HistoryPrior() if history_prior else None,
        None if momentum is None else AdaptiveMomentum(float(momentum)),
        None if step_bound is None else BoundedStep(float(step_bound)),
        step_rule(line_search, grow=grow, shrink=shrink, coarse_candidates=coarse_candidates, step_min=step_min),
        BestProbe(),
        None if non_finite_shrink is None else RadiusOffNonFinite(float(non_finite_shrink)),
        RadiusFollowsBalance() if beta_balance else None,
        None if beta_per_step is None else RadiusFollowsStep(float(beta_per_step), float(beta_step_floor)),
        None if line_search == "fixed" else StallRule(step_min, step_reset, beta_decay, beta_min),
        NoProgressRule(int(patience)) if line_search == "fixed" and patience is not None else None,
        noise_aware_radius(differences, beta_above_noise, estimate_noise),
        None if min_progress is None else DiminishingReturnsRule(float(min_progress)),
        name="coordinate", beta=beta, step=step, retract=retract)


def coordinate_in(context: SolverContext) -> tuple[Recipe, dict[str, Any]]:
    """What ``"coordinate"`` runs in ``context``: the recipe with, on the unit sphere, the constant set's β and the
    steps divided by d, the iterate kept on the sphere (:data:`ON_THE_SPHERE`); ε = β/500 where the precision is
    adjustable."""
    written: dict[str, Any] = {"eps_per_beta": REFERENCE_EPS_PER_BETA} if context.adjustable_precision else {}
    if context.unit_sphere:
        written |= {"beta": preset_for(context)["beta"], **unit_sphere_steps(context), "retract": unit_sphere,
                    **ON_THE_SPHERE}
    return coordinate, written


def trust_region(context: SolverContext, *, q: int = 1, radius: float | None = None, radius_min: float = 1e-8,
                 points: int | None = None, eps: float | None = None) -> Chain:
    """``"trust-region"``: a quadratic model through the answers paid for, minimized in a trust region
    (:mod:`zeroopt.model.trust_region`; NEWUOA/BOBYQA/COBYQA's method without their bookkeeping).

    ``q``: points that repair the geometry after a step it failed; ``radius``: the first Δ (``None``: 0.1 ·
    max(‖x0‖∞, 1)); ``radius_min``: Δ at which the run converges; ``points``: points the model is fitted to
    (``None``: :func:`~zeroopt.model.trust_region.default_points`); ``eps``: the precision asked (``None``: the
    oracle's default). Not for iterates on the unit sphere, nor above :data:`MODEL_MAX_DIM` variables.
    """
    check_trust_region(locals())
    if context.unit_sphere:
        raise ValueError("trust-region models a function on ℝⁿ: on the unit sphere (the hard-label attack's g(θ)) "
                         "its points leave the quadratic undetermined; use sign-growing (the attack's default), "
                         "rgf or coordinate there")
    if context.dim > MODEL_MAX_DIM:
        raise ValueError(f"trust-region keeps a dense {context.dim} × {context.dim} model: d = {context.dim} is above "
                         f"its {MODEL_MAX_DIM}; for high-dimensional problems use rgf, coordinate or sign-growing")
    first = radius if radius is not None else RADIUS_SHARE
    return chain(
        None if eps is None else FixedPrecision(eps),
        ModelProbes(q),
        GeometryProbes(),
        ModelEstimate(radius, points),
        ModelStep(),
        TrustStep(),
        BestProbe(),
        RadiusFloor(radius_min),
        name="trust-region", beta=first, step=first)


def check_trust_region(settings: dict[str, Any]) -> None:
    """The trust region's settings: positive numbers, and at least 2 model points."""
    check_positive("q", settings["q"], integer=True)
    check_positive("radius", settings["radius"], allow_none=True)
    check_positive("radius_min", settings["radius_min"])
    check_positive("eps", settings["eps"], allow_none=True)
    points = settings["points"]
    if points is not None and (isinstance(points, bool) or not isinstance(points, int) or points < 2):
        raise ValueError(f"points must be an integer of at least 2 (or None: trust_region.default_points), got "
                         f"{points!r}")


register_recipe("rgf", rgf, "Randomized Gradient-Free with q-averaging and backtracking line search",
                in_context=rgf_in, check=check_descent)
register_recipe("rgf-fixed", rgf_fixed, "RGF with the theory step 1/(4(d+4)L1), as analysed by Theorem 1",
                in_context=rgf_fixed_in, check=check_rgf_fixed)
register_recipe("coordinate", coordinate, "Zeroth-order coordinate descent (random or cyclic coordinates)",
                in_context=coordinate_in, check=check_descent)
register_recipe("sign", sign, "Sign-OPT-style descent: sign of each directional difference from a comparison",
                in_context=sign_in, check=check_descent)
register_recipe("sign-growing", sign_growing,
                "Sign-OPT-style descent whose comparisons per estimate grow like √t (cheap early steps)",
                in_context=sign_growing_in, check=check_descent)
register_recipe("trust-region", trust_region,
                "Model-based trust region: a quadratic through the answers paid for, minimized in a ball",
                check=check_trust_region)
