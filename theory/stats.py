"""Censored medians and log–log slopes with bootstrap confidence intervals.

A study records, for every grid point (a dimension d or a target δ), the first-hit counts of many
seeds, some censored (the run ended first). The statistic is the median with censored runs counted
as +inf: exact while fewer than half the runs are censored, +inf ("beyond the cap") otherwise. Slopes
are least-squares fits of log(median) on log(x); their intervals come from resampling the seeds of
every grid point independently (a percentile bootstrap), so they reflect the seeds' spread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["SlopeFit", "censored_median", "fit_loglog_slope", "loglog_line"]


def censored_median(values: ArrayLike, censored: ArrayLike) -> float:
    """Median of ``values`` with the censored ones counted as +inf (so +inf when half or more are).

    Examples
    --------
    >>> censored_median([3, 1, 9, 5], [False, False, True, False])
    4.0
    >>> censored_median([3, 1, 9, 5], [False, True, True, False])
    inf
    """
    v = np.where(np.asarray(censored, dtype=bool), np.inf, np.asarray(values, dtype=float))
    if v.size == 0:
        raise ValueError("no runs to take the median of")
    return float(np.median(v))


def loglog_line(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """Least-squares ``(slope, intercept)`` of ``log y`` on ``log x``."""
    lx, ly = np.log(np.asarray(x, dtype=float)), np.log(np.asarray(y, dtype=float))
    if lx.size < 2 or np.ptp(lx) == 0:
        raise ValueError("a slope needs at least two distinct x values")
    slope, intercept = np.polyfit(lx, ly, 1)
    return float(slope), float(intercept)


@dataclass(frozen=True)
class SlopeFit:
    """A log–log slope with its bootstrap interval.

    Attributes
    ----------
    slope, intercept
        Fit of log(median) on log(x) over the grid points whose median is finite.
    ci_low, ci_high, level
        Percentile bootstrap interval at ``level``.
    se
        Bootstrap standard deviation of the slope.
    x, medians
        The grid and the medians fitted (``inf`` medians are listed but left out of the fit).
    n_boot, n_undefined
        Bootstrap replicates drawn, and how many had a censored median at a fitted point (dropped).
    """

    slope: float
    intercept: float
    ci_low: float
    ci_high: float
    level: float
    se: float
    x: tuple[float, ...]
    medians: tuple[float, ...]
    n_boot: int
    n_undefined: int

    @property
    def fitted_points(self) -> int:
        """Grid points that entered the fit."""
        return int(np.isfinite(self.medians).sum())

    def describe(self) -> str:
        """``slope 1.01 [0.97, 1.05] (95% bootstrap, 5 points)``."""
        return (
            f"slope {self.slope:.3f} [{self.ci_low:.3f}, {self.ci_high:.3f}] "
            f"({100 * self.level:.0f}% bootstrap, {self.fitted_points} points)"
        )

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields."""
        return {
            "slope": self.slope, "intercept": self.intercept, "ci_low": self.ci_low, "ci_high": self.ci_high,
            "level": self.level, "se": self.se, "x": list(self.x),
            "medians": [m if np.isfinite(m) else None for m in self.medians],
            "n_boot": self.n_boot, "n_undefined": self.n_undefined,
        }


def fit_loglog_slope(
    x: Sequence[float],
    samples: Sequence[ArrayLike],
    censored: Sequence[ArrayLike],
    *,
    rng: np.random.Generator,
    n_boot: int = 2000,
    level: float = 0.95,
) -> SlopeFit:
    """Fit ``log median(samples[i]) ~ slope · log x[i]`` with a seed-resampling bootstrap interval.

    Parameters
    ----------
    x
        Positive regressor per grid point (``d + 4``, or ``1/δ``).
    samples, censored
        Per grid point: the first-hit counts of every seed and which of them are censored.
    rng
        Generator for the resampling (pass one derived from the study's SeedSequence).
    n_boot, level
        Replicates and interval level.
    """
    if not (len(x) == len(samples) == len(censored)):
        raise ValueError("x, samples and censored must have one entry per grid point")
    vals = [np.where(np.asarray(c, bool), np.inf, np.asarray(s, float)) for s, c in zip(samples, censored, strict=True)]
    medians = np.array([float(np.median(v)) for v in vals])
    keep = np.isfinite(medians) & (medians > 0)
    xs = np.asarray(x, dtype=float)
    if keep.sum() < 2:
        raise ValueError(f"fewer than two grid points have an uncensored median (medians: {medians.tolist()})")
    slope, intercept = loglog_line(xs[keep], medians[keep])
    lx = np.log(xs[keep])
    boots = np.empty((n_boot, int(keep.sum())))
    for j, v in enumerate(v for v, k in zip(vals, keep, strict=True) if k):
        idx = rng.integers(0, len(v), size=(n_boot, len(v)))
        boots[:, j] = np.median(v[idx], axis=1)
    ok = np.all(np.isfinite(boots) & (boots > 0), axis=1)
    ly = np.log(boots[ok])
    # Vectorised least squares: slope = cov(lx, ly) / var(lx) for every replicate at once.
    lxc = lx - lx.mean()
    slopes = (ly - ly.mean(axis=1, keepdims=True)) @ lxc / (lxc @ lxc)
    alpha = (1.0 - level) / 2.0
    lo, hi = (np.quantile(slopes, [alpha, 1.0 - alpha]) if slopes.size else (np.nan, np.nan))
    return SlopeFit(
        slope=slope, intercept=intercept, ci_low=float(lo), ci_high=float(hi), level=level,
        se=float(np.std(slopes, ddof=1)) if slopes.size > 1 else float("nan"),
        x=tuple(float(v) for v in xs), medians=tuple(float(m) for m in medians),
        n_boot=n_boot, n_undefined=int((~ok).sum()),
    )
