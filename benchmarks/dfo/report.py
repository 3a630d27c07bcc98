"""The pages: data and performance profiles per set and variant, as Markdown tables, PNG plots and a small JSON."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from ..pages import write_page
from .peers import is_zeroopt
from .profiles import TAUS, area, data_profile, performance_profile, solve_times

#: Problems (instances) up to which a page lists every solver's solve time per problem.
SOLVE_TABLE_MAX = 20
#: κ values the tables show (simplex gradients: evaluations / (n + 1)).
SHOWN_KAPPAS = (1, 5, 10, 20, 50, 100, 200, 500, 1000)
ALPHAS = (1, 2, 4, 8, 16, 32)


def summarise(records: dict[str, dict[str, dict[str, Any]]], solvers: list[str], kappa_max: int) -> dict[str, Any]:
    """Profiles of one variant's runs at every τ: ``{tau: {kappas, data, area, alphas, performance}}``."""
    names = list(records)
    dims = [next(iter(records[p].values()))["n"] for p in names]
    f0 = {p: next(iter(records[p].values()))["f0"] for p in names}
    runs = {p: {s: records[p][s]["trace"] for s in solvers if s in records[p]} for p in names}
    # Each problem at each seed is one problem of the profiles; the areas per seed show their spread.
    seed_of = [next(iter(records[p].values())).get("seed", 0) for p in names]
    seeds = sorted(set(seed_of))
    kappas = np.arange(1, kappa_max + 1)
    out: dict[str, Any] = {"seeds": seeds}
    for tau in TAUS:
        times = solve_times(runs, f0, tau, solvers)
        dp = data_profile(times, dims, kappas)
        pp = performance_profile(times, ALPHAS)
        out[f"{tau:g}"] = {
            "data": {s: [round(float(v), 3) for v in dp[j, [k - 1 for k in SHOWN_KAPPAS if k <= kappa_max]]]
                     for j, s in enumerate(solvers)},
            "area": {s: round(float(a), 3) for s, a in zip(solvers, area(dp), strict=True)},
            "performance": {s: [round(float(v), 2) for v in pp[j]] for j, s in enumerate(solvers)},
            "curve": dp,
            "solve_kappa": {p: {s: float(times[i, j]) / (dims[i] + 1) for j, s in enumerate(solvers)}
                            for i, p in enumerate(names)},
        }
        if len(seeds) > 1:
            rows = [[i for i, k in enumerate(seed_of) if k == seed] for seed in seeds]
            per = [area(data_profile(times[r], [dims[i] for i in r], kappas)) for r in rows]
            out[f"{tau:g}"]["area_per_seed"] = {s: [round(float(a[j]), 3) for a in per] for j, s in enumerate(solvers)}
    out["kappas"] = [k for k in SHOWN_KAPPAS if k <= kappa_max]
    out["f_low"] = {p: float(f"{min((r['trace'][-1][1] for r in records[p].values() if r['trace']), default=0):.4g}")
                    for p in names}
    out["endings"] = {s: sorted({records[p][s]["ending"][:40] for p in names if s in records[p]}) for s in solvers}
    return out


def plot(summaries: dict[str, dict[str, Any]], solvers: list[str], path: Path, title: str) -> Path:
    """Data profiles: one row per variant, one column per τ."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = list(summaries)
    fig, axes = plt.subplots(len(variants), len(TAUS), figsize=(4.2 * len(TAUS), 3.2 * len(variants)),
                             squeeze=False, sharey=True)
    colors = plt.get_cmap("tab20")(np.linspace(0, 1, max(len(solvers), 2)))
    for r, v in enumerate(variants):
        for c, tau in enumerate(TAUS):
            ax = axes[r][c]
            curve = summaries[v][f"{tau:g}"]["curve"]
            kappas = np.arange(1, curve.shape[1] + 1)
            for j, s in enumerate(solvers):
                ax.step(kappas, curve[j], where="post", color=colors[j], lw=2.2 if is_zeroopt(s) else 1.2,
                        ls="-" if is_zeroopt(s) else "--", label=s)
            ax.set_xscale("log")
            ax.set_ylim(-0.02, 1.02)
            ax.set_title(f"{v}, τ = {tau:g}", fontsize=9)
            ax.set_xlabel("κ (simplex gradients)", fontsize=8)
    axes[0][0].set_ylabel("share solved")
    axes[0][-1].legend(fontsize=6, loc="lower right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=48)
    plt.close(fig)
    from PIL import Image

    # A 16-colour palette keeps the figure small enough for the tracked results tree's size limit.
    Image.open(path).convert("RGB").quantize(16).save(path, optimize=True)
    return path


def _table(summary: dict[str, Any], tau: str, solvers: list[str]) -> list[str]:
    kappas = summary["kappas"]
    per_seed = summary[tau].get("area_per_seed")
    extra = f" area per seed ({', '.join(map(str, summary['seeds']))}) |" if per_seed else ""
    lines = ["| solver | " + " | ".join(f"κ={k}" for k in kappas) + " | area |" + extra,
             "|---|" + "---|" * (len(kappas) + 1 + bool(per_seed))]
    best = max(summary[tau]["area"].values())
    for s in sorted(solvers, key=lambda s: -summary[tau]["area"][s]):
        a = summary[tau]["area"][s]
        name = f"**{s}**" if is_zeroopt(s) else s
        cells = " | ".join(f"{v:.2f}" for v in summary[tau]["data"][s])
        spread = f" {' / '.join(f'{v:.3f}' for v in per_seed[s])} |" if per_seed else ""
        lines.append(f"| {name} | {cells} | {a:.3f}{' (best)' if a == best else ''} |{spread}")
    return lines


def page(out: Path, set_name: str, command: str, summaries: dict[str, dict[str, Any]], solvers: list[str],
         notes: list[str], meta: dict[str, Any]) -> str:
    """Write ``out`` (Markdown), its JSON and its PNG; return the text."""
    png = plot(summaries, solvers, out.with_suffix(".png"), f"{set_name}: data profiles")
    lines = [f"# DFO benchmark: {set_name}", "", "```", command, "```", "", *notes, "",
             f"![data profiles]({png.name})", ""]
    for v, summ in summaries.items():
        odd = {s: [e for e in ends if e not in ("budget", "stopped")] for s, ends in summ["endings"].items()}
        lines += [f"- {v}: {s} ended some runs by {', '.join(e)}" for s, e in odd.items() if e]
    if lines[-1].startswith("- "):
        lines.append("")
    lines += goals(set_name, summaries, solvers)
    for v, summ in summaries.items():
        lines += [f"## {v}", ""]
        lines += [f"Data profile d_s(κ) at τ = 1e-3 (area: mean over κ = 1…{meta['kappa_max']}):", "",
                  *_table(summ, f"{1e-3:g}", solvers), ""]
        for tau in (f"{t:g}" for t in TAUS if t != 1e-3):
            areas = sorted(summ[tau]["area"].items(), key=lambda kv: -kv[1])
            lines += [f"Area at τ = {tau}: " + ", ".join(f"{s} {a:.3f}" for s, a in areas), ""]
        if len(summ[f"{1e-3:g}"]["solve_kappa"]) <= SOLVE_TABLE_MAX:
            lines += _solve_table(summ[f"{1e-3:g}"]["solve_kappa"], solvers)
        perf = summ[f"{1e-3:g}"]["performance"]
        lines += ["Performance profile ρ_s(α) at τ = 1e-3, α = " + ", ".join(map(str, ALPHAS)) + ":", "",
                  "| solver | " + " | ".join(f"α={a}" for a in ALPHAS) + " |", "|---|" + "---|" * len(ALPHAS)]
        lines += [f"| {s} | " + " | ".join(f"{x:.2f}" for x in perf[s]) + " |" for s in solvers
                  if max(perf[s]) > 0]
        lines.append("")
    # The JSON keeps what the goals read (areas at every τ, the τ = 1e-3 profile at the shown κ); the page the rest.
    data = {"command": command, **meta, "solvers": solvers, "kappas": next(iter(summaries.values()))["kappas"],
            "variants": {v: {"seeds": s["seeds"], "area": {f"{t:g}": s[f"{t:g}"]["area"] for t in TAUS},
                             "data_1e-3": s[f"{1e-3:g}"]["data"],
                             **({"area_per_seed": {f"{t:g}": s[f"{t:g}"]["area_per_seed"] for t in TAUS}}
                                if len(s["seeds"]) > 1 else {})} for v, s in summaries.items()}}
    return write_page(out, lines, data)


def _solve_table(solve_kappa: dict[str, dict[str, float]], solvers: list[str]) -> list[str]:
    """κ at which each solver first passed the test at τ = 1e-3, per problem (— never), for the solvers that pass
    it on at least one problem."""
    shown = [s for s in solvers if any(math.isfinite(k[s]) for k in solve_kappa.values())]
    if not shown:
        return []
    lines = ["Simplex gradients κ to pass the test at τ = 1e-3, per problem (— never):", "",
             "| problem | " + " | ".join(f"**{s}**" if is_zeroopt(s) else s for s in shown) + " |",
             "|---|" + "---|" * len(shown)]
    lines += [f"| {p} | " + " | ".join(f"{k[s]:.1f}" if math.isfinite(k[s]) else "—" for s in shown) + " |"
              for p, k in solve_kappa.items()]
    return [*lines, ""]


def goals(set_name: str, summaries: dict[str, dict[str, Any]], solvers: list[str], tau: float = 1e-3,
          kappa_from: int = 5, share: float = 0.9) -> list[str]:
    """The issue's goals, measured: on the high-dimensional set zeroopt's best solver's data profile at or above
    every peer's for κ ≥ ``kappa_from``; on Moré–Wild's noisy variants its area within ``1 - share`` of the best
    peer's."""
    ours = [s for s in solvers if is_zeroopt(s)]
    peers = [s for s in solvers if not is_zeroopt(s)]
    lines = [f"## Goals (τ = {tau:g})", ""]
    if not ours or not peers:
        return []
    for v, summ in summaries.items():
        t = summ[f"{tau:g}"]
        best_ours = max(ours, key=lambda s: t["area"][s])
        best_peer = max(peers, key=lambda s: t["area"][s])
        ratio = t["area"][best_ours] / t["area"][best_peer] if t["area"][best_peer] > 0 else math.inf
        head = (f"- {v}: zeroopt's best {best_ours} area {t['area'][best_ours]:.3f}, best peer {best_peer} "
                f"{t['area'][best_peer]:.3f} (ratio {ratio:.2f})")
        if set_name == "highdim":
            curve = t["curve"]
            z = solvers.index(best_ours)
            worst = min(((k, p, curve[z, k - 1] - curve[solvers.index(p), k - 1])
                         for k in range(kappa_from, curve.shape[1] + 1) for p in peers), key=lambda r: r[2])
            met = worst[2] >= 0
            behind = [k for k in range(kappa_from, curve.shape[1] + 1)
                      if any(curve[z, k - 1] < curve[solvers.index(p), k - 1] for p in peers)]
            where = "" if met else f"; behind some peer at κ = {_ranges(behind)}"
            lines.append(f"{head}; at or above every peer for κ = {kappa_from}…{curve.shape[1]}: "
                         f"{'met' if met else 'not met'} (smallest margin {worst[2]:+.2f}, vs {worst[1]} at κ = "
                         f"{worst[0]}{where})")
        elif v in ("deterministic", "stochastic"):
            lines.append(f"{head}; within {1 - share:.0%} of the best peer's area: "
                         f"{'met' if ratio >= share else 'not met'}")
        else:
            lines.append(head)
    return [*lines, ""]


def _ranges(values: list[int]) -> str:
    """``[10, 11, 12, 40]`` as ``"10–12, 40"``."""
    runs: list[list[int]] = []
    for v in values:
        if runs and v == runs[-1][-1] + 1:
            runs[-1].append(v)
        else:
            runs.append([v])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)
