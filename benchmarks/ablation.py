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

    python -m benchmarks.ablation --experiments mnist-untargeted --n 10 --budget 8000
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
from applications.hardlabel.boundary import GALLOPING_GROWTH  # noqa: E402
from applications.hardlabel.config import CHEAP_START, REFERENCE_START  # noqa: E402
from benchmarks.pages import GENERATED_MARKER, kept_head  # noqa: E402
from zeroopt.descent import REFERENCE_CODE_BETA, REFERENCE_EPS_PER_BETA, REFERENCE_STEP  # noqa: E402
from zeroopt.solvers import GROWING_BETA, GROWING_EPS_PER_BETA, GROWING_PROBE_SHAPE, GROWING_STEP  # noqa: E402

# The rows that were measured before β = 0.01 became sign-growing's default keep Sign-OPT's β = 0.001.
SIGN_OPT_BETA: dict[str, Any] = {"beta": REFERENCE_CODE_BETA}
# The cheap start as every row before the fifteenth session measured it: the knock-out tournament (whatever
# CHEAP_START's selection becomes), and one initial search (whatever CHEAP_START's race becomes: the seventeenth
# session made the race between starts the default for untargeted attacks). The same start under both names.
_TOURNAMENT_START = {**CHEAP_START, "initial_selection": "tournament", "race_starts": 1}
_ONE_START = _TOURNAMENT_START
# The rows measured before the semicircular step became sign-growing's default keep the OPT line search.
_LINE_SEARCH = {**_ONE_START, "line_search": "opt"}
_HISTORY = {**_LINE_SEARCH, **SIGN_OPT_BETA}  # the cheap start, with the β and step of its time
# The default as the fifteenth session left it (shrunk baseline, orthogonal probes, record start, one search),
# which the rows from then on add one part to.
_RECORD_DEFAULT = {**_ONE_START, "baseline": "shrunk", "directions": "orthogonal", "initial_selection": "record"}
# The default as the seventeenth session left it (pruning, the race for untargeted attacks), and as the eighteenth
# left it (precision β/100), which later rows add one part to.
_RACE_DEFAULT = {**_RECORD_DEFAULT, "prune": True, "race_starts": "untargeted"}
_PRECISION_DEFAULT = {**_RACE_DEFAULT, "eps_per_beta": GROWING_EPS_PER_BETA}
_MOMENTUM_DEFAULT = {**_PRECISION_DEFAULT, "momentum": 1.0}  # the twenty-first session's default

# Each variant adds one part to the one before it, then the last rows remove one part at a time.
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    "sign (reference start)": ("sign", dict(REFERENCE_START)),
    "+ low-frequency start": ("sign", {**REFERENCE_START, "initial_directions": "low-frequency"}),
    "+ tournament": ("sign", {**REFERENCE_START, "initial_directions": "low-frequency",
                              "initial_selection": "tournament"}),
    "+ 30 candidates": ("sign", dict(_TOURNAMENT_START)),
    "+ √t probes (sign-growing)": ("sign-growing", dict(_HISTORY)),
    "sign-growing with Gaussian start": ("sign-growing", {**_HISTORY, "initial_directions": "gaussian"}),
    "sign-growing with low-frequency probes": ("sign-growing", {**_HISTORY, "directions": "low-frequency"}),
    "sign-growing with multi-scale start": ("sign-growing", {**_HISTORY, "initial_directions": "multi-scale"}),
    "sign-growing + fresh restarts": ("sign-growing", {**_HISTORY, "fresh_restarts": True}),
    "sign-growing + fresh restarts + min_progress 1%": ("sign-growing", {**_HISTORY, "fresh_restarts": True,
                                                                         "min_progress": 0.01}),
    # The boundary search and the start (CHEAP_START includes the galloping search), with the absolute ε = β/500
    # they were measured with; then the relative precision (sign-growing's default on the unit sphere since).
    "previous default (fixed-ratio search; first step 0.2)": ("sign-growing", {**_HISTORY, "local_growth": 1.0,
                                                                                "step": 0.2, "eps_relative": False}),
    "+ galloping search": ("sign-growing", {**_HISTORY, "step": 0.2, "eps_relative": False}),
    "+ first step 1.0": ("sign-growing", {**_HISTORY, "eps_relative": False}),
    "first step 1.0 without the galloping search": ("sign-growing", {**_HISTORY, "local_growth": 1.0,
                                                                      "eps_relative": False}),
    "+ relative precision": ("sign-growing", dict(_HISTORY)),
    "default with Sign-OPT's β = 0.001": ("sign-growing", dict(_HISTORY)),
    "+ wider probes: β 0.01": ("sign-growing", dict(_LINE_SEARCH)),
    # (the β sweep and the coarse candidates: "default" as it was then, with the OPT line search)
    "default with β 0.0003": ("sign-growing", {**_LINE_SEARCH, "beta": 0.0003}),
    "default with β 0.003": ("sign-growing", {**_LINE_SEARCH, "beta": 0.003}),
    "default with β 0.03": ("sign-growing", {**_LINE_SEARCH, "beta": 0.03}),
    "default with β 0.1": ("sign-growing", {**_LINE_SEARCH, "beta": 0.1}),
    "default + coarse line-search candidates": ("sign-growing", {**_LINE_SEARCH, "coarse_candidates": 256.0}),
    "+ semicircular step": ("sign-growing", dict(_ONE_START)),
    "default + race between starts": ("sign-growing", {**_TOURNAMENT_START, "race_starts": None}),
    # Parts that change the direction a step follows (eleventh session): the sign estimator's baseline
    # (zeroopt.centered_sign_of_difference) and momentum weighted by how often steps overshoot
    # (zeroopt.AdaptiveMomentum).
    "default + baseline (centred signs)": ("sign-growing", {**_ONE_START, "baseline": True}),
    "default + adaptive momentum": ("sign-growing", {**_ONE_START, "momentum": 1.0}),
    "default + baseline + adaptive momentum": ("sign-growing", {**_ONE_START, "baseline": True, "momentum": 1.0}),
    # (twelfth session) the baseline shrunk by its own noise: none while the comparisons are balanced
    "default + shrunk baseline + adaptive momentum": ("sign-growing", {**_ONE_START, "baseline": "shrunk",
                                                                       "momentum": 1.0}),
    "default + shrunk baseline": ("sign-growing", {**_ONE_START, "baseline": "shrunk"}),
    # (thirteenth session) low-frequency probes that widen to the full space (zeroopt.WideningLowFrequency), half
    # of them (the "widening-hedge" mixture) or all; the previous directions as a prior (zeroopt.HistoryPrior)
    "default + history prior": ("sign-growing", {**_ONE_START, "baseline": "shrunk", "history_prior": True}),
    "default + widening low-frequency probes": ("sign-growing", {**_ONE_START, "baseline": "shrunk",
                                                                 "directions": "widening-low-frequency"}),
    "default + widening hedge probes": ("sign-growing", {**_ONE_START, "baseline": "shrunk",
                                                         "directions": "widening-hedge"}),
    # (fourteenth session) the q probes of an estimate orthonormal (zeroopt.OrthogonalDirections)
    "default + orthogonal probes": ("sign-growing", {**_ONE_START, "baseline": "shrunk", "directions": "orthogonal"}),
    # (fifteenth session) the record search start (applications/hardlabel/record.py)
    "default + record start": ("sign-growing", dict(_RECORD_DEFAULT)),
    # (sixteenth session) the perturbation pruned before the budget ends (zeroopt.pruning; attack(prune=True))
    "default + pruning": ("sign-growing", {**_RECORD_DEFAULT, "prune": True}),
    # (seventeenth session) the race between independent starts for untargeted attacks (race_starts="untargeted")
    "default + race for untargeted attacks": ("sign-growing", dict(_RACE_DEFAULT)),
    # (eighteenth session) sign-growing's precision β/100 of the value instead of the reference code's β/500
    "default + precision β/100": ("sign-growing", dict(_PRECISION_DEFAULT)),
    # (eighteenth session, measured, not the default) the pruning polish 50 queries before the budget ends, not 100
    "default + polish reserve 50": ("sign-growing", {**_PRECISION_DEFAULT, "polish_reserve": 50}),
    # (nineteenth session) the race's winner goes on with its run's state (zeroopt.RaceWinner)
    "default + race winner keeps its state": ("sign-growing", {**_PRECISION_DEFAULT, "race_keeps_state": True}),
    # (nineteenth session) each probe compared with the tangent plane's level (zeroopt.estimators.probe_levels)
    "default + tangent-plane probe levels": ("sign-growing", {**_PRECISION_DEFAULT, "probe_level": "tangent"}),
    # (twenty-second session) the default as the twenty-first left it (adaptive momentum), and probes shaped by the
    # direction (zeroopt.IterateShapedProbes, sign-growing's default where the value is a radius since)
    "default + adaptive momentum (β/100)": ("sign-growing", dict(_MOMENTUM_DEFAULT)),
    "+ probes shaped by the direction": ("sign-growing", {**_MOMENTUM_DEFAULT, "probe_shape": GROWING_PROBE_SHAPE}),
    # (nineteenth session) probes kept off the pixels whose point lies past a bound, which are pulled back a little
    "default + probes off pixels past a bound": ("sign-growing", {**_PRECISION_DEFAULT, "skip_flat": True}),
    "default + record start with 50 candidates": ("sign-growing", {**_RECORD_DEFAULT, "n_initial": 50}),
    "default with absolute precision": ("sign-growing", {**_ONE_START, "eps_relative": False}),
    "default with the halving tournament": ("sign-growing", {**_ONE_START,
                                                             "initial_selection": "halving-tournament"}),
    # The default with one part taken out (the three rows above take out the
    # wider probes, the relative precision and the tournament's acceleration).
    "default with a Gaussian start": ("sign-growing", {**_ONE_START, "initial_directions": "gaussian"}),
    "default with 100 candidates": ("sign-growing", {**_ONE_START, "n_initial": 100}),
    "default with a constant q (no √t growth)": ("sign-growing", {**_ONE_START, "q_start": None}),
    "default without fresh restarts": ("sign-growing", {**_ONE_START, "fresh_restarts": False}),
    "default without min_progress": ("sign-growing", {**_ONE_START, "min_progress": None}),
    "default with the fixed-ratio search": ("sign-growing", {**_ONE_START, "local_growth": 1.0}),
    "default with first step 0.2": ("sign-growing", {**_ONE_START, "step": 0.2}),
    "default + 5 uniform candidates": ("sign-growing", {**_ONE_START, "n_initial": 25, "n_uniform": 5}),
    "default + 5 uniform candidates; raced 2 iterations": ("sign-growing", {**_ONE_START, "n_initial": 25,
                                                                            "n_uniform": 5, "race_iterations": 2}),
    "rgf (paper) with reference start": ("rgf", dict(REFERENCE_START)),
    "rgf with cheap start": ("rgf", dict(_ONE_START)),
}

# Every sign-growing row names the direction parts it was measured with (the plain direction unless the row says
# otherwise), so a row keeps its meaning, and its cached runs stay valid, whatever sign-growing's defaults become
# (the twelfth session ran the suite with two of them as candidate defaults: ablation/suite_tags_direction.md).
_BEFORE_DIRECTION_PARTS = {"momentum": None, "baseline": False, "directions": "sphere"}
for _solver, _options in VARIANTS.values():
    _options.setdefault("prune", False)  # every row before the sixteenth session ran without pruning
    # every row with a race before the nineteenth session started the winner's descent afresh
    _options.setdefault("race_keeps_state", False)
    _options.setdefault("race_halving", False)  # every row before the twenty-third session raced without halving
    if _solver == "sign-growing":
        # every row before the eighteenth session asked for the reference code's precision, β/500
        _options.setdefault("eps_per_beta", REFERENCE_EPS_PER_BETA)
        # every row before the nineteenth session compared each probe with the value itself
        _options.setdefault("probe_level", "value")
        _options.setdefault("skip_flat", False)  # every row before the nineteenth session probed every pixel
        _options.setdefault("probe_shape", None)  # every row before the twenty-second session drew plain probes
        for _key, _value in _BEFORE_DIRECTION_PARTS.items():
            _options.setdefault(_key, _value)  # a part a row names itself stays as the row says

# (twenty-fourth session) the default as it is now, every part named, then with one part taken out at a time. The
# probes' shape is left to the solver's context (the default's rule: shaped where g is not piecewise constant);
# every other part is pinned, so these rows keep their meaning whatever the defaults become (β and the level too:
# since the twenty-sixth session a tree ensemble's default is wider, with the tangent level).
_TODAY = {**_MOMENTUM_DEFAULT, "beta": GROWING_BETA, "race_keeps_state": False, "race_halving": False,
          "probe_level": "value", "skip_flat": False, "step": GROWING_STEP, "local_growth": GALLOPING_GROWTH,
          "fresh_restarts": True}
_TODAY_WITHOUT: dict[str, dict[str, Any]] = {
    "probes shaped by the direction": {"probe_shape": None},
    "adaptive momentum": {"momentum": None},
    "shrunk baseline": {"baseline": False},
    "orthogonal probes": {"directions": "sphere"},
    "semicircular step (OPT line search)": {"line_search": "opt"},
    "wider probes (β 0.001)": dict(SIGN_OPT_BETA),
    "precision β/100 (β/500)": {"eps_per_beta": REFERENCE_EPS_PER_BETA},
    "relative precision": {"eps_relative": False},
    "record start (tournament)": {"initial_selection": "tournament"},
    "low-frequency start (Gaussian)": {"initial_directions": "gaussian"},
    "race between starts": {"race_starts": 1},
    "pruning": {"prune": False},
    "fresh restarts": {"fresh_restarts": False},
    "min_progress": {"min_progress": None},
    "√t probe growth (constant q)": {"q_start": None},
    "galloping search (fixed ratio)": {"local_growth": 1.0},
    "first step 1.0 (0.2)": {"step": REFERENCE_STEP},
}
VARIANTS["today's default"] = ("sign-growing", dict(_TODAY))
VARIANTS.update({f"today's default without {part}": ("sign-growing", {**_TODAY, **change})
                 for part, change in _TODAY_WITHOUT.items()})
# (twenty-fourth session, measured, not the default) the probe radius that follows the comparisons' balance
VARIANTS["today's default + radius follows balance"] = ("sign-growing", {**_TODAY, "beta_balance": True})
# (twenty-fifth session, measured, not the default) two and four times the probe radius, each probe compared with the
# tangent plane's level (at a wider β the sphere's offset f·β²/2 no longer cancels the bracket's ε/2, so the level
# must move); 10, 20, 50 and 100 times (twenty-sixth session) for the tree ensembles' sweep
for _widening in (2, 4, 10, 20, 50, 100):
    VARIANTS[f"today's default with β {_widening * GROWING_BETA:g} and the tangent level"] = (
        "sign-growing", {**_TODAY, "beta": _widening * GROWING_BETA, "probe_level": "tangent"})
# (twenty-sixth session) the same at β 0.5 with today's precision: ε = β/100·g is coarser at the wider β
VARIANTS["today's default with β 0.5 and the tangent level at β 0.01's precision"] = (
    "sign-growing",
    {**_TODAY, "beta": 50 * GROWING_BETA, "probe_level": "tangent", "eps_per_beta": GROWING_EPS_PER_BETA / 50})


def _variant_rank(variant: str) -> int:
    """Where ``variant`` stands in :data:`VARIANTS` (the pages' row order); unknown names go last."""
    return list(VARIANTS).index(variant) if variant in VARIANTS else len(VARIANTS)


def run_variant(exp: Any, variant: str, n: int, budget: int, seed: int) -> dict[str, Any]:
    """Attack the first ``n`` inputs of the built experiment ``exp`` with ``variant``; medians at each budget."""
    from applications.hardlabel import attack

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
                 bounds=batch.bounds, n_classes=batch.n_classes, **opts)
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

    A page that already holds :data:`GENERATED_MARKER` keeps the text above it (a person's findings and
    context); everything below is written again from ``records``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from applications.figures import save_figure

    by_exp: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by_exp.setdefault(r["experiment"], []).append(r)
    head = kept_head(out / "README.md") or ["# Ablation of the query-efficiency parts", ""]
    lines = head + [GENERATED_MARKER, ""]
    lines += [f"Command: `{command}`", "",
             "Median L2 over the first n inputs of each suite experiment (failures = inf), from one attack call per "
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
    (out / "README.md").write_text("\n".join(lines) + "\n")
    # One run per line: diffable, without the indentation's bulk (the tracked results have a size limit).
    body = ",\n".join(f"{json.dumps(name)}: [\n" + ",\n".join(json.dumps(_rounded(r)) for r in runs) + "\n]"
                      for name, runs in summary.items())
    (out / "ablation.json").write_text("{\n" + body + "\n}\n")


def main(argv: list[str] | None = None) -> None:
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
    a = p.parse_args(argv)
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
    write_pages(a.out, records, "python -m benchmarks.ablation " + shlex.join(sys.argv[1:] if argv is None else argv),
                plots=not a.no_plots)


def remake_commands(records: list[dict[str, Any]], out: Path, plots: bool = True) -> list[str]:
    """The ``benchmarks.ablation`` commands that make every run of ``records`` into ``out``, fewest first: one
    per (n, budget, seed, variants), naming every experiment that ran exactly those variants at those sizes."""
    variants: dict[tuple[str, int, int, int], set[str]] = {}
    for r in records:
        variants.setdefault((r["experiment"], r["n"], r["budget"], r["seed"]), set()).add(r["variant"])
    groups: dict[tuple[int, int, int, tuple[str, ...]], list[str]] = {}
    for (exp_name, n, budget, seed), names in sorted(variants.items()):
        ordered = tuple(sorted(names, key=lambda v: (_variant_rank(v), v)))
        groups.setdefault((n, budget, seed, ordered), []).append(exp_name)
    tail = "" if plots else " --no-plots"
    return [f"python -m benchmarks.ablation --experiments {','.join(exps)} --n {n} --budget {budget} --seed {seed} "
            f"--variants {shlex.quote(','.join(names))} --out {out}{tail}"
            for (n, budget, seed, names), exps in sorted(groups.items(), key=lambda kv: (kv[0][2], kv[0][:2], kv[1]))]


def _rounded(run: dict[str, Any]) -> dict[str, Any]:
    """A run's summary with its medians to 4 decimals (the pages print 3)."""
    return {**run, "median_at": {b: round(m, 4) for b, m in run["median_at"].items()}}


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


if __name__ == "__main__":
    main()
