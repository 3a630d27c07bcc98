"""PNG figures of campaign results: median L2 against the budget, and adversarial examples."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..figures import save_figure

if TYPE_CHECKING:
    from .cells import Cell

__all__ = ["plot_budget_curves", "plot_examples"]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: campaigns run on machines without a display
    import matplotlib.pyplot as plt

    return plt


def _median_at(rows: list[dict[str, Any]], grid: np.ndarray) -> np.ndarray:
    """Median over inputs of the best distortion reached within each query count (∞ before any)."""
    best = np.full((len(rows), len(grid)), np.inf)
    for i, r in enumerate(rows):
        tr = np.asarray(r["trace"], dtype=float).reshape(-1, 2)
        for j, q in enumerate(grid):
            reached = tr[tr[:, 0] <= q]
            if len(reached):
                best[i, j] = reached[-1, 1]
    return np.median(best, axis=0)


def plot_budget_curves(cells: list[Cell], rows: list[dict[str, Any]], path: Path, *, title: str) -> Path:
    """Median L2 vs budget, one line per (model, solver).

    With several budgets, the points are the per-budget medians; with one, the curve comes from the traces
    (best distortion reached within q queries, for q up to the budget).
    """
    plt = _pyplot()
    series: dict[tuple[str, str], list[Cell]] = defaultdict(list)
    for c in cells:
        series[(c.model, c.solver)].append(c)
    fig, ax = plt.subplots(figsize=(6, 4))
    for (model, solver), cs in series.items():
        label = f"{Path(model).name} / {solver}"
        if len(cs) > 1:
            xs = [c.budget for c in cs]
            ys = [c.median_l2 if np.isfinite(c.median_l2) else np.nan for c in cs]
            ax.plot(xs, ys, marker="o", label=label)
        else:
            budget = cs[0].budget
            grid = np.unique(np.geomspace(max(1, budget / 100), budget, 60).astype(int))
            mine = [r for r in rows if r["model"] == model and r["solver"] == solver and r["budget"] == budget]
            med = _median_at(mine, grid)
            ax.plot(grid, np.where(np.isfinite(med), med, np.nan), label=label)
    ax.set_xscale("log")
    ax.set_xlabel("queries (budget)")
    ax.set_ylabel("median L2")
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def plot_examples(
    x0: np.ndarray, x_adv: list[np.ndarray | None], captions: list[str], path: Path, *, title: str
) -> Path:
    """Originals, adversarials and perturbations of image inputs, one column per input."""
    plt = _pyplot()
    n = len(x0)
    fig, axes = plt.subplots(3, n, figsize=(1.3 * n + 0.4, 4.2), squeeze=False)
    for j in range(n):
        adv = x_adv[j]
        for k, img in enumerate((x0[j], adv, None if adv is None else adv - x0[j])):
            ax = axes[k, j]
            ax.axis("off")
            if img is None:
                continue
            img = np.asarray(img, dtype=float)
            img = img.transpose(1, 2, 0) if img.ndim == 3 and img.shape[0] == 3 else img.squeeze()
            if k == 2:
                lim = max(float(np.abs(img).max()), 1e-6)
                ax.imshow(img if img.ndim == 2 else img.mean(axis=2), cmap="seismic", vmin=-lim, vmax=lim)
            else:
                ax.imshow(np.clip(img, 0, 1), cmap="gray" if img.ndim == 2 else None, vmin=0, vmax=1)
        axes[1, j].set_title(captions[j], fontsize=6)
    fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, photo=True)  # pictures of inputs
    plt.close(fig)
    return path
