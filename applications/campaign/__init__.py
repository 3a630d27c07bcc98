"""Attack campaigns: inputs × models × solvers × budgets × seeds, stored one row per attack in SQLite.

>>> from applications.campaign import Campaign, ResultsDB, run_campaign
>>> # summary = run_campaign(Campaign(models=["digits-cnn"], n=5, budgets=[1000]), ResultsDB("r.sqlite"))

Modules, one job each: :mod:`.spec` (what a campaign is, TOML), :mod:`.models` and :mod:`.data` (names on
the command line to models and inputs), :mod:`.worker` (one chunk of attacks → rows), :mod:`.executors`
(local or Ray), :mod:`.run` (the driver, the only writer of :mod:`.db`), :mod:`.report` and :mod:`.plots`.
"""

from .db import ResultsDB
from .executors import LocalExecutor, RayExecutor, make_executor
from .paths import cache_dir, default_db_path
from .run import CampaignSummary, run_campaign
from .spec import Campaign

__all__ = [
    "Campaign", "CampaignSummary", "LocalExecutor", "RayExecutor", "ResultsDB", "cache_dir", "default_db_path",
    "make_executor", "run_campaign",
]
