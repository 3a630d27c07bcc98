"""Figures of a table: distortion against queries, and example adversarials.

Curves are the median over inputs of the monitor's best-so-far distortion, with the inter-quartile band, per
attack; a failure counts as +inf (the curve starts where more than half the inputs have an adversarial).
The left panel covers every input up to the standard budget; the right one, when there is a long budget,
the inputs run that far, for every attack on the same inputs. The white-box floor is a dashed line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from applications.figures import save_figure  # noqa: E402
from benchmarks.experiments import Experiment  # noqa: E402
from benchmarks.store import decode_array  # noqa: E402
from benchmarks.tables import distances_at  # noqa: E402

_COLORS = plt.get_cmap("tab10").colors


def _band(ax: plt.Axes, records: list[dict[str, Any]], grid: np.ndarray, label: str, color: Any) -> None:
    d = distances_at(records, grid)
    d = np.where(np.isnan(d), np.inf, d)
    med = np.median(d, axis=0)
    q25, q75 = np.percentile(d, [25, 75], axis=0, method="nearest")
    ax.plot(grid, np.where(np.isfinite(med), med, np.nan), label=f"{label} ({len(records)})", color=color)
    ax.fill_between(grid, np.where(np.isfinite(q25), q25, np.nan), np.where(np.isfinite(q75), q75, np.nan),
                    color=color, alpha=0.15, linewidth=0)  # fmt: skip


def plot_curves(exp: Experiment, runs: dict[str, list[dict[str, Any]]], path: Path) -> Path:
    """Median (IQR band) best distortion vs queries, per attack."""
    plan = exp.plan
    long = plan.long_budget if plan.long_budget and plan.n_long else None
    panels = [("all inputs", plan.budget, None)]
    if long:
        panels.append((f"first {plan.n_long} inputs", long, plan.n_long))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.5), squeeze=False)
    for ax, (title, top, first) in zip(axes[0], panels, strict=True):
        grid = np.unique(np.linspace(1, top, 300).astype(np.int64))
        for k, (name, records) in enumerate(runs.items()):
            recs = [r for r in records if first is None or r["position"] < first]
            if not recs:
                continue
            color = _COLORS[k % len(_COLORS)]
            if recs[0]["trace"] is None:
                d = np.array([r["distortion"] if r["success"] else np.inf for r in recs])
                ax.axhline(float(np.median(d)), color=color, linestyle="--", label=f"{name} median ({len(recs)})")
                continue
            _band(ax, [r for r in recs if int(r["budget"]) >= top], grid, name, color)
        ax.set_yscale("log")
        ax.set_xlabel("queries per input")
        ax.set_ylabel("best adversarial L2 (median, IQR band)")
        ax.set_title(f"{exp.title}\n{title}", fontsize=9)
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=7)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path


def _as_image(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim == 3 and x.shape[0] in (1, 3):
        x = np.transpose(x, (1, 2, 0))
    if x.ndim == 3 and x.shape[2] == 1:
        x = x[:, :, 0]
    return np.clip(x, 0, 1)


def plot_examples(exp: Experiment, runs: dict[str, list[dict[str, Any]]], path: Path, n: int = 4) -> Path:
    """Originals and each attack's best adversarial (at its run budget) for the first ``n`` inputs.

    Image inputs are drawn as images; other inputs (HIGGS rows) as the perturbation vector of each attack.
    """
    names = [name for name, recs in runs.items() if recs]
    n = min(n, len(exp.x))
    by_pos = {name: {r["position"]: r for r in runs[name]} for name in names}
    if exp.image_like:
        fig, axes = plt.subplots(n, len(names) + 1, figsize=(1.6 * (len(names) + 1), 1.8 * n), squeeze=False)
        for i in range(n):
            cmap = "gray" if exp.x[i].shape[0] == 1 else None
            axes[i, 0].imshow(_as_image(exp.x[i]), cmap=cmap, vmin=0, vmax=1)
            axes[i, 0].set_title(f"original y={exp.y[i]}", fontsize=7)
            for j, name in enumerate(names, start=1):
                r = by_pos[name].get(i)
                x = decode_array(r["x_best"]) if r else None
                if x is not None:
                    axes[i, j].imshow(_as_image(x), cmap=cmap, vmin=0, vmax=1)
                    label = "" if exp.target is None else f" t={exp.target[i]}"
                    axes[i, j].set_title(f"{name}{label}\nL2 {r['distortion']:.3f}", fontsize=6)
                else:
                    axes[i, j].set_title(f"{name}\nnone", fontsize=6)
        for ax in axes.ravel():
            ax.axis("off")
    else:
        fig, axes = plt.subplots(n, 1, figsize=(9, 2.2 * n), squeeze=False)
        width = 0.8 / max(1, len(names))
        for i in range(n):
            ax = axes[i, 0]
            feat = np.arange(exp.x[i].size)
            for j, name in enumerate(names):
                r = by_pos[name].get(i)
                x = decode_array(r["x_best"]) if r else None
                if x is None:
                    continue
                delta = x.ravel() - exp.x[i].ravel()
                ax.bar(feat + j * width, delta, width, label=f"{name} L2 {r['distortion']:.3f}",
                       color=_COLORS[j % len(_COLORS)])  # fmt: skip
            ax.set_title(f"input {i} (y={exp.y[i]}): perturbation per feature", fontsize=8)
            ax.legend(fontsize=6, ncol=3)
        axes[-1, 0].set_xlabel("feature")
    fig.tight_layout()
    save_figure(fig, path, photo=True)  # pictures of inputs
    plt.close(fig)
    return path


def plot_headline(tables: list[dict[str, Any]], path: Path, goal: float, goal_from: int) -> Path:
    """Ours / best peer against the budget, one line per experiment of :mod:`benchmarks.headline`, each point with
    its bootstrap interval over inputs; the goal as a dashed line from ``goal_from`` queries on."""
    fig, ax = plt.subplots(figsize=(9.0, 4.5))
    for k, t in enumerate(tables):
        cells = [b for b in map(str, t["budgets"]) if b in t["ratio"]]
        if not cells:
            continue
        x = np.array([int(b) for b in cells], dtype=float)
        y = np.array([t["ratio"][b] for b in cells])
        spans = t.get("ratio_interval", {})
        lo = np.array([spans.get(b, [y[i], y[i]])[0] for i, b in enumerate(cells)])
        hi = np.array([spans.get(b, [y[i], y[i]])[1] for i, b in enumerate(cells)])
        # Interval ends may be infinite (failures in a draw): clip them to the plot, never drop the point.
        err = np.clip(np.vstack([y - lo, hi - y]), 0.0, 2.0)
        shift = 1.0 + 0.03 * (k - (len(tables) - 1) / 2)  # side by side at a shared budget, on the log axis
        ax.errorbar(x * shift, y, yerr=err, marker="o", markersize=3, capsize=2, linewidth=1,
                    color=_COLORS[k % len(_COLORS)], label=f"{t['experiment']} ({len(t['inputs'])})")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.hlines(goal, goal_from, ax.get_xlim()[1], colors="black", linestyles="--", linewidth=1,
              label=f"goal ≤ {goal:.2f} from {goal_from:,}")
    ax.set_xscale("log")
    ax.set_xlabel("queries per input")
    level = next((t.get("interval_level") for t in tables if t.get("interval_level")), None)
    ax.set_ylabel("our median L2 / the best peer's")
    ax.set_title("Our default attack over the best peer, budget by budget"
                 + ("" if level is None else f"\n(bars: {level:.0%} bootstrap interval over inputs)"), fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: no point hidden
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
    return path
