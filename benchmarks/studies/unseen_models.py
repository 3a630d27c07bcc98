"""Two configurations of the attack on models no default was chosen on: scikit-learn's 8×8 digits, three models.

The suite's models (the authors' MNIST CNN, a CIFAR-10 ResNet-20, LightGBM on HIGGS and MNIST) are the ones the
defaults were measured on; this script checks a change of the defaults on others, all trained here in seconds
from data bundled with scikit-learn: the small digits CNN and LightGBM model of ``applications.digits`` and a
one-hidden-layer scikit-learn MLP (``--models``; a scikit-learn random forest, a second tree ensemble, on
request). Untargeted (or, with ``--targeted``, toward a class other than the true one drawn
from the seed, starting from the training digits the model labels as that class), batched, per input: the median
ratio of the second configuration's L2 over the first's, the share of inputs lower and higher, and the medians
and means.

Usage::

    python -m benchmarks.studies.unseen_models --a '{"initial_selection": "tournament"}' --b '{}' \\
        --labels "tournament,record" --n 80 --budget 2000 --out benchmarks/results/ablation/record-start/unseen
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
from benchmarks.tables import paired

BUDGETS = (250, 500, 1000, 2000, 4000, 8000, 14000, 20000)


#: The models by short name (``--models``): the first three are the tool's default; the random forest is a second
#: tree ensemble (a piecewise-constant g of another kind than boosting's) for changes that act on trees only.
MODEL_NAMES = {"cnn": "digits CNN", "mlp": "digits MLP (scikit-learn)", "lightgbm": "digits LightGBM",
               "forest": "digits random forest (scikit-learn)"}
DEFAULT_MODELS = ("cnn", "mlp", "lightgbm")


def _models(seed: int, which: tuple[str, ...] = DEFAULT_MODELS
            ) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.neural_network import MLPClassifier

    from applications.digits import load_digits_split, train_digits_cnn, train_digits_lightgbm

    xtr, ytr, xte, yte = load_digits_split(seed)
    flat = xtr.reshape(len(xtr), -1)
    train = {"cnn": lambda: train_digits_cnn(seed)[0],
             "mlp": lambda: MLPClassifier(hidden_layer_sizes=(64,), max_iter=500, random_state=seed).fit(flat, ytr),
             "lightgbm": lambda: train_digits_lightgbm(seed)[0],
             "forest": lambda: RandomForestClassifier(n_estimators=100, random_state=seed).fit(flat, ytr)}
    return {MODEL_NAMES[k]: train[k]() for k in which}, xte, yte, xtr


def compare(options: list[dict[str, Any]], n: int, budget: int, seed: int,
            targeted: bool = False, models: tuple[str, ...] = DEFAULT_MODELS) -> list[dict[str, Any]]:
    """Per model: L2 at each budget column under each configuration, on its first ``n`` correctly labelled
    test digits (one batched call per configuration). ``targeted``: each input's target is another class drawn
    from ``seed``, and the attack starts from the training digits the model labels as that class."""
    import torch

    from applications.hardlabel import as_label_model, attack, attack_keywords

    torch.set_num_threads(1)
    models_by_name, x, y, pool = _models(seed, models)
    out = []
    for name, model in models_by_name.items():
        labels = as_label_model(model, n_classes=10)
        idx = np.flatnonzero(np.asarray(labels(x)) == y)[:n]
        target: np.ndarray | None = None
        start: dict[str, Any] = {}
        if targeted:  # the same targets for every configuration: drawn from the seed, not the run
            shift = np.random.default_rng(seed).integers(1, 10, size=len(idx))
            target, start = (y[idx] + shift) % 10, {"target_pool": (pool, np.asarray(labels(pool)))}
        cols = sorted({b for b in BUDGETS if b <= budget} | {budget})  # the run's own budget too (a race plans from it)
        runs = []
        for opts in options:
            res = attack(labels, x[idx], y[idx], target=target, budget=budget, seed=seed, n_classes=10,
                         progress=False, **attack_keywords({**start, **opts}))
            runs.append({str(b): [float(v) for v in res.distortion_at(b)] for b in cols})
        out.append({"model": name, "inputs": len(idx), "budgets": cols, "l2": runs})
    return out


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per model and budget: the median per-input ratio of the second configuration over the first (inputs at a
    ±1e-35 LightGBM flip, distance below 1e-12, left out), the shares lower / higher by more than 0.1%, and each
    configuration's median and mean. What the page shows and the JSON keeps (not the per-input distances)."""
    out = []
    for row in rows:
        cells = {}
        for c in map(str, row["budgets"]):
            x, z = np.asarray(row["l2"][0][c]), np.asarray(row["l2"][1][c])
            ratio, lower, higher = paired(x, z, floor=1e-12)
            cells[c] = {"ratio": ratio, "lower": lower, "higher": higher,
                        "median": [float(np.median(x)), float(np.median(z))],
                        "mean": [float(np.mean(x)), float(np.mean(z))]}
        out.append({"model": row["model"], "inputs": row["inputs"], "budgets": row["budgets"], "cells": cells})
    return out


def markdown(summary: list[dict[str, Any]], labels: list[str], command: str, targeted: bool = False) -> str:
    a, b = labels
    lines = [f"# `{b}` against `{a}` on models no default was chosen on", "", f"Command: `{command}`", "",
             f"scikit-learn's 8×8 digits (bundled), {'targeted' if targeted else 'untargeted'}, batched, one seed. "
             "Cells: median per-input ratio "
             f"`{b}` / `{a}` (share of inputs lower / higher by more than 0.1%); then the medians and means of "
             "each. Inputs at a ±1e-35 LightGBM flip (distance below 1e-12) are left out of the ratios.", ""]
    for row in summary:
        cols = [row["cells"][str(c)] for c in row["budgets"]]
        lines += [f"## {row['model']} ({row['inputs']} inputs)", "",
                  "| | " + " | ".join(f"{c:,}" for c in row["budgets"]) + " |", "|---|" + "---|" * len(cols),
                  f"| {b} / {a}, per input | "
                  + " | ".join(f"{c['ratio']:.3f} ({c['lower']:.0%} / {c['higher']:.0%})" for c in cols) + " |"]
        for stat in ("median", "mean"):
            for k, name in enumerate((a, b)):
                lines.append(f"| {stat} {name} | " + " | ".join(f"{c[stat][k]:.3f}" for c in cols) + " |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", default="{}", help="the first configuration: the attack's settings and solver options "
                   "as flat JSON (e.g. '{\"n_initial\": 50, \"q\": 10}')")
    p.add_argument("--b", required=True, help="the second configuration, as --a")
    p.add_argument("--labels", default="a,b", help="two names for the configurations")
    p.add_argument("--n", type=int, default=80, help="inputs per model")
    p.add_argument("--budget", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--targeted", action="store_true",
                   help="attack toward another class (drawn from the seed) instead of any other class")
    p.add_argument("--models", default=",".join(DEFAULT_MODELS),
                   help=f"comma list among {', '.join(MODEL_NAMES)} (default: %(default)s)")
    p.add_argument("--out", type=Path, required=True, help="folder for README.md and unseen.json")
    args = p.parse_args(argv)
    models = tuple(m.strip() for m in args.models.split(",") if m.strip())
    unknown = [m for m in models if m not in MODEL_NAMES]
    if unknown or not models:
        raise SystemExit(f"--models: unknown {unknown or args.models!r}; choose among {', '.join(MODEL_NAMES)}")
    labels = [s.strip() for s in args.labels.split(",")]
    if len(labels) != 2:
        raise SystemExit(f"--labels needs two names, got {args.labels!r}")
    options = [json.loads(args.a), json.loads(args.b)]
    command = "python -m benchmarks.studies.unseen_models " + " ".join(
        shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    summary = summarize(compare(options, args.n, args.budget, args.seed, args.targeted, models))
    write_page(args.out / "README.md", markdown(summary, labels, command, args.targeted) + "\n",
               data_path=args.out / "unseen.json", data={"command": command, "labels": labels, "options": options,
                                                        "targeted": args.targeted, "summary": summary})


if __name__ == "__main__":
    main()
