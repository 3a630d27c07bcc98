"""From run records to per-cell summaries and log–log slope fits along d or δ."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .bounds import query_bound
from .runner import StudyRun
from .stats import SlopeFit, censored_median, fit_loglog_slope

__all__ = ["MEASURES", "Axis", "CellSummary", "Fit", "fit_all", "fit_along", "summarize"]

Axis = Literal["d", "delta"]

# measure name -> (record field, censoring field or None)
MEASURES: dict[str, tuple[str, str | None]] = {
    "iterate_iterations": ("hit_iterate_iter", "hit_iterate_censored"),
    "iterate_queries": ("hit_iterate_queries", "hit_iterate_censored"),
    "average_iterations": ("hit_average_iter", "hit_average_censored"),
    "average_queries": ("hit_average_queries", "hit_average_censored"),
    "tail_grad": ("tail_grad", None),
}
_KEY = ("d", "delta", "eps_factor", "q", "beta")


def _key(record: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(str(record[k]) if k == "beta" else record[k] for k in _KEY)


def _values(records: Sequence[dict[str, Any]], measure: str) -> tuple[np.ndarray, np.ndarray]:
    field, cens = MEASURES[measure]
    v = np.array([r[field] for r in records], dtype=float)
    c = np.array([bool(r[cens]) for r in records]) if cens else np.zeros(len(records), bool)
    return v, c


@dataclass(frozen=True)
class CellSummary:
    """One grid cell over its seeds: medians (censored runs as +inf), quartiles, floors, flags."""

    d: int
    delta: float
    eps_factor: float
    q: int
    beta: str
    runs: int
    beta_value: float
    eps: float
    bound_iterations: float
    medians: dict[str, float]
    quartiles: dict[str, tuple[float, float]]
    censored: dict[str, int]
    tail_grad: float
    min_grad: float
    flagged_runs: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (``inf`` as ``None``)."""

        def clean(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {
            "d": self.d, "delta": self.delta, "eps_factor": self.eps_factor, "q": self.q, "beta": self.beta,
            "runs": self.runs, "beta_value": self.beta_value, "eps": self.eps,
            "bound_iterations": clean(self.bound_iterations),
            "medians": {k: clean(v) for k, v in self.medians.items()},
            "quartiles": {k: [clean(a), clean(b)] for k, (a, b) in self.quartiles.items()},
            "censored": self.censored, "tail_grad": self.tail_grad, "min_grad": self.min_grad,
            "flagged_runs": self.flagged_runs,
        }


def _groups(run: StudyRun) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in run.records:
        groups.setdefault(_key(r), []).append(r)
    return groups


def summarize(run: StudyRun) -> list[CellSummary]:
    """One :class:`CellSummary` per cell, in grid order."""
    out = []
    for (d, delta, ef, q, beta), recs in _groups(run).items():
        medians, quartiles, censored = {}, {}, {}
        for m in MEASURES:
            v, c = _values(recs, m)
            medians[m] = censored_median(v, c)
            vv = np.where(c, np.inf, v)
            quartiles[m] = tuple(float(np.quantile(vv, p, method="inverted_cdf")) for p in (0.25, 0.75))  # type: ignore[assignment]
            censored[m] = int(c.sum())
        bounds = [math.inf if r["bound_iterations"] is None else r["bound_iterations"] for r in recs]
        out.append(CellSummary(
            d=d, delta=delta, eps_factor=ef, q=q, beta=beta, runs=len(recs),
            beta_value=float(np.median([r["beta_value"] for r in recs])),
            eps=float(np.median([r["eps"] for r in recs])),
            bound_iterations=float(np.median(bounds)),
            medians=medians, quartiles=quartiles, censored=censored,
            tail_grad=float(np.median([r["tail_grad"] for r in recs])),
            min_grad=float(np.median([r["min_grad"] for r in recs])),
            flagged_runs=sum(1 for r in recs if r["violations"] > 0),
        ))
    return out


@dataclass(frozen=True)
class Fit:
    """A slope along one axis with the other settings held fixed, and the theory's line beside it."""

    axis: Axis
    measure: str
    fixed: dict[str, Any]
    regressor: str
    fit: SlopeFit
    theory_x: tuple[float, ...]
    theory_y: tuple[float, ...]

    def label(self) -> str:
        """``average_iterations @ δ=0.1, ε-factor=0, q=1, β=admissible``."""
        names = {"d": "d", "delta": "δ", "eps_factor": "ε-factor", "q": "q", "beta": "β"}
        return f"{self.measure} @ " + ", ".join(f"{names[k]}={v}" for k, v in self.fixed.items())

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return {
            "axis": self.axis, "measure": self.measure, "fixed": self.fixed, "regressor": self.regressor,
            **self.fit.to_dict(),
            "theory": {"x": list(self.theory_x), "y": [y if math.isfinite(y) else None for y in self.theory_y]},
        }


def _regressor(axis: Axis, measure: str, offset: float | None) -> tuple[str, Any]:
    if axis == "delta":
        return "1/δ", lambda v: 1.0 / v
    if offset is None:
        offset = 0.0 if measure == "tail_grad" else 4.0  # hits follow d+4 (NS), floors follow d
    return ("d" if offset == 0 else f"d+{offset:g}"), lambda v: v + offset


def fit_along(
    run: StudyRun,
    axis: Axis,
    measure: str,
    *,
    rng: np.random.Generator,
    n_boot: int = 2000,
    offset: float | None = None,
) -> list[Fit]:
    """Slopes of ``measure`` along ``axis`` (log–log, bootstrap CI), one per setting of the other axes.

    Along d the regressor is ``d + offset`` (default: ``d+4`` for hit counts, ``d`` for floors). Settings
    with fewer than two uncensored medians along the axis are skipped (their runs stalled).
    """
    groups = _groups(run)
    pos = _KEY.index(axis)
    others = sorted({k[:pos] + k[pos + 1:] for k in groups}, key=str)
    name, transform = _regressor(axis, measure, offset)
    fits = []
    for rest in others:
        keys = sorted((k for k in groups if k[:pos] + k[pos + 1:] == rest), key=lambda k: k[pos])
        if len(keys) < 2:
            continue
        xs = [transform(k[pos]) for k in keys]
        vals = [_values(groups[k], measure) for k in keys]
        try:
            fit = fit_loglog_slope(xs, [v for v, _ in vals], [c for _, c in vals], rng=rng, n_boot=n_boot)
        except ValueError:
            continue
        theory = []
        for k in keys:
            b = [math.inf if r["bound_iterations"] is None else r["bound_iterations"] for r in groups[k]]
            n = float(np.median(b))
            theory.append(float(query_bound(n, int(k[_KEY.index("q")]))) if measure.endswith("queries") else n)
        fixed = dict(zip([f for f in _KEY if f != axis], rest, strict=True))
        fits.append(Fit(axis, measure, fixed, name, fit, tuple(xs), tuple(theory)))
    return fits


def fit_all(run: StudyRun, *, rng: np.random.Generator, measures: Sequence[str] | None = None) -> list[Fit]:
    """Every slope the grid supports: along d if it has several d, along δ if several δ."""
    axes: list[Axis] = [a for a, vals in (("d", run.spec.dims), ("delta", run.spec.deltas)) if len(vals) > 1]
    chosen = list(measures) if measures is not None else list(MEASURES)
    pairs = [(a, m) for a, m in itertools.product(axes, chosen) if not (a == "delta" and m == "tail_grad")]
    return [f for a, m in pairs for f in fit_along(run, a, m, rng=rng)]
