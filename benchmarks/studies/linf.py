"""The L∞ attack beside ART's HopSkipJump with ``norm=np.inf`` on the suite's CNN experiments.

Ours runs once per budget (``attack(..., norm=np.inf)``, every input of an experiment in one call; its
returned points are re-checked by the attack and re-measured here). HopSkipJump runs once per input at the
largest budget through :class:`CappedLabels` — hard labels, every sample one query, the best L∞ adversarial
among the queried points recorded as a step function of the queries, the run stopped at the budget — and is
read at every budget from that record, as the suite reads peers that do not plan from their budget.

Usage::

    python -m benchmarks.studies.linf --experiments mnist-untargeted,cifar-untargeted --n 5 \\
        --budgets 1000,4000 --out benchmarks/results/ablation/linf/README.md
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from benchmarks.pages import command_line, write_page


class Exhausted(Exception):
    """The budget is spent: raised into the peer to stop it."""


class CappedLabels:
    """One input's hard-label view for a peer: counts samples, keeps the best L∞ adversarial per query count."""

    def __init__(self, labels: Callable[[NDArray[Any]], NDArray[np.int64]], x0: NDArray[Any], y0: int,
                 budget: int, n_classes: int) -> None:
        self.labels, self.x0, self.y0 = labels, x0.astype(np.float64), y0
        self.budget, self.n_classes = budget, n_classes
        self.spent, self.best, self.trace = 0, np.inf, [(0, np.inf)]

    def __call__(self, x: NDArray[Any]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float32)
        take = min(len(x), self.budget - self.spent)
        lab = np.asarray(self.labels(x[:take])) if take else np.empty(0, dtype=np.int64)
        for k in range(take):
            self.spent += 1
            if lab[k] != self.y0:
                d = float(np.abs(x[k].astype(np.float64) - self.x0).max())
                if d < self.best:
                    self.best = d
                    self.trace.append((self.spent, d))
        if take < len(x):
            raise Exhausted
        return np.eye(self.n_classes)[lab]

    def at(self, budget: int) -> float:
        """The best L∞ distance reached within ``budget`` queries (``inf``: none)."""
        return min(d for q, d in self.trace if q <= budget)


def run_art_hsj(labels: Callable[[NDArray[Any]], NDArray[np.int64]], x0: NDArray[Any], y0: int, budget: int,
                n_classes: int, bounds: tuple[float, float], seed: int) -> CappedLabels:
    """ART's HopSkipJump (L∞, library defaults but the iteration cap) on one input, stopped at ``budget``."""
    from art.attacks.evasion import HopSkipJump
    from art.estimators.classification import BlackBoxClassifier

    capped = CappedLabels(labels, x0, y0, budget, n_classes)
    clf = BlackBoxClassifier(predict_fn=capped, input_shape=tuple(x0.shape), nb_classes=n_classes,
                             clip_values=bounds)
    np.random.seed(seed)  # noqa: NPY002 - ART draws its starts from numpy's global generator
    hsj = HopSkipJump(clf, norm=np.inf, max_iter=budget, verbose=False)
    try:
        hsj.generate(x0[None].astype(np.float32), y=np.eye(n_classes)[[y0]])
    except Exhausted:
        pass
    return capped


def measure(experiment: str, n: int, budgets: list[int], seed: int) -> list[dict[str, Any]]:
    """Rows per (experiment, budget, attack): median L∞, success and per-input values."""
    import torch

    from applications.hardlabel import attack
    from benchmarks.experiments import Plan, build

    torch.set_num_threads(1)
    exp = build(experiment, Plan(n_ours=n, n_peers=n, budgets=tuple(budgets)), seed=0, torch_device="cpu")
    b = exp.batch(list(range(min(n, len(exp.x)))))
    lo, hi = float(np.min(b.bounds[0])), float(np.max(b.bounds[1]))
    rows = []
    for budget in budgets:
        t0 = time.perf_counter()
        res = attack(exp.label_fn, b.x0, b.y0, budget=budget, seed=seed, norm=np.inf, n_classes=b.n_classes,
                     bounds=(lo, hi))
        labels = np.asarray(exp.label_fn(res.x_adv))
        ok = res.success & (labels != b.y0)
        linf = np.abs(res.x_adv.astype(np.float64) - b.x0.astype(np.float64)).reshape(len(b.x0), -1).max(axis=1)
        rows.append({"experiment": experiment, "budget": budget, "attack": "ours (sign-growing, L∞)",
                     "values": np.where(ok, linf, np.inf).tolist(), "seconds": time.perf_counter() - t0})
    t0 = time.perf_counter()
    peers = [run_art_hsj(exp.label_fn, b.x0[i], int(b.y0[i]), max(budgets), b.n_classes, (lo, hi), seed)
             for i in range(len(b.x0))]
    for budget in budgets:
        rows.append({"experiment": experiment, "budget": budget, "attack": "ART HopSkipJump (norm=inf)",
                     "values": [p.at(budget) for p in peers], "seconds": time.perf_counter() - t0})
    return rows


def _median(values: list[float]) -> float:
    return float(np.median(values))


def page(rows: list[dict[str, Any]], command: str) -> list[str]:
    lines = ["# The L∞ attack beside ART's HopSkipJump (norm=inf)", "", f"Command: `{command}`", "",
             "Median L∞ distortion of the first inputs of each suite experiment (a failure counts as ∞), success "
             "rate, and the per-input median of ours / HopSkipJump. Ours is run with each budget; HopSkipJump "
             "once at the largest, read at each budget from the best adversarial it had queried.", "",
             "| experiment | budget | ours median L∞ | HSJ median L∞ | ours / HSJ per input | success ours / HSJ |",
             "|---|---:|---:|---:|---:|---:|"]
    for exp in dict.fromkeys(r["experiment"] for r in rows):
        for budget in sorted({r["budget"] for r in rows if r["experiment"] == exp}):
            ours, hsj = (next(r["values"] for r in rows if r["experiment"] == exp and r["budget"] == budget
                              and r["attack"].startswith(who)) for who in ("ours", "ART"))
            ratio = np.median(np.asarray(ours) / np.asarray(hsj))
            lines.append(f"| {exp} | {budget} | {_median(ours):.4f} | {_median(hsj):.4f} | {ratio:.3f} | "
                         f"{np.isfinite(ours).mean():.0%} / {np.isfinite(hsj).mean():.0%} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--experiments", default="mnist-untargeted,cifar-untargeted")
    p.add_argument("--n", type=int, default=5)
    p.add_argument("--budgets", default="1000,4000")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", type=Path, default=Path("benchmarks/results/ablation/linf/README.md"))
    a = p.parse_args(argv)
    budgets = [int(v) for v in a.budgets.split(",")]
    rows = [r for e in a.experiments.split(",") for r in measure(e, a.n, budgets, a.seed)]
    data = [{**r, "values": [v if np.isfinite(v) else None for v in r["values"]]} for r in rows]  # JSON has no ∞
    write_page(a.out, page(rows, command_line("studies.linf", argv)), data)


if __name__ == "__main__":
    main()
