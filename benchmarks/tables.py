"""Distortion-at-budget tables, computed from the monitor traces of stored runs.

For every attack and budget column the table gives, over the inputs it ran on: the success rate (an
adversarial point was queried within the budget), the mean L2 over the successes, and the median L2 with
failures counted as +inf (so a median is only finite when more than half succeeded). A run whose returned
point the harness labels not adversarial (``claim.adversarial`` false: the attack's own answer is wrong) is a
failure in every column, whatever it queried on the way. Columns at or below an input's run budget come from
its trace; the long column uses only the inputs run that far. Our solvers also
get a row on the peers' inputs, so that every comparison with a peer is on the same inputs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.experiments import Experiment
from benchmarks.monitor import best_at
from benchmarks.pages import write_page

TRIVIAL_L2 = 1e-3  # GBDT runs below this distortion are reported separately (LightGBM's +-1e-35 thresholds)


def distances_at(records: list[dict[str, Any]], budgets: tuple[int, ...] | list[int]) -> np.ndarray:
    """``(n_records, n_budgets)`` best distortion within each budget (``inf``: none yet; ``nan``: not run).

    White-box records have no trace: their one distortion fills every column. A run that returned a point
    the harness does not label adversarial counts as a failure (``inf``) in every column it was run for.
    """
    out = np.full((len(records), len(budgets)), np.nan)
    for i, r in enumerate(records):
        b = np.asarray(budgets)
        if returned_not_adversarial(r):
            out[i] = np.where(b <= int(r["budget"]), np.inf, np.nan) if r["trace"] is not None else np.inf
            continue
        if r["trace"] is None:
            out[i] = r["distortion"] if r["success"] else np.inf
            continue
        vals = best_at(np.asarray(r["trace"]["q"], dtype=np.int64), np.asarray(r["trace"]["d"]), b)
        out[i] = np.where(b <= int(r["budget"]), vals, np.nan)
    return out


def paired(reference: Any, other: Any, floor: float = 0.0) -> tuple[float, float, float]:
    """``(ratio, lower, higher)``: the median over inputs of ``other``'s L2 over ``reference``'s, and the fractions
    of inputs where ``other`` is lower / higher by more than 0.1%. The median, not a mean: on tree ensembles some
    inputs sit almost on a threshold (L2 ~ 1e-4), where any mean of ratios is theirs alone. Inputs where either
    failed (inf) or found a distance of at most ``floor`` are left out of the ratio (``nan`` when none is left),
    not of the fractions.

    >>> paired([1.0, 2.0, float("inf")], [0.5, 2.0, 1.0])
    (0.75, 0.6666666666666666, 0.0)
    """
    a, b = np.asarray(reference, dtype=float), np.asarray(other, dtype=float)
    ok = np.isfinite(a) & np.isfinite(b) & (a > floor) & (b > floor)
    ratio = float(np.median(b[ok] / a[ok])) if ok.any() else float("nan")
    return ratio, float(np.mean(b < a * 0.999)), float(np.mean(b > a * 1.001))


def paired_ratio(reference: Any, other: Any) -> str:
    """:func:`paired` as ``ratio (lower / higher)``; "—" when the two do not pair up."""
    a, b = np.asarray(reference, dtype=float), np.asarray(other, dtype=float)
    if len(a) == 0 or a.shape != b.shape or np.isnan(a).any() or np.isnan(b).any():
        return "—"
    ratio, lower, higher = paired(a, b)
    return f"{ratio:.3f} ({lower:.0%} / {higher:.0%})"


#: Resamples of the inputs behind a bootstrap interval (:func:`median_ratio_interval`).
BOOTSTRAP_RESAMPLES = 2000
#: The central share of the resampled ratios such an interval spans.
INTERVAL_LEVEL = 0.9


def median_ratio_interval(
    ours: Any, peers: dict[str, Any], *, level: float = INTERVAL_LEVEL, resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """A paired bootstrap interval for ``median(ours) / min over peers of median(peer)`` over the same inputs.

    Each resample draws the inputs with replacement, the same draw for every attack (the runs are paired input
    by input), and takes the best peer *of that resample* — the headline's ratio, recomputed. The interval is
    the central ``level`` of the resampled ratios: on 10 or 20 inputs a ratio of medians moves by several
    percent with the draw of inputs alone, which tells a cell missed by 0.001 from one missed by 0.05.
    Failures (``inf``) stay in the medians; a resample where both medians are infinite counts as ``inf``.

    Examples
    --------
    >>> lo, hi = median_ratio_interval([1.0, 2.0, 3.0, 4.0], {"peer": [2.0, 4.0, 6.0, 8.0]})
    >>> float(lo), float(hi)  # every input is exactly half the peer's: no spread
    (0.5, 0.5)
    """
    a = np.asarray(ours, dtype=float)
    if not peers or a.ndim != 1 or len(a) == 0:
        raise ValueError("need one distance per input for ours and at least one peer")
    table = np.stack([np.asarray(p, dtype=float) for p in peers.values()])
    if table.shape[1:] != a.shape or np.isnan(a).any() or np.isnan(table).any():
        raise ValueError("ours and every peer need one distance (no NaN) per common input")
    if not 0 < level < 1 or resamples < 1:
        raise ValueError(f"need 0 < level < 1 and resamples >= 1, got {level!r}, {resamples!r}")
    draws = np.random.default_rng(seed).integers(0, len(a), size=(resamples, len(a)))
    mine = np.median(a[draws], axis=1)
    best = np.median(table[:, draws], axis=2).min(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isnan(mine / best), np.inf, mine / best)
    # Order statistics, not interpolation: an infinite ratio stays infinite, never inf - inf.
    lo = np.quantile(ratio, (1 - level) / 2, method="lower")
    hi = np.quantile(ratio, (1 + level) / 2, method="higher")
    return float(lo), float(hi)


def returned_not_adversarial(record: dict[str, Any]) -> bool:
    """The attack returned a point and the harness's own re-check labels it not adversarial."""
    claim = record.get("claim") or {}
    return claim.get("distortion") is not None and claim.get("adversarial") is False


def cell(values: np.ndarray) -> dict[str, Any]:
    """Statistics of one column of :func:`distances_at` (``nan`` entries are inputs not run this far)."""
    v = values[~np.isnan(values)]
    if len(v) == 0:
        return {"n": 0}
    ok = np.isfinite(v)
    med = float(np.median(v))  # an infinite (failed) middle value makes the median infinite
    q25, q75 = (float(x) for x in np.percentile(v, [25, 75], method="nearest"))
    return {
        "n": int(len(v)),
        "success": float(ok.mean()),
        "mean": float(v[ok].mean()) if ok.any() else None,
        "median": med if math.isfinite(med) else None,
        "q25": q25 if math.isfinite(q25) else None,
        "q75": q75 if math.isfinite(q75) else None,
    }


@dataclass
class Row:
    """One line of a table: an attack on a set of inputs."""

    attack: str
    family: str
    inputs: str
    cells: dict[int, dict[str, Any]] = field(default_factory=dict)
    errors: int = 0


def build_rows(exp: Experiment, runs: dict[str, list[dict[str, Any]]]) -> list[Row]:
    """Rows for every attack with stored runs (ours also restricted to the peers' inputs)."""
    plan = exp.plan
    columns = plan.columns()
    rows: list[Row] = []
    for name, records in runs.items():
        if not records:
            continue
        family = records[0]["family"]
        subsets = [("all", records)]
        if family == "ours" and len(records) > plan.n_peers > 0:
            subsets.append((f"first {plan.n_peers}", [r for r in records if r["position"] < plan.n_peers]))
        for label, recs in subsets:
            values = distances_at(recs, columns)
            row = Row(name, family, f"{label} ({len(recs)})" if label == "all" else label)
            row.errors = sum(bool(r.get("error")) for r in recs)
            row.cells = {b: cell(values[:, j]) for j, b in enumerate(columns)}
            rows.append(row)
    return rows


def checks(runs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Cross-checks of the attacks' own claims against the monitor, per attack."""
    out: dict[str, Any] = {}
    for name, records in runs.items():
        bb = [r for r in records if r["trace"] is not None]
        claims = [r for r in records if r["claim"]["distortion"] is not None]
        out[name] = {
            "runs": len(records),
            "count_exact": sum(r["count_check"] == "exact" for r in bb),
            "count_mismatch": sum(r["count_check"] == "mismatch" for r in bb),
            "budget_exceeded": sum(r.get("budget_exceeded", 0) > 0 for r in bb),
            "returned_not_adversarial": sum(not r["claim"]["adversarial"] for r in claims),
            "returned_below_monitor_best": sum(bool(r.get("claim_below_monitor")) for r in bb),
            "out_of_bounds_queries": sum(r.get("out_of_bounds", 0) for r in bb),
            "errors": [f"image {r['image']}: {r['error']}" for r in records if r.get("error")],
        }
    return out


def trivial_flips(runs: dict[str, list[dict[str, Any]]], budget: int) -> dict[str, Any]:
    """Per attack: runs whose distortion within ``budget`` is below :data:`TRIVIAL_L2`, and the mean without them."""
    out: dict[str, Any] = {}
    for name, records in runs.items():
        d = distances_at(records, [budget])[:, 0]
        d = d[np.isfinite(d)]
        small = d < TRIVIAL_L2
        out[name] = {
            "below_1e-3": int(small.sum()),
            "of": int(len(d)),
            "mean_without": float(d[~small].mean()) if (~small).any() else None,
        }
    return out


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None:
        return "—"
    return f"{x:.{digits}g}" if abs(x) < 1e-2 else f"{x:.{digits}f}"


def _budget_label(b: int) -> str:
    return f"{b // 1000}k" if b % 1000 == 0 else f"{b:,}"


def table_json(
    exp: Experiment,
    runs: dict[str, list[dict[str, Any]]],
    unavailable: dict[str, str],
    command: str,
    context: dict[str, Any],
) -> dict[str, Any]:
    """Everything a table shows, as plain data."""
    rows = build_rows(exp, runs)
    data: dict[str, Any] = {
        "experiment": exp.name,
        "title": exp.title,
        "command": command,
        "notes": exp.notes,
        "plan": {
            "n_ours": exp.plan.n_ours,
            "n_peers": exp.plan.n_peers,
            "budgets": list(exp.plan.budgets),
            "n_long": exp.plan.n_long,
            "long_budget": exp.plan.long_budget,
        },
        "dataset_indices": exp.index.tolist(),
        "columns": list(exp.plan.columns()),
        "rows": [
            {"attack": r.attack, "family": r.family, "inputs": r.inputs, "cells": r.cells, "errors": r.errors}
            for r in rows
        ],
        "checks": checks(runs),
        "configs": {name: recs[0].get("config") for name, recs in runs.items() if recs},
        "unavailable": unavailable,
        "reference": exp.reference,
        "facts": exp.facts,
        "context": context,
    }
    if exp.name.startswith("gbdt"):
        data["trivial_flips"] = trivial_flips(runs, exp.plan.budget)
    return data


def render_markdown(data: dict[str, Any], plot_names: list[str]) -> str:
    """The Markdown page of a table."""
    cols = data["columns"]
    plan = data["plan"]
    lines = [f"# {data['title']}", "", f"Command: `{data['command']}`", ""]
    lines += [f"- {n}" for n in data["notes"]]
    lines += [
        "- Distortion = the best adversarial L2 among the in-bounds points each attack actually queried, read "
        "from the query monitor that every black-box attack queries through (one sample = one query); each "
        "input is run once at its largest budget and smaller budgets come from its trace.",
        "- Cells: mean L2 over successes / median L2 (failures count as +inf) / success rate. A run whose "
        "returned point is not adversarial when the harness labels it (see Checks) is a failure in every column. "
        "Ours: each solver of `zeroopt.list_solvers()` through `applications.hardlabel.attack`.",
    ]
    if plan["long_budget"] and plan["n_long"]:
        lines.append(f"- The {_budget_label(plan['long_budget'])} column uses the first {plan['n_long']} inputs only.")
    lines.append("")
    header = "| attack | inputs | " + " | ".join(_budget_label(b) for b in cols) + " |"
    lines += [header, "|---|---|" + "---|" * len(cols)]
    for row in data["rows"]:
        cells = []
        for b in cols:
            c = row["cells"].get(b) or row["cells"].get(str(b)) or {"n": 0}
            if not c["n"]:
                cells.append("")
                continue
            cells.append(f"{_fmt(c['mean'])} / {_fmt(c['median'])} / {c['success']:.0%}")
        name = row["attack"] + (" (white-box, no queries)" if row["family"] == "white-box" else "")
        if row.get("errors"):
            name += f" † {row['errors']} run(s) ended in an error: only what they queried before it counts"
        lines.append(f"| {name} | {row['inputs']} | " + " | ".join(cells) + " |")
    ref = data.get("reference") or {}
    paper = ref.get("paper", {})
    if "queries" in paper and "l2" in paper:
        at = dict(zip(paper["queries"], paper["l2"], strict=True))
        if any(b in at for b in cols):
            lines.append(
                "| paper Table 3 (OPT, average L2 at these average query counts) | |"
                + "".join(f" {at[b]:.4f} |" if b in at else " |" for b in cols)
            )
        missing = [f"{v} @ {q:,}" for q, v in at.items() if q not in cols]
        if missing:
            lines.append("")
            lines.append(f"Paper Table 3 figures outside these columns: {'; '.join(missing)}.")
    lines.append("")
    if "anchors_median" in ref:
        lines += ["Reference medians (ANCHORS section 2, the Sign-OPT authors' logs, their own models and images):", ""]
        lines += ["| attack | " + " | ".join(_budget_label(int(b)) for b in ref["anchors_budgets"]) + " |"]
        lines += ["|---|" + "---|" * len(ref["anchors_budgets"])]
        for name, vals in ref["anchors_median"].items():
            lines.append(f"| {name} | " + " | ".join(_fmt(v) for v in vals) + " |")
        lines.append("")
    if "paper" in ref and "l2" not in ref["paper"]:
        p = ref["paper"]
        lines += ["Paper (Cheng et al. 2019):", ""]
        for k, v in p.items():
            lines.append(f"- {k}: {v}")
        lines.append("")
    if "trivial_flips" in data:
        lines += [
            f"LightGBM zero thresholds: runs whose distortion at {_budget_label(plan['budgets'][-1])} is below "
            f"{TRIVIAL_L2:g} (flipping a +-1e-35 split), and the mean L2 without them:",
            "",
        ]
        for name, t in data["trivial_flips"].items():
            lines.append(f"- {name}: {t['below_1e-3']} of {t['of']}; mean without them {_fmt(t['mean_without'])}")
        lines.append("")
    configs = {k: v for k, v in data.get("configs", {}).items() if v and v.get("options")}
    if configs:
        lines += ["Options passed to our attack (besides the harness's target pool):", ""]
        lines += [f"- {k}: `{json.dumps(v['options'])}`" for k, v in configs.items()]
        lines.append("")
    lines += ["Checks (the monitor against each attack's own claims):", ""]
    for name, c in data["checks"].items():
        parts = [f"{c['runs']} runs"]
        if c["count_exact"] or c["count_mismatch"]:
            parts.append(f"own query count = monitor's on {c['count_exact']}, differs on {c['count_mismatch']}")
        parts.append(f"budget exceeded on {c['budget_exceeded']}")
        parts.append(f"returned point not adversarial on {c['returned_not_adversarial']}")
        if c["returned_below_monitor_best"]:
            parts.append(f"returned a point better than any it queried on {c['returned_below_monitor_best']}")
        if c["errors"]:
            parts.append(f"errors: {'; '.join(c['errors'][:3])}")
        lines.append(f"- {name}: " + ", ".join(parts))
    for name, why in data["unavailable"].items():
        lines.append(f"- {name}: NOT RUN — {why}")
    lines.append("")
    for p in plot_names:
        lines += [f"![{p}]({p})", ""]
    return "\n".join(lines)


def write_table(out_dir: Path, exp: Experiment, data: dict[str, Any], plot_names: list[str]) -> tuple[Path, Path]:
    """Write ``<stem>.json`` and ``<stem>.md``."""
    mpath = out_dir / f"{exp.stem}.md"
    write_page(mpath, render_markdown(data, plot_names), data, default=_jsonable, echo=False)
    return mpath, mpath.with_suffix(".json")


def _jsonable(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")
