"""Plots of a study: scaling lines beside the theory's, floors, and trajectories against queries."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .analysis import CellSummary, Fit  # noqa: E402
from .figures import save_figure  # noqa: E402

__all__ = ["plot_floor", "plot_scaling", "plot_traces"]

_TITLES = {
    "iterate_iterations": "iterations to ‖∇f(x_k)‖ ≤ δ",
    "iterate_queries": "queries to ‖∇f(x_k)‖ ≤ δ",
    "average_iterations": "iterations to mean ‖∇f‖² ≤ δ²",
    "average_queries": "queries to mean ‖∇f‖² ≤ δ²",
    "tail_grad": "‖∇f‖ floor (median of the last quarter)",
}


def plot_scaling(fits: Sequence[Fit], summaries: Sequence[CellSummary], path: Path, *, title: str) -> Path:
    """One panel per measure: medians with quartile bars, the fitted line, the theory's bound N beside it."""
    measures = list(dict.fromkeys(f.measure for f in fits))
    ncols = 2 if len(measures) > 1 else 1
    nrows = math.ceil(len(measures) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.0 * ncols, 4.4 * nrows), squeeze=False)
    for ax in axes.flat[len(measures):]:
        ax.set_visible(False)
    varying = _varying(fits)
    for ax, measure in zip(axes.flat, measures, strict=False):
        for i, f in enumerate(x for x in fits if x.measure == measure):
            color = f"C{i % 10}"
            x, med = np.array(f.fit.x), np.array(f.fit.medians)
            lo, hi = _quartiles(f, summaries)
            ok = np.isfinite(med)
            # Censored quartiles are +inf: draw no bar on that side rather than an infinite one.
            lo = np.where(np.isfinite(lo) & ok, lo, med)
            hi = np.where(np.isfinite(hi) & ok, hi, med)
            with np.errstate(invalid="ignore"):
                err = np.vstack([med - lo, hi - med])[:, ok]
            ax.errorbar(x[ok], med[ok], yerr=err, fmt="o", color=color, capsize=3,
                        label=f"{_short(f, varying)}slope {f.fit.slope:.2f} [{f.fit.ci_low:.2f}, {f.fit.ci_high:.2f}]")
            xl = np.geomspace(x[ok].min(), x[ok].max(), 50)
            ax.plot(xl, np.exp(f.fit.intercept) * xl**f.fit.slope, "-", color=color, lw=1)
            ty = np.array(f.theory_y)
            if np.isfinite(ty).any():
                unit = " (queries)" if measure.endswith("queries") else " N"
                ax.plot(x[np.isfinite(ty)], ty[np.isfinite(ty)], "--", color=color, lw=1, alpha=0.7,
                        label=f"{_short(f, varying)}Theorem 1 bound{unit}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(fits[0].regressor if fits else "")
        ax.set_title(_TITLES.get(measure, measure), fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(textwrap.fill(title, 110), fontsize=11)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def _varying(fits: Sequence[Fit]) -> list[str]:
    """Held-fixed settings that differ between the fits (the only ones worth a label)."""
    keys = list(dict.fromkeys(k for f in fits for k in f.fixed))
    return [k for k in keys if len({str(f.fixed.get(k)) for f in fits}) > 1]


def _short(f: Fit, varying: Sequence[str]) -> str:
    parts = [f"{k}={f.fixed[k]}" for k in varying if k in f.fixed]
    return ", ".join(parts) + (": " if parts else "")


def _quartiles(f: Fit, summaries: Sequence[CellSummary]) -> tuple[np.ndarray, np.ndarray]:
    lo, hi = [], []
    for x, med in zip(f.fit.x, f.fit.medians, strict=True):
        match = [s for s in summaries if _matches(s, f, x)]
        q = match[0].quartiles[f.measure] if match else (med, med)
        lo.append(q[0])
        hi.append(q[1])
    return np.array(lo), np.array(hi)


def _matches(s: CellSummary, f: Fit, x: float) -> bool:
    for k, v in f.fixed.items():
        if str(getattr(s, k)) != str(v):
            return False
    if f.axis == "delta":
        return math.isclose(1.0 / s.delta, x)
    offset = 0.0 if f.regressor == "d" else float(f.regressor.removeprefix("d+"))
    return math.isclose(s.d + offset, x)


def plot_floor(
    summaries: Sequence[CellSummary], path: Path, *, title: str, group: str = "beta",
    predicted: dict[str, Sequence[tuple[float, float]]] | None = None,
) -> Path:
    """Median ‖∇f‖ floor against d, one line per value of ``group``, with δ and optional predictions."""
    fig, ax = plt.subplots(figsize=(6, 4.2))
    values = list(dict.fromkeys(str(getattr(s, group)) for s in summaries))
    for i, v in enumerate(values):
        rows = sorted((s for s in summaries if str(getattr(s, group)) == v), key=lambda s: s.d)
        ax.plot([s.d for s in rows], [s.tail_grad for s in rows], "o-", color=f"C{i}", label=f"{group}={v}")
        if predicted and v in predicted:
            px, py = zip(*predicted[v], strict=True)
            ax.plot(px, py, ":", color=f"C{i}", label=f"{group}={v}: predicted")
    deltas = sorted({s.delta for s in summaries})
    for dl in deltas:
        ax.axhline(dl, color="k", lw=0.8, ls="--")
        ax.annotate(f"δ = {dl:g}", (min(s.d for s in summaries), dl), fontsize=8, va="bottom")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("d")
    ax.set_ylabel("median ‖∇f‖ over the last quarter of the run")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(textwrap.fill(title, 70), fontsize=9)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_traces(
    records: Sequence[dict[str, Any]], path: Path, *, title: str, color_by: str = "d", deltas: Sequence[float] = ()
) -> Path:
    """f − f* and ‖∇f‖ against oracle queries for the traced runs, coloured by ``color_by``."""
    traced = [r for r in records if "trace" in r]
    fig, (ax_f, ax_g) = plt.subplots(1, 2, figsize=(11, 4.2))
    keys = list(dict.fromkeys(str(r[color_by]) for r in traced))
    labelled: set[str] = set()
    for r in traced:
        key = str(r[color_by])
        i = keys.index(key)
        t = r["trace"]
        label = None if key in labelled else f"{color_by}={r[color_by]}"
        labelled.add(key)
        ax_f.plot(t["queries"], np.maximum(t["f_gap"], 1e-16), color=f"C{i % 10}", lw=0.8, alpha=0.8, label=label)
        ax_g.plot(t["queries"], t["grad_norm"], color=f"C{i % 10}", lw=0.8, alpha=0.8, label=label)
    for dl in deltas:
        ax_g.axhline(dl, color="k", lw=0.8, ls="--")
    for ax, name in ((ax_f, "f(x_k) − f*"), (ax_g, "‖∇f(x_k)‖")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("oracle queries")
        ax.set_ylabel(name)
        ax.grid(True, which="both", alpha=0.3)
    ax_g.legend(fontsize=7, ncol=2)
    fig.suptitle(textwrap.fill(title, 110), fontsize=11)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path
