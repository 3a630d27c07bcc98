"""Summaries of a results database: per-(model, solver, budget) figures as Markdown, like the benchmark pages.

``python -m applications.cli report DB --out DIR`` (``zeroopt report``) writes ``DIR/README.md`` with one
table per (dataset, goal) and a PNG per table (:mod:`applications.campaign.plots`).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .cells import Cell, summarise
from .db import ResultsDB

__all__ = ["Cell", "markdown_table", "summarise", "write_report"]


def _fmt(x: float) -> str:
    return "∞" if not np.isfinite(x) else f"{x:.4g}"


def markdown_table(cells: list[Cell]) -> str:
    """A Markdown table, one line per cell."""
    lines = [
        "| model | solver | budget | inputs | success | median L2 | mean L2 (successes) | mean queries | s / attack |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for c in cells:
        wrong = f" ({c.already_wrong} misclassified)" if c.already_wrong else ""
        lines.append(
            f"| {c.model} | {c.solver} | {c.budget} | {c.n}{wrong} | {100 * c.success_rate:.0f}% | {_fmt(c.median_l2)} "
            f"| {_fmt(c.mean_l2)} | {c.mean_queries:.0f} | {c.seconds:.3f} |"
        )
    return "\n".join(lines)


def text_table(cells: list[Cell]) -> str:
    """The same figures as fixed-width text, for a terminal."""
    head = f"{'model':<16} {'solver':<10} {'budget':>7} {'n':>5} {'success':>8} {'median L2':>10} {'mean q':>8}"
    out = [head, "-" * len(head)]
    for c in cells:
        out.append(f"{c.model[-16:]:<16} {c.solver:<10} {c.budget:>7} {c.n:>5} {100 * c.success_rate:>7.0f}% "
                   f"{_fmt(c.median_l2):>10} {c.mean_queries:>8.0f}")
    return "\n".join(out)


def write_report(db: ResultsDB, out: Path, *, where: str = "", params: Iterable[Any] = ()) -> Path:
    """Write ``out/README.md`` (tables) and ``out/<dataset>_<goal>.png`` (median L2 vs budget); returns the page."""
    from .plots import plot_budget_curves

    out.mkdir(parents=True, exist_ok=True)
    rows = list(db.rows(where, params))
    cells = summarise(rows)
    lines = [
        "# Campaign results",
        "",
        f"From `{db.path}` ({len(rows)} attacks), written {time.strftime('%Y-%m-%d %H:%M')}. Regenerate with "
        f"`zeroopt report {db.path} --out {out}`.",
        "",
        "Median L2 counts a failed attack as +∞; the mean is over the successes. An input the model already "
        "misclassifies counts as a success at L2 0 (noted per line).",
    ]
    by_table: dict[tuple[str, str], list[Cell]] = defaultdict(list)
    for c in cells:
        by_table[(c.dataset, c.goal)].append(c)
    for (dataset, goal), group in by_table.items():
        stem = f"{Path(dataset).name}_{goal.replace(':', '-')}"
        mine = [r for r in rows if r["dataset"] == dataset and r["goal"] == goal]
        png = plot_budget_curves(group, mine, out / f"{stem}.png", title=f"{Path(dataset).name}, {goal}")
        commands = sorted({r["command"] for r in mine if r["command"]})
        lines += ["", f"## {Path(dataset).name}, {goal}", "", markdown_table(group), "", f"![median L2]({png.name})"]
        if commands:
            lines += ["", "Made by:", *[f"- `{c}`" for c in commands[:10]]]
    page = out / "README.md"
    page.write_text("\n".join(lines) + "\n")
    return page
