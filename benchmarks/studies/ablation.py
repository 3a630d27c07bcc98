"""Ablation of the query-efficiency parts: each part on/off, median L2 at 250 ... max budget.

Every variant attacks the same first ``--n`` inputs of a suite experiment (same selection, seed and
model as ``benchmarks.run_suite``) with one ``applications.hardlabel.attack`` call for all of them; the
medians at each budget come from the attack's own best-so-far traces (one run at the largest budget gives
every smaller one). The inputs share model calls, so a CNN's batch-size-dependent arithmetic can move a
near-boundary label: the suite (one input per call, a query monitor) is the reference for headline figures;
this table compares parts with each other.

Results are cached per (experiment, variant, n, budget) in ``--out``/runs (small JSON, not committed), so
an interrupted run resumes; the Markdown table, JSON summary and plot are rewritten from the cache. A page's
findings written by hand above its marker line (:data:`benchmarks.pages.GENERATED_MARKER`) are kept.

Usage::

    python -m benchmarks.studies.ablation --experiments mnist-untargeted --n 10 --budget 8000
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

BUDGETS = (250, 500, 1000, 2000, 4000, 8000, 20000, 50000)
from benchmarks.pages import GENERATED_MARKER, command_first, kept_head, write_page  # noqa: E402
from benchmarks.studies.ablation_variants import VARIANTS  # noqa: E402


def _variant_rank(variant: str) -> int:
    """Where ``variant`` stands in :data:`VARIANTS` (the pages' row order); unknown names go last."""
    return list(VARIANTS).index(variant) if variant in VARIANTS else len(VARIANTS)


def run_variant(exp: Any, variant: str, n: int, budget: int, seed: int) -> dict[str, Any]:
    """Attack the first ``n`` inputs of the built experiment ``exp`` with ``variant``; medians at each budget."""
    from applications.hardlabel import attack, attack_keywords

    solver, options = VARIANTS[variant]
    batch = exp.batch(list(range(n)))
    opts = dict(options)
    # As the suite's adapter: a tree ensemble's g is piecewise constant (only the rows that leave the probes'
    # shape to the solver's context read it; every earlier row pins its probes).
    opts.setdefault("piecewise_constant", batch.piecewise_constant)
    if batch.starts is not None:  # as the suite's adapter: the target pool (or the untargeted fallback)
        pool = batch.starts.reshape(-1, *batch.x0.shape[1:])
        pool_class = batch.target if batch.target is not None else (batch.y0 + 1) % batch.n_classes
        opts["target_pool"] = (pool, np.repeat(pool_class, batch.starts.shape[1]))
    t0 = time.perf_counter()
    res = attack(exp.label_fn, batch.x0, batch.y0, target=batch.target, budget=budget, solver=solver, seed=seed,
                 bounds=batch.bounds, n_classes=batch.n_classes, **attack_keywords(opts))
    cols = sorted({b for b in BUDGETS if b <= budget} | {budget})  # the run's own budget too
    at = {str(b): [float(v) for v in res.distortion_at(b)] for b in cols}
    return {
        "experiment": exp.name, "variant": variant, "solver": solver,
        "options": dict(options), "n": n, "budget": budget, "seed": seed,
        "success": float(np.mean(res.success)), "seconds": time.perf_counter() - t0,
        "distortion_at": at, "median_at": {b: float(np.median(v)) for b, v in at.items()},
    }


def paired(reference: dict[str, Any], other: dict[str, Any], budget: int) -> str:
    """:func:`benchmarks.tables.paired_ratio` of two runs' L2 per input at ``budget``."""
    from benchmarks.tables import paired_ratio

    return paired_ratio(reference["distortion_at"].get(str(budget), []), other["distortion_at"].get(str(budget), []))


def _pairing_key(run: dict[str, Any]) -> tuple[int, int, int]:
    """Runs paired input by input on a page share these: seed, number of inputs and the budget they were made with."""
    return run["seed"], run["n"], run["budget"]


def write_pages(out: Path, records: list[dict[str, Any]], command: str, plots: bool = True) -> None:
    """Markdown table, JSON summary and (``plots``) a plot per experiment.

    The page begins with its title and ``command`` (:func:`benchmarks.pages.command_first`). A page that already
    holds :data:`GENERATED_MARKER` keeps the text a person wrote above it (findings and context); everything
    below is written again from ``records``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from applications.figures import save_figure

    by_exp: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_exp.setdefault(r["experiment"], []).append(r)
    head = command_first(kept_head(out / "README.md"), "# Ablation of the query-efficiency parts", command)
    lines = head + [GENERATED_MARKER, ""]
    lines += ["Median L2 over the first n inputs of each suite experiment (failures = inf), from one attack call per "
             "variant at the largest budget (smaller budgets from its trace). Inputs share model calls here; the "
             "suite (one input per call, query monitor) is the reference for headline figures.", "",
             "Every run on this page is made (or, cached, reused) by one of:", ""]
    lines += [f"- `{c}`" for c in remake_commands(records, out, plots)] + [""]
    summary = {}
    for exp_name, recs in sorted(by_exp.items()):
        recs.sort(key=lambda r: (r["n"], r["budget"], _variant_rank(r["variant"]), r["seed"]))
        cols = sorted({int(b) for r in recs for b in r["median_at"]})
        seeds = sorted({r["seed"] for r in recs})
        sizes = sorted({r["n"] for r in recs})
        budgets = sorted({r["budget"] for r in recs})
        for r in recs:  # one row per variant, seed, size and budget, labelled with what varies on the page
            tags = (([f"seed {r['seed']}"] if len(seeds) > 1 else []) + ([f"n = {r['n']}"] if len(sizes) > 1 else [])
                    + ([f"budget {r['budget']:,}"] if len(budgets) > 1 else []))
            if tags:
                r["variant_label"] = f"{r['variant']} ({', '.join(tags)})"
        lines += [f"## {exp_name} (n = {', '.join(map(str, sizes))}, seed{'s' if len(seeds) > 1 else ''} "
                  f"{', '.join(map(str, seeds))}, budget{'s' if len(budgets) > 1 else ''} "
                  f"{', '.join(f'{b:,}' for b in budgets)})", "",
                  "| variant | solver | " + " | ".join(f"{c:,}" for c in cols) + " | success |",
                  "|---|---|" + "---|" * len(cols) + "---|"]
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for r in recs:
            med = [r["median_at"].get(str(c), float("nan")) for c in cols]
            label = r.get("variant_label", r["variant"])
            lines.append(f"| {label} | `{r['solver']}` | " + " | ".join(f"{m:.3f}" for m in med)
                         + f" | {r['success']:.0%} |")
            ax.plot(cols, [m if np.isfinite(m) else np.nan for m in med], marker="o", label=label)
        # Per seed, size and budget, the first row: the reference of the paired comparison below. A run made
        # with another budget is not its pair, even at a budget both traces reach: an attack may plan from its
        # budget (the polish before the end, a race's share), so only runs made alike are compared.
        firsts = {}
        for r in recs:
            firsts.setdefault(_pairing_key(r), r)
        others = [r for r in recs if firsts[_pairing_key(r)] is not r]
        if others:
            lines += ["", "Paired with the first row of the same seed, size and budget, input by input: the median "
                      "of the L2 ratio (the fractions of inputs lower / higher). Medians of a few inputs move with the "
                      "seed; this is the comparison that does not.", "",
                      "| variant | " + " | ".join(f"{c:,}" for c in cols) + " |", "|---|" + "---|" * len(cols)]
            for r in others:
                first = firsts[_pairing_key(r)]
                lines.append(f"| {r.get('variant_label', r['variant'])} vs {first['variant']} | "
                             + " | ".join(paired(first, r, c) for c in cols) + " |")
        ax.set(xscale="log", yscale="log", xlabel="queries", ylabel="median L2", title=exp_name)
        ax.legend(fontsize=7)
        fig.tight_layout()
        if plots:
            save_figure(fig, out / f"ablation_{exp_name}.png")
            lines += ["", f"![{exp_name}](ablation_{exp_name}.png)"]
        plt.close(fig)
        lines += [""]
        summary[exp_name] = [{k: r[k] for k in ("variant", "solver", "options", "n", "budget", "seed", "success",
                                                "median_at")} for r in recs]
    write_page(out / "README.md", lines, echo=False)  # the JSON below: one run per line, its own layout
    # One run per line: diffable, without the indentation's bulk (the tracked results have a size limit).
    body = ",\n".join(f"{json.dumps(name)}: [\n" + ",\n".join(json.dumps(_rounded(r)) for r in runs) + "\n]"
                      for name, runs in summary.items())
    (out / "ablation.json").write_text("{\n" + body + "\n}\n")


def build_parser() -> argparse.ArgumentParser:
    """The command line's parser (``tests/test_page_commands.py`` reads the pages' commands with it)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", default="mnist-untargeted", help="comma-separated suite experiments")
    p.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated variant names")
    p.add_argument("--n", type=int, default=10, help="inputs per experiment (the suite's first n)")
    p.add_argument("--budget", type=int, default=8000, help="largest budget (per input)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads")
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ablation"))
    p.add_argument("--no-plots", action="store_true",
                   help="tables only (the plots repeat them; the tracked results have a size limit)")
    p.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                   help="where torch models run (auto: CUDA when present)")
    return p


def main(argv: list[str] | None = None) -> None:
    """Run the variants not cached yet, then write the page from every cached run."""
    a = build_parser().parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(a.threads))
    import torch

    torch.set_num_threads(a.threads)
    device = ("cuda" if torch.cuda.is_available() else "cpu") if a.device == "auto" else a.device
    cache = a.out / "runs"
    cache.mkdir(parents=True, exist_ok=True)
    from benchmarks.experiments import Plan, build

    for exp_name in a.experiments.split(","):
        exp = None  # built (data and model loaded) once per experiment, and only when a variant must run
        for variant in a.variants.split(","):
            if variant not in VARIANTS:
                raise SystemExit(f"unknown variant {variant!r}; choose from {list(VARIANTS)}")
            key = f"{exp_name}__{variant}__n{a.n}__b{a.budget}__s{a.seed}".replace(" ", "_").replace("/", "-")
            path = cache / f"{_slug(key)}.json"
            if path.exists():
                continue
            if exp is None:
                exp = build(exp_name, Plan(n_ours=a.n, n_peers=a.n, budgets=(a.budget,)), seed=0,
                            torch_device=device)
            rec = run_variant(exp, variant, a.n, a.budget, a.seed)
            rec["device"] = device
            path.write_text(json.dumps(rec) + "\n")
            meds = "  ".join(f"{b}:{m:.3f}" for b, m in rec["median_at"].items())
            print(f"{exp_name:18s} {variant:38s} {meds}  ({rec['seconds']:.0f} s)", flush=True)
    records = [json.loads(f.read_text()) for f in sorted(cache.glob("*.json"))]
    command = "python -m benchmarks.studies.ablation " + shlex.join(sys.argv[1:] if argv is None else argv)
    write_pages(a.out, records, command,
                plots=not a.no_plots)


def remake_commands(records: list[dict[str, Any]], out: Path, plots: bool = True) -> list[str]:
    """The ``benchmarks.studies.ablation`` commands that make every run of ``records`` into ``out``, fewest first: one
    per (n, budget, seed, variants), naming every experiment that ran exactly those variants at those sizes."""
    variants: dict[tuple[str, int, int, int], set[str]] = {}
    for r in records:
        variants.setdefault((r["experiment"], r["n"], r["budget"], r["seed"]), set()).add(r["variant"])
    groups: dict[tuple[int, int, int, tuple[str, ...]], list[str]] = {}
    for (exp_name, n, budget, seed), names in sorted(variants.items()):
        ordered = tuple(sorted(names, key=lambda v: (_variant_rank(v), v)))
        groups.setdefault((n, budget, seed, ordered), []).append(exp_name)
    tail = "" if plots else " --no-plots"
    return [f"python -m benchmarks.studies.ablation --experiments {','.join(exps)} --n {n} --budget {budget} "
            f"--seed {seed} --variants {shlex.quote(','.join(names))} --out {out}{tail}"
            for (n, budget, seed, names), exps in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][:2], kv[1]))]


def _rounded(run: dict[str, Any]) -> dict[str, Any]:
    """A run's summary with its medians to 4 decimals (the pages print 3)."""
    return {**run, "median_at": {b: round(m, 4) for b, m in run["median_at"].items()}}


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


if __name__ == "__main__":
    main()
