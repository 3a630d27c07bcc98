"""theory: Theorem 1 of Cheng et al. (ICLR 2019) and Nesterov–Spokoiny's RGF analysis, as code and as studies.

* :mod:`theory.bounds` — the bounds as functions of (d, L1, δ, f(x0) − f*, β, ε, q), each citing its source
  (the smoothing, moment and estimator bounds it builds on live in :mod:`theory.estimator_bounds`);
* :mod:`theory.check` — :func:`check_run`: a finished zeroopt run against its bound and the precision
  condition (via :class:`zeroopt.ToleranceMonitor`); :class:`Theorem1Monitor`, the same as a live callback;
* :mod:`theory.hitting` — first hits of ‖∇f‖ <= δ (per iterate, or Theorem 1's running average), censoring;
* :mod:`theory.problems` — problem families with L1 and f(x0) − f* fixed across d, plus a worst-case family;
* :mod:`theory.runner`, :mod:`theory.analysis`, :mod:`theory.stats`, :mod:`theory.plots`, :mod:`theory.report` —
  the study runner, per-cell summaries, log–log slopes with bootstrap intervals, plots and reports;
* :mod:`theory.studies` — the named studies and the ``zeroopt-study`` command.

zeroopt never imports this package; this package uses zeroopt's public API only.
"""

from .bounds import (
    admissible_beta,
    admissible_eps,
    average_gradient_bound,
    estimator_bias_bound,
    estimator_second_moment_bound,
    gaussian_moment,
    gaussian_moment_bound,
    gradient_floor,
    iteration_bound,
    leading_iteration_bound,
    query_bound,
    second_moment_bound,
    smoothed_gradient_gap_bound,
    smoothing_error_bound,
    theorem1_beta,
    theorem1_eps,
    theory_step,
)
from .check import RunCheck, Theorem1Monitor, check_run
from .hitting import FirstHit, FirstHitStop, first_hit, gradient_norms, query_counts
from .problems import FAMILIES, f_gap, make_problem, pseudo_huber
from .runner import Cell, StudySpec, run_study
from .stats import SlopeFit, censored_median, fit_loglog_slope

__all__ = [
    "FAMILIES", "Cell", "FirstHit", "FirstHitStop", "RunCheck", "SlopeFit", "StudySpec", "Theorem1Monitor",
    "admissible_beta",
    "admissible_eps", "average_gradient_bound", "censored_median", "check_run", "estimator_bias_bound",
    "estimator_second_moment_bound", "f_gap", "first_hit", "fit_loglog_slope", "gaussian_moment",
    "gaussian_moment_bound", "gradient_floor", "gradient_norms", "iteration_bound", "leading_iteration_bound",
    "make_problem", "pseudo_huber", "query_bound", "query_counts", "run_study", "second_moment_bound",
    "smoothed_gradient_gap_bound", "smoothing_error_bound", "theorem1_beta", "theorem1_eps", "theory_step",
]
