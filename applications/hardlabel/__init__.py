"""The OPT hard-label black-box attack as a zeroopt application.

>>> from applications.hardlabel import Start, attack
>>> # result = attack(model, x0, y0, budget=4000, solver="rgf", seed=0, start=Start(n_initial=50))

The criterion (:mod:`.criterion`) and the distance (:mod:`.distance`) are objects the attack takes
(``criterion=``, ``distance=``), kept apart from the model and the search.
"""

from .adapters import LabelModel, ModelOutputError, as_label_model
from .attack import PAPER_DEFAULTS, REFERENCE_CODE_DEFAULTS, attack
from .boundary import BoundaryOracleGroup
from .config import (
    CHEAP_START,
    DEFAULT_LINF_SOLVER,
    DEFAULT_SOLVER,
    REFERENCE_START,
    AttackConfig,
    attack_keywords,
    attack_solvers,
    default_solver,
)
from .criterion import Criterion, Misclassification, TargetedMisclassification
from .distance import L2, LINF, Distance, LpDistance
from .pieces import BoundarySearch, ModelOptions, Polish, Race, Runs, Start, Verify
from .result import AttackResult

__all__ = [
    "CHEAP_START", "DEFAULT_LINF_SOLVER", "DEFAULT_SOLVER", "REFERENCE_START", "default_solver",
    "PAPER_DEFAULTS", "REFERENCE_CODE_DEFAULTS", "AttackConfig", "AttackResult", "BoundaryOracleGroup",
    "BoundarySearch", "LabelModel", "ModelOptions", "ModelOutputError", "Polish", "Race", "Runs", "Start", "Verify",
    "as_label_model", "attack", "attack_keywords", "attack_solvers",
    "Criterion", "Misclassification", "TargetedMisclassification", "Distance", "L2", "LINF", "LpDistance",
]
