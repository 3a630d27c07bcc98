"""One attack's stored suite runs under several tags, side by side: what a change of the attack did.

Each tag holds the same attack (say ``ours-sign-growing``) run on the same inputs by the suite harness (one
input per call, every query through the monitor) with a different configuration; the table gives the median
and mean L2 at each budget on the inputs every tag ran, and writes Markdown and JSON.

Usage::

    python -m benchmarks.studies.tag_compare --experiments gbdt-higgs,mnist-untargeted --tags full,attack-v2 \\
        --labels "default,candidate" --out benchmarks/results/ablation/suite_tags.md

A tag that holds ``{B}`` (``--tags 'eps-{B},mom-{B}'``) reads column B from the runs of that tag made with
budget B: one page for an attack that plans from its budget and was run once per budget.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.headline import budgets_for
from benchmarks.pages import write_page
from benchmarks.store import RunStore
from benchmarks.tables import distances_at, paired_ratio


def compare(experiment: str, attack: str, stores: dict[str, RunStore], only: set[int] | None = None) -> dict[str, Any]:
    """Median and mean L2 per tag and budget on the inputs every tag that ran ``experiment`` ran (failures: inf).

    ``only``: the budget columns to show (default: the experiment's all), e.g. the one a tag's runs were made for.
    """
    runs = {label: {r["position"]: r for r in s.records(experiment, attack)} for label, s in stores.items()}
    runs = {label: r for label, r in runs.items() if r}  # a tag that never ran this experiment is left out
    common = sorted(set.intersection(*(set(r) for r in runs.values()))) if runs else []
    budgets = [b for b in budgets_for(experiment) if only is None or b in only]
    out: dict[str, Any] = {"experiment": experiment, "attack": attack, "inputs": common, "budgets": budgets,
                           "median": {}, "mean": {}, "paired": {}}
    first = None
    for label, recs in runs.items():
        d = distances_at([recs[p] for p in common], budgets) if common else np.empty((0, len(budgets)))
        if first is None:
            first = d
        else:  # input by input against the first tag: what medians of a few inputs hide
            out["paired"][label] = [paired_ratio(first[:, k], d[:, k]) for k in range(len(budgets))]
        # nan: some input was not run that far (no figure); inf: a failure, which counts.
        out["median"][label] = [float(np.median(c)) if len(c) and not np.isnan(c).any() else float("nan") for c in d.T]
        out["mean"][label] = [float(np.mean(c)) if len(c) and not np.isnan(c).any() else float("nan") for c in d.T]
    return out


def compare_per_budget(experiment: str, attack: str, tags: dict[str, str], db: str | None,
                       only: set[int] | None = None) -> dict[str, Any]:
    """:func:`compare`, one budget column at a time, where a tag may hold ``{B}``: column B then comes from the
    runs of that tag with ``{B}`` replaced by B — runs made with that budget, for an attack that plans from it.
    A column some tag never ran is left out; the inputs are those every tag ran in every column kept."""
    cols = []
    for b in (b for b in budgets_for(experiment) if only is None or b in only):
        stores = {label: RunStore(db, tag.replace("{B}", str(b))) for label, tag in tags.items()}
        t = compare(experiment, attack, stores, {b})
        if t["inputs"] and len(t["median"]) == len(tags):
            cols.append(t)
    labels = list(tags)  # compare's tables are keyed by these; "paired" has every label but the first

    def stitched(kind: str, names: list[str]) -> dict[str, list[Any]]:
        return {label: [v for c in cols for v in c[kind][label]] for label in names}

    return {"experiment": experiment, "attack": attack, "budgets": [c["budgets"][0] for c in cols],
            "inputs": sorted(set.intersection(*(set(c["inputs"]) for c in cols))) if cols else [],
            "median": stitched("median", labels), "mean": stitched("mean", labels),
            "paired": stitched("paired", labels[1:])}


def markdown(t: dict[str, Any]) -> str:
    head = "| tag | " + " | ".join(f"{b:,}" for b in t["budgets"]) + " |"
    lines = [f"## {t['experiment']} — `{t['attack']}`, {len(t['inputs'])} inputs every tag ran", "",
             "Median and mean L2 (a dash: not run that far on every input):", "",
             head, "|---|" + "---|" * len(t["budgets"])]
    for kind in ("median", "mean"):
        for label, row in t[kind].items():
            lines.append(f"| {label} ({kind}) | " + " | ".join("—" if np.isnan(v) else f"{v:.3f}" for v in row) + " |")
    if t.get("paired"):
        first = next(iter(t["median"]))
        lines += ["", f"Paired with {first}, input by input: the median of the L2 ratio (the fractions of "
                  "inputs lower / higher):", "", head, "|---|" + "---|" * len(t["budgets"])]
        lines += [f"| {label} | " + " | ".join(row) + " |" for label, row in t["paired"].items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", required=True, help="comma-separated suite experiments")
    p.add_argument("--tags", required=True,
                   help="comma-separated suite tags; in one that holds {B}, column B comes from that tag with {B} "
                        "replaced by B (runs made with each budget)")
    p.add_argument("--labels", default=None, help="comma-separated names of the tags (default: the tags)")
    p.add_argument("--attack", default="ours-sign-growing")
    p.add_argument("--budgets", default=None,
                   help="comma-separated budget columns to show (default: all): an attack that plans from its "
                        "budget is compared at the budget its runs were made with")
    p.add_argument("--db", default=None, help="results database (default: the user's)")
    p.add_argument("--out", type=Path, required=True, help="Markdown page (a .json beside it)")
    a = p.parse_args(argv)
    tags = a.tags.split(",")
    labels = a.labels.split(",") if a.labels else tags
    if len(labels) != len(tags):
        p.error(f"--labels names {len(labels)} tags, --tags gives {len(tags)}")
    only = {int(b) for b in a.budgets.split(",")} if a.budgets else None
    named = {f"{label} (`{tag}`)": tag for label, tag in zip(labels, tags, strict=True)}
    if any("{B}" in tag for tag in tags):
        def table(experiment: str) -> dict[str, Any]:
            return compare_per_budget(experiment, a.attack, named, a.db, only)
    else:
        stores = {name: RunStore(a.db, tag) for name, tag in named.items()}

        def table(experiment: str) -> dict[str, Any]:
            return compare(experiment, a.attack, stores, only)
    tables = [t for e in a.experiments.split(",") if (t := table(e))["budgets"]]
    command = "python -m benchmarks.studies.tag_compare " + shlex.join(sys.argv[1:] if argv is None else argv)
    text = ["# One attack under several configurations (suite harness, stored runs)", "", f"Command: `{command}`",
            "", "Each tag is the same attack name run by `python -m benchmarks.run_suite --tag TAG` with another "
            "configuration (see the results README for each tag's command). Failures count as inf.", ""]
    text += [markdown(t) for t in tables]
    write_page(a.out, "\n".join(text), tables)


if __name__ == "__main__":
    main()
