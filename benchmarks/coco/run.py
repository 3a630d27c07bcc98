"""Running solvers on a COCO suite: one run per (solver, problem), every evaluation counted and logged by COCO.

Each solver's runs go to one ``exdata`` folder, ``<exdata>/<suite>_<solver>``, written by COCO's own observer (the
format ``cocopp`` reads); a summary of every run goes to ``<exdata>/runs-<suite>.json``. Each evaluation passes
through one :class:`~benchmarks.dfo.peers.Counted` wrapper, which refuses the one past the budget (multiplier · d),
so a peer that does not stop itself stops there. ``cocoex`` is imported when a suite is run, not before.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import shutil
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..dfo.peers import ONE_RUN, ZEROOPT_VARIANTS, BudgetSpent, Counted, available, run
from ..dfo.run import named_seed

#: The suites the adapter runs, each with the COCO function numbers it holds.
SUITES = {"bbob": range(1, 25), "bbob-noisy": range(101, 131), "bbob-largescale": range(1, 25)}
#: bbob-noisy's functions are numbered from 101, its ``function_indices`` from 1.
NOISY_OFFSET = 100
#: COCO's observer for every suite here (bbob-noisy and bbob-largescale log as bbob does).
OBSERVER = "bbob"
#: The budget in evaluations per dimension (COCO's usual "budget multiplier").
BUDGET_MULTIPLIER = 200
#: What runs by default: zeroopt's best harness entries and the default solver, beside the peers.
#: A zeroopt entry's name with this suffix restarts with a global phase between its runs
#: (``minimize(restarts=zeroopt.Restarts(global_phase=zeroopt.GlobalPhase()))``, zeroopt.running.global_phase).
GLOBAL = "/global"
DEFAULT_SOLVERS = ("coordinate+qn", "trust-region", "rgf", "pycma", "ng-NGOpt", "COBYQA", "Py-BOBYQA", "Powell")


@dataclass(frozen=True)
class Plan:
    """What to run: a suite, its dimensions, instances and functions (COCO's numbers), the budget, the solvers."""

    suite: str
    dims: tuple[int, ...]
    instances: tuple[int, ...]
    functions: tuple[int, ...]
    solvers: tuple[str, ...] = DEFAULT_SOLVERS
    budget_multiplier: int = BUDGET_MULTIPLIER
    seed: int = 0
    seconds: float = math.inf

    def options(self) -> str:
        """The suite's options string for ``cocoex.Suite``."""
        offset = NOISY_OFFSET if self.suite == "bbob-noisy" else 0
        return (f"dimensions: {','.join(map(str, self.dims))} "
                f"instance_indices: {','.join(map(str, self.instances))} "
                f"function_indices: {','.join(str(f - offset) for f in self.functions)}")


def folder_name(suite: str, solver: str) -> str:
    """The exdata folder of ``solver``'s runs on ``suite`` (characters a path would split on replaced)."""
    return f"{suite}_{re.sub(r'[^A-Za-z0-9+._-]', '-', solver)}"


@contextlib.contextmanager
def _inside(folder: Path) -> Iterator[None]:
    """Run in ``folder``: COCO writes its ``exdata`` under the working directory."""
    here = Path.cwd()
    folder.mkdir(parents=True, exist_ok=True)
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(here)


def run_plan(plan: Plan, root: Path, *, force: bool = False, log: Any = sys.stderr) -> list[dict[str, Any]]:
    """Run every solver of ``plan`` on every problem of its suite; COCO's data under ``root/exdata``.

    Parameters
    ----------
    plan
        What to run.
    root
        The folder holding ``exdata`` (COCO's folder for its observers' output) and the runs' summary.
    force
        Replace a solver's exdata folder from an earlier invocation (else it is an error: COCO would write beside
        it under another name, and ``cocopp`` would read the wrong one).
    log
        Where each run's line goes.

    Returns
    -------
    list of dict
        One summary per run: problem id, function, dimension, instance, solver, evaluations, best value seen, whether
        COCO's final target (1e-8) was hit, seconds, how the run ended.
    """
    import cocoex  # (coco-experiment: the optional extra "coco")

    missing = [s for s in plan.solvers if not available(s.removesuffix(GLOBAL))]
    if missing:
        raise SystemExit(f"not installed: the libraries of {missing} (pip install -e '.[dfo]')")
    exdata = root / "exdata"
    for solver in plan.solvers:
        folder = exdata / folder_name(plan.suite, solver)
        if folder.exists():
            if not force:
                raise SystemExit(f"{folder} exists: COCO would write beside it; remove it or pass --force")
            shutil.rmtree(folder)
    noisy = plan.suite == "bbob-noisy"
    records: list[dict[str, Any]] = []
    with _inside(root):
        for solver in plan.solvers:
            observer = cocoex.Observer(OBSERVER, f"result_folder: {folder_name(plan.suite, solver)} "
                                                 f"algorithm_name: {solver}")
            suite = cocoex.Suite(plan.suite, "", plan.options())
            base = solver.removesuffix(ONE_RUN).removesuffix(GLOBAL)
            drawn = ZEROOPT_VARIANTS.get(base, (base,))[0]
            for problem in suite:
                problem.observe_with(observer)
                records.append(_one(problem, solver, plan, named_seed(plan.seed, problem.id, drawn), noisy))
                problem.free()
                rec = records[-1]
                print(f"{plan.suite} {rec['problem']} {solver}: {rec['evaluations']} evals, best {rec['best']:.6g}, "
                      f"{rec['seconds']} s, {rec['ending']}", file=log, flush=True)
            suite.free()
            del observer  # (its data is flushed as each problem is freed)
    (root / f"runs-{plan.suite}.json").write_text(json.dumps(records, indent=0))
    return records


def _one(problem: Any, solver: str, plan: Plan, seed: int, noisy: bool) -> dict[str, Any]:
    """One run of ``solver`` on an observed COCO problem, through the harness's counting wrapper."""
    d = int(problem.dimension)
    f = Counted(problem, plan.budget_multiplier * d, plan.seconds)
    t0 = time.perf_counter()
    x0 = np.array(problem.initial_solution, dtype=float)
    ending = _global(solver, f, x0, seed) if solver.endswith(GLOBAL) else run(solver, f, x0, seed, noisy)
    return {"problem": problem.id, "function": int(problem.id_function), "dim": d,
            "instance": int(problem.id_instance), "solver": solver, "evaluations": f.calls,
            "budget": f.budget, "best": float(problem.best_observed_fvalue1),
            "final_target_hit": bool(problem.final_target_hit), "seconds": round(time.perf_counter() - t0, 3),
            "ending": "time limit" if f.timed_out else ending}


def _global(solver: str, f: Counted, x0: np.ndarray, seed: int) -> str:
    """A zeroopt entry run as ``minimize`` runs it, with global phases between its restarts; how it ended."""
    import zeroopt

    name, options = ZEROOPT_VARIANTS.get(solver.removesuffix(GLOBAL), (solver.removesuffix(GLOBAL), {}))
    policy = zeroopt.Restarts(global_phase=zeroopt.GlobalPhase())
    try:
        zeroopt.minimize(f, x0, solver=name, budget=f.budget, seed=seed, restarts=policy, **options)
    except BudgetSpent as spent:
        return "time limit" if str(spent) == "time" else "budget"
    return "stopped"


def parse_numbers(text: str) -> tuple[int, ...]:
    """``"1-5"``, ``"1,3,7-9"`` as a tuple of integers (ranges inclusive)."""
    out: list[int] = []
    for part in filter(None, text.split(",")):
        low, _, high = part.partition("-")
        out.extend(range(int(low), int(high or low) + 1))
    return tuple(out)


def check_plan(plan: Plan) -> str | None:
    """What is wrong with ``plan`` before any run (``None``: nothing)."""
    if plan.suite not in SUITES:
        return f"unknown suite {plan.suite!r}; one of {sorted(SUITES)}"
    wrong = [f for f in plan.functions if f not in SUITES[plan.suite]]
    if wrong:
        held = SUITES[plan.suite]
        return f"suite {plan.suite} holds functions {held.start}-{held.stop - 1}, not {wrong}"
    return None


def solvers_known(solvers: Sequence[str]) -> list[str]:
    """The names of ``solvers`` that neither the harness nor zeroopt's registry knows."""
    from ..dfo.peers import PEERS, is_zeroopt

    return [s for s in solvers if s not in PEERS and not is_zeroopt(s.removesuffix(GLOBAL))]
