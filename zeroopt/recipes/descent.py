"""What the descent recipes share: the checks of their settings, and the parts a setting or two choose between.

Each built-in descent solver is a recipe (:mod:`zeroopt.recipes.solvers`, :mod:`zeroopt.recipes.sign_solvers`): a
function whose signature holds its settings with their defaults and whose body is the literal :func:`~zeroopt.chain` of
its parts. Where a few settings together choose one part — ε fixed or following β, a sampler and the probe
shape that reorthonormalises it, the step rule ``line_search`` names with its factors — the choice is written
once here, as a function returning that part. A recipe of your own may use them.

Defaults follow the paper (Cheng et al., ICLR 2019) where it gives a value: q = 20 probe directions,
smoothing radius β = 0.005; the stall rule and line-search factors follow the authors' reference code
(step 0.2, ×2 / ×0.25, step floor 1e-4, reset to 1.0, β ← β/10, stop at β < 1e-8).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from functools import partial
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from ..core.base import DirectionSampler, Precision, SolverContext, StepRule
from ..core.constants import (
    PRESETS,
    REFERENCE_STEP,
    REFERENCE_STEP_RESET,
)
from ..core.stages import Estimate, FixedProbes, Part, Sample, Step
from ..estimate.differences import AdaptiveDifferences
from ..estimate.estimators import PROBE_LEVELS, central_difference, forward_difference
from ..estimate.unstated_noise import EstimatedNoise
from ..sample.counts import SqrtProbeGrowth
from ..sample.orthogonal import OrthogonalDirections
from ..sample.precision import FixedPrecision, PrecisionFollowsBeta, PrecisionFollowsValue
from ..sample.samplers import sampler_names
from ..sample.shaping import IterateShapedProbes
from ..step.noise import CENTRAL_NOISE_CEILING_RATIO, NOISE_CEILING_RATIO, RadiusAboveNoise
from ..step.radius_step import STEP_RADIUS_RATIO
from ..step.stepping import armijo_step, fixed_step, opt_line_search, semicircle_step

__all__ = [
    "DIFFERENCES", "ON_THE_SPHERE", "check_descent", "check_positive", "differences_part", "noise_aware_radius",
    "noise_radius", "precision",
    "preset_for", "probe_count", "sampled", "step_rule", "unit_sphere_steps",
]

LineSearch = Literal["opt", "armijo", "fixed", "semicircle"]
Differences = Literal["forward", "central", "adaptive"]
#: The built-in direction samplers' names (a registered sampler's name is accepted too: :func:`sampler_names`).
Directions = Literal["gaussian", "sphere", "coordinate", "cyclic", "orthogonal", "nearly-orthogonal", "by-size",
                     "low-frequency", "widening-low-frequency", "multi-scale", "widening-hedge"]
Retraction = Callable[[NDArray[np.float64]], NDArray[np.float64]] | None

#: Each step rule ``line_search`` names, and its keywords with the setting that sets each.
STEP_RULES: dict[str, tuple[StepRule, dict[str, str]]] = {
    "opt": (opt_line_search, {"grow": "grow", "shrink": "shrink", "coarse": "coarse_candidates"}),
    "semicircle": (semicircle_step, {"grow": "grow", "shrink": "shrink", "min_angle": "step_min"}),
    "armijo": (armijo_step, {"grow": "grow"}),
    "fixed": (fixed_step, {}),
}

#: On the unit sphere (the hard-label attack's g(θ)) the retraction keeps the iterate at its scale, +inf is an answer
#: of the objective (no boundary along a direction) rather than a failure, and the oracle states its precision: no
#: step bound, no narrowing of β on +inf, no repeats to estimate a noise (every descent recipe's ``*_in`` writes it).
ON_THE_SPHERE: dict[str, Any] = {"step_bound": None, "non_finite_shrink": None, "estimate_noise": False}

#: The value-difference estimates the ``differences`` setting names: one answer at the iterate and one per probe
#: (:func:`~zeroopt.estimate.estimators.forward_difference`); a pair per probe, on either side
#: (:func:`~zeroopt.estimate.estimators.central_difference`: twice the probes, no curvature term — for noisy answers);
#: or forward until the noise-aware radius widens β, central while it does (:class:`~zeroopt.AdaptiveDifferences`).
DIFFERENCES: dict[str, Part] = {"forward": Estimate(forward_difference), "central": Estimate(central_difference),
                                "adaptive": AdaptiveDifferences()}


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


_POSITIVE = ("q", "patience", "min_progress", "momentum", "probe_shape", "q_start", "history_span", "quasi_newton",
             "beta_per_step", "beta", "step", "step_reset", "grow", "shrink", "eps", "eps_per_beta",
             "coarse_candidates", "step_bound", "non_finite_shrink")
_INTEGER = ("q", "patience", "q_start", "history_span", "quasi_newton")
_MAY_BE_NONE = ("patience", "min_progress", "momentum", "probe_shape", "q_start", "history_span", "quasi_newton",
                "beta_per_step", "step_reset", "eps", "eps_per_beta", "step_bound", "non_finite_shrink")
_FLAGS = ("eps_relative", "history_prior", "skip_flat", "beta_balance", "beta_above_noise", "estimate_noise")


def check_descent(settings: Mapping[str, Any]) -> None:
    """Raise ``TypeError``/``ValueError`` naming the first invalid one of a descent recipe's ``settings`` (a
    recipe passes its ``locals()``; names it does not have are not checked)."""
    for name in (n for n in _POSITIVE if n in settings):
        check_positive(name, settings[name], integer=name in _INTEGER, allow_none=name in _MAY_BE_NONE)
    get = settings.get
    if get("probe_shape") is not None and get("probe_shape") > 1:
        raise ValueError(f"probe_shape is a share of each probe's variance, in (0, 1]; got {get('probe_shape')!r}")
    if "beta_step_floor" in settings and not 0 < get("beta_step_floor") <= 1:
        raise ValueError(f"beta_step_floor is a share of beta, in (0, 1]; got {get('beta_step_floor')!r}")
    if get("coarse_candidates", 1) < 1:
        raise ValueError(f"coarse_candidates must be >= 1 (a multiple of ε), got {get('coarse_candidates')!r}")
    line_search = get("line_search", "opt")
    if line_search not in STEP_RULES:
        raise ValueError(f"line_search must be 'opt', 'armijo', 'fixed' or 'semicircle', got {line_search!r}")
    if get("coarse_candidates", 1) != 1 and line_search != "opt":
        raise ValueError(
            f"coarse_candidates ranks the OPT line search's candidates; line_search is {line_search!r}: "
            "pass line_search='opt' as well (the semicircular step evaluates a single angle already)")
    if get("non_finite_shrink") is not None and not get("non_finite_shrink") < 1:
        raise ValueError(f"non_finite_shrink is a factor of β, in (0, 1); got {get('non_finite_shrink')!r}")
    if "beta_decay" in settings and not 0 < get("beta_decay") <= 1:
        raise ValueError(f"beta_decay must be in (0, 1], got {get('beta_decay')!r}")
    if "directions" in settings and get("directions") not in sampler_names():
        raise ValueError(f"unknown direction distribution {get('directions')!r}; choose one of {sampler_names()}")
    for name in (n for n in _FLAGS if n in settings):
        if not isinstance(settings[name], bool):
            raise TypeError(f"{name} must be True or False, got {settings[name]!r}")
    if get("history_prior") and line_search == "fixed":
        # The filter's mean lags behind a gradient that shrinks toward the minimum, and a fixed step never
        # checks that it gained: on a quadratic, rgf-fixed with the prior diverges.
        raise ValueError("history_prior needs a step rule that checks its gain ('opt', 'armijo' or "
                         "'semicircle'): with line_search='fixed' the prior's lag makes the steps overshoot")
    if get("quasi_newton") is not None and line_search == "fixed":
        raise ValueError("quasi_newton needs a step rule that checks its gain ('opt', 'armijo' or 'semicircle'): "
                         "with line_search='fixed' a step along a wrong curvature estimate is taken unchecked")
    if get("retract") is not None and not callable(get("retract")):
        raise TypeError("retract must be a callable x -> x or None")
    _check_estimator(settings)


def _check_estimator(settings: Mapping[str, Any]) -> None:
    """The estimator's own settings: ``differences`` (and the noise rule it may need), ``baseline``,
    ``probe_level``, coordinate descent's ``order``."""
    if "differences" in settings:
        value = settings["differences"]
        if value not in DIFFERENCES:
            raise ValueError(f"differences must be one of {sorted(DIFFERENCES)}, got {value!r}")
        if value == "adaptive" and not settings.get("beta_above_noise"):
            raise ValueError("differences='adaptive' switches to central differences once the noise-aware radius "
                             "widens β: pass beta_above_noise=True as well (without it β is never widened)")
    if "order" in settings and settings["order"] not in ("random", "cyclic"):
        raise ValueError(f"order must be 'random' or 'cyclic', got {settings['order']!r}")
    baseline = settings.get("baseline", False)
    if not (isinstance(baseline, bool) or baseline == "shrunk"):
        raise TypeError(f"baseline must be True, False or 'shrunk', got {baseline!r}")
    if settings.get("probe_level", "value") not in PROBE_LEVELS:
        raise ValueError(f"probe_level must be one of {PROBE_LEVELS}, got {settings['probe_level']!r}")


def precision(eps: float | None, eps_per_beta: float | None, eps_relative: bool) -> Precision | None:
    """The precision part: ``ε = eps_per_beta · β`` (times the current value with ``eps_relative``) when
    ``eps_per_beta`` is set, else the fixed ``eps`` (``None``: the oracle's default, no part)."""
    if eps_per_beta is not None:
        return PrecisionFollowsValue(eps_per_beta) if eps_relative else PrecisionFollowsBeta(eps_per_beta)
    return None if eps is None else FixedPrecision(eps)


def probe_count(q: int, q_start: int | None) -> FixedProbes | SqrtProbeGrowth:
    """``q`` probes every iteration, or (with ``q_start``) growing like √t from ``q_start`` to ``q``; a ``q`` at or
    below ``q_start`` is a constant ``q``."""
    return FixedProbes(int(q)) if q_start is None else SqrtProbeGrowth(min(int(q_start), int(q)), int(q))


def sampled(sampler: DirectionSampler, probe_shape: float | None) -> tuple[Sample, IterateShapedProbes | None]:
    """The sample part and, with ``probe_shape``, the probe shape after it (:class:`IterateShapedProbes`).

    An orthonormal sampler's shaped probes are orthonormalised again by the shape, with the sampler's own rule
    (``min_ratio``); the sampler then leaves its blocks to that pass (``deferred``): one Gram-Schmidt pass gives
    the same directions as two.
    """
    if probe_shape is None:
        return Sample(sampler), None
    orthogonal = isinstance(sampler, OrthogonalDirections)
    shape = IterateShapedProbes(float(probe_shape), orthonormal=orthogonal,
                                min_ratio=sampler.min_ratio if orthogonal else 0.0)
    return Sample(replace(sampler, deferred=True) if orthogonal else sampler), shape


def step_rule(line_search: LineSearch, *, grow: float, shrink: float, coarse_candidates: float,
              step_min: float) -> Step:
    """The step part of the rule ``line_search`` names, with the factors it takes bound (:data:`STEP_RULES`)."""
    settings = {"grow": grow, "shrink": shrink, "coarse_candidates": coarse_candidates, "step_min": step_min}
    rule, keywords = STEP_RULES[line_search]
    return Step(partial(rule, **{k: float(settings[o]) for k, o in keywords.items()}) if keywords else rule)


def differences_part(differences: Differences, estimate_noise: bool = False) -> Part:
    """The estimate part ``differences`` names (:data:`DIFFERENCES`), with the answers' noise estimated where the
    oracle states none (:class:`~zeroopt.estimate.unstated_noise.EstimatedNoise`) when ``estimate_noise``."""
    part = DIFFERENCES[differences]
    return EstimatedNoise(part) if estimate_noise else part


def noise_aware_radius(differences: Differences, beta_above_noise: bool,
                       estimate_noise: bool) -> RadiusAboveNoise | None:
    """The noise-aware radius a descent recipe takes: weighing every precision with ``beta_above_noise``
    (:func:`noise_radius`), only the noise estimated where the oracle states none with ``estimate_noise`` alone, and
    none without either."""
    if beta_above_noise:
        return noise_radius(differences)
    if not estimate_noise:
        return None
    return replace(noise_radius(differences), only_estimated=True, ceiling_ratio=CENTRAL_NOISE_CEILING_RATIO)


def noise_radius(differences: Differences = "forward") -> RadiusAboveNoise:
    """The noise-aware radius for the differences a solver takes: forward ones get
    :data:`~zeroopt.step.noise.NOISE_CEILING_RATIO` and no step share (their β f″ term a wide β biases); central ones
    and the adaptive switch, which takes them while β is widened, the wider
    :data:`~zeroopt.step.noise.CENTRAL_NOISE_CEILING_RATIO` and β at least a quarter
    (:data:`~zeroopt.step.radius_step.STEP_RADIUS_RATIO`) of the step."""
    if differences == "forward":
        return RadiusAboveNoise(ceiling_ratio=NOISE_CEILING_RATIO, step_share=None)
    return RadiusAboveNoise(ceiling_ratio=CENTRAL_NOISE_CEILING_RATIO, step_share=STEP_RADIUS_RATIO)


def preset_for(context: SolverContext) -> dict[str, float]:
    """q and β of the constant set a :class:`~zeroopt.SolverContext` asks for (the paper's when it names none)."""
    return dict(PRESETS[context.constants or "paper"])


def unit_sphere_steps(context: SolverContext) -> dict[str, float]:
    """The reference code's step 0.2 and reset 1.0, divided by d, for unit-norm probe directions.

    The reference code's sphere estimator was unscaled; zeroopt's is unbiased (scaled by d), so the same
    moves take steps divided by d.
    """
    return {"step": REFERENCE_STEP / context.dim, "step_reset": REFERENCE_STEP_RESET / context.dim}
