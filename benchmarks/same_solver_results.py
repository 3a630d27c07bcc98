"""Fingerprint every built-in solver bit for bit, in each context and with each optional part, and compare two.

The solver-side companion of :mod:`benchmarks.same_results` (which fingerprints the attack): a refactoring of
zeroopt that should change nothing is run through this before and after, on fixed seeds, and compared — each
run's best value (as the exact float), queries, iterations and a hash of its point::

    python -m benchmarks.same_solver_results --out before.json     # in a checkout of the earlier commit
    python -m benchmarks.same_solver_results --out after.json
    python -m benchmarks.same_solver_results --compare before.json after.json

Only zeroopt's public API is used, so the same file runs in older checkouts (``PYTHONPATH=<checkout>``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

SOLVERS = ("rgf", "rgf-fixed", "coordinate", "sign", "sign-growing")
#: Each optional part switched on alone, and the step rules; ``{}`` is the solver as registered.
OPTIONS: tuple[dict[str, Any], ...] = (
    {}, {"momentum": 1.0}, {"history_prior": True}, {"history_prior": True, "momentum": 0.5}, {"history_span": 3},
    {"beta_balance": True}, {"beta_above_noise": True}, {"probe_shape": 0.3}, {"line_search": "armijo"},
    {"line_search": "fixed", "patience": 5}, {"q_start": 4, "q": 16}, {"min_progress": 0.05},
    {"beta_per_step": 0.25}, {"directions": "orthogonal"}, {"skip_flat": True},
)
DIM, BUDGET, SEEDS = 12, 600, (0, 1)


def quadratic(x: np.ndarray) -> float:
    return float(np.sum(np.arange(1, x.size + 1) * x**2))


def radius(x: np.ndarray) -> float:
    """A radius along x: the distance from 0 to a wrinkled plane along the ray of x (+inf where none lies)."""
    t = x / np.linalg.norm(x)
    s = float(np.linspace(1, 2, x.size) @ t)
    return (1.0 + 0.1 * np.sin(5 * t[0])) / s if s > 0 else np.inf


def stairs(x: np.ndarray) -> float:
    """The radius rounded up to steps of 0.05: piecewise constant, like a tree ensemble's."""
    r = radius(x)
    return float(np.ceil(r / 0.05) * 0.05) if np.isfinite(r) else np.inf


def fingerprint(solvers: tuple[str, ...] = SOLVERS, options: tuple[dict[str, Any], ...] = OPTIONS) -> dict[str, Any]:
    """Every (solver, context, options, seed) run's exact figures; a build refused by validation as its error."""
    import zeroopt
    from zeroopt import SolverContext

    sphere = {"unit_sphere": True}
    radial = {"unit_sphere": True, "radial": True, "adjustable_precision": True}
    contexts = {"plain": ({"shape": (DIM,)}, quadratic), "sphere": ({"shape": (DIM,), **sphere}, radius),
                "radial": ({"shape": (3, 4), **radial}, radius),
                "piecewise": ({"shape": (DIM,), **radial, "piecewise_constant": True}, stairs)}
    out: dict[str, Any] = {}
    for name in solvers:
        for cname, (traits, f) in contexts.items():
            context = SolverContext(dim=DIM, **traits)
            for chosen in options:
                if name == "rgf-fixed" and chosen.get("history_prior"):
                    continue  # refused by design: the fixed step never checks its gain
                given = {"lipschitz": 2.0 * DIM, **chosen} if name == "rgf-fixed" and cname == "plain" else chosen
                key = f"{name}|{cname}|{json.dumps(chosen, sort_keys=True)}"
                try:
                    solver = zeroopt.make_solver(name, context, **given)
                except (TypeError, ValueError) as err:
                    out[key] = f"refused: {type(err).__name__}"
                    continue
                for seed in SEEDS:
                    oracle = zeroopt.as_oracle(f, (DIM,), budget=BUDGET)
                    run = zeroopt.run_solver(solver, np.ones(DIM), rng=np.random.default_rng(seed))
                    (res,) = zeroopt.drive([run], zeroopt.IndependentGroup([oracle]))
                    point = hashlib.sha1(np.asarray(res.x, dtype=float).tobytes()).hexdigest()[:12]
                    out[f"{key}|{seed}"] = [float(res.fun).hex(), int(res.queries), int(res.iterations), point]
    return out


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """Every run whose figures differ (or that only one fingerprint has), one line each."""
    return [f"{key}: {before.get(key)} -> {after.get(key)}" for key in sorted(set(before) | set(after))
            if before.get(key) != after.get(key)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the fingerprint here (JSON)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        diffs = compare(before, after)
        print("\n".join(diffs) if diffs else f"identical: {len(before)} runs")
        return 1 if diffs else 0
    if args.out is None:
        parser.error("pass --out FILE (or --compare BEFORE AFTER)")
    result = fingerprint()
    args.out.write_text(json.dumps(result, indent=0, sort_keys=True))
    print(f"{len(result)} runs", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
