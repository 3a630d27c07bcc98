"""Running entries through OptiProfiler's ``benchmark``, one feature at a time, and the page of its scores.

``optiprofiler`` is imported when a benchmark runs, not before (it is the optional extra ``optiprofiler``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..pages import GENERATED_MARKER, READING_MARKER, command_first, kept_head, kept_reading, write_page
from .solvers import FEATURES, as_solver

#: The tolerances whose data profiles the page's figure draws (OptiProfiler's are 10⁻¹ … 10⁻max_tol_order).
DRAWN_TOLERANCES = (1e-2, 1e-4, 1e-6)


@dataclass(frozen=True)
class Plan:
    """What to run: entries (zeroopt's and peers'), features, OptiProfiler's problem selection and budget."""

    solvers: tuple[str, ...]
    features: tuple[str, ...] = ("plain",)
    mindim: int = 2
    maxdim: int = 5
    max_eval_factor: int = 100
    plib: str = "s2mpj"
    problems: tuple[str, ...] = ()
    seed: int = 0


def benchmark_feature(plan: Plan, feature: str, out: Path | None) -> dict[str, Any]:
    """Run every entry of ``plan`` on its problems under ``feature``; OptiProfiler's scores and curves.

    OptiProfiler writes its own profiles (PDF) and data under ``out/<feature>`` (``None``: nothing written). The
    scores are OptiProfiler's default (the history-based performance profiles' areas averaged over its tolerances,
    normalised by the best).
    """
    from optiprofiler import benchmark  # (the optional extra "optiprofiler")

    solvers = [as_solver(s, plan.max_eval_factor, feature, plan.seed) for s in plan.solvers]
    options: dict[str, Any] = {**FEATURES[feature], "plibs": [plan.plib], "ptype": "u", "mindim": plan.mindim,
                               "maxdim": plan.maxdim, "max_eval_factor": plan.max_eval_factor, "n_jobs": 1,
                               "seed": plan.seed, "solver_names": list(plan.solvers), "silent": True,
                               "solver_isrand": [s.randomized for s in solvers], "draw_hist_plots": "none",
                               **({"score_only": True} if out is None else {"savepath": str(out),
                                                                            "benchmark_id": feature})}
    options.setdefault("n_runs", 1)
    if plan.problems:
        options["problem_names"] = list(plan.problems)
    t0 = time.perf_counter()
    scores, _, curves = benchmark(solvers, **options)
    return {"scores": dict(zip(plan.solvers, map(float, np.ravel(scores)), strict=True)),
            "seconds": round(time.perf_counter() - t0, 1), "data_profiles": _data_profiles(curves, plan.solvers)}


def _data_profiles(curves: list[dict[str, Any]], solvers: Sequence[str]) -> dict[str, dict[str, list]]:
    """The history-based data profiles at :data:`DRAWN_TOLERANCES` (x: log2(1 + simplex gradients)), mean over
    runs, by tolerance and solver."""
    out: dict[str, dict[str, list]] = {}
    for tol in DRAWN_TOLERANCES:
        i = round(-math.log10(tol)) - 1
        if i >= len(curves):
            continue
        drawn = curves[i]["hist"]["data"]
        out[f"{tol:.0e}"] = {s: [np.asarray(c[-1][0]).tolist(), np.asarray(c[-1][1]).tolist()]
                             for s, c in zip(solvers, drawn, strict=True) if c[-1] is not None}
    return out


def _figure(path: Path, results: dict[str, dict[str, Any]], solvers: Sequence[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from applications.figures import save_figure

    features = list(results)
    tols = [f"{t:.0e}" for t in DRAWN_TOLERANCES]
    fig, axes = plt.subplots(len(features), len(tols), figsize=(3.6 * len(tols), 2.6 * len(features)),
                             sharey=True, squeeze=False)
    colours = plt.get_cmap("tab10")
    for row, feature in zip(axes, features, strict=True):
        for ax, tol in zip(row, tols, strict=True):
            for k, solver in enumerate(solvers):
                curve = results[feature]["data_profiles"].get(tol, {}).get(solver)
                if curve:
                    ax.step(curve[0], curve[1], where="post", color=colours(k % 10), label=solver, lw=1.2)
            ax.set_title(f"{feature}, tol {tol}", fontsize=9)
            ax.grid(alpha=0.3)
        row[0].set_ylabel("share of problems")
    for ax in axes[-1]:
        ax.set_xlabel("log2(1 + evaluations / (n + 1))", fontsize=8)
    axes[0][0].legend(fontsize=6)
    fig.tight_layout()
    save_figure(fig, path)  # a palette PNG: the results tree is size-limited
    plt.close(fig)


def write(page: Path, plan: Plan, results: dict[str, dict[str, Any]], command: str) -> str:
    """Write ``page`` (its JSON and PNG beside it) from the features' results."""
    head = command_first(kept_head(page), "# OptiProfiler: zeroopt beside its peers", command)
    lines = [*head, GENERATED_MARKER, "",
             f"OptiProfiler's `{plan.plib}` problems, unconstrained, n = {plan.mindim}–{plan.maxdim}; budget "
             f"{plan.max_eval_factor}·n evaluations; one run per problem and feature. Score: OptiProfiler's default "
             "(the history-based performance profiles' areas averaged over tolerances 1e-1 … 1e-10, normalised by "
             "the best entry of the feature). A `+noise` entry is told each value's precision where the feature "
             "states one (`truncated`: half a unit in the 6th significant digit); no entry is told the `noisy` "
             "feature's noise.", "",
             "| solver | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]
    for solver in plan.solvers:
        cells = [f"**{r['scores'][solver]:.3f}**" if r["scores"][solver] == max(r["scores"].values())
                 else f"{r['scores'][solver]:.3f}" for r in results.values()]
        lines.append(f"| {solver} | " + " | ".join(cells) + " |")
    lines.append("| (seconds) | " + " | ".join(f"{r['seconds']:.0f}" for r in results.values()) + " |")
    png = page.with_suffix(".png")
    page.parent.mkdir(parents=True, exist_ok=True)
    _figure(png, results, plan.solvers)
    lines += ["", f"![data profiles]({png.name})", "", READING_MARKER, *kept_reading(page)]
    data = {"command": command, "plan": {k: list(v) if isinstance(v, tuple) else v for k, v in vars(plan).items()},
            "results": {f: {"scores": r["scores"], "seconds": r["seconds"]} for f, r in results.items()}}
    return write_page(page, lines, data)
