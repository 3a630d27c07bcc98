"""zeroopt: zeroth-order optimization with an inexact oracle.

Quick start::

    import numpy as np, zeroopt
    res = zeroopt.minimize(lambda x: float(x @ x), np.ones(50), solver="rgf", budget=20_000, seed=0)
    print(res.fun, res.queries, res.status)

The pieces: oracles answer requests at a counted cost under a hard budget (:mod:`zeroopt.oracles`);
solvers are composed from public parts — a direction sampler, a gradient estimator, a step rule and
behaviours such as the stall rule, one subpackage per group of stages — each built-in one a recipe whose
signature holds its defaults (:func:`rgf`, :func:`sign_growing`, ...; :mod:`zeroopt.recipes`), registered by name
with what it runs in each problem context (:func:`register_recipe`, :func:`list_solvers`); :func:`minimize`
runs one, :func:`drive` and :func:`solve_many` run many in lockstep, sharing oracle calls (:mod:`zeroopt.running`).
The names most code needs are exported here (``__all__``); each module has one import path,
``zeroopt.<subpackage>.<module>``.

The subpackages and their modules, by what they do (the stages of an iteration in the order they run,
:data:`STAGES`):

* :mod:`~zeroopt.oracles`, the oracle — :mod:`~zeroopt.oracles.oracle`, :mod:`~zeroopt.oracles.requests`,
  :mod:`~zeroopt.oracles.problems`;
* :mod:`~zeroopt.core`, what every part shares — the contract (:mod:`~zeroopt.core.base`,
  :mod:`~zeroopt.core.stages`, :mod:`~zeroopt.core.chain`, :mod:`~zeroopt.core.constants`,
  :mod:`~zeroopt.core.describe`), the ``flat`` stage (:mod:`~zeroopt.core.stages`' :class:`SkipFlat`), failures
  and checks (:mod:`~zeroopt.core.errors`, :mod:`~zeroopt.core.checks`), arrays (:mod:`~zeroopt.core.arrays`,
  :mod:`~zeroopt.core.rowwise`);
* :mod:`~zeroopt.sample`, what an iteration asks — ``precision``: :mod:`~zeroopt.sample.precision`; ``count``:
  :mod:`~zeroopt.sample.counts`; ``sample``: :mod:`~zeroopt.sample.samplers`, :mod:`~zeroopt.sample.orthogonal`,
  :mod:`~zeroopt.sample.subspace`, :mod:`~zeroopt.sample.mixture`, :mod:`~zeroopt.sample.box`; ``shape``:
  :mod:`~zeroopt.sample.shaping`, :mod:`~zeroopt.sample.history_subspace`;
* :mod:`~zeroopt.estimate`, the ``estimate`` stage — :mod:`~zeroopt.estimate.estimators`,
  :mod:`~zeroopt.estimate.differences`, :mod:`~zeroopt.estimate.unstated_noise` (the noise of answers nobody
  stated, from repeats at the iterate);
* :mod:`~zeroopt.direction`, the ``direction`` stage — :mod:`~zeroopt.direction.momentum`,
  :mod:`~zeroopt.direction.prior`, :mod:`~zeroopt.direction.quasi_newton`, :mod:`~zeroopt.direction.step_bound`
  (steps at the start's scale; β narrowed where probes meet +inf);
* :mod:`~zeroopt.step`, what an iteration does with its direction — ``step``: :mod:`~zeroopt.step.stepping`;
  ``amend``: :mod:`~zeroopt.step.amends` (best probe, unit sphere), :mod:`~zeroopt.step.radius`,
  :mod:`~zeroopt.step.radius_step`, :mod:`~zeroopt.step.noise`; ``stop``: :mod:`~zeroopt.step.stopping`;
* :mod:`~zeroopt.model`, a model-based trust region's parts of several stages —
  :mod:`~zeroopt.model.trust_region`, :mod:`~zeroopt.model.quadratic_model`;
* :mod:`~zeroopt.recipes`, the built-in solvers and their registry — :mod:`~zeroopt.recipes.solvers`,
  :mod:`~zeroopt.recipes.sign_solvers`, :mod:`~zeroopt.recipes.descent`, :mod:`~zeroopt.recipes.sign_flips` (the
  search over sign vectors: its parts of three stages and its recipe), :mod:`~zeroopt.recipes.registry`,
  :mod:`~zeroopt.recipes.plugins`, :mod:`~zeroopt.recipes.catalogue`;
* :mod:`~zeroopt.running`, running solvers — :mod:`~zeroopt.running.driver`, :mod:`~zeroopt.running.ask_tell`,
  :mod:`~zeroopt.running.restarts`, :mod:`~zeroopt.running.racing`, :mod:`~zeroopt.running.pruning`,
  :mod:`~zeroopt.running.callbacks`, :mod:`~zeroopt.running.records`, :mod:`~zeroopt.running.whole_budget`,
  :mod:`~zeroopt.running.global_phase` (a CMA-ES phase between local runs), :mod:`~zeroopt.running.faults`.
"""

from .core.base import (
    DirectionRule,
    DirectionSampler,
    GradientEstimate,
    GradientEstimator,
    Move,
    ProbeShape,
    SolverContext,
    SolverState,
    StepResult,
)
from .core.chain import Chain, chain
from .core.errors import NonFiniteValueError, NonFiniteValueWarning, ObjectiveError, PartialResultError, partial_result
from .core.stages import (
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
from .direction.momentum import AdaptiveMomentum
from .direction.prior import GradientFilter, HistoryPrior
from .direction.quasi_newton import QuasiNewton
from .estimate.differences import AdaptiveDifferences
from .estimate.estimators import (
    centered_sign_of_difference,
    central_difference,
    forward_difference,
    shrunk_centered_sign_of_difference,
    sign_of_difference,
)
from .model.trust_region import GeometryProbes, ModelEstimate, ModelProbes, ModelStep, RadiusFloor, TrustStep
from .oracles.oracle import (
    BudgetExhaustedError,
    CallableOracle,
    IndependentGroup,
    Oracle,
    OracleGroup,
    QueryLedger,
    SubsetGroup,
    as_oracle,
)
from .oracles.problems import NoisyOracle, Problem
from .oracles.requests import Compare, Comparison, Evaluate, Evaluation, FlatCoordinates, FlatMask
from .recipes import solvers as _builtin_solvers  # noqa: F401  (registers the built-in solvers)
from .recipes.descent import check_positive, preset_for, unit_sphere_steps
from .recipes.plugins import PluginError, load_plugin
from .recipes.registry import (
    SolverSpec,
    get_solver,
    list_solvers,
    make_solver,
    options_from,
    register_recipe,
    register_solver,
)
from .recipes.sign_flips import BelowIncumbent, BelowLoweredIncumbent, BlockFlips, TakeBest, block_order, sign_flips
from .recipes.sign_solvers import sign, sign_growing, sign_growing_on_radius
from .recipes.solvers import coordinate, rgf, rgf_fixed, trust_region
from .running.ask_tell import AskTell, ask_tell
from .running.callbacks import GradientNormStop, StallStop, ToleranceMonitor, ToleranceWarning
from .running.driver import drive, minimize, run_solver
from .running.global_phase import GlobalPhase
from .running.pruning import Polisher, prune_blocks, prune_run, pruning
from .running.racing import (
    RaceCandidate,
    RaceWinner,
    halving_rounds,
    race,
    race_plan,
)
from .running.records import IterationRecord, OptimizeResult, Status
from .running.restarts import FreshStart, solve_many
from .running.whole_budget import Restarts, restarts_ran
from .sample.box import BoxDirections
from .sample.counts import ProbeSchedule, SqrtProbeGrowth
from .sample.history_subspace import HistorySubspaceProbes
from .sample.mixture import MixtureDirections, multi_scale_directions
from .sample.orthogonal import OrthogonalDirections, orthonormal_rows
from .sample.precision import FixedPrecision, PrecisionFollowsBeta, PrecisionFollowsValue
from .sample.samplers import CoordinateDirections, GaussianDirections, SphereDirections, make_sampler, register_sampler
from .sample.shaping import IterateShapedProbes
from .sample.subspace import LowFrequencyDirections, WideningLowFrequency
from .step.amends import BestProbe, unit_sphere
from .step.noise import RadiusAboveNoise
from .step.radius import RadiusFollowsBalance
from .step.radius_step import RadiusFollowsStep
from .step.stepping import armijo_step, fixed_step, opt_line_search, semicircle_step
from .step.stopping import DiminishingReturnsRule, NoProgressRule, StallRule

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
    # what happens when things go wrong (zeroopt.core.errors) and the fixed step's stopping rule
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
    # a solver is a chain of parts, each an (init, update) pair of one stage (zeroopt.core.stages)
    "Chain", "chain", "STAGES", "Amend", "Estimate", "FixedProbes", "Iteration", "Part", "Sample", "SkipFlat", "Step",
    # the model-based trust region's parts (zeroopt.model: trust_region, its quadratic model quadratic_model)
    "GeometryProbes", "ModelEstimate", "ModelProbes", "ModelStep", "RadiusFloor", "TrustStep",
    # solvers from outside zeroopt: a module that registers them, by name, path, ZEROOPT_PLUGINS or entry point
    "PluginError", "load_plugin",
    # the whole budget: minimize restarts a run that stopped early until the budget is spent
    # (zeroopt.running.whole_budget), with a CMA-ES phase between runs where asked (zeroopt.running.global_phase)
    "GlobalPhase", "Restarts", "restarts_ran",
]
