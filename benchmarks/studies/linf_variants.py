"""The L∞ attack's parts one at a time: its default beside variants that change one of them.

Each variant is ``attack(..., norm=np.inf)`` with one setting changed from the L∞ defaults (``sign-flips`` with
blocks of the flat vector, one candidate a round, each asked once a margin below the incumbent, after a start at
the all-ones vertex): candidates asked at the incumbent and searched out as RayS does (whose precision the
precision variants set), square image tiles as blocks (across the channels, or of one channel), sibling candidates
asked together, a finer or a coarser precision, a start of one random direction (with square tiles too), the
L2 attack's start of 30 directions. Every variant runs once per budget on the same inputs with the
same seed; the page gives each one's median L∞ and its per-input median ratio to the default's.

Usage::

    python -m benchmarks.studies.linf_variants --experiments mnist-untargeted,cifar-untargeted --n 10 \\
        --budgets 250,1000 --out benchmarks/results/ablation/linf/variants/README.md
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import command_line, write_page
from benchmarks.studies.linf import names_from, per_input_ratio

__all__ = ["VARIANTS", "build_parser", "main", "measure", "page"]

#: Each variant's change to the L∞ defaults: its solver options and, where it changes it, its start's.
VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    "searched candidates (RayS's)": {"solver_options": {"accept": "search"}},
    "square tiles": {"solver_options": {"layout": "tiles"}},
    "channel tiles": {"solver_options": {"layout": "channel-tiles"}},
    "random start": {"start": {"n_initial": 1}},
    "random start and square tiles": {"start": {"n_initial": 1}, "solver_options": {"layout": "tiles"}},
    "revisit from level 2": {"solver_options": {"revisit": 2}},
    "revisit from level 4": {"solver_options": {"revisit": 4}},
    "2 candidates a round": {"solver_options": {"q": 2}},
    "4 candidates a round": {"solver_options": {"q": 4}},
    "searched to precision ×0.1 (relative_eps 0.01)": {"solver_options": {"accept": "search", "relative_eps": 0.01}},
    "searched to precision ×3 (relative_eps 0.3)": {"solver_options": {"accept": "search", "relative_eps": 0.3}},
    "start of 30 directions": {"start": {"n_initial": 30}},
}


def measure(experiment: str, n: int, budgets: list[int], seed: int, variants: list[str]) -> list[dict[str, Any]]:
    """Rows per (variant, budget): the per-input L∞ of ``experiment``'s first ``n`` inputs (``inf``: failed)."""
    import torch

    from applications.hardlabel import Start, attack
    from benchmarks.experiments import Plan, build

    torch.set_num_threads(1)
    exp = build(experiment, Plan(n_ours=n, n_peers=0, budgets=tuple(budgets)), seed=0, torch_device="cpu")
    b = exp.batch(list(range(min(n, len(exp.x)))))
    lo, hi = float(np.min(b.bounds[0])), float(np.max(b.bounds[1]))
    rows = []
    for name in variants:
        change = VARIANTS[name]
        start = Start(**change["start"]) if "start" in change else None
        for budget in budgets:
            t0 = time.perf_counter()
            res = attack(exp.label_fn, b.x0, b.y0, budget=budget, seed=seed, norm=np.inf, n_classes=b.n_classes,
                         bounds=(lo, hi), start=start, solver_options=change.get("solver_options"))
            ok = res.success & (np.asarray(exp.label_fn(res.x_adv)) != b.y0)
            linf = np.abs(res.x_adv.astype(np.float64) - b.x0.astype(np.float64)).reshape(len(b.x0), -1).max(1)
            rows.append({"experiment": experiment, "variant": name, "budget": budget,
                         "values": np.where(ok, linf, np.inf).tolist(), "seconds": time.perf_counter() - t0})
    return rows


def page(rows: list[dict[str, Any]], command: str) -> list[str]:
    """The page: per experiment and budget, each variant's median L∞ and per-input median ratio to the default."""
    lines = ["# The L∞ attack's parts one at a time", "", f"Command: `{command}`", "",
             "Median L∞ of the first inputs of each experiment (a failure counts as ∞) and, per input, the variant's "
             "L∞ over the default's (median; below 1: the variant is better). Every run with its own budget, "
             "the same inputs and seed.", "",
             "| experiment | budget | variant | median L∞ | variant / default per input |", "|---|---:|---|---:|---:|"]
    for (exp, budget), default in {(r["experiment"], r["budget"]): r for r in rows
                                   if r["variant"] == "default"}.items():
        for r in (r for r in rows if r["experiment"] == exp and r["budget"] == budget):
            ratio = per_input_ratio(r["values"], default["values"])
            lines.append(f"| {exp} | {budget} | {r['variant']} | {np.median(r['values']):.4f} | {ratio:.3f} |")
    return lines


def _variants(text: str) -> list[str]:
    names = names_from(text, VARIANTS, "variant")
    return names if "default" in names else ["default", *names]


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", default="mnist-untargeted,cifar-untargeted")
    p.add_argument("--n", type=int, default=10)
    p.add_argument("--budgets", default="250,1000")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--variants", type=_variants, default=list(VARIANTS),
                   help="comma-separated names of VARIANTS (the default is always run)")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ablation/linf/variants/README.md"))
    return p


def main(argv: list[str] | None = None) -> None:
    a = build_parser().parse_args(argv)
    budgets = [int(v) for v in a.budgets.split(",")]
    rows = [r for e in a.experiments.split(",") for r in measure(e, a.n, budgets, a.seed, a.variants)]
    data = [{**r, "values": [v if np.isfinite(v) else None for v in r["values"]]} for r in rows]
    write_page(a.out, page(rows, command_line("studies.linf_variants", argv)), data)


if __name__ == "__main__":
    main()
