"""``python -m benchmarks.dfo`` (``zeroopt bench dfo``): zeroopt beside nevergrad, pycma, COBYQA, Powell,
Nelder–Mead and Py-BOBYQA on the Moré–Wild set and a high-dimensional set; data and performance profiles.

Every run is cached (``--cache``), so an interrupted invocation resumes; pages go to ``--out``.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from theory.arguments import count, counts, folder_problem, memory_problem, number
from zeroopt.recipes.plugins import PLUGIN_HELP, PluginError, load_plugins

from ..pages import command_line
from . import highdim, more_wild
from .more_wild import NOISE_LEVEL
from .peers import PEERS, ZEROOPT_SOLVERS, available, is_zeroopt
from .report import page, summarise
from .run import NOISY_VARIANTS, Plan, execute

#: Solvers left out of the high-dimensional set by default: at d = 100 one evaluation costs them tens of ms of their
#: own linear algebra (COBYQA measured at 98 ms/evaluation, zeroopt's trust-region at 22), hours for a run of a few
#: hundred (d + 1).
SLOW_IN_HIGH_D = ("COBYQA", "Py-BOBYQA", "trust-region")
QUICK_PROBLEMS = (7, 9, 29, 43)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.dfo", description=__doc__)
    ap.add_argument("--set", choices=["more-wild", "highdim", "both"], default="both")
    ap.add_argument("--variants", default="", help="comma list (default: all of the set's)")
    ap.add_argument("--solvers", default="", help="comma list (default: zeroopt's and every peer)")
    ap.add_argument("--kappa-max", type=count(1), default=100, help="budget in simplex gradients: κ_max (n + 1)")
    ap.add_argument("--highdim-kappa-max", type=count(1), default=200)
    ap.add_argument("--problems", type=counts(1, len(more_wild.TABLE)), default=(),
                    help=f"Moré–Wild problem numbers 1…{len(more_wild.TABLE)}, comma list (default all)")
    ap.add_argument("--dims", type=counts(1), default=(100,), help="high-dimensional set's d, comma list")
    ap.add_argument("--seed", type=count(0), default=0)
    ap.add_argument("--noisy-seeds", type=count(1), default=1, help="seeds for the noisy variants: --seed, --seed + "
                    "1, …; each (problem, seed) is one problem of their profiles (the other variants run at --seed)")
    ap.add_argument("--seconds", type=number(minimum=0.0, infinite=True), default=math.inf,
                    help="wall-clock limit per run (a run it cuts short is cached as such, and reused only by a run "
                    "with the same limit or a smaller one)")
    ap.add_argument("--quick", action="store_true", help="4 Moré–Wild problems at κ ≤ 20, d = 100 at κ ≤ 5")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "zeroopt" / "dfo")
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/dfo"))
    ap.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                    help=f"{PLUGIN_HELP}; its solvers join the default list (runs are cached by solver name: give a "
                    "changed solver a new --cache)")
    args = ap.parse_args(argv)
    sets = ["more-wild", "highdim"] if args.set == "both" else [args.set]
    chosen = [v for v in args.variants.split(",") if v]
    for set_name in sets:
        allowed = more_wild.VARIANTS if set_name == "more-wild" else highdim.VARIANTS
        wrong = [v for v in chosen if v not in allowed]
        if wrong:
            ap.error(f"argument --variants: {', '.join(map(repr, wrong))} is no variant of the {set_name} set; "
                     f"choose from {', '.join(allowed)}" + (" (or pick one set with --set)" if args.set == "both"
                                                             else ""))
    if "highdim" in sets:  # the quadratic keeps a d × d rotation (and draws one more to make it)
        too_big = memory_problem(16.0 * max(args.dims) ** 2, f"--dims {max(args.dims)}")
        if too_big:
            ap.error(f"argument --dims: {too_big}")
    try:
        plugged = [s for s in load_plugins(args.plugin) if s not in PEERS]
    except PluginError as err:
        ap.error(f"--plugin: {err}")
    command = command_line("dfo", argv)
    solvers = [s for s in args.solvers.split(",") if s] or [*ZEROOPT_SOLVERS, *plugged, *PEERS]
    unknown = [s for s in solvers if not is_zeroopt(s) and s not in PEERS]
    if unknown:
        ap.error(f"unknown solver(s) {unknown}; choose from {[*ZEROOPT_SOLVERS, *PEERS]}, a solver registered with "
                 "zeroopt, or one of a --plugin MODULE")
    # Last, once every other argument is known good, so that a refused command makes no folder.
    for option, folder in (("--cache", args.cache), ("--out", args.out)):
        unusable = folder_problem(folder)
        if unusable:
            ap.error(f"argument {option}: {unusable}")
    missing = [s for s in solvers if not available(s)]
    wheels = " ".join(sorted({PEERS[s] for s in missing}))
    notes = [f"Skipped, not installed: {', '.join(missing)} (pip install {wheels})."] if missing else []
    solvers = [s for s in solvers if s not in missing]
    indices = args.problems or (QUICK_PROBLEMS if args.quick else ())
    kappa, hd_kappa = (min(args.kappa_max, 20), min(args.highdim_kappa_max, 5)) if args.quick else \
        (args.kappa_max, args.highdim_kappa_max)
    dims = args.dims
    common = [
        "Every evaluation goes through one counting wrapper that also enforces the budget (the evaluation past it "
        "raises, which stops a peer; the best value seen is kept). Same start, same noise draws (the k-th "
        "evaluation of every solver gets the same draw), one run per (problem, solver, seed), default settings; peers "
        "that take a first step size get 0.1·max(‖x0‖∞, 1) (Py-BOBYQA's default).",
        "Convergence test (Moré & Wild 2009): f(x0) − f ≥ (1 − τ)(f(x0) − f_L), f the best value a solver saw, "
        "f_L the best any solver saw on the problem; κ counts simplex gradients, evaluations / (n + 1).",
        "zeroopt's entries named +noise are the solver with beta_above_noise=True "
        "(zeroopt.step.noise.RadiusAboveNoise) "
        "on an oracle that states each answer's error bound — the noisy high-dimensional variant's ε, Moré–Wild's "
        "|v| ε_f b / (1 − ε_f b) for an answer v, b = √3 stochastic, 1 deterministic — drawing as the plain solver "
        "does; the plain entries see an exact oracle. Where the problem has no noise the two make the same run.",
        "Entries named +qn are coordinate descent over every coordinate each iteration (q ≥ n: a forward-difference "
        "gradient) with quasi_newton=10 (zeroopt.QuasiNewton: the step follows the L-BFGS inverse curvature of the "
        "last 10 steps), a finite-difference quasi-Newton method; +central makes its differences central "
        "(differences='central', zeroopt.estimate.estimators.central_difference: a pair of probes per coordinate, no "
        "curvature term), the noise-tolerant variant of that method; +adaptive takes forward differences until the "
        "noise-aware radius widens β and central ones while it does (differences='adaptive', "
        "zeroopt.AdaptiveDifferences).",
        "trust-region is zeroopt's model-based solver (zeroopt.trust_region): a quadratic through the answers "
        "already paid for (the nearest (n + 1)(n + 2)/2, Powell's least-change Hessian while fewer), its minimizer "
        "in a trust radius that the ratio of decrease found to promised moves; 2n answers first, then one an "
        "iteration. It draws nothing and is told no precision.",
    ]
    for set_name in sets:
        if set_name == "more-wild":
            variants = tuple(chosen or ("smooth", "deterministic", "stochastic", "nondiff"))
            plan = Plan(set_name, variants, tuple(solvers), kappa, indices, seed=args.seed, seconds=args.seconds,
                        noisy_seeds=args.noisy_seeds)
            notes_set = [*notes, *common, f"Noisy variants: ε_f = {NOISE_LEVEL:g} (relative), f(x0) for the "
                         "stochastic one without its draw.", f"Budget: {kappa}(n + 1) evaluations; problems: "
                         f"{'all 53' if not indices else ', '.join(map(str, indices))}."]
        else:
            variants = tuple(chosen or ("smooth", "noisy"))
            kept = tuple(s for s in solvers if s not in SLOW_IN_HIGH_D)
            left = [s for s in solvers if s in SLOW_IN_HIGH_D]
            plan = Plan(set_name, variants, kept, hd_kappa, dims=dims, seed=args.seed, seconds=args.seconds,
                        noisy_seeds=args.noisy_seeds)
            notes_set = [*notes, *common, "Noisy variant: zeroopt's NoisyOracle, uniform error in [−ε, ε], "
                         "ε = 1e-4 (f(x0) − f*).",
                         f"Budget: {hd_kappa}(d + 1) evaluations; d = {', '.join(map(str, dims))}."]
            if left:
                notes_set.append(f"Left out here: {', '.join(left)} (tens of ms of their own work per "
                                 "evaluation at d = 100: COBYQA measured at 98 ms, trust-region at 22 ms).")
        noisy = [v for v in variants if v in NOISY_VARIANTS]
        if args.noisy_seeds > 1 and noisy:
            notes_set.append(f"Seeds: {', '.join(noisy)} at {args.noisy_seeds} seeds ({args.seed}…"
                             f"{args.seed + args.noisy_seeds - 1}; noise and solver draws both change), each "
                             "(problem, seed) one problem of the profiles with its own f_L; the other variants at "
                             f"seed {args.seed}.")
        records = execute(plan, args.cache)
        summaries = {v: summarise(records[v], list(plan.solvers), plan.kappa_max) for v in variants}
        name = f"{set_name}{'-quick' if args.quick else ''}.md"
        page(args.out / name, set_name, command, summaries, list(plan.solvers), notes_set,
             {"kappa_max": plan.kappa_max})
    return 0


if __name__ == "__main__":
    sys.exit(main())
