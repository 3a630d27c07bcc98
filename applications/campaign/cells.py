"""One figure per (dataset, goal, model, solver, budget) group of a results database's rows.

:mod:`applications.campaign.report` writes them as tables and draws them with :mod:`applications.campaign.plots`,
which reads the type from here, not from the report: the two modules do not import each other.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["Cell", "summarise"]


@dataclass
class Cell:
    """Figures of one (dataset, goal, model, solver, budget) group."""

    dataset: str
    goal: str
    model: str
    solver: str
    budget: int
    n: int
    successes: int
    median_l2: float  # failures count as +inf (as on the benchmark pages)
    mean_l2: float  # over the successes; nan-free: inf when there is none
    mean_queries: float
    seconds: float  # wall time per attack (an attack call's time shared by its inputs)
    already_wrong: int  # inputs the model misclassified before any perturbation (distortion 0)

    @property
    def success_rate(self) -> float:
        """Fraction of inputs with an adversarial example."""
        return self.successes / self.n if self.n else 0.0


def summarise(rows: Iterable[dict[str, Any]]) -> list[Cell]:
    """One :class:`Cell` per (dataset, goal, model, solver, budget), sorted.

    Parameters
    ----------
    rows : iterable of dict
        A results database's rows (:meth:`applications.campaign.db.ResultsDB.rows`).

    Returns
    -------
    list of Cell
        Sorted by (dataset, goal, model, solver, budget).
    """
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["dataset"], r["goal"], r["model"], r["solver"], int(r["budget"]))].append(r)
    cells = []
    for key, rs in sorted(groups.items()):
        dist = np.array([r["distortion"] if r["success"] and r["distortion"] is not None else np.inf for r in rs])
        ok = np.isfinite(dist)
        cells.append(Cell(
            *key, n=len(rs), successes=int(ok.sum()),
            median_l2=float(np.median(dist)),
            mean_l2=float(dist[ok].mean()) if ok.any() else float("inf"),
            mean_queries=float(np.mean([r["queries"] for r in rs])),
            seconds=float(np.mean([r["wall_time"] or 0.0 for r in rs])),
            already_wrong=int(sum(1 for r in rs if r["success"] and r["distortion"] == 0.0)),
        ))
    return cells
