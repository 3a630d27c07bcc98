"""Running the comparison: every (set, variant, problem, seed, solver) once, each run cached, so a run resumes.

A record (``<cache>/<set>/<variant>/<problem>/<solver>.json``, ``<solver>.seed<k>.json`` for a seed k other than
0) holds the run's best-value trace, its budget and how it ended; a later invocation skips a run whose record was
made at the requested budget or a larger one (a trace at a larger budget contains every smaller one). A run that a
wall-clock limit (``--seconds``) cut short is marked so (``timed_out`` and the limit, ``seconds_limit``) and covers
only what it reached, or a later run under the same limit or a smaller one: never a run without a limit. Records are
written beside their path and renamed, so a reader sees a whole record or none; one that cannot be read anyway (a
file cut by hand, a disk that filled) is run again, with a warning. The noisy
variants can run at several seeds (``noisy_seeds``): each (problem, seed) is one problem of the profiles, with its
own noise draws, its own solver draws and its own f_L.
"""

from __future__ import annotations

import json
import math
import os
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
    noisy_seeds: int = 1

    def seeds(self, variant: str) -> tuple[int, ...]:
        """The seeds ``variant`` runs at: ``seed`` … ``seed + noisy_seeds - 1`` with noise, ``seed`` alone without."""
        return tuple(range(self.seed, self.seed + (self.noisy_seeds if variant in NOISY_VARIANTS else 1)))


#: The variants whose answers carry noise (Moré–Wild's two, the high-dimensional set's one).
NOISY_VARIANTS = ("deterministic", "stochastic", "noisy")


def _key(*parts: str) -> int:
    return zlib.crc32("/".join(parts).encode())


def build(plan: Plan, variant: str, seed: int | None = None) -> list[Problem]:
    """The plan's problems in ``variant``, each with its noise seed (one per problem and ``seed``, default the
    plan's; shared by every solver)."""
    seed = plan.seed if seed is None else seed
    if plan.set_name == "more-wild":
        base = problems(variant, list(plan.indices) or None)
        return [p.__class__(p.name, p.family, p.n, p.x0, p.smooth_f, p.variant, p.noise_level,
                            named_seed(seed, "noise", p.name)) for p in base]
    made = high_dim_problems(variant, plan.dims)
    return [HighDimProblem(p.name, p.family, p.n, p.base, p.variant, named_seed(seed, "noise", p.name)) for p in made]


def named_seed(seed: int, *parts: str) -> int:
    """The seed of the run named by ``parts`` (problem, solver, draw, ...) under ``seed``: the same in every process."""
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
    """One run on a fresh copy of ``p`` (its noise draws restarted) through one :class:`Counted` wrapper.

    A run the wall-clock limit ``seconds`` cut short ends in ``"time limit"`` (whatever a peer made of the refusal)
    and carries ``timed_out`` and ``seconds_limit``, so :func:`load` never takes it for a full run.
    """
    f = Counted(p.copy(), budget, seconds)
    t0 = time.perf_counter()
    ending = run(solver, f, p.x0.copy(), seed, p.variant in ("deterministic", "stochastic", "noisy"),
                 stated_precision(p))
    return {"problem": p.name, "solver": solver, "n": p.n, "budget": budget, "calls": f.calls,
            "seconds": round(time.perf_counter() - t0, 3), "ending": "time limit" if f.timed_out else ending,
            "timed_out": f.timed_out, "seconds_limit": seconds if math.isfinite(seconds) else None,
            "f0": start_value(p), "trace": [[k, v] for k, v in f.trace]}


def load(path: Path, budget: int, seconds: float = math.inf, log: Any = sys.stderr) -> dict[str, Any] | None:
    """A cached record covering ``budget`` under the wall-clock limit ``seconds`` (its trace cut there), or None.

    Only a run made at ``budget`` or more covers it: a run that ended on its own below its budget may still have
    been shaped by it (zeroopt's solvers, scipy's ``maxfev`` and Py-BOBYQA's ``maxfun`` stop themselves there and
    report a normal stop, and Py-BOBYQA's restarts read its budget). A run its time limit cut short covers ``budget``
    only where it reached it, or where ``seconds`` is a limit no larger than its own; a record of such a run that does
    not name its limit (made before records did) covers only what it reached. A record that cannot be read is
    missing, with a warning on ``log``.
    """
    if not path.exists():
        return None
    try:
        rec = json.loads(path.read_text())
        made_at, calls = int(rec["budget"]), int(rec["calls"])
        trace = [t for t in rec["trace"] if t[0] <= budget]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, IndexError) as err:
        print(f"warning: cannot read the cached run {path} ({type(err).__name__}: {err}); running it again",
              file=log, flush=True)
        return None
    if made_at < budget:
        return None
    if (rec.get("timed_out") or rec.get("ending") == "time limit") and calls < budget:
        limit = rec.get("seconds_limit")
        if limit is None or limit < seconds:
            return None
    rec["trace"] = trace
    return rec


def save(path: Path, rec: dict[str, Any]) -> None:
    """Write ``rec`` at ``path`` through a file beside it, renamed over it: a reader sees the whole record or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(rec))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def record_path(cache: Path, set_name: str, variant: str, problem: str, solver: str, seed: int) -> Path:
    """Where a run's record is cached (seed 0 without a suffix)."""
    return cache / set_name / variant / problem / (f"{solver}.json" if seed == 0 else f"{solver}.seed{seed}.json")


def instance(problem: str, seed: int, seeds: tuple[int, ...]) -> str:
    """A problem's name in the profiles: its own at one seed, with the seed where a variant runs at several."""
    return problem if len(seeds) == 1 else f"{problem} seed {seed}"


def execute(plan: Plan, cache: Path, log: Any = sys.stderr) -> dict[str, dict[str, dict[str, Any]]]:
    """Run (or read from ``cache``) every run of ``plan``: ``{variant: {instance: {solver: record}}}``, an
    instance being a problem at one seed (:func:`instance`); each record carries its ``seed``."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    solvers = [s for s in plan.solvers if available(s)]
    for variant in plan.variants:
        out[variant] = {}
        seeds = plan.seeds(variant)
        for seed in seeds:
            for p in build(plan, variant, seed):
                budget = plan.kappa_max * (p.n + 1)
                runs = out[variant][instance(p.name, seed, seeds)] = {}
                for solver in solvers:
                    path = record_path(cache, plan.set_name, variant, p.name, solver, seed)
                    rec = load(path, budget, plan.seconds, log)
                    if rec is None:
                        # An entry with an option set draws as its solver does: the runs differ by the option alone.
                        drawn = ZEROOPT_VARIANTS.get(solver, (solver,))[0]
                        rec = run_one(p, solver, budget, named_seed(seed, "solver", p.name, drawn), plan.seconds)
                        rec["seed"] = seed
                        save(path, rec)
                        best = rec["trace"][-1][1] if rec["trace"] else math.inf
                        print(f"{plan.set_name} {variant} {p.name} seed {seed} {solver}: {rec['calls']} evals, best "
                              f"{best:.6g}, {rec['seconds']} s, {rec['ending']}", file=log, flush=True)
                    rec.setdefault("seed", seed)
                    runs[solver] = rec
    return out
