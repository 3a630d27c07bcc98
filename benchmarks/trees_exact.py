"""Exact minimal L2 adversarial distance of the suite's GBDT inputs, and every attack's ratio to it.

``python -m benchmarks.trees_exact compute`` solves, for each attacked input of the Table 3 experiments, the
exact program of :func:`applications.trees.exact_minimal_adversarial` (HiGHS, one thread) on up to four model
variants, and caches the minima as small JSON under ``<tag>/exact/`` (resumable: finished inputs are skipped,
each one is written as soon as it is solved). ``python -m benchmarks.trees_exact report`` reads that cache
and the stored runs of the suite and writes ``table3_exact.md`` / ``.json``: per attack and budget, the median
and mean of the per-input ratio attack distortion / exact minimum.

Variants: ``raw`` is the suite's model as trained (LightGBM's ±1e-35 thresholds included); ``moved`` is the
same model with those thresholds moved to the midpoint between 0 and the nearest non-zero training value
(:func:`applications.trees.move_zero_thresholds`; identical labels on the training data, checked here). The
stored attack runs were made on the raw model; on the attacked inputs both models give the same labels.
``box-*`` (HIGGS) use the box of the ``gbdt-higgs-box`` experiment (each feature's range over the training and
test rows) instead of the suite's global range.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from applications.trees import exact_minimal_adversarial, move_zero_thresholds
from benchmarks.experiments import Experiment, Plan, build, gbdt_training_data, higgs_feature_box
from benchmarks.trees_report import DEFAULT_TAGS

RESULTS = Path(__file__).resolve().parent / "results" / "suite"
VARIANTS = ("raw", "moved", "box-raw", "box-moved")


@functools.cache
def model_variant(which: str, variant: str, seed: int = 0, rounds: int = 100) -> tuple[Any, Any, dict[str, Any]]:
    """The booster of a variant, the box it is attacked in, and facts about it."""
    from benchmarks.experiments import gbdt_model

    booster, _, _, bounds = gbdt_model(which, seed, rounds)
    xtr = gbdt_training_data(which)
    facts: dict[str, Any] = {}
    if variant.endswith("moved"):
        moved, report = move_zero_thresholds(booster, xtr)
        same = _labels(booster, xtr) == _labels(moved, xtr)
        facts.update(report, train_labels_identical=bool(same.all()))
        if not same.all():
            raise RuntimeError(f"moving the zero thresholds changed {int((~same).sum())} training labels")
        booster = moved
    if variant.startswith("box"):
        bounds = higgs_feature_box()  # the box of the gbdt-higgs-box experiment
    return booster, bounds, facts


def _labels(booster: Any, x: np.ndarray) -> np.ndarray:
    p = booster.predict(x)
    return (p > 0.5).astype(int) if p.ndim == 1 else p.argmax(1)


def experiment(name: str, n: int, seed: int = 0) -> Experiment:
    """The suite's GBDT experiment with its first ``n`` inputs (the same ones as the stored runs)."""
    return build(name, Plan(n, min(n, 20), (1,)), seed)


def cache_path(root: Path, name: str, variant: str) -> Path:
    return root / "exact" / f"{name}-{variant}.json"


def compute(args: argparse.Namespace) -> None:
    root = args.results_dir / args.tag
    for name in args.experiments:
        exp = experiment(name, args.n)
        which = name.split("-")[1]
        for variant in args.variants:
            if variant.startswith("box") and which != "higgs":
                continue
            booster, bounds, facts = model_variant(which, variant)
            path = cache_path(root, name, variant)
            cache = json.loads(path.read_text()) if path.exists() else {"inputs": {}}
            box = "per-feature range of the training and test rows"
            cache.update(experiment=name, variant=variant, norm="l2", facts=facts,
                         bounds=box if variant.startswith("box") else list(map(float, bounds)),
                         command="python -m benchmarks.trees_exact " + " ".join(args.argv))
            todo = [i for i in range(args.n) if str(int(exp.index[i])) not in cache["inputs"]]
            print(f"{name} {variant}: {len(todo)} of {args.n} inputs to solve", flush=True)
            for i in todo:
                x = exp.x[i].reshape(1, -1)
                res = exact_minimal_adversarial(booster, x, exp.y[i : i + 1], norm="l2", bounds=bounds,
                                                time_limit=args.time_limit)
                cache["inputs"][str(int(exp.index[i]))] = {
                    "position": i, "distance": float(res.distance[0]), "bound": float(res.bound[0]),
                    "status": res.status[0], "label": int(res.label[0]), "seconds": round(float(res.seconds[0]), 2),
                    "programs": int(res.programs[0]),
                }
                _write(path, cache)
                print(f"  {i} image {int(exp.index[i])}: {res.status[0]} {res.distance[0]:.6g} "
                      f"(bound {res.bound[0]:.6g}) {res.seconds[0]:.1f} s", flush=True)


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.trees_exact", description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("compute", "report"))
    p.add_argument("--experiments", default="gbdt-mnist,gbdt-higgs")
    p.add_argument("--variants", default="moved,raw", help=f"comma list among {', '.join(VARIANTS)}")
    p.add_argument("--n", type=int, default=50, help="inputs per experiment (the suite's first n)")
    p.add_argument("--time-limit", type=float, default=300.0, help="seconds per input")
    p.add_argument("--tag", default="full")
    p.add_argument("--results-dir", type=Path, default=RESULTS)
    p.add_argument("--budgets", default="", help="extra budget columns for the report (e.g. 10000)")
    p.add_argument("--default-tags", default=DEFAULT_TAGS,
                   help="report: the tags of the default attack's runs made with each budget B ({B} in the name)")
    args = p.parse_args(argv)
    args.argv = list(argv) if argv is not None else __import__("sys").argv[1:]
    args.experiments = [e for e in args.experiments.split(",") if e]
    args.variants = [v for v in args.variants.split(",") if v]
    bad = [v for v in args.variants if v not in VARIANTS]
    if bad:
        p.error(f"unknown variant(s) {bad}; choose from {VARIANTS}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    started = time.perf_counter()
    if args.mode == "compute":
        compute(args)
    else:
        from benchmarks.trees_report import report

        report(args)
    print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
