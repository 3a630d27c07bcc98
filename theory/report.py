"""Write a study's results: ``results.json`` (the summary), ``README.md`` (tables, fits, the command), plots.

The run records go to the results database (:mod:`theory.records`), not next to the page: the repository keeps
summaries only.
"""

from __future__ import annotations

import json
import math
import platform
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .analysis import CellSummary, Fit
from .records import store_records

__all__ = ["Report", "write_index", "write_report"]


@dataclass
class Report:
    """What one study produced, ready to write."""

    name: str
    title: str
    command: str
    spec: dict[str, Any]
    summaries: Sequence[CellSummary]
    fits: Sequence[Fit]
    records: Sequence[dict[str, Any]]
    wall_s: float
    workers: int
    findings: list[str] = field(default_factory=list)
    plots: list[Path] = field(default_factory=list)


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "∞"
    if isinstance(x, (int, np.integer)) or abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def _cell_table(summaries: Sequence[CellSummary]) -> list[str]:
    head = (
        "| d | δ | ε-factor | q | β rule | β | ε | bound N | iterate hit: iters (queries) | "
        "average hit: iters (queries) | censored it/avg | tail ‖∇f‖ | flagged runs |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for s in summaries:
        m, c = s.medians, s.censored
        lines.append(
            f"| {s.d} | {s.delta:g} | {s.eps_factor:g} | {s.q} | {s.beta} | {s.beta_value:.3g} | {_fmt(s.eps)} | "
            f"{_fmt(s.bound_iterations)} | {_fmt(m['iterate_iterations'])} ({_fmt(m['iterate_queries'])}) | "
            f"{_fmt(m['average_iterations'])} ({_fmt(m['average_queries'])}) | "
            f"{c['iterate_iterations']}/{c['average_iterations']} of {s.runs} | {_fmt(s.tail_grad)} | "
            f"{s.flagged_runs}/{s.runs} |"
        )
    return lines


def _fit_table(fits: Sequence[Fit]) -> list[str]:
    lines = [
        "| measure | along | held fixed | slope | 95% bootstrap CI | fitted points | undefined replicates |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in fits:
        fixed = ", ".join(f"{k}={v}" for k, v in f.fixed.items())
        lines.append(
            f"| {f.measure} | log({f.regressor}) | {fixed} | {f.fit.slope:.3f} | "
            f"[{f.fit.ci_low:.3f}, {f.fit.ci_high:.3f}] | {f.fit.fitted_points} | {f.fit.n_undefined}/{f.fit.n_boot} |"
        )
    return lines


def write_report(report: Report, out_dir: Path, db: str | Path | None = None) -> Path:
    """Write ``results.json`` and ``README.md`` into ``out_dir`` (plots are already there); return the README.

    The run records are stored in the results database ``db`` (``None``: the user's default one);
    ``results.json`` keeps the spec, cell summaries, fits, findings and a pointer to them, never a run.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    pointer = store_records(report.records, report.spec, db)
    payload = {
        "name": report.name,
        "title": report.title,
        "command": report.command,
        "spec": report.spec,
        "environment": {
            "python": platform.python_version(), "numpy": np.__version__, "machine": platform.machine(),
            "workers": report.workers, "wall_s": round(report.wall_s, 1),
        },
        "findings": report.findings,
        "cells": [s.to_dict() for s in report.summaries],
        "fits": [f.to_dict() for f in report.fits],
        "records": pointer,
    }
    (out_dir / "results.json").write_text(json.dumps(payload, indent=1, allow_nan=False) + "\n")
    spec = report.spec
    lines = [
        f"# {report.title}",
        "",
        "```",
        report.command,
        "```",
        "",
        f"{spec['seeds']} seeds per cell from `SeedSequence({spec['root_seed']})`; solver `{spec['solver']}`"
        + (f" with {spec['solver_options']}" if spec["solver_options"] else "")
        + f", problem family `{spec['family']}`"
        + (f" with {spec['family_options']}" if spec["family_options"] else "")
        + (f", oracle error `{spec['noise']}`" if any(e > 0 for e in spec["eps_factors"]) else ", exact oracle")
        + (
            f"; each run stops once its {' and '.join(spec.get('criteria', ['iterate', 'average']))} hit(s) are in"
            if spec["stop_at_hit"] else "; every run goes on to its cap"
        )
        + f"; cap {spec['cap']:g} × 16(d+4)L₁(f(x0)−f*)/δ² iterations; {report.workers} worker process(es), "
        f"{round(report.wall_s, 1):.0f} s wall.",  # (from the value the JSON stores, so a reanalysis says the same)
        "",
    ]
    if report.findings:
        lines += ["## Findings", ""] + [f"- {f}" for f in report.findings] + [""]
    if report.fits:
        lines += ["## Slopes", ""] + _fit_table(report.fits) + [""]
    lines += ["## Cells (medians over seeds; censored runs count as +∞)", ""] + _cell_table(report.summaries) + [""]
    if report.plots:
        lines += ["## Plots", ""] + [f"![{p.stem}]({p.name})" for p in report.plots] + [""]
    lines += [
        "## Run records",
        "",
        f"The {pointer['count']} run records ({pointer['traced']} with traces) are not in the repository: they are"
        " in the results database (by default `~/.cache/zeroopt/results.sqlite`; table `files`,"
        f" `{pointer['stored_as']}`)."
        f" `python -m theory.studies {report.name} --reanalyze` redoes this page (fits, plots, findings) from"
        " them (`--db PATH` for another database); the command above reruns the study.",
        "",
    ]
    lines += [
        "## Columns",
        "",
        "- *iterate hit*: first k with ‖∇f(x_k)‖ ≤ δ; *average hit*: first N with (1/(N+1)) Σ_{k≤N} ‖∇f(x_k)‖² ≤ δ²"
        " (Theorem 1's quantity). Runs that stop first are censored.",
        "- *bound N*: `theory.bounds.iteration_bound` for the cell's (d, L₁, δ, f(x0)−f*, β, ε, q, step); ∞ where the"
        " theory guarantees nothing (fixed-step solver only).",
        "- *ε-factor*: ε / (β δ²), Theorem 1's precision condition in units of c = 1.",
        "- *flagged runs*: runs in which `zeroopt.ToleranceMonitor(δ, constant=1)` saw ε > β δ².",
        "- *tail ‖∇f‖*: median over the last quarter of each run, then over seeds (a floor when the run ran to its"
        " cap; meaningless for runs stopped at their hit).",
        "",
    ]
    readme = out_dir / "README.md"
    readme.write_text("\n".join(lines))
    return readme


def write_index(out_dir: Path) -> Path:
    """Write ``out_dir/README.md``: every study found under ``out_dir`` with its command and findings."""
    lines = [
        "# Theory studies",
        "",
        "RGF against Nesterov–Spokoiny's analysis and Theorem 1 of Cheng et al. (ICLR 2019). Each folder holds",
        "`results.json` (spec, cell summaries, fits), `README.md` (tables, plots) and the command that made it; the "
        "run records are in the results database (`--reanalyze` redoes a page from them); "
        "`benchmarks/theory_studies.sh` reruns them all. This index is rewritten after every study "
        "(`python -m theory.studies index`).",
        "",
    ]
    for path in sorted(out_dir.glob("*/results.json")):
        data = json.loads(path.read_text())
        lines += [
            f"## [{data['title']}]({path.parent.name}/README.md)",
            "",
            "```",
            data["command"],
            "```",
            "",
            f"{data['spec']['seeds']} seeds per cell, {data['environment']['wall_s']:.0f} s wall on "
            f"{data['environment']['workers']} worker(s).",
            "",
        ]
        lines += [f"- {f}" for f in data["findings"]] + [""]
    index = out_dir / "README.md"
    index.write_text("\n".join(lines))
    return index
