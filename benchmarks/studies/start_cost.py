"""What the attack's initial search costs: queries spent before the first descent step, per selection rule.

Runs the attack with ``max_iter=0`` (no descent step), no restarts, no pruning and no final re-check, so every query it
spends is the initial search's (and the one that labels the input), on the first n inputs of each suite
experiment, batched; reports the median and the 10th / 90th percentiles of the queries per input, and the
median distance the start reaches.

Usage::

    python -m benchmarks.studies.start_cost --selections tournament,record \\
        --out benchmarks/results/ablation/record-start/start_cost.md
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import command_line, write_page

EXPERIMENTS = "mnist-untargeted,mnist-targeted,cifar-untargeted,cifar-targeted,gbdt-higgs,gbdt-mnist"


def start_cost(experiment: str, selection: str, n: int, seed: int) -> dict[str, Any]:
    """Queries per input of the initial search alone, and the distance it starts from."""
    import torch

    from applications.hardlabel import Polish, Runs, Start, Verify, attack
    from benchmarks.experiments import Plan, build

    torch.set_num_threads(1)
    exp = build(experiment, Plan(n_ours=n, n_peers=n, budgets=(2000,)), seed=0, torch_device="cpu")
    b = exp.batch(list(range(min(n, len(exp.x)))))
    opts: dict[str, Any] = {}
    if b.starts is not None:  # targeted starts (and untargeted fallbacks) come from the experiment's pools
        target = b.target if b.target is not None else (b.y0 + 1) % b.n_classes
        opts["target_pool"] = (b.starts.reshape(-1, *b.x0.shape[1:]), np.repeat(target, b.starts.shape[1]))
    res = attack(exp.label_fn, b.x0, b.y0, target=b.target, budget=2000, seed=seed, bounds=b.bounds,
                 n_classes=b.n_classes, start=Start(initial_selection=selection, **opts),
                 runs=Runs(max_iter=0, restarts=0, fresh_restarts=False), polish=Polish(prune=False),
                 verify=Verify(queries=0))
    q = np.asarray(res.queries, dtype=float)
    return {"experiment": experiment, "selection": selection, "inputs": len(q),
            "queries": [float(np.percentile(q, p)) for p in (10, 50, 90)],
            "distance": float(np.median(np.asarray(res.distortion)))}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", default=EXPERIMENTS)
    p.add_argument("--selections", default="tournament,record")
    p.add_argument("--n", type=int, default=20, help="inputs per experiment")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, required=True, help="Markdown page (a .json beside it)")
    a = p.parse_args(argv)
    command = command_line("studies.start_cost", argv)
    rows = [start_cost(e, s, a.n, a.seed) for e in a.experiments.split(",") for s in a.selections.split(",")]
    lines = ["# What the initial search costs", "", f"Command: `{command}`", "",
             "Queries per input spent before the first descent step (the attack run with `max_iter=0`, no "
             "restarts, no final re-check; the one query that labels the input included), batched, on the first "
             "inputs of each suite experiment; and the median distance the start reaches.", "",
             "| experiment | selection | inputs | queries: median (10th–90th percentile) | median start L2 |",
             "|---|---|---|---|---|"]
    for r in rows:
        lo, med, hi = r["queries"]
        lines.append(f"| {r['experiment']} | `{r['selection']}` | {r['inputs']} | {med:.0f} ({lo:.0f}–{hi:.0f}) "
                     f"| {r['distance']:.4g} |")
    write_page(a.out, lines, {"command": command, "rows": rows})


if __name__ == "__main__":
    main()
