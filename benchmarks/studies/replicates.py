"""Our default attack's median in the headline's missed cells, with other draws of its seeds on the same inputs.

The headline (:mod:`benchmarks.headline`) compares one run of each attack per input. Which basin of g a run ends
in hangs on its seed (the start, the race), and on 10–20 inputs a median can move by several percent with the
seeds alone. ``run_suite --replicate R`` makes the same calls with another seed each — the same inputs, budgets,
code and harness — and this page puts our median from those runs beside the headline's, each over the same best
peer's median at that budget. The goal's verdict stays the headline's own draw: the peers have one run per input,
and their medians would move with their seeds too.

Usage::

    python -m benchmarks.studies.replicates --headline benchmarks/results/suite/full/headline.json \\
        --tags "rep1-{B},rep2-{B}" --out benchmarks/results/suite/full/replicates.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from benchmarks.headline import GOAL, misses, per_input_ratio
from benchmarks.pages import command_line, write_page
from benchmarks.store import RunStore
from benchmarks.tables import distances_at


def replicate_column(
    store: RunStore, experiment: str, attack: str, inputs: list[int], budget: int, exact: bool = True
) -> list[float] | None:
    """``attack``'s L2 at ``budget`` on ``inputs`` (positions, in that order) from ``store``'s runs made with that
    budget (``exact``: ours plans its race from its budget) or, for a peer, with that budget or more (its trace
    gives every smaller one); ``None`` unless every input has one (a median over fewer inputs would not be the
    headline's)."""
    runs = {r["position"]: r for r in store.records(experiment, attack)
            if int(r["budget"]) == budget or (not exact and int(r["budget"]) > budget)}
    if not set(inputs) <= set(runs):
        return None
    return [float(v) for v in distances_at([runs[p] for p in inputs], [budget])[:, 0]]


def cell(table: dict, budget: str, ours: str, columns: list[tuple[str, list[float] | None]],
         peer_columns: list[tuple[str, list[float] | None]] | None = None) -> dict:
    """One missed cell: the best peer's median, ours in the headline's draw and in each replicate (median, ratio
    to that best peer, and the median input by input of replicate / headline run); with ``peer_columns``, that
    best peer's median in other draws of its own seeds too, and ours of the headline over it."""
    peer = table["best_peer"][budget]
    peer_median = float(table["medians"][peer][budget])
    base = np.asarray(table["per_input"][ours][budget], dtype=float)
    out = {"experiment": table["experiment"], "budget": int(budget), "best_peer": peer, "peer_median": peer_median,
           "inputs": len(table["inputs"]), "headline": {"median": float(np.median(base)),
                                                         "ratio": float(np.median(base)) / peer_median},
           "replicates": {}}
    for tag, col in columns:
        if col is None:
            out["replicates"][tag] = None
            continue
        values = np.asarray(col, dtype=float)
        out["replicates"][tag] = {"median": float(np.median(values)),
                                  "ratio": float(np.median(values)) / peer_median,
                                  "per_input_vs_headline": per_input_ratio(values, base)[0]}
    out["peer_replicates"] = {tag: None if col is None else float(np.median(col)) for tag, col in peer_columns or []}
    return out


def markdown(cells: list[dict], tags: list[str], command: str, peer_tags: list[str] | None = None) -> list[str]:
    peer_tags = peer_tags or []
    lines = ["# Our misses with other draws of the attack's seeds", "", f"Command: `{command}`", "",
             "Each missed cell of the headline (exact ratio above "
             f"{GOAL:.2f}): our default attack's median L2 on the same inputs, in the headline's draw of its seeds "
             "and in runs made with other draws (`run_suite --replicate R`, one input per call, each made with "
             "the cell's budget), each over the same best peer's median (in brackets; goal <= "
             f"{GOAL:.2f}). After each replicate's figure, the median input by input of its L2 over the headline "
             "run's. A dash: that tag has no run of every input. The peers have one draw each: this is how far our "
             "seeds alone move our median, not a new verdict."
             + ("" if not peer_tags else " The last columns: the best peer's own median in other draws of its "
                "seeds (`run_suite --replicate R`, runs made with its largest budget, read at the cell's), and "
                "ours of the headline over it (in brackets)."), "",
             "| cell | best peer | goal (0.9 × peer) | ours, headline | " + " | ".join(tags)
             + "".join(f" | best peer, {t}" for t in peer_tags) + " |",
             "|---|---|---|---|" + "---|" * (len(tags) + len(peer_tags))]
    for c in cells:
        reps = []
        for tag in tags:
            r = c["replicates"].get(tag)
            reps.append("—" if r is None else
                        f"{r['median']:.4g} ({r['ratio']:.3f}); per input {r['per_input_vs_headline']:.3f}")
        for tag in peer_tags:
            m = c["peer_replicates"].get(tag)
            reps.append("—" if m is None else f"{m:.4g} ({c['headline']['median'] / m:.3f})")
        lines.append(f"| {c['experiment']} at {c['budget']:,} ({c['inputs']} inputs) | {c['best_peer']} "
                     f"{c['peer_median']:.4g} | {GOAL * c['peer_median']:.4g} | {c['headline']['median']:.4g} "
                     f"({c['headline']['ratio']:.3f}) | " + " | ".join(reps) + " |")
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--headline", type=Path, default=Path("benchmarks/results/suite/full/headline.json"))
    p.add_argument("--tags", required=True, help="TEMPLATE,...: suite tags of the replicate runs, {B} the budget")
    p.add_argument("--peer-tags", default="",
                   help="TAG,...: suite tags of the best peers' runs with other draws of their seeds (any budget)")
    p.add_argument("--ours", default="ours-sign-growing")
    p.add_argument("--db", default=None)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/suite/full/replicates.md"))
    a = p.parse_args(argv)
    command = command_line("studies.replicates", argv)
    templates = [t for t in a.tags.split(",") if t]
    if not templates or any("{B}" not in t for t in templates):
        raise SystemExit(f"--tags takes comma-separated templates with {{B}} in each, got {a.tags!r}")
    peer_tags = [t for t in a.peer_tags.split(",") if t]
    tables = {t["experiment"]: t for t in json.loads(a.headline.read_text())}
    cells = []
    for experiment, budget, _, _ in misses(list(tables.values())):
        t = tables[experiment]
        if a.ours not in t.get("per_input", {}):
            raise SystemExit(f"{a.headline} keeps no per-input values of {a.ours} for {experiment}: rerun the headline")
        columns = [(tmpl, replicate_column(RunStore(a.db, tmpl.replace("{B}", budget)), experiment, a.ours,
                                           t["inputs"], int(budget))) for tmpl in templates]
        peer = t["best_peer"][budget]
        peer_columns = [(tag, replicate_column(RunStore(a.db, tag), experiment, peer, t["inputs"], int(budget),
                                               exact=False)) for tag in peer_tags]
        cells.append(cell(t, budget, a.ours, columns, peer_columns))
    write_page(a.out, markdown(cells, templates, command, peer_tags), cells)


if __name__ == "__main__":
    main()
