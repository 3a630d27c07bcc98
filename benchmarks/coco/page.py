"""A results page from a COCO run: ECDF areas per function group and solver, an ECDF figure, a JSON summary.

The text a person writes under the title (above :data:`~benchmarks.pages.GENERATED_MARKER`) and below the tables
(under :data:`~benchmarks.pages.READING_MARKER`) is kept when the page is written again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..dfo.peers import ONE_RUN
from ..pages import GENERATED_MARKER, READING_MARKER, command_first, kept_head, kept_reading, write_page
from .exdata import GROUPS, TARGETS, area, at_budget, ecdf, group_traces, read_folder
from .run import Plan, folder_name

#: Digits the page and its JSON give an area or a share to.
DIGITS = 3
#: Solvers a figure tells apart in the ten colours of matplotlib's tab10 (more: tab20).
PLAIN_COLOURS = 10


def summarise(plan: Plan, exdata_root: Path) -> dict[str, dict[str, dict[str, float]]]:
    """``{solver: {group: {"area", "at_budget", "runs"}}}`` from the exdata of ``plan``'s runs (group "all" too)."""
    groups = {"all": plan.functions, **{g: fs for g, fs in GROUPS.items() if set(fs) & set(plan.functions)}}
    out: dict[str, dict[str, dict[str, float]]] = {}
    for solver in plan.solvers:
        runs = read_folder(exdata_root / "exdata" / folder_name(plan.suite, solver))
        out[solver] = {}
        for name, functions in groups.items():
            traces = group_traces(runs, functions)
            out[solver][name] = {"area": round(area(traces, plan.budget_multiplier), DIGITS),
                                 "at_budget": round(at_budget(traces, plan.budget_multiplier), DIGITS),
                                 "runs": len(traces)}
    return out


def _figure(path: Path, plan: Plan, exdata_root: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from applications.figures import save_figure

    names = ["all", *(g for g, fs in GROUPS.items() if set(fs) & set(plan.functions))]
    fig, axes = plt.subplots(2, 3, figsize=(15, 8.5), sharey=True)
    bases = list(dict.fromkeys(s.removesuffix(ONE_RUN) for s in plan.solvers))
    colours = plt.get_cmap("tab20" if len(bases) > PLAIN_COLOURS else "tab10")
    for solver in plan.solvers:
        runs = read_folder(exdata_root / "exdata" / folder_name(plan.suite, solver))
        base = solver.removesuffix(ONE_RUN)  # an entry and its one-run twin: one colour, the twin dotted
        for ax, name in zip(axes.flat, names, strict=False):
            grid, share = ecdf(group_traces(runs, plan.functions if name == "all" else GROUPS[name]),
                               plan.budget_multiplier)
            ax.plot(grid, share, ":" if solver != base else "-", color=colours(bases.index(base)), label=solver)
    for ax, name in zip(axes.flat, names, strict=False):
        ax.set_xscale("log")
        ax.set_title(name)
        ax.set_xlabel("evaluations / d")
        ax.grid(alpha=0.3)
    for ax in axes.flat[len(names):]:
        ax.axis("off")
    axes.flat[0].set_ylabel(f"share of (run, target) pairs, {len(TARGETS)} targets 1e2…1e-8")
    axes.flat[0].legend(fontsize=7)
    fig.suptitle(f"COCO {plan.suite}, d = {', '.join(map(str, plan.dims))}: runtime ECDFs")
    fig.tight_layout()
    save_figure(fig, path)  # a palette PNG: the results tree is size-limited
    plt.close(fig)


def write(page: Path, plan: Plan, exdata_root: Path, records: list[dict[str, Any]], command: str) -> str:
    """Write ``page`` (and its JSON and PNG beside it) from ``plan``'s runs under ``exdata_root``."""
    table = summarise(plan, exdata_root)
    groups = list(next(iter(table.values())))
    title = f"# COCO {plan.suite}, d = {', '.join(map(str, plan.dims))}: zeroopt beside its peers"
    head = command_first(kept_head(page), title, command)
    lines = [*head, GENERATED_MARKER, "",
             f"Functions {_span(plan.functions)}, instances {_span(plan.instances)}, one run per (function, "
             f"instance), budget {plan.budget_multiplier}·d. ECDF area: the share of (run, target) pairs solved "
             f"({len(TARGETS)} targets on f − f_opt, 1e2 … 1e-8), averaged over log10(evaluations / d) from 0 to "
             f"log10({plan.budget_multiplier}); `at budget`: the share solved at {plan.budget_multiplier}·d. An "
             "entry ending in `/one-run` is the zeroopt entry without restarts (`minimize(restarts=False)`).", "",
             "ECDF area by function group (the best of each column in bold):", "",
             "| solver | " + " | ".join(groups) + " | at budget (all) | evaluations used | seconds |",
             "|---|" + "---|" * (len(groups) + 3)]
    best = {g: max(table[s][g]["area"] for s in table) for g in groups}
    totals = spent(records)
    for solver, row in sorted(table.items(), key=lambda kv: -kv[1]["all"]["area"]):
        mine = totals.get(solver, {"evaluations": 0, "budget": 0, "seconds": 0.0})
        used = mine["evaluations"] / max(1, mine["budget"])
        cells = [f"**{row[g]['area']:.3f}**" if row[g]["area"] == best[g] else f"{row[g]['area']:.3f}"
                 for g in groups]
        lines.append(f"| {solver} | " + " | ".join(cells) + f" | {row['all']['at_budget']:.3f} | "
                     f"{100 * used:.0f} % | {mine['seconds']:.0f} |")
    png = page.with_suffix(".png")
    page.parent.mkdir(parents=True, exist_ok=True)
    _figure(png, plan, exdata_root)
    lines += ["", f"![ECDFs]({png.name})", "", READING_MARKER, *kept_reading(page)]
    data = {"command": command, "plan": {k: list(v) if isinstance(v, tuple) else v for k, v in vars(plan).items()},
            "areas": table, "solvers": totals}
    return write_page(page, lines, data)


def spent(records: list[dict]) -> dict[str, dict[str, float]]:
    """Per solver, the evaluations, budget and seconds its runs spent in all (the page's summary of the runs)."""
    out: dict[str, dict[str, float]] = {}
    for r in records:
        row = out.setdefault(r["solver"], {"evaluations": 0, "budget": 0, "seconds": 0.0})
        for key in row:
            row[key] += r[key]
    return out


def _span(numbers: tuple[int, ...]) -> str:
    """``(1, 2, 3, 5)`` as ``1–3, 5``."""
    parts: list[str] = []
    start = prev = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if n is not None:
            start = prev = n
    return ", ".join(parts)
