"""The page of ``python -m benchmarks.trees_exact report``: every attack's distortion / the exact minimum.

For each GBDT experiment and each cached exact variant, per attack and budget: the median and mean of the
per-input ratio (attack's best adversarial L2 within the budget, from its stored run) / (exact minimal L2 of
that input), over the inputs that have both. Written as ``table3_exact.md`` / ``.json`` in the tag folder, and
as a short section at the end of each Table 3 page (between markers, replaced on every report).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.experiments import PAPER_GBDT
from benchmarks.pages import write_page
from benchmarks.store import RunStore
from benchmarks.tables import distances_at

TINY = 1e-30  # an exact minimum below this is a LightGBM ±1e-35 flip
GOAL_RATIO, GOAL_BUDGET = 1.1, 10_000  # the goal for our default attack
DEFAULT_SOLVER = "ours-rgf"  # the paper's solver: the attack's default when the runs of tag full were made
#: The attack's default, whose runs are made once per budget (``run_suite --tag base-B --max-budget B``): a
#: row of its own, each column read from the runs made with that budget (``report(default_tags=)``).
DEFAULT_ATTACK = "ours-sign-growing"
#: Where the default attack's runs made with each budget live (the headline's tags).
DEFAULT_TAGS = "base-{B}"
BEGIN, END = "<!-- exact-minimum:begin -->", "<!-- exact-minimum:end -->"
SOURCES = {  # experiment -> (tag holding its attack runs, table page stem)
    "gbdt-mnist": ("full", "table3_gbdt_mnist"),
    "gbdt-higgs": ("full", "table3_gbdt_higgs"),
    "gbdt-higgs-box": ("higgs-box", "table3_gbdt_higgs_box"),
}
EXACT_OF = {  # experiment -> [(variant file of the exact cache, label)]
    "gbdt-mnist": [("moved", "moved ±1e-35 thresholds"), ("raw", "raw model")],
    "gbdt-higgs": [("moved", "moved ±1e-35 thresholds"), ("raw", "raw model")],
    "gbdt-higgs-box": [("box-moved", "moved ±1e-35 thresholds"), ("box-raw", "raw model")],
}
VARIANT_NOTE = {
    "raw": "the suite's model as trained (LightGBM's ±1e-35 thresholds included); inputs whose exact minimum is "
           "below 1e-30 (a ±1e-35 flip) are left out of the ratios and counted",
    "moved": "the same model with its ±1e-35 thresholds moved halfway to the nearest non-zero training value "
             "(identical labels on the training data); the attacks ran on the raw model, so a ratio below 1 is an "
             "attack that found a ±1e-35 flip of the raw model",
}


def _cache(root: Path, experiment: str, variant: str) -> dict[str, Any] | None:
    path = root / "exact" / f"{experiment.removesuffix('-box')}-{variant}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _budgets(experiment: str) -> list[int]:
    return sorted({*PAPER_GBDT[experiment.removesuffix("-box")]["queries"], GOAL_BUDGET})


def _attacks(store: RunStore, experiment: str) -> list[str]:
    """The attacks with stored runs of ``experiment`` in the store's tag."""
    return sorted({a for e, a, *_ in store.index() if e == experiment})


def _cells(ratio: np.ndarray) -> list[dict[str, Any]]:
    """Per budget column of ``ratio`` (inputs × budgets, NaN where an input has no value): the statistics."""
    cells = []
    for j in range(ratio.shape[1]):
        v = ratio[:, j][~np.isnan(ratio[:, j])]
        cells.append({
            "n": int(len(v)), "median": float(np.median(v)) if len(v) else None,
            "mean": float(np.mean(v)) if len(v) else None,
            "within_1.1": int(np.sum(v <= GOAL_RATIO)), "below_1": int(np.sum(v < 1 - 1e-6)),
        })
    return cells


def _budget_tagged_row(experiment: str, budgets: list[int], pattern: str, solved: dict[int, dict[str, Any]],
                       tiny: set[int], db: Path | None) -> dict[str, Any] | None:
    """:data:`DEFAULT_ATTACK`'s ratio cells, column B from the runs of tag ``pattern`` with ``{B}`` = B — or, where
    no runs were made with B (the 10k goal column), from the trace of the smallest larger budget's runs; on the
    inputs every one of those tags ran. ``None`` when a column has no such runs."""
    made = sorted(set(PAPER_GBDT[experiment.removesuffix("-box")]["queries"]) | set(budgets))
    loaded: dict[int, dict[int, dict[str, Any]]] = {}  # a tag read once, though it may serve several columns

    def runs_made_with(c: int) -> dict[int, dict[str, Any]]:
        if c not in loaded:
            store = RunStore(db, pattern.format(B=c))
            loaded[c] = {int(r["image"]): r for r in store.records(experiment, DEFAULT_ATTACK)}
        return loaded[c]

    sources = []
    for b in budgets:
        for c in (m for m in made if m >= b):
            records = runs_made_with(c)
            if records:
                sources.append((b, c, records))
                break
        else:
            return None
    images = sorted(set.intersection(*(set(r) for *_, r in sources)) & set(solved) - tiny)
    if not images:
        return None
    ex = np.array([solved[i]["distance"] for i in images])
    d = np.column_stack([distances_at([records[i] for i in images], [b])[:, 0] for b, _, records in sources])
    return {"attack": f"{DEFAULT_ATTACK} (runs made with each budget, tags `{pattern}`)", "which": "all",
            "inputs": len(images), "cells": _cells(d / ex[:, None]),
            "made_with": {str(b): c for b, c, _ in sources}}


def ratios(results: Path, experiment: str, variant: str, db: Path | None = None,
           default_tags: str | None = None) -> dict[str, Any] | None:
    """Ratio statistics of every stored attack of ``experiment`` against one exact variant.

    Runs come from the results database ``db`` (default: the user's, as ``benchmarks.run_suite`` uses).
    ``default_tags`` (e.g. ``"base-{B}"``): a row for :data:`DEFAULT_ATTACK` from its runs made with each budget.
    """
    tag, _ = SOURCES[experiment]
    cache = _cache(results / "full", experiment, variant)
    if cache is None:
        return None
    exact = {int(k): v for k, v in cache["inputs"].items()}
    solved = {k: v for k, v in exact.items() if v["status"] == "optimal"}
    dist = np.array([v["distance"] for v in solved.values()])
    tiny = {k for k, v in solved.items() if v["distance"] < TINY}
    budgets = _budgets(experiment)
    store = RunStore(db, tag)
    attacks = _attacks(store, experiment)
    rows = []
    # The peers ran on the first inputs only: our attacks get a second row on exactly the peers' inputs.
    peer_images = {int(r["image"]) for a in attacks if not a.startswith("ours") for r in store.records(experiment, a)}
    selections = []
    for attack in attacks:
        everything = [r for r in store.records(experiment, attack) if int(r["image"]) in solved
                      and int(r["image"]) not in tiny]
        selections.append((attack, "all", everything))
        shared = [r for r in everything if int(r["image"]) in peer_images]
        if peer_images and attack.startswith("ours") and len(shared) < len(everything):
            selections.append((attack, "peers' inputs", shared))
    for attack, which, records in selections:
        if not records:
            continue
        d = distances_at(records, budgets)
        ex = np.array([solved[int(r["image"])]["distance"] for r in records])
        rows.append({"attack": attack, "which": which, "inputs": len(records), "cells": _cells(d / ex[:, None])})
    if default_tags:
        row = _budget_tagged_row(experiment, budgets, default_tags, solved, tiny, db)
        if row is not None:
            rows.append(row)
    return {
        "experiment": experiment, "variant": variant, "runs_tag": tag, "budgets": budgets,
        "exact": {
            "inputs": len(exact), "optimal": len(solved), "tiny": len(tiny),
            "statuses": {s: sum(v["status"] == s for v in exact.values())
                         for s in sorted({v["status"] for v in exact.values()})},
            "median": float(np.median(dist)) if len(dist) else None,
            "median_without_tiny": float(np.median(dist[dist >= TINY])) if np.any(dist >= TINY) else None,
            "seconds_median": float(np.median([v["seconds"] for v in exact.values()])),
            "seconds_max": float(max(v["seconds"] for v in exact.values())),
            "command": cache.get("command", ""), "bounds": cache.get("bounds"), "facts": cache.get("facts", {}),
        },
        "rows": rows,
    }


def _fmt(c: dict[str, Any]) -> str:
    if not c["n"]:
        return "-"
    extra = f", {c['below_1']} below 1" if c["below_1"] else ""
    return f"{c['median']:.2f} / {c['mean']:.2f} ({c['within_1.1']}/{c['n']} ≤ 1.1{extra})"


def _section(block: dict[str, Any], label: str) -> list[str]:
    ex = block["exact"]
    budgets = block["budgets"]
    lines = [
        f"**Exact minimum on the {label}** (`{block['variant']}`): {ex['optimal']} of {ex['inputs']} inputs solved "
        f"to proven optimality ({ex['statuses']}), median exact L2 "
        f"{ex['median']:.4g}" + (f" ({ex['tiny']} below 1e-30: ±1e-35 flips; median without them "
                                 f"{ex['median_without_tiny']:.4g})" if ex["tiny"] else "")
        + f"; HiGHS time per input median {ex['seconds_median']:.0f} s, max {ex['seconds_max']:.0f} s.",
        "",
        "| attack | inputs | " + " | ".join(f"{b:,}" for b in budgets) + " |",
        "|---|---|" + "---|" * len(budgets),
    ]
    for row in block["rows"]:
        which = f"{row['inputs']}" if row["which"] == "all" else f"{row['inputs']} (the peers' inputs)"
        lines.append(f"| {row['attack']} | {which} | " + " | ".join(_fmt(c) for c in row["cells"]) + " |")
    return lines


def _default_row(block: dict[str, Any]) -> dict[str, Any] | None:
    """The row of the default attack (runs made with each budget), if the report has one."""
    return next((r for r in block["rows"] if "made_with" in r), None)


def _goal_line(block: dict[str, Any]) -> str:
    row = _default_row(block)
    name = DEFAULT_ATTACK if row is not None else DEFAULT_SOLVER
    row = row or next((r for r in block["rows"] if r["attack"] == DEFAULT_SOLVER and r["which"] == "all"), None)
    if row is None:
        return ""
    c = row["cells"][block["budgets"].index(GOAL_BUDGET)]
    return (f"Goal (our default attack, `{name}`, median ratio ≤ {GOAL_RATIO} at {GOAL_BUDGET:,} queries): "
            f"median {c['median']:.2f}, {'met' if c['median'] <= GOAL_RATIO else 'NOT met'} "
            f"({c['within_1.1']} of {c['n']} inputs within 1.1).")


def _medians_at(row: dict[str, Any], cols: list[int]) -> str:
    return " / ".join(f"{row['cells'][j]['median']:.2f}" for j in cols)


def _medians_with_inputs(row: dict[str, Any] | None, cols: list[int]) -> str:
    """A summary cell for a row on all its own inputs: the medians and how many inputs, or ``-`` without it."""
    return "-" if row is None else f"{_medians_at(row, cols)} ({row['inputs']})"


SUMMARY_ATTACKS = ("ours-rgf", "ours-sign", "ours-coordinate", "art-hsj", "art-signopt", "fb-boundary")


def summary(blocks: dict[str, list[tuple[dict[str, Any], str]]]) -> list[str]:
    """Compact table: median ratio at 10k and at the largest budget, on the inputs every attack ran on."""
    head = ["| experiment (exact on) | exact median L2 | inputs | "
            + " | ".join(f"{a}" for a in SUMMARY_ATTACKS) + f" | `{DEFAULT_SOLVER}` on all inputs"
            f" | `{DEFAULT_ATTACK}` (the default, runs made with each budget) |",
            "|---|---|---|" + "---|" * (len(SUMMARY_ATTACKS) + 2)]
    for experiment, items in blocks.items():
        for block, label in items:
            budgets = block["budgets"]
            cols = [budgets.index(GOAL_BUDGET), len(budgets) - 1]
            by = {(r["attack"], r["which"]): r for r in block["rows"]}
            cells, n = [], None
            for a in SUMMARY_ATTACKS:
                row = by.get((a, "peers' inputs")) or by.get((a, "all"))
                if row is None:
                    cells.append("-")
                    continue
                n = row["inputs"] if n is None else n
                cells.append(_medians_at(row, cols))
            own_cell = _medians_with_inputs(by.get((DEFAULT_SOLVER, "all")), cols)
            today_cell = _medians_with_inputs(_default_row(block), cols)
            ex = block["exact"]
            tiny = f", {ex['tiny']} flip(s) at ~1e-35 left out" if ex["tiny"] else ""
            head.append(f"| {experiment} ({label}) | {ex['median_without_tiny'] or ex['median']:.4f} "
                        f"({ex['optimal']} proven{tiny}) | {n} | " + " | ".join(cells)
                        + f" | {own_cell} | {today_cell} |")
    budgets_note = (f"Cells: median per-input ratio attack L2 / exact minimum at {GOAL_BUDGET:,} queries / at the "
                    "largest budget (HIGGS 29,598, MNIST 32,230), on the inputs the peers ran on (ours also on all "
                    "inputs, last column).")
    return [budgets_note, "", *head]


def _blocks(results: Path, experiments: list[str], db: Path | None = None, default_tags: str | None = None
            ) -> dict[str, list[tuple[dict[str, Any], str]]]:
    blocks: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for experiment in experiments:
        if not _attacks(RunStore(db, SOURCES[experiment][0]), experiment):
            continue
        for variant, label in EXACT_OF[experiment]:
            block = ratios(results, experiment, variant, db, default_tags)
            if block is not None:
                blocks.setdefault(experiment, []).append((block, label))
    return blocks


def _write_section(results: Path, experiment: str, items: list[tuple[dict[str, Any], str]]) -> None:
    """Replace the exact-minimum section at the end of the experiment's Table 3 page."""
    tag, stem = SOURCES[experiment]
    link = "table3_exact.md" if tag == "full" else "../full/table3_exact.md"
    section = [BEGIN, "", "## Beside the exact minimum", "", f"From `{COMMAND}` (all of it: [{link}]({link})).", ""]
    for block, label in items:
        section += _section(block, label) + [""]
        goal = _goal_line(block)
        if goal:
            section += [goal, ""]
    section.append(END)
    page = results / tag / f"{stem}.md"
    if page.exists():
        text = page.read_text()
        if BEGIN in text:
            text = text[: text.index(BEGIN)]
        write_page(page, [text.rstrip(), "", *section], echo=False)


def refresh_page(results: Path, root: Path, experiment: str) -> bool:
    """Re-add the exact-minimum section after ``run_suite`` rewrote a Table 3 page (when minima are cached)."""
    if experiment not in SOURCES or root.resolve() != (results / SOURCES[experiment][0]).resolve():
        return False
    items = _blocks(results, [experiment], default_tags=DEFAULT_TAGS).get(experiment)
    if not items:
        return False
    _write_section(results, experiment, items)
    return True


COMMAND = "python -m benchmarks.trees_exact report"


def report(args: argparse.Namespace) -> None:
    """Write ``table3_exact.md`` / ``.json`` and the sections of the Table 3 pages."""
    results = args.results_dir
    full = results / args.tag
    default_tags = getattr(args, "default_tags", DEFAULT_TAGS)
    blocks = _blocks(results, list(SOURCES), default_tags=default_tags)
    command = COMMAND if default_tags == DEFAULT_TAGS else f"{COMMAND} --default-tags '{default_tags}'"
    md = [
        "# Table 3 beside the exact minimum: attack L2 / exact minimal L2 (LightGBM GBDTs)",
        "",
        f"Command: `{command}` (reads the cached exact minima in `exact/` and the stored runs; the minima were "
        "computed by the commands below).",
        "",
        "- Exact minimum: the minimal L2 distance to a point the model labels differently, inside the experiment's "
        "box, by the mixed-integer program of Kantchelian et al. (ICML 2016) solved by HiGHS "
        "(`applications.trees.exact_minimal_adversarial`, one thread, relative gap 1e-6); every point was "
        "labelled again by the LightGBM model itself.",
        "- Cells: median / mean over inputs of the per-input ratio attack distortion / exact minimum, the number "
        "of inputs within 1.1 × the minimum, and how many fell below it. An attack that found nothing within a "
        "budget counts as ratio inf (it pulls the median up and makes the mean inf).",
        f"- Which model each ratio uses: `raw`: {VARIANT_NOTE['raw']}; `moved`: {VARIANT_NOTE['moved']}.",
        f"- {GOAL_BUDGET:,} queries is the issue's goal column (read from the same traces); the other columns are "
        "the paper's Table 3 query counts.",
        "",
    ]
    md += ["## Summary", "", *summary(blocks), ""]
    out_json: dict[str, Any] = {"command": command, "experiments": {}}
    for experiment, items in blocks.items():
        tag, stem = SOURCES[experiment]
        md += [f"## {experiment} (runs: `{tag}/runs/{experiment}`, page `{stem}.md`)", ""]
        for block, label in items:
            md += _section(block, label) + [""]
            md += [f"Exact minima computed by `{block['exact']['command']}`.", ""]
            goal = _goal_line(block)
            if goal:
                md += [goal, ""]
        out_json["experiments"][experiment] = [b for b, _ in items]
        _write_section(results, experiment, items)
    write_page(full / "table3_exact.md", md, out_json)
