"""Our default attack beside the white-box floor, input by input, read from the headline's JSON.

The headline (:mod:`benchmarks.headline`) sets our median beside the best peer's; its row ``cw-l2`` is the
white-box C&W attack on the same inputs, the floor no hard-label attack can be expected to go below. This page
asks how far above that floor our runs end, input by input — where the goal of ≤ 0.90 × the best peer asks a
median within a few percent of it, the ratio to the floor says whether that is still within reach. It needs no
database: the headline's JSON keeps every attack's L2 per input.

Usage::

    python -m benchmarks.studies.floor --headline benchmarks/results/suite/full/headline.json \\
        --out benchmarks/results/suite/full/floor.md
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.headline import GOAL, misses
from benchmarks.pages import command_line, write_page

FLOOR = "cw-l2"
#: "Within reach of the floor": the share of inputs that end within this factor of it.
NEAR = 1.05


def floor_rows(table: dict[str, Any], ours: str) -> list[dict[str, Any]]:
    """Per budget of one headline table: the median of ours / the floor input by input, the share of inputs
    within :data:`NEAR` of it, the ratio of the two medians, and what the goal asks of that median ratio."""
    per_input, rows = table["per_input"], []
    for b in map(str, table["budgets"]):
        mine, floor = per_input.get(ours, {}).get(b), per_input.get(FLOOR, {}).get(b)
        if mine is None or floor is None or None in mine or not np.all(np.isfinite(np.asarray(mine, float))):
            continue  # (not run that far on every input)
        ratio = np.asarray(mine, float) / np.asarray(floor, float)
        peer = table["best_peer"][b]
        asked = GOAL * table["medians"][peer][b] / float(np.median(floor))
        rows.append({"experiment": table["experiment"], "budget": int(b), "inputs": len(ratio),
                     "per_input": float(np.median(ratio)), "near": float(np.mean(ratio <= NEAR)),
                     "medians": float(np.median(mine) / np.median(floor)), "asked": asked, "best_peer": peer,
                     "met": bool(table["ratio"][b] <= GOAL)})
    return rows


def summary(rows: list[dict[str, Any]], missed: set[tuple[str, int]]) -> list[str]:
    lines = ["| experiment | budget | inputs | ours / C&W, per input (median) | inputs within "
             f"{NEAR:g} × C&W | ours / C&W, medians | the goal asks, medians (0.90 × best peer / C&W) | goal |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        goal = "missed" if (r["experiment"], r["budget"]) in missed else ("met" if r["met"] else "—")
        lines.append(f"| {r['experiment']} | {r['budget']:,} | {r['inputs']} | {r['per_input']:.3f} | "
                     f"{r['near']:.0%} | {r['medians']:.3f} | {r['asked']:.3f} ({r['best_peer']}) | {goal} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--headline", type=Path, default=Path("benchmarks/results/suite/full/headline.json"))
    p.add_argument("--ours", default="ours-sign-growing")
    p.add_argument("--from-budget", type=int, default=4000, help="the smallest budget on the page")
    p.add_argument("--out", type=Path, required=True, help="Markdown page (a .json beside it)")
    a = p.parse_args(argv)
    tables = [t for t in json.loads(a.headline.read_text()) if FLOOR in t["per_input"]]
    rows = [r for t in tables for r in floor_rows(t, a.ours) if r["budget"] >= a.from_budget]
    missed = {(e, int(b)) for e, b, _, _ in misses(tables)}
    command = command_line("studies.floor", argv)
    lines = ["# Our default attack beside the white-box floor, input by input", "",
             f"Command: `{command}`", "",
             " ".join(part.strip() for part in (__doc__ or "").split("\n\n")[1].splitlines()), "",
             f"Read from `{a.headline}` ({a.ours} against {FLOOR}, the same inputs). 'The goal asks' is the "
             f"median ratio ours / C&W at which ours would be {GOAL:.2f} × the best peer's median: below 1, the "
             "goal asks for less than the white-box attack's median.", "", *summary(rows, missed)]
    write_page(a.out, lines, {"command": command,
                              "rows": [{k: round(v, 4) if isinstance(v, float) else v for k, v in r.items()}
                                       for r in rows]})


if __name__ == "__main__":
    main()
