"""How much the seed (the start, the basin) matters, and how early a run shows where it will end.

Reads the cached runs of one ablation variant at several seeds (``python -m benchmarks.studies.ablation ... --seed S``,
one directory) and writes, per experiment:

- the spread between seeds on each input at the largest budget (median over inputs of max / min L2);
- for each smaller budget b: how well an input's ranking of its seeds at b predicts the ranking at the largest
  budget (the mean over inputs of the correlation of log L2 across seeds), and the median L2 at the largest
  budget of the seed that was lowest at b — what a race between the seeds decided at b would keep, before
  paying for the losers — beside the median over all runs and the best seed of each input (an oracle).

This is the evidence behind :data:`zeroopt.running.racing.RACE_MIN_SHARE`: a race between starts decided after too few
queries keeps a start by luck.

With ``--against REFERENCE`` it also compares the variant with another variant of the same directory over every
seed both ran: per input, the geometric mean over seeds of variant / reference L2 at each budget (its median over
inputs and the fractions of inputs lower / higher), and the mean and median L2 of each over all runs — a paired
comparison that one seed's noise does not move as much as it moves a median over a few inputs.

Usage::

    python -m benchmarks.studies.seed_spread --runs benchmarks/results/ablation/race-starts/mnist-untargeted \\
        --variant "+ semicircular step"
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.pages import write_page


def load(runs: Path, variant: str) -> dict[str, dict[int, dict[str, list[float]]]]:
    """Per experiment, per seed: the run's L2 per input at each budget column."""
    out: dict[str, dict[int, dict[str, list[float]]]] = {}
    for f in sorted(runs.glob("*.json")):
        rec = json.loads(f.read_text())
        if rec.get("variant") == variant:
            out.setdefault(rec["experiment"], {})[int(rec["seed"])] = rec["distortion_at"]
    return out


def analyse(by_seed: dict[int, dict[str, list[float]]]) -> dict[str, Any]:
    """The spread, the rank correlation and the race's pick (see the module docstring)."""
    seeds = sorted(by_seed)
    cols = sorted({int(b) for s in seeds for b in by_seed[s]}, key=int)
    cols = [c for c in cols if all(str(c) in by_seed[s] for s in seeds)]
    final = str(cols[-1])
    a = {c: np.array([by_seed[s][str(c)] for s in seeds], dtype=float) for c in map(str, cols)}  # seeds x inputs
    ok = np.all(np.isfinite(a[final]) & (a[final] > 0), axis=0)
    end = a[final][:, ok]
    out: dict[str, Any] = {
        "seeds": seeds, "inputs": int(ok.sum()), "final_budget": int(final),
        "median_all_runs": float(np.median(end)),
        "median_best_seed": float(np.median(end.min(axis=0))),
        "spread_max_over_min": float(np.median(end.max(axis=0) / end.min(axis=0))),
        "by_budget": {},
    }
    for c in map(str, cols[:-1]):
        early = a[c][:, ok]
        if not np.all(np.isfinite(early) & (early > 0)):
            continue
        corr = [np.corrcoef(np.log(early[:, i]), np.log(end[:, i]))[0, 1] for i in range(end.shape[1])]
        pick = end[early.argmin(axis=0), np.arange(end.shape[1])]
        out["by_budget"][c] = {"correlation": float(np.nanmean(corr)), "median_lowest_at_b": float(np.median(pick))}
    return out


def compare(variant: dict[int, dict[str, list[float]]], reference: dict[int, dict[str, list[float]]]) -> dict[str, Any]:
    """Variant against reference over the seeds both ran (see the module docstring), per budget column."""
    seeds = sorted(set(variant) & set(reference))
    cols = [c for c in variant[seeds[0]] if all(c in variant[s] and c in reference[s] for s in seeds)] if seeds else []
    out: dict[str, Any] = {"seeds": seeds, "by_budget": {}}
    for c in sorted(cols, key=int):
        v = np.array([variant[s][c] for s in seeds], dtype=float)  # seeds x inputs
        r = np.array([reference[s][c] for s in seeds], dtype=float)
        ok = np.all(np.isfinite(v) & np.isfinite(r) & (v > 0) & (r > 0), axis=0)
        if not ok.any():
            continue
        ratio = np.exp(np.mean(np.log(v[:, ok] / r[:, ok]), axis=0))  # per input, over seeds
        out["by_budget"][c] = {
            "inputs": int(ok.sum()), "median_ratio": float(np.median(ratio)),
            "lower": float(np.mean(ratio < 1)), "higher": float(np.mean(ratio > 1)),
            "mean": float(np.mean(v[:, ok])), "mean_reference": float(np.mean(r[:, ok])),
            "median": float(np.median(v[:, ok])), "median_reference": float(np.median(r[:, ok])),
        }
    return out


def comparison_markdown(experiment: str, variant: str, reference: str, r: dict[str, Any]) -> str:
    lines = [f"## {experiment}: `{variant}` against `{reference}` (seeds {', '.join(map(str, r['seeds']))})", "",
             "| budget | per input, geometric mean over seeds of the L2 ratio: median over inputs (lower / higher) "
             "| mean L2 over all runs | median L2 over all runs |", "|---|---|---|---|"]
    for b, v in r["by_budget"].items():
        lines.append(f"| {int(b):,} | {v['median_ratio']:.3f} ({v['lower']:.0%} / {v['higher']:.0%}) | "
                     f"{v['mean_reference']:.3f} → {v['mean']:.3f} | {v['median_reference']:.3f} → {v['median']:.3f} |")
    return "\n".join(lines) + "\n"


def markdown(experiment: str, r: dict[str, Any]) -> str:
    lines = [f"## {experiment} ({r['inputs']} inputs, seeds {', '.join(map(str, r['seeds']))})", "",
             f"At {r['final_budget']:,} queries: median L2 over all runs {r['median_all_runs']:.3f}; of each input's "
             f"best seed {r['median_best_seed']:.3f}; an input's worst seed over its best: median "
             f"{r['spread_max_over_min']:.3f}.", "",
             f"| decided at b | correlation of log L2 at b with log L2 at {r['final_budget']:,} (mean over inputs) "
             f"| median L2 at {r['final_budget']:,} of the seed lowest at b |", "|---|---|---|"]
    for b, v in r["by_budget"].items():
        lines.append(f"| {int(b):,} | {v['correlation']:.2f} | {v['median_lowest_at_b']:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=Path, required=True, help="an ablation output directory (its runs/ are read)")
    p.add_argument("--variant", required=True, help="the ablation variant whose seeds are compared")
    p.add_argument("--against", default=None, help="another variant of the directory to pair with, seed by seed")
    p.add_argument("--out", type=Path, default=None, help="Markdown page (default: RUNS/seed_spread.md)")
    a = p.parse_args(argv)
    data = load(a.runs / "runs", a.variant)
    if not data or all(len(v) < 2 for v in data.values()):
        raise SystemExit(f"need runs of {a.variant!r} at two seeds or more in {a.runs / 'runs'}: run "
                         "python -m benchmarks.studies.ablation with --seed S for each seed first")
    out = a.out or a.runs / "seed_spread.md"
    command = "python -m benchmarks.studies.seed_spread " + shlex.join(sys.argv[1:] if argv is None else argv)
    results = {e: analyse(v) for e, v in sorted(data.items()) if len(v) >= 2}
    text = [f"# How much the start matters: `{a.variant}` at several seeds", "", f"Command: `{command}`", "",
            "Each seed draws other initial candidates and probes (a batched ablation run per seed, the same "
            "inputs). The last column is what a race between the seeds decided at b keeps, before paying for "
            "the losers' queries.", ""]
    text += [markdown(e, r) for e, r in results.items()]
    if a.against is not None:
        reference = load(a.runs / "runs", a.against)
        paired = {e: compare(v, reference[e]) for e, v in sorted(data.items()) if set(v) & set(reference.get(e, {}))}
        if not paired:
            raise SystemExit(f"no seed has runs of both {a.variant!r} and {a.against!r} in {a.runs / 'runs'}")
        text += [comparison_markdown(e, a.variant, a.against, r) for e, r in paired.items()]
        results = {e: {**results.get(e, {}), "against": {"variant": a.against, **paired[e]}}
                   for e in sorted(set(results) | set(paired))}
    write_page(out, "\n".join(text), results)


if __name__ == "__main__":
    main()
