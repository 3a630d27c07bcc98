"""Tree ensembles: the exact minimal adversarial perturbation, as a yardstick for every black-box attack.

>>> from applications.trees import exact_minimal_adversarial
>>> # res = exact_minimal_adversarial(booster, x, y, norm="l2", bounds=(0, 1), time_limit=60)

For a tree ensemble (LightGBM, scikit-learn forests and gradient boosting) the minimal adversarial
perturbation is the optimum of a mixed-integer program (Kantchelian et al., ICML 2016), solved here by
HiGHS through scipy. :func:`move_zero_thresholds` removes LightGBM's ±1e-35 split thresholds, which make
~1e-35 perturbations adversarial on inputs with exact zeros.
"""

from .ensemble import Ensemble, Tree
from .exact import ExactResult, exact_minimal_adversarial
from .parse import as_ensemble
from .thresholds import move_zero_thresholds, zero_threshold_count

__all__ = [
    "Ensemble", "ExactResult", "Tree", "as_ensemble", "exact_minimal_adversarial", "move_zero_thresholds",
    "zero_threshold_count",
]
