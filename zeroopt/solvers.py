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
from .directions import CoordinateDirections
from .estimators import (
    PROBE_LEVELS,
    GradientEstimator,
    ProbeLevel,
    centered_sign_of_difference,
    forward_difference,
    shrunk_centered_sign_of_difference,
    sign_of_difference,
)
from .radius_step import STEP_RADIUS_RATIO
from .registry import SolverContext, register_solver
from .solver import ComposedSolver

__all__ = [
    "CoordinateOptions", "RGFFixedOptions", "RGFOptions", "SignGrowingOptions", "SignOptions", "sign_estimator",
    "theory_step",
]

SIGN_OPT_K = 200
#: rgf-fixed on the unit sphere: g's gradient there scales with g itself (a distance of order 1 for images
#: in [0, 1]), so L₁ = 1 is the neutral order of magnitude when the problem does not know its L₁.
SPHERE_LIPSCHITZ = 1.0


@dataclass(frozen=True)
class RGFOptions(DescentOptions):
    """``"rgf"``: paper's Algorithm 2 — forward differences averaged over q directions, OPT line search.

    ``use_best_probe`` moves to the best probe when it beats the line search (reference code).
    """

    use_best_probe: bool = True


def _rgf_defaults(context: SolverContext) -> dict[str, Any]:
    if not context.unit_sphere:
        return {}
    return {**preset_for(context), "directions": "sphere", **unit_sphere_steps(context)}


@register_solver("rgf", RGFOptions, "Randomized Gradient-Free with q-averaging and backtracking line search",
                 defaults=_rgf_defaults)
def _make_rgf(opts: RGFOptions, ctx: SolverContext) -> ComposedSolver:
    return descent_solver("rgf", opts, forward_difference, best_probe=opts.use_best_probe, context=ctx)


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
def _make_rgf_fixed(opts: RGFFixedOptions, ctx: SolverContext) -> ComposedSolver:
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

    ``order`` is ``"random"`` (without replacement within an iteration) or ``"cyclic"``.
    """

    q: int = 10
    beta: float = 1e-4
    directions: str = "coordinate"
    order: Literal["random", "cyclic"] = "random"

    def validate(self) -> None:
        super().validate()
        if self.order not in ("random", "cyclic"):
            raise ValueError(f"order must be 'random' or 'cyclic', got {self.order!r}")


def _coordinate_defaults(context: SolverContext) -> dict[str, Any]:
    if not context.unit_sphere:
        return {}
    return {"beta": preset_for(context)["beta"], **unit_sphere_steps(context)}


@register_solver("coordinate", CoordinateOptions, "Zeroth-order coordinate descent (random or cyclic coordinates)",
                 defaults=_coordinate_defaults)
def _make_coordinate(opts: CoordinateOptions, ctx: SolverContext) -> ComposedSolver:
    sampler = CoordinateDirections(cyclic=opts.order == "cyclic")
    return descent_solver("coordinate", opts, forward_difference, sampler=sampler, best_probe=True, context=ctx)


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
def _make_sign(opts: SignOptions, ctx: SolverContext) -> ComposedSolver:
    return descent_solver("sign", opts, sign_estimator(opts), context=ctx)


#: sign-growing's first estimate: 20 comparisons, growing like √t to Sign-OPT's K (HopSkipJump grows from
#: 100 the same way; 20 lets a budget of a few hundred queries take several steps). q reaches K = 200 at
#: iteration 99, after Σ ceil(20 √(t + 1)) ≈ 13.3k comparisons: below about 14k queries a larger cap changes nothing.
GROWING_Q_START = 20
#: sign-growing's first step on the unit sphere: the size the reference code resets its step to (not its
#: initial 0.2): the first iterates are far from the optimum, where a step 0.2 needs several doublings (each an
#: evaluation of the objective) before it moves as far as the line search wants.
GROWING_STEP = REFERENCE_STEP_RESET
#: sign-growing converges once the second half of a run gained less than 1%, so that the attack's restarts
#: (``zeroopt.solve_many`` with fresh starts) spend what is left on another basin rather than on a crawl.
GROWING_MIN_PROGRESS = 0.01
#: sign-growing on the unit sphere asks for ε relative to g itself (:class:`~zeroopt.parts.PrecisionFollowsValue`):
#: with ε = β/500 absolute, late iterates on a model whose distances are small (CIFAR-10: g ≈ 0.06) compare values
#: that differ by about ε, and stall (benchmarks/results/ablation/suite_tags_relprec.md, remove-one/).
GROWING_RELATIVE_EPS = True
#: sign-growing's precision on the unit sphere, with an oracle of adjustable precision: ε = β/100 (relative to g
#: with :data:`GROWING_RELATIVE_EPS`), five times the reference code's β/500. The value of an iterate matters
#: only as the level its probes are compared with, and a probe at radius β differs from it by about
#: β·|∇g·u|, most of them far more than β/100; each search to that precision costs about log₂5 ≈ 2.3 queries
#: fewer (the semicircular step refines one to ε every iteration; the initial search's bisection too). In the
#: suite harness, per input (median ratio): 0.97-1.00 on the CNNs up to 2k; 0.98-1.00 from 4k to 20k on both
#: untargeted CNN experiments and CIFAR-10 targeted; level on MNIST targeted from 4k (1.000-1.007) and on both
#: tree ensembles (0.97-1.01); batched, GBDT MNIST from a 32k run's race was 3-8% higher from 8k
#: (benchmarks/results/ablation/value-precision/).
GROWING_EPS_PER_BETA = 1 / 100
#: sign-growing's probe radius on the unit sphere: 0.01 rad, ten times Sign-OPT's β = 0.001 (``SignOptions``) —
#: where the value is a smooth radius, the narrowest it follows the steps down to (:data:`GROWING_WIDE_BETA`).
#: Measured over 0.0003-0.1 on both CNNs and both tree ensembles (benchmarks/results/ablation/beta/): early
#: iterates move by 0.2-1 rad, and probes 0.001 rad apart likely resolve the boundary's small-scale wrinkles rather
#: than the slope such a step follows; a tree ensemble's g jumps wherever the ray's first crossing changes leaf,
#: and needs the wider radius throughout (a schedule back to 0.001 lost its gains).
GROWING_BETA = 0.01
#: sign-growing's step where the objective is a radius (``SolverContext(radial=True)``, the hard-label g):
#: the semicircular search (:func:`~zeroopt.linesearch.semicircle_step`), which brackets the best angle with
#: one-query comparisons where the OPT line search evaluates every candidate to ε
#: (benchmarks/results/ablation/semicircle/).
GROWING_RADIAL_STEP = "semicircle"
#: sign-growing's baseline on the unit sphere: the mean sign shrunk by its noise
#: (:func:`~zeroopt.estimators.shrunk_centered_sign_of_difference`). Late in an attack almost every comparison at
#: radius β finds a higher value and the baseline keeps the few that disagree as the estimate; early, with the
#: comparisons balanced, it subtracts little or nothing. Per input 0-2% lower from 8k on three of the four CNN
#: experiments, up to 5% higher at 500-2k on CIFAR-10 targeted (benchmarks/results/ablation/direction/ and
#: suite_tags_direction.md); momentum with it cost CIFAR-10 targeted more and is not on.
GROWING_BASELINE = "shrunk"
#: sign-growing's probes on the unit sphere: orthonormal within each estimate (:class:`~zeroopt.OrthogonalDirections`),
#: so q comparisons measure q distinct directions (the sign estimate's cosine to a structureless gradient at q = 200,
#: d = 784: 0.397 against 0.371, benchmarks/results/theory/estimators/). In the attack, per input 0.98-0.99 on
#: MNIST untargeted from 1k to 8k and 0.99-1.00 targeted (two seeds); on CIFAR-10, where q/d is a quarter of
#: MNIST's, within 1% either way up to 2k (benchmarks/results/ablation/orthogonal/, suite_tags_orthogonal.md).
GROWING_DIRECTIONS = "orthogonal"
#: sign-growing's direction rule on the unit sphere: heavy-ball momentum weighted by how often the steps overshoot
#: (:class:`~zeroopt.momentum.AdaptiveMomentum` with its own ``max_weight`` = 1): nothing while the estimates turn
#: back against the last direction no more often than they agree with it, more once they keep turning back — the
#: zigzag across a narrow valley, which late hard-label runs on an MNIST CNN show. In the suite harness and on models
#: no default was chosen on (benchmarks/results/ablation/momentum/).
GROWING_MOMENTUM = 1.0
#: sign-growing's probes where the value is a radius: a share 0.3 of each probe's variance in proportion to the
#: direction's own |θᵢ| (:class:`~zeroopt.shaping.IterateShapedProbes`): the largest coordinates of the
#: perturbation are where the boundary depends most on the input (at a minimum θ lies along its normal), so the
#: comparisons measure more of the gradient there. 0.3 is the first of the two shares tried (0.5 was lower at
#: 250-2k on MNIST targeted and higher late), not a tuned constant (benchmarks/results/ablation/probe-shape/).
#: Not where the value is piecewise constant (``SolverContext(piecewise_constant=True)``, a tree ensemble's g):
#: there it cost GBDT MNIST 11% per input at 11.9k — a tree's boundary moves with the features it splits on
#: next, which the perturbation need not use yet.
GROWING_PROBE_SHAPE = 0.3
#: sign-growing's probe radius where the value is a piecewise-constant radius (``SolverContext(radial=True,
#: piecewise_constant=True)``, a tree ensemble's g): 0.5 rad, fifty times :data:`GROWING_BETA`. Such a g moves only
#: where the ray's first crossing changes leaf, so a narrow probe mostly ties with the iterate's own stair; a wide one
#: compares across many stairs and follows their trend. Swept over 0.01-1 rad on both suite tree ensembles (GBDT
#: MNIST per input 0.57-0.85 of β 0.01 at 1k-32k, HIGGS 0.86-0.99; at 1 rad HIGGS worse, GBDT MNIST mixed) and
#: checked on two tree models no default was chosen on, scikit-learn digits' LightGBM and random forest (0.57-0.79
#: at 250-4k; benchmarks/results/ablation/wide-tangent/trees-beta/); in the suite harness, runs made with each
#: budget, per input 0.54-0.90 on GBDT MNIST and 0.82-1.00 on HIGGS
#: (benchmarks/results/ablation/suite_tags_trees_beta.md).
#: The precision stays β/100 of the value, coarser at this β: at β 0.01's precision it did less well from 1k.
GROWING_PIECEWISE_BETA = 0.5
#: ... and what its probes are compared with there: the tangent plane's level
#: (:func:`~zeroopt.estimators.probe_levels`). At the wider β the sphere's offset f·β²/2 no longer cancels the
#: bracket's ε/2 and the value level would read most probes as higher whatever their direction.
GROWING_PIECEWISE_LEVEL: ProbeLevel = "tangent"
#: sign-growing's probe radius where the value is a smooth radius (the hard-label g of a neural network), at the
#: start: 0.04 rad, four times :data:`GROWING_BETA`, narrowing to :data:`GROWING_BETA` as the steps shorten
#: (:data:`GROWING_BETA_PER_STEP`). Early steps move 0.2-0.3 rad and a wider ball of probes follows the slope they
#: use; late ones move a few hundredths, where β 0.04 throughout was up to 0.4% higher per input on MNIST targeted
#: (benchmarks/results/ablation/wide-tangent/mid-4k/). Batched on the suite's first inputs, per input against β 0.01
#: throughout: 0.94-1.00 at 250-2k and 0.97-1.00 from 4k on all four CNN experiments
#: (benchmarks/results/ablation/radius-step/).
GROWING_WIDE_BETA = 4 * GROWING_BETA
#: ... as a share of the steps (:class:`~zeroopt.radius_step.RadiusFollowsStep`): a quarter of their running
#: geometric mean, so β holds at :data:`GROWING_WIDE_BETA` while the steps are above 0.16 rad.
GROWING_BETA_PER_STEP = STEP_RADIUS_RATIO
#: ... and what those probes are compared with: the tangent plane's level, which the wider β needs (the sphere's
#: offset f·β²/2 no longer cancels the bracket's ε/2) and which is level with the value's at β 0.01
#: (benchmarks/results/ablation/probe-level/).
GROWING_RADIAL_LEVEL: ProbeLevel = "tangent"


@dataclass(frozen=True)
class SignGrowingOptions(SignOptions):
    """``"sign-growing"``: the sign estimator with √t probe growth (:class:`~zeroopt.parts.SqrtProbeGrowth`):
    ``q_start`` comparisons at first, growing like √t to ``q`` — cheap rough steps early, precise ones later —
    and a run that crawls converges (``min_progress``), so restarts can look elsewhere. On the unit sphere its
    probes are wider than Sign-OPT's (β = :data:`GROWING_BETA`), its precision relative to g and coarser
    (:data:`GROWING_EPS_PER_BETA`), its signs
    centred on a shrunk baseline (:data:`GROWING_BASELINE`), its direction carries adaptive momentum
    (:data:`GROWING_MOMENTUM`); where the value is a radius
    (``SolverContext(radial=True)``) it steps on the semicircle (:data:`GROWING_RADIAL_STEP`), compares its probes
    with the tangent plane's level, shapes them by the direction (:data:`GROWING_PROBE_SHAPE`) and draws them
    :data:`GROWING_WIDE_BETA` wide until its steps shorten, then narrower, down to :data:`GROWING_BETA`
    (:data:`GROWING_BETA_PER_STEP`; an explicit ``beta`` is then the widest, and ``beta_per_step=None`` keeps β
    fixed) — or, where that radius is piecewise constant (a tree ensemble's g), draws them wider still and fixed
    (:data:`GROWING_PIECEWISE_BETA`) at the tangent plane's level (:data:`GROWING_PIECEWISE_LEVEL`)."""

    q_start: int | None = GROWING_Q_START
    min_progress: float | None = GROWING_MIN_PROGRESS


def _sign_growing_defaults(context: SolverContext) -> dict[str, Any]:
    if not context.unit_sphere:
        return {}
    out = {**_sign_defaults(context), "step": GROWING_STEP, "eps_relative": GROWING_RELATIVE_EPS,
           "beta": GROWING_BETA, "baseline": GROWING_BASELINE,
           "directions": GROWING_DIRECTIONS, "momentum": GROWING_MOMENTUM}
    if context.adjustable_precision:
        out["eps_per_beta"] = GROWING_EPS_PER_BETA
    if context.radial:
        out["line_search"] = GROWING_RADIAL_STEP
        if context.piecewise_constant:
            out.update(beta=GROWING_PIECEWISE_BETA, probe_level=GROWING_PIECEWISE_LEVEL)
        else:
            out.update(probe_shape=GROWING_PROBE_SHAPE, beta=GROWING_WIDE_BETA, beta_per_step=GROWING_BETA_PER_STEP,
                       beta_step_floor=GROWING_BETA / GROWING_WIDE_BETA, probe_level=GROWING_RADIAL_LEVEL)
    return out


@register_solver("sign-growing", SignGrowingOptions,
                 "Sign-OPT-style descent whose comparisons per estimate grow like √t (cheap early steps)",
                 defaults=_sign_growing_defaults)
def _make_sign_growing(opts: SignGrowingOptions, ctx: SolverContext) -> ComposedSolver:
    return descent_solver("sign-growing", opts, sign_estimator(opts), context=ctx)
