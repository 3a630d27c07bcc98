"""zeroopt: zeroth-order optimization with an inexact oracle.

Quick start::

    import numpy as np, zeroopt
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(50), solver="rgf", budget=20_000, seed=0)
    print(res.fun, res.queries, res.status)

The pieces: oracles answer requests at a counted cost under a hard budget (:mod:`zeroopt.oracle`);
solvers are composed from public parts — a direction sampler, a gradient estimator, a step rule and
behaviours such as the stall rule (:mod:`zeroopt.parts`, :mod:`zeroopt.descent`) — each built-in one a recipe whose
signature holds its defaults (:func:`rgf`, :func:`sign_growing`, ...), registered by name with what it runs in
each problem context (:func:`register_recipe`, :func:`list_solvers`); :func:`minimize`
runs one, :func:`drive` and :func:`solve_many` run many in lockstep, sharing oracle calls.

The modules, by what they do (the stages of an iteration in the order they run, :data:`STAGES`):

* the oracle — :mod:`~zeroopt.oracle`, :mod:`~zeroopt.requests`, :mod:`~zeroopt.problems`;
* the contract — :mod:`~zeroopt.base`, :mod:`~zeroopt.stages`, :mod:`~zeroopt.chain`, :mod:`~zeroopt.constants`;
* ``flat`` — :mod:`~zeroopt.stages` (:class:`SkipFlat`);
* ``precision`` — :mod:`~zeroopt.precision`;
* ``count`` — :mod:`~zeroopt.parts` (probe schedules);
* ``sample`` — :mod:`~zeroopt.samplers`, :mod:`~zeroopt.orthogonal`, :mod:`~zeroopt.subspace`,
  :mod:`~zeroopt.mixture`, :mod:`~zeroopt.box`, :mod:`~zeroopt.sign_flips`;
* ``shape`` — :mod:`~zeroopt.shaping`, :mod:`~zeroopt.history_subspace`;
* ``estimate`` — :mod:`~zeroopt.estimators`, :mod:`~zeroopt.differences`, :mod:`~zeroopt.unstated_noise` (the
  noise of answers nobody stated, from repeats at the iterate);
* ``direction`` — :mod:`~zeroopt.momentum`, :mod:`~zeroopt.prior`, :mod:`~zeroopt.quasi_newton`,
  :mod:`~zeroopt.step_bound` (steps at the start's scale; β narrowed where probes meet +inf);
* ``step`` — :mod:`~zeroopt.stepping`;
* ``amend`` — :mod:`~zeroopt.parts` (best probe, unit sphere), :mod:`~zeroopt.radius`,
  :mod:`~zeroopt.radius_step`, :mod:`~zeroopt.noise`;
* ``stop`` — :mod:`~zeroopt.stopping`;
* a model-based trust region's parts of several stages — :mod:`~zeroopt.trust_region`,
  :mod:`~zeroopt.quadratic_model`;
* the recipes and their registry — :mod:`~zeroopt.solvers`, :mod:`~zeroopt.sign_solvers`,
  :mod:`~zeroopt.descent`, :mod:`~zeroopt.registry`, :mod:`~zeroopt.plugins`, :mod:`~zeroopt.describe`,
  :mod:`~zeroopt.catalogue`;
* running — :mod:`~zeroopt.driver`, :mod:`~zeroopt.ask_tell`, :mod:`~zeroopt.restarts`, :mod:`~zeroopt.racing`,
  :mod:`~zeroopt.pruning`, :mod:`~zeroopt.callbacks`, :mod:`~zeroopt.records`, :mod:`~zeroopt.whole_budget`,
  :mod:`~zeroopt.global_phase`;
* failures and checks — :mod:`~zeroopt.errors`, :mod:`~zeroopt.faults`, :mod:`~zeroopt.checks`;
* arrays — :mod:`~zeroopt.arrays`, :mod:`~zeroopt.rowwise`.
"""

from . import solvers as _builtin_solvers  # noqa: F401  (registers the built-in solvers)
from .ask_tell import AskTell, ask_tell
from .base import Move, SolverState
from .box import BoxDirections
from .callbacks import GradientNormStop, StallStop, ToleranceMonitor, ToleranceWarning
from .chain import Chain, chain
from .descent import check_positive, preset_for, unit_sphere_steps
from .differences import AdaptiveDifferences
from .driver import drive, minimize, run_solver
from .errors import ObjectiveError, PartialResultError, partial_result
from .estimators import (
    GradientEstimate,
    GradientEstimator,
    centered_sign_of_difference,
    central_difference,
    forward_difference,
    shrunk_centered_sign_of_difference,
    sign_of_difference,
)
from .global_phase import GlobalPhase
from .history_subspace import HistorySubspaceProbes
from .mixture import MixtureDirections, multi_scale_directions
from .momentum import AdaptiveMomentum, DirectionRule
from .noise import RadiusAboveNoise
from .oracle import (
    BudgetExhaustedError,
    CallableOracle,
    Compare,
    Comparison,
    Evaluate,
    Evaluation,
    FlatCoordinates,
    FlatMask,
    IndependentGroup,
    NonFiniteValueError,
    NonFiniteValueWarning,
    Oracle,
    OracleGroup,
    QueryLedger,
    SubsetGroup,
    as_oracle,
)
from .orthogonal import OrthogonalDirections, orthonormal_rows
from .parts import BestProbe, ProbeSchedule, SqrtProbeGrowth, unit_sphere
from .plugins import PluginError, load_plugin
from .precision import FixedPrecision, PrecisionFollowsBeta, PrecisionFollowsValue
from .prior import GradientFilter, HistoryPrior
from .problems import NoisyOracle, Problem
from .pruning import Polisher, prune_blocks, prune_run, pruning
from .quasi_newton import QuasiNewton
from .racing import (
    RaceCandidate,
    RaceWinner,
    halving_rounds,
    race,
    race_plan,
)
from .radius import RadiusFollowsBalance
from .radius_step import RadiusFollowsStep
from .records import IterationRecord, OptimizeResult, Status
from .registry import (
    SolverContext,
    SolverSpec,
    get_solver,
    list_solvers,
    make_solver,
    options_from,
    register_recipe,
    register_solver,
)
from .restarts import FreshStart, solve_many
from .samplers import (
    CoordinateDirections,
    DirectionSampler,
    GaussianDirections,
    SphereDirections,
    make_sampler,
    register_sampler,
)
from .shaping import IterateShapedProbes, ProbeShape
from .sign_flips import BelowIncumbent, BelowLoweredIncumbent, BlockFlips, TakeBest, block_order, sign_flips
from .sign_solvers import sign, sign_growing, sign_growing_on_radius
from .solvers import coordinate, rgf, rgf_fixed, trust_region
from .stages import (
    STAGES,
    Amend,
    Estimate,
    FixedProbes,
    Iteration,
    Part,
    Sample,
    SkipFlat,
    Step,
)
from .stepping import StepResult, armijo_step, fixed_step, opt_line_search, semicircle_step
from .stopping import DiminishingReturnsRule, NoProgressRule, StallRule
from .subspace import LowFrequencyDirections, WideningLowFrequency
from .trust_region import GeometryProbes, ModelEstimate, ModelProbes, ModelStep, RadiusFloor, TrustStep
from .whole_budget import Restarts, restarts_ran

__version__ = "0.1.0"

__all__ = [
    "AdaptiveDifferences", "AdaptiveMomentum", "DirectionRule", "QuasiNewton", "GradientFilter", "HistoryPrior",
    "LowFrequencyDirections", "WideningLowFrequency", "MixtureDirections", "OrthogonalDirections", "SqrtProbeGrowth",
    "orthonormal_rows",
    "multi_scale_directions", "IterateShapedProbes", "ProbeShape", "HistorySubspaceProbes", "RadiusFollowsBalance",
    "RadiusFollowsStep", "RadiusAboveNoise",
    "BestProbe", "BudgetExhaustedError", "CallableOracle", "Compare", "Comparison",
    "CoordinateDirections", "DirectionSampler", "Evaluate", "Evaluation", "FixedPrecision",
    "GaussianDirections", "GradientEstimate", "GradientEstimator", "GradientNormStop", "IndependentGroup",
    "IterationRecord", "Move", "NoisyOracle", "NonFiniteValueError", "NonFiniteValueWarning", "OptimizeResult",
    "Oracle", "OracleGroup",
    "PrecisionFollowsBeta", "PrecisionFollowsValue", "Problem", "ProbeSchedule", "QueryLedger", "SolverContext",
    "SolverSpec",
    "SolverState", "SphereDirections", "StallRule", "StallStop", "Status", "StepResult", "SubsetGroup",
    "ToleranceMonitor", "ToleranceWarning", "armijo_step", "as_oracle", "centered_sign_of_difference",
    "central_difference", "check_positive", "drive", "fixed_step", "forward_difference",
    "get_solver", "list_solvers",
    "make_sampler", "make_solver", "minimize", "opt_line_search", "preset_for", "register_sampler",
    "register_recipe", "register_solver", "run_solver", "semicircle_step", "shrunk_centered_sign_of_difference",
    "sign_of_difference",
    "solve_many", "unit_sphere",
    "unit_sphere_steps",
    # what happens when things go wrong (zeroopt.errors) and the fixed step's stopping rule
    "NoProgressRule", "ObjectiveError", "PartialResultError", "partial_result",
    # restarts: a crawling run converges, a spent basin is left for a fresh start
    "DiminishingReturnsRule", "FreshStart",
    # starts: toward uniform points of a box (HopSkipJump's), and a race between candidate starts, sized by budget and d
    "BoxDirections", "RaceCandidate", "RaceWinner", "race", "race_plan", "halving_rounds",
    # polishing a radial objective's point: take out the coordinates it does not need
    "Polisher", "prune_blocks", "prune_run", "pruning",
    # probes kept off the coordinates the objective does not depend on near the iterate (a feature at its bound)
    "FlatCoordinates", "FlatMask",
    # a search over sign vectors (an L∞ radius is smallest at a vertex direction of the cube)
    "BelowIncumbent", "BelowLoweredIncumbent", "BlockFlips", "TakeBest", "block_order", "options_from", "sign_flips",
    # the built-in solvers' recipes: each its settings' defaults in its signature, its body its chain of parts
    "coordinate", "rgf", "rgf_fixed", "sign", "sign_growing", "sign_growing_on_radius", "trust_region",
    # the solvers driven by hand: ask for points, tell their values
    "AskTell", "ask_tell",
    # a solver is a chain of parts, each an (init, update) pair of one stage (zeroopt.stages)
    "Chain", "chain", "STAGES", "Amend", "Estimate", "FixedProbes", "Iteration", "Part", "Sample", "SkipFlat", "Step",
    # the model-based trust region's parts (zeroopt.trust_region; the quadratic model in zeroopt.quadratic_model)
    "GeometryProbes", "ModelEstimate", "ModelProbes", "ModelStep", "RadiusFloor", "TrustStep",
    # solvers from outside zeroopt: a module that registers them, by name, path, ZEROOPT_PLUGINS or entry point
    "PluginError", "load_plugin",
    # the whole budget: minimize restarts a run that stopped early until the budget is spent (zeroopt.whole_budget),
    # with a CMA-ES phase between runs where asked (zeroopt.global_phase)
    "GlobalPhase", "Restarts", "restarts_ran",
]
