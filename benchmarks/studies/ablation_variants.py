"""The rows of ``benchmarks.studies.ablation``: each variant's solver and the attack options it pins.

Each row names every option its measurement depends on, so a row keeps its meaning — and its cached runs stay
valid — whatever the defaults become; the comments say which parts each group of rows adds.
"""

from __future__ import annotations

from typing import Any

from applications.hardlabel.boundary import GALLOPING_GROWTH
from applications.hardlabel.config import CHEAP_START, REFERENCE_START, AttackConfig
from zeroopt.core.constants import REFERENCE_CODE_BETA, REFERENCE_EPS_PER_BETA, REFERENCE_STEP
from zeroopt.recipes.registry import recipe_defaults
from zeroopt.recipes.sign_solvers import sign_growing_on_radius
from zeroopt.step.radius_step import STEP_RADIUS_FLOOR_RATIO, STEP_RADIUS_RATIO

#: sign-growing's settings for the attack as its recipe writes them; the fixed-β rows were measured at the β a
#: smooth radius's probes narrow to.
_ON_RADIUS = recipe_defaults(sign_growing_on_radius)
GROWING_BETA = _ON_RADIUS["beta"] * _ON_RADIUS["beta_step_floor"]
GROWING_EPS_PER_BETA, GROWING_PROBE_SHAPE, GROWING_STEP = (_ON_RADIUS[k] for k in ("eps_per_beta", "probe_shape",
                                                                                     "step"))

# The reference code's start and the cheap start (the pieces of applications.hardlabel's REFERENCE_START and
# CHEAP_START) as the flat settings each row names.
_REFERENCE = AttackConfig(**REFERENCE_START).settings(
    "initial_directions", "initial_selection", "n_initial", "local_growth", "n_uniform", "race_iterations",
    "race_starts", "prune")
_CHEAP = AttackConfig(**CHEAP_START).settings(
    "initial_directions", "initial_selection", "n_initial", "n_uniform", "race_iterations", "race_starts")
# The rows without the wider probes keep Sign-OPT's β = 0.001.
SIGN_OPT_BETA: dict[str, Any] = {"beta": REFERENCE_CODE_BETA}
# The cheap start of the rows that name no start of their own: the knock-out tournament (whatever the cheap
# start's selection is) and one initial search (whatever its race is). The same start under both names.
_TOURNAMENT_START = {**_CHEAP, "initial_selection": "tournament", "race_starts": 1}
_ONE_START = _TOURNAMENT_START
# The rows without the semicircular step keep the OPT line search.
_LINE_SEARCH = {**_ONE_START, "line_search": "opt"}
_HISTORY = {**_LINE_SEARCH, **SIGN_OPT_BETA}  # the cheap start, with Sign-OPT's β and line search
# The record-start default (shrunk baseline, orthogonal probes, record start, one search), which the rows below
# add one part to.
_RECORD_DEFAULT = {**_ONE_START, "baseline": "shrunk", "directions": "orthogonal", "initial_selection": "record"}
# That default with pruning and the race for untargeted attacks, then with precision β/100, which the rows below
# add one part to.
_RACE_DEFAULT = {**_RECORD_DEFAULT, "prune": True, "race_starts": "untargeted"}
_PRECISION_DEFAULT = {**_RACE_DEFAULT, "eps_per_beta": GROWING_EPS_PER_BETA}
_MOMENTUM_DEFAULT = {**_PRECISION_DEFAULT, "momentum": 1.0}  # the adaptive-momentum default

# Each variant adds one part to the one before it, then the last rows remove one part at a time.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "sign (reference start)": ("sign", dict(_REFERENCE)),
    "+ low-frequency start": ("sign", {**_REFERENCE, "initial_directions": "low-frequency"}),
    "+ tournament": ("sign", {**_REFERENCE, "initial_directions": "low-frequency",
                              "initial_selection": "tournament"}),
    "+ 30 candidates": ("sign", dict(_TOURNAMENT_START)),
    "+ √t probes (sign-growing)": ("sign-growing", dict(_HISTORY)),
    "sign-growing with Gaussian start": ("sign-growing", {**_HISTORY, "initial_directions": "gaussian"}),
    "sign-growing with low-frequency probes": ("sign-growing", {**_HISTORY, "directions": "low-frequency"}),
    "sign-growing with multi-scale start": ("sign-growing", {**_HISTORY, "initial_directions": "multi-scale"}),
    "sign-growing + fresh restarts": ("sign-growing", {**_HISTORY, "fresh_restarts": True}),
    "sign-growing + fresh restarts + min_progress 1%": ("sign-growing", {**_HISTORY, "fresh_restarts": True,
                                                                         "min_progress": 0.01}),
    # The boundary search and the start (the cheap start includes the galloping search), with the absolute ε = β/500
    # they were measured with; then the relative precision (sign-growing's default on the unit sphere).
    "sign-growing (fixed-ratio search; first step 0.2)": ("sign-growing", {**_HISTORY, "local_growth": 1.0,
                                                                             "step": 0.2, "eps_relative": False}),
    "+ galloping search": ("sign-growing", {**_HISTORY, "step": 0.2, "eps_relative": False}),
    "+ first step 1.0": ("sign-growing", {**_HISTORY, "eps_relative": False}),
    "first step 1.0 without the galloping search": ("sign-growing", {**_HISTORY, "local_growth": 1.0,
                                                                      "eps_relative": False}),
    "+ relative precision": ("sign-growing", dict(_HISTORY)),
    "default with Sign-OPT's β = 0.001": ("sign-growing", dict(_HISTORY)),
    "+ wider probes: β 0.01": ("sign-growing", dict(_LINE_SEARCH)),
    # (the β sweep and the coarse candidates: "default" here is the one with the OPT line search)
    "default with β 0.0003": ("sign-growing", {**_LINE_SEARCH, "beta": 0.0003}),
    "default with β 0.003": ("sign-growing", {**_LINE_SEARCH, "beta": 0.003}),
    "default with β 0.03": ("sign-growing", {**_LINE_SEARCH, "beta": 0.03}),
    "default with β 0.1": ("sign-growing", {**_LINE_SEARCH, "beta": 0.1}),
    "default + coarse line-search candidates": ("sign-growing", {**_LINE_SEARCH, "coarse_candidates": 256.0}),
    "+ semicircular step": ("sign-growing", dict(_ONE_START)),
    "default + race between starts": ("sign-growing", {**_TOURNAMENT_START, "race_starts": None}),
    # Parts that change the direction a step follows: the sign estimator's baseline
    # (zeroopt.centered_sign_of_difference) and momentum weighted by how often steps overshoot
    # (zeroopt.AdaptiveMomentum).
    "default + baseline (centred signs)": ("sign-growing", {**_ONE_START, "baseline": True}),
    "default + adaptive momentum": ("sign-growing", {**_ONE_START, "momentum": 1.0}),
    "default + baseline + adaptive momentum": ("sign-growing", {**_ONE_START, "baseline": True, "momentum": 1.0}),
    # the baseline shrunk by its own noise: none while the comparisons are balanced
    "default + shrunk baseline + adaptive momentum": ("sign-growing", {**_ONE_START, "baseline": "shrunk",
                                                                       "momentum": 1.0}),
    "default + shrunk baseline": ("sign-growing", {**_ONE_START, "baseline": "shrunk"}),
    # low-frequency probes that widen to the full space (zeroopt.WideningLowFrequency), half
    # of them (the "widening-hedge" mixture) or all; the previous directions as a prior (zeroopt.HistoryPrior)
    "default + history prior": ("sign-growing", {**_ONE_START, "baseline": "shrunk", "history_prior": True}),
    "default + widening low-frequency probes": ("sign-growing", {**_ONE_START, "baseline": "shrunk",
                                                                 "directions": "widening-low-frequency"}),
    "default + widening hedge probes": ("sign-growing", {**_ONE_START, "baseline": "shrunk",
                                                         "directions": "widening-hedge"}),
    # the q probes of an estimate orthonormal (zeroopt.OrthogonalDirections)
    "default + orthogonal probes": ("sign-growing", {**_ONE_START, "baseline": "shrunk", "directions": "orthogonal"}),
    # the record search start (applications/hardlabel/record.py)
    "default + record start": ("sign-growing", dict(_RECORD_DEFAULT)),
    # the perturbation pruned before the budget ends (zeroopt.pruning; attack(polish=Polish(prune=True)))
    "default + pruning": ("sign-growing", {**_RECORD_DEFAULT, "prune": True}),
    # the race between independent starts for untargeted attacks (race_starts="untargeted")
    "default + race for untargeted attacks": ("sign-growing", dict(_RACE_DEFAULT)),
    # sign-growing's precision β/100 of the value instead of the reference code's β/500
    "default + precision β/100": ("sign-growing", dict(_PRECISION_DEFAULT)),
    # (measured, not the default) the pruning polish 50 queries before the budget ends, not 100
    "default + polish reserve 50": ("sign-growing", {**_PRECISION_DEFAULT, "polish_reserve": 50}),
    # the race's winner goes on with its run's state (zeroopt.RaceWinner)
    "default + race winner keeps its state": ("sign-growing", {**_PRECISION_DEFAULT, "race_keeps_state": True}),
    # each probe compared with the tangent plane's level (zeroopt.estimate.estimators.probe_levels)
    "default + tangent-plane probe levels": ("sign-growing", {**_PRECISION_DEFAULT, "probe_level": "tangent"}),
    # the adaptive-momentum default, and on it probes shaped by the direction (zeroopt.IterateShapedProbes,
    # sign-growing's default where the value is a radius)
    "default + adaptive momentum (β/100)": ("sign-growing", dict(_MOMENTUM_DEFAULT)),
    "+ probes shaped by the direction": ("sign-growing", {**_MOMENTUM_DEFAULT, "probe_shape": GROWING_PROBE_SHAPE}),
    # probes kept off the pixels whose point lies past a bound, which are pulled back a little
    "default + probes off pixels past a bound": ("sign-growing", {**_PRECISION_DEFAULT, "skip_flat": True}),
    "default + record start with 50 candidates": ("sign-growing", {**_RECORD_DEFAULT, "n_initial": 50}),
    "default with absolute precision": ("sign-growing", {**_ONE_START, "eps_relative": False}),
    "default with the halving tournament": ("sign-growing", {**_ONE_START,
                                                             "initial_selection": "halving-tournament"}),
    # The default with one part taken out (the three rows above take out the
    # wider probes, the relative precision and the tournament's acceleration).
    "default with a Gaussian start": ("sign-growing", {**_ONE_START, "initial_directions": "gaussian"}),
    "default with 100 candidates": ("sign-growing", {**_ONE_START, "n_initial": 100}),
    "default with a constant q (no √t growth)": ("sign-growing", {**_ONE_START, "q_start": None}),
    "default without fresh restarts": ("sign-growing", {**_ONE_START, "fresh_restarts": False}),
    "default without min_progress": ("sign-growing", {**_ONE_START, "min_progress": None}),
    "default with the fixed-ratio search": ("sign-growing", {**_ONE_START, "local_growth": 1.0}),
    "default with first step 0.2": ("sign-growing", {**_ONE_START, "step": 0.2}),
    "default + 5 uniform candidates": ("sign-growing", {**_ONE_START, "n_initial": 25, "n_uniform": 5}),
    "default + 5 uniform candidates; raced 2 iterations": ("sign-growing", {**_ONE_START, "n_initial": 25,
                                                                            "n_uniform": 5, "race_iterations": 2}),
    "rgf (paper) with reference start": ("rgf", dict(_REFERENCE)),
    "rgf with cheap start": ("rgf", dict(_ONE_START)),
}

# Every sign-growing row names the direction parts it was measured with (the plain direction unless the row says
# otherwise), so a row keeps its meaning, and its cached runs stay valid, whatever sign-growing's defaults become
# (ablation/suite_tags_direction.md compares two of them as candidate defaults in the suite).
_BEFORE_DIRECTION_PARTS = {"momentum": None, "baseline": False, "directions": "sphere"}
for _solver, _options in VARIANTS.values():
    _options.setdefault("prune", False)  # a row that names no pruning ran without it
    # a row with a race that names no state started the winner's descent afresh
    _options.setdefault("race_keeps_state", False)
    _options.setdefault("race_halving", False)  # a row that names no halving raced without it
    if _solver == "sign-growing":
        # a row that names no β was measured at GROWING_BETA: a tree ensemble's context asks for wider probes,
        # and the row must not follow it
        _options.setdefault("beta", GROWING_BETA)
        # a row that names no precision asked for the reference code's, β/500
        _options.setdefault("eps_per_beta", REFERENCE_EPS_PER_BETA)
        # a row that names no probe level compared each probe with the value itself
        _options.setdefault("probe_level", "value")
        _options.setdefault("skip_flat", False)  # a row that names no skip_flat probed every pixel
        _options.setdefault("probe_shape", None)  # a row that names no probe shape drew plain ones
        _options.setdefault("beta_per_step", None)  # a row that names no beta_per_step kept β fixed
        for _key, _value in _BEFORE_DIRECTION_PARTS.items():
            _options.setdefault(_key, _value)  # a part a row names itself stays as the row says

# "fixed-β default": the default with adaptive momentum at a fixed β 0.01 and the value level, every part named,
# then with one part taken out at a time. The probes' shape is left to the solver's context (the default's rule:
# shaped where g is not piecewise constant); every other part is pinned, so these rows keep their meaning whatever
# the defaults become (β and the level too: a tree ensemble's default is wider, with the tangent level).
_FIXED_BETA = {**_MOMENTUM_DEFAULT, "beta": GROWING_BETA, "race_keeps_state": False, "race_halving": False,
               "probe_level": "value", "skip_flat": False, "step": GROWING_STEP, "local_growth": GALLOPING_GROWTH,
               "fresh_restarts": True, "beta_per_step": None}
_FIXED_BETA_WITHOUT: dict[str, dict[str, Any]] = {
    "probes shaped by the direction": {"probe_shape": None},
    "adaptive momentum": {"momentum": None},
    "shrunk baseline": {"baseline": False},
    "orthogonal probes": {"directions": "sphere"},
    "semicircular step (OPT line search)": {"line_search": "opt"},
    "wider probes (β 0.001)": dict(SIGN_OPT_BETA),
    "precision β/100 (β/500)": {"eps_per_beta": REFERENCE_EPS_PER_BETA},
    "relative precision": {"eps_relative": False},
    "record start (tournament)": {"initial_selection": "tournament"},
    "low-frequency start (Gaussian)": {"initial_directions": "gaussian"},
    "race between starts": {"race_starts": 1},
    "pruning": {"prune": False},
    "fresh restarts": {"fresh_restarts": False},
    "min_progress": {"min_progress": None},
    "√t probe growth (constant q)": {"q_start": None},
    "galloping search (fixed ratio)": {"local_growth": 1.0},
    "first step 1.0 (0.2)": {"step": REFERENCE_STEP},
}
VARIANTS["fixed-β default"] = ("sign-growing", dict(_FIXED_BETA))
VARIANTS.update({f"fixed-β default without {part}": ("sign-growing", {**_FIXED_BETA, **change})
                 for part, change in _FIXED_BETA_WITHOUT.items()})
# (measured, not the default) the probe radius that follows the comparisons' balance
VARIANTS["fixed-β default + radius follows balance"] = ("sign-growing", {**_FIXED_BETA, "beta_balance": True})
# (measured, not the default) two and four times the probe radius, each probe compared with the
# tangent plane's level (at a wider β the sphere's offset f·β²/2 no longer cancels the bracket's ε/2, so the level
# must move); 10, 20, 50 and 100 times for the tree ensembles' sweep
for _widening in (2, 4, 10, 20, 50, 100):
    VARIANTS[f"fixed-β default with β {_widening * GROWING_BETA:g} and the tangent level"] = (
        "sign-growing", {**_FIXED_BETA, "beta": _widening * GROWING_BETA, "probe_level": "tangent"})
# the same at β 0.5 with the precision of β 0.01: ε = β/100·g is coarser at the wider β
VARIANTS["fixed-β default with β 0.5 and the tangent level at β 0.01's precision"] = (
    "sign-growing",
    {**_FIXED_BETA, "beta": 50 * GROWING_BETA, "probe_level": "tangent", "eps_per_beta": GROWING_EPS_PER_BETA / 50})
# β 0.04 while the steps are long, narrowing to 0.01 as they shorten: a quarter of the steps'
# running geometric mean (zeroopt.RadiusFollowsStep), with the tangent level throughout (level with the value's at
# β 0.01, ../probe-level/)
_FOLLOWING_THE_STEP = {**_FIXED_BETA, "beta": 4 * GROWING_BETA, "probe_level": "tangent",
                       "beta_per_step": STEP_RADIUS_RATIO}
_RADIUS_STEP_DEFAULT = {**_FOLLOWING_THE_STEP, "beta_step_floor": STEP_RADIUS_FLOOR_RATIO}  # radius follows the step
VARIANTS["fixed-β default with β 0.04 following the step and the tangent level"] = ("sign-growing",
                                                                                    dict(_RADIUS_STEP_DEFAULT))
# ... and the same down to Sign-OPT's β 0.001 (floor 1/40), measured better late on the CNNs at a fixed β (../beta/)
VARIANTS["fixed-β default with β 0.04 following the step down to 0.001 and the tangent level"] = (
    "sign-growing", {**_FOLLOWING_THE_STEP, "beta_step_floor": REFERENCE_CODE_BETA / (4 * GROWING_BETA)})
# the race between starts sized by the budget and the input's dimension, for every attack
# (zeroopt.race_plan(dim=); the attack's race_starts=None), on the radius-following default
VARIANTS["default with every attack's race sized by the dimension"] = (
    "sign-growing", {**_RADIUS_STEP_DEFAULT, "race_starts": None})
# the default (targeted attacks race with each start's share grown with the dimension, untargeted ones by the
# budget alone) and, on it (measured, not the default), a
# quarter of each iteration's probes at most spanning the last 10 estimates (zeroopt.HistorySubspaceProbes)
_RACE_AUTO_DEFAULT = {**_RADIUS_STEP_DEFAULT, "race_starts": "auto"}
VARIANTS["default"] = ("sign-growing", dict(_RACE_AUTO_DEFAULT))
VARIANTS["default + probes spanning the last 10 estimates"] = (
    "sign-growing", {**_RACE_AUTO_DEFAULT, "history_span": 10})
