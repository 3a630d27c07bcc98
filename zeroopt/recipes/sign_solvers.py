"""The comparison solvers, each a recipe: ``sign`` (Sign-OPT / ZO-signSGD) and ``sign-growing``, the hard-label
attack's default — in a plain recipe (:func:`sign_growing`) and in one for a radius on the unit sphere
(:func:`sign_growing_on_radius`, the attack's g(θ)), each with its whole chain and every default it uses.

Why sign-growing's settings for a radius are what they are, one line each (what each was measured against, and
the pages: docs/defaults.md):

- ``q_start=20``: the first estimate's comparisons, growing like √t to Sign-OPT's K, so a budget of a few hundred
  queries takes several steps;
- ``min_progress=0.01``: a run converges once its second half gained under 1 %, so restarts spend what is left on
  another basin;
- ``step=1.0``: the reference code's reset size (not its 0.2), as the first iterates are far out;
- ``eps_per_beta=1/100``, ``eps_relative=True``: ε = β/100 of g itself (an absolute ε stalls late on models
  whose distances are small; an iterate's value is only the level its probes are compared with);
- ``baseline="shrunk"``: the mean sign shrunk by its noise as baseline: late, the few comparisons that disagree
  are the estimate;
- ``directions="by-size"``: orthonormal probes within an estimate (q comparisons measure q distinct directions),
  from a low-frequency band on images with sides beyond 32, which answer mostly to smooth changes
  (:func:`zeroopt.sample.subspace.band_fraction`);
- ``momentum=1.0``: momentum once the steps keep overshooting (a zigzag across a narrow valley), none while they
  do not;
- ``line_search="semicircle"``: the value is a radius, so the step brackets the best angle with one-query
  comparisons;
- ``probe_shape=0.3``: a share 0.3 of each probe's variance on the direction's largest coordinates, where the
  boundary depends most;
- ``beta=0.04``, ``beta_per_step=0.25``, ``beta_step_floor=0.25``: probes 0.04 rad wide, narrowing to 0.01 rad
  at a quarter of the steps' running geometric mean — wide they follow the slope a step uses rather than the
  boundary's small wrinkles;
- ``probe_level="tangent"``: each probe compared with the tangent plane's level, which the wider β needs;
- on a piecewise-constant radius (a tree ensemble's g): ``beta=0.5`` fixed, to compare across its stairs, and
  probes as drawn (:func:`sign_growing_in`).
"""

from __future__ import annotations

from functools import partial
from typing import Any, Literal

from ..core.base import SolverContext
from ..core.chain import Chain, chain
from ..core.constants import (
    REFERENCE_BETA_DECAY,
    REFERENCE_BETA_MIN,
    REFERENCE_CODE_BETA,
    REFERENCE_EPS_PER_BETA,
    REFERENCE_GROW,
    REFERENCE_SHRINK,
    REFERENCE_STEP,
    REFERENCE_STEP_MIN,
    REFERENCE_STEP_RESET,
    SIGN_OPT_K,
)
from ..core.stages import Estimate, Part, SkipFlat
from ..direction.momentum import AdaptiveMomentum
from ..direction.prior import HistoryPrior
from ..direction.quasi_newton import QuasiNewton
from ..direction.step_bound import NON_FINITE_BETA_SHRINK, STEP_BOUND, BoundedStep, RadiusOffNonFinite
from ..estimate.estimators import (
    ProbeLevel,
    centered_sign_of_difference,
    shrunk_centered_sign_of_difference,
    sign_of_difference,
)
from ..estimate.unstated_noise import EstimatedNoise
from ..sample.history_subspace import HistorySubspaceProbes
from ..sample.samplers import make_sampler
from ..step.amends import unit_sphere
from ..step.radius import RadiusFollowsBalance
from ..step.radius_step import STEP_RADIUS_FLOOR_RATIO, RadiusFollowsStep
from ..step.stopping import NO_PROGRESS_WINDOW, DiminishingReturnsRule, NoProgressRule, StallRule
from .descent import (
    ON_THE_SPHERE,
    Directions,
    LineSearch,
    Retraction,
    check_descent,
    noise_aware_radius,
    precision,
    probe_count,
    sampled,
    step_rule,
)
from .registry import Recipe

__all__ = ["sign", "sign_estimate", "sign_growing", "sign_growing_in", "sign_growing_on_radius", "sign_in"]

Baseline = bool | Literal["shrunk"]


def sign_estimate(baseline: Baseline, probe_level: ProbeLevel, estimate_noise: bool = False) -> Part:
    """The comparison estimate: plain (``baseline=False``, Sign-OPT's), with the mean sign as baseline (``True``:
    HopSkipJump's, :func:`~zeroopt.estimate.estimators.centered_sign_of_difference`) or with it shrunk by its own noise
    (``"shrunk"``) — comparing each probe with f(x) (``probe_level="value"``) or, for an objective that is a radius,
    with the level of the plane through the current boundary point perpendicular to x (``"tangent"``). With
    ``estimate_noise``, the answers' noise is estimated where the oracle states none
    (:class:`~zeroopt.estimate.unstated_noise.EstimatedNoise`, as :func:`~zeroopt.recipes.descent.differences_part`
    wraps the differences): the level the probes are compared with is then the mean of the iterate's answers, not
    one lucky draw."""
    if baseline == "shrunk":
        estimator: Any = shrunk_centered_sign_of_difference
    else:
        estimator = centered_sign_of_difference if baseline else sign_of_difference
    part = Estimate(estimator if probe_level == "value" else partial(estimator, level=probe_level))
    return EstimatedNoise(part) if estimate_noise else part


def sign(
    context: SolverContext, *, q: int = SIGN_OPT_K, q_start: int | None = None, beta: float = REFERENCE_CODE_BETA,
    directions: Directions = "sphere", line_search: LineSearch = "opt", step: float = REFERENCE_STEP,
    step_reset: float | None = REFERENCE_STEP_RESET, grow: float = REFERENCE_GROW, shrink: float = REFERENCE_SHRINK,
    step_min: float = REFERENCE_STEP_MIN, beta_decay: float = REFERENCE_BETA_DECAY,
    beta_min: float = REFERENCE_BETA_MIN, eps: float | None = None, eps_per_beta: float | None = None,
    eps_relative: bool = False, retract: Retraction = None, patience: int | None = NO_PROGRESS_WINDOW,
    min_progress: float | None = None, coarse_candidates: float = 1.0, momentum: float | None = None,
    history_prior: bool = False, skip_flat: bool = False, probe_shape: float | None = None, beta_balance: bool = False,
    beta_per_step: float | None = None, beta_step_floor: float = STEP_RADIUS_FLOOR_RATIO,
    history_span: int | None = None, beta_above_noise: bool = False, quasi_newton: int | None = None,
    baseline: Baseline = False, probe_level: ProbeLevel = "value", step_bound: float | None = STEP_BOUND,
    non_finite_shrink: float | None = NON_FINITE_BETA_SHRINK, estimate_noise: bool = True,
) -> Chain:
    """``"sign"``: Sign-OPT / ZO-signSGD — q one-bit comparisons per gradient estimate (:func:`sign_estimate`),
    the OPT line search and the stall rule, with Sign-OPT's K and β. The other settings build the parts they build
    in :func:`~zeroopt.recipes.solvers.rgf`."""
    check_descent(locals())
    return chain(
        SkipFlat() if skip_flat else None,
        precision(eps, eps_per_beta, eps_relative),
        probe_count(q, q_start),
        *sampled(make_sampler(directions, context), probe_shape),
        None if history_span is None else HistorySubspaceProbes(int(history_span)),
        sign_estimate(baseline, probe_level, estimate_noise),
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
        name="sign", beta=beta, step=step, retract=retract)


def sign_in(context: SolverContext) -> tuple[Recipe, dict[str, Any]]:
    """What ``"sign"`` runs in ``context``: the recipe with, on the unit sphere, the iterate kept there (sign steps
    do not scale with d: the reference step and reset as they are, and Sign-OPT's K and β stay) and the
    safeguards for a plain objective off (:data:`~zeroopt.recipes.descent.ON_THE_SPHERE`); ε = β/500 where the
    precision is adjustable."""
    written: dict[str, Any] = {"eps_per_beta": REFERENCE_EPS_PER_BETA} if context.adjustable_precision else {}
    return sign, written | ({"retract": unit_sphere, **ON_THE_SPHERE} if context.unit_sphere else {})


def sign_growing(
    context: SolverContext, *, q: int = SIGN_OPT_K, q_start: int | None = 20, beta: float = REFERENCE_CODE_BETA,
    directions: Directions = "sphere", line_search: LineSearch = "opt", step: float = REFERENCE_STEP,
    step_reset: float | None = REFERENCE_STEP_RESET, grow: float = REFERENCE_GROW, shrink: float = REFERENCE_SHRINK,
    step_min: float = REFERENCE_STEP_MIN, beta_decay: float = REFERENCE_BETA_DECAY,
    beta_min: float = REFERENCE_BETA_MIN, eps: float | None = None, eps_per_beta: float | None = None,
    eps_relative: bool = False, retract: Retraction = None, patience: int | None = NO_PROGRESS_WINDOW,
    min_progress: float | None = 0.01, coarse_candidates: float = 1.0, momentum: float | None = None,
    history_prior: bool = False, skip_flat: bool = False, probe_shape: float | None = None, beta_balance: bool = False,
    beta_per_step: float | None = None, beta_step_floor: float = STEP_RADIUS_FLOOR_RATIO,
    history_span: int | None = None, beta_above_noise: bool = False, quasi_newton: int | None = None,
    baseline: Baseline = False, probe_level: ProbeLevel = "value", step_bound: float | None = STEP_BOUND,
    non_finite_shrink: float | None = NON_FINITE_BETA_SHRINK, estimate_noise: bool = True,
) -> Chain:
    """``"sign-growing"`` on a plain objective: :func:`sign` with √t probe growth from ``q_start`` comparisons to
    ``q`` (:class:`~zeroopt.sample.counts.SqrtProbeGrowth`) — cheap rough steps early, precise ones later — and a run
    that crawls converges (``min_progress``), so restarts can look elsewhere. For a radius on the unit sphere:
    :func:`sign_growing_on_radius`."""
    check_descent(locals())
    return chain(
        SkipFlat() if skip_flat else None,
        precision(eps, eps_per_beta, eps_relative),
        probe_count(q, q_start),
        *sampled(make_sampler(directions, context), probe_shape),
        None if history_span is None else HistorySubspaceProbes(int(history_span)),
        sign_estimate(baseline, probe_level, estimate_noise),
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
        name="sign-growing", beta=beta, step=step, retract=retract)


def sign_growing_on_radius(
    context: SolverContext, *, q: int = SIGN_OPT_K, q_start: int | None = 20, beta: float = 0.04,
    directions: Directions = "by-size", line_search: LineSearch = "semicircle", step: float = REFERENCE_STEP_RESET,
    step_reset: float | None = REFERENCE_STEP_RESET, grow: float = REFERENCE_GROW, shrink: float = REFERENCE_SHRINK,
    step_min: float = REFERENCE_STEP_MIN, beta_decay: float = REFERENCE_BETA_DECAY,
    beta_min: float = REFERENCE_BETA_MIN, eps: float | None = None, eps_per_beta: float | None = 1 / 100,
    eps_relative: bool = True, retract: Retraction = unit_sphere, patience: int | None = NO_PROGRESS_WINDOW,
    min_progress: float | None = 0.01, coarse_candidates: float = 1.0, momentum: float | None = 1.0,
    history_prior: bool = False, skip_flat: bool = False, probe_shape: float | None = 0.3, beta_balance: bool = False,
    beta_per_step: float | None = 0.25, beta_step_floor: float = 0.25, history_span: int | None = None,
    beta_above_noise: bool = False, quasi_newton: int | None = None, baseline: Baseline = "shrunk",
    probe_level: ProbeLevel = "tangent", step_bound: float | None = None, non_finite_shrink: float | None = None,
    estimate_noise: bool = False,
) -> Chain:
    """``"sign-growing"`` for a radius on the unit sphere (the hard-label attack's g(θ)): every default it uses
    there is in this signature (why each: the module docstring; the plain objective's safeguards are off, as
    :data:`~zeroopt.recipes.descent.ON_THE_SPHERE` has them)."""
    check_descent(locals())
    return chain(
        SkipFlat() if skip_flat else None,
        precision(eps, eps_per_beta, eps_relative),
        probe_count(q, q_start),
        *sampled(make_sampler(directions, context), probe_shape),
        None if history_span is None else HistorySubspaceProbes(int(history_span)),
        sign_estimate(baseline, probe_level, estimate_noise),
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
        name="sign-growing", beta=beta, step=step, retract=retract)


def sign_growing_in(context: SolverContext) -> tuple[Recipe, dict[str, Any]]:
    """What ``"sign-growing"`` runs in ``context``, and the arguments written out for it there.

    A plain objective: :func:`sign_growing` (ε = β/100 where the precision is adjustable). The unit sphere:
    :func:`sign_growing_on_radius` — without ε following β where the precision is fixed; for a direction that is
    not a radius, without the radius's step, probe width, shape and level (probes 0.01 rad wide, as the radius's
    narrow to); for a piecewise-constant radius (a tree ensemble's g), probes 0.5 rad wide, fixed, as drawn.
    """
    if not context.unit_sphere:
        return sign_growing, {"eps_per_beta": 1 / 100} if context.adjustable_precision else {}
    written: dict[str, Any] = {} if context.adjustable_precision else {"eps_per_beta": None}
    if not context.radial:
        written |= {"line_search": "opt", "beta": 0.01, "beta_per_step": None, "probe_shape": None,
                    "probe_level": "value"}
    elif context.piecewise_constant:
        written |= {"beta": 0.5, "beta_per_step": None, "probe_shape": None}
    return sign_growing_on_radius, written
