"""The built-in solvers: each a short composition of public parts, with its defaults per context.

Every solver here is :func:`~zeroopt.descent.descent_solver` applied to its options and an estimator; a
solver of your own is built the same way (see the README's "Write your own solver"). In a context where
iterates live on the unit sphere (:class:`~zeroopt.SolverContext`), the solvers take the OPT reference
code's settings for unit-norm directions; plain objectives get the options' own defaults.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from .base import SolverContext
from .chain import Chain
from .constants import SIGN_OPT_K
from .descent import (
    REFERENCE_CODE_BETA,
    REFERENCE_STEP,
    REFERENCE_STEP_RESET,
    DescentOptions,
    LineSearch,
    check_positive,
    descent_solver,
    preset_for,
    unit_sphere_steps,
)
from .differences import AdaptiveDifferences
from .estimators import (
    PROBE_LEVELS,
    GradientEstimator,
    ProbeLevel,
    centered_sign_of_difference,
    central_difference,
    forward_difference,
    shrunk_centered_sign_of_difference,
    sign_of_difference,
)
from .parts import BestProbe
from .precision import FixedPrecision
from .radius_step import STEP_RADIUS_RATIO
from .registry import register_solver
from .samplers import CoordinateDirections
from .trust_region import RADIUS_SHARE, GeometryProbes, ModelEstimate, ModelProbes, ModelStep, RadiusFloor, TrustStep

__all__ = [
    "DIFFERENCES", "MODEL_MAX_DIM", "CoordinateOptions", "RGFFixedOptions", "RGFOptions", "SignGrowingOptions",
    "SignOptions", "TrustRegionOptions", "sign_estimator", "theory_step",
]

#: rgf-fixed on the unit sphere: g's gradient there scales with g itself (a distance of order 1 for images
#: in [0, 1]), so L₁ = 1 is the neutral order of magnitude when the problem does not know its L₁.
SPHERE_LIPSCHITZ = 1.0


Differences = Literal["forward", "central", "adaptive"]
#: The value-difference estimators the ``differences`` option names: one answer at the iterate and one per probe
#: (:func:`~zeroopt.estimators.forward_difference`); a pair per probe, on either side
#: (:func:`~zeroopt.estimators.central_difference`: twice the probes, no curvature term — for noisy answers); or
#: forward until the noise-aware radius widens β, central while it does (:class:`~zeroopt.AdaptiveDifferences`).
DIFFERENCES: dict[str, GradientEstimator | AdaptiveDifferences] = {
    "forward": forward_difference, "central": central_difference, "adaptive": AdaptiveDifferences()}


def check_differences(value: object, beta_above_noise: bool) -> None:
    """Raise a clear error unless ``value`` names an estimator of :data:`DIFFERENCES` that can run with the
    noise option as set."""
    if value not in DIFFERENCES:
        raise ValueError(f"differences must be one of {sorted(DIFFERENCES)}, got {value!r}")
    if value == "adaptive" and not beta_above_noise:
        raise ValueError("differences='adaptive' switches to central differences once the noise-aware radius widens "
                         "β: pass beta_above_noise=True as well (without it β is never widened)")


@dataclass(frozen=True)
class RGFOptions(DescentOptions):
    """``"rgf"``: paper's Algorithm 2 — forward differences averaged over q directions, OPT line search.

    ``use_best_probe`` moves to the best probe when it beats the line search (reference code);
    ``differences`` is ``"forward"`` (the paper's estimator) or ``"central"`` (:data:`DIFFERENCES`).
    """

    use_best_probe: bool = True
    differences: Differences = "forward"

    def validate(self) -> None:
        super().validate()
        check_differences(self.differences, self.beta_above_noise)


def _rgf_defaults(context: SolverContext) -> dict[str, Any]:
    if not context.unit_sphere:
        return {}
    return {**preset_for(context), "directions": "sphere", **unit_sphere_steps(context)}


@register_solver("rgf", RGFOptions, "Randomized Gradient-Free with q-averaging and backtracking line search",
                 defaults=_rgf_defaults)
def _make_rgf(opts: RGFOptions, ctx: SolverContext) -> Chain:
    return descent_solver("rgf", opts, DIFFERENCES[opts.differences], best_probe=opts.use_best_probe, context=ctx)


@dataclass(frozen=True)
class RGFFixedOptions(DescentOptions):
    """``"rgf-fixed"``: the same estimator with Nesterov–Spokoiny's theory step ``1/(4(d+4)L₁)``.

    ``lipschitz`` is L₁ (taken from the problem when it knows it). ``step`` defaults to the theory step;
    ``beta`` defaults to Theorem 1's scaling ``delta / ((d + 4) L₁)`` for the target accuracy ``delta``.
    """

    q: int = 1
    beta: float | None = None  # type: ignore[assignment]
    step: float | None = None  # type: ignore[assignment]
    line_search: LineSearch = "fixed"
    lipschitz: float | None = None
    delta: float = 1e-2

    def validate(self) -> None:
        check_positive("lipschitz", self.lipschitz, allow_none=True)
        check_positive("delta", self.delta)
        # The shared checks, with the two options that default to a theory value filled in for the check.
        filled = dataclasses.replace(self, beta=self.beta or 1.0, step=self.step or 1.0)
        DescentOptions.validate(filled)


def theory_step(dim: int, lipschitz: float) -> float:
    """Nesterov–Spokoiny's RGF step ``1 / (4 (d + 4) L₁)``."""
    return 1.0 / (4.0 * (dim + 4) * lipschitz)


def _rgf_fixed_defaults(context: SolverContext) -> dict[str, Any]:
    if not context.unit_sphere:
        return {}
    out: dict[str, Any] = {**preset_for(context), "directions": "sphere"}
    if context.lipschitz is None:
        out["lipschitz"] = SPHERE_LIPSCHITZ
    return out


@register_solver("rgf-fixed", RGFFixedOptions, "RGF with the theory step 1/(4(d+4)L1), as analysed by Theorem 1",
                 defaults=_rgf_fixed_defaults)
def _make_rgf_fixed(opts: RGFFixedOptions, ctx: SolverContext) -> Chain:
    lip = opts.lipschitz if opts.lipschitz is not None else ctx.lipschitz
    if lip is None and (opts.step is None or opts.beta is None):
        raise ValueError(
            "rgf-fixed needs the gradient's Lipschitz constant L1 for its theory step: pass lipschitz=L1 "
            "(or both step= and beta=), or minimize a zeroopt.problems problem, which knows its L1"
        )
    d = ctx.dim
    step = opts.step if opts.step is not None else theory_step(d, lip)  # type: ignore[arg-type]
    beta = opts.beta if opts.beta is not None else opts.delta / ((d + 4) * lip)  # type: ignore[operator]
    return descent_solver("rgf-fixed", dataclasses.replace(opts, step=step, beta=beta), forward_difference,
                          context=ctx)


@dataclass(frozen=True)
class CoordinateOptions(DescentOptions):
    """``"coordinate"``: zeroth-order coordinate descent on ``q`` coordinates per iteration.

    ``order`` is ``"random"`` (without replacement within an iteration) or ``"cyclic"``; ``differences``
    ``"forward"`` or ``"central"`` (:data:`DIFFERENCES`).
    """

    q: int = 10
    beta: float = 1e-4
    directions: str = "coordinate"
    order: Literal["random", "cyclic"] = "random"
    differences: Differences = "forward"

    def validate(self) -> None:
        super().validate()
        check_differences(self.differences, self.beta_above_noise)
        if self.order not in ("random", "cyclic"):
            raise ValueError(f"order must be 'random' or 'cyclic', got {self.order!r}")


def _coordinate_defaults(context: SolverContext) -> dict[str, Any]:
    if not context.unit_sphere:
        return {}
    return {"beta": preset_for(context)["beta"], **unit_sphere_steps(context)}


@register_solver("coordinate", CoordinateOptions, "Zeroth-order coordinate descent (random or cyclic coordinates)",
                 defaults=_coordinate_defaults)
def _make_coordinate(opts: CoordinateOptions, ctx: SolverContext) -> Chain:
    sampler = CoordinateDirections(cyclic=opts.order == "cyclic")
    return descent_solver("coordinate", opts, DIFFERENCES[opts.differences], sampler=sampler, best_probe=True,
                          context=ctx)


@dataclass(frozen=True)
class SignOptions(DescentOptions):
    """``"sign"``: Sign-OPT / ZO-signSGD — q one-bit comparisons per gradient estimate.

    ``baseline``: subtract the mean sign before averaging (``True``: HopSkipJump's estimator,
    :func:`~zeroopt.estimators.centered_sign_of_difference`), or the mean sign shrunk by its own noise
    (``"shrunk"``: :func:`~zeroopt.estimators.shrunk_centered_sign_of_difference`); off for ``"sign"``, which
    stays Sign-OPT's.

    ``probe_level``: what each probe is compared with (:func:`~zeroopt.estimators.probe_levels`): f(x)
    (``"value"``, Sign-OPT's), or for an objective that is a radius (the hard-label g) the level of the plane
    through the current boundary point perpendicular to x (``"tangent"``).
    """

    q: int = SIGN_OPT_K
    beta: float = REFERENCE_CODE_BETA
    directions: str = "sphere"
    baseline: bool | Literal["shrunk"] = False
    probe_level: ProbeLevel = "value"

    def validate(self) -> None:
        super().validate()
        if not (isinstance(self.baseline, bool) or self.baseline == "shrunk"):
            raise TypeError(f"baseline must be True, False or 'shrunk', got {self.baseline!r}")
        if self.probe_level not in PROBE_LEVELS:
            raise ValueError(f"probe_level must be one of {PROBE_LEVELS}, got {self.probe_level!r}")


def sign_estimator(opts: SignOptions) -> GradientEstimator:
    """The comparison estimator ``opts`` asks for: plain, with the mean sign as baseline, or with it shrunk —
    comparing each probe with the level ``opts.probe_level`` names."""
    if opts.baseline == "shrunk":
        estimator: GradientEstimator = shrunk_centered_sign_of_difference
    else:
        estimator = centered_sign_of_difference if opts.baseline else sign_of_difference
    return estimator if opts.probe_level == "value" else partial(estimator, level=opts.probe_level)


def _sign_defaults(context: SolverContext) -> dict[str, Any]:
    # Sign steps do not scale with d: the reference step and reset as they are (Sign-OPT's K and β stay).
    return {"step": REFERENCE_STEP, "step_reset": REFERENCE_STEP_RESET} if context.unit_sphere else {}


@register_solver("sign", SignOptions, "Sign-OPT-style descent: sign of each directional difference from a comparison",
                 defaults=_sign_defaults)
def _make_sign(opts: SignOptions, ctx: SolverContext) -> Chain:
    return descent_solver("sign", opts, sign_estimator(opts), context=ctx)


# sign-growing's settings, each written once with why it is set; what each was measured against, and the pages:
# docs/defaults.md.
#: First estimate's comparisons, growing like √t to Sign-OPT's K: a budget of a few hundred queries takes several steps.
GROWING_Q_START = 20
#: A run converges once its second half gained under 1%, so restarts spend what is left on another basin.
GROWING_MIN_PROGRESS = 0.01
#: First step on the sphere: the reference code's reset size (1.0, not its 0.2), as the first iterates are far out.
GROWING_STEP = REFERENCE_STEP_RESET
#: ε relative to g itself: absolute ε stalls late on models whose distances are small.
GROWING_RELATIVE_EPS = True
#: ε = β/100 (of g): an iterate's value is only the level its probes are compared with.
GROWING_EPS_PER_BETA = 1 / 100
#: Probes 0.01 rad wide: they follow the slope a step uses rather than the boundary's small wrinkles.
GROWING_BETA = 0.01
#: The semicircular step where the value is a radius: it brackets the best angle with one-query comparisons.
GROWING_RADIAL_STEP = "semicircle"
#: The mean sign shrunk by its noise as baseline: late, the few comparisons that disagree are the estimate.
GROWING_BASELINE = "shrunk"
#: Orthonormal probes within an estimate (q comparisons measure q distinct directions), from a low-frequency band on
#: images with sides beyond 32, which answer mostly to smooth changes (the rule: zeroopt.subspace.band_fraction).
GROWING_DIRECTIONS = "by-size"
#: Momentum once the steps keep overshooting (a zigzag across a narrow valley), none while they do not.
GROWING_MOMENTUM = 1.0
#: A share 0.3 of each probe's variance on the direction's largest coordinates, where the boundary depends most.
GROWING_PROBE_SHAPE = 0.3
#: A smooth radius starts with probes 0.04 rad wide and narrows to GROWING_BETA as its steps shorten ...
GROWING_WIDE_BETA = 4 * GROWING_BETA
#: ... at a quarter of the steps' running geometric mean ...
GROWING_BETA_PER_STEP = STEP_RADIUS_RATIO
#: ... comparing its probes with the tangent plane's level, which the wider β needs.
GROWING_RADIAL_LEVEL: ProbeLevel = "tangent"
#: A piecewise-constant radius (a tree ensemble's g) needs probes 0.5 rad wide, fixed, to compare across its stairs ...
GROWING_PIECEWISE_BETA = 0.5
#: ... at the tangent plane's level.
GROWING_PIECEWISE_LEVEL: ProbeLevel = "tangent"

#: sign-growing in each context: the options' own defaults on a plain objective, then each row whose traits the
#: context has, in order (``zeroopt.get_solver("sign-growing").describe(context)`` prints the chain they make).
SIGN_GROWING_CONTEXTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("unit_sphere", {"step": GROWING_STEP, "step_reset": REFERENCE_STEP_RESET, "eps_relative": GROWING_RELATIVE_EPS,
                     "beta": GROWING_BETA, "baseline": GROWING_BASELINE, "directions": GROWING_DIRECTIONS,
                     "momentum": GROWING_MOMENTUM}),
    ("adjustable_precision", {"eps_per_beta": GROWING_EPS_PER_BETA}),
    ("radial", {"line_search": GROWING_RADIAL_STEP}),
    ("radial smooth", {"probe_shape": GROWING_PROBE_SHAPE, "beta": GROWING_WIDE_BETA,
                       "beta_per_step": GROWING_BETA_PER_STEP, "beta_step_floor": GROWING_BETA / GROWING_WIDE_BETA,
                       "probe_level": GROWING_RADIAL_LEVEL}),
    ("radial piecewise_constant", {"beta": GROWING_PIECEWISE_BETA, "probe_level": GROWING_PIECEWISE_LEVEL}),
)


def _has_traits(context: SolverContext, traits: str) -> bool:
    """Whether ``context`` has every trait named (``"smooth"``: not ``piecewise_constant``)."""
    return all(not context.piecewise_constant if t == "smooth" else getattr(context, t) for t in traits.split())


@dataclass(frozen=True)
class SignGrowingOptions(SignOptions):
    """``"sign-growing"``: the sign estimator with √t probe growth (:class:`~zeroopt.parts.SqrtProbeGrowth`) from
    ``q_start`` comparisons to ``q`` — cheap rough steps early, precise ones later — and a run that crawls converges
    (``min_progress``), so restarts can look elsewhere. Its settings on the unit sphere, where the value is a
    radius, and where that radius is piecewise constant: :data:`SIGN_GROWING_CONTEXTS` (an explicit ``beta`` is the
    widest a smooth radius starts from; ``beta_per_step=None`` keeps it fixed)."""

    q_start: int | None = GROWING_Q_START
    min_progress: float | None = GROWING_MIN_PROGRESS


def _sign_growing_defaults(context: SolverContext) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for traits, settings in SIGN_GROWING_CONTEXTS:
        if _has_traits(context, traits):
            out.update(settings)
    return out


@register_solver("sign-growing", SignGrowingOptions,
                 "Sign-OPT-style descent whose comparisons per estimate grow like √t (cheap early steps)",
                 defaults=_sign_growing_defaults)
def _make_sign_growing(opts: SignGrowingOptions, ctx: SolverContext) -> Chain:
    return descent_solver("sign-growing", opts, sign_estimator(opts), context=ctx)


#: The trust-region solver keeps a dense n × n model Hessian and solves with it each iteration: above this d, refused.
MODEL_MAX_DIM = 2000


@dataclass(frozen=True)
class TrustRegionOptions:
    """``"trust-region"``: a quadratic model through the answers paid for, minimized in a trust region
    (:mod:`zeroopt.trust_region`; NEWUOA/BOBYQA/COBYQA's method without their bookkeeping).

    ``q``: points that repair the geometry after a step it failed; ``radius``: the first Δ (``None``: 0.1 ·
    max(‖x0‖∞, 1)); ``radius_min``: Δ at which the run converges; ``points``: points the model is fitted to
    (``None``: :func:`~zeroopt.trust_region.default_points`); ``eps``: the precision asked (``None``: the
    oracle's default). Not for iterates on the unit sphere, nor above :data:`MODEL_MAX_DIM` variables.
    """

    q: int = 1
    radius: float | None = None
    radius_min: float = 1e-8
    points: int | None = None
    eps: float | None = None

    def validate(self) -> None:
        check_positive("q", self.q, integer=True)
        check_positive("radius", self.radius, allow_none=True)
        check_positive("radius_min", self.radius_min)
        check_positive("eps", self.eps, allow_none=True)
        if self.points is not None and (isinstance(self.points, bool) or not isinstance(self.points, int)
                                        or self.points < 2):
            raise ValueError("points must be an integer of at least 2 (or None: trust_region.default_points), got "
                             f"{self.points!r}")


@register_solver("trust-region", TrustRegionOptions,
                 "Model-based trust region: a quadratic through the answers paid for, minimized in a ball")
def _make_trust_region(opts: TrustRegionOptions, ctx: SolverContext) -> Chain:
    if ctx.unit_sphere:
        raise ValueError("trust-region models a function on ℝⁿ: on the unit sphere (the hard-label attack's g(θ)) "
                         "its points leave the quadratic undetermined; use sign-growing (the attack's default), "
                         "rgf or coordinate there")
    if ctx.dim > MODEL_MAX_DIM:
        raise ValueError(f"trust-region keeps a dense {ctx.dim} × {ctx.dim} model: d = {ctx.dim} is above its "
                         f"{MODEL_MAX_DIM}; for high-dimensional problems use rgf, coordinate or sign-growing")
    parts = (FixedPrecision(opts.eps) if opts.eps is not None else None, ModelProbes(opts.q), GeometryProbes(),
             ModelEstimate(opts.radius, opts.points), ModelStep(), TrustStep(), BestProbe(),
             RadiusFloor(opts.radius_min))
    kept = tuple(p for p in parts if p is not None)
    options = (("eps",), ("q",), (), ("radius", "points"), (), (), (), ("radius_min",))
    named = tuple(o for p, o in zip(parts, options, strict=True) if p is not None)
    first = opts.radius if opts.radius is not None else RADIUS_SHARE
    return Chain("trust-region", kept, beta=first, step=first, options=named)
