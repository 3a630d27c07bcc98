"""Where our late distances lose to the white-box floor: the class each attack's point ends in.

On an untargeted attack the boundary distance g(θ) has a basin per adversarial class (and more), and a descent
ends in the one its start led to. This reads the stored suite runs of our attack (``--tag``) and of C&W (tag
``full``), labels both returned points with the experiment's model, and splits the inputs by whether the two
ended in the same class: where they did, the ratio of our distance to C&W's says how far our descent
converged; where they did not, it is the price of the basin.

Usage::

    python -m benchmarks.studies.basins --tag exp-record --experiments mnist-untargeted,cifar-untargeted \\
        --out benchmarks/results/suite/basins.md
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import command_line, write_page

OURS = "ours-sign-growing"
FLOOR = "cw-l2"


def split_by_class(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Median ratio ours / C&W among the inputs that ended in C&W's class and among the others.

    Examples
    --------
    >>> rows = [{"ours_class": 1, "cw_class": 1, "ratio": 1.0}, {"ours_class": 2, "cw_class": 1, "ratio": 1.2}]
    >>> split_by_class(rows)["other_class"]
    {'inputs': 1, 'median_ratio': 1.2, 'mean_ratio': 1.2}
    """
    out: dict[str, Any] = {}
    for name, keep in (("same_class", True), ("other_class", False)):
        r = np.array([row["ratio"] for row in rows if (row["ours_class"] == row["cw_class"]) == keep], dtype=float)
        out[name] = {"inputs": int(len(r)), "median_ratio": float(np.median(r)) if len(r) else None,
                     "mean_ratio": float(np.mean(r)) if len(r) else None}
    return out


def experiment_rows(experiment: str, tag: str, db: str | None) -> list[dict[str, Any]]:
    """One row per input both stored attacks ran: each point's class, each distance, the ratio."""
    import torch

    from benchmarks.experiments import Plan, build
    from benchmarks.store import RunStore, decode_array

    torch.set_num_threads(1)
    exp = build(experiment, Plan(n_ours=1, n_peers=1, budgets=(1000,)), seed=0, torch_device="cpu")
    floor, ours = RunStore(db, tag="full"), RunStore(db, tag=tag)
    rows = []
    for rec in sorted(floor.records(experiment, FLOOR), key=lambda r: r["position"]):
        mine = ours.load(experiment, OURS, rec["image"])
        if mine is None or not (rec.get("success") and mine.get("success")):
            continue
        points = np.stack([decode_array(rec["x_best"]), decode_array(mine["x_best"])]).astype(np.float32)
        # each point labelled alone, as the suite's monitor labels a returned point
        cw_class, ours_class = (int(exp.label_fn(points[i:i + 1])[0]) for i in range(2))
        rows.append({"position": rec["position"], "image": rec["image"], "y0": rec["y0"], "target": rec["target"],
                     "cw_class": cw_class, "ours_class": ours_class, "cw": float(rec["distortion"]),
                     "ours": float(mine["distortion"]), "budget": int(mine["budget"]),
                     "ratio": float(mine["distortion"]) / float(rec["distortion"])})
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tag", default="exp-record", help="suite tag of our attack's runs")
    p.add_argument("--experiments", default="mnist-untargeted,cifar-untargeted,mnist-targeted,cifar-targeted")
    p.add_argument("--db", default=None, help="results database (default: the suite's)")
    p.add_argument("--out", type=Path, required=True, help="Markdown page (a .json beside it)")
    a = p.parse_args(argv)
    command = command_line("studies.basins", argv)
    lines = ["# Where our late distances lose to the white-box floor: the class each point ends in", "",
             f"Command: `{command}`", "",
             f"Our attack's points (suite tag `{a.tag}`, {OURS}, at its largest budget) and C&W's (tag `full`), "
             "labelled again by the experiment's model. Ratio: our L2 over C&W's on that input. An input whose two "
             "points the model puts in the same class shows how far our descent converged; one in another class "
             "shows the price of the basin our start led to. (A targeted attack's points are all in the target "
             "class.)", "",
             "| experiment | budget | inputs | same class: inputs, median ratio, mean | other class: inputs, median "
             "ratio, mean |", "|---|---|---|---|---|"]
    details, summary = [], {}
    for experiment in a.experiments.split(","):
        rows = experiment_rows(experiment, a.tag, a.db)
        if not rows:
            lines.append(f"| {experiment} | — | 0 | no stored runs of both | |")
            continue
        s = split_by_class(rows)
        summary[experiment] = s
        cells = []
        for name in ("same_class", "other_class"):
            c = s[name]
            cells.append(f"{c['inputs']}, {c['median_ratio']:.3f}, {c['mean_ratio']:.3f}" if c["inputs"] else "0")
        lines.append(f"| {experiment} | {rows[0]['budget']:,} | {len(rows)} | {cells[0]} | {cells[1]} |")
        details += [f"| {experiment} | {r['position']} | {r['y0']} | {r['cw_class']} | {r['ours_class']} | "
                    f"{r['cw']:.3f} | {r['ours']:.3f} | {r['ratio']:.3f} |" for r in rows]
    lines += ["", "## Per input", "", "| experiment | position | label | C&W's class | our class | C&W L2 | our L2 | "
              "ratio |", "|---|---|---|---|---|---|---|---|", *details]
    write_page(a.out, lines, {"command": command, "summary": summary})


if __name__ == "__main__":
    main()
