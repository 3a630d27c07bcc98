"""The descent options every built-in solver shares, and the composer that turns them into a solver.

Use them for a solver of your own: subclass :class:`DescentOptions` (add your options, change defaults),
and build the solver with :func:`descent_solver`, handing it your estimator (and sampler). The reference
code's constants then come with it instead of being copied.

Defaults follow the paper (Cheng et al., ICLR 2019) where it gives a value: q = 20 probe directions,
smoothing radius β = 0.005; the stall rule and line-search factors follow the authors' reference code
(step 0.2, ×2 / ×0.25, step floor 1e-4, reset to 1.0, β ← β/10, stop at β < 1e-8).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .base import Behaviour, DirectionSampler, Precision, SolverContext, StepRule
from .chain import Chain
from .constants import (
    PAPER_BETA,
    PAPER_Q,
    PRESETS,
    REFERENCE_BETA_DECAY,
    REFERENCE_BETA_MIN,
    REFERENCE_CODE_BETA,
    REFERENCE_CODE_Q,
    REFERENCE_EPS_PER_BETA,
    REFERENCE_GROW,
    REFERENCE_SHRINK,
    REFERENCE_STEP,
    REFERENCE_STEP_MIN,
    REFERENCE_STEP_RESET,
)
from .estimators import GradientEstimator
from .history_subspace import HistorySubspaceProbes
from .momentum import AdaptiveMomentum
from .noise import CENTRAL_NOISE_CEILING_RATIO, NOISE_CEILING_RATIO, RadiusAboveNoise
from .orthogonal import OrthogonalDirections
from .parts import BestProbe, SqrtProbeGrowth
from .precision import FixedPrecision, PrecisionFollowsBeta, PrecisionFollowsValue
from .prior import HistoryPrior
from .quasi_newton import QuasiNewton
from .radius import RadiusFollowsBalance
from .radius_step import STEP_RADIUS_FLOOR_RATIO, STEP_RADIUS_RATIO, RadiusFollowsStep
from .samplers import make_sampler, sampler_names
from .shaping import IterateShapedProbes
from .stages import Amend, Estimate, FixedProbes, Part, Sample, SkipFlat, Step
from .stepping import armijo_step, fixed_step, opt_line_search, semicircle_step
from .stopping import DiminishingReturnsRule, NoProgressRule, StallRule

__all__ = [
    "PAPER_BETA", "PAPER_Q", "PRESETS", "REFERENCE_CODE_BETA", "REFERENCE_CODE_Q", "REFERENCE_EPS_PER_BETA",
    "DescentOptions", "check_positive", "descent_solver", "noise_ceiling", "noise_step_share", "precision_for",
    "preset_for", "step_rule_for", "unit_sphere_steps", "NO_PROGRESS_WINDOW",
]

#: Iterations without improvement after which a fixed-step run stops (:class:`~zeroopt.parts.NoProgressRule`).
NO_PROGRESS_WINDOW = 200

LineSearch = Literal["opt", "armijo", "fixed", "semicircle"]
Retraction = Callable[[NDArray[np.float64]], NDArray[np.float64]] | None


#: Each step rule ``line_search`` names, and its keywords with the option that sets each.
STEP_RULES: dict[str, tuple[StepRule, dict[str, str]]] = {
    "opt": (opt_line_search, {"grow": "grow", "shrink": "shrink", "coarse": "coarse_candidates"}),
    "semicircle": (semicircle_step, {"grow": "grow", "shrink": "shrink", "min_angle": "step_min"}),
    "armijo": (armijo_step, {"grow": "grow"}),
    "fixed": (fixed_step, {}),
}


def check_positive(name: str, value: float | None, *, integer: bool = False, allow_none: bool = False) -> None:
    """Raise a clear error unless option ``name`` is a positive finite number (or ``None`` when allowed)."""
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"option {name} must be a number, got {value!r}")
    if integer and int(value) != value:
        raise ValueError(f"option {name} must be an integer, got {value!r}")
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"option {name} must be positive and finite, got {value!r}")


@dataclass(frozen=True)
class DescentOptions:
    """Options shared by the descent solvers.

    Attributes
    ----------
    q, beta, step
        Probes per iteration, initial smoothing radius, initial step size.
    q_start
        When set, the probes grow from ``q_start`` like √t up to ``q`` (:class:`~zeroopt.parts.SqrtProbeGrowth`);
        a ``q`` at or below ``q_start`` is a constant ``q`` (so ``q=`` alone still fixes the probes).
    directions
        Name of the direction sampler (:func:`zeroopt.samplers.sampler_names`).
    line_search
        ``"opt"`` (the reference code's doubling/quartering search, factors ``grow``/``shrink``),
        ``"armijo"`` or ``"fixed"`` (move by ``step`` unconditionally; no stall rule).
    step_min, step_reset, beta_decay, beta_min
        The stall rule (:class:`~zeroopt.parts.StallRule`).
    eps, eps_per_beta, eps_relative
        Precision to request from the oracle: fixed, or following β (:func:`precision_for`) — and, with
        ``eps_relative``, also the current value (:class:`~zeroopt.parts.PrecisionFollowsValue`), for positive
        objectives that scale with their argument, such as a distance.
    retract
        Map applied to every iterate (e.g. :func:`~zeroopt.parts.unit_sphere`), or ``None``.
    patience
        With ``line_search="fixed"`` (which has no stall rule): stop once the iterate's value has not
        improved in this many iterations (:class:`~zeroopt.parts.NoProgressRule`); ``None``: never, so only
        the budget or ``max_iter`` ends the run. Unused by the other line searches, whose stall rule stops them.
    coarse_candidates
        The ``"opt"`` line search evaluates its candidates to this multiple of ε and refines only the one it
        keeps (:func:`~zeroopt.stepping.opt_line_search`'s ``coarse``); 1: every candidate to ε.
    momentum
        When set, the step follows :class:`~zeroopt.momentum.AdaptiveMomentum` with this ``max_weight`` (the
        previous direction's weight once every step overshoots); ``None``: the estimate itself.
    history_prior
        Follow a Kalman filter of the gradient over the iterations (:class:`~zeroopt.prior.HistoryPrior`); before
        momentum when both are on — where momentum then sees the filter's smoothed mean, which seldom turns back
        against the last direction, so its weight stays near 0 (on the hard-label attack, exactly 0: the run is
        the prior's alone). Not with ``line_search="fixed"``.
    skip_flat
        Keep the probes off the coordinates the oracle says the objective does not depend on near the iterate
        (:class:`~zeroopt.oracle.FlatCoordinates`; the part :class:`~zeroopt.stages.SkipFlat`), and move to the
        equivalent point of lower value it names, if any. Off by default; an oracle that knows nothing makes it
        a no-op.
    probe_shape
        When set (a weight in (0, 1]), each probe puts this share of its variance on the coordinates in
        proportion to the iterate's |xᵢ| (:class:`~zeroopt.shaping.IterateShapedProbes`; orthonormal samplers'
        probes are orthonormalised again): for objectives whose iterate is itself a perturbation, such as a
        radius along a direction. ``None``: probes as the sampler draws them.
    min_progress
        When set, the run also converges once the second half of its iterations improved its value by less
        than this fraction (:class:`~zeroopt.parts.DiminishingReturnsRule`) — worth it when converged runs are
        restarted from fresh starts (:func:`~zeroopt.solve_many`); ``None``: never.
    beta_balance
        Narrow β while the comparisons are lopsided and widen it back to ``beta`` once they are balanced
        (:class:`~zeroopt.radius.RadiusFollowsBalance`); only comparison estimators state the balance it reads.
        Not for a piecewise-constant objective, whose comparisons are lopsided at every β.
    beta_per_step, beta_step_floor
        When ``beta_per_step`` is set, β follows the steps the iterate takes: ``beta_per_step`` × their running
        geometric mean, from ``beta`` (the widest, used until the first step) down to ``beta_step_floor`` ×
        ``beta`` (:class:`~zeroopt.radius_step.RadiusFollowsStep`): probes wide while the steps are long, narrow
        once they are short. ``None``: β stays (up to the stall rule).
    beta_above_noise
        Keep β where the probes' differences stand above the noise the oracle states with its answers, widening
        it while they do not and returning toward ``beta`` once they do (:class:`~zeroopt.noise.RadiusAboveNoise`,
        after the stall rule). Forward-difference estimators only; an exact oracle (ε = 0) makes it a no-op.
    quasi_newton
        When set, the step follows the estimate times the L-BFGS inverse curvature of the last ``quasi_newton``
        (step, estimate change) pairs (:class:`~zeroopt.quasi_newton.QuasiNewton`), before any prior or momentum;
        an estimate over every coordinate (``solver="coordinate"`` with q ≥ d) gives it whole gradients.
        ``None``: the estimate itself.
    history_span
        When set, up to a quarter of each iteration's probes span the last ``history_span`` estimates and the
        rest are orthonormal to them (:class:`~zeroopt.history_subspace.HistorySubspaceProbes`): where q ≪ d
        and consecutive gradients are alike, the recent span holds far more of the next gradient than random
        probes find. ``None``: probes as drawn (and shaped).
    """

    q: int = PAPER_Q
    q_start: int | None = None
    beta: float = PAPER_BETA
    directions: str = "gaussian"
    line_search: LineSearch = "opt"
    step: float = REFERENCE_STEP
    step_reset: float | None = REFERENCE_STEP_RESET
    grow: float = REFERENCE_GROW
    shrink: float = REFERENCE_SHRINK
    step_min: float = REFERENCE_STEP_MIN
    beta_decay: float = REFERENCE_BETA_DECAY
    beta_min: float = REFERENCE_BETA_MIN
    eps: float | None = None
    eps_per_beta: float | None = None
    eps_relative: bool = False
    retract: Retraction = None
    patience: int | None = NO_PROGRESS_WINDOW
    min_progress: float | None = None
    coarse_candidates: float = 1.0
    momentum: float | None = None
    history_prior: bool = False
    skip_flat: bool = False
    probe_shape: float | None = None
    beta_balance: bool = False
    beta_per_step: float | None = None
    beta_step_floor: float = STEP_RADIUS_FLOOR_RATIO
    history_span: int | None = None
    beta_above_noise: bool = False
    quasi_newton: int | None = None

    def validate(self) -> None:
        """Raise ``TypeError``/``ValueError`` naming the first invalid option."""
        check_positive("q", self.q, integer=True)
        check_positive("patience", self.patience, integer=True, allow_none=True)
        check_positive("min_progress", self.min_progress, allow_none=True)
        check_positive("momentum", self.momentum, allow_none=True)
        check_positive("probe_shape", self.probe_shape, allow_none=True)
        if self.probe_shape is not None and self.probe_shape > 1:
            raise ValueError(f"probe_shape is a share of each probe's variance, in (0, 1]; got {self.probe_shape!r}")
        check_positive("q_start", self.q_start, integer=True, allow_none=True)
        check_positive("history_span", self.history_span, integer=True, allow_none=True)
        check_positive("quasi_newton", self.quasi_newton, integer=True, allow_none=True)
        check_positive("beta_per_step", self.beta_per_step, allow_none=True)
        if not 0 < self.beta_step_floor <= 1:
            raise ValueError(f"beta_step_floor is a share of beta, in (0, 1]; got {self.beta_step_floor!r}")
        check_positive("beta", self.beta)
        check_positive("step", self.step)
        check_positive("step_reset", self.step_reset, allow_none=True)
        check_positive("grow", self.grow)
        check_positive("shrink", self.shrink)
        check_positive("eps", self.eps, allow_none=True)
        check_positive("eps_per_beta", self.eps_per_beta, allow_none=True)
        check_positive("coarse_candidates", self.coarse_candidates)
        if self.coarse_candidates < 1:
            raise ValueError(f"coarse_candidates must be >= 1 (a multiple of ε), got {self.coarse_candidates!r}")
        if self.line_search not in ("opt", "armijo", "fixed", "semicircle"):
            raise ValueError(
                f"line_search must be 'opt', 'armijo', 'fixed' or 'semicircle', got {self.line_search!r}")
        if self.coarse_candidates != 1 and self.line_search != "opt":
            raise ValueError(
                f"coarse_candidates ranks the OPT line search's candidates; line_search is {self.line_search!r}: "
                "pass line_search='opt' as well (the semicircular step evaluates a single angle already)")
        if not 0 < self.beta_decay <= 1:
            raise ValueError(f"beta_decay must be in (0, 1], got {self.beta_decay!r}")
        if self.directions not in sampler_names():
            raise ValueError(f"unknown direction distribution {self.directions!r}; choose one of {sampler_names()}")
        if not isinstance(self.eps_relative, bool):
            raise TypeError(f"eps_relative must be True or False, got {self.eps_relative!r}")
        for name in ("history_prior", "skip_flat", "beta_balance", "beta_above_noise"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.history_prior and self.line_search == "fixed":
            # The filter's mean lags behind a gradient that shrinks toward the minimum, and a fixed step never
            # checks that it gained: on a quadratic, rgf-fixed with the prior diverges.
            raise ValueError("history_prior needs a step rule that checks its gain ('opt', 'armijo' or "
                             "'semicircle'): with line_search='fixed' the prior's lag makes the steps overshoot")
        if self.quasi_newton is not None and self.line_search == "fixed":
            raise ValueError("quasi_newton needs a step rule that checks its gain ('opt', 'armijo' or 'semicircle'): "
                             "with line_search='fixed' a step along a wrong curvature estimate is taken unchecked")
        if self.retract is not None and not callable(self.retract):
            raise TypeError("retract must be a callable x -> x or None")


def noise_ceiling(opts: DescentOptions) -> float:
    """The noise-aware radius's bound for the differences ``opts`` takes: central ones (also the adaptive switch to
    them, which takes them exactly while β is widened) get the wider one (:data:`~zeroopt.noise.NOISE_CEILING_RATIO`,
    :data:`~zeroopt.noise.CENTRAL_NOISE_CEILING_RATIO`)."""
    return NOISE_CEILING_RATIO if _forward(opts) else CENTRAL_NOISE_CEILING_RATIO


def noise_step_share(opts: DescentOptions) -> float | None:
    """The noise-aware radius's narrowest β as a share of the step (:class:`~zeroopt.noise.RadiusAboveNoise`'s
    ``step_share``): a quarter (:data:`~zeroopt.radius_step.STEP_RADIUS_RATIO`) for central differences and the
    adaptive switch, which takes them while β is widened; none for forward ones, whose β f″ term a wide β biases."""
    return None if _forward(opts) else STEP_RADIUS_RATIO


def _forward(opts: DescentOptions) -> bool:
    """Whether ``opts`` takes forward differences (options without a ``differences`` field do)."""
    return getattr(opts, "differences", "forward") == "forward"


def preset_for(context: SolverContext) -> dict[str, float]:
    """q and β of the constant set a :class:`~zeroopt.SolverContext` asks for (the paper's when it names none)."""
    return dict(PRESETS[context.constants or "paper"])


def unit_sphere_steps(context: SolverContext) -> dict[str, float]:
    """The reference code's step 0.2 and reset 1.0, divided by d, for unit-norm probe directions.

    The reference code's sphere estimator was unscaled; zeroopt's is unbiased (scaled by d), so the same
    moves take steps divided by d.
    """
    return {"step": REFERENCE_STEP / context.dim, "step_reset": REFERENCE_STEP_RESET / context.dim}


def step_rule_for(opts: DescentOptions) -> StepRule:
    """The step rule ``opts.line_search`` names, with its factors bound (:data:`STEP_RULES`)."""
    rule, keywords = STEP_RULES[opts.line_search]
    return partial(rule, **{k: float(getattr(opts, o)) for k, o in keywords.items()}) if keywords else rule


def precision_for(opts: DescentOptions) -> Precision | None:
    """``ε = eps_per_beta · β`` (times the current value with ``eps_relative``) when ``eps_per_beta`` is set,
    else the fixed ``eps`` (``None``: oracle's default)."""
    if opts.eps_per_beta is not None:
        per_beta = opts.eps_per_beta
        return PrecisionFollowsValue(per_beta) if opts.eps_relative else PrecisionFollowsBeta(per_beta)
    return None if opts.eps is None else FixedPrecision(opts.eps)


def descent_solver(
    name: str,
    opts: DescentOptions,
    estimator: GradientEstimator | Part,
    *,
    sampler: DirectionSampler | None = None,
    best_probe: bool = False,
    context: SolverContext | None = None,
    behaviours: Sequence[Behaviour] = (),
) -> Chain:
    """Compose a descent solver's chain from its options and an estimator.

    Parameters
    ----------
    name
        The solver's name in results.
    opts
        Any :class:`DescentOptions` (or subclass) instance.
    estimator
        The gradient estimator (:mod:`zeroopt.estimators`, or your own generator function), or an estimate-stage
        part (:class:`~zeroopt.differences.AdaptiveDifferences`), which goes into the chain as it is.
    sampler
        The direction sampler; default: the one ``opts.directions`` names, built for ``context``.
    best_probe
        Add :class:`~zeroopt.parts.BestProbe` (move to the best probe when it beats the line search).
    context
        The :class:`~zeroopt.SolverContext`, handed to the sampler's factory.
    behaviours
        Behaviours of your own (:class:`~zeroopt.base.Behaviour`), applied to each move right after the step
        rule (and the best probe): before the radius rules and the stall and stopping rules, which so see the move
        as yours left it.

    Returns
    -------
    Chain
        [skip flat] → precision → probe count → sampler → [probe shape] → [probe history] → estimator →
        [history prior] → [momentum] → step rule → [best probe] → [your behaviours] → [radius follows balance] →
        [radius follows step] → stall rule → [radius above noise] → [diminishing returns]; a fixed step, which
        never shrinks, gets the no-progress rule instead of the stall rule (unless ``opts.patience`` is ``None``).
    """
    drawn = sampler or make_sampler(opts.directions, context)
    orthogonal = isinstance(drawn, OrthogonalDirections)
    shape = None if opts.probe_shape is None else IterateShapedProbes(
        float(opts.probe_shape), orthonormal=orthogonal, min_ratio=drawn.min_ratio if orthogonal else 0.0)
    if shape is not None and shape.orthonormal and isinstance(drawn, OrthogonalDirections):
        # The shape orthonormalises the reshaped probes again: one Gram-Schmidt pass gives the same directions.
        drawn = replace(drawn, deferred=True)
    fixed = opts.line_search == "fixed"

    def has(*names: str) -> tuple[str, ...]:  # the options among ``names`` this solver's options type declares
        return tuple(n for n in names if hasattr(opts, n))

    q = FixedProbes(int(opts.q)) if opts.q_start is None else SqrtProbeGrowth(min(int(opts.q_start), int(opts.q)),
                                                                             int(opts.q))
    parts_and_options: tuple[tuple[Part | None, tuple[str, ...]], ...] = (  # each part, and the options that set it
        (SkipFlat() if opts.skip_flat else None, ("skip_flat",)),
        (precision_for(opts), ("eps", "eps_per_beta", "eps_relative")),
        (q, ("q", "q_start")),
        (Sample(drawn), ("directions", *has("order"))),
        (shape, ("probe_shape",)),
        (None if opts.history_span is None else HistorySubspaceProbes(int(opts.history_span)), ("history_span",)),
        (estimator if isinstance(estimator, Part) else Estimate(estimator),
         has("baseline", "probe_level", "differences")),
        (None if opts.quasi_newton is None else QuasiNewton(int(opts.quasi_newton)), ("quasi_newton",)),
        (HistoryPrior() if opts.history_prior else None, ("history_prior",)),  # before momentum: it follows the prior
        (None if opts.momentum is None else AdaptiveMomentum(float(opts.momentum)), ("momentum",)),
        (Step(step_rule_for(opts)), ("line_search", *STEP_RULES[opts.line_search][1].values())),
        (BestProbe() if best_probe else None, has("use_best_probe")),
        *((b if isinstance(b, Part) else Amend(b), ()) for b in behaviours),
        # The radius rules read β as the probes used it, before the stall rule may shrink it for a stalled step.
        (RadiusFollowsBalance() if opts.beta_balance else None, ("beta_balance",)),
        (None if opts.beta_per_step is None else RadiusFollowsStep(float(opts.beta_per_step),
                                                                   float(opts.beta_step_floor)),
         ("beta_per_step", "beta_step_floor")),
        (None if fixed else StallRule(opts.step_min, opts.step_reset, opts.beta_decay, opts.beta_min),
         ("step_min", "step_reset", "beta_decay", "beta_min")),
        (NoProgressRule(int(opts.patience)) if fixed and opts.patience is not None else None, ("patience",)),
        (RadiusAboveNoise(ceiling_ratio=noise_ceiling(opts), step_share=noise_step_share(opts))
         if opts.beta_above_noise else None,
         ("beta_above_noise", *has("differences"))),  # after the stall rule
        (None if opts.min_progress is None else DiminishingReturnsRule(float(opts.min_progress)), ("min_progress",)),
    )
    kept = [(part, names) for part, names in parts_and_options if part is not None]
    return Chain(name=name, parts=tuple(p for p, _ in kept), beta=float(opts.beta), step=float(opts.step),
                 retract=opts.retract, options=tuple(names for _, names in kept))
