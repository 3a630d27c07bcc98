"""The OPT hard-label black-box attack as a zeroopt application.

>>> from applications.hardlabel import Start, attack
>>> # result = attack(model, x0, y0, budget=4000, solver="rgf", seed=0, start=Start(n_initial=50))
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
from .pieces import BoundarySearch, ModelOptions, Polish, Race, Runs, Start, Verify
from .result import AttackResult

__all__ = [
    "CHEAP_START", "DEFAULT_LINF_SOLVER", "DEFAULT_SOLVER", "REFERENCE_START", "default_solver",
    "PAPER_DEFAULTS", "REFERENCE_CODE_DEFAULTS", "AttackConfig", "AttackResult", "BoundaryOracleGroup",
    "BoundarySearch", "LabelModel", "ModelOptions", "ModelOutputError", "Polish", "Race", "Runs", "Start", "Verify",
    "as_label_model", "attack", "attack_keywords", "attack_solvers",
]
