"""Running the comparison: every (set, variant, problem, solver) once, each run's record cached, so a run resumes.

A record (``<cache>/<set>/<variant>/<problem>/<solver>.json``) holds the run's best-value trace, its budget and
how it ended; a later invocation skips a run whose record covers the requested budget (a trace at a larger budget
contains every smaller one).
"""

from __future__ import annotations

import json
import math
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .highdim import HighDimProblem, high_dim_problems
from .more_wild import DFOProblem, problems, wild_phi
from .peers import ZEROOPT_VARIANTS, Counted, available, run

Problem = DFOProblem | HighDimProblem


@dataclass(frozen=True)
class Plan:
    """What to run: one benchmark set, its variants, problems and solvers, at ``kappa_max``(n + 1) evaluations."""

    set_name: str
    variants: tuple[str, ...]
    solvers: tuple[str, ...]
    kappa_max: int
    indices: tuple[int, ...] = ()
    dims: tuple[int, ...] = (100,)
    seed: int = 0
    seconds: float = math.inf


def _key(*parts: str) -> int:
    return zlib.crc32("/".join(parts).encode())


def build(plan: Plan, variant: str) -> list[Problem]:
    """The plan's problems in ``variant``, each with its noise seed (one per problem, shared by every solver)."""
    if plan.set_name == "more-wild":
        base = problems(variant, list(plan.indices) or None)
        return [p.__class__(p.name, p.family, p.n, p.x0, p.smooth_f, p.variant, p.noise_level,
                            _seed(plan.seed, "noise", p.name)) for p in base]
    made = high_dim_problems(variant, plan.dims)
    return [HighDimProblem(p.name, p.family, p.n, p.base, p.variant, _seed(plan.seed, "noise", p.name)) for p in made]


def _seed(seed: int, *parts: str) -> int:
    return int(np.random.SeedSequence(seed, spawn_key=(_key(*parts),)).generate_state(1)[0])


def start_value(p: Problem) -> float:
    """f(x0) of the convergence test: the variant's value, without the stochastic draw."""
    if isinstance(p, HighDimProblem):
        return float(p.base(p.x0))
    value = p.smooth_f(p.x0)
    return value * (1.0 + p.noise_level * wild_phi(p.x0)) if p.variant == "deterministic" else value


def stated_precision(p: Problem) -> Callable[[float], float] | None:
    """The bound on an answer's error that ``p`` declares, as a function of the answer (``None``: exact).

    High-dimensional noisy: the NoisyOracle's ε. Moré–Wild: the answer v = f(1 + ε_f e) with |e| ≤ √3 (stochastic,
    uniform of unit variance) or ≤ 1 (deterministic, φ), so its error f ε_f e is at most |v| ε_f b / (1 − ε_f b).
    """
    if isinstance(p, HighDimProblem):
        eps = p.eps
        return (lambda v: eps) if p.variant == "noisy" else None
    bound = {"stochastic": math.sqrt(3.0), "deterministic": 1.0}.get(p.variant)
    if bound is None:
        return None
    share = p.noise_level * bound
    return lambda v: abs(v) * share / (1.0 - share)


def run_one(p: Problem, solver: str, budget: int, seed: int, seconds: float) -> dict[str, Any]:
    """One run on a fresh copy of ``p`` (its noise draws restarted) through one :class:`Counted` wrapper."""
    f = Counted(p.copy(), budget, seconds)
    t0 = time.perf_counter()
    ending = run(solver, f, p.x0.copy(), seed, p.variant in ("deterministic", "stochastic", "noisy"),
                 stated_precision(p))
    return {"problem": p.name, "solver": solver, "n": p.n, "budget": budget, "calls": f.calls,
            "seconds": round(time.perf_counter() - t0, 3), "ending": ending, "f0": start_value(p),
            "trace": [[k, v] for k, v in f.trace]}


def load(path: Path, budget: int) -> dict[str, Any] | None:
    """A cached record covering ``budget`` (its trace cut there), or None."""
    if not path.exists():
        return None
    rec = json.loads(path.read_text())
    if rec["budget"] < budget and rec["ending"] in ("budget", "time limit"):
        return None
    rec["trace"] = [t for t in rec["trace"] if t[0] <= budget]
    return rec


def execute(plan: Plan, cache: Path, log: Any = sys.stderr) -> dict[str, dict[str, dict[str, Any]]]:
    """Run (or read from ``cache``) every run of ``plan``: ``{variant: {problem: {solver: record}}}``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    solvers = [s for s in plan.solvers if available(s)]
    for variant in plan.variants:
        out[variant] = {}
        for p in build(plan, variant):
            budget = plan.kappa_max * (p.n + 1)
            out[variant][p.name] = {}
            for solver in solvers:
                path = cache / plan.set_name / variant / p.name / f"{solver}.json"
                rec = load(path, budget)
                if rec is None:
                    # An entry with an option set draws as its solver does: the two runs differ by the option alone.
                    drawn = ZEROOPT_VARIANTS.get(solver, (solver,))[0]
                    rec = run_one(p, solver, budget, _seed(plan.seed, "solver", p.name, drawn), plan.seconds)
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(rec))
                    best = rec["trace"][-1][1] if rec["trace"] else math.inf
                    print(f"{plan.set_name} {variant} {p.name} {solver}: {rec['calls']} evals, best {best:.6g}, "
                          f"{rec['seconds']} s, {rec['ending']}", file=log, flush=True)
                out[variant][p.name][solver] = rec
    return out
