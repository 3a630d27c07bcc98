"""Fingerprint the default attack on the suite's inputs, and compare two fingerprints input by input.

A refactoring that should not change what the attack does is checked by running this before and after it, on
fixed seeds, and comparing: every input's distortion (as the exact float, in hex) and query count, per
experiment and budget, through the suite harness's own path (``benchmarks.runner``), plus the digits demo's
table. Run it in a checkout of each commit::

    python -m benchmarks.same_results --out before.json            # in a checkout of the earlier commit
    python -m benchmarks.same_results --out after.json
    python -m benchmarks.same_results --compare before.json after.json

``--compare`` prints every input whose figures differ and exits 1 when any does.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

#: The experiments fingerprinted by default: every suite experiment that runs on this CPU in minutes.
DEFAULT_EXPERIMENTS = ("mnist-untargeted", "mnist-targeted", "cifar-untargeted", "cifar-targeted", "gbdt-higgs",
                       "gbdt-mnist", "gbdt-higgs-box")
DEFAULT_BUDGETS = (250, 4000)
SUITE_SEED = 0


def fingerprint_experiment(name: str, n: int, budgets: tuple[int, ...], seed: int) -> dict[str, Any]:
    """Each input's exact distortion and query count for the default attack at each budget (one run per budget)."""
    from applications.hardlabel import DEFAULT_SOLVER
    from benchmarks.attacks.ours import Ours
    from benchmarks.experiments import Plan, build
    from benchmarks.runner import _run_chunk, derive_seed

    exp = build(name, Plan(n_ours=n, n_peers=0, budgets=tuple(budgets)), seed)
    attack = Ours(DEFAULT_SOLVER)
    out: dict[str, Any] = {}
    for budget in budgets:
        rows = []
        for position in range(n):
            run_seed = derive_seed(seed, exp.name, attack.name, int(exp.index[position]))
            record = _run_chunk(exp, attack, [position], budget, run_seed)[0]
            distortion = record["distortion"]
            rows.append({"image": record["image"], "success": bool(record["success"]), "queries": record["queries"],
                         "distortion": None if distortion is None else float(distortion).hex(),
                         "error": record["error"]})
        out[str(budget)] = rows
    return out


def fingerprint_demo(images: int = 3, budget: int = 1000, seed: int = 0) -> list[dict[str, Any]]:
    """The digits demo's ``--quick`` attacks (both models, the default solver), input by input."""
    from applications.digits import load_digits_split, train_digits_cnn, train_digits_lightgbm
    from applications.hardlabel import DEFAULT_SOLVER, attack
    from applications.hardlabel.demo import _pick

    _, _, x, y = load_digits_split(seed=seed)
    rows = []
    for name, model in (("CNN", train_digits_cnn(seed=seed)[0]), ("LightGBM", train_digits_lightgbm(seed=seed)[0])):
        idx = _pick(model, x, y, images)
        res = attack(model, x[idx], y[idx], budget=budget, solver=DEFAULT_SOLVER, seed=seed, n_classes=10)
        rows += [{"model": name, "digit": int(i), "success": bool(res.success[j]), "queries": int(res.queries[j]),
                  "distortion": float(res.distortion[j]).hex()} for j, i in enumerate(idx)]
    return rows


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Every difference between two fingerprints, one line each."""
    diffs = []
    for name in sorted(set(before["experiments"]) | set(after["experiments"])):
        a, b = before["experiments"].get(name), after["experiments"].get(name)
        if a is None or b is None:
            diffs.append(f"{name}: only in {'after' if a is None else 'before'}")
            continue
        for budget in sorted(set(a) | set(b), key=int):
            for i, (ra, rb) in enumerate(zip(a.get(budget, []), b.get(budget, []), strict=False)):
                if ra != rb:
                    da = None if ra["distortion"] is None else float.fromhex(ra["distortion"])
                    db = None if rb["distortion"] is None else float.fromhex(rb["distortion"])
                    diffs.append(f"{name} @ {budget}, input {i} (image {ra['image']}): distortion {da} -> {db}, "
                                 f"queries {ra['queries']} -> {rb['queries']}, success {ra['success']} -> "
                                 f"{rb['success']}")
    if before.get("demo") != after.get("demo"):
        diffs.append(f"demo table: {before.get('demo')} -> {after.get('demo')}")
    return diffs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the fingerprint here (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--experiments", default=",".join(DEFAULT_EXPERIMENTS))
    parser.add_argument("--budgets", default=",".join(map(str, DEFAULT_BUDGETS)))
    parser.add_argument("-n", type=int, default=3, help="inputs per experiment (the suite's first n)")
    parser.add_argument("--seed", type=int, default=SUITE_SEED)
    parser.add_argument("--no-demo", action="store_true", help="leave out the digits demo")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        diffs = compare(before, after)
        n = sum(len(rows) for exp in before["experiments"].values() for rows in exp.values())
        print("\n".join(diffs) if diffs else f"identical: {n} runs and the demo table")
        return 1 if diffs else 0
    if args.out is None:
        parser.error("pass --out FILE (or --compare BEFORE AFTER)")
    budgets = tuple(int(b) for b in args.budgets.split(","))
    result: dict[str, Any] = {"budgets": budgets, "n": args.n, "seed": args.seed, "experiments": {}}
    for name in args.experiments.split(","):
        start = time.perf_counter()
        result["experiments"][name] = fingerprint_experiment(name, args.n, budgets, args.seed)
        print(f"{name}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if not args.no_demo:
        result["demo"] = fingerprint_demo()
    args.out.write_text(json.dumps(result, indent=1, default=lambda v: v.item() if isinstance(v, np.generic) else v))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
